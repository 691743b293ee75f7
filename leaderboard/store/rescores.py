"""The ``rescores`` and ``rescore_episodes`` tables: every check of a submission, never
edited. A new scorer version adds a row and the older ones stay as history. Each
:class:`~agentgym.leaderboard.results.ScoredEpisode` is a row of its own, so paired
comparisons and confidence intervals read the board without reading any JSONL."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ScalarSelect, func, insert, select
from sqlalchemy.orm import Session, aliased

from agentgym.errors import UsageError

from ..results import TIERS, Rescore, ScoredEpisode, Tier
from .benchmarks import benchmark_row
from .database import Database
from .records import RescoreRecord, SubmissionRecord
from .schema import EPISODE_COLUMNS, BenchmarkRow, EpisodeRow, RescoreRow, SubmissionRow, storable
from .submissions import submission_query, submission_record, submission_row

__all__ = ["Rescores"]


class Rescores:
    """Keep checks of submissions and read them back: one submission's history, or a board's
    latest checks at once."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def add(
        self,
        submission_id: str,
        rescore: Rescore,
        *,
        actor: str = "system",
        action: str = "rescore.add",
        **audit: Any,
    ) -> int:
        """Keep a check of a submission (its id returned); it becomes the one the board shows.

        Older checks stay as history. The submission is then ``scored`` -- unless it was
        rejected: a re-score run over the board does not overturn a rejection. ``action``
        and ``audit`` name the audit entry and add to its detail (a verification's re-run).
        """
        if rescore.tier not in TIERS:
            raise UsageError(f"tier must be one of {TIERS}, got {rescore.tier!r}")
        passed = sum(e.passed for e in rescore.episodes)
        detail = {
            "scorer_version": rescore.scorer_version,
            "tier": rescore.tier,
            "episodes": len(rescore.episodes),
            "passed": passed,
            **audit,
        }
        with self.database.write(actor, action, submission_id, **detail) as session:
            submission = submission_row(session, submission_id)
            row = _rescore_row(submission_id, rescore, passed, self.database.clock())
            session.add(row)
            session.flush()
            if rescore.episodes:
                session.execute(insert(EpisodeRow), _episode_rows(row.id, rescore.episodes))
            if submission.status != "rejected":
                submission.status, submission.reject_reason = "scored", None
            return row.id

    def latest(self, submission_id: str) -> Rescore | None:
        """The newest check of a submission, exactly as it was added (None: never checked)."""
        history = self._rescores(submission_id, latest_only=True)
        return history[0].rescore if history else None

    def history(self, submission_id: str) -> list[RescoreRecord]:
        """Every check of a submission, oldest first."""
        return self._rescores(submission_id, latest_only=False)

    def _rescores(self, submission_id: str, *, latest_only: bool) -> list[RescoreRecord]:
        query = select(RescoreRow).where(RescoreRow.submission_id == submission_id)
        if latest_only:
            query = query.order_by(RescoreRow.id.desc()).limit(1)
        else:
            query = query.order_by(RescoreRow.id)
        with self.database.read() as session:
            rows = list(session.scalars(query))
            episodes = _episodes_of(session, [row.id for row in rows])
        return [
            RescoreRecord(row.id, row.submission_id, row.computed_at, _rescore(row, episodes))
            for row in rows
        ]

    def latest_scorer_versions(
        self, benchmark: str | None = None
    ) -> list[tuple[str, str, int, str]]:
        """``(submission id, benchmark, version, scorer version)`` of each scored submission's
        latest re-score (of one benchmark if given), oldest submission first; no episodes read."""
        query = (
            select(SubmissionRow.id, BenchmarkRow.name, BenchmarkRow.version)
            .add_columns(RescoreRow.scorer_version)
            .join(BenchmarkRow, BenchmarkRow.id == SubmissionRow.benchmark_id)
            .join(RescoreRow, RescoreRow.id == _latest_rescore_id())
            .where(SubmissionRow.status == "scored")
            .order_by(SubmissionRow.created_at, SubmissionRow.id)
        )
        if benchmark is not None:
            query = query.where(BenchmarkRow.name == benchmark)
        with self.database.read() as session:
            return [(row[0], row[1], int(row[2]), row[3]) for row in session.execute(query)]

    def board_entries(
        self,
        benchmark_name: str,
        *,
        version: int | None = None,
        tiers: Iterable[Tier] = ("re-scored", "verified"),
        method: str | None = None,
    ) -> list[tuple[SubmissionRecord, Rescore]]:
        """Each scored submission of a benchmark (its newest version unless ``version``) with
        its latest re-score, where that re-score's tier is one of ``tiers``; oldest first.

        Three queries whatever the board's size: the benchmark, the submissions with their
        latest re-scores, and all their episodes at once.
        """
        wanted = list(tiers)
        if not set(wanted) <= set(TIERS):
            raise UsageError(f"tiers must be among {TIERS}, got {wanted}")
        with self.database.read() as session:
            bench = benchmark_row(session, benchmark_name, version)
            query = (
                submission_query()
                .add_columns(RescoreRow)
                .join(RescoreRow, RescoreRow.id == _latest_rescore_id())
                .where(
                    SubmissionRow.benchmark_id == bench.id,
                    SubmissionRow.status == "scored",
                    RescoreRow.tier.in_(wanted),
                )
                .order_by(SubmissionRow.created_at, SubmissionRow.id)
            )
            if method is not None:
                query = query.where(SubmissionRow.method == method)
            rows = session.execute(query).all()
            episodes = _episodes_of(session, [rescore.id for *_, rescore in rows])
        return [
            (submission_record(sub, name, version, token), _rescore(rescore, episodes))
            for sub, name, version, token, rescore in rows
        ]

    def latest_times(self, submission_ids: Iterable[str]) -> dict[str, datetime]:
        """When each submission was last checked (its newest re-score), one query for all:
        the board's "re-scored" date. A submission never checked is absent."""
        ids = list(submission_ids)
        found: dict[str, datetime] = {}
        with self.database.read() as session:
            for start in range(0, len(ids), 5_000):
                query = select(RescoreRow.submission_id, func.max(RescoreRow.computed_at)).where(
                    RescoreRow.submission_id.in_(ids[start : start + 5_000])
                )
                for submission_id, at in session.execute(query.group_by(RescoreRow.submission_id)):
                    found[submission_id] = at
        return found


