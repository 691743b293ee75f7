"""Benchmark: the language games' reference players against each other.

Not a test (the suite plays fewer games). For ``multiagent/Negotiation-v2`` and
``multiagent/Taboo-v0`` it plays every ordered pair of reference players (the first named
in the first seat) over ``--games`` seeds and prints each seat's mean score; for the
negotiation also how often a deal is struck, each bot's mean over both seats and all
opponents, and what always accepting earns as player_1. Taboo plays the dev words, cycling.
The figures in ``docs/envs/multiagent.md`` come from this script.

    python tests/perf/bench_language_games.py [--games 100]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import agentgym
from agentgym.multiagent import play_game


def round_robin(env_id: str, games: int, tasks: list[str] | None = None) -> None:
    env = agentgym.make_multi(env_id)
    players = env.unwrapped.reference_players()
    first, second = env.possible_agents
    overall: dict[str, list[float]] = defaultdict(list)
    started = time.perf_counter()
    print(f"{env_id}: {first} vs {second}, mean score per seat over {games} games")
    for a in players:
        for b in players:
            scores, deals = ([], []), 0
            for seed in range(games):
                task = tasks[seed % len(tasks)] if tasks else None
                result = play_game(
                    env, {first: players[a](), second: players[b]()}, seed, task_id=task
                )
                scores[0].append(result.outcome[first])
                scores[1].append(result.outcome[second])
                deals += getattr(env.unwrapped.world, "deal", None) is not None
                overall[a].append(result.outcome[first])
                overall[b].append(result.outcome[second])
            mean = [sum(s) / games for s in scores]
            dealt = f"  deals {deals / games:.0%}" if env_id.endswith("Negotiation-v2") else ""
            print(f"  {a:>9} vs {b:<9} {mean[0]:.2f}  {mean[1]:.2f}{dealt}")
    print("  mean over both seats:", {k: round(sum(v) / len(v), 3) for k, v in overall.items()})
    print(f"  {time.perf_counter() - started:.1f} s")


def always_accept(games: int) -> None:
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    players = env.unwrapped.reference_players()
    for bot in ("greedy", "fair", "adaptive"):
        seats = {"player_0": players[bot](), "player_1": lambda _env, _agent: "[Accept]"}
        results = [play_game(env, seats, seed) for seed in range(games)]
        mean = sum(r.outcome["player_1"] for r in results) / games
        passed = sum(r.verdicts["player_1"].passed for r in results) / games
        print(f"  always [Accept] as player_1 vs {bot}: {mean:.2f}, passed {passed:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    games = parser.parse_args().games
    round_robin("multiagent/Negotiation-v2", games)
    always_accept(games)
    taboo = agentgym.make_multi("multiagent/Taboo-v0")
    round_robin("multiagent/Taboo-v0", games, list(taboo.unwrapped.tasks.ids("dev")))


if __name__ == "__main__":
    main()
