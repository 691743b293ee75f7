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
from abc import ABC, abstractmethod
from multiprocessing.connection import Connection
from typing import Any, Protocol

from agentgym.errors import EnvCrashedError, UsageError
from agentgym.remote.wire import HostedError, describe_space, encode, error_payload

__all__ = ["EnvHost", "MultiHost", "ProcessHost", "ThreadHost", "make_host"]

CLOSE_GRACE_S = 5.0
"""Seconds a child process gets to close its env before it is killed."""

SNAPSHOTS_KEPT = 1024
"""Snapshots a session keeps (``get_state``); the oldest are dropped past this."""


class EnvHost(Protocol):
    """A session's env as the server sees it: a description, and named calls (each made on
    the session's thread)."""

    closes_anywhere: bool
    """Whether :meth:`close` may run on any thread, even while a call hangs."""

    def describe(self) -> dict[str, Any]: ...
    def call(self, name: str, *args: Any) -> Any: ...
    def close(self) -> None: ...


class _Local(ABC):
    """What both local hosts share: the env, its tasks and its description's common part."""

    closes_anywhere = False
    CALLS: frozenset[str] = frozenset()
    """The names :meth:`call` answers (a client's ``call`` message may name only these)."""

    env: Any
    env_id: str

    @abstractmethod
    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        """Make the env (each host its own kind)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What a client needs to stand in for the env."""

    def call(self, name: str, *args: Any) -> Any:
        """The method ``name`` with ``args``; only the protocol's calls are reachable."""
        if name not in self.CALLS:
            raise UsageError(f"{name!r} is not a call this env answers: {sorted(self.CALLS)}")
        return getattr(self, name)(*args)

    def _common(self, base: Any, kind: str) -> dict[str, Any]:
        from agentgym.registry import spec

        metadata = {}
        for key, value in base.metadata.items():
            with contextlib.suppress(UsageError):  # a value JSON cannot carry stays here
                metadata[key] = encode(value)
        described: dict[str, Any] = {
            "env_id": self.env_id,
            "kind": kind,
            "metadata": metadata,
            "render_mode": getattr(base, "render_mode", None),
            "max_episode_steps": spec(self.env_id).max_episode_steps,
        }
        tasks = getattr(base, "tasks", None)
        if tasks is not None:
            described["tasks"] = {
                "splits": list(tasks.splits),
                "difficulties": list(tasks.difficulties),
            }
        return described

    def task_ids(self, split: str, difficulty: str | None, start: int, stop: int) -> Any:
        """How many ids the split has, and those from ``start`` to ``stop``."""
        ids = self.env.unwrapped.tasks.ids(split, difficulty)
        return {"count": len(ids), "ids": list(ids[start:stop])}

    def render(self) -> Any:
        return self.env.render()

    def get_state(self) -> Any:
        return self.env.unwrapped.get_state()

    def set_state(self, snapshot: Any) -> None:
        self.env.unwrapped.set_state(snapshot)

    def close(self) -> None:
        self.env.close()


class ThreadHost(_Local):
    """A single-agent env in the server's process (made and called on the session's thread)."""

    CALLS = frozenset({"reset", "step", "render", "task_ids", "oracle", "get_state", "set_state"})

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        from agentgym.registry import make

        self.env_id = env_id
        self.env = make(env_id, **kwargs)

    def describe(self) -> dict[str, Any]:
        """What a client needs to stand in for the env: spaces, metadata, splits, limits."""

        described = self._common(self.env.unwrapped, "env")
        described["observation_space"] = describe_space(self.env.observation_space)
        described["action_space"] = describe_space(self.env.action_space)
        described["render_mode"] = self.env.render_mode
        return described

    def reset(self, seed: Any, options: Any) -> tuple[Any, ...]:
        return tuple(self.env.reset(seed=seed, options=options))

    def step(self, action: Any) -> tuple[Any, ...]:
        return tuple(self.env.step(action))

    def oracle(self) -> Any:
        return self.env.unwrapped.oracle_action()


