"""What the store hands to callers and what it raises: plain frozen records (never ORM
objects, so nothing a caller holds reaches back into a closed session) and its errors.

Errors::

    AgentGymError
    └── StoreError                   the store cannot do what was asked
        ├── AuthError                a token that is unknown, revoked or lacks the scope
        ├── NotFoundError (KeyError) no such submission, benchmark, token or blob
        └── ConflictError            a write that contradicts what is stored
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from agentgym.errors import AgentGymError

from ..results import Rescore
from ..submission import SubmissionInfo

__all__ = [
    "SCOPES",
    "STATUSES",
    "AuditEntry",
    "AuthError",
    "AuthFailure",
    "BenchmarkRecord",
    "ConflictError",
    "NotFoundError",
    "RescoreRecord",
    "Scope",
    "Status",
    "StoreError",
    "SubmissionRecord",
    "Token",
]

Scope = Literal["submit", "admin"]
"""``submit``: send bundles; ``admin``: everything (tokens, benchmarks, statuses, re-scores)."""
SCOPES: tuple[Scope, ...] = get_args(Scope)

Status = Literal["received", "checking", "rejected", "scored"]
"""Where a submission is: stored, being checked, refused (with a reason), on the board."""
STATUSES: tuple[Status, ...] = get_args(Status)

AuthFailure = Literal["unknown", "revoked", "lacks scope"]


# ---------------------------------------------------------------------------------------------
# Errors


class StoreError(AgentGymError):
    """The leaderboard's store cannot do what was asked."""


class AuthError(StoreError):
    """A token was refused. ``reason`` says why: ``unknown``, ``revoked`` or ``lacks scope``
    (the server answers the first two with 401 and the last with 403)."""

    def __init__(self, reason: AuthFailure, message: str) -> None:
        super().__init__(message)
        self.reason: AuthFailure = reason


class NotFoundError(StoreError, KeyError):
    """No submission, benchmark, token or blob is stored under this key."""


class ConflictError(StoreError):
    """A write contradicts what is stored: a token name taken, a benchmark version whose spec
    differs, a status change a submission cannot make."""


# ---------------------------------------------------------------------------------------------
# Records handed to callers


@dataclass(frozen=True)
class Token:
    """A token as the store knows it: never its plaintext, never its hash."""

    id: int
    name: str
    scopes: tuple[Scope, ...]
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    def allows(self, scope: Scope) -> bool:
        """``admin`` allows everything, other scopes only themselves."""
        return scope in self.scopes or "admin" in self.scopes


@dataclass(frozen=True)
class BenchmarkRecord:
    id: int
    name: str
    version: int
    spec_hash: str
    spec: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class SubmissionRecord:
    """A submission's row. ``info.contact`` is for the maintainers: the pages do not show it."""

    id: str
    benchmark: str
    benchmark_version: int
    token_name: str | None
    """The name of the token that sent it (None: added by the system itself)."""
    bundle_sha: str
    info: SubmissionInfo
    manifest: dict[str, Any]
    status: Status
    reject_reason: str | None
    created_at: datetime


@dataclass(frozen=True)
class RescoreRecord:
    """One check of a submission in its history."""

    id: int
    submission_id: str
    computed_at: datetime
    rescore: Rescore


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: datetime
    actor: str
    action: str
    target: str
    detail: dict[str, Any]
