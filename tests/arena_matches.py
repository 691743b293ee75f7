"""Real arena matches for tests: tic-tac-toe's solver against random, seats swapped on
shared seeds, each recorded with the seed, task and moves that replay it."""

from __future__ import annotations

import agentgym
from agentgym.arena import MatchRecord
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
