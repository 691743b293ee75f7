"""Env calls on daemon threads, awaited from the event loop without blocking it.

Env calls run in threads so the event loop stays free. A hung env call cannot be killed (Python
threads cannot be), so the engine abandons it after the step timeout. With
``concurrent.futures.ThreadPoolExecutor`` an abandoned call would still be joined when the
interpreter exits, and an evaluation with one hung env would never end; these workers are
daemon threads, so an abandoned call dies with the process.

:meth:`DaemonThreadPool.run` hands the result straight to an asyncio future (one
``call_soon_threadsafe``), skipping the ``concurrent.futures.Future`` that ``run_in_executor``
chains through: the engine makes one such call per env step, for hundreds of episodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["DaemonThreadPool"]


class DaemonThreadPool:
    """``workers`` daemon threads taking calls from one queue (no lock on the hot path)."""

    def __init__(self, workers: int, name: str = "agentgym-env") -> None:
        self._work: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._threads = [
            threading.Thread(target=self._worker, name=f"{name}-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def run(self, call: Callable[[], Any]) -> asyncio.Future[Any]:
        """Run ``call()`` on a worker; await the returned future for its result or error."""
        if self._closed:
            raise RuntimeError("this thread pool is shut down")
        future = asyncio.get_running_loop().create_future()
        self._work.put((future, call))
        return future

    def _worker(self) -> None:
        while (item := self._work.get()) is not None:
            future, call = item
            try:
                result, error = call(), None
            except BaseException as raised:
                result, error = None, raised
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                future.get_loop().call_soon_threadsafe(_settle, future, result, error)
            del item, future, call, result, error

    def shutdown(self) -> None:
        """Stop taking work; idle workers exit, busy (perhaps hung) ones are not waited for."""
        self._closed = True
        for _ in self._threads:
            self._work.put(None)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # abandoned after a timeout
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
