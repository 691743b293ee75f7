"""The official ratings: group bootstrap intervals, ranks with tie groups, and the issue's
criterion in miniature (a round-robin of players of known strengths keeps its order)."""

import itertools
import math
import random

import pytest

from agentgym.arena import MatchRecord, Ratings, rate
from agentgym.eval import rank_by_intervals

SAMPLES = 400


def round_robin(
    strengths: dict[str, float], rounds: int, seed: int, *, env_id: str = "test/Game-v0"
) -> list[MatchRecord]:
    """Every pair plays ``rounds`` seeds, each seed twice with the seats swapped (one group);
    a player wins with Bradley-Terry's chance from its strength (logits), else draws 10%."""
    rng = random.Random(seed)
    records = []
    for r, (a, b) in itertools.product(range(rounds), itertools.combinations(strengths, 2)):
        group = f"seed{r}:{a}-{b}"
        for first, second in ((a, b), (b, a)):
            chance = 1 / (1 + math.exp(strengths[second] - strengths[first]))
            roll = rng.random()
            score = 0.5 if roll < 0.1 else float(rng.random() < chance)
            records.append(
                MatchRecord(
                    f"{group}:{first}",
                    env_id,
                    {"player_0": first, "player_1": second},
                    {"player_0": score, "player_1": 1 - score},
                    group,
                )
            )
    return records


KNOWN = {"stockfish": 3.0, "strong": 2.0, "middle": 1.0, "weak": 0.0, "random": -1.0}


def order(ratings: Ratings) -> list[str]:
    return [row.player for row in ratings.rows]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_round_robin_of_known_strengths_keeps_its_order_on_two_seeds(seed):
    """The issue's criterion in miniature: 5 players 1 logit (174 points) apart, 20 games a
    pair (10 seeds, seats swapped); the estimates come out in the true order on each seed,
    and the intervals separate the top player from the bottom one."""
    ratings = rate(round_robin(KNOWN, 10, seed), samples=SAMPLES, seed=seed)
    assert order(ratings) == list(KNOWN)
    assert ratings.method == "bradley-terry"
    assert (ratings.matches, ratings.groups) == (200, 100)
    top, *_, bottom = ratings.rows
    assert top.low > bottom.high
    assert all(row.low <= row.rating <= row.high for row in ratings.rows)


def test_ranks_and_tie_groups_follow_the_leaderboards_rule():
    """Two players of equal strength share a rank; the rule is the board's own."""
    strengths = {"top": 3.0, "twin1": 0.0, "twin2": 0.0}
    ratings = rate(round_robin(strengths, 10, 5), samples=SAMPLES)
    by = ratings.by_player()
    assert by["top"].rank == 1 and by["top"].tie_group == 0
    assert by["twin1"].rank == by["twin2"].rank == 2
    assert by["twin1"].tie_group == by["twin2"].tie_group == 1
    assert [r.rank for r in ratings.rows] == rank_by_intervals(ratings.rows)


def test_a_player_who_beats_everyone_ranks_first_alone():
    records = round_robin({"a": 0.0, "b": 0.0, "c": 0.0}, 6, 2)
    records += [
        MatchRecord(f"champ-{p}-{i}", "g", {"x": "champ", "y": p}, {"x": 1, "y": 0}, f"c{i}{p}")
        for p in "abc"
        for i in range(6)
    ]
    ratings = rate(records, samples=SAMPLES)
    first, *rest = ratings.rows
    assert (first.player, first.rank, first.tie_group) == ("champ", 1, 0)
    assert all(math.isfinite(first.high) and row.rank > 1 for row in rest)


def test_the_interval_narrows_with_more_matches():
    strengths = {"a": 0.5, "b": 0.0}
    widths = []
    for rounds in (10, 40, 160):
        row = rate(round_robin(strengths, rounds, 3), samples=SAMPLES).by_player()["a"]
        widths.append(row.high - row.low)
    assert widths[0] > widths[1] > widths[2]
    assert widths[2] < widths[0] / 2.5  # 16 times the matches, about a quarter the width


def test_the_bootstrap_draws_whole_groups():
    """Each match played twice in one group (copies are not independent draws) gives wider
    intervals than the same matches counted as separate groups."""
    records = round_robin({"a": 0.5, "b": 0.0, "c": -0.5}, 15, 4)
    twins = [
        MatchRecord(r.match_id + copy, r.env_id, r.seats, r.scores, r.group)
        for r in records
        for copy in ("/1", "/2")
    ]
    alone = [MatchRecord(r.match_id, r.env_id, r.seats, r.scores, r.match_id) for r in twins]
    grouped, separate = rate(twins, samples=SAMPLES), rate(alone, samples=SAMPLES)
    assert grouped.by_player()["a"].rating == separate.by_player()["a"].rating
    for player in "abc":
        wide, narrow = grouped.by_player()[player], separate.by_player()[player]
        assert wide.high - wide.low > 1.2 * (narrow.high - narrow.low)


def test_the_ratings_are_deterministic_and_independent_of_match_order():
    records = round_robin(KNOWN, 4, 8)
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    first = rate(records, samples=SAMPLES, seed=3)
    assert rate(shuffled, samples=SAMPLES, seed=3) == first
    other = rate(records, samples=SAMPLES, seed=4)
    assert [r.rating for r in other.rows] == [r.rating for r in first.rows]
    assert [r.low for r in other.rows] != [r.low for r in first.rows]  # the seed is used


def test_an_anchored_player_sits_at_zero():
    ratings = rate(round_robin(KNOWN, 4, 9), samples=SAMPLES, anchor="random")
    row = ratings.by_player()["random"]
    assert (row.rating, row.low, row.high) == (0.0, 0.0, 0.0)
    assert all(r.low > 0 for r in ratings.rows if r.player == "stockfish")
    assert ratings.to_dict()["anchor"] == "random"


def test_more_than_two_seats_is_plackett_luce():
    """Four-seat matches of known strengths, placed by strength plus Gumbel noise (which is
    exactly Plackett-Luce's model): the method says so and the order is kept."""
    rng = random.Random(11)
    strengths = {"a": 2.0, "b": 1.0, "c": 0.0, "d": -1.0}
    records = []
    for i in range(60):
        noisy = {p: s - math.log(-math.log(rng.random())) for p, s in strengths.items()}
        seats = {f"s{k}": p for k, p in enumerate(strengths)}
        records.append(
            MatchRecord(f"m{i}", "g", seats, {f"s{k}": noisy[p] for k, p in enumerate(strengths)})
        )
    ratings = rate(records, samples=SAMPLES)
    assert ratings.method == "plackett-luce"
    assert order(ratings) == list(strengths)


def test_the_table_is_json_ready():
    ratings = rate(round_robin({"a": 1.0, "b": 0.0}, 3, 1), samples=50)
    data = ratings.to_dict()
    assert data["method"] == "bradley-terry" and data["samples"] == 50
    assert [row["player"] for row in data["rows"]] == ["a", "b"]
    assert set(data["rows"][0]) == {
        "player",
        "rating",
        "low",
        "high",
        "rank",
        "tie_group",
        "matches",
    }


def test_bad_parameters_are_one_clear_line():
    records = round_robin({"a": 1.0, "b": 0.0}, 2, 1)
    with pytest.raises(ValueError, match="the bootstrap needs prior > 0"):
        rate(records, prior=0)
    with pytest.raises(ValueError, match="samples must be at least 1, got 0"):
        rate(records, samples=0)
    with pytest.raises(ValueError, match="confidence must be between 0 and 1, got 95"):
        rate(records, confidence=95)
