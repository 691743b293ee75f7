"""The Python one-liner: ``evaluate(env=..., agent=..., tasks=...)`` evaluates one env without
building a Benchmark by hand, as ``agentgym eval --env`` does."""

from __future__ import annotations

import pytest

from agentgym.errors import UsageError
from agentgym.eval import evaluate


def test_one_env_in_one_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = evaluate(env="games/Maze-v0", agent="random", tasks=5, max_steps=20)
    assert result.run_dir.parts[0] == "runs" and (tmp_path / result.run_dir).is_dir()
    assert result.run_dir.name.startswith("games-Maze-v0-random-")
    assert len(result.records) == 5
    assert {r.spec.env_id for r in result.records} == {"games/Maze-v0"}
    assert {r.spec.split for r in result.records} == {"test"}
    assert result.summary["benchmark"] == "games-Maze-v0"

    again = evaluate(
        env="games/TowerOfHanoi-v0", agent="oracle", tasks=2, episodes_per_task=2, seed=3,
        difficulty="easy", out=tmp_path / "hanoi",
    )  # fmt: skip
    assert len(again.records) == 4 and again.summary["overall"]["success"] == 1.0
    assert {r.spec.seed for r in again.records} != {r.spec.seed for r in result.records}


def test_a_benchmark_by_path_and_bad_calls_are_one_clear_line(tmp_path):
    suite = tmp_path / "two.yaml"
    suite.write_text(
        "name: two\nversion: 1\nseed: 0\nenvs:\n"
        "  - {id: games/TowerOfHanoi-v0, split: test, difficulty: easy, tasks: 2}\n"
    )
    result = evaluate(str(suite), "oracle", tmp_path / "two", seed=5)
    assert len(result.records) == 2 and result.summary["benchmark"] == "two"
    assert {r.spec.seed for r in result.records} != {r.spec.seed for r in evaluate(
        str(suite), "oracle", tmp_path / "two-0").records}  # fmt: skip

    with pytest.raises(UsageError, match="a benchmark or env='ID'"):
        evaluate("quickstart", "random", env="games/Maze-v0")
    with pytest.raises(UsageError, match="a benchmark or env='ID'"):
        evaluate(agent="random")
    with pytest.raises(UsageError, match="tasks= goes with env=; a benchmark pins its own"):
        evaluate("quickstart", "random", tmp_path / "q", tasks=3)
    with pytest.raises(UsageError, match="needs an agent"):
        evaluate(env="games/Maze-v0")
    with pytest.raises(UsageError, match=r"tasks=9999: games/TowerOfHanoi-v0 has \d+ test"):
        evaluate(env="games/TowerOfHanoi-v0", agent="random", tasks=9999)
