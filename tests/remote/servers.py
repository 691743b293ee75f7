"""Env servers for the remote tests: in a thread of the test process (fast, reachable for
inspection) or as an ``agentgym serve-env`` subprocess (to kill or signal); both on 127.0.0.1
and an ephemeral port."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn

from agentgym.remote.server import ServerOptions, create_app

START_DEADLINE = 60.0
"""Seconds a server may take to start on a loaded 2-core machine."""


@dataclass
class Running:
    """A server running in this process."""

    url: str
    app: Any

    @property
    def table(self) -> Any:
        return self.app.state.server.table


@contextlib.contextmanager
def running(**options: Any) -> Iterator[Running]:
    """An env server in a thread for the block (``options``: :class:`ServerOptions`)."""
    app = create_app(ServerOptions(**options))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_DEADLINE
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the env server did not start"
        time.sleep(0.01)
    try:
        yield Running(f"http://127.0.0.1:{sock.getsockname()[1]}", app)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextlib.contextmanager
def subprocess_server(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``agentgym serve-env --port 0 ARGS`` as a child process, and its URL."""
    command = [sys.executable, "-m", "agentgym.cli", "serve-env", "--port", "0", *args]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = _first_line(child)
        assert "listening on " in line, f"serve-env printed {line!r}"
        url = line.rsplit(" ", 1)[1]
        _wait_healthy(url)
        yield child, url
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert child.stdout is not None
        child.stdout.close()


def _first_line(child: subprocess.Popen[str]) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(child.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(START_DEADLINE)
    assert box, "serve-env printed no URL in time"
    return box[0].strip()


def _wait_healthy(url: str) -> None:
    import httpx

    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        time.sleep(0.05)
    raise AssertionError(f"{url}/health never answered")
