"""Evaluation throughput on Ray: local vs a real cluster of 1, 2 and 3 worker nodes.

``python tests/perf/bench_ray_eval.py [EPISODES]`` (default 96) plays games/Maze-v0 with the
oracle, 8 episodes at once, in this process (no Ray), then with ``--ray`` on a head and 1,
2, 3 worker nodes (``ray start`` processes of 2 logical CPUs each, 2 episodes per actor),
and prints episodes per second for each and the ratio to the local run. It re-runs itself
in a network namespace with only the loopback up (Ray must not bind the machine's address).
On one machine the nodes share its cores: the figure is Ray's overhead, not a speed-up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from ray_cluster import RAY_ENVIRON, LocalCluster

from agentgym.eval import evaluate

INSIDE = "AGENTGYM_BENCH_IN_NAMESPACE"


def timed(episodes: int, out: Path, **options: object) -> float:
    began = time.monotonic()
    result = evaluate(env="games/Maze-v0", agent="oracle", tasks=episodes // 2,
                      episodes_per_task=2, num_envs=8, out=out, **options)  # fmt: skip
    assert result.summary["overall"]["errored"] == 0
    return episodes / (time.monotonic() - began)


def main() -> None:
    episodes = int(sys.argv[1]) if len(sys.argv) > 1 else 96
    if not os.environ.get(INSIDE):
        command = [sys.executable, __file__, str(episodes)]
        quoted = " ".join(f"'{part}'" for part in command)
        environ = {**os.environ, **RAY_ENVIRON, INSIDE: "1"}
        namespace = ["unshare", "-n", "sh", "-c", f"ip link set lo up && exec {quoted}"]
        sys.exit(subprocess.run(namespace, env=environ).returncode)
    scratch = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    try:
        local = timed(episodes, scratch / "local")
        print(f"{episodes} Maze episodes, oracle, 8 at once")
        print(f"local (no Ray)   {local:7.1f} episodes/s")
        with LocalCluster(workers=0, cpus=2) as cluster:
            for nodes in (1, 2, 3):
                cluster.add_worker()
                rate = timed(episodes, scratch / f"ray{nodes}", ray=cluster.address,
                             episodes_per_actor=2)  # fmt: skip
                print(f"ray, {nodes} node(s)   {rate:7.1f} episodes/s  ({rate / local:.2f}x local)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
