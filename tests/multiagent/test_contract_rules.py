"""The multi-agent bases' rules, on tic-tac-toe and rock-paper-scissors: legal moves listed and
named in feedback, mistakes counted per agent, the per-game forfeit limit, play_game; and the
checker catching a game that breaks them."""

import itertools
import random
import time

import pytest

import agentgym
from agentgym.envs.multiagent.rockpaperscissors import RockPaperScissorsEnv
from agentgym.envs.multiagent.tictactoe import TicTacToeEnv
from agentgym.errors import BadActionError, DeterminismError, InfoContractError, UsageError
from agentgym.multiagent import RandomPlayer, play_game
from agentgym.multiagent_checker import (
    MULTIAGENT_CHECKS,
    check_multi_determinism,
    check_multi_legal_actions,
    check_multiagent_env,
)
from agentgym.task_env import InvalidAction

ONLY_BAD_ACTIONS = tuple(check for check in MULTIAGENT_CHECKS if check != "bad_actions")


def tictactoe():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    return env


def oracle(env, agent):
    return env.unwrapped.oracle_action(agent)


def test_every_agent_s_info_lists_its_legal_moves_and_only_the_mover_has_any():
    env = tictactoe()
    env.step("place 2 2")
    assert env.infos["player_1"]["legal_actions"] == [
        "place 1 1",
        "place 1 2",
        "place 1 3",
        "place 2 1",
        "place 2 3",
        "place 3 1",
        "place 3 2",
        "place 3 3",
    ]
    assert env.infos["player_0"]["legal_actions"] == []


def test_an_illegal_move_is_feedback_naming_the_legal_moves_and_counted_for_its_agent():
    env = tictactoe()
    env.step("place 2 2")
    env.step("place 2 2")
    assert env.observe("player_1").startswith(
        "Invalid action: row 2, column 2 is taken by X (2 mistakes left before you forfeit). "
        "Legal moves: place 1 1, place 1 2,"
    )
    assert env.infos["player_1"]["invalid_actions"] == 1
    assert env.infos["player_0"]["invalid_actions"] == 0


def test_a_game_without_legal_moves_gives_feedback_without_a_list():
    class Unlisted(TicTacToeEnv):
        def legal_actions(self, world, agent):
            return None

    env = Unlisted()
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    env.step("banana")
    assert "legal_actions" not in env.infos["player_0"]
    assert "Legal moves" not in env.observe("player_0")


def test_a_game_sets_its_own_forfeit_limit():
    class OneMistake(TicTacToeEnv):
        max_invalid_actions = 1

    env = OneMistake()
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    env.step("place 1 1")
    env.step("banana")
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.infos["player_1"]["verdict"].score == 0.0
    assert env.infos["player_0"]["verdict"].score == 1.0


def test_play_game_seats_reference_players_and_functions_alike():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    results = [
        play_game(env, {"player_0": oracle, "player_1": RandomPlayer(seed=s)}, seed=s)
        for s in range(10)
    ]
    assert all(r.finished and r.outcome["player_0"] >= 0.5 for r in results)
    assert {r.outcome["player_0"] for r in results} == {0.5, 1.0}  # random sometimes loses
    first = results[0]
    movers = [list(move) for move in first.moves]
    assert all(len(m) == 1 for m in movers)  # one agent per turn, turns alternating
    assert all(a != b for a, b in itertools.pairwise(movers))
    assert first.returns == {a: 2 * first.outcome[a] - 1 for a in env.possible_agents}


def test_play_game_replays_the_same_game_from_the_same_seed():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    games = [
        play_game(env, {a: RandomPlayer() for a in env.possible_agents}, seed=s, task_id=t)
        for s, t in ((5, "dev/empty/0"), (5, "dev/empty/0"), (6, "dev/empty/0"))
    ]
    assert games[0].moves == games[1].moves != games[2].moves


def test_play_game_plays_simultaneous_rounds():
    env = agentgym.make_multi("multiagent/RockPaperScissors-v0")
    result = play_game(
        env,
        {"player_0": oracle, "player_1": lambda env, agent: "rock"},
        seed=0,
        task_id="dev/best_of_9/0",
    )
    assert all(set(move) == {"player_0", "player_1"} for move in result.moves)
    assert result.outcome == {"player_0": 1.0, "player_1": 0.0}


