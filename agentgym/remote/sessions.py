"""The env server's sessions: each an env owned by a lease, never by a socket.

A socket is a poor owner: a client that vanishes without closing (a killed trainer, a dropped
network) leaves a half-open socket that nothing ever closes, and a server that frees a session
only on a clean close fills every slot with such ghosts. Here a session holds a **lease** that
every message renews; the reaper (always on) closes sessions whose lease lapsed, and any
session past the **lifetime cap**, whatever its sockets. A client whose connection dropped
reattaches with the session's token while the lease holds.

Every request of an agentgym client carries a **sequence number**; the session keeps its last
answer, so a request retried after a lost reply (same number) gets that answer again instead of
being applied twice: a retried step never moves the episode twice.

Each session runs its env on a thread of its own (envs need not be thread-safe, and some, such
as Playwright's, must stay on the thread that made them); calls on one session are serialized.
The env lives on that thread or, with ``isolation="process"``, in a child process the thread
talks to (:mod:`agentgym.remote.hosts`).
"""

from __future__ import annotations

import asyncio
import collections
import secrets
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from agentgym.remote.hosts import EnvHost

__all__ = ["Metrics", "ProtocolError", "Session", "SessionTable"]

HostFactory = Callable[[str, dict[str, Any], bool], EnvHost]
"""``(env_id, kwargs, whole)``: a host; ``whole`` a multi-agent game with all its agents."""


