"""``agentgym serve-env``: any registered env over WebSocket, with an HTTP fallback.

The protocol is OpenEnv's (``openenv-core`` 0.3.0), so OpenEnv's own ``EnvClient`` works
unchanged: WebSocket ``/ws`` with messages ``{"type": "reset"|"step"|"state"|"close",
"data": {...}}`` answered by ``{"type": "observation"|"state"|"error", "data": {...}}``;
HTTP ``POST /reset``, ``POST /step``, ``GET /state``, ``GET /health``, ``GET /schema``,
``GET /metadata``. An observation's data is OpenEnv's ``{"observation": {...}, "reward",
"done"}``; its ``observation`` holds ours: ``value`` (the env's observation), ``info``,
``terminated`` and ``truncated``. An action is ``{"value": ACTION}``.

It is implemented here rather than on openenv-core's server, which owns a session by its
socket (freed only on a clean close; its idle reaper off by default), makes a fresh env for
every HTTP request, and answers an env's exception with a generic error. On top of the protocol
(:mod:`agentgym.remote.sessions`): leases and a reaper, a lifetime cap, reattach by token,
numbered requests applied once, ``GET /ready`` (503 at capacity or draining), ``GET /metrics``
(Prometheus), bearer-token auth, typed errors with real HTTP statuses, and a drain on SIGTERM.
``docs/serving.md`` is the full description.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import secrets
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from agentgym.errors import UsageError
from agentgym.remote.hosts import SNAPSHOTS_KEPT, MultiHost, make_host
from agentgym.remote.sessions import ProtocolError, Session, SessionTable, guarded
from agentgym.remote.wire import CODES, decode, encode, error_payload

__all__ = ["ServerOptions", "create_app", "serve"]


@dataclass(frozen=True)
class ServerOptions:
    """How a server runs.

    Attributes:
        env_ids: the ids clients may open; empty: any registered id. The first is the one an
            OpenEnv client (which cannot name one) gets.
        capacity: the most sessions at once.
        lease_s: seconds a session lives after its last message.
        lifetime_s: seconds a session lives at most, messages or not.
        token: the bearer token every request but ``/health`` and ``/ready`` must carry;
            ``None``: no auth.
        drain_s: on SIGTERM, seconds to let episodes in progress finish before exiting.
        isolation: where each session's env runs: ``"thread"`` (a thread of this process)
            or ``"process"`` (a child process of its own; :mod:`agentgym.remote.hosts`).
    """

    env_ids: tuple[str, ...] = ()
    capacity: int = 256
    lease_s: float = 300.0
    lifetime_s: float = 6 * 3600.0
    token: str | None = None
    drain_s: float = 30.0
    isolation: str = "thread"


def spec_kind(env_id: str) -> str:
    """The registered kind of ``env_id``: ``env``, ``aec`` or ``parallel``."""
    from agentgym.registry import spec

    return spec(env_id).kind


def _unlimited(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` for an env without its step limit: an agentgym client keeps the limit on
    its side, so that its env's ``unwrapped`` is the local env's ``unwrapped``."""
    return {**kwargs, "max_episode_steps": -1}


# --------------------------------------------------------------------------- operations


def _observation(session: Session, result: tuple[Any, ...]) -> dict[str, Any]:
    """OpenEnv's observation data for a reset (2-tuple) or step (5-tuple) result."""
    if len(result) == 2:
        value, info = result
        reward, terminated, truncated = None, False, False
    else:
        value, reward, terminated, truncated, info = result
        reward = float(reward)
    session.in_episode = not (terminated or truncated)
    inner = {"value": encode(value), "info": encode(info)}
    inner.update(terminated=bool(terminated), truncated=bool(truncated))
    return {"observation": inner, "reward": reward, "done": not session.in_episode}


