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
:class:`Checker` thread then re-scores submissions one at a time, in order:
``received`` → ``checking`` → ``scored`` (with the re-score) or ``rejected`` (with the
reason). A check that fails for a reason of the server's own (an env that cannot start) is
not the submitter's fault: the submission goes back to ``received``, the error is shown on
its page, and it is checked again when the server restarts or an admin asks.

**Verified.** A maintainer re-runs the submitted agent with the same spec and uploads the
re-run's bundle (:func:`verify_rerun`, inline in the request): same benchmark, same manifest
``agent`` and ``agent_options``, replayed, and paired with the submission's latest re-score.
When the paired difference's 95% intervals (success and score) both include 0, the
submission gets a new history row of tier ``verified`` (its own episodes, unchanged, and a
flag naming the re-run and the difference); otherwise a row with the same tier and a flag
saying the re-run differs.

**A new scorer version.** At start (and on ``POST /api/v1/rescore``) every scored submission
whose latest re-score was judged by another :func:`~agentgym.leaderboard.rescore.scorer_version`
than the current one is queued for a re-score: a new history row, the old ones kept.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentgym.errors import AgentGymError, UsageError
from agentgym.eval.plan import Benchmark

from .bundle import BundleLimits, BundleRejected, read_bundle
from .pages import CSP, DEFAULT_TIERS, Links, Site
from .ranking import PairedComparison, paired
from .rescore import check_users, rescore, scorer_version
from .results import Rescore
from .store import (
    AuthError,
    BenchmarkRecord,
    ConflictError,
    NotFoundError,
    Scope,
    Store,
    SubmissionRecord,
    Token,
)

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

MULTIPART_OVERHEAD = 64 << 10
"""What a multipart body may hold beyond the bundle itself (boundaries, part headers)."""
CLOSE = {"Connection": "close"}
"""On a refused upload: the server closes the connection instead of draining the rest."""
VERIFIED_FLAG = "verified by re-run "
"""How the flag of a verification that matched begins (a re-score carries it over)."""


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


# ---------------------------------------------------------------------------------------------
# The checker


class Checker:
    """One thread that re-scores submissions, one at a time, in the order they were asked.

    Started on the first :meth:`submit` (or by the app's startup, which also takes up what a
    stopped server left ``received`` or ``checking``); :meth:`close` stops it after the
    check in progress.
    """

    def __init__(self, store: Store, *, limits: BundleLimits, replay: bool = True) -> None:
        self.store = store
        self.limits = limits
        self.replay = replay
        self.errors: dict[str, str] = {}
        """The last check that could not run, per submission (shown on its page)."""
        self._queue: queue.Queue[tuple[str, str, bool] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.history = threading.Lock()
        """Held from reading a submission's latest re-score to adding the row built on it
        (here and in :func:`verify_rerun`), so no row is built on one that is no longer the
        latest."""

    def start(self, *, resume: bool = False) -> None:
        with self._lock:
            if self._closed:
                raise UsageError("the checker is closed")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="agentgym-leaderboard-checker", daemon=True
                )
                self._thread.start()
        if resume:
            for status in ("checking", "received"):
                for submission in self.store.submissions(status=status):
                    self._queue.put((submission.id, "system", False))

    def submit(self, submission_id: str, *, actor: str = "system", again: bool = False) -> None:
        """Check a submission (``again``: one that was checked before: a new history row)."""
        self.start()
        self._queue.put((submission_id, actor, again))

    def wait(self, timeout: float = 60.0) -> bool:
        """Block until every asked check is done; False if ``timeout`` passed first."""
        done = self._queue.all_tasks_done
        deadline = time.monotonic() + timeout
        with done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                done.wait(left)
        return True

    def close(self, timeout: float = 60.0) -> None:
        """Stop after the check in progress (idempotent); unstarted checks stay ``received``
        in the store, for the next start."""
        with self._lock:
            self._closed, thread = True, self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            thread.join(timeout)

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None or self._closed:
                    return
                self._check(*job)
            except Exception as error:  # a store that fails under the checker: serve the rest
                log.exception("checking %s failed", job[0] if job else None)
                if job is not None:  # shown on its page; checked again at the next start
                    self.errors[job[0]] = f"{type(error).__name__}: {error}".splitlines()[0]
            finally:
                self._queue.task_done()

    def _check(self, submission_id: str, actor: str, again: bool) -> None:
        submission = self.store.submission(submission_id)
        if not again and submission.status not in ("received", "checking"):
            return  # already done (asked twice, or taken up at start and asked again)
        keep_status = again and submission.status == "scored"  # stays on the board meanwhile
        if not keep_status:
            self.store.set_status(submission_id, "checking", actor=actor)
        try:
            bundle = read_bundle(self.store.get_blob(submission.bundle_sha), self.limits)
            record = self.store.benchmark(submission.benchmark, submission.benchmark_version)
            result = rescore(bundle, Benchmark.from_dict(record.spec), replay=self.replay)
        except BundleRejected as error:
            self.errors.pop(submission_id, None)
            self.store.set_status(submission_id, "rejected", reason=str(error), actor=actor)
            return
        except Exception as error:  # the server's failure, not the submitter's
            log.exception("could not check submission %s", submission_id)
            self.errors[submission_id] = f"{type(error).__name__}: {error}".splitlines()[0]
            if not keep_status:
                self.store.set_status(submission_id, "received", actor=actor)
            return
        self.errors.pop(submission_id, None)
        with self.history:
            previous = self.store.latest_rescore(submission_id) if again else None
            if previous is not None and previous.tier == "verified" and result.tier == "re-scored":
                result = _carry_verification(previous, result)
            self.store.add_rescore(submission_id, result, actor=actor)


