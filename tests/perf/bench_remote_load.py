"""Benchmark: one env server under load, on loopback.

Not a test (these machines are noisy): figures measured in one run against one
``agentgym serve-env`` child process. It reports:

* a step's latency with one session alone, then with 256 sessions stepping at once (p50,
  p99), and the steps per second of the 256 (the ratio to the lone session's rate is the
  server's concurrency gain);
* 10,000 sessions opened, reset and closed: the time, and the server's fds, threads and
  resident memory before and after (after 1,000 to warm up);
* 1,000 connections dropped without a close: the time until the server is at its resting
  fds and threads again (their leases lapse: ``--lease``).

    python tests/perf/bench_remote_load.py [--env ID] [--sessions 256] [--cycles 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: remote.load, servers

from remote import load
from remote.servers import subprocess_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="games/Maze-v0", help="a text env id")
    parser.add_argument("--sessions", type=int, default=256, help="sessions at once")
    parser.add_argument("--cycles", type=int, default=10_000, help="sessions opened and closed")
    parser.add_argument("--drops", type=int, default=1_000, help="connections dropped")
    args = parser.parse_args()
    lease = 3.0
    capacity = str(max(args.sessions, args.drops) + 8)
    with subprocess_server(args.env, "--capacity", capacity, "--lease", str(lease)) as (
        child,
        url,
    ):
        alone = asyncio.run(load.concurrent_sessions(url, args.env, 1, 200, "up"))
        started = time.perf_counter()
        many = asyncio.run(load.concurrent_sessions(url, args.env, args.sessions, 10, "up"))
        wall = time.perf_counter() - started
        rate_alone = len(alone) / sum(alone)
        print(
            f"one session: step p50 {1e3 * load.percentile(alone, 0.5):.2f} ms, p99 "
            f"{1e3 * load.percentile(alone, 0.99):.2f} ms ({rate_alone:.0f} steps/s)"
        )
        print(
            f"{args.sessions} sessions at once: step p50 {1e3 * load.percentile(many, 0.5):.1f}"
            f" ms, p99 {1e3 * load.percentile(many, 0.99):.1f} ms; {len(many) / wall:.0f} "
            f"steps/s ({len(many) / wall / rate_alone:.2f}x one session's rate)"
        )

        asyncio.run(load.open_and_close(url, args.env, 1_000))
        before = load.resources(child.pid)
        started = time.perf_counter()
        asyncio.run(load.open_and_close(url, args.env, args.cycles))
        took = time.perf_counter() - started
        after = load.resources(child.pid)
        print(
            f"{args.cycles} sessions opened, reset and closed in {took:.1f} s "
            f"({args.cycles / took:.0f}/s); server before {before}, after {after}"
        )

        started = time.perf_counter()
        asyncio.run(load.drop_connections(url, args.env, args.drops))
        dropped = load.resources(child.pid)
        while load.resources(child.pid)["threads"] > after["threads"] + 4:
            time.sleep(0.1)
        back = time.perf_counter() - started
        print(
            f"{args.drops} connections dropped without a close: server at {dropped}; resting "
            f"again after {back:.1f} s (lease {lease:g} s): {load.resources(child.pid)}"
        )


if __name__ == "__main__":
    main()
