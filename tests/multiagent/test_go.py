"""Go 9x9: coordinates, OpenSpiel's scoring, GNU Go over GTP, no leaked engine processes."""

import pytest

import agentgym
from agentgym.envs.multiagent import go
from agentgym.envs.multiagent.engines import find_engine
from agentgym.envs.multiagent.go import GnuGoPlayer
from agentgym.errors import MissingExtraError
from agentgym.multiagent import play_game

ENV_ID = "multiagent/Go9x9-v0"


def fresh(max_moves=20):
    env = agentgym.make_multi(ENV_ID, max_moves=max_moves)
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    return env


def test_coordinates_in_any_case_place_stones_and_the_board_shows_them():
    env = fresh()
    env.step("I play d4")
    env.step("E5")
    board = env.unwrapped.render().splitlines()
    assert board[0] == "  A B C D E F G H J"
    assert board[5] == "5 . . . . O . . . . 5"
    assert board[6] == "4 . . . X . . . . . 4"
    assert "Legal: any empty point, or pass, or resign." in env.observe("player_0")


def test_an_occupied_point_is_feedback_and_the_same_player_moves_again():
    env = fresh()
    env.step("D4")
    env.step("d4")
    assert env.agent_selection == "player_1"
    assert env.observe("player_1").startswith("Invalid action: D4 is occupied")


@pytest.mark.parametrize("text", ["Z9", "D4 or E5", "a move", "I0"])
def test_unreadable_moves_are_invalid(text):
    env = fresh()
    env.step(text)
    assert env.infos["player_0"]["invalid_action"] is True


def test_two_passes_end_the_game_and_komi_wins_an_empty_board_for_white():
    env = fresh()
    env.step("pass")
    env.step("pass")
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert env.infos["player_1"]["verdict"].passed


def test_resigning_loses():
    env = fresh()
    env.step("D4")
    env.step("resign")
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


def test_the_move_cap_ends_the_game_with_a_score():
    result = play_game(
        agentgym.make_multi(ENV_ID, max_moves=6),
        {
            a: lambda env, agent: env.unwrapped.legal_actions(env.unwrapped.world, agent)[0]
            for a in ("player_0", "player_1")
        },
        seed=0,
        task_id="dev/empty/0",
    )
    assert len(result.moves) == 6 and result.finished


def test_random_never_fills_its_own_eye():
    env = fresh()
    for move in ["B1", "J9", "A2", "J8"]:  # black to move, with a one-point eye at A1
        env.step(move)
    random_player = env.unwrapped.reference_players()["random"]()
    moves = {random_player.act(env, "player_0") for _ in range(200)}
    assert "A1" not in moves and len(moves) > 20


@pytest.mark.parametrize("seed", range(2))
def test_gnugo_level_1_beats_random(seed):
    env = agentgym.make_multi(ENV_ID, max_moves=100)
    players = env.unwrapped.reference_players()
    gnugo, random_player = players["gnugo-level-1"](), players["random"]()
    gnugo_seat = ("player_0", "player_1")[seed]
    other = "player_1" if gnugo_seat == "player_0" else "player_0"
    try:
        result = play_game(
            env, {gnugo_seat: gnugo, other: random_player}, seed=seed, task_id="dev/empty/0"
        )
    finally:
        gnugo.close()
    assert result.outcome[gnugo_seat] == 1.0


@pytest.mark.parametrize("policy", ["always pass", "first legal point"])
def test_a_fixed_policy_earns_nothing_against_gnugo(policy):
    def fixed(env, agent):
        if policy == "always pass":
            return "pass"
        return env.unwrapped.legal_actions(env.unwrapped.world, agent)[0]

    env = agentgym.make_multi(ENV_ID, max_moves=100)
    gnugo = env.unwrapped.reference_players()["gnugo-level-1"]()
    try:
        result = play_game(
            env, {"player_0": fixed, "player_1": gnugo}, seed=0, task_id="dev/empty/0"
        )
    finally:
        gnugo.close()
    assert result.outcome["player_0"] == 0.0


@pytest.fixture
def nothing_remembered(monkeypatch):
    """GNU Go's moves are remembered across players; these tests need the engine itself."""
    monkeypatch.setattr(go, "_REMEMBERED", {})


def test_fresh_engines_at_one_level_choose_the_same_moves(nothing_remembered):
    env = fresh()
    first = GnuGoPlayer(5)
    moves = []
    try:
        for _ in range(4):
            moves.append(first.act(env, env.agent_selection))
            env.step(moves[-1])
    finally:
        first.close()
    go._REMEMBERED.clear()
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    second = GnuGoPlayer(5)
    try:
        for move in moves:
            assert second.act(env, env.agent_selection) == move
            env.step(move)
    finally:
        second.close()


def test_engine_processes_end_with_close_and_with_the_env(nothing_remembered):
    env = fresh()
    player = GnuGoPlayer(1)
    move = player.act(env, "player_0")
    assert move in env.unwrapped.legal_actions(env.unwrapped.world, "player_0")
    process = player._engine.process
    player.close()
    player.close()  # idempotent
    assert process.poll() is not None
    env.step("D4")
    env.unwrapped.oracle_action("player_1")
    oracle_process = env.unwrapped._oracle._engine.process
    env.close()
    assert oracle_process.poll() is not None


def test_a_missing_gnugo_is_a_typed_error(monkeypatch, nothing_remembered):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("agentgym.envs.multiagent.engines.ENGINE_DIRS", ())
    with pytest.raises(MissingExtraError, match="apt-get install gnugo"):
        GnuGoPlayer(1).act(fresh(), "player_0")


def test_engines_off_path_are_found_in_the_usual_folders(monkeypatch):
    """Debian's /usr/games is not on every shell's PATH: the lookup searches it anyway."""
    monkeypatch.setenv("PATH", "/nonexistent")
    assert find_engine("gnugo", "gnugo") == "/usr/games/gnugo"
    assert find_engine("stockfish", "stockfish") == "/usr/games/stockfish"