class ProtocolError(Exception):
    """A request the server refuses, with the protocol code it answers (``wire.CODES``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Session:
    """One client's env and what the protocol keeps about it."""

    id: str
    token: str
    env_id: str
    host: EnvHost
    whole: bool
    """A multi-agent game with all its agents (``call`` messages), not one env."""
    executor: ThreadPoolExecutor
    created: float
    expires: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    seq: int = 0
    """The sequence number of the last request applied."""
    answer: tuple[bool, dict[str, Any]] | None = None
    """``(ok, payload)`` of that request, returned again to a retry."""
    episode: int = 0
    steps: int = 0
    in_episode: bool = False
    snapshots: dict[int, Any] = field(default_factory=dict)
    described: dict[str, Any] = field(default_factory=dict)
    """What the server tells a client that opens or attaches (spaces, metadata, token)."""
    closed: bool = False

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` on the session's own thread."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, function, *args)


class Metrics:
    """Counters for ``/metrics`` (Prometheus text format)."""

    WINDOW = 10.0
    """Seconds over which ``steps_per_second`` is measured."""

    def __init__(self) -> None:
        self.opened = 0
        self.closed: collections.Counter[str] = collections.Counter()
        self.steps = 0
        self.errors: collections.Counter[str] = collections.Counter()
        self._recent: collections.deque[float] = collections.deque()

    def step(self) -> None:
        """Count one step applied."""
        self.steps += 1
        self._recent.append(time.monotonic())

    def steps_per_second(self) -> float:
        """Steps applied per second over the last :attr:`WINDOW` seconds."""
        since = time.monotonic() - self.WINDOW
        while self._recent and self._recent[0] < since:
            self._recent.popleft()
        return len(self._recent) / self.WINDOW

    def render(self, sessions: int, capacity: int, draining: bool) -> str:
        """The Prometheus exposition text."""
        lines = [
            *_metric("sessions", "gauge", "Sessions open now.", [("", sessions)]),
            *_metric("sessions_capacity", "gauge", "Most sessions at once.", [("", capacity)]),
            *_metric("sessions_opened_total", "counter", "Sessions opened.", [("", self.opened)]),
            *_metric(
                "sessions_closed_total",
                "counter",
                "Sessions closed, by reason (client, lease, lifetime, shutdown).",
                [(f'{{reason="{r}"}}', n) for r, n in sorted(self.closed.items())],
            ),
            *_metric("steps_total", "counter", "Steps applied.", [("", self.steps)]),
            *_metric(
                "steps_per_second",
                "gauge",
                f"Steps applied per second over the last {self.WINDOW:g} s.",
                [("", self.steps_per_second())],
            ),
            *_metric(
                "errors_total",
                "counter",
                "Error answers, by protocol code.",
                [(f'{{code="{c}"}}', n) for c, n in sorted(self.errors.items())],
            ),
            *_metric("draining", "gauge", "1 while the server drains.", [("", int(draining))]),
        ]
        return "\n".join(lines) + "\n"


def _metric(name: str, kind: str, help: str, samples: list[tuple[str, float]]) -> list[str]:
    full = f"agentgym_env_{name}"
    return [f"# HELP {full} {help}", f"# TYPE {full} {kind}"] + [
        f"{full}{labels} {value:g}" for labels, value in samples
    ]


class SessionTable:
    """The open sessions, their leases and the reaper."""

    def __init__(
        self,
        factory: HostFactory,
        *,
        capacity: int,
        lease_s: float,
        lifetime_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.factory, self.capacity = factory, capacity
        self.lease_s, self.lifetime_s, self.clock = lease_s, lifetime_s, clock
        self.sessions: dict[str, Session] = {}
        self.opening = 0
        self.draining = False
        self.metrics = Metrics()

    def __len__(self) -> int:
        return len(self.sessions)

    def full(self) -> bool:
        """True when a new session would be refused (at capacity, or draining)."""
        return self.draining or len(self.sessions) + self.opening >= self.capacity

    async def open(self, env_id: str, kwargs: dict[str, Any], whole: bool = False) -> Session:
        """A new session with a fresh env (with ``whole``, a multi-agent game with all its
        agents), or ProtocolError when full or draining."""
        if self.draining:
            raise ProtocolError("DRAINING", "the server is draining: it takes no new sessions")
        if self.full():
            raise ProtocolError(
                "CAPACITY_REACHED",
                f"{len(self.sessions)} of {self.capacity} sessions are open; retry later or "
                f"use another server",
            )
        self.opening += 1  # hold the slot while the env is made on its thread
        executor = ThreadPoolExecutor(1, thread_name_prefix="agentgym-session")
        try:
            loop = asyncio.get_running_loop()
            host = await loop.run_in_executor(executor, self.factory, env_id, kwargs, whole)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        finally:
            self.opening -= 1
        now = self.clock()
        session = Session(
            id=secrets.token_hex(8),
            token=secrets.token_urlsafe(24),
            env_id=env_id,
            host=host,
            whole=whole,
            executor=executor,
            created=now,
            expires=now + self.lease_s,
        )
        self.sessions[session.id] = session
        self.metrics.opened += 1
        return session

    def get(self, session_id: str, token: str) -> Session:
        """The live session with this id and token, or ProtocolError NO_SESSION."""
        session = self.sessions.get(session_id)
        if session is None or not secrets.compare_digest(session.token, token or ""):
            raise ProtocolError(
                "NO_SESSION",
                f"no session {session_id!r} with this token: it was closed, its lease lapsed, "
                f"or the server restarted",
            )
        return session

    def renew(self, session: Session) -> None:
        """Extend the lease: any message on the session does."""
        session.expires = self.clock() + self.lease_s

    async def close(self, session: Session, reason: str) -> None:
        """Close the env on its thread and forget the session (idempotent)."""
        if session.closed:
            return
        session.closed = True
        self.sessions.pop(session.id, None)
        self.metrics.closed[reason] += 1
        try:
            if session.host.closes_anywhere:  # even while a call hangs on the session's thread
                await asyncio.to_thread(session.host.close)
            else:
                await session.call(session.host.close)
        except Exception:  # a failing close must not keep the slot: counted
            self.metrics.errors["CLOSE_FAILED"] += 1
        finally:
            session.executor.shutdown(wait=False)

    async def reap(self) -> int:
        """Close every session whose lease lapsed or that outlived the cap; how many."""
        now = self.clock()
        lapsed = [
            (s, "lifetime" if now - s.created >= self.lifetime_s else "lease")
            for s in list(self.sessions.values())
            if now - s.created >= self.lifetime_s or (s.expires <= now and not s.lock.locked())
        ]  # a session busy with a request is not idle: its client is waiting for the answer
        for session, reason in lapsed:
            await self.close(session, reason)
        return len(lapsed)

    async def run_reaper(self) -> None:
        """Reap for ever, a few times per lease and lifetime (cancelled at shutdown)."""
        interval = max(0.05, min(self.lease_s / 4, self.lifetime_s / 4, 5.0))
        while True:
            await asyncio.sleep(interval)
            await self.reap()

    async def close_all(self, reason: str) -> None:
        """Close every session (at shutdown)."""
        for session in list(self.sessions.values()):
            await self.close(session, reason)

    def idle(self) -> bool:
        """True when no session is in the middle of an episode (a drain may end)."""
        return not any(s.in_episode for s in self.sessions.values())


async def guarded(
    table: SessionTable, session: Session, seq: int | None, apply: Callable[[], Awaitable[Any]]
) -> tuple[bool, dict[str, Any]]:
    """Apply one request to ``session`` under its lock, at most once per sequence number.

    ``apply`` returns the answer's payload or raises; an exception the env raised is an answer
    too (``ok`` False), kept like any other so a retry sees it again. A request without a
    number (an OpenEnv client's) is always applied.
    """
    from agentgym.remote.wire import error_payload

    async with session.lock:
        if session.closed:
            raise ProtocolError("NO_SESSION", f"session {session.id} was closed")
        table.renew(session)
        if seq is not None:
            if seq == session.seq and session.answer is not None:
                return session.answer
            if seq != session.seq + 1:
                raise ProtocolError(
                    "OUT_OF_ORDER",
                    f"request number {seq} does not follow {session.seq}, the last applied",
                )
        try:
            answer: tuple[bool, dict[str, Any]] = (True, await apply())
        except ProtocolError:
            raise
        except Exception as error:
            answer = (False, error_payload(error))
        if seq is not None:
            session.seq, session.answer = seq, answer
        table.renew(session)  # a long step must not lapse the lease it ran under
        return answer
