"""openskill's live rating: labelled provisional, and it depends on the order of the
matches, which is why it is never the official number (the batch fit does not)."""

import pytest

from agentgym.arena import PROVISIONAL, MatchRecord, fit, provisional_ratings

pytest.importorskip("openskill")


def duel(match_id: str, winner: str, loser: str) -> MatchRecord:
    return MatchRecord(match_id, "g", {"p0": winner, "p1": loser}, {"p0": 1, "p1": 0})


# a beats b twice, then b beats a twice; c loses to both
MATCHES = [
    duel("m1", "a", "b"),
    duel("m2", "a", "b"),
    duel("m3", "b", "a"),
    duel("m4", "b", "a"),
    duel("m5", "a", "c"),
    duel("m6", "b", "c"),
]


def test_two_orders_give_two_answers_online_and_one_in_the_batch_fit():
    forward = {r.player: r.mu for r in provisional_ratings(MATCHES)}
    backward = {r.player: r.mu for r in provisional_ratings(list(reversed(MATCHES)))}
    assert forward["a"] != pytest.approx(backward["a"], abs=0.1)
    # the same matches: online, whoever won last is ahead; the batch fit has them equal
    assert (forward["b"] > forward["a"]) and (backward["a"] > backward["b"])
    assert fit(MATCHES) == fit(list(reversed(MATCHES)))
    assert fit(MATCHES)["a"] == pytest.approx(fit(MATCHES)["b"], abs=1e-9)


def test_every_provisional_number_carries_its_label():
    rows = provisional_ratings(MATCHES)
    assert [r.player for r in rows][-1] == "c"
    assert all(r.label == PROVISIONAL and "provisional" in r.to_dict()["label"] for r in rows)
    assert "depends on match order" in PROVISIONAL
    assert {r.player: r.matches for r in rows} == {"a": 5, "b": 5, "c": 2}
    assert all(r.ordinal == pytest.approx(r.mu - 3 * r.sigma) for r in rows)


def test_a_tie_shares_a_rank():
    draw = MatchRecord("d", "g", {"p0": "a", "p1": "b"}, {"p0": 0.5, "p1": 0.5})
    rows = {r.player: r for r in provisional_ratings([draw])}
    assert rows["a"].mu == pytest.approx(rows["b"].mu)
