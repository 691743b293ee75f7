"""The batch fit against numbers known without it: hand-computed maximum likelihoods and a
brute-force optimizer on the same likelihood written out independently."""

import itertools
import math
import random

import numpy as np
import pytest

from agentgym.arena import ELO_PER_LOGIT, MatchRecord, fit
from agentgym.arena.fit import Comparisons, fit_strengths

optimize = pytest.importorskip("scipy.optimize")


def duel(match_id: str, a: str, b: str, score_a: float, group: str = "") -> MatchRecord:
    """A two-seat match: ``a`` scores ``score_a`` (1 win, 0.5 draw, 0 loss)."""
    return MatchRecord(
        match_id, "test/Game-v0", {"p0": a, "p1": b}, {"p0": score_a, "p1": 1 - score_a}, group
    )


def series(a: str, b: str, wins: int, losses: int, draws: int = 0) -> list[MatchRecord]:
    outcomes = [1.0] * wins + [0.0] * losses + [0.5] * draws
    return [duel(f"{a}-{b}-{i}", a, b, score) for i, score in enumerate(outcomes)]


def test_two_players_ten_to_one_is_400_points():
    """Hand-computed: with two players the MLE of theta_a - theta_b is ln(wins / losses);
    10 wins to 1 is odds of 10, which the Elo scale puts at exactly 400 points."""
    ratings = fit(series("a", "b", 10, 1), prior=0)
    assert ratings["a"] - ratings["b"] == pytest.approx(400, abs=1e-6)
    assert ratings["a"] == pytest.approx(-ratings["b"])  # anchored at the mean


def test_a_draw_is_half_a_win_for_each():
    """1 win and 1 draw is 1.5 wins to 0.5: odds 3, 400 * log10(3) = 190.85 points."""
    ratings = fit(series("a", "b", 1, 0, draws=1), prior=0)
    assert ratings["a"] - ratings["b"] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_three_players_whose_records_fit_the_model_exactly():
    """Hand-computed: a 6-3 b (odds 2), b 6-3 c (odds 2), a 8-2 c (odds 4). Strengths
    4 : 2 : 1 predict every pair's wins exactly, which are the likelihood equations
    (each player's expected wins = its actual wins; Zermelo 1929, Hunter 2004 eq. 3), so
    they are the unique MLE: 400 log10(2) = 120.41 points between neighbours."""
    records = series("a", "b", 6, 3) + series("b", "c", 6, 3) + series("a", "c", 8, 2)
    ratings = fit(records, prior=0)
    step = 400 * math.log10(2)
    assert ratings == pytest.approx({"a": step, "b": 0.0, "c": -step}, abs=1e-6)
    assert fit(records, prior=0, anchor="c") == pytest.approx(
        {"a": 2 * step, "b": step, "c": 0.0}, abs=1e-6
    )


def orders_log_likelihood(theta: dict[str, float], placings: list[list[str]]) -> float:
    """A placing's log-likelihood written the slow way: the mean over every order of its
    tied blocks (itertools.permutations) of the Plackett-Luce log-probability."""
    total, orders = 0.0, 0
    for blocks in itertools.product(*(itertools.permutations(b) for b in placings)):
        order = [p for block in blocks for p in block]
        log_p = 0.0
        for i, player in enumerate(order[:-1]):
            rest = order[i:]
            log_p += theta[player] - math.log(sum(math.exp(theta[q]) for q in rest))
        total, orders = total + log_p, orders + 1
    return total / orders


def brute_force(records: list[MatchRecord], players: list[str], prior: float) -> np.ndarray:
    """The same MLE by scipy's BFGS over the likelihood above plus the prior's virtual games."""

    def negative(vector: np.ndarray) -> float:
        theta = dict(zip(players, vector, strict=True))
        value = sum(orders_log_likelihood(theta, r.placings()) for r in records)
        value += sum(prior / 2 * t - prior * np.logaddexp(0, t) for t in vector)
        return -float(value)

    found = optimize.minimize(negative, np.zeros(len(players)), method="BFGS", tol=1e-12)
    return np.asarray(found.x)


