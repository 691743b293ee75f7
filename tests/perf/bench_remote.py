"""Benchmark: a remote step against an in-process step of the same text env, on loopback.

Not a test (these machines are noisy): it reports figures measured in one process. An env
server (``agentgym.remote``) runs in a child process on 127.0.0.1, as ``agentgym serve-env``
would; the client is ``agentgym.remote.make``. The oracle's actions of one task (recorded
once) are replayed on a local env and on a remote one side by side, one step of each in turn
(which goes first alternates), so drift on the machine hits both alike. It reports the
per-step latency of each (p50, p99), the added latency of the remote step (remote minus
local, per step: p50, p99; the goal is at most 1 ms at p50) and the ratio of the totals.

    python tests/perf/bench_remote.py [--env ID] [--episodes N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import agentgym
from agentgym import remote


def oracle_actions(env_id: str, seed: int) -> list[object]:
    env = agentgym.make(env_id)
    env.reset(seed=seed)
    actions = []
    while (action := env.unwrapped.oracle_action()) is not None and len(actions) < 500:
        actions.append(action)
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    env.close()
    return actions


def start_server(env_id: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "agentgym.cli", "serve-env", env_id, "--port", "0"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if "listening on " not in line:
        child.kill()
        raise SystemExit(f"serve-env printed {line!r}")
    return child, line.rsplit(" ", 1)[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="games/Maze-v0", help="a text env id")
    parser.add_argument("--episodes", type=int, default=20, help="episodes replayed")
    args = parser.parse_args()
    child, url = start_server(args.env)
    try:
        local, far = agentgym.make(args.env), remote.make(url, args.env)
        local_times, remote_times = [], []
        clock = time.perf_counter
        for episode in range(args.episodes):
            actions = oracle_actions(args.env, episode)
            local.reset(seed=episode)
            far.reset(seed=episode)
            for index, action in enumerate(actions):
                pair = ((local, local_times), (far, remote_times))
                for env, times in pair if index % 2 else pair[::-1]:
                    started = clock()
                    env.step(action)
                    times.append(clock() - started)
        far.close()
        local.close()
    finally:
        child.terminate()
        child.wait(timeout=30)
    added = [(r - lo) * 1e3 for r, lo in zip(remote_times, local_times, strict=True)]
    print(f"{args.env}: {len(local_times)} steps over {args.episodes} episodes, loopback")
    for name, times in (("in-process", local_times), ("remote", remote_times)):
        ms = [t * 1e3 for t in times]
        print(
            f"  {name:10} step  p50 {percentile(ms, 0.5):.3f} ms  p99 {percentile(ms, 0.99):.3f} ms"
        )
    p50, p99 = statistics.median(added), percentile(added, 0.99)
    print(f"  added latency    p50 {p50:.3f} ms  p99 {p99:.3f} ms")
    print(f"  remote/in-process time ratio {sum(remote_times) / sum(local_times):.1f}")


if __name__ == "__main__":
    main()
