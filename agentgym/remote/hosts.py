"""Where a session's env runs: on a thread of the server's process, or in a process of its own.

A :class:`ThreadHost` is the env itself, called on its session's thread: the cheapest, and
enough for envs that keep to their own objects. A :class:`ProcessHost` runs the env in a child
process (``agentgym serve-env --isolation process``) for envs that cannot share a process:

* envs that are not thread-safe (module-level state, a library bound to the main thread);
* envs that may crash the interpreter (a native library's segfault takes one child, not the
  server and every other session with it);
* envs whose calls may hang: a thread cannot be stopped, a process can. Closing the session
  (by its client, its lease or the lifetime cap) kills the child even while a call hangs, and
  the hung call's client gets a typed error.

Both answer the same calls (:class:`EnvHost`), which are what the protocol needs of an env and
no more, so the server never reaches into an env object that may be in another process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
from multiprocessing.connection import Connection
from typing import Any, Protocol

from agentgym.errors import EnvCrashedError

__all__ = ["EnvHost", "HostedError", "ProcessHost", "ThreadHost", "make_host"]

CLOSE_GRACE_S = 5.0
"""Seconds a child process gets to close its env before it is killed."""

SNAPSHOTS_KEPT = 1024
"""Snapshots a session keeps (``get_state``); the oldest are dropped past this."""


class EnvHost(Protocol):
    """The calls a session makes on its env (each on the session's thread)."""

    closes_anywhere: bool

    def describe(self) -> dict[str, Any]: ...
    def reset(self, seed: Any, options: Any) -> tuple[Any, ...]: ...
    def step(self, action: Any) -> tuple[Any, ...]: ...
    def render(self) -> Any: ...
    def task_ids(self, split: str, difficulty: str | None, start: int, stop: int) -> Any: ...
    def oracle(self) -> Any: ...
    def get_state(self) -> Any: ...
    def set_state(self, snapshot: Any) -> None: ...
    def close(self) -> None: ...


class ThreadHost:
    """The env in the server's process (made and called on the session's thread)."""

    closes_anywhere = False
    """Its close must run on the session's thread, after any call in progress."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        from agentgym.registry import make

        self.env_id = env_id
        self.env = make(env_id, **kwargs)

    def describe(self) -> dict[str, Any]:
        """What a client needs to stand in for the env: spaces, metadata, splits, limits."""
        from agentgym.errors import UsageError
        from agentgym.registry import spec
        from agentgym.remote.wire import describe_space, encode

        env, base = self.env, self.env.unwrapped
        metadata = {}
        for key, value in base.metadata.items():
            with contextlib.suppress(UsageError):  # a value JSON cannot carry stays here
                metadata[key] = encode(value)
        described: dict[str, Any] = {
            "env_id": self.env_id,
            "observation_space": describe_space(env.observation_space),
            "action_space": describe_space(env.action_space),
            "metadata": metadata,
            "render_mode": env.render_mode,
            "max_episode_steps": spec(self.env_id).max_episode_steps,
        }
        tasks = getattr(base, "tasks", None)
        if tasks is not None:
            described["tasks"] = {
                "splits": list(tasks.splits),
                "difficulties": list(tasks.difficulties),
            }
        return described

    def reset(self, seed: Any, options: Any) -> tuple[Any, ...]:
        return tuple(self.env.reset(seed=seed, options=options))

    def step(self, action: Any) -> tuple[Any, ...]:
        return tuple(self.env.step(action))

    def render(self) -> Any:
        return self.env.render()

    def task_ids(self, split: str, difficulty: str | None, start: int, stop: int) -> Any:
        """How many ids the split has, and those from ``start`` to ``stop``."""
        ids = self.env.unwrapped.tasks.ids(split, difficulty)
        return {"count": len(ids), "ids": list(ids[start:stop])}

    def oracle(self) -> Any:
        return self.env.unwrapped.oracle_action()

    def get_state(self) -> Any:
        return self.env.unwrapped.get_state()

    def set_state(self, snapshot: Any) -> None:
        self.env.unwrapped.set_state(snapshot)

    def close(self) -> None:
        self.env.close()


class HostedError(Exception):
    """An exception raised in a child process, carried as its wire form (class name, module,
    message, code): the server answers it exactly as it would the original."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("message", ""))
        self.payload = payload


class ProcessHost:
    """The env in a child process of its own (forkserver: a fork of a clean, small process,
    not of the server with its threads and sockets). Calls go over a pipe, one at a time;
    a snapshot stays in the child, which hands out a number for it."""

    closes_anywhere = True
    """Its close may run on any thread, even while a call hangs (it kills the child)."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        context = multiprocessing.get_context("forkserver")
        self.connection, child_end = context.Pipe()
        self.process = context.Process(
            target=_child, args=(child_end, env_id, kwargs), name=f"agentgym-env {env_id}"
        )
        self.process.start()
        child_end.close()
        self.busy = threading.Lock()
        self.closed = False
        try:
            self._described: dict[str, Any] = self._call("describe")
        except BaseException:
            self.kill()
            raise

    def describe(self) -> dict[str, Any]:
        return self._described

    def reset(self, seed: Any, options: Any) -> tuple[Any, ...]:
        return tuple(self._call("reset", seed, options))

    def step(self, action: Any) -> tuple[Any, ...]:
        return tuple(self._call("step", action))

    def render(self) -> Any:
        return self._call("render")

    def task_ids(self, split: str, difficulty: str | None, start: int, stop: int) -> Any:
        return self._call("task_ids", split, difficulty, start, stop)

    def oracle(self) -> Any:
        return self._call("oracle")

    def get_state(self) -> Any:
        return self._call("get_state")

    def set_state(self, snapshot: Any) -> None:
        self._call("set_state", snapshot)

    def _call(self, name: str, *args: Any) -> Any:
        with self.busy:
            if self.closed:
                raise EnvCrashedError(f"the env process of this session was closed ({name})")
            try:
                self.connection.send((name, args))
                ok, value = self.connection.recv()
            except (EOFError, OSError) as error:
                self.process.join(timeout=1.0)
                raise EnvCrashedError(
                    f"the env process ({self.process.name}, pid {self.process.pid}) died "
                    f"during {name!r}: exit code {self.process.exitcode}"
                ) from error
        if not ok:
            raise HostedError(value)
        return value

    def close(self) -> None:
        """Close the env in its process and end it; kill it at once if a call is in
        progress (a hung step must not hold the session's slot), or after
        :data:`CLOSE_GRACE_S`. Safe from any thread, and more than once."""
        if not self.busy.acquire(blocking=False):
            self.kill()  # the call in progress gets EOF: its client a typed error
            return
        try:
            if self.closed:
                return
            with contextlib.suppress(EOFError, OSError):
                self.connection.send(("close", ()))
                if self.connection.poll(CLOSE_GRACE_S):
                    self.connection.recv()
            self.kill()
        finally:
            self.busy.release()

    def kill(self) -> None:
        """End the child now (after its own close, or instead of it)."""
        self.closed = True
        self.process.join(timeout=0.5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=CLOSE_GRACE_S)
        self.connection.close()
        with contextlib.suppress(ValueError):  # already closed
            self.process.close()


def _child(connection: Connection, env_id: str, kwargs: dict[str, Any]) -> None:
    """The child's loop: make the env, then answer calls until ``close`` or EOF."""
    from agentgym.remote.wire import error_payload

    try:
        host: ThreadHost | None = ThreadHost(env_id, kwargs)
    except Exception as error:
        host = None
        failure = error_payload(error)
    snapshots: dict[int, Any] = {}
    while True:
        try:
            name, args = connection.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            break
        try:
            if host is None:
                raise HostedError(failure)
            value = _apply(host, snapshots, name, args)
            reply: tuple[bool, Any] = (True, value)
        except HostedError as error:
            reply = (False, error.payload)
        except Exception as error:
            reply = (False, error_payload(error))
        try:
            connection.send(reply)
        except Exception as error:  # an answer pickle cannot carry
            connection.send((False, error_payload(error)))
        if name == "close":
            break


def _apply(host: ThreadHost, snapshots: dict[int, Any], name: str, args: tuple[Any, ...]) -> Any:
    """One call on the child's env; snapshots are kept here and named by a number."""
    if name == "get_state":
        number = max(snapshots, default=0) + 1
        snapshots[number] = host.get_state()
        while len(snapshots) > SNAPSHOTS_KEPT:
            del snapshots[min(snapshots)]
        return number
    if name == "set_state":
        return host.set_state(snapshots[args[0]])
    if name == "reset":
        snapshots.clear()
    return getattr(host, name)(*args)


def make_host(isolation: str, env_id: str, kwargs: dict[str, Any]) -> EnvHost:
    """A host of ``env_id`` for ``isolation``: ``"thread"`` or ``"process"``."""
    if isolation == "process":
        return ProcessHost(env_id, kwargs)
    return ThreadHost(env_id, kwargs)
