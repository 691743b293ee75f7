"""The submissions API: a bundle in, a submission's status and episodes out, and the admin's
re-scores and verifications.

::

    POST /api/v1/submissions                     a bundle (multipart field 'bundle'); token: submit
    GET  /api/v1/submissions/{id}                status, reason, tier, numbers, check history
    GET  /api/v1/submissions/{id}/episodes       how the board counted each episode
    GET  /api/v1/submissions/{id}/episodes/{e}   one episode: its row and its stored record
    POST /api/v1/submissions/{id}/rescore        check it again (a new history row); token: admin
    POST /api/v1/submissions/{id}/verifications  a maintainer's re-run: verified or flagged
    POST /api/v1/rescore                         re-score what another scorer version judged
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ..bundle import BundleRejected, read_bundle
from ..checker import Checker, queue_stale
from ..rescore import check_users
from ..store import BenchmarkRecord, Store, Token
from ..verification import verify_rerun
from ..web import ApiError, AppServices, ServerLimits, authorize, uploaded_bundle

__all__ = ["router"]

router = APIRouter()


@router.post("/api/v1/submissions", status_code=202)
async def submit(request: Request, services: AppServices) -> JSONResponse:
    token, data = await uploaded_bundle(request, services, "submit")
    result, new = await run_in_threadpool(
        _accept, services.store, services.checker, data, token, services.limits
    )
    return JSONResponse(result, status_code=202 if new else 200)


@router.get("/api/v1/submissions/{submission_id}")
def submission(submission_id: str, services: AppServices) -> dict[str, Any]:
    data = services.site.entry(submission_id).to_dict()
    data["check_error"] = services.checker.errors.get(submission_id)
    return data


@router.get("/api/v1/submissions/{submission_id}/episodes")
def episodes(submission_id: str, services: AppServices) -> dict[str, Any]:
    view = services.site.entry(submission_id)
    return {
        "submission": submission_id,
        "checked": view.latest is not None,
        "episodes": [e.to_dict() for e in view.episodes],
    }


@router.get("/api/v1/submissions/{submission_id}/episodes/{episode_id:path}")
def episode(submission_id: str, episode_id: str, services: AppServices) -> dict[str, Any]:
    return services.site.episode(submission_id, episode_id).to_dict()


@router.post("/api/v1/submissions/{submission_id}/rescore", status_code=202)
def check_again(submission_id: str, request: Request, services: AppServices) -> dict[str, Any]:
    token = authorize(services.store, request, "admin")
    found = services.store.submission(submission_id)
    services.checker.submit(found.id, actor=token.name, again=True)
    return {"id": found.id, "status": found.status, "queued": True}


@router.post("/api/v1/submissions/{submission_id}/verifications")
async def verification(
    submission_id: str, request: Request, services: AppServices
) -> dict[str, Any]:
    token, data = await uploaded_bundle(request, services, "admin")  # an upload like any other
    return await run_in_threadpool(
        verify_rerun,
        services.store,
        submission_id,
        data,
        actor=token.name,
        limits=services.limits,
        seed=services.seed,
        history=services.checker.history,
    )


@router.post("/api/v1/rescore", status_code=202)
def rescore_stale(
    request: Request, services: AppServices, benchmark: str | None = None
) -> dict[str, Any]:
    token = authorize(services.store, request, "admin")
    queued = queue_stale(services.store, services.checker, benchmark=benchmark, actor=token.name)
    return {"queued": queued}


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