async def _reset(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    if table.draining:
        raise ProtocolError("DRAINING", "the server is draining: it starts no new episodes")
    seed, options = data.get("seed"), decode(data.get("options"))
    result = await session.call(session.host.call, "reset", seed, options)
    session.episode, session.steps = session.episode + 1, 0
    session.snapshots.clear()
    return _observation(session, result)


async def _step(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    if "value" not in data:
        raise ProtocolError(
            "VALIDATION_ERROR", f'a step\'s data is {{"value": ACTION}}, got keys {sorted(data)}'
        )
    result = await session.call(session.host.call, "step", decode(data["value"]))
    session.steps += 1
    table.metrics.step()
    return _observation(session, result)


async def _state(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    return {"episode_id": f"{session.id}-{session.episode}", "step_count": session.steps}


async def _task_ids(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    start, stop = int(data.get("start", 0)), int(data.get("stop", 0))
    where = (data["split"], data.get("difficulty"), start, stop)
    return dict(await session.call(session.host.call, "task_ids", *where))


async def _oracle(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    return {"value": encode(await session.call(session.host.call, "oracle"))}


async def _get_state(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    snapshot = await session.call(session.host.call, "get_state")
    number = max(session.snapshots, default=0) + 1
    session.snapshots[number] = snapshot
    while len(session.snapshots) > SNAPSHOTS_KEPT:
        del session.snapshots[min(session.snapshots)]
    return {"snapshot": number}


async def _set_state(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    number = data.get("snapshot")
    if number not in session.snapshots:
        raise UsageError(
            f"no snapshot {number!r} in this session: a remote snapshot is restored in the "
            f"session that took it, and a session keeps its last {SNAPSHOTS_KEPT} (a reset "
            f"drops them)"
        )
    await session.call(session.host.call, "set_state", session.snapshots[number])
    session.in_episode = True
    return {}


async def _render(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    return {"value": encode(await session.call(session.host.call, "render"))}


async def _call(table: SessionTable, session: Session, data: dict[str, Any]) -> dict[str, Any]:
    """A multi-agent session's call: ``{"method", "args"}`` (the PettingZoo client's)."""
    method, args = data.get("method"), decode(data.get("args", []))
    if method not in MultiHost.CALLS or not isinstance(args, list):
        raise ProtocolError(
            "VALIDATION_ERROR",
            f"a call is {{'method': one of {sorted(MultiHost.CALLS)}, 'args': [...]}}, got "
            f"{method!r:.60}",
        )
    if method == "reset" and table.draining:
        raise ProtocolError("DRAINING", "the server is draining: it starts no new episodes")
    result = await session.call(session.host.call, method, *args)
    if method in ("reset", "step"):
        session.steps = 0 if method == "reset" else session.steps + 1
        session.in_episode = _game_on(result["view"])
        if method == "step":
            table.metrics.step()
    return {"value": encode(result)}


def _game_on(view: dict[str, Any]) -> bool:
    """Whether a multi-agent game is still being played: an agent is left that has not
    terminated or been truncated (a parallel game's view lists only the agents left)."""
    ended = {**view.get("terminations", {}), **view.get("truncations", {})}
    over = {a for a in view["agents"] if view.get("terminations", {}).get(a) or ended.get(a)}
    return len(over) < len(view["agents"])


Operation = Callable[[SessionTable, Session, dict[str, Any]], Awaitable[dict[str, Any]]]
OPERATIONS: dict[str, Operation] = {
    "reset": _reset,
    "step": _step,
    "state": _state,
    "task_ids": _task_ids,
    "oracle": _oracle,
    "get_state": _get_state,
    "set_state": _set_state,
    "render": _render,
    "call": _call,
}

REPLY_TYPES = {"reset": "observation", "step": "observation"}
"""The reply ``type`` of a request kind, where it is not the kind itself (OpenEnv's names)."""


def _describe(session: Session, lease_s: float) -> dict[str, Any]:
    """What a client needs to stand in for the env (the host's description), with the
    session's id, token and lease."""
    described = {"session": session.id, "token": session.token, "lease_s": lease_s}
    return {**described, **session.host.describe()}


# --------------------------------------------------------------------------- the server


class EnvServer:
    """The session table and the protocol's handlers, shared by both transports."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.table = SessionTable(
            functools.partial(make_host, options.isolation),
            capacity=options.capacity,
            lease_s=options.lease_s,
            lifetime_s=options.lifetime_s,
        )

    def authorized(self, headers: Any) -> bool:
        """Whether the request carries the server's bearer token (always, without one)."""
        if self.options.token is None:
            return True
        given = str(headers.get("authorization", ""))
        return secrets.compare_digest(given, f"Bearer {self.options.token}")

    async def open(
        self, env_id: str | None, kwargs: Any, step_limit: bool = True, whole: bool = False
    ) -> Session:
        """A new session of ``env_id`` (the default id when ``None``), with the id's step
        limit unless ``step_limit`` is False (an agentgym client keeps it); with ``whole``,
        a multi-agent game with all its agents (PettingZoo's API, by ``call`` messages)."""
        allowed = self.options.env_ids
        env_id = env_id or (allowed[0] if allowed else None)
        if env_id is None:
            raise ProtocolError(
                "VALIDATION_ERROR", "this server serves any id: name one (open's env_id)"
            )
        if allowed and env_id not in allowed:
            raise ProtocolError(
                "VALIDATION_ERROR", f"this server serves {list(allowed)}, not {env_id!r}"
            )
        if not isinstance(kwargs, dict):
            raise ProtocolError("VALIDATION_ERROR", f"kwargs must be an object, got {kwargs!r}")
        kwargs = decode(kwargs)
        if whole and spec_kind(env_id) == "env":
            raise ProtocolError(
                "VALIDATION_ERROR", f"{env_id} is a single-agent env: open it without 'multi'"
            )
        limited = step_limit or whole  # a whole game has no step limit to lift
        session = await self.table.open(
            env_id, kwargs if limited else _unlimited(kwargs), whole=whole
        )
        try:
            session.described = _describe(session, self.options.lease_s)
        except Exception:
            await self.table.close(session, "client")
            raise
        return session

    async def apply(
        self, session: Session, kind: str, data: Any, seq: Any
    ) -> tuple[bool, dict[str, Any]]:
        """One request on a session: ``(ok, payload)``; ProtocolError for a refused one."""
        operation = OPERATIONS.get(kind)
        if operation is None:
            raise ProtocolError("UNKNOWN_TYPE", f"unknown message type {kind!r}")
        if not isinstance(data, dict) or not (seq is None or isinstance(seq, int)):
            raise ProtocolError("VALIDATION_ERROR", "data must be an object and seq an integer")
        if kind != "state" and session.whole != (kind == "call"):
            whole = "a whole multi-agent game answers only 'call' and 'state'"
            raise ProtocolError("VALIDATION_ERROR", f"{kind!r} refused: {whole}")
        ok, payload = await guarded(
            self.table, session, seq, lambda: operation(self.table, session, data)
        )
        if not ok:
            self.table.metrics.errors[payload["code"]] += 1
        return ok, payload

    def refused(self, error: ProtocolError) -> dict[str, Any]:
        """The error payload of a refused request, counted."""
        self.table.metrics.errors[error.code] += 1
        return error_payload(error, error.code)


async def _websocket(websocket: WebSocket) -> None:
    server: EnvServer = websocket.app.state.server
    if not server.authorized(websocket.headers):
        server.table.metrics.errors["UNAUTHORIZED"] += 1
        await websocket.close(code=1008)  # before accept: the handshake answers 403
        return
    await websocket.accept()
    link = _Link(server)
    with contextlib.suppress(WebSocketDisconnect):
        while not link.closing:
            reply = await link.handle(await websocket.receive_text())
            if reply is not None:
                await websocket.send_text(reply)
    if link.closing:
        with contextlib.suppress(Exception):
            await websocket.close()


class _Link:
    """One WebSocket connection: the session it is attached to, and its messages."""

    def __init__(self, server: EnvServer) -> None:
        self.server = server
        self.session: Session | None = None
        self.closing = False

    async def handle(self, text: str) -> str | None:
        """The reply to one message (``None`` for ``close``, which has none)."""
        try:
            message = json.loads(text)
            if not isinstance(message, dict):
                raise ValueError("a message is a JSON object")
        except ValueError as error:
            refused = ProtocolError("INVALID_JSON", str(error))
            return self._reply("error", self.server.refused(refused))
        kind, data = message.get("type", ""), message.get("data") or {}
        try:
            return await self._handle(kind, data, message.get("seq"))
        except ProtocolError as error:
            return self._reply("error", self.server.refused(error))
        except Exception as error:  # the env failed to be made: typed, never a dead socket
            self.server.table.metrics.errors["EXECUTION_ERROR"] += 1
            return self._reply("error", error_payload(error))

    async def _handle(self, kind: str, data: Any, seq: Any) -> str | None:
        server = self.server
        if kind == "open":
            limited = data.get("step_limit", True) is not False
            whole = data.get("multi") is True
            kwargs = data.get("kwargs", {})
            self.session = await server.open(data.get("env_id"), kwargs, limited, whole)
            return self._reply("session", self.session.described)
        if kind == "attach":
            self.session = server.table.get(str(data.get("session")), str(data.get("token")))
            server.table.renew(self.session)
            return self._reply("session", self.session.described)
        if kind == "close":
            self.closing = True
            if self.session is not None:
                await server.table.close(self.session, "client")
            return None
        if self.session is None:  # an OpenEnv client: its first message opens the session
            self.session = await server.open(None, {})
        ok, payload = await server.apply(self.session, kind, data, seq)
        return self._reply(REPLY_TYPES.get(kind, kind) if ok else "error", payload)

    @staticmethod
    def _reply(kind: str, data: dict[str, Any]) -> str:
        return json.dumps({"type": kind, "data": data})


# --------------------------------------------------------------------------- HTTP


def _error_response(payload: dict[str, Any]) -> JSONResponse:
    return JSONResponse({"error": payload}, status_code=CODES.get(payload["code"], 500))


async def _http(request: Request, kind: str) -> Response:
    """``/reset``, ``/step``, ``/state`` and ``/close`` over HTTP: the session named by the
    ``X-Session-Id`` and ``X-Session-Token`` headers (a reset without them opens one, and
    answers them as headers: the body stays OpenEnv's)."""
    server: EnvServer = request.app.state.server
    try:
        if not server.authorized(request.headers):
            raise ProtocolError("UNAUTHORIZED", "a valid 'Authorization: Bearer TOKEN' is needed")
        body = await _body(request)
        session = await _http_session(server, request, kind, body)
        if kind == "close":
            await server.table.close(session, "client")
            return JSONResponse({}, headers=_session_headers(session))
        data = body.get("action", {}) if kind == "step" else body
        data = {k: v for k, v in data.items() if k not in ("env_id", "kwargs", "seq")}
        ok, payload = await server.apply(session, kind, data, body.get("seq"))
    except ProtocolError as error:
        return _error_response(server.refused(error))
    if not ok:
        return _error_response(payload)
    return JSONResponse(payload, headers=_session_headers(session))


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw.strip() else {}
    except ValueError as error:
        raise ProtocolError("INVALID_JSON", f"the body is not JSON: {error}") from None
    if not isinstance(body, dict):
        raise ProtocolError("VALIDATION_ERROR", "the body must be a JSON object")
    return body


async def _http_session(
    server: EnvServer, request: Request, kind: str, body: dict[str, Any]
) -> Session:
    session_id = request.headers.get("x-session-id")
    if session_id is not None:
        return server.table.get(session_id, request.headers.get("x-session-token", ""))
    if kind != "reset":
        raise ProtocolError(
            "NO_SESSION",
            f"/{kind} needs the X-Session-Id and X-Session-Token headers that /reset answered",
        )
    return await server.open(body.get("env_id"), body.get("kwargs", {}))


def _session_headers(session: Session) -> dict[str, str]:
    return {"X-Session-Id": session.id, "X-Session-Token": session.token}


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "healthy"})


async def _ready(request: Request) -> Response:
    table = request.app.state.server.table
    body = {"ready": not table.full(), "sessions": len(table), "capacity": table.capacity,
            "draining": table.draining}  # fmt: skip
    return JSONResponse(body, status_code=503 if table.full() else 200)


async def _metrics(request: Request) -> Response:
    server: EnvServer = request.app.state.server
    if not server.authorized(request.headers):
        return _error_response(server.refused(ProtocolError("UNAUTHORIZED", "bearer token")))
    table = server.table
    text = table.metrics.render(len(table), table.capacity, table.draining)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")


async def _schema(request: Request) -> Response:
    value = {"description": "what the model wrote (a string) or a tool call object"}
    observation = {
        "type": "object",
        "properties": {
            "value": {"description": "the env's observation (agentgym.remote.wire encoding)"},
            "info": {"type": "object"},
            "terminated": {"type": "boolean"},
            "truncated": {"type": "boolean"},
        },
    }
    state = {"type": "object", "properties": {"episode_id": {"type": "string"},
             "step_count": {"type": "integer"}}}  # fmt: skip
    action = {"type": "object", "properties": {"value": value}, "required": ["value"]}
    return JSONResponse({"action": action, "observation": observation, "state": state})


async def _metadata(request: Request) -> Response:
    ids = request.app.state.server.options.env_ids
    name = ids[0] if ids else "agentgym"
    description = f"agentgym env server for {', '.join(ids) if ids else 'any registered id'}"
    return JSONResponse({"name": name, "description": description})


def create_app(options: ServerOptions) -> Starlette:
    """The ASGI app of an env server (its reaper runs while the app does)."""
    server = EnvServer(options)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        reaper = asyncio.create_task(server.table.run_reaper())
        try:
            yield
        finally:
            reaper.cancel()
            await server.table.close_all("shutdown")

    def route(kind: str) -> Callable[[Request], Awaitable[Response]]:
        return functools.partial(_http, kind=kind)  # Starlette knows a partial is async

    app = Starlette(
        routes=[
            WebSocketRoute("/ws", _websocket),
            Route("/reset", route("reset"), methods=["POST"]),
            Route("/step", route("step"), methods=["POST"]),
            Route("/state", route("state"), methods=["GET"]),
            Route("/close", route("close"), methods=["POST"]),
            Route("/health", _health),
            Route("/ready", _ready),
            Route("/metrics", _metrics),
            Route("/schema", _schema),
            Route("/metadata", _metadata),
        ],
        lifespan=lifespan,
    )
    app.state.server = server
    return app


# --------------------------------------------------------------------------- running it


def serve(options: ServerOptions, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until SIGINT, or SIGTERM and the drain. Prints the URL once listening
    (port 0: an ephemeral port, the printed one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections wait in the backlog from now on, not refused
    app = create_app(options)
    config = uvicorn.Config(
        app, log_level="warning", ws_max_size=256 * 2**20, timeout_graceful_shutdown=5
    )
    server = DrainingServer(config, app.state.server.table, options.drain_s)
    print(f"agentgym serve-env: listening on http://{host}:{sock.getsockname()[1]}", flush=True)
    server.run(sockets=[sock])


class DrainingServer(uvicorn.Server):
    """uvicorn's server, but a first SIGTERM drains: ``/ready`` answers 503, no new session
    or episode starts, and the process exits once no episode is in progress (or after
    ``drain_s``). A second SIGTERM, or SIGINT, stops at once."""

    def __init__(self, config: uvicorn.Config, table: SessionTable, drain_s: float) -> None:
        super().__init__(config)
        self.table, self.drain_s = table, drain_s
        self.drain_deadline: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGTERM and self.drain_deadline is None:
            self.table.draining = True
            self.drain_deadline = time.monotonic() + self.drain_s
            return
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self.drain_deadline is not None and (
            self.table.idle() or time.monotonic() >= self.drain_deadline
        ):
            return True
        return await super().on_tick(counter)