def _latest_rescore_id() -> ScalarSelect[int]:
    """The id of the submission's newest re-score, correlated with the outer query's
    submission: what a board and the scorer-version check join on."""
    newer = aliased(RescoreRow)
    return (
        select(func.max(newer.id))
        .where(newer.submission_id == SubmissionRow.id)
        .correlate(SubmissionRow)
        .scalar_subquery()
    )


def _rescore_row(
    submission_id: str, rescore: Rescore, passed: int, computed_at: datetime
) -> RescoreRow:
    return RescoreRow(
        submission_id=submission_id,
        benchmark=rescore.benchmark,
        benchmark_version=rescore.benchmark_version,
        benchmark_hash=rescore.benchmark_hash,
        scorer_version=rescore.scorer_version,
        tier=rescore.tier,
        flags=list(rescore.flags),
        seconds=rescore.seconds,
        computed_at=computed_at,
        episodes=len(rescore.episodes),
        passed=passed,
        errored=rescore.errored,
        missing=rescore.missing,
        mismatched=rescore.mismatched,
    )


def _episode_rows(rescore_id: int, episodes: list[ScoredEpisode]) -> list[dict[str, Any]]:
    return [
        {
            "rescore_id": rescore_id,
            "position": i,
            **episode.to_dict(),
            "reason": storable(episode.reason),
        }
        for i, episode in enumerate(episodes)
    ]


def _episodes_of(session: Session, rescore_ids: list[int]) -> dict[int, list[ScoredEpisode]]:
    """The episodes of many re-scores by id, in plan order: one query per 5,000 re-scores.

    By the ids the caller read, not by re-running its query: on a database that gives each
    statement its own snapshot, a re-score added in between would be another set of ids.
    """
    found: dict[int, list[ScoredEpisode]] = {rescore_id: [] for rescore_id in rescore_ids}
    for start in range(0, len(rescore_ids), 5_000):
        query = (
            select(EpisodeRow.rescore_id, *EPISODE_COLUMNS)
            .where(EpisodeRow.rescore_id.in_(rescore_ids[start : start + 5_000]))
            .order_by(EpisodeRow.rescore_id, EpisodeRow.position)
        )
        for rescore_id, *values in session.connection().execute(query).all():
            found[rescore_id].append(ScoredEpisode(*values))
    return found


def _rescore(row: RescoreRow, episodes: dict[int, list[ScoredEpisode]]) -> Rescore:
    return Rescore(
        benchmark=row.benchmark,
        benchmark_version=row.benchmark_version,
        benchmark_hash=row.benchmark_hash,
        tier=row.tier,  # type: ignore[arg-type]  # a Tier: the column's CHECK holds it
        episodes=episodes[row.id],
        scorer_version=row.scorer_version,
        flags=list(row.flags),
        seconds=row.seconds,
    )
