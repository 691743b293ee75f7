"""Ray for tests: a loopback-only network, and a real multi-node cluster on this machine.

Ray binds the machine's address by default, which tests must not use: a Ray test runs its
script inside a network namespace with only the loopback up (:func:`in_a_private_network`).
Inside it, :class:`LocalCluster` starts a head and worker nodes as separate ``ray start``
processes (each its own process group, so one node can be killed whole: its raylet and its
workers), and stops them by their process groups, never with ``ray stop`` (which would stop
every Ray process on the machine, other tests' too).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD_PORT = 6379
"""The head's port: free in a private network namespace, whatever runs outside it."""

RAY_ENVIRON = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
"""Ray's settings in tests: no usage report, and no token (Ray 2.5x turns token auth on
for ``ray start``; a loopback-only cluster needs none, and a driver would need the file)."""

FAST_HEALTH_CHECKS = {"health_check_period_ms": 500, "health_check_failure_threshold": 3}
"""A lost node is declared dead in about 2 s instead of Ray's default ~15 s."""


def in_a_private_network(command: list[str]) -> list[str]:
    """``command`` run in a new network namespace with only the loopback up (pytest skips
    where ``unshare -n`` is missing or not permitted)."""
    import pytest

    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip (util-linux, iproute2) for a loopback-only network")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n is not permitted here: {probe.stderr.decode().strip()}")
    quoted = " ".join(f"'{part}'" for part in command)
    return ["unshare", "-n", "sh", "-c", f"ip link set lo up && exec {quoted}"]


def _ray_command() -> str:
    return str(Path(sys.executable).with_name("ray"))


class LocalCluster:
    """A head (no CPUs: work goes to the workers) and ``workers`` worker nodes of
    ``cpus`` CPUs each, every node a ``ray start --block`` process in its own process group.
    Use as a context manager; :meth:`kill_worker` kills a worker node whole."""

    def __init__(self, workers: int = 2, cpus: int = 2) -> None:
        self.workers_wanted, self.cpus = workers, cpus
        # Short, and this cluster's own: Ray's sockets live under it (a path's limit is 107).
        self.temp_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
        self.address = f"127.0.0.1:{HEAD_PORT}"
        self.head: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> LocalCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _node(self, *args: str) -> subprocess.Popen[bytes]:
        environ = {**os.environ, **RAY_ENVIRON}
        command = [_ray_command(), "start", "--block", "--disable-usage-stats", *args]
        return subprocess.Popen(
            command, env=environ, start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def start(self) -> None:
        head = ["--head", f"--port={HEAD_PORT}", "--num-cpus=0", "--include-dashboard=false",
                f"--system-config={json.dumps(FAST_HEALTH_CHECKS)}"]  # fmt: skip
        head.append(f"--temp-dir={self.temp_dir}")
        self.head = self._node(*head)
        self._wait_for_nodes(1)
        for _ in range(self.workers_wanted):  # one at a time: two joining at once can hang
            self.add_worker()

    def add_worker(self) -> None:
        """Start one more worker node and wait until it has joined."""
        self.workers.append(self._node(f"--address={self.address}", f"--num-cpus={self.cpus}"))
        self._wait_for_nodes(1 + len(self.workers))

    def _wait_for_nodes(self, count: int, deadline_s: float = 120.0) -> None:
        """Until ``count`` nodes are alive (asked in a child: this process stays off Ray)."""
        probe = (
            f"import ray; ray.init(address={self.address!r}, log_to_driver=False, "
            "configure_logging=False); print(sum(n['Alive'] for n in ray.nodes()))"
        )
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            assert self.head is not None and self.head.poll() is None, "the Ray head exited"
            done = subprocess.run(
                [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                env={**os.environ, **RAY_ENVIRON},
            )  # fmt: skip
            lines = done.stdout.strip().splitlines()
            if done.returncode == 0 and lines and int(lines[-1]) >= count:
                return
            time.sleep(0.5)
        raise AssertionError(f"the Ray cluster did not reach {count} nodes in {deadline_s} s")

    def kill_worker(self, number: int) -> None:
        """SIGKILL worker node ``number``'s process group: its raylet and its workers."""
        _kill_group(self.workers[number])

    def stop(self) -> None:
        """Kill every node's process group (workers first), and reap them."""
        for node in [*self.workers, *([self.head] if self.head else [])]:
            _kill_group(node)
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.wait(timeout=30)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _kill_group(node: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(node.pid, signal.SIGKILL)
