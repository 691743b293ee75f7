"""Benchmark: generating TextWorld games with a generator child kept for the next game, against
a child per game (how games were made before ``textworld_games.py``'s pool).

Not a test. Each round generates the same games, in a fresh cache each time (this machine's
parsed grammars copied in, as any cache has after its first game), once with the pool's child
kept and once with every child stopped after its game; the order alternates by round, and the
figure is the ratio of the two totals (the figures in ``docs/performance.md``, "Conformance
checker cost").

    python tests/perf/bench_textworld_games.py [--rounds 2] [--games 6]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from agentgym.envs.games import textworld_games
from agentgym.envs.games.textworld import TextWorldCoinCollectorEnv, TextWorldCookingEnv


def games(count: int) -> list[tuple[str, dict, int]]:
    """``count`` games: CoinCollector and Cooking in turn, every level, seeds 0, 1, ..."""
    kinds = [
        ("tw-coin_collector", TextWorldCoinCollectorEnv.settings_for("train", level))
        for level in ("easy", "medium", "hard")
    ] + [
        ("tw-cooking", TextWorldCookingEnv.settings_for("train", level))
        for level in ("easy", "medium", "hard")
    ]
    return [(*kinds[index % len(kinds)], index) for index in range(count)]


def generate(wanted: list[tuple[str, dict, int]], keep_child: bool, grammars: Path) -> float:
    """Seconds to generate ``wanted`` in a fresh cache."""
    folder = tempfile.mkdtemp(prefix="bench-textworld-")
    os.environ["AGENTGYM_CACHE"] = folder
    try:
        if grammars.is_file():
            textworld_games.cache_dir().mkdir(parents=True)
            shutil.copy(grammars, textworld_games._grammar_cache())
        started = time.perf_counter()
        for challenge, settings, seed in wanted:
            textworld_games.ensure_game(challenge, settings, seed)
            if not keep_child:
                stop_children()
        return time.perf_counter() - started
    finally:
        stop_children()
        shutil.rmtree(folder, ignore_errors=True)


def stop_children() -> None:
    pool = textworld_games._POOL
    for child in pool._idle:
        child.close()
    pool._idle.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--games", type=int, default=6, help="games a round (6)")
    args = parser.parse_args()
    grammars = textworld_games._grammar_cache()
    if not grammars.is_file():  # make this machine's grammar cache with a first game
        textworld_games.ensure_game(*games(1)[0])
        stop_children()
    wanted = games(args.games)
    totals = {True: 0.0, False: 0.0}
    for round_ in range(args.rounds):
        for keep in (True, False) if round_ % 2 == 0 else (False, True):
            seconds = generate(wanted, keep, grammars)
            totals[keep] += seconds
            name = "one child kept" if keep else "a child per game"
            print(f"round {round_ + 1} {name:<16} {len(wanted)} games in {seconds:6.2f} s")
    print(
        f"{args.games} games a round, {args.rounds} rounds: a child kept "
        f"{totals[True]:.1f} s, a child per game {totals[False]:.1f} s: "
        f"{totals[False] / totals[True]:.2f}x faster"
    )


if __name__ == "__main__":
    main()
