"""Benchmark: arena matches per minute with M matches at once vs one at a time, in one run.

Not a test. The reference players are CPU-bound (a solver, a random mover): they gain nothing
from running together on a shared CPU. What playing matches at once buys is overlap of model
latency, so the player measured is a model seat, and the model is a test double: the
continuously batching :class:`~bench_eval.SimulatedBatchedModel` of ``bench_eval.py`` (a reply
takes ``latency`` seconds whatever the batch size, as with vLLM). It waits on the model for
every move and then plays the first legal move; the arena is that player against tic-tac-toe's
solver and random, round-robin, ``games`` per pair. Reported: matches per minute with
``--num-matches`` at once and with one at a time, and their ratio (the same schedule, the
same games: the moves do not depend on timing).

    python tests/perf/bench_arena.py [--games 16] [--num-matches 32] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))  # bench_eval.py beside this file
from bench_eval import SimulatedBatchedModel

from agentgym.agents import Agent
from agentgym.arena.run import Arena, run_arena_async

ENV = "multiagent/TicTacToe-v0"


class BatchedModelPlayer(Agent):
    """Waits for the simulated model, then plays the first legal move."""

    def __init__(self, model: SimulatedBatchedModel) -> None:
        self.model = model

    async def act(self, observation: Any, info: dict[str, Any]) -> str:
        await self.model.ask()
        return str(info["admissible_actions"][0])


async def matches_per_minute(games: int, num_matches: int, latency: float) -> tuple[float, int]:
    model = SimulatedBatchedModel(latency)
    arena = Arena(ENV, ("model", "solver", "random"), games)
    try:
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            result = await run_arena_async(
                arena,
                out,
                num_matches=num_matches,
                agents={"model": lambda: BatchedModelPlayer(model)},
            )
            seconds = time.perf_counter() - started
    finally:
        model.stop()
    assert not result.errored, result.errored
    return 60 * len(result.records) / seconds, len(result.records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=16, help="games per pair")
    parser.add_argument("--num-matches", type=int, default=32, help="matches at once")
    parser.add_argument("--latency", type=float, default=0.05, help="model seconds per reply")
    args = parser.parse_args()
    many, played = asyncio.run(matches_per_minute(args.games, args.num_matches, args.latency))
    one, _ = asyncio.run(matches_per_minute(args.games, 1, args.latency))
    print(
        f"arena ({ENV}, a model seat of {args.latency * 1000:.0f} ms a reply against the "
        f"solver and random, {played} matches): {many:.0f} matches/min with "
        f"{args.num_matches} at once, {one:.0f} one at a time: ratio {many / one:.1f}x"
    )


if __name__ == "__main__":
    main()
