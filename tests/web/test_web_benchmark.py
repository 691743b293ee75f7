"""The web-v0 suite: the oracle scores the maximum on every episode of it."""

from agentgym.benchmarks import load_benchmark
from agentgym.eval import evaluate


def test_the_oracle_scores_max_on_web_v0(tmp_path):
    benchmark = load_benchmark("web-v0")
    result = evaluate(benchmark, "oracle", tmp_path / "run", num_envs=4)
    overall = result.summary["overall"]
    assert overall["errored"] == 0, [r.error for r in result.records if r.error]
    assert overall["success"] == 1.0 and overall["reward"] == 1.0
    assert set(result.summary["envs"]) == {e.id for e in benchmark.envs}
