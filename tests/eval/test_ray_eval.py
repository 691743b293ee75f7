"""Evaluation on a real multi-node Ray cluster (a head and two worker nodes, each its own
``ray start`` process): a worker node killed mid-run costs no episode and duplicates none,
and the ledger equals an uninterrupted local run's but for timing.

Ray runs in a network namespace with only the loopback up (``tests/ray_cluster.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ray_cluster import RAY_ENVIRON, in_a_private_network

pytest.importorskip("ray")

HERE = Path(__file__).parent


@pytest.mark.slow
def test_a_killed_worker_node_loses_no_episode_and_duplicates_none(tmp_path):
    command = [sys.executable, str(HERE / "ray_eval.py"), str(tmp_path / "runs")]
    done = subprocess.run(
        in_a_private_network(command),
        capture_output=True,
        text=True,
        env={**os.environ, **RAY_ENVIRON},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["killed"], "the worker node was not killed mid-run"
    died = [line for line in done.stderr.splitlines() if "an actor died" in line]
    assert died, "no actor died with the node: the kill did not land"
    # Every planned episode was handed to the ledger exactly once...
    assert sorted(result["writes"]) == sorted(result["planned"])
    assert set(result["writes"].values()) == {1}, result["writes"]
    # ...and the ledger is the local run's, timing aside (the re-queued ones replayed whole).
    assert [r["status"] for r in result["cluster"]] == ["ok"] * len(result["planned"])
    assert result["cluster"] == result["local"]
    assert result["manifest_ray"] == "127.0.0.1:6379"
