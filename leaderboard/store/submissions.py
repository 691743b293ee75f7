"""The ``submissions`` table: a bundle submitted to a benchmark by a token, with the
submitter's :class:`~agentgym.leaderboard.submission.SubmissionInfo` and the run's manifest,
stored as given (the pages escape them). The same bundle twice is one submission."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentgym.errors import UsageError

from ..submission import SubmissionInfo
from .database import Database
from .records import (
    STATUSES,
    BenchmarkRecord,
    ConflictError,
    NotFoundError,
    Status,
    SubmissionRecord,
    Token,
)
from .schema import BenchmarkRow, SubmissionRow, TokenRow, storable

__all__ = ["Submissions", "submission_query", "submission_record", "submission_row"]


class Submissions:
    """Record submissions, move them between statuses, and read them back."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def add(
        self,
        benchmark: BenchmarkRecord,
        bundle_sha: str,
        info: SubmissionInfo,
        manifest: dict[str, Any],
        token: Token | None,
    ) -> tuple[SubmissionRecord, bool]:
        """Record a submission of a stored bundle: (the submission, whether it is new).

        The same bundle sent to the same benchmark again is the submission already stored,
        whoever sends it: one run is one row on the board.
        """
        existing = self._find(benchmark.id, bundle_sha)
        if existing is not None:
            return existing, False
        row = SubmissionRow(
            id=str(uuid.uuid4()),
            benchmark_id=benchmark.id,
            token_id=token.id if token else None,
            bundle_sha=bundle_sha,
            **info.to_dict(),
            manifest=manifest,
            status="received",
            created_at=self.database.clock(),
        )
        actor = token.name if token else "system"
        detail = {"benchmark": f"{benchmark.name} v{benchmark.version}", "bundle": bundle_sha}
        try:
            with self.database.write(actor, "submission.add", row.id, **detail) as session:
                session.add(row)
        except IntegrityError as error:
            raced = self._find(benchmark.id, bundle_sha)
            if raced is None:
                raise ConflictError(
                    f"submission of bundle {bundle_sha} refused: is the bundle stored "
                    "(put_blob) and the benchmark registered?"
                ) from error
            return raced, False
        return self.get(row.id), True

    def _find(self, benchmark_id: int, bundle_sha: str) -> SubmissionRecord | None:
        query = submission_query().where(
            SubmissionRow.benchmark_id == benchmark_id, SubmissionRow.bundle_sha == bundle_sha
        )
        with self.database.read() as session:
            row = session.execute(query).one_or_none()
        return submission_record(*row) if row is not None else None

    def get(self, submission_id: str) -> SubmissionRecord:
        with self.database.read() as session:
            row = session.execute(
                submission_query().where(SubmissionRow.id == submission_id)
            ).one_or_none()
        if row is None:
            raise NotFoundError(f"no submission {submission_id!r}")
        return submission_record(*row)

    def all(
        self, benchmark: str | None = None, *, status: Status | None = None
    ) -> list[SubmissionRecord]:
        """Submissions, oldest first, of one benchmark (any version) and status if given."""
        query = submission_query().order_by(SubmissionRow.created_at, SubmissionRow.id)
        if benchmark is not None:
            query = query.where(BenchmarkRow.name == benchmark)
        if status is not None:
            query = query.where(SubmissionRow.status == status)
        with self.database.read() as session:
            return [submission_record(*row) for row in session.execute(query)]

    def set_status(
        self,
        submission_id: str,
        status: Status,
        *,
        reason: str | None = None,
        actor: str = "system",
    ) -> None:
        """Move a submission to ``status``; ``rejected`` needs a reason, the others take none."""
        if status not in STATUSES:
            raise UsageError(f"status must be one of {STATUSES}, got {status!r}")
        if (status == "rejected") != bool(reason):
            raise UsageError("a rejection needs a reason, and only a rejection has one")
        reason = storable(reason) if reason else reason
        with self.database.write(
            actor, "submission.status", submission_id, status=status, reason=reason
        ) as session:
            row = submission_row(session, submission_id)
            row.status, row.reject_reason = status, reason

    def since(self, token: Token, since: datetime) -> int:
        """How many submissions ``token`` sent from ``since`` on (for rate limits)."""
        query = select(func.count()).where(
            SubmissionRow.token_id == token.id, SubmissionRow.created_at >= since
        )
        with self.database.read() as session:
            return int(session.scalar(query) or 0)


def submission_row(session: Session, submission_id: str) -> SubmissionRow:
    row = session.get(SubmissionRow, submission_id)
    if row is None:
        raise NotFoundError(f"no submission {submission_id!r}")
    return row


def submission_query() -> Select[SubmissionRow, str, int, str]:
    """A submission with its benchmark's name and version and its token's name."""
    return (
        select(SubmissionRow, BenchmarkRow.name, BenchmarkRow.version, TokenRow.name)
        .join(BenchmarkRow, BenchmarkRow.id == SubmissionRow.benchmark_id)
        .outerjoin(TokenRow, TokenRow.id == SubmissionRow.token_id)
    )


def submission_record(
    sub: SubmissionRow, benchmark: str, version: int, token_name: str | None
) -> SubmissionRecord:
    """The record of a row of :func:`submission_query`: the submission, its benchmark's name
    and version, and its token's name (None: the system's own, through the outer join)."""
    info = SubmissionInfo(
        agent=sub.agent,
        model=sub.model,
        model_revision=sub.model_revision,
        method=sub.method,  # type: ignore[arg-type]  # a Method: SubmissionInfo checked it
        code_hash=sub.code_hash,
        contact=sub.contact,
        notes=sub.notes,
        organisation=sub.organisation,
        open_weights=sub.open_weights,
        parameters=sub.parameters,
        link=sub.link,
        price_prompt=sub.price_prompt,
        price_completion=sub.price_completion,
    )
    return SubmissionRecord(
        id=sub.id,
        benchmark=benchmark,
        benchmark_version=version,
        token_name=token_name,
        bundle_sha=sub.bundle_sha,
        info=info,
        manifest=sub.manifest,
        status=sub.status,  # type: ignore[arg-type]  # a Status: the column's CHECK holds it
        reject_reason=sub.reject_reason,
        created_at=sub.created_at,
    )
