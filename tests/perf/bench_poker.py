"""Benchmark: the poker games' reference players, their strength and their cost.

Not a test (too long for the suite). It measures:

* **Kuhn CFR+ convergence**: the average policy's exploitability after 10, 50, 200 and 1,000
  iterations of OpenSpiel's Python ``CFRPlusSolver`` (the env uses 200), with the seconds;
* **the shipped Leduc table's exploitability** (``data/leduc_cfr.json``);
* **the strongest player against random in play**, duplicate (every deal from both seats):
  chips per hand ± one standard error over ``--deals`` train deals per game, and hands per
  second through the env.

    python tests/perf/bench_poker.py [--deals 2000] [--holdem-deals 300]
"""

from __future__ import annotations

import argparse
import math
import time

import agentgym
from agentgym.envs.multiagent.poker import (
    KUHN,
    LEDUC,
    cfr_table,
    duplicate_chips,
    exploitability_of,
    solve_cfr,
)


def kuhn_convergence() -> None:
    for iterations in (10, 50, 200, 1000):
        start = time.perf_counter()
        table = solve_cfr(KUHN, iterations)
        seconds = time.perf_counter() - start
        print(
            f"Kuhn CFR+ {iterations:>5} iterations: exploitability "
            f"{exploitability_of(KUHN, table):.6f} chips/hand ({seconds:.2f} s)"
        )


def versus_random(env_id: str, strongest: str, deals: int) -> None:
    env = agentgym.make_multi(env_id)
    made = env.unwrapped.reference_players()
    start = time.perf_counter()
    chips = duplicate_chips(
        env, [made[strongest](), made["random"]()], [f"train/hand/{i}" for i in range(deals)]
    )
    seconds = time.perf_counter() - start
    mean = sum(chips) / len(chips)
    error = math.sqrt(sum((c - mean) ** 2 for c in chips) / (len(chips) - 1) / len(chips))
    print(
        f"{env_id}: {strongest} vs random {mean:+.3f} ± {error:.3f} chips/hand over "
        f"{len(chips)} hands ({len(chips) / seconds:.0f} hands/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=2000, help="deals for Kuhn and Leduc")
    parser.add_argument("--holdem-deals", type=int, default=300, help="deals for hold'em")
    args = parser.parse_args()
    kuhn_convergence()
    print(f"Leduc shipped table: exploitability {exploitability_of(LEDUC, cfr_table(LEDUC)):.6f}")
    versus_random("multiagent/KuhnPoker-v0", "cfr", args.deals)
    versus_random("multiagent/LeducHoldem-v0", "cfr", args.deals)
    versus_random("multiagent/LimitHoldem-v0", "equity", args.holdem_deals)


if __name__ == "__main__":
    main()
