"""``agentgym.remote.make(URL, ID)``: an env on an env server, as a Gymnasium env.

The env it returns passes the same conformance checker as the local env: its spaces, metadata,
task splits, oracle and (where the env has them) snapshots are the server env's, and every
observation and ``info`` comes back as the local env would have given it
(:mod:`agentgym.remote.wire`).

Faults are typed and bounded in time. Every wait has a deadline: a reply that does not come
within ``reply_timeout_s``, or a dropped connection, makes the client reconnect and reattach to
its session (by its token) and send the same numbered request again, which the server answers
without applying it twice; when the server cannot be reached again within ``reconnect_s``
(killed, restarted: the session is gone) the call raises
:class:`~agentgym.errors.RemoteEnvError`, an infrastructure error the evaluator retries or
records as errored. An exception the env raised on the server is raised here with its own type.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, overload
from urllib.parse import urlsplit, urlunsplit

import gymnasium
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.sync.client import ClientConnection, connect

from agentgym.core import Env, Task, TaskSet
from agentgym.errors import RemoteEnvError, UsageError
from agentgym.registry import TimeLimit
from agentgym.remote.wire import decode, encode, error_from_payload, space_from

__all__ = ["RemoteEnv", "RemoteSnapshot", "make"]

IDS_PAGE = 512
"""Task ids fetched per request when the checker walks a split."""


def make(
    url: str,
    env_id: str,
    *,
    token: str | None = None,
    reply_timeout_s: float = 300.0,
    reconnect_s: float = 10.0,
    max_episode_steps: int | None = None,
    **kwargs: Any,
) -> gymnasium.Env[Any, Any]:
    """A session of ``env_id`` on the env server at ``url`` (``http://host:port`` or
    ``ws://host:port``), as a Gymnasium env wrapped as :func:`agentgym.make` wraps the local
    one: the step limit (the id's, or ``max_episode_steps``) is kept here, around a
    :class:`RemoteEnv` that is the server's env without it. ``kwargs`` go to the server's
    ``agentgym.make(env_id, **kwargs)``; ``token`` is the server's bearer token."""
    env = RemoteEnv(url, env_id, token=token, reply_timeout_s=reply_timeout_s,
                    reconnect_s=reconnect_s, **kwargs)  # fmt: skip
    limit = env.max_episode_steps if max_episode_steps is None else max_episode_steps
    return env if limit is None or limit == -1 else TimeLimit(env, limit)


def _ws_url(url: str) -> str:
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme)
    if scheme is None or not parts.netloc:
        raise UsageError(f"an env server URL looks like http://HOST:PORT, got {url!r}")
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + "/ws", "", ""))


