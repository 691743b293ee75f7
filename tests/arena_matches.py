"""Real arena matches for tests: tic-tac-toe's solver against random, seats swapped on
shared seeds, each recorded with the seed, task and moves that replay it; and a match an
agent forfeited part of the way through."""

from __future__ import annotations

import agentgym
from agentgym.arena import MatchRecord
from agentgym.arena.records import Forfeit, forfeit_scores
from agentgym.multiagent import play_game

TICTACTOE = "multiagent/TicTacToe-v0"


def solver_vs_random(games: int) -> list[MatchRecord]:
    """``2 * games`` matches: for each seed, the solver first and then random first."""
    env = agentgym.make_multi(TICTACTOE)
    players = env.unwrapped.reference_players()
    records = []
    try:
        for seed in range(games):
            for order in (("solver", "random"), ("random", "solver")):
                seats = dict(zip(env.possible_agents, order, strict=True))
                result = play_game(env, {a: players[n]() for a, n in seats.items()}, seed=seed)
                records.append(
                    MatchRecord(
                        f"g{seed}-{order[0]}",
                        TICTACTOE,
                        seats,
                        result.outcome,
                        group=f"seed{seed}",
                        seed=seed,
                        task_id=result.task_id,
                        moves=tuple(result.moves),
                    )
                )
    finally:
        env.close()
    return records


def forfeited(turns: int, seed: int = 5) -> MatchRecord:
    """A tic-tac-toe match between two agents (``agent-0``, ``agent-1``: no reference player's
    name) that the agent to move forfeited after ``turns`` turns, as the arena records it
    when that agent's move raises. The moves are two random players'."""
    env = agentgym.make_multi(TICTACTOE)
    players = env.unwrapped.reference_players()
    try:
        seats = {agent: f"agent-{i}" for i, agent in enumerate(env.possible_agents)}
        result = play_game(env, {a: players["random"]() for a in seats}, seed=seed, max_turns=turns)
        seat = env.unwrapped.agent_selection
    finally:
        env.close()
    return MatchRecord(
        f"forfeit-{turns}",
        TICTACTOE,
        seats,
        forfeit_scores(seats, seat),
        seed=seed,
        task_id=result.task_id,
        moves=tuple(result.moves),
        forfeit=Forfeit(seat, "its move raised ValueError: a bug in the agent"),
    )
