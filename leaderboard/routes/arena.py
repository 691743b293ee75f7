"""The arena boards: submitted arena matches in (each replayed before it is stored), each
env's board out, as JSON and as a page.

::

    POST /api/v1/arena/submissions        an arena run (multipart field 'bundle': the JSON of
                                          agentgym.leaderboard.arena.arena_payload); token: submit
    GET  /api/v1/arena                    every env with arena matches, and how many
    GET  /api/v1/arena/board?env=ID       the env's ratings: intervals, ranks, tie groups, and
                                          each player's errored matches
    GET  /api/v1/arena/matches?env=ID     every accepted match of the env, as replayed, and
                                          every errored one with the scores the board counts
    GET  /arena   /arena?env=ID           the pages: the boards, one env's board
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool

from ..arena import ArenaRejected, accept_arena, arena_board, arena_matches_json
from ..web import ApiError, AppServices, uploaded_bundle

__all__ = ["router"]

router = APIRouter()


@router.post("/api/v1/arena/submissions", status_code=201)
async def submit_arena(request: Request, services: AppServices) -> JSONResponse:
    token, data = await uploaded_bundle(request, services, "submit")
    try:
        found, new, envs, errored = await run_in_threadpool(
            accept_arena, services.store, data, token
        )
    except ArenaRejected as error:
        raise ApiError(422, f"arena matches refused: {error}") from None
    result = {
        "id": found.id,
        "new": new,
        "matches": found.matches,
        "errored": errored,
        "boards": [services.links.arena(env_id) for env_id in envs],
    }
    return JSONResponse(result, status_code=201 if new else 200)


@router.get("/api/v1/arena")
def arena_envs(services: AppServices) -> dict[str, Any]:
    return {
        "boards": [
            {"env_id": env_id, "matches": count, "page": services.links.arena(env_id)}
            for env_id, count in services.store.arena_envs()
        ]
    }


@router.get("/api/v1/arena/board")
def arena_board_json(env: str, services: AppServices) -> dict[str, Any]:
    return arena_board(services.store, env, seed=services.seed).to_dict()


@router.get("/api/v1/arena/matches")
def arena_matches(env: str, services: AppServices) -> dict[str, Any]:
    return arena_matches_json(services.store, env)


@router.get("/arena", response_class=HTMLResponse)
def arena_page(services: AppServices, env: str | None = None) -> HTMLResponse:
    site, links = services.site, services.links
    if env is None:
        envs = services.store.arena_envs()
        return HTMLResponse(site.render("arena.html", links, board=None, envs=envs))
    board = arena_board(services.store, env, seed=services.seed)
    return HTMLResponse(site.render("arena.html", links, board=board, envs=[]))
