"""A real server started as a child process for a test: it is up when its health URL answers,
and it is stopped (terminated, then killed) however the test ends."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator

import httpx


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def server_process(
    command: list[str], health_url: str, *, timeout: float = 180.0
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` until the block ends; wait until ``health_url`` answers 200 first."""
    log = open(os.devnull, "wb")  # noqa: SIM115 (closed below)
    server = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(health_url, timeout=2).status_code == 200:
                    break
            assert server.poll() is None, f"{command[:2]} exited with {server.returncode}"
            assert time.monotonic() < deadline, f"{command[:2]} did not come up in {timeout} s"
            time.sleep(0.5)
        yield server
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
