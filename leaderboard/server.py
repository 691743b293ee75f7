"""The leaderboard's server: a REST API that takes bundles and serves boards, and the pages.

::

    POST /api/v1/submissions                     a bundle (multipart field 'bundle'); token: submit
    GET  /api/v1/submissions/{id}                status, reason, tier, numbers, check history
    GET  /api/v1/submissions/{id}/episodes       how the board counted each episode
    GET  /api/v1/submissions/{id}/episodes/{e}   one episode: its row and its stored record
    POST /api/v1/submissions/{id}/rescore        check it again (a new history row); token: admin
    POST /api/v1/submissions/{id}/verifications  a maintainer's re-run (multipart 'bundle'):
                                                 verified or flagged; token: admin
    POST /api/v1/rescore                         re-score every submission judged by another
                                                 scorer version (?benchmark=NAME); token: admin
    GET  /api/v1/benchmarks                      the registered benchmarks
    GET  /api/v1/benchmarks/{name}/board         ?tier=&metric=&method=&version=
    GET  /  /b/{name}  /s/{id}  /s/{id}/e/{e}  /compare?a=&b=     the pages

Reads are public, writes need ``Authorization: Bearer TOKEN`` (:meth:`Store.authorize`). Every
error is an HTTP status with a one-line ``detail`` (the API) or an error page, never a 200 with
an error inside: 400 a malformed request, 401 no token or an unknown or revoked one, 403 a
token without the scope, 404, 409, 413 an upload over the cap, 422 a refused bundle or
parameter, 429 a token over its rate.

**A submission's way.** The upload is refused before it is read when its ``Content-Length``
is over the cap, and as soon as the bytes read pass it otherwise; the bundle is read
(:func:`~agentgym.leaderboard.bundle.read_bundle`: a bundle that does not read is a 422 and
nothing is stored), matched to a registered benchmark by its spec hash, stored, and recorded
(the same bundle twice is the submission already there: 200 instead of 202). A single
:class:`~agentgym.leaderboard.checker.Checker` thread then re-scores submissions one at a
time, in order: ``received`` → ``checking`` → ``scored`` (with the re-score) or ``rejected``
(with the reason). A check that fails for a reason of the server's own (an env that cannot start) is
not the submitter's fault: the submission goes back to ``received``, the error is shown on
its page, and it is checked again when the server restarts or an admin asks.

**Verified.** A maintainer re-runs the submitted agent with the same spec and uploads the
re-run's bundle (:func:`~agentgym.leaderboard.verification.verify_rerun`, inline in the
request): same benchmark, same manifest ``agent`` and ``agent_options``, replayed, and
paired with the submission's latest re-score.
When the paired difference's 95% intervals (success and score) both include 0, the
submission gets a new history row of tier ``verified`` (its own episodes, unchanged, and a
flag naming the re-run and the difference); otherwise a row with the same tier and a flag
saying the re-run differs.

**A new scorer version.** At start (and on ``POST /api/v1/rescore``) every scored submission
whose latest re-score was judged by another :func:`~agentgym.leaderboard.rescore.scorer_version`
than the current one is queued for a re-score: a new history row, the old ones kept.

**Where the code is.** This module assembles the app: its lifespan (the checker), its
security headers and its error handlers. The routes are in :mod:`agentgym.leaderboard.routes`
(one router per area), what they share (limits, tokens, uploads) in
:mod:`agentgym.leaderboard.web`, the checker in :mod:`agentgym.leaderboard.checker` and the
verification in :mod:`agentgym.leaderboard.verification`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentgym.errors import AgentGymError, UsageError

from .bundle import BundleRejected
from .checker import VERIFIED_FLAG, Checker, queue_stale
from .pages import CSP, Links, Site
from .routes import ROUTERS
from .store import ConflictError, NotFoundError, Store
from .verification import verify_rerun
from .web import ApiError, RateLimit, ServerLimits, Services, plain_parameters

__all__ = [
    "VERIFIED_FLAG",
    "ApiError",
    "Checker",
    "ServerLimits",
    "create_app",
    "queue_stale",
    "verify_rerun",
]

log = logging.getLogger(__name__)


def create_app(
    store: Store,
    *,
    limits: ServerLimits | None = None,
    replay: bool = True,
    seed: int = 0,
) -> FastAPI:
    """The leaderboard's ASGI app over ``store`` (migrated, benchmarks registered).

    Args:
        store: the database and bundle folder; the app does not close it.
        limits: upload size and rate limits.
        replay: re-score by replaying episodes (False: format checks only: self-reported).
        seed: the bootstrap's seed for every board.

    ``app.state.checker`` is the :class:`Checker` (closed at the app's shutdown, or by the
    caller where nothing runs the app's lifespan), ``app.state.site`` the
    :class:`~agentgym.leaderboard.pages.Site` and ``app.state.services`` every service the
    routes read (:class:`~agentgym.leaderboard.web.Services`).
    """
    limits = limits or ServerLimits()
    services = Services(
        store=store,
        site=Site(store, bundle_limits=limits.bundle, seed=seed),
        checker=Checker(store, limits=limits.bundle, replay=replay),
        rate=RateLimit(store, limits),
        limits=limits,
        links=Links(),
        seed=seed,
    )
    app = FastAPI(
        title="agentgym leaderboard",
        lifespan=_lifespan,
        dependencies=[Depends(plain_parameters)],
        docs_url=None,  # Swagger UI loads its script from a CDN: the schema alone, offline
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.services = services
    app.state.store, app.state.site, app.state.checker = store, services.site, services.checker
    _install_errors(app)
    app.middleware("http")(_security_headers)
    for router in ROUTERS:
        app.include_router(router)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Take up what a stopped server left unchecked and what another scorer version judged;
    close the checker at shutdown."""
    services: Services = app.state.services
    await run_in_threadpool(services.checker.start, resume=True)
    await run_in_threadpool(queue_stale, services.store, services.checker)
    try:
        yield
    finally:
        await run_in_threadpool(services.checker.close)


async def _security_headers(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    """No sniffing, no referrer, and the pages' Content-Security-Policy on every answer."""
    response = await call_next(request)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("Content-Security-Policy", CSP)
    return response


# ---------------------------------------------------------------------------------------------
# Errors


_STATUS_OF: list[tuple[type[Exception], int]] = [
    (NotFoundError, 404),
    (ConflictError, 409),
    (BundleRejected, 422),
    (UsageError, 422),
]
_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Too large",
    422: "Refused",
    429: "Too many requests",
    500: "Server error",
}


def _answer(
    request: Request, status: int, reason: str, headers: Mapping[str, str] | None = None
) -> Response:
    """An error as a status and one line: JSON ``{"detail": ...}`` under /api/, a page
    elsewhere."""
    reason = " ".join(reason.split())[:1000] or _TITLES.get(status, "error")
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": reason}, status_code=status, headers=headers)
    services: Services = request.app.state.services
    html = services.site.render(
        "error.html", services.links, status=status, title=_TITLES.get(status, ""), reason=reason
    )
    return HTMLResponse(html, status_code=status, headers=headers)


async def _api_error(request: Request, error: ApiError) -> Response:
    return _answer(request, error.status, str(error), error.headers)


async def _agentgym_error(request: Request, error: AgentGymError) -> Response:
    status = next((s for kind, s in _STATUS_OF if isinstance(error, kind)), 500)
    if status == 500:
        log.error("%s on %s: %s", type(error).__name__, request.url.path, error)
    return _answer(request, status, str(error))


async def _http_error(request: Request, error: StarletteHTTPException) -> Response:
    return _answer(request, error.status_code, str(error.detail), error.headers)


async def _unexpected(request: Request, error: Exception) -> Response:
    # Logged by the server as well; the client gets the kind of failure, not its text.
    return _answer(request, 500, f"the server failed ({type(error).__name__})")


async def _invalid(request: Request, error: RequestValidationError) -> Response:
    problems = [
        f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in error.errors()
    ]
    return _answer(request, 422, "; ".join(problems))


def _install_errors(app: FastAPI) -> None:
    """Every error as a status and one line (:func:`_answer`)."""
    app.exception_handler(ApiError)(_api_error)
    app.exception_handler(AgentGymError)(_agentgym_error)
    app.exception_handler(StarletteHTTPException)(_http_error)
    app.exception_handler(Exception)(_unexpected)
    app.exception_handler(RequestValidationError)(_invalid)