class Link:
    """The WebSocket to the server: numbered requests, deadlines, reconnect and reattach."""

    def __init__(self, url: str, token: str | None, reply_timeout_s: float, reconnect_s: float):
        self.url, self.ws_url = url, _ws_url(url)
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.reply_timeout_s, self.reconnect_s = reply_timeout_s, reconnect_s
        self.socket: ClientConnection | None = None
        self.session: dict[str, Any] = {}
        self.seq = 0

    def open(self, env_id: str, kwargs: dict[str, Any], multi: bool = False) -> dict[str, Any]:
        """Open a session of ``env_id`` (with ``multi``, a multi-agent game with all its
        agents); what the server describes of it. (An open whose reply was lost and is sent
        again leaves a session behind, until its lease lapses.)"""
        data = {"env_id": env_id, "kwargs": encode(kwargs), "step_limit": False, "multi": multi}
        message = {"type": "open", "data": data}
        self.session = self._retrying("open", lambda: self._exchange(message))
        return self.session

    def request(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """One numbered request; sent again on the same session after a lost reply or a
        dropped connection, until ``reconnect_s`` passes."""
        if not self.session:
            raise UsageError("the remote env is closed")
        self.seq += 1
        message = {"type": kind, "data": data or {}, "seq": self.seq}
        return self._retrying(kind, lambda: self._exchange(message))

    def _retrying(self, kind: str, exchange: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``exchange()``'s answer, connecting (and reattaching) first where the connection
        is gone; a fault of the transport is retried until ``reconnect_s`` after the first."""
        deadline: float | None = None
        while True:
            try:
                if self.socket is None:
                    self.socket = self._connect()
                    if self.session:
                        self._data(self._exchange(self._attach()))
                return self._data(exchange())
            except (OSError, WebSocketException, TimeoutError) as error:
                self._drop()
                deadline = deadline or time.monotonic() + self.reconnect_s
                if time.monotonic() >= deadline:
                    raise RemoteEnvError(
                        f"the env server at {self.url} did not answer {kind!r} and could not be "
                        f"reached again within {self.reconnect_s:g}s ({type(error).__name__}: "
                        f"{error}); the episode is lost"
                    ) from error
                time.sleep(0.05)

    def _attach(self) -> dict[str, Any]:
        session = {"session": self.session["session"], "token": self.session["token"]}
        return {"type": "attach", "data": session}

    def _connect(self) -> ClientConnection:
        try:
            opened = connect(
                self.ws_url,
                additional_headers=self.headers,
                open_timeout=min(self.reconnect_s, 10.0),
                close_timeout=1.0,
                ping_interval=None,  # leases, not pings, keep the session
                max_size=None,
                compression=None,
                proxy=None,
            )
        except InvalidStatus as error:
            status = error.response.status_code
            raise RemoteEnvError(
                f"the env server at {self.url} refused the connection (HTTP {status})"
                + (": a wrong or missing token (make(..., token=))" if status in (401, 403) else "")
            ) from None
        # Held open past this call and closed by _drop: websockets 17 wants a connection
        # entered as a context manager, and this is what its ``with`` does.
        return opened.__enter__()

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.socket is not None
        self.socket.send(json.dumps(message))
        reply: dict[str, Any] = json.loads(self.socket.recv(timeout=self.reply_timeout_s))
        return reply

    def _data(self, reply: dict[str, Any]) -> dict[str, Any]:
        if reply.get("type") == "error":
            raise error_from_payload(reply.get("data", {}), self.url)
        data: dict[str, Any] = reply.get("data", {})
        return data

    def _drop(self) -> None:
        if self.socket is not None:
            with contextlib.suppress(OSError, WebSocketException):
                self.socket.close()
            self.socket = None

    def close(self) -> None:
        """End the session on the server (best effort: its lease ends it otherwise)."""
        if self.socket is not None and self.session:
            with contextlib.suppress(OSError, ConnectionClosed):
                self.socket.send(json.dumps({"type": "close"}))
        self._drop()
        self.session = {}


@dataclass(frozen=True)
class RemoteSnapshot:
    """A snapshot kept on the server: restored by :meth:`RemoteEnv.set_state` in the session
    that took it (the env's own snapshot never crosses the wire)."""

    session: str
    number: int


PageOfIds = Callable[[str, "str | None", int, int], dict[str, Any]]
"""``(split, difficulty, start, stop)``: the server's ``{"count", "ids"}`` for that page."""


def _ids_of_env(link: Link) -> PageOfIds:
    """Pages of task ids from a single-agent session."""

    def page(split: str, difficulty: str | None, start: int, stop: int) -> dict[str, Any]:
        data = {"split": split, "difficulty": difficulty, "start": start, "stop": stop}
        return link.request("task_ids", data)

    return page


class RemoteIds(Sequence[str]):
    """The ids of one split (and difficulty) on the server, fetched a page at a time."""

    def __init__(self, fetch: PageOfIds, split: str, difficulty: str | None) -> None:
        self.fetch, self.split, self.difficulty = fetch, split, difficulty
        self.pages: dict[int, list[str]] = {}
        self.size = self._page(0)["count"]

    def _page(self, number: int) -> dict[str, Any]:
        start = number * IDS_PAGE
        page = self.fetch(self.split, self.difficulty, start, start + IDS_PAGE)
        self.pages[number] = list(page["ids"])
        return page

    def __len__(self) -> int:
        return int(self.size)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        number, offset = divmod(index % len(self), IDS_PAGE)
        if number not in self.pages:
            self._page(number)
        return self.pages[number][offset]


class RemoteTaskSet(TaskSet):
    """The server env's task set: its splits, difficulties and ids (tasks stay there)."""

    def __init__(
        self, fetch: PageOfIds, splits: Sequence[str], difficulties: Sequence[str]
    ) -> None:
        self.fetch = fetch
        self.splits, self.difficulties = tuple(splits), tuple(difficulties)

    def count(self, split: str, difficulty: str | None = None) -> int:
        return len(self.ids(split, difficulty))

    def ids(self, split: str, difficulty: str | None = None) -> Sequence[str]:
        self.check_split(split)
        self.check_difficulty(difficulty)
        return RemoteIds(self.fetch, split, difficulty)

    def get(self, task_id: str) -> Task[Any]:
        raise UsageError(
            f"task {task_id!r} lives on the env server: play it with "
            f"reset(options={{'task_id': {task_id!r}}})"
        )


class RemoteEnv(Env[Any, Any]):
    """An env on an env server (see :func:`make`)."""

    def __init__(self, url: str, env_id: str, *, token: str | None = None,
                 reply_timeout_s: float = 300.0, reconnect_s: float = 10.0,
                 **kwargs: Any) -> None:  # fmt: skip
        self._link = Link(url, token, reply_timeout_s, reconnect_s)
        described = self._link.open(env_id, kwargs)
        self.env_id = env_id
        self.max_episode_steps: int | None = described["max_episode_steps"]
        """The id's step limit, which :func:`make` keeps on this side."""
        self.observation_space = space_from(described["observation_space"])
        self.action_space = space_from(described["action_space"])
        self.metadata = decode(described["metadata"])
        self.render_mode = described["render_mode"]
        tasks = described.get("tasks")
        if tasks is not None:
            self.tasks = RemoteTaskSet(
                _ids_of_env(self._link), tasks["splits"], tasks["difficulties"]
            )
        again = partial(RemoteEnv, url, env_id, token=token, reply_timeout_s=reply_timeout_s,
                        reconnect_s=reconnect_s)  # fmt: skip
        self.spec = gymnasium.envs.registration.EnvSpec(  # what Gymnasium's checker remakes
            id=env_id,
            entry_point=again,
            kwargs=kwargs,
            max_episode_steps=described["max_episode_steps"],
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        data = self._link.request("reset", {"seed": encode(seed), "options": encode(options)})
        super().reset(seed=seed)  # after the server's: a wrong seed type raises the env's error
        observation = data["observation"]
        return decode(observation["value"]), decode(observation["info"])

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        data = self._link.request("step", {"value": encode(action)})
        observation = data["observation"]
        return (
            decode(observation["value"]),
            float(data["reward"]),
            bool(observation["terminated"]),
            bool(observation["truncated"]),
            decode(observation["info"]),
        )

    def oracle_action(self) -> Any:
        return decode(self._link.request("oracle")["value"])

    def get_state(self) -> RemoteSnapshot:
        number = self._link.request("get_state")["snapshot"]
        return RemoteSnapshot(self._link.session["session"], int(number))

    def set_state(self, state: Any) -> None:
        if not isinstance(state, RemoteSnapshot):
            raise UsageError(
                f"set_state takes a RemoteSnapshot from get_state(), got {state!r:.60}"
            )
        self._link.request("set_state", {"snapshot": state.number})

    def render(self) -> Any:
        return decode(self._link.request("render")["value"])

    def close(self) -> None:
        self._link.close()

    def __repr__(self) -> str:
        return f"<RemoteEnv<{self.env_id} at {self._link.url}>>"
