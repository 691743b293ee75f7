"""Connect four's solver and go's GNU Go players: where the proof fits, how fast, how strong.

Run: ``.venv/bin/python tests/perf/bench_connectfour_go.py`` (about two minutes on 2 cores).
Not collected by the suite; the figures are quoted in docs/envs/multiagent.md.

1. Along games of the ``solver`` against ``solver-depth-4`` (seat-swapped, from ``opening``
   tasks), for each ply band: the share of positions whose exact proof fits the solver's budget
   of 25,000 positions, and the mean seconds per solver move.
2. Win rates: ``solver`` against ``random`` and against ``solver-depth-4``.
3. GNU Go: seconds per move by level, and level 1 against random (100-move cap).
"""

from __future__ import annotations

import time

import agentgym
from agentgym.envs.multiagent import go
from agentgym.envs.multiagent.connectfour_solver import (
    BUDGET,
    Position,
    SearchBudgetExceeded,
    Solver,
)
from agentgym.multiagent import play_game

GAMES = 6


def proof_coverage() -> None:
    env = agentgym.make_multi("multiagent/ConnectFour-v0")
    players = env.unwrapped.reference_players()
    bands: dict[int, list[bool]] = {}
    wins = {"random": 0.0, "solver-depth-4": 0.0}
    for opponent in wins:
        for game in range(GAMES):
            seats = ("player_0", "player_1") if game % 2 == 0 else ("player_1", "player_0")
            result = play_game(
                env,
                {seats[0]: players["solver"](), seats[1]: players[opponent]()},
                seed=game,
                task_id=f"dev/opening/{game}",
            )
            wins[opponent] += result.outcome[seats[0]] / GAMES
            columns = env.unwrapped.world.columns
            for ply in range(2, len(columns)):
                position = Position.from_columns(columns[:ply])
                if position.can_win_next():
                    continue
                try:
                    Solver(BUDGET).solve(position)
                    proved = True
                except SearchBudgetExceeded:
                    proved = False
                bands.setdefault(ply // 6 * 6, []).append(proved)
    for band, proved in sorted(bands.items()):
        share = sum(proved) / len(proved)
        print(
            f"connect four plies {band:2d}-{band + 5:2d}: proof fits {share:5.1%} of {len(proved)}"
        )
    for opponent, score in wins.items():
        print(f"connect four solver vs {opponent}: mean score {score:.2f} over {GAMES} games")
    start = time.perf_counter()
    players["solver"]().act(env_after(["4", "4", "3"]), "player_1")
    print(f"connect four solver move at ply 3: {time.perf_counter() - start:.2f} s")


def env_after(moves: list[str]) -> object:
    env = agentgym.make_multi("multiagent/ConnectFour-v0")
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    for move in moves:
        env.step(move)
    return env


def gnugo_speed() -> None:
    for level in go.LEVELS:
        env = agentgym.make_multi("multiagent/Go9x9-v0", max_moves=40)
        players = env.unwrapped.reference_players()
        engine, rand = players[f"gnugo-level-{level}"](), players["random"]()
        go._REMEMBERED.clear()
        start = time.perf_counter()
        result = play_game(env, {"player_0": engine, "player_1": rand}, seed=0)
        seconds = (time.perf_counter() - start) / ((len(result.moves) + 1) // 2)
        engine.close()
        print(f"gnugo level {level:2d}: {seconds:.3f} s a move (40-move game against random)")
    env = agentgym.make_multi("multiagent/Go9x9-v0", max_moves=100)
    players = env.unwrapped.reference_players()
    score = 0.0
    for game in range(4):
        engine, rand = players["gnugo-level-1"](), players["random"]()
        seats = ("player_0", "player_1") if game % 2 == 0 else ("player_1", "player_0")
        result = play_game(env, {seats[0]: engine, seats[1]: rand}, seed=game)
        engine.close()
        score += result.outcome[seats[0]] / 4
    print(f"gnugo level 1 vs random (100-move cap): mean score {score:.2f} over 4 games")


if __name__ == "__main__":
    proof_coverage()
    gnugo_speed()
