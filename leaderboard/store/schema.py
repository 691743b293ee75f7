"""The store's tables: SQLAlchemy 2 typed ORM classes, one per table, and the column types
they share.

The schema on disk is made by the Alembic migrations (``leaderboard/migrations``), never from
these classes; ``tests/leaderboard/test_store.py`` checks that the migrated schema is this one,
on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from agentgym.errors import UsageError

from ..results import OUTCOMES, TIERS, ScoredEpisode
from .records import STATUSES

__all__ = [
    "EPISODE_COLUMNS",
    "ArenaMatchRow",
    "ArenaSubmissionRow",
    "AuditRow",
    "Base",
    "BenchmarkRow",
    "BlobRow",
    "EpisodeRow",
    "RescoreRow",
    "SubmissionRow",
    "TokenRow",
    "UTCDateTime",
    "storable",
]


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in and out on both databases (SQLite keeps no time zone: what it
    gives back is read as UTC, which is what was written)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise UsageError(f"the store keeps aware datetimes, got a naive {value!r}")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _one_of(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    """The store's tables. Constraint names follow one convention, so a later migration can
    name what it alters on both databases (SQLite's batch mode needs the names)."""

    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_N_name)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSON(), list[str]: JSON()}


class TokenRow(Base):
    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    """Unique for ever: the audit log names its actors by it."""
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[list[str]]
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]


class BlobRow(Base):
    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime]


class BenchmarkRow(Base):
    __tablename__ = "benchmarks"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int]
    spec_hash: Mapped[str] = mapped_column(String(64), unique=True)
    spec: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]


class SubmissionRow(Base):
    __tablename__ = "submissions"
    __table_args__ = (
        UniqueConstraint("benchmark_id", "bundle_sha"),
        CheckConstraint(_one_of("status", STATUSES), name="status"),
        Index(None, "token_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmarks.id"))
    token_id: Mapped[int | None] = mapped_column(ForeignKey("tokens.id"))
    bundle_sha: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    agent: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    model_revision: Mapped[str] = mapped_column(Text)
    method: Mapped[str] = mapped_column(String(16))
    code_hash: Mapped[str] = mapped_column(Text)
    contact: Mapped[str] = mapped_column(Text)
    notes: Mapped[str] = mapped_column(Text)
    organisation: Mapped[str] = mapped_column(Text, server_default="")
    open_weights: Mapped[bool | None] = mapped_column(Boolean)
    parameters: Mapped[int | None] = mapped_column(BigInteger)
    link: Mapped[str] = mapped_column(Text, server_default="")
    price_prompt: Mapped[float | None] = mapped_column(Float)
    price_completion: Mapped[float | None] = mapped_column(Float)
    manifest: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16))
    reject_reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]


class RescoreRow(Base):
    __tablename__ = "rescores"
    __table_args__ = (
        CheckConstraint(_one_of("tier", TIERS), name="tier"),
        Index(None, "submission_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"))
    benchmark: Mapped[str] = mapped_column(String(200))
    benchmark_version: Mapped[int]
    benchmark_hash: Mapped[str] = mapped_column(String(64))
    scorer_version: Mapped[str] = mapped_column(String(200))
    tier: Mapped[str] = mapped_column(String(16))
    flags: Mapped[list[str]]
    seconds: Mapped[float] = mapped_column(Float)
    computed_at: Mapped[datetime]
    episodes: Mapped[int]
    passed: Mapped[int]
    errored: Mapped[int]
    missing: Mapped[int]
    mismatched: Mapped[int]


class EpisodeRow(Base):
    """One :class:`ScoredEpisode` of a re-score; ``position`` keeps the plan's order."""

    __tablename__ = "rescore_episodes"
    __table_args__ = (CheckConstraint(_one_of("outcome", OUTCOMES), name="outcome"),)

    rescore_id: Mapped[int] = mapped_column(ForeignKey("rescores.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    episode_id: Mapped[str] = mapped_column(Text)
    env_id: Mapped[str] = mapped_column(Text)
    task_id: Mapped[str] = mapped_column(Text)
    repeat: Mapped[int]
    seed: Mapped[int | None] = mapped_column(BigInteger)
    outcome: Mapped[str] = mapped_column(String(16))
    passed: Mapped[bool] = mapped_column(Boolean)
    score: Mapped[float] = mapped_column(Float)
    claimed_score: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str | None] = mapped_column(Text)
    steps: Mapped[int]
    prompt_tokens: Mapped[int] = mapped_column(BigInteger)
    completion_tokens: Mapped[int] = mapped_column(BigInteger)
    oracle_like: Mapped[bool] = mapped_column(Boolean)


class AuditRow(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(50))
    target: Mapped[str] = mapped_column(Text)
    detail: Mapped[dict[str, Any]]


class ArenaSubmissionRow(Base):
    """An arena run's match records, sent by a token; every match re-scored by replay before
    it was stored. The same matches twice are one submission (``content_sha``)."""

    __tablename__ = "arena_submissions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    token_id: Mapped[int | None] = mapped_column(ForeignKey("tokens.id"))
    content_sha: Mapped[str] = mapped_column(String(64), unique=True)
    manifest: Mapped[dict[str, Any]]
    matches: Mapped[int]
    created_at: Mapped[datetime]


class ArenaMatchRow(Base):
    """One replayed match of an arena submission: its :meth:`MatchRecord.to_dict`, the scores
    the game gave; ``position`` keeps the submission's order."""

    __tablename__ = "arena_matches"
    __table_args__ = (Index(None, "env_id"),)

    submission_id: Mapped[str] = mapped_column(ForeignKey("arena_submissions.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    env_id: Mapped[str] = mapped_column(String(200))
    match_id: Mapped[str] = mapped_column(Text)
    record: Mapped[dict[str, Any]]


# Every field of a ScoredEpisode, in its order: a field added there without a column here
# fails at import, not as a silently dropped value.
EPISODE_COLUMNS = [getattr(EpisodeRow, f.name) for f in fields(ScoredEpisode)]


def storable(text: str | None) -> str | None:
    """``text`` with every NUL character replaced (U+FFFD): PostgreSQL's text holds none, and
    a reason may quote what a record said (an errored episode's error)."""
    return text.replace("\x00", "\ufffd") if text else text
