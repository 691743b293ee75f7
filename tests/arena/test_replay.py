"""Replay re-scoring: a match's recorded moves, played again from its seed and task, give the
game's own scores; a record the game does not bear out is refused, naming the match and the
first turn where the two part."""

import dataclasses

import pytest
from arena_matches import forfeited  # tests/: real matches

import agentgym
from agentgym.arena import MatchRecord
from agentgym.arena.records import Forfeit, forfeit_scores
from agentgym.arena.replay import ReplayMismatch, replay
from agentgym.multiagent import play_game

TICTACTOE = "multiagent/TicTacToe-v0"


def played(env_id: str = TICTACTOE, seed: int = 5) -> MatchRecord:
    """A real game between two random players, recorded as the arena records it."""
    env = agentgym.make_multi(env_id)
    players = env.unwrapped.reference_players()
    result = play_game(env, {a: players["random"]() for a in env.possible_agents}, seed=seed)
    env.close()
    return MatchRecord(
        f"{env_id}-{seed}",
        env_id,
        {agent: f"random-{i}" for i, agent in enumerate(env.possible_agents)},
        result.outcome,
        seed=result.seed,
        task_id=result.task_id,
        moves=tuple(result.moves),
    )


@pytest.mark.parametrize("env_id", [TICTACTOE, "multiagent/RockPaperScissors-v0"])
def test_a_real_game_replays_to_its_own_scores(env_id):
    record = played(env_id)
    assert replay(record) == record


def test_replay_returns_the_scores_the_game_gives_and_leaves_a_given_env_at_the_end():
    record = played(seed=11)
    env = agentgym.make_multi(TICTACTOE)
    again = replay(record, env=env)
    assert again.scores == record.scores
    assert "The game is over" in env.unwrapped.render()


def test_a_tampered_score_is_refused_at_the_last_turn():
    record = played()
    flipped = {seat: 1 - score for seat, score in record.scores.items()}
    with pytest.raises(ReplayMismatch, match=r"scores .* in the game, the record claims") as error:
        replay(dataclasses.replace(record, scores=flipped))
    assert (error.value.match_id, error.value.turn) == (record.match_id, len(record.moves))


def test_a_tampered_move_is_refused_at_its_turn():
    record = played()
    moves = [dict(turn) for turn in record.moves]
    (seat,) = moves[1]
    moves[1] = {seat: moves[0][next(iter(moves[0]))]}  # the cell the first move took: invalid
    with pytest.raises(ReplayMismatch) as error:
        replay(dataclasses.replace(record, moves=tuple(moves)))
    assert error.value.turn == 3  # the invalid move keeps the turn; the record moves the other
    assert "asks" in error.value.reason


@pytest.mark.parametrize(
    ("cut", "turn", "reason"),
    [(-1, "last", "not over"), (+1, "extra", "ended after turn")],
)
def test_moves_missing_or_left_over_are_refused(cut, turn, reason):
    record = played()
    moves = record.moves[:-1] if cut < 0 else record.moves + record.moves[-1:]
    with pytest.raises(ReplayMismatch, match=reason) as error:
        replay(dataclasses.replace(record, moves=moves))
    assert error.value.turn == (len(record.moves) - 1 if cut < 0 else len(record.moves) + 1)


def test_a_seat_moving_out_of_turn_is_refused_at_that_turn():
    record = played()
    moves = list(record.moves)
    moves[0], moves[1] = moves[1], moves[0]
    with pytest.raises(ReplayMismatch, match="turn 1") as error:
        replay(dataclasses.replace(record, moves=tuple(moves)))
    assert error.value.turn == 1


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"seed": None}, "no seed"),
        ({"moves": ()}, "no moves"),
        ({"task_id": "no-such-task"}, "no-such-task"),
        ({"seats": {"a": "x", "b": "y"}, "scores": {"a": 1, "b": 0}}, r"not .* agents"),
    ],
)
def test_a_record_that_cannot_start_its_game_is_refused(change, reason):
    with pytest.raises(ReplayMismatch, match=reason):
        replay(dataclasses.replace(played(), **change))


def test_a_reference_players_seat_must_have_played_that_players_moves():
    """A record cannot credit an agent with a win over `solver` whose moves it wrote itself:
    the replay asks the real solver at its turns. The same moves under an agent's name pass."""
    moves = ({"player_0": "place 1 1"}, {"player_1": "place 1 2"}, {"player_0": "place 2 2"},
             {"player_1": "place 1 3"}, {"player_0": "place 3 3"})  # fmt: skip
    forged = MatchRecord(
        "forged",
        TICTACTOE,
        {"player_0": "mybot", "player_1": "solver"},
        {"player_0": 1.0, "player_1": 0.0},
        seed=1,
        task_id="test/empty/0",
        moves=moves,
    )
    with pytest.raises(ReplayMismatch, match=r"turn 2\).*reference player 'solver'"):
        replay(forged)
    honest = dataclasses.replace(forged, seats={"player_0": "mybot", "player_1": "weakbot"})
    assert replay(honest).scores == {"player_0": 1.0, "player_1": 0.0}


@pytest.mark.parametrize("turns", [0, 3])
def test_a_forfeit_replays_its_moves_to_the_forfeit_scores(turns):
    """An agent that failed on its first move (no moves) or later: the game is still on
    after the moves, on the forfeiting seat's move, and the scores are the forfeit's."""
    record = forfeited(turns)
    assert len(record.moves) == turns and replay(record) == record
    assert record.scores[record.forfeit.seat] == 0.0


def test_a_forfeit_of_a_game_already_over_is_refused():
    """A record cannot turn a finished game its player lost into the winner's forfeit."""
    finished = played(seed=3)
    winner = max(finished.scores, key=finished.scores.get)
    claim = dataclasses.replace(
        finished,
        scores=forfeit_scores(finished.seats, winner),
        forfeit=Forfeit(winner, "its move raised ValueError: a bug in the agent"),
    )
    with pytest.raises(ReplayMismatch, match=r"the game is over after .* cannot forfeit") as error:
        replay(claim)
    assert error.value.turn == len(finished.moves)


def test_a_reference_player_cannot_forfeit():
    record = forfeited(2)  # player_0 to move: its moves were the random player's
    renamed = dataclasses.replace(record, seats={"player_0": "random", "player_1": "agent-1"})
    with pytest.raises(ReplayMismatch, match="it is the reference player 'random'") as error:
        replay(renamed)
    assert error.value.turn == 3


def test_a_forfeit_by_a_seat_not_to_move_is_refused():
    record = forfeited(2)
    other = next(seat for seat in record.seats if seat != record.forfeit.seat)
    moved = dataclasses.replace(
        record,
        scores={seat: float(seat != other) for seat in record.seats},
        forfeit=dataclasses.replace(record.forfeit, seat=other),
    )
    with pytest.raises(ReplayMismatch, match=rf"seat {other} .* forfeits, but the game asks"):
        replay(moved)


def test_a_forfeit_with_other_scores_is_refused():
    record = forfeited(3)
    flipped = {seat: 1 - score for seat, score in record.scores.items()}
    with pytest.raises(ReplayMismatch, match="by the forfeit, the record claims"):
        replay(dataclasses.replace(record, scores=flipped))