def test_play_game_stops_a_game_past_its_turn_limit_unfinished():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    result = play_game(env, dict.fromkeys(env.possible_agents, oracle), seed=0, max_turns=2)
    assert len(result.moves) == 2 and not result.finished and result.outcome == {}


def test_play_game_needs_a_seat_for_every_agent():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    with pytest.raises(UsageError, match=r"missing \['player_1'\], unknown \['player_2'\]"):
        play_game(env, {"player_0": oracle, "player_2": oracle}, seed=0)


def test_random_player_refuses_a_game_that_lists_no_moves():
    class Unlisted(RockPaperScissorsEnv):
        def legal_actions(self, world, agent):
            return None

    env = Unlisted()
    with pytest.raises(UsageError, match="Unlisted lists no legal actions"):
        play_game(env, {a: RandomPlayer() for a in env.possible_agents}, seed=0)


# ---------------------------------------------------------------------- the checker


class ClockInInvalidFeedback(TicTacToeEnv):
    """Deterministic but for the feedback of an invalid move, which reads the clock."""

    def act(self, world, agent, action):
        try:
            return super().act(world, agent, action)
        except InvalidAction as mistake:
            raise InvalidAction(f"{mistake} (at {int(time.time())})") from None


class RandomGlobalInDescription(TicTacToeEnv):
    def describe(self, world, agent):
        return super().describe(world, agent) + f" ({random.random():.6f})"


def test_the_determinism_check_replays_invalid_moves_too():
    with pytest.raises(DeterminismError, match=r"playing mixed moves, first at step .*observation"):
        check_multi_determinism(ClockInInvalidFeedback, "clock", "dev/empty/0", 0)


def test_the_determinism_check_names_the_first_view_that_differs():
    with pytest.raises(
        DeterminismError,
        match=r"seed 0 and task 'dev/empty/0' gave different games playing oracle self-play, "
        r"first at reset: player_0's info\['state_key'\] differs",  # a digest of the view
    ):
        check_multi_determinism(RandomGlobalInDescription, "global", "dev/empty/0", 0)
    check_multi_determinism(TicTacToeEnv, "tictactoe", "dev/empty/0", 0)
    check_multi_determinism(RockPaperScissorsEnv, "rps", "dev/best_of_9/0", 0)


def test_the_legal_actions_check_catches_a_listed_move_the_game_refuses():
    class ListsTakenCells(TicTacToeEnv):
        def legal_actions(self, world, agent):
            return [] if self.to_move(world) != agent else ["place 1 1", "place 2 2"]

    with pytest.raises(InfoContractError, match="moves listed in info\\['legal_actions'\\] were"):
        check_multi_legal_actions(ListsTakenCells, "taken", 0)
    check_multi_legal_actions(TicTacToeEnv, "tictactoe", 0)


def test_the_bad_actions_check_catches_a_game_that_never_forfeits():
    class NoForfeit(TicTacToeEnv):
        def _forfeits(self):
            return None

    with pytest.raises(BadActionError, match=r"it must have lost .* a limit of mistakes forfeits"):
        check_multiagent_env(NoForfeit, skip=ONLY_BAD_ACTIONS)


def test_an_agents_state_key_tells_nothing_beyond_its_own_view():
    """Kuhn poker deals: where player_0 holds the same card, its state_key is the same
    whatever player_1 holds, so hashing guesses of the hidden card against it finds nothing."""
    pytest.importorskip("pyspiel")
    env = agentgym.make_multi("multiagent/KuhnPoker-v0")
    keys_by_view: dict[str, set[str]] = {}
    states_by_view: dict[str, set[str]] = {}
    for seed in range(40):
        env.reset(seed=seed)
        view = env.unwrapped.describe(env.unwrapped.world, "player_0")
        keys_by_view.setdefault(view, set()).add(env.infos["player_0"]["state_key"])
        states_by_view.setdefault(view, set()).add(env.unwrapped.state_key(env.unwrapped.world))
    env.close()
    assert all(len(keys) == 1 for keys in keys_by_view.values())
    assert any(len(states) > 1 for states in states_by_view.values())  # hidden cards differed
