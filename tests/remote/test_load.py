"""Load on one env server (issue 32): 256 sessions at once, and 10,000 sessions opened and
closed with no growth in the server's fds, threads or memory. (1,000 connections dropped
without a close: ``test_remote.py``.)"""

from __future__ import annotations

import asyncio

import pytest
from remote import load
from remote.servers import subprocess_server

MAZE = "games/Maze-v0"


@pytest.mark.slow
def test_256_sessions_at_once_and_10000_opened_and_closed_without_growth():
    with subprocess_server(MAZE, "--capacity", "300") as (child, url):
        latencies = asyncio.run(load.concurrent_sessions(url, MAZE, 256, 10, "up"))
        assert len(latencies) == 256 * 10  # every step of every session answered
        asyncio.run(load.open_and_close(url, MAZE, 1_000))  # warm: pools, caches, arenas
        before = load.resources(child.pid)
        asyncio.run(load.open_and_close(url, MAZE, 10_000))
        after = load.resources(child.pid)
    assert after["fds"] <= before["fds"] + 2, (before, after)
    assert after["threads"] <= before["threads"] + 4, (before, after)  # the pool's spares
    assert after["rss_kib"] <= before["rss_kib"] + 8 * 1024, (before, after)
