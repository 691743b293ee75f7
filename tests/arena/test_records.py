"""Match records: JSON round trip, placings with ties, and one clear line for bad input."""

import json
import math

import pytest

from agentgym.arena import MatchRecord
from agentgym.arena.records import Forfeit, forfeit_scores


def test_a_record_round_trips_through_json():
    record = MatchRecord(
        "m1",
        "multiagent/TicTacToe-v0",
        {"player_0": "a", "player_1": "b"},
        {"player_0": 1, "player_1": 0},
        "seed3",
    )
    again = MatchRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again == record
    assert again.scores == {"player_0": 1.0, "player_1": 0.0}
    assert (again.cluster, again.players) == ("seed3", ["a", "b"])


def test_the_cluster_is_the_match_when_no_group_is_given():
    record = MatchRecord("m2", "g", {"x": "a", "y": "b"}, {"x": 0.5, "y": 0.5})
    assert record.cluster == "m2"


def test_placings_put_equal_scores_in_one_block_best_first():
    record = MatchRecord(
        "m3",
        "g",
        {"s0": "d", "s1": "b", "s2": "c", "s3": "a"},
        {"s0": 2, "s1": 5, "s2": 2, "s3": -1},
    )
    assert record.placings() == [["b"], ["c", "d"], ["a"]]


@pytest.mark.parametrize(
    ("seats", "scores", "message"),
    [
        ({"x": "a"}, {"x": 1}, "1 seat\\(s\\); a match needs two"),
        ({"x": "a", "y": "b"}, {"x": 1}, "scores for seats \\['x'\\] but the seats are"),
        ({"x": "a", "y": "a"}, {"x": 1, "y": 0}, "a player holds several seats"),
        ({"x": "a", "y": "b"}, {"x": math.nan, "y": 0}, "seat 'x' scored nan"),
        ({"x": "a", "y": "b"}, {"x": 0, "y": 1}, "seat 'z' forfeited, but the seats are"),
    ],
)
def test_a_bad_record_is_one_clear_line(seats, scores, message):
    forfeit = Forfeit("z", "its move raised ValueError") if "forfeit" in message else None
    with pytest.raises(ValueError, match=f"match 'bad': {message}"):
        MatchRecord("bad", "g", seats, scores, forfeit=forfeit)


def test_a_record_keeps_the_game_that_replays_it():
    record = MatchRecord(
        "m4",
        "multiagent/TicTacToe-v0",
        {"player_0": "a", "player_1": "b"},
        {"player_0": 1, "player_1": 0},
        seed=7,
        task_id="t0",
        moves=({"player_0": "4"}, {"player_1": "0"}),
    )
    again = MatchRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again == record
    assert (again.seed, again.task_id, again.moves) == (7, "t0", record.moves)


def test_a_record_from_before_the_game_fields_reads_back_with_them_empty():
    old = {
        "match_id": "m5",
        "env_id": "g",
        "seats": {"x": "a", "y": "b"},
        "scores": {"x": 1, "y": 0},
    }
    record = MatchRecord.from_dict(old)
    assert (record.seed, record.task_id, record.moves) == (None, "", ())


def test_a_forfeit_round_trips_and_a_record_without_one_keeps_its_old_fields():
    seats = {"player_0": "a", "player_1": "b"}
    record = MatchRecord(
        "m6",
        "multiagent/TicTacToe-v0",
        seats,
        forfeit_scores(seats, "player_1"),
        seed=1,
        moves=({"player_0": "place 1 1"},),
        forfeit=Forfeit("player_1", "its move took over the step timeout of 300 s"),
    )
    assert record.scores == {"player_0": 1.0, "player_1": 0.0}
    data = json.loads(json.dumps(record.to_dict()))
    assert data["forfeit"] == {"seat": "player_1", "reason": record.forfeit.reason}
    assert MatchRecord.from_dict(data) == record
    assert "forfeit" not in MatchRecord("m7", "g", seats, {"player_0": 1, "player_1": 0}).to_dict()
    assert len(Forfeit("x", "e" * 10_000).reason) == 500  # an exception's message is capped
