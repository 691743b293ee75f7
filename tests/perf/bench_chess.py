"""Benchmark: chess's Stockfish players, their strength against random and their cost.

Not a test (too long for the suite). It measures:

* **Stockfish at its top level against random**: ``--games`` games of ``stockfish-skill-20``
  against the ``random`` reference player from the standard start, colours alternating, each
  with its own seed; prints the engine's wins, draws and losses (the issue asks >= 95% wins;
  the suite plays 4 of these games);
* **every skill level against random** (``--skill-games`` each), to show the levels order;
* **an engine move**, as a ratio: the oracle's move through the env (``oracle_action``: SAN
  out, ``ucinewgame`` first) vs ``chess.engine`` called directly on a kept process with the
  same node limit, medians over ``--rounds`` alternating rounds.

    python tests/perf/bench_chess.py [--games 100] [--skill-games 10] [--rounds 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

import chess
import chess.engine

import agentgym
from agentgym.envs.multiagent.chess import ORACLE_NODES
from agentgym.envs.multiagent.engines import find_engine
from agentgym.multiagent import play_game


def versus_random(player: str, games: int) -> Counter[str]:
    """``player``'s wins, draws and losses against random over ``games`` games."""
    tally: Counter[str] = Counter()
    for game in range(games):
        env = agentgym.make_multi("multiagent/Chess-v0")
        players = env.unwrapped.reference_players()
        seat = ("player_0", "player_1")[game % 2]
        seats = {a: players["random"]() for a in env.possible_agents}
        seats[seat] = players[player]()
        result = play_game(env, seats, seed=game, task_id="test/standard")
        tally[{1.0: "won", 0.5: "drew", 0.0: "lost"}[result.outcome[seat]]] += 1
        tally["plies"] += len(result.moves)
        for opened in seats.values():
            opened.close()
        env.close()
    return tally


def engine_move(rounds: int) -> tuple[float, float]:
    """Median seconds of an oracle move through the env and of the engine called directly."""
    env = agentgym.make_multi("multiagent/Chess-v0")
    env.reset(seed=0, options={"task_id": "train/italian"})
    board = env.unwrapped.world.board
    direct = chess.engine.SimpleEngine.popen_uci(find_engine("stockfish", "stockfish"))
    direct.configure({"Threads": 1, "Hash": 1})
    env.unwrapped.oracle_action(env.agent_selection)  # start the env's engine
    ours, theirs = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        env.unwrapped.oracle_action(env.agent_selection)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        direct.play(board, chess.engine.Limit(nodes=ORACLE_NODES))
        theirs.append(time.perf_counter() - started)
    direct.quit()
    env.close()
    return statistics.median(ours), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--skill-games", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    for player, games in [("stockfish-skill-20", args.games)] + [
        (f"stockfish-skill-{n}", args.skill_games) for n in (0, 5, 10)
    ]:
        started = time.perf_counter()
        tally = versus_random(player, games)
        seconds = time.perf_counter() - started
        print(
            f"{player:<20} vs random: {tally['won']}/{games} won, {tally['drew']} drawn, "
            f"{tally['lost']} lost; {tally['plies'] / games:.0f} plies a game, "
            f"{seconds / games:.2f} s a game"
        )
    ours, theirs = engine_move(args.rounds)
    print(
        f"an oracle move ({ORACLE_NODES} nodes): env {ours * 1e3:.1f} ms, chess.engine "
        f"directly {theirs * 1e3:.1f} ms, ratio {ours / theirs:.2f}x"
    )


if __name__ == "__main__":
    main()
