"""Tic-tac-toe: rules, feedback, forfeits and a perfect oracle."""

import numpy as np
import pytest

import agentgym
from agentgym.envs.multiagent.tictactoe import minimax
from agentgym.errors import UsageError


def play(env, moves):
    for move in moves:
        env.step(move)


def test_three_in_a_row_wins_and_rewards_are_plus_minus_one():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    play(env, ["place 1 1", "place 2 1", "place 1 2", "place 2 2", "place 1 3"])
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert env.infos["player_0"]["verdict"].passed
    assert env.infos["player_1"]["verdict"].details == "lost"


def test_an_occupied_cell_is_feedback_and_the_same_player_moves_again():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    play(env, ["place 2 2", "2 2"])
    assert env.agent_selection == "player_1"
    assert env.infos["player_1"]["invalid_action"] is True
    assert env.observe("player_1").startswith(
        "Invalid action: row 2, column 2 is taken by X (2 mistakes left before you forfeit). "
        "Legal moves: place 1 1, place 1 2, place 1 3, place 2 1, place 2 3,"
    )


def test_three_mistakes_forfeit():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    play(env, ["banana"] * 3)
    assert env.infos["player_0"]["verdict"].score == 0.0
    assert env.infos["player_1"]["verdict"].score == 1.0


def test_perfect_play_from_the_empty_board_is_a_draw():
    assert minimax("." * 9)[0] == 0


@pytest.mark.parametrize("seed", range(20))
def test_the_oracle_never_loses_to_a_random_player(seed):
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    env.reset(seed=seed, options={"difficulty": "empty"})  # openings may already be lost
    rng = np.random.default_rng(seed)
    oracle_seat = ("player_0", "player_1")[seed % 2]
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if agent == oracle_seat:
            env.step(env.unwrapped.oracle_action(agent))
        else:
            free = [i for i, c in enumerate(env.unwrapped.world.cells) if c == "."]
            cell = free[int(rng.integers(len(free)))]
            env.step(f"place {cell // 3 + 1} {cell % 3 + 1}")
    assert env.unwrapped.outcome(env.unwrapped.world)[oracle_seat] >= 0.5


def test_non_text_actions_are_usage_errors():
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    env.reset(seed=0)
    with pytest.raises(UsageError, match="takes the agent's action as a str, got int 5"):
        env.step(5)


def play_reference_players(env, seats):
    scores = {}
    for agent in env.agent_iter():
        _, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            scores[agent] = info["verdict"].score
        env.step(None if terminated or truncated else seats[agent].act(env, agent))
    return scores


@pytest.mark.parametrize("seed", range(6))
def test_the_solver_reference_player_never_loses_to_random(seed):
    env = agentgym.make_multi("multiagent/TicTacToe-v0")
    env.reset(seed=seed, options={"task_id": "dev/empty/0"})
    players = env.unwrapped.reference_players()
    assert set(players) == {"random", "solver"}
    solver_seat, random_seat = ("player_0", "player_1")[:: 1 if seed % 2 else -1]
    seats = {solver_seat: players["solver"](), random_seat: players["random"]()}
    assert play_reference_players(env, seats)[solver_seat] >= 0.5


def test_the_random_reference_player_is_seeded_by_the_env():
    games = []
    for seed in (3, 3, 4):
        env = agentgym.make_multi("multiagent/TicTacToe-v0")
        env.reset(seed=seed, options={"task_id": "dev/empty/0"})
        players = env.unwrapped.reference_players()
        play_reference_players(env, {a: players["random"]() for a in env.possible_agents})
        games.append(env.unwrapped.world.cells)
    assert games[0] == games[1] != games[2]
