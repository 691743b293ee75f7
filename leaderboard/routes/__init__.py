"""The server's routes, one :class:`~fastapi.APIRouter` per area: the submissions API (reads,
uploads and the admin's re-scores and verifications), the benchmarks API, the arena boards,
and the pages.

Each route reads what it works with from the app (:data:`~agentgym.leaderboard.web.AppServices`),
so a router holds no state and one module can be read, or tested, on its own. Route functions
carry no docstring: FastAPI would publish it as the operation's description in the schema.
"""

from __future__ import annotations

from fastapi import APIRouter

from . import arena, benchmarks, pages, submissions

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = (
    submissions.router,
    benchmarks.router,
    arena.router,
    pages.router,
)
"""In the order the app includes them (the order of the paths in its OpenAPI schema)."""
