"""Evaluate on a real 3-node Ray cluster and SIGKILL a worker node mid-run.

Run by ``test_ray_eval.py`` inside a network namespace with only the loopback up (Ray must
not bind the machine's address in tests): ``python ray_eval.py OUT_DIR``. Plays the same
suite locally first (no Ray), then on the cluster (a head and two worker nodes, each a
``ray start`` process), kills worker node 0 once a few episodes are in the ledger, and prints
JSON on its last line: the ledger writes per episode id, the two runs' records without
their timing fields, and the seconds each run took.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))

import ray
import slow_oracle
from ray_cluster import LocalCluster
from slow_oracle import SlowOracle, without_timing

from agentgym.eval import evaluate
from agentgym.ledger import EpisodeWriter

SUITE = {"env": "games/Maze-v0", "tasks": 12, "episodes_per_task": 2, "num_envs": 8}
"""24 episodes, 8 at once: with the oracle's delay a run takes several seconds."""

# The actors cannot import this folder: the agent travels by value.
ray.cloudpickle.register_pickle_by_value(slow_oracle)


def count_writes() -> Counter[str]:
    """Every record the ledger is given, by episode id (the final rewrite in plan order
    would hide a duplicate)."""
    writes: Counter[str] = Counter()
    write = EpisodeWriter.write

    def counted(self: EpisodeWriter, record: Any) -> None:
        writes[record.episode_id] += 1
        write(self, record)

    EpisodeWriter.write = counted  # type: ignore[method-assign]
    return writes


def kill_when_written(cluster: LocalCluster, ledger: Path, after: int, killed: list[float]) -> None:
    while not ledger.exists() or len(ledger.read_text().splitlines()) < after:
        time.sleep(0.02)
    cluster.kill_worker(0)
    killed.append(time.monotonic())


def main() -> None:
    out = Path(sys.argv[1])
    began = time.monotonic()
    local = evaluate(agent=SlowOracle, out=out / "local", **SUITE)
    local_s = time.monotonic() - began
    writes = count_writes()
    killed: list[float] = []
    with LocalCluster(workers=2, cpus=2) as cluster:
        killer = threading.Thread(
            target=kill_when_written,
            args=(cluster, out / "cluster" / "episodes.jsonl", 6, killed),
            daemon=True,
        )
        killer.start()
        began = time.monotonic()
        remote = evaluate(
            agent=SlowOracle, out=out / "cluster", ray=cluster.address,
            episodes_per_actor=2, **SUITE,
        )  # fmt: skip
        ray_s = time.monotonic() - began
    result = {
        "killed": bool(killed),
        "writes": dict(writes),
        "planned": [r.episode_id for r in local.records],
        "local": [without_timing(json.loads(r.to_line())) for r in local.records],
        "cluster": [without_timing(json.loads(r.to_line())) for r in remote.records],
        "manifest_ray": json.loads((out / "cluster" / "manifest.json").read_text())["ray"],
        "seconds": {"local": round(local_s, 2), "ray": round(ray_s, 2)},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
