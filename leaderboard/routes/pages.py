"""The HTML pages: every benchmark, a board, an entry, one episode, two entries compared.

::

    GET  /  /b/{name}  /s/{id}  /s/{id}/e/{e}  /compare?a=&b=

The views and templates are :mod:`agentgym.leaderboard.pages`'; the static export renders
the same ones, so a page served and a page on disk show the same numbers.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse

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
) -> HTMLResponse:
    site = services.site
    view = site.board(
        name, version=version, tiers=tier or DEFAULT_TIERS, metric=metric, method=method
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
