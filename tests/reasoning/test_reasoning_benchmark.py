"""The reasoning-v0 suite: the oracle scores the maximum on every episode of it."""

from agentgym.eval import evaluate
from agentgym.eval.plan import load_benchmark


def test_the_oracle_scores_max_on_reasoning_v0(tmp_path):
    benchmark = load_benchmark("reasoning-v0")
    result = evaluate(benchmark, "oracle", tmp_path / "run", num_envs=8)
    overall = result.summary["overall"]
    assert overall["errored"] == 0, [r.error for r in result.records if r.error]
    assert overall["success"] == 1.0 and overall["reward"] == 1.0
    assert set(result.summary["envs"]) == {e.id for e in benchmark.envs}
