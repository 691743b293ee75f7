"""The arena's schedules: every pairing, seat swaps on shared seeds, Swiss without repeats,
and Swiss rounds rebuilt from a run's results."""

import itertools
from collections import Counter

import pytest

from agentgym.arena import MatchRecord
from agentgym.arena.schedule import round_robin, swiss_round, swiss_schedule
from agentgym.errors import UsageError

SEATS = ["player_0", "player_1"]


def test_a_round_robin_plays_every_pair_n_games_seats_swapped_on_shared_seeds():
    players = ["a", "b", "c", "d"]
    matches = round_robin(players, SEATS, 6, seed=3)
    pairs = Counter(frozenset(m.seats.values()) for m in matches)
    assert pairs == {frozenset(p): 6 for p in itertools.combinations(players, 2)}
    by_group: dict[str, list] = {}
    for match in matches:
        by_group.setdefault(match.group, []).append(match)
    assert all(len(twins) == 2 for twins in by_group.values())
    for first, second in by_group.values():
        assert first.seed == second.seed
        assert first.seats["player_0"] == second.seats["player_1"]
        assert first.seats["player_1"] == second.seats["player_0"]
    # block k of every pair plays the same seed: every pairing meets the same games
    seeds_by_pair = {}
    for match in matches:
        seeds_by_pair.setdefault(frozenset(match.seats.values()), []).append(match.seed)
    assert len({tuple(s) for s in seeds_by_pair.values()}) == 1
    assert len(set(next(iter(seeds_by_pair.values())))) == 3
    assert len({m.match_id for m in matches}) == len(matches)


def test_the_schedule_is_a_function_of_the_seed():
    assert round_robin(["a", "b", "c"], SEATS, 4, 0) == round_robin(["a", "b", "c"], SEATS, 4, 0)
    seeds = {m.seed for m in round_robin(["a", "b"], SEATS, 2, 0)}
    assert seeds.isdisjoint({m.seed for m in round_robin(["a", "b"], SEATS, 2, 1)})


def test_a_table_of_three_seats_rotates_everyone_through_every_seat():
    seats = ["s0", "s1", "s2"]
    matches = round_robin(["a", "b", "c"], seats, 3, seed=0)
    assert len({m.seed for m in matches}) == 1 and len({m.group for m in matches}) == 1
    for seat in seats:
        assert sorted(m.seats[seat] for m in matches) == ["a", "b", "c"]
    four = round_robin(["a", "b", "c", "d"], seats, 3, seed=0)
    assert len(four) == 4 * 3  # every table of three out of four


def test_swiss_pairs_close_scores_and_repeats_no_pairing():
    players = ["a", "b", "c", "d", "e", "f"]
    played: set = set()
    points = {"a": 4, "b": 3, "c": 2, "d": 1, "e": 0, "f": 0}
    first = swiss_round(players, SEATS, 2, 0, 1, points, played, set())
    pairs = {frozenset(m.seats.values()) for m in first}
    assert pairs == {frozenset("ab"), frozenset("cd"), frozenset("ef")}
    assert all(m.group.startswith("swiss-1/") for m in first)
    played |= pairs
    second = swiss_round(players, SEATS, 2, 0, 2, points, played, set())
    again = {frozenset(m.seats.values()) for m in second}
    assert again.isdisjoint(played) and len(again) == 3


def test_swiss_sits_out_the_lowest_who_has_not_sat_out():
    players = ["a", "b", "c"]
    points = {"a": 2, "b": 1, "c": 0}
    matches = swiss_round(players, SEATS, 2, 0, 1, points, set(), set())
    assert {p for m in matches for p in m.seats.values()} == {"a", "b"}
    matches = swiss_round(players, SEATS, 2, 0, 2, points, set(), {"c"})
    assert {p for m in matches for p in m.seats.values()} == {"a", "c"}


@pytest.mark.parametrize(
    ("players", "games", "message"),
    [
        (["a", "a"], 2, "more than once"),
        (["a"], 2, "1 player\\(s\\) but the game has 2 seats"),
        (["a", "b"], 0, "--games must be a positive count"),
    ],
)
def test_a_field_that_cannot_be_scheduled_is_one_clear_line(players, games, message):
    with pytest.raises(UsageError, match=message):
        round_robin(players, SEATS, games, 0)


def test_swiss_refuses_games_of_more_than_two_seats():
    with pytest.raises(UsageError, match="use --schedule round-robin"):
        swiss_round(["a", "b", "c"], ["x", "y", "z"], 3, 0, 1, {}, set(), set())


STRENGTH = {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}


def won(match, strength=STRENGTH) -> MatchRecord:
    """The match's record: the stronger player wins."""
    best = max(match.seats.values(), key=strength.__getitem__)
    scores = {seat: float(player == best) for seat, player in match.seats.items()}
    return MatchRecord(match.match_id, "game", match.seats, scores, match.group, match.seed)


def test_swiss_schedule_plans_each_round_from_the_results_before_it():
    """A runner plays each round before the next is planned; a board rebuilds the same rounds
    from the finished run's records at once."""
    players, recorded = list(STRENGTH), []
    played = []
    for batch in swiss_schedule(players, SEATS, 2, 7, 3, recorded.copy):
        played.append(batch)
        recorded += [won(match) for match in batch]  # the round is played before the next
    assert [m.round for m in played[2]] == [3] * 4 and len(played) == 3
    rebuilt = list(swiss_schedule(players, SEATS, 2, 7, 3, lambda: recorded))
    assert rebuilt == played
    sat_out = [set(players) - {p for m in batch for p in m.seats.values()} for batch in played]
    assert all(len(out) == 1 for out in sat_out) and len(set.union(*sat_out)) == 3
    # other results give other later rounds: the rounds are a function of the results
    upset = {p: -s for p, s in STRENGTH.items()}
    reversed_results = [won(m, upset) for batch in played[:1] for m in batch]
    other = list(swiss_schedule(players, SEATS, 2, 7, 2, lambda: reversed_results))
    assert other[0] == played[0] and other[1] != played[1]


def test_swiss_schedule_counts_only_the_rounds_before_the_one_it_plans():
    """A resumed run has later rounds' results on disk already: they change no pairing."""
    players, recorded = list(STRENGTH), []
    played = []
    for batch in swiss_schedule(players, SEATS, 1, 0, 3, recorded.copy):
        played.append(batch)
        recorded += [won(match) for match in batch]
    every = list(recorded)
    asked = []

    def results():
        asked.append(len(asked))
        return every  # all three rounds' results, from the start

    assert list(swiss_schedule(players, SEATS, 1, 0, 3, results)) == played
    assert asked == [0, 1, 2]  # asked once per round, as each is planned
