"""Benchmark: re-scoring by replay against the evaluation that made the episodes.

Not a test (these machines are noisy): for each family it runs a small benchmark with the
oracle agent (``agentgym.eval.run.evaluate``), packs the run into a bundle, and re-scores it
(``agentgym.leaderboard.rescore``) in the same process, and prints both times and their
ratio. The oracle costs next to nothing to ask, so the ratio compares the env work of an
evaluation (make, reset, steps, verifiers) with the replay's (the same, plus comparing every
observation and asking the oracle where the actions agree); with a model agent the
evaluation would be far slower and the replay the same.

    python tests/perf/bench_rescore.py [--family games reasoning web] [--workers 4]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from agentgym.eval.plan import Benchmark, BenchmarkEnv
from agentgym.eval.run import evaluate
from agentgym.leaderboard.bundle import pack_bundle, read_bundle
from agentgym.leaderboard.rescore import rescore
from agentgym.leaderboard.submission import SubmissionInfo

FAMILIES = {
    "games": ("games/Maze-v0", "games/Sokoban-v0", "games/Wordle-v0", "games/Sudoku-v0"),
    "reasoning": ("reasoning/Math-v1", "reasoning/ToolUse-v1", "reasoning/SearchQA-v0"),
    "web": (
        "web/Shop-v1",
        "web/Forum-v1",
        "miniwob/book_flight-v0",
        "miniwob/ascending_numbers-v1",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", nargs="+", default=list(FAMILIES))
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--workers", type=int, default=4, help="episodes at once, both ways")
    args = parser.parse_args()
    print("family     episodes  evaluation s  re-score s  ratio  all replayed")
    for family in args.family:
        envs = tuple(BenchmarkEnv(env, tasks=args.tasks) for env in FAMILIES[family])
        benchmark = Benchmark(f"bench-{family}", envs)
        out = Path(tempfile.mkdtemp(prefix="bench-rescore-")) / "run"
        started = time.perf_counter()
        evaluate(benchmark, "oracle", out, num_envs=args.workers)
        evaluated = time.perf_counter() - started
        bundle = read_bundle(pack_bundle(out, SubmissionInfo(agent="oracle")).read_bytes())
        started = time.perf_counter()
        result = rescore(bundle, benchmark, workers=args.workers, max_uncounted=1.0)
        rescored = time.perf_counter() - started
        replayed = sum(e.counted for e in result.episodes)
        print(
            f"{family:<10} {len(result.episodes):>8}  {evaluated:>12.2f}  {rescored:>10.2f}  "
            f"{rescored / evaluated:>5.2f}  {replayed}"
        )
        for episode in result.episodes:
            if episode.reason:
                print(f"    {episode.episode_id}: {episode.outcome}, {episode.reason}")


if __name__ == "__main__":
    main()
