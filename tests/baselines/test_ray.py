"""Ray rollout workers: episodes come back from other processes, and a worker killed
mid-run costs only its share of one iteration (dropped and counted), never the run.

Ray runs in a network namespace with only the loopback up (``unshare -n``): by default it
binds the machine's address, which tests must not use.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

HERE = Path(__file__).parent


def _in_a_private_network(command: list[str]) -> list[str]:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip (util-linux, iproute2) for a loopback-only network")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n is not permitted here: {probe.stderr.decode().strip()}")
    quoted = " ".join(f"'{part}'" for part in command)
    return ["unshare", "-n", "sh", "-c", f"ip link set lo up && exec {quoted}"]


@pytest.mark.slow
def test_a_killed_rollout_worker_drops_its_episodes_and_training_goes_on(tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, str(HERE / "ray_training.py"), str(out)]
    environ = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(
        _in_a_private_network(command), capture_output=True, text=True, env=environ, timeout=500
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