def _carry_verification(previous: Rescore, result: Rescore) -> Rescore:
    """A re-score of a verified submission: still ``verified`` (with the verification's flag)
    when every episode's verdict is what it was; else ``re-scored``, flagged to verify again."""

    def verdicts(rescore: Rescore) -> list[tuple[str, str, bool, float]]:
        return [(e.episode_id, e.outcome, e.passed, e.score) for e in rescore.episodes]

    if verdicts(previous) == verdicts(result):
        kept = [f for f in previous.flags if f.startswith(VERIFIED_FLAG)]
        return replace(result, tier="verified", flags=[*result.flags, *kept])
    flag = (
        f"was verified by a re-run under scorer {previous.scorer_version!r}; verdicts changed "
        f"under this scorer: verify again"
    )
    return replace(result, flags=[*result.flags, flag])


# ---------------------------------------------------------------------------------------------
# Rate limit


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


# ---------------------------------------------------------------------------------------------
# The app


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
    caller where nothing runs the app's lifespan) and ``app.state.site`` the
    :class:`~agentgym.leaderboard.pages.Site`.
    """
    limits = limits or ServerLimits()
    site = Site(store, bundle_limits=limits.bundle, seed=seed)
    checker = Checker(store, limits=limits.bundle, replay=replay)
    rate = RateLimit(store, limits)
    links = Links()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        await run_in_threadpool(checker.start, resume=True)
        await run_in_threadpool(queue_stale, store, checker)
        try:
            yield
        finally:
            await run_in_threadpool(checker.close)

    app = FastAPI(
        title="agentgym leaderboard",
        lifespan=lifespan,
        dependencies=[Depends(_plain_parameters)],
        docs_url=None,  # Swagger UI loads its script from a CDN: the schema alone, offline
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.store, app.state.site, app.state.checker = store, site, checker
    _install_errors(app, site, links)

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Any]) -> Response:
        response: Response = await call_next(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Content-Security-Policy", CSP)
        return response

    def authorize(request: Request, scope: Scope) -> Token:
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

    # -- API: submissions ------------------------------------------------------------------

    @app.post("/api/v1/submissions", status_code=202)
    async def submit(request: Request) -> JSONResponse:
        token = await run_in_threadpool(authorize, request, "submit")
        await run_in_threadpool(rate.take, token)
        body = await _read_capped(request, limits.max_upload)
        data = await _bundle_part(request, body, limits.max_upload)
        result, new = await run_in_threadpool(_accept, store, checker, data, token, limits)
        return JSONResponse(result, status_code=202 if new else 200)

    @app.get("/api/v1/submissions/{submission_id}")
    def submission(submission_id: str) -> dict[str, Any]:
        data = site.entry(submission_id).to_dict()
        data["check_error"] = checker.errors.get(submission_id)
        return data

    @app.get("/api/v1/submissions/{submission_id}/episodes")
    def episodes(submission_id: str) -> dict[str, Any]:
        view = site.entry(submission_id)
        return {
            "submission": submission_id,
            "checked": view.latest is not None,
            "episodes": [e.to_dict() for e in view.episodes],
        }

    @app.get("/api/v1/submissions/{submission_id}/episodes/{episode_id:path}")
    def episode(submission_id: str, episode_id: str) -> dict[str, Any]:
        return site.episode(submission_id, episode_id).to_dict()

    @app.post("/api/v1/submissions/{submission_id}/rescore", status_code=202)
    def check_again(submission_id: str, request: Request) -> dict[str, Any]:
        token = authorize(request, "admin")
        found = store.submission(submission_id)
        checker.submit(found.id, actor=token.name, again=True)
        return {"id": found.id, "status": found.status, "queued": True}

    @app.post("/api/v1/submissions/{submission_id}/verifications")
    async def verification(submission_id: str, request: Request) -> dict[str, Any]:
        token = await run_in_threadpool(authorize, request, "admin")
        await run_in_threadpool(rate.take, token)  # a re-run is an upload like any other
        body = await _read_capped(request, limits.max_upload)
        data = await _bundle_part(request, body, limits.max_upload)
        return await run_in_threadpool(
            verify_rerun,
            store,
            submission_id,
            data,
            actor=token.name,
            limits=limits,
            seed=seed,
            history=checker.history,
        )

    @app.post("/api/v1/rescore", status_code=202)
    def rescore_stale(request: Request, benchmark: str | None = None) -> dict[str, Any]:
        token = authorize(request, "admin")
        queued = queue_stale(store, checker, benchmark=benchmark, actor=token.name)
        return {"queued": queued}

    # -- API: boards ---------------------------------------------------------------------------

    @app.get("/api/v1/benchmarks")
    def benchmarks() -> dict[str, Any]:
        return {"benchmarks": [view.to_dict() for view in site.benchmarks()]}

    @app.get("/api/v1/benchmarks/{name}/board")
    def board(
        name: str,
        tier: list[str] = Query(default=[]),  # noqa: B008 - FastAPI's way of a list parameter
        metric: str = "success",
        method: str | None = None,
        version: int | None = None,
    ) -> Response:
        view = site.board(
            name, version=version, tiers=tier or DEFAULT_TIERS, metric=metric, method=method
        )
        body = site.kept_output("json", view, lambda: json.dumps(view.to_dict()).encode())
        return Response(body, media_type="application/json")

    # -- pages -----------------------------------------------------------------------------------

    def page(template: str, **context: Any) -> HTMLResponse:
        return HTMLResponse(site.render(template, links, **context))

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return page("index.html", benchmarks=site.benchmarks())

    @app.get("/b/{name}", response_class=HTMLResponse)
    def board_page(
        name: str,
        tier: list[str] = Query(default=[]),  # noqa: B008
        metric: str = "success",
        method: str | None = None,
        version: int | None = None,
    ) -> HTMLResponse:
        view = site.board(
            name, version=version, tiers=tier or DEFAULT_TIERS, metric=metric, method=method
        )
        return HTMLResponse(site.render_view("board.html", links, view))

    @app.get("/s/{submission_id}", response_class=HTMLResponse)
    def entry_page(submission_id: str) -> HTMLResponse:
        view = site.entry(submission_id)
        return page("entry.html", view=view, check_error=checker.errors.get(submission_id))

    @app.get("/s/{submission_id}/e/{episode_id:path}", response_class=HTMLResponse)
    def episode_page(submission_id: str, episode_id: str) -> HTMLResponse:
        return page("episode.html", view=site.episode(submission_id, episode_id))

    @app.get("/compare", response_class=HTMLResponse)
    def compare_page(a: str, b: str) -> HTMLResponse:
        return page("compare.html", view=site.compare(a, b))

    return app


# ---------------------------------------------------------------------------------------------
# Scorer versions and verifications


def queue_stale(
    store: Store, checker: Checker, *, benchmark: str | None = None, actor: str = "system"
) -> list[str]:
    """Queue a re-score of every scored submission (of ``benchmark`` if given) whose latest
    re-score was judged by another scorer version than the current one; their ids.

    A server that does not replay (``--self-reported``) queues none: its rows would replace
    replayed ones with unreplayed ones."""
    if not checker.replay:
        return []
    current = {
        (record.name, record.version): scorer_version(Benchmark.from_dict(record.spec))
        for record in store.benchmarks()
        if benchmark is None or record.name == benchmark
    }
    if benchmark is not None and not current:
        raise NotFoundError(f"no benchmark {benchmark!r} is registered")
    queued = []
    for submission_id, name, version, judged_by in store.latest_scorer_versions(benchmark):
        now = current.get((name, version))
        if now is not None and judged_by != now:
            checker.submit(submission_id, actor=actor, again=True)
            queued.append(submission_id)
    if queued:
        log.info("re-scoring %d submissions judged by another scorer version", len(queued))
    return queued


def verify_rerun(
    store: Store,
    submission_id: str,
    data: bytes,
    *,
    actor: str,
    limits: ServerLimits,
    seed: int = 0,
    history: threading.Lock | None = None,
) -> dict[str, Any]:
    """Compare a maintainer's re-run (a bundle's bytes) with a scored submission and record
    the outcome as a new history row: tier ``verified`` when the paired differences' intervals
    include 0, the same tier and a flag saying the re-run differs otherwise.

    Raises :class:`ApiError`: 409 when the submission is not scored by replay, 422 when the
    re-run does not read, is of another benchmark or agent spec, or is refused by the check.
    ``history`` is the checker's lock (:attr:`Checker.history`): the comparison is made with,
    and its row added after, the submission's latest re-score at that moment.
    """
    submission = store.submission(submission_id)
    _comparable(submission, store.latest_rescore(submission_id))
    try:
        bundle = read_bundle(data, limits.bundle)
    except BundleRejected as error:
        raise ApiError(422, f"re-run refused: {error}") from None
    record = store.benchmark(submission.benchmark, submission.benchmark_version)
    if bundle.manifest.get("benchmark_hash") != record.spec_hash:
        raise ApiError(
            422,
            f"re-run refused: it is not a run of {record.name} v{record.version} (its spec "
            f"hash is {str(bundle.manifest.get('benchmark_hash'))[:12]}...)",
        )
    for key in ("agent", "agent_options"):
        theirs, ours = bundle.manifest.get(key), submission.manifest.get(key)
        if theirs != ours:
            raise ApiError(
                422,
                f"re-run refused: its manifest's {key} is {str(theirs)[:200]!r}, the "
                f"submission's is {str(ours)[:200]!r} (a re-run must use the same agent spec)",
            )
    try:
        rerun = rescore(bundle, Benchmark.from_dict(record.spec))
    except BundleRejected as error:
        raise ApiError(422, f"re-run refused: {error}") from None
    sha = store.put_blob(data, actor=actor)
    with history or threading.Lock():
        submission = store.submission(submission_id)
        latest = _comparable(submission, store.latest_rescore(submission_id))
        return _record_verification(store, submission_id, latest, rerun, sha, actor, seed)


def _comparable(submission: SubmissionRecord, latest: Rescore | None) -> Rescore:
    """The latest re-score a re-run can be compared with; 409 when there is none."""
    if submission.status != "scored" or latest is None:
        raise ApiError(409, f"submission {submission.id} is {submission.status}, not scored")
    if latest.tier == "self-reported":
        raise ApiError(409, f"submission {submission.id} is self-reported: nothing to compare")
    return latest


def _record_verification(
    store: Store,
    submission_id: str,
    latest: Rescore,
    rerun: Rescore,
    sha: str,
    actor: str,
    seed: int,
) -> dict[str, Any]:
    """The paired comparison of ``rerun`` with ``latest``, stored as a new history row."""
    difference = paired(latest.episodes, rerun.episodes, seed=seed, a=submission_id, b=sha)
    verified = not (difference.separable("success") or difference.separable("score"))
    shown = _difference(difference)
    if verified:
        flag = f"{VERIFIED_FLAG}{sha[:12]} by {actor}: {shown}"
        kept = [f for f in latest.flags if not f.startswith(VERIFIED_FLAG)]
        result = replace(latest, tier="verified", flags=[*kept, flag])
    else:
        flag = f"re-run {sha[:12]} by {actor} differs, not verified: {shown}"
        result = replace(latest, flags=[*latest.flags, flag])
    rescore_id = store.add_rescore(
        submission_id,
        result,
        actor=actor,
        action="verification.add",
        rerun_bundle=sha,
        verified=verified,
        difference=difference.to_dict(),
    )
    return {
        "id": submission_id,
        "verified": verified,
        "tier": result.tier,
        "flag": flag,
        "rerun_bundle": sha,
        "rescore_id": rescore_id,
        "difference": difference.to_dict(),
        "rerun": {
            "success": sum(e.passed for e in rerun.episodes) / max(len(rerun.episodes), 1),
            "flags": rerun.flags,
        },
    }


def _difference(difference: PairedComparison) -> str:
    """The paired difference re-run - submission, success in points and score, one line."""
    success, score = difference.success, difference.score
    return (
        f"re-run - submission on {difference.shared_episodes} episodes: success "
        f"{100 * success.estimate:+.1f} points [{100 * success.low:+.1f}, "
        f"{100 * success.high:+.1f}], score {score.estimate:+.3f} "
        f"[{score.low:+.3f}, {score.high:+.3f}]"
    )


# ---------------------------------------------------------------------------------------------
# Uploads and parameters


def _plain_parameters(request: Request) -> None:
    """Refuse (422) a path or query parameter holding a NUL character, before any route reads
    it: no name or id holds one, and PostgreSQL cannot even be asked about one."""
    for name, value in [*request.path_params.items(), *request.query_params.multi_items()]:
        if "\x00" in str(value):
            raise ApiError(422, f"the parameter {name[:40]!r} holds a NUL character")


async def _read_capped(request: Request, cap: int) -> bytes:
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


async def _bundle_part(request: Request, body: bytes, cap: int) -> bytes:
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


def _accept(
    store: Store, checker: Checker, data: bytes, token: Token, limits: ServerLimits
) -> tuple[dict[str, Any], bool]:
    """Read, match, store and record a bundle; queue its check if it is new."""
    try:
        bundle = read_bundle(data, limits.bundle)
        check_users(bundle)
    except BundleRejected as error:
        raise ApiError(422, f"bundle refused: {error}") from None
    benchmark = _benchmark_of(store, bundle.manifest)
    sha = store.put_blob(data, actor=token.name)
    found, new = store.add_submission(benchmark, sha, bundle.info, bundle.manifest, token)
    if new:
        checker.submit(found.id, actor=token.name)
    result = {
        "id": found.id,
        "status": found.status,
        "new": new,
        "benchmark": found.benchmark,
        "benchmark_version": found.benchmark_version,
        "page": f"/s/{found.id}",
        "api": f"/api/v1/submissions/{found.id}",
    }
    return result, new


def _benchmark_of(store: Store, manifest: dict[str, Any]) -> BenchmarkRecord:
    """The registered benchmark whose spec hash the run's manifest names (422 if none)."""
    wanted = manifest.get("benchmark_hash")
    registered = store.benchmarks()
    for record in registered:
        if record.spec_hash == wanted:
            return record
    spec = manifest.get("benchmark")
    named = spec.get("name") if isinstance(spec, dict) else None
    boards = ", ".join(f"{r.name} v{r.version}" for r in registered) or "none"
    raise ApiError(
        422,
        f"bundle refused: its benchmark ({str(named)[:80]!r}, spec hash {str(wanted)[:64]}) "
        f"is not on this board; boards: {boards}",
    )


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


