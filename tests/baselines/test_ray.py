"""Ray rollout workers: episodes come back from other processes, and a worker killed
mid-run costs only its share of one iteration (dropped and counted), never the run.

Ray runs in a network namespace with only the loopback up (``tests/ray_cluster.py``): by
default it binds the machine's address, which tests must not use.
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
def test_a_killed_rollout_worker_drops_its_episodes_and_training_goes_on(tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, str(HERE / "ray_training.py"), str(out)]
    environ = {**os.environ, **RAY_ENVIRON}
    done = subprocess.run(
        in_a_private_network(command), capture_output=True, text=True, env=environ, timeout=500
    )
    assert done.returncode == 0, done.stderr[-4000:]
    dropped_lines = [line for line in done.stdout.splitlines() if "dropped" in line]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(result["killed"]) == 1
    rows = result["rows"]
    assert [row["iteration"] for row in rows] == [0, 1, 2]
    dropped = [row["rollout/dropped_episodes"] for row in rows]
    episodes = [row["rollout/episodes"] for row in rows]
    # 2 groups of 4, one group per worker: the killed worker's group is lost once.
    assert dropped == [0, 4, 0], (dropped, dropped_lines)
    assert episodes == [8, 4, 8], episodes
