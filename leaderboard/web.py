"""What every route of the server shares: its limits, its one error type, the services a route
reads from the app, and the checks a request passes before a route acts on it (parameters,
token, rate, upload size).

Each check raises :class:`ApiError`, a status and a one-line reason, which the server's error
handlers turn into JSON under ``/api/`` and an error page elsewhere.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentgym.errors import AgentGymError

from .bundle import BundleLimits
from .checker import Checker
from .pages import Links, Site
from .store import AuthError, Scope, Store, Token

__all__ = [
    "ApiError",
    "AppServices",
    "RateLimit",
    "ServerLimits",
    "Services",
    "authorize",
    "bundle_part",
    "get_services",
    "plain_parameters",
    "read_capped",
    "uploaded_bundle",
]

MULTIPART_OVERHEAD = 64 << 10
"""What a multipart body may hold beyond the bundle itself (boundaries, part headers)."""
CLOSE = {"Connection": "close"}
"""On a refused upload: the server closes the connection instead of draining the rest."""


@dataclass(frozen=True)
class ServerLimits:
    """What one token may send.

    Attributes:
        bundle: the limits a bundle is read under; its ``max_bytes`` caps an upload.
        submissions: how many uploads one token may make per ``window_seconds`` (refused
            uploads count: a token cannot make the server read bundles without end).
        window_seconds: the rate limit's window.
    """

    bundle: BundleLimits = field(default_factory=BundleLimits)
    submissions: int = 20
    window_seconds: float = 3600.0

    @property
    def max_upload(self) -> int:
        return self.bundle.max_bytes + MULTIPART_OVERHEAD


class ApiError(AgentGymError):
    """An HTTP error with a one-line reason (and headers, such as ``Retry-After``)."""

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.headers = headers or {}


class RateLimit:
    """At most ``limits.submissions`` uploads per token per window: those this process saw
    (refused ones included) and those the store holds (which outlive a restart)."""

    def __init__(self, store: Store, limits: ServerLimits) -> None:
        self.store = store
        self.limits = limits
        self._seen: defaultdict[int, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def take(self, token: Token) -> None:
        window = self.limits.window_seconds
        now = time.monotonic()
        since = datetime.now(UTC) - timedelta(seconds=window)
        stored = self.store.submissions_since(token, since)
        with self._lock:
            seen = self._seen[token.id]
            while seen and seen[0] <= now - window:
                seen.popleft()
            if max(len(seen), stored) >= self.limits.submissions:
                wait = int(window - (now - seen[0])) + 1 if seen else int(window)
                raise ApiError(
                    429,
                    f"token {token.name!r} sent {self.limits.submissions} bundles in the last "
                    f"{window:g} s, its limit; try again later",
                    {"Retry-After": str(max(wait, 1))},
                )
            seen.append(now)


@dataclass(frozen=True)
class Services:
    """What the routes of one app work with (``app.state.services``): one per app, so two
    apps over two stores in one process never share a checker or a rate limit."""

    store: Store
    site: Site
    checker: Checker
    rate: RateLimit
    limits: ServerLimits
    links: Links
    seed: int


def get_services(request: Request) -> Services:
    """The services of the app that received ``request`` (a route's dependency)."""
    found: Services = request.app.state.services
    return found


AppServices = Annotated[Services, Depends(get_services)]
"""A route's parameter for the app's :class:`Services`."""


def authorize(store: Store, request: Request, scope: Scope) -> Token:
    """The request's bearer token if it may act in ``scope``: 401 without one or with an
    unknown or revoked one, 403 with one that lacks the scope."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise ApiError(
            401,
            "a write needs a token: Authorization: Bearer TOKEN",
            {"WWW-Authenticate": "Bearer"},
        )
    try:
        return store.authorize(value.strip(), scope)
    except AuthError as error:
        status = 403 if error.reason == "lacks scope" else 401
        raise ApiError(status, str(error), {"WWW-Authenticate": "Bearer"}) from None


def plain_parameters(request: Request) -> None:
    """Refuse (422) a path or query parameter holding a NUL character, before any route reads
    it: no name or id holds one, and PostgreSQL cannot even be asked about one."""
    for name, value in [*request.path_params.items(), *request.query_params.multi_items()]:
        if "\x00" in str(value):
            raise ApiError(422, f"the parameter {name[:40]!r} holds a NUL character")


async def read_capped(request: Request, cap: int) -> bytes:
    """The request's body, refused (413) by its declared length or once more than ``cap``
    bytes have arrived: an oversized upload is never read whole."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise ApiError(400, f"Content-Length {declared[:40]!r} is not a byte count")
        if int(declared) > cap:
            raise ApiError(413, f"the upload is {int(declared):,} bytes; at most {cap:,}", CLOSE)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise ApiError(413, f"the upload passed {cap:,} bytes; at most {cap:,}", CLOSE)
    return bytes(body)


async def bundle_part(request: Request, body: bytes, cap: int) -> bytes:
    """The bytes of the multipart field ``bundle`` of a body already read."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ApiError(400, "send the bundle as multipart/form-data, in a field named 'bundle'")
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        form = await Request(request.scope, receive).form(
            max_files=1, max_fields=8, max_part_size=cap
        )
    except StarletteHTTPException as error:
        raise ApiError(400, f"malformed multipart body: {error.detail}") from None
    try:
        part = form.get("bundle")
        if not isinstance(part, UploadFile):
            raise ApiError(400, "no file in the multipart field 'bundle'")
        return await part.read()
    finally:
        await form.close()


async def uploaded_bundle(
    request: Request, services: Services, scope: Scope
) -> tuple[Token, bytes]:
    """An upload's token and bundle bytes: authorized for ``scope``, within the token's rate
    (refused uploads count), and read under the size cap, in that order."""
    token = await run_in_threadpool(authorize, services.store, request, scope)
    await run_in_threadpool(services.rate.take, token)
    body = await read_capped(request, services.limits.max_upload)
    return token, await bundle_part(request, body, services.limits.max_upload)
