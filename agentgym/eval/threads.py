"""A thread pool whose workers never hold the interpreter open.

Env calls run in threads so the event loop stays free. A hung env call cannot be killed (Python
threads cannot be), so the engine abandons it after the step timeout. With
``concurrent.futures.ThreadPoolExecutor`` an abandoned call would still be joined when the
interpreter exits, and an evaluation with one hung env would never end; these workers are
daemon threads, so an abandoned call dies with the process.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["DaemonThreadPool"]


class DaemonThreadPool(concurrent.futures.Executor):
    """Up to ``max_workers`` daemon threads, started as work arrives."""

    def __init__(self, max_workers: int, name: str = "agentgym-env") -> None:
        self.max_workers, self.name = max_workers, name
        self._work: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()
        self._shutdown = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot submit to a pool that is shut down")
            self._work.put((future, fn, args, kwargs))
            if self._idle == 0 and len(self._threads) < self.max_workers:
                thread = threading.Thread(
                    target=self._worker, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            else:
                self._idle = max(0, self._idle - 1)  # an idle worker will take it
        return future

    def _worker(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as error:
                    future.set_exception(error)
            del item, future, fn, args, kwargs
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking work; idle workers exit. Busy (perhaps hung) ones are not waited for
        unless ``wait`` (and then only those that finish)."""
        with self._lock:
            self._shutdown = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    item = self._work.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in threads:
            self._work.put(None)
        if wait:
            for thread in threads:
                thread.join()