class MultiHost(_Local):
    """A multi-agent (PettingZoo) env, whole: every agent's calls come from one client.

    Each reset and step answers with the env's **view** (its agents, whose turn it is, the
    rewards, terminations, truncations and infos), so a client keeps those attributes without
    asking for them; observations are asked for by agent.
    """

    CALLS = frozenset({"reset", "step", "observe", "oracle", "render", "task_ids"})

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        from agentgym.registry import make_multi, spec

        self.env_id = env_id
        self.kind = spec(env_id).kind
        self.env = make_multi(env_id, **kwargs)

    def describe(self) -> dict[str, Any]:
        """Agents, their spaces, reference players and the common description."""

        env, base = self.env, self.env.unwrapped
        agents = list(env.possible_agents)
        described = self._common(base, self.kind)
        described["possible_agents"] = agents
        described["observation_spaces"] = {
            a: describe_space(env.observation_space(a)) for a in agents
        }
        described["action_spaces"] = {a: describe_space(env.action_space(a)) for a in agents}
        players = getattr(base, "reference_players", None)
        described["reference_players"] = sorted(players()) if players else []
        described["max_invalid_actions"] = getattr(base, "max_invalid_actions", None)
        return described

    def view(self) -> dict[str, Any]:
        """The attributes a PettingZoo client reads after a call."""
        env, base = self.env, self.env.unwrapped
        task = getattr(base, "task", None)
        view: dict[str, Any] = {
            "agents": list(env.agents),
            "task_id": getattr(task, "id", None),
            "episode_seed": getattr(base, "episode_seed", None),
        }
        if self.kind == "aec":
            view.update(
                agent_selection=env.agent_selection,
                rewards=dict(env.rewards),
                cumulative_rewards=dict(env.unwrapped._cumulative_rewards),
                terminations=dict(env.terminations),
                truncations=dict(env.truncations),
                infos={a: dict(i) for a, i in env.infos.items()},
            )
        return view

    def reset(self, seed: Any, options: Any) -> Any:
        returned = self.env.reset(seed=seed, options=options)
        return {"returned": returned, "view": self.view()}

    def step(self, action: Any) -> Any:
        returned = self.env.step(action)
        return {"returned": returned, "view": self.view()}

    def observe(self, agent: str) -> Any:
        return self.env.observe(agent)

    def oracle(self, agent: str) -> Any:
        return self.env.unwrapped.oracle_action(agent)


class ProcessHost:
    """The env in a child process of its own (forkserver: a fork of a clean, small process,
    not of the server with its threads and sockets). Calls go over a pipe, one at a time;
    a snapshot stays in the child, which hands out a number for it."""

    closes_anywhere = True
    """Its close may run on any thread, even while a call hangs (it kills the child)."""

    def __init__(self, local: type[_Local], env_id: str, kwargs: dict[str, Any]) -> None:
        context = multiprocessing.get_context("forkserver")
        self.connection, child_end = context.Pipe()
        self.process = context.Process(
            target=_child, args=(child_end, local, env_id, kwargs), name=f"agentgym-env {env_id}"
        )
        self.process.start()
        self.name, self.pid = self.process.name, self.process.pid
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

    def call(self, name: str, *args: Any) -> Any:
        """``name(*args)`` on the env in the child (a snapshot is the child's number)."""
        return self._call(name, *args)

    def _call(self, name: str, *args: Any) -> Any:
        with self.busy:
            if self.closed:
                raise EnvCrashedError(f"the env process of this session was closed ({name})")
            try:
                self.connection.send((name, args))
                ok, value = self.connection.recv()
            except (EOFError, OSError) as error:
                raise EnvCrashedError(
                    f"the env process ({self.name}, pid {self.pid}) ended during {name!r}: "
                    f"{self._ending()}"
                ) from error
        if not ok:
            raise HostedError(value)
        return value

    def _ending(self) -> str:
        """How the child ended: its exit code, or that its session was closed (killed)."""
        with contextlib.suppress(ValueError):  # the process object is closed already
            self.process.join(timeout=1.0)
            return f"exit code {self.process.exitcode}"
        return "its session was closed, which killed it"

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


def _child(
    connection: Connection, local: type[_Local], env_id: str, kwargs: dict[str, Any]
) -> None:
    """The child's loop: make the env, then answer calls until ``close`` or EOF."""

    try:
        host: _Local | None = local(env_id, kwargs)
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


def _apply(host: _Local, snapshots: dict[int, Any], name: str, args: tuple[Any, ...]) -> Any:
    """One call on the child's env; snapshots are kept here and named by a number."""
    if name == "describe":
        return host.describe()
    if name == "close":
        return host.close()
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
    return host.call(name, *args)


def make_host(isolation: str, env_id: str, kwargs: dict[str, Any], whole: bool) -> EnvHost:
    """A host of ``env_id`` for ``isolation`` (``"thread"`` or ``"process"``): the whole
    multi-agent game with ``whole``, else a single-agent env (or a game's seat)."""
    local: type[_Local] = MultiHost if whole else ThreadHost
    if isolation == "process":
        return ProcessHost(local, env_id, kwargs)
    return local(env_id, kwargs)
