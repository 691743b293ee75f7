"""The HTML pages: every benchmark, a board, an entry, one episode, two entries compared.

::

    GET  /  /b/{name}  /s/{id}  /s/{id}/e/{e}  /compare?a=&b=
    GET  /s/{id}/bundle.tar.gz  /s/{id}/episodes.json  /s/{id}/episodes.csv   (downloads)

The views and templates are :mod:`agentgym.leaderboard.pages`'; the static export renders
the same ones, so a page served and a page on disk show the same numbers.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, Response

from ..bundle import public_bundle
from ..downloads import episodes_csv, episodes_json
from ..pages import DEFAULT_TIERS
from ..web import AppServices, Services

__all__ = ["router"]

router = APIRouter()


def _page(services: Services, template: str, **context: Any) -> HTMLResponse:
    return HTMLResponse(services.site.render(template, services.links, **context))


@router.get("/", response_class=HTMLResponse)
def index(services: AppServices) -> HTMLResponse:
    return _page(services, "index.html", benchmarks=services.site.benchmarks())


@router.get("/b/{name}", response_class=HTMLResponse)
def board_page(
    name: str,
    services: AppServices,
    tier: list[str] = Query(default=[]),  # noqa: B008 - FastAPI's way of a list parameter
    metric: str = "success",
    method: str | None = None,
    version: int | None = None,
    family: str | None = None,
) -> HTMLResponse:
    site = services.site
    tiers = tier or DEFAULT_TIERS
    view = site.board(
        name, version=version, tiers=tiers, metric=metric, method=method, family=family
    )
    return HTMLResponse(site.render_view("board.html", services.links, view))


@router.get("/s/{submission_id}", response_class=HTMLResponse)
def entry_page(submission_id: str, services: AppServices) -> HTMLResponse:
    view = services.site.entry(submission_id)
    error = services.checker.errors.get(submission_id)
    return _page(services, "entry.html", view=view, check_error=error)


@router.get("/s/{submission_id}/e/{episode_id:path}", response_class=HTMLResponse)
def episode_page(submission_id: str, episode_id: str, services: AppServices) -> HTMLResponse:
    return _page(services, "episode.html", view=services.site.episode(submission_id, episode_id))


@router.get("/compare", response_class=HTMLResponse)
def compare_page(a: str, b: str, services: AppServices) -> HTMLResponse:
    return _page(services, "compare.html", view=services.site.compare(a, b))


@router.get("/s/{submission_id}/bundle.tar.gz")
def bundle_file(submission_id: str, services: AppServices) -> Response:
    """The bundle as sent, less the maintainers' contact address (see
    :func:`~agentgym.leaderboard.bundle.public_bundle`)."""
    submission = services.store.submission(submission_id)
    data = public_bundle(services.store.get_blob(submission.bundle_sha), services.limits.bundle)
    return _file(data, "application/gzip", f"{submission_id}.bundle.tar.gz")


@router.get("/s/{submission_id}/episodes.json")
def episodes_json_file(submission_id: str, services: AppServices) -> Response:
    view = services.site.entry(submission_id)
    text = episodes_json(submission_id, view.episodes, checked=view.latest is not None)
    return _file(text.encode(), "application/json", f"{submission_id}.episodes.json")


@router.get("/s/{submission_id}/episodes.csv")
def episodes_csv_file(submission_id: str, services: AppServices) -> Response:
    view = services.site.entry(submission_id)
    text = episodes_csv(view.episodes, checked=view.latest is not None)
    return _file(text.encode(), "text/csv; charset=utf-8", f"{submission_id}.episodes.csv")


def _file(data: bytes, media_type: str, name: str) -> Response:
    """A download: saved under ``name`` rather than shown (the id is a uuid: no quoting)."""
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    return Response(data, media_type=media_type, headers=headers)