def _install_errors(app: FastAPI, site: Site, links: Links) -> None:
    """Every error as a status and one line: JSON ``{"detail": ...}`` under /api/, a page
    elsewhere."""

    def answer(
        request: Request, status: int, reason: str, headers: dict[str, str] | None = None
    ) -> Response:
        reason = " ".join(reason.split())[:1000] or _TITLES.get(status, "error")
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": reason}, status_code=status, headers=headers)
        html = site.render(
            "error.html", links, status=status, title=_TITLES.get(status, ""), reason=reason
        )
        return HTMLResponse(html, status_code=status, headers=headers)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> Response:
        return answer(request, error.status, str(error), error.headers)

    @app.exception_handler(AgentGymError)
    async def agentgym_error(request: Request, error: AgentGymError) -> Response:
        status = next((s for kind, s in _STATUS_OF if isinstance(error, kind)), 500)
        if status == 500:
            log.error("%s on %s: %s", type(error).__name__, request.url.path, error)
        return answer(request, status, str(error))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        return answer(request, error.status_code, str(error.detail), error.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> Response:
        # Logged by the server as well; the client gets the kind of failure, not its text.
        return answer(request, 500, f"the server failed ({type(error).__name__})")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}"
            for e in error.errors()
        ]
        return answer(request, 422, "; ".join(problems))
