"""A warm pool of ready sandboxes, so an episode does not wait for one to be built.

The evaluator and envs that need one sandbox per episode take a sandbox with
:meth:`SandboxPool.acquire` (or ``with pool.sandbox() as box``), use it for one episode and give
it back with :meth:`SandboxPool.release`, which closes it: a sandbox is never reused, so no
episode sees another's files or processes. A background thread keeps ``size`` sandboxes
ready. Every hand-out checks liveness first and throws away a dead sandbox, so a caller never
gets one that cannot run commands.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

from agentgym.errors import SandboxClosedError, SandboxError, UsageError
from agentgym.sandbox.base import Sandbox, SandboxSpec
from agentgym.sandbox.factory import create

__all__ = ["SandboxPool"]


class SandboxPool:
    """``size`` sandboxes made from one spec and backend, kept ready in the background."""

    def __init__(
        self,
        spec: SandboxSpec | None = None,
        *,
        size: int = 4,
        backend: str = "auto",
        **create_options: Any,
    ) -> None:
        if not isinstance(size, int) or size < 1:
            raise UsageError(f"SandboxPool size must be a positive int, got {size!r}")
        self.spec = spec or SandboxSpec()
        self.size = size
        self._backend, self._create_options = backend, create_options
        self._ready: deque[Sandbox] = deque()
        self._lock = threading.Condition()
        self._closed = False
        self._error: BaseException | None = None
        self.discarded = 0  # dead sandboxes found at hand-out
        first = self._make()  # fail here, in the caller, if the backend cannot work
        self._ready.append(first)
        self._filler = threading.Thread(target=self._fill, name="sandbox-pool", daemon=True)
        self._filler.start()

    def _make(self) -> Sandbox:
        return create(self.spec, backend=self._backend, **self._create_options)

    def _fill(self) -> None:
        while True:
            with self._lock:
                while not self._closed and len(self._ready) >= self.size:
                    self._lock.wait()
                if self._closed:
                    return
            try:
                box = self._make()
            except BaseException as error:  # surfaced to the next acquire()
                with self._lock:
                    self._error = error
                    self._lock.notify_all()
                return
            with self._lock:
                if self._closed:
                    box.close()
                    return
                self._ready.append(box)
                self._lock.notify_all()

    def acquire(self, timeout: float | None = 60.0) -> Sandbox:
        """A live sandbox, waiting for one to be ready if need be."""
        while True:
            with self._lock:
                if self._closed:
                    raise SandboxClosedError("this sandbox pool is closed")
                if not self._lock.wait_for(
                    lambda: self._ready or self._error or self._closed, timeout
                ):
                    raise SandboxError(f"no sandbox became ready within {timeout} s")
                if self._closed:
                    raise SandboxClosedError("this sandbox pool is closed")
                if not self._ready and self._error is not None:
                    raise SandboxError("the pool could not make a sandbox") from self._error
                box = self._ready.popleft()
                self._lock.notify_all()
            if box.alive():
                return box
            self.discarded += 1
            box.close()

    def release(self, box: Sandbox) -> None:
        """Give a sandbox back: it is closed (never handed out again)."""
        box.close()

    @contextlib.contextmanager
    def sandbox(self, timeout: float | None = 60.0) -> Iterator[Sandbox]:
        """``with pool.sandbox() as box:`` acquire, use, release."""
        box = self.acquire(timeout)
        try:
            yield box
        finally:
            self.release(box)

    def close(self) -> None:
        """Close every ready sandbox and stop refilling (idempotent)."""
        with self._lock:
            self._closed = True
            ready, self._ready = list(self._ready), deque()
            self._lock.notify_all()
        for box in ready:
            box.close()
        if self._filler.is_alive():
            self._filler.join(timeout=30)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