def random_matches(seed: int, players: list[str], seats: int, count: int) -> list[MatchRecord]:
    """Matches with random placings; scores drawn from few values, so ties happen."""
    rng = random.Random(seed)
    records = []
    for i in range(count):
        seated = rng.sample(players, seats)
        scores = {f"s{k}": float(rng.choice([0, 1, 1, 2, 3])) for k in range(seats)}
        seats_of = {f"s{k}": p for k, p in enumerate(seated)}
        records.append(MatchRecord(f"m{i:03d}", "test/Game-v0", seats_of, scores))
    return records


@pytest.mark.parametrize(
    ("seats", "players", "seed"),
    [(2, ["a", "b", "c", "d"], 1), (3, ["a", "b", "c", "d"], 2), (4, list("abcde"), 3)],
)
def test_the_fit_matches_a_brute_force_optimizer(seats, players, seed):
    """Bradley-Terry with draws (2 seats) and Plackett-Luce with tied blocks (3, 4 seats):
    the Newton fit and the tie-stage expansion agree with BFGS on the likelihood written as
    an average over every order of the ties."""
    records = random_matches(seed, players, seats, 30)
    comparisons = Comparisons.of(records)
    theta = fit_strengths(comparisons, prior=1.0)[0]
    expected = brute_force(records, list(comparisons.players), prior=1.0)
    assert theta == pytest.approx(expected, abs=1e-5)
    ratings = fit(records)
    centred = (expected - expected.mean()) * ELO_PER_LOGIT
    assert [ratings[p] for p in comparisons.players] == pytest.approx(centred, abs=1e-3)


def test_a_player_who_wins_everything_needs_the_prior():
    records = series("a", "b", 5, 0) + series("b", "c", 3, 2)
    with pytest.raises(ValueError, match="prior=0 the ratings have no maximum"):
        fit(records, prior=0)
    ratings = fit(records)
    assert all(math.isfinite(r) for r in ratings.values())
    assert max(ratings, key=ratings.__getitem__) == "a"


def test_the_prior_shrinks_towards_equal_and_fades_with_more_matches():
    exact = 400 * math.log10(3)  # 3 wins to 1
    few = fit(series("a", "b", 3, 1))
    many = fit(series("a", "b", 300, 100))
    assert 0 < few["a"] - few["b"] < many["a"] - many["b"] < exact
    assert many["a"] - many["b"] == pytest.approx(exact, rel=0.01)


def test_symmetric_records_give_equal_ratings():
    cycle = series("a", "b", 4, 2) + series("b", "c", 4, 2) + series("c", "a", 4, 2)
    assert fit(cycle) == pytest.approx({"a": 0, "b": 0, "c": 0}, abs=1e-9)
    assert fit(series("a", "b", 3, 3, draws=2)) == pytest.approx({"a": 0, "b": 0}, abs=1e-9)


def test_the_fit_does_not_depend_on_match_order():
    records = random_matches(7, list("abcd"), 3, 40)
    shuffled = records[:]
    random.Random(0).shuffle(shuffled)
    assert fit(shuffled) == fit(records)  # bit for bit: matches are sorted by id


def test_bad_input_is_one_clear_line():
    with pytest.raises(ValueError, match="no matches to rate"):
        fit([])
    with pytest.raises(ValueError, match="anchor 'z' played no match"):
        fit(series("a", "b", 1, 1), anchor="z")
    with pytest.raises(ValueError, match="prior must be a finite number >= 0, got -1"):
        fit(series("a", "b", 1, 1), prior=-1)
    tied = MatchRecord(
        "big", "g", {f"s{i}": f"p{i}" for i in range(11)}, {f"s{i}": 1.0 for i in range(11)}
    )
    with pytest.raises(ValueError, match="11 players tied on one score"):
        fit([tied])
