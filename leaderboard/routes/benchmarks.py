"""The benchmarks API: the registered benchmarks and each one's board.

::

    GET  /api/v1/benchmarks                      the registered benchmarks
    GET  /api/v1/benchmarks/{name}/board         ?tier=&metric=&method=&version=&family=
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ..pages import DEFAULT_TIERS
from ..web import AppServices

__all__ = ["router"]

router = APIRouter()


@router.get("/api/v1/benchmarks")
def benchmarks(services: AppServices) -> dict[str, Any]:
    return {"benchmarks": [view.to_dict() for view in services.site.benchmarks()]}


@router.get("/api/v1/benchmarks/{name}/board")
def board(
    name: str,
    services: AppServices,
    tier: list[str] = Query(default=[]),  # noqa: B008 - FastAPI's way of a list parameter
    metric: str = "success",
    method: str | None = None,
    version: int | None = None,
    family: str | None = None,
) -> Response:
    site = services.site
    tiers = tier or DEFAULT_TIERS
    view = site.board(
        name, version=version, tiers=tiers, metric=metric, method=method, family=family
    )
    body = site.kept_output("json", view, lambda: json.dumps(view.to_dict()).encode())
    return Response(body, media_type="application/json")
