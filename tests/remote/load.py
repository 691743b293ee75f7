"""Load on an env server, for its load test and benchmark: many sessions at once, many opened
and closed, many connections dropped without a close; and the server process's resources."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


async def _ask(socket: ClientConnection, kind: str, data: dict[str, Any], seq: int | None = None):
    message: dict[str, Any] = {"type": kind, "data": data}
    if seq is not None:
        message["seq"] = seq
    await socket.send(json.dumps(message))
    reply = json.loads(await socket.recv())
    if reply["type"] == "error":
        raise RuntimeError(f"{kind}: {reply['data']}")
    return reply["data"]


async def _session(url: str, env_id: str) -> ClientConnection:
    socket = await connect(ws_url(url), ping_interval=None, compression=None, max_size=None)
    await _ask(socket, "open", {"env_id": env_id, "kwargs": {}})
    return socket


async def concurrent_sessions(
    url: str, env_id: str, sessions: int, steps: int, action: Any
) -> list[float]:
    """``sessions`` sessions open at once, each reset and stepped ``steps`` times, all at
    the same time; the latency of every step (seconds). Any error raises."""
    sockets = await asyncio.gather(*(_session(url, env_id) for _ in range(sessions)))
    latencies: list[float] = []

    async def play(socket: ClientConnection, seed: int) -> None:
        await _ask(socket, "reset", {"seed": seed}, 1)
        for seq in range(2, steps + 2):
            started = time.perf_counter()
            data = await _ask(socket, "step", {"value": action}, seq)
            latencies.append(time.perf_counter() - started)
            if data["done"]:
                await _ask(socket, "reset", {"seed": seed}, seq + 1)
                break

    try:
        await asyncio.gather(*(play(s, i) for i, s in enumerate(sockets)))
    finally:
        for socket in sockets:
            await socket.send(json.dumps({"type": "close"}))
            await socket.close()
    return latencies


async def open_and_close(url: str, env_id: str, count: int, concurrency: int = 8) -> None:
    """``count`` sessions, each opened, reset once and closed cleanly, ``concurrency`` at a
    time."""

    async def worker(share: int) -> None:
        for _ in range(share):
            socket = await _session(url, env_id)
            await _ask(socket, "reset", {"seed": 0}, 1)
            await socket.send(json.dumps({"type": "close"}))
            await socket.close()

    shares = [count // concurrency + (i < count % concurrency) for i in range(concurrency)]
    await asyncio.gather(*(worker(n) for n in shares))


async def drop_connections(url: str, env_id: str, count: int, concurrency: int = 32) -> None:
    """``count`` sessions opened, then their connections cut without a close (the TCP
    connection aborted, as a killed client's or a lost network's would be)."""

    async def worker(share: int) -> None:
        for _ in range(share):
            socket = await _session(url, env_id)
            socket.transport.abort()

    shares = [count // concurrency + (i < count % concurrency) for i in range(concurrency)]
    await asyncio.gather(*(worker(n) for n in shares))


def resources(pid: int) -> dict[str, int]:
    """Open fds, threads and resident memory (KiB) of process ``pid``."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return {
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(fields["Threads"]),
        "rss_kib": int(fields["VmRSS"].split()[0]),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
