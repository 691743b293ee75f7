"""The board's numbers: clustered and stratified intervals, the rank rule and tie groups,
paired differences, pass@k, failures that count, the resolution floor, JSON output."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from agentgym.eval import bootstrap_ci, stratified_bootstrap_ci, stratified_bootstrap_rows
from agentgym.leaderboard.ranking import (
    EntryStats,
    Interval,
    board,
    entry_stats,
    paired,
    rank_by_intervals,
    resolution_floor,
)
from agentgym.leaderboard.results import ScoredEpisode


def tasks(
    env: str, outcomes: list[list[bool]], *, score: float | None = None
) -> list[ScoredEpisode]:
    """One episode per entry of ``outcomes[task][repeat]``; the score is the pass (0/1)
    unless ``score`` is given."""
    return [
        ScoredEpisode(
            episode_id=f"{env}|t{t}|{r}",
            env_id=env,
            task_id=f"t{t}",
            repeat=r,
            seed=t,
            outcome="ok",
            passed=passed,
            score=float(passed) if score is None else score,
            prompt_tokens=100,
            completion_tokens=10,
        )
        for t, repeats in enumerate(outcomes)
        for r, passed in enumerate(repeats)
    ]


def passing(n_pass: int, n_tasks: int, env: str = "maze") -> list[ScoredEpisode]:
    """``n_tasks`` single-episode tasks, the first ``n_pass`` passed."""
    return tasks(env, [[t < n_pass] for t in range(n_tasks)])


def rows_by_id(result):
    return {row.id: row for row in result.rows}


# --- the bootstrap behind every interval ----------------------------------------------------


def test_one_stratum_is_the_clustered_bootstrap_draw_for_draw():
    rng = np.random.default_rng(3)
    binary = [list(rng.integers(0, 2, size=rng.integers(1, 4)).astype(float)) for _ in range(60)]
    scores = [list(rng.random(3)) for _ in range(60)]
    for clusters in (binary, scores):
        assert stratified_bootstrap_ci([clusters], seed=5) == pytest.approx(
            bootstrap_ci(clusters, seed=5), abs=1e-12
        )


def test_the_stratified_bootstrap_resamples_tasks_within_each_stratum():
    # A loop over the draws, written out: each stratum draws its clusters with replacement
    # from the same generator, in order; the statistic is the mean of stratum means.
    rng = np.random.default_rng(4)
    strata = [[list(rng.random(2)) for _ in range(n)] for n in (3, 7, 5)]
    draws_rng = np.random.default_rng(9)
    draws = [draws_rng.integers(0, len(s), size=(500, len(s))) for s in strata]
    means = []
    for b in range(500):
        per_stratum = []
        for stratum, drawn in zip(strata, draws, strict=True):
            chosen = [stratum[i] for i in drawn[b]]
            per_stratum.append(sum(map(sum, chosen)) / sum(map(len, chosen)))
        means.append(np.mean(per_stratum))
    expected_low, expected_high = np.quantile(means, [0.025, 0.975])
    point = np.mean([sum(map(sum, s)) / sum(map(len, s)) for s in strata])
    assert stratified_bootstrap_ci(strata, samples=500, seed=9) == pytest.approx(
        (point, expected_low, expected_high), abs=1e-12
    )


def test_rows_sharing_a_layout_get_the_interval_each_would_get_alone():
    rng = np.random.default_rng(5)
    sums = rng.integers(0, 3, size=(4, 10)).astype(float)
    counts = np.full((4, 10), 2.0)
    counts[3] = 3.0  # a row with other counts: its own weights, the same draws
    means, lows, highs = stratified_bootstrap_rows(sums, counts, [4, 6], seed=1)
    for row in range(4):
        alone = stratified_bootstrap_rows(
            sums[row : row + 1], counts[row : row + 1], [4, 6], seed=1
        )
        assert (means[row], lows[row], highs[row]) == pytest.approx(
            tuple(a[0] for a in alone), abs=1e-12
        )
    with pytest.raises(ValueError, match="must be"):
        stratified_bootstrap_rows(sums, counts, [4, 5])


# --- an entry's numbers ---------------------------------------------------------------------


def test_a_deterministic_entry_has_a_zero_width_interval():
    result = rows_by_id(board({"all": passing(30, 30), "none": passing(0, 30)}))
    assert result["all"].success == Interval(1.0, 1.0, 1.0)
    assert result["none"].success == Interval(0.0, 0.0, 0.0)
    assert result["all"].score == Interval(1.0, 1.0, 1.0)


def test_a_mixed_entry_has_the_clustered_bootstrap_interval():
    outcomes = [[t % 3 == 0, t % 2 == 0] for t in range(20)]
    row = board({"x": tasks("maze", outcomes)}).rows[0]
    # the board takes tasks in (env_id, task_id) order: t0, t1, t10, t11, ..., t2, ...
    in_order = sorted(range(20), key=lambda t: f"t{t}")
    clusters = [[float(p) for p in outcomes[t]] for t in in_order]
    expected = Interval.rounded(*bootstrap_ci(clusters, seed=0))
    assert row.success == expected
    assert row.success.low < row.success.estimate < row.success.high


def test_several_envs_count_equally_and_resample_within_each_env():
    # 2 tasks of env a, all passed; 8 of env b, all failed. Every env is deterministic, so
    # resampling tasks within envs leaves nothing uncertain: 0.5 exactly. Pooling the tasks
    # would give 0.2, and resampling them across envs a wide interval.
    episodes = passing(2, 2, env="a") + passing(0, 8, env="b")
    row = board({"x": episodes}).rows[0]
    assert row.success == Interval(0.5, 0.5, 0.5)
    pooled = bootstrap_ci([[float(e.passed)] for e in episodes])
    assert pooled[0] == pytest.approx(0.2) and pooled[2] - pooled[1] > 0.3
    assert [(env.env_id, env.tasks, env.success.estimate) for env in row.envs] == [
        ("a", 2, 1.0),
        ("b", 8, 0.0),
    ]


def test_an_env_row_is_that_envs_own_clustered_interval():
    a = tasks("a", [[t % 2 == 0] for t in range(12)])
    b = tasks("b", [[t % 3 == 0] for t in range(9)])
    row = board({"x": a + b}).rows[0]
    expected = bootstrap_ci([[float(t % 3 == 0)] for t in range(9)], seed=0)
    assert row.envs[1].success == Interval.rounded(*expected)
    assert row.success.estimate == pytest.approx((6 / 12 + 3 / 9) / 2)


def test_errored_missing_and_mismatch_episodes_are_failures_whatever_they_claim():
    ok = passing(3, 3)
    failed = [
        ScoredEpisode(
            f"maze|u{i}|0", "maze", f"u{i}", 0, i, outcome, True, 1.0, 1.0, "why", 5, 999, 999
        )
        for i, outcome in enumerate(("errored", "missing", "mismatch"))
    ]
    row = board({"x": ok + failed}).rows[0]
    assert row.success.estimate == 0.5 and row.score.estimate == 0.5
    assert (row.errored, row.missing, row.mismatch, row.episodes) == (1, 1, 1, 6)
    assert row.uncounted_share == 0.5
    assert row.prompt_tokens == 100 and row.completion_tokens == 10  # counted episodes only
    truncated = [ScoredEpisode("maze|v|0", "maze", "v", 0, 0, "truncated", True, 1.0)]
    assert board({"t": truncated}).rows[0].success.estimate == 1.0


def test_an_entry_with_nothing_counted_has_zero_with_an_interval_not_nan():
    missing = [ScoredEpisode(f"maze|t{i}|0", "maze", f"t{i}", 0, i, "missing") for i in range(5)]
    result = rows_by_id(board({"missing": missing, "empty": []}))
    assert result["missing"].success == Interval(0.0, 0.0, 0.0)
    assert result["empty"].success == Interval(0.0, 0.0, 0.0)
    assert result["empty"].envs == [] and result["empty"].uncounted_share == 0.0


def test_pass_at_k_and_pass_hat_k_on_repeats():
    # Per task, of 3 repeats: 3 passed, 1 passed, none. pass@3 = (1 + 1 + 0) / 3,
    # pass^3 = (1 + 0 + 0) / 3.
    outcomes = [[True, True, True], [False, True, False], [False, False, False]]
    row = board({"x": tasks("maze", outcomes)}).rows[0]
    assert set(row.pass_k) == {"pass@3", "pass^3"}
    assert row.pass_k["pass@3"].estimate == pytest.approx(2 / 3)
    assert row.pass_k["pass^3"].estimate == pytest.approx(1 / 3)
    assert board({"x": passing(2, 4)}).rows[0].pass_k == {}  # one repeat: no pass@k
    uneven = tasks("maze", [[True, False], [True, True, False]])
    assert set(board({"x": uneven}).rows[0].pass_k) == {"pass@2", "pass^2"}


# --- ranks and ties ---------------------------------------------------------------------------


def test_the_rank_rule_on_hand_built_intervals():
    intervals = [
        Interval(0.85, 0.80, 0.90),  # a
        Interval(0.70, 0.60, 0.85),  # b: overlaps a
        Interval(0.60, 0.50, 0.70),  # c: overlaps b, but a's lower bound is above its upper
        Interval(0.15, 0.10, 0.20),  # d: everything is above it
        Interval(0.75, 0.70, 0.80),  # e: touches a's lower and c's upper bound: no separation
    ]
    assert rank_by_intervals(intervals) == [1, 1, 2, 5, 1]
    assert rank_by_intervals([]) == []


def test_clearly_different_entries_get_different_ranks():
    result = board({"weak": passing(5, 50), "strong": passing(45, 50)})
    assert [(r.id, r.rank, r.tie_group) for r in result.rows] == [
        ("strong", 1, 0),
        ("weak", 2, 1),
    ]
    assert result.tie_groups == 2


def test_nearly_equal_entries_tie_and_are_ordered_by_estimate():
    result = board({"a": passing(25, 50), "b": passing(26, 50)})
    assert [(r.id, r.rank, r.tie_group) for r in result.rows] == [("b", 1, 0), ("a", 1, 0)]
    assert result.tie_groups == 1
    assert not result.comparisons[0].separable()


def test_tie_groups_number_the_shared_ranks_down_the_board():
    result = board(
        {
            "top": passing(40, 40),
            "mid1": tasks("maze", [[t % 2 == 0] for t in range(40)]),
            "mid2": tasks("maze", [[t % 2 == 1] for t in range(40)]),
            "bottom": passing(0, 40),
        }
    )
    assert [(r.id, r.rank, r.tie_group) for r in result.rows] == [
        ("top", 1, 0),
        ("mid1", 2, 1),  # equal estimates: by id
        ("mid2", 2, 1),
        ("bottom", 4, 2),  # three entries above it, separably
    ]


def test_the_score_metric_ranks_by_mean_score():
    # half passes with full score vs a quarter of passes, but a score of 0.9 on every task
    halves = passing(20, 40)
    partial = [
        ScoredEpisode(e.episode_id, e.env_id, e.task_id, 0, e.seed, "ok", e.passed, 0.9)
        for e in passing(10, 40)
    ]
    entries = {"halves": halves, "partial": partial}
    assert [r.id for r in board(entries).rows] == ["halves", "partial"]
    by_score = board(entries, metric="score")
    assert [(r.id, r.rank) for r in by_score.rows] == [("partial", 1), ("halves", 2)]
    with pytest.raises(ValueError, match="metric must be one of"):
        board(entries, metric="reward")


# --- paired comparisons ------------------------------------------------------------------------


def test_a_paired_difference_is_b_minus_a_and_separable_when_it_excludes_zero():
    weak, strong = passing(10, 40), passing(30, 40)
    forward = paired(weak, strong)
    assert forward.success.estimate == pytest.approx(0.5) and forward.separable()
    assert forward.success.low > 0
    backward = paired(strong, weak)
    assert backward.success.estimate == pytest.approx(-0.5) and backward.success.high < 0
    same = paired(weak, weak)
    assert same.success == Interval(0.0, 0.0, 0.0) and not same.separable()
    assert (forward.shared_episodes, forward.tasks) == (40, 40)


def test_pairing_separates_entries_whose_own_intervals_overlap():
    # b passes every task a passes and 4 more of 40: each interval overlaps the other's,
    # the paired difference never goes below 0.
    a = tasks("maze", [[t % 2 == 0] for t in range(40)])
    b = tasks("maze", [[t % 2 == 0 or t in (1, 3, 5, 7)] for t in range(40)])
    result = board({"a": a, "b": b})
    assert [(r.id, r.rank) for r in result.rows] == [("b", 1), ("a", 1)]
    lead = result.comparisons[0]
    assert (lead.a, lead.b) == ("a", "b")
    assert lead.success.estimate == pytest.approx(0.1)
    assert lead.separable() and lead.success.low > 0


def test_a_paired_comparison_uses_shared_episodes_only():
    a = passing(5, 10)
    b = passing(10, 10)[:8] + passing(0, 1, env="other")
    comparison = paired(a, b)
    assert (comparison.shared_episodes, comparison.only_in_a, comparison.only_in_b) == (8, 2, 1)
    assert comparison.success.estimate == pytest.approx(3 / 8)
    assert paired(a, passing(0, 1, env="other")).success == Interval(0.0, 0.0, 0.0)


def test_a_paired_difference_over_several_envs_is_the_difference_of_board_numbers():
    a = passing(1, 4, env="a") + passing(2, 10, env="b")
    b = passing(3, 4, env="a") + passing(2, 10, env="b")
    rows = rows_by_id(board({"a": a, "b": b}))
    difference = paired(a, b).success.estimate
    assert difference == pytest.approx(rows["b"].success.estimate - rows["a"].success.estimate)
    assert difference == pytest.approx((3 / 4 - 1 / 4) / 2)


# --- the resolution floor ----------------------------------------------------------------------


def test_the_floor_is_the_paired_half_width_of_two_entries_at_the_median_rate():
    # Independent Bernoulli(p) episodes: the difference's standard error is sqrt(2p(1-p)/N).
    floor = resolution_floor(passing(0, 200), 0.5)
    assert floor == pytest.approx(1.96 * math.sqrt(2 * 0.25 / 200), rel=0.1)
    assert resolution_floor(passing(0, 200), 0.5) == floor  # seeded


def test_the_floor_shrinks_with_repeats_and_grows_with_unequal_envs():
    one = resolution_floor(tasks("maze", [[False]] * 100), 0.5)
    four = resolution_floor(tasks("maze", [[False] * 4] * 100), 0.5)
    assert four == pytest.approx(one / 2, rel=0.15)
    even = resolution_floor(passing(0, 100, "a") + passing(0, 100, "b"), 0.5)
    uneven = resolution_floor(passing(0, 20, "a") + passing(0, 180, "b"), 0.5)
    assert uneven > 1.3 * even


def test_the_board_header_holds_the_floor_at_the_median_entrys_rate_and_at_half():
    result = board({"a": passing(10, 100), "b": passing(30, 100), "c": passing(90, 100)})
    assert result.floor_success == pytest.approx(0.3)
    assert result.resolution_floor == resolution_floor(passing(0, 100), 0.3)
    assert result.resolution_floor_at_half == resolution_floor(passing(0, 100), 0.5)
    assert (result.tasks, result.episodes) == (100, 100)
    # A board of weak entries resolves small differences among them, and says so beside the
    # plan's widest floor (at 50%), which does not move with the entries.
    at_zero = board({"a": passing(0, 100)})
    assert at_zero.floor_success == pytest.approx(0.01) and at_zero.resolution_floor > 0
    assert at_zero.resolution_floor_at_half == result.resolution_floor_at_half
    assert at_zero.resolution_floor_at_half > 3 * at_zero.resolution_floor
    assert at_zero.to_dict()["resolution_floor_at_half"] == at_zero.resolution_floor_at_half
    empty = board({})
    assert empty.rows == [] and empty.resolution_floor is None
    assert empty.resolution_floor_at_half is None


# --- output and reuse ------------------------------------------------------------------------


def test_to_dict_is_json_with_no_nan():
    missing = [ScoredEpisode("a|t0|0", "a", "t0", 0, 0, "missing")]
    entries = {
        "two_envs": tasks("a", [[True, False]] * 5) + tasks("b", [[False, False]] * 3),
        "missing": missing,
        "empty": [],
    }
    data = board(entries).to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data
    first = data["rows"][0]
    assert first["id"] == "two_envs" and first["rank"] == 1
    assert set(first["success"]) == {"estimate", "low", "high"}
    assert "pass@2" in first["pass_k"] and len(first["envs"]) == 2
    assert data["comparisons"][0]["separable"] in (True, False)


def test_an_entrys_numbers_do_not_depend_on_the_other_entries():
    x = tasks("a", [[t % 3 == 0, t % 2 == 0] for t in range(15)]) + passing(2, 6, env="b")
    alone = entry_stats("x", x, seed=2)
    among = rows_by_id(board({"x": x, "y": passing(3, 9), "z": x[:10]}, seed=2))["x"]
    assert among.success == alone.success and among.envs == alone.envs
    assert among.pass_k == alone.pass_k
    assert EntryStats.from_dict(json.loads(json.dumps(alone.to_dict()))) == alone


def test_kept_numbers_give_the_same_board():
    entries = {"a": passing(10, 30), "b": passing(20, 30), "c": tasks("maze", [[True, False]] * 15)}
    kept = {"a": entry_stats("a", entries["a"]), "c": entry_stats("c", entries["c"])}
    assert board(entries, known=kept).to_dict() == board(entries).to_dict()
    with pytest.raises(ValueError, match="another seed"):
        board(entries, known=kept, seed=1)


def test_duplicates_are_refused():
    with pytest.raises(ValueError, match="unique"):
        board([("a", passing(1, 2)), ("a", passing(1, 2))])
    with pytest.raises(ValueError, match="more than once"):
        board({"a": passing(1, 2) + passing(1, 1)})
