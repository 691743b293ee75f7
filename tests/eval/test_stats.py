"""Statistics: pass@k and pass^k against brute force, the clustered bootstrap, paired compare."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from agentgym.core import Verdict
from agentgym.eval.cli import format_table
from agentgym.eval.stats import bootstrap_ci, compare, pass_at_k, pass_hat_k, summarize
from agentgym.ledger import EpisodeRecord, EpisodeSpec


@pytest.mark.parametrize(("n", "c", "k"), [(5, 0, 1), (5, 2, 2), (6, 3, 3), (4, 4, 4), (7, 1, 3)])
def test_pass_at_k_and_pass_hat_k_match_enumeration(n, c, k):
    outcomes = [1] * c + [0] * (n - c)
    draws = list(itertools.combinations(outcomes, k))
    assert pass_at_k(n, c, k) == pytest.approx(np.mean([any(d) for d in draws]))
    assert pass_hat_k(n, c, k) == pytest.approx(np.mean([all(d) for d in draws]))
    assert pass_hat_k(n, c, k) == comb(c, k) / comb(n, k)
    with pytest.raises(ValueError):
        pass_at_k(n, c, n + 1)


def test_the_clustered_bootstrap_is_wider_than_an_episode_bootstrap_for_correlated_tasks():
    # Each task is all-pass or all-fail: 10 tasks x 10 repeats. Resampling episodes would
    # claim 100 independent draws; resampling tasks knows there are 10.
    clusters = [[1.0] * 10 if i % 2 else [0.0] * 10 for i in range(10)]
    mean, low, high = bootstrap_ci(clusters)
    episode_level = bootstrap_ci([[x] for c in clusters for x in c])
    assert mean == 0.5
    assert (high - low) > 2 * (episode_level[2] - episode_level[1])
    assert bootstrap_ci([[1.0, 0.0]]) == (0.5, 0.5, 0.5)  # one task: nothing to resample


def record(task: str, passed: bool | None, repeat: int = 0) -> EpisodeRecord:
    verdict = None if passed is None else Verdict(float(passed), passed)
    return EpisodeRecord(
        spec=EpisodeSpec("games/Maze-v0", task, 0, "x"),
        initial_observation="",
        verdict=verdict,
        status="errored" if passed is None else "ok",
        episode_id=f"games/Maze-v0|{task}|{repeat}",
    )


def test_summaries_exclude_errored_episodes_and_count_them():
    records = [record("a", True), record("a", True, 1), record("b", False), record("b", None, 1)]
    overall = summarize(records)["overall"]
    assert overall["errored"] == 1 and overall["scored"] == 3 and overall["episodes"] == 4
    assert overall["success"] == pytest.approx(2 / 3)
    assert overall["pass@1"] == pytest.approx(0.5)  # task a: 1.0, task b: 0.0
    assert overall["pass@2"] == pytest.approx(0.5)  # task b's errored try is a failed one


def test_pass_hat_k_counts_an_errored_try_as_failed_as_tau_bench_does():
    """tau-bench v1 records an episode that raised with reward 0 and computes pass^k over
    every try; dropping it would make an agent whose tries error look reliable."""
    records = [record("a", True), record("a", None, 1), record("b", True), record("b", True, 1)]
    overall = summarize(records)["overall"]
    assert overall["pass^2"] == pytest.approx(0.5)  # task a: 0 of 1 pair, task b: 1 of 1
    assert overall["pass^1"] == pytest.approx(0.75)
    assert overall["success"] == 1.0  # scored episodes only
    assert "ALL" in format_table([("x", summarize(records))])


def test_compare_pairs_shared_episodes_only():
    a = [record("a", False), record("b", False), record("c", True), record("d", None)]
    b = [record("a", True), record("b", False), record("c", True), record("e", True)]
    result = compare(a, b)
    assert result["shared_episodes"] == 3 and result["only_in_b"] == 1
    assert result["success_difference"] == pytest.approx(1 / 3)
