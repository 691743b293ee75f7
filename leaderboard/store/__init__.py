"""The leaderboard's storage: tokens, bundle files, benchmarks, submissions, every re-score of
them and an audit log, in one SQL database (SQLite by default, PostgreSQL by URL) beside a
folder of content-addressed bundle files.

The same code runs on both databases: SQLAlchemy 2 typed ORM tables, every query
parameterised, the schema made by Alembic migrations shipped in the package
(:meth:`Store.migrate`). SQLite runs in WAL mode, so the pages read while a check writes, with
foreign keys on (SQLite's default is off).

What it keeps, and why that way (one module per table, :class:`Store` their one face):

* **tokens** (``tokens.py``) -- writes need one, reads do not. Only the sha256 of a token is
  stored: a copy of the database gives no one a way in. :meth:`Store.create_token` returns
  the plaintext once.
* **blobs** (``blobs.py``) -- a bundle is a file on disk named by its sha256
  (``ab/cd/abcd...``), written atomically; the database records that it is there. The same
  bytes are one file.
* **benchmarks** (``benchmarks.py``) -- a name, a version and the hash of its spec. A changed
  spec is a new version.
* **submissions** (``submissions.py``) -- a bundle submitted to a benchmark by a token, with
  the submitter's :class:`SubmissionInfo` and the run's manifest, stored as given (the pages
  escape them). The same bundle twice is one submission.
* **rescores** (``rescores.py``) -- every check of a submission, never edited: a new scorer
  version adds a row and the older ones stay as history. Each :class:`ScoredEpisode` is a row
  of its own, so paired comparisons and confidence intervals read the board without reading
  any JSONL.
* **arena_submissions**, **arena_matches** (``arena.py``) -- an arena run's match records, each
  re-scored by replay before it is stored (:mod:`agentgym.leaderboard.arena`), and its
  errored matches; the same matches twice are one submission.
* **audit_log** (``audit.py``) -- who (a token's name, or ``system``) wrote what, when: every
  write above adds its entry in the same transaction (``database.py``).

The tables are ``schema.py``; the records callers get back and the errors they catch are
``records.py``. Reads return plain frozen records (:class:`Token`, :class:`SubmissionRecord`...),
never ORM objects, so nothing a caller holds reaches back into a closed session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

from agentgym.arena import MatchRecord

from ..results import Rescore, Tier
from ..submission import SubmissionInfo
from .arena import ArenaMatches, ArenaSubmission, ErroredMatch
from .audit import AuditLog
from .benchmarks import Benchmarks
from .blobs import Blobs
from .database import Database, alembic_config, database_url, default_blob_dir, sqlite_file, utcnow
from .records import (
    SCOPES,
    STATUSES,
    AuditEntry,
    AuthError,
    BenchmarkRecord,
    ConflictError,
    NotFoundError,
    RescoreRecord,
    Scope,
    Status,
    StoreError,
    SubmissionRecord,
    Token,
)
from .rescores import Rescores
from .schema import Base, TokenRow, UTCDateTime
from .submissions import Submissions
from .tokens import Tokens

__all__ = [
    "SCOPES",
    "STATUSES",
    "ArenaSubmission",
    "AuditEntry",
    "AuthError",
    "Base",
    "BenchmarkRecord",
    "ConflictError",
    "ErroredMatch",
    "NotFoundError",
    "RescoreRecord",
    "Scope",
    "Status",
    "Store",
    "StoreError",
    "SubmissionRecord",
    "Token",
    "TokenRow",
    "UTCDateTime",
    "alembic_config",
    "sqlite_file",
]


class Store:
    """The leaderboard's database and bundle folder: one face over a part per table.

    Args:
        where: a SQLAlchemy URL (``postgresql+psycopg://user@/db?host=/run/postgresql``,
            ``sqlite:///path``) or the path of a SQLite file.
        blob_dir: where bundle files live; by default ``blobs/`` beside a SQLite file (a
            server database has no folder beside it: pass one).
        clock: the store's time (tests pass a fixed one).

    The schema is made or upgraded by :meth:`migrate`; a store is closed by :meth:`close`
    (or by leaving a ``with`` block). Each method hands over to its table's part, where its
    documentation is.
    """

    def __init__(
        self,
        where: str | Path,
        *,
        blob_dir: str | Path | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.url = database_url(where)
        self.blob_dir = Path(blob_dir) if blob_dir is not None else default_blob_dir(self.url)
        self.database = Database(self.url, clock)
        self.engine = self.database.engine
        self._tokens = Tokens(self.database)
        self._blobs = Blobs(self.database, self.blob_dir)
        self._benchmarks = Benchmarks(self.database)
        self._submissions = Submissions(self.database)
        self._rescores = Rescores(self.database)
        self._audit = AuditLog(self.database)
        self._arena = ArenaMatches(self.database)

    def __repr__(self) -> str:
        return f"Store({make_url(self.url).render_as_string()!r}, blob_dir={str(self.blob_dir)!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database's connections (idempotent)."""
        self.database.close()

    def migrate(self) -> None:
        """Create or upgrade the schema to the newest migration."""
        self.database.migrate()

    # -- tokens (:class:`~.tokens.Tokens`) -----------------------------------------------------

    def create_token(self, name: str, scopes: Iterable[Scope], *, actor: str = "system") -> str:
        return self._tokens.create(name, scopes, actor=actor)

    def authorize(self, plaintext: str, scope: Scope) -> Token:
        return self._tokens.authorize(plaintext, scope)

    def revoke(self, name: str, *, actor: str = "system") -> None:
        self._tokens.revoke(name, actor=actor)

    def tokens(self) -> list[Token]:
        return self._tokens.all()

    # -- blobs (:class:`~.blobs.Blobs`) --------------------------------------------------------

    def blob_path(self, sha: str) -> Path:
        return self._blobs.path(sha)

    def put_blob(self, source: bytes | Path, *, actor: str = "system") -> str:
        return self._blobs.put(source, actor=actor)

    def has_blob(self, sha: str) -> bool:
        return self._blobs.has(sha)

    def get_blob(self, sha: str) -> bytes:
        return self._blobs.get(sha)

    # -- benchmarks (:class:`~.benchmarks.Benchmarks`) -----------------------------------------

    def add_benchmark(
        self,
        name: str,
        version: int,
        spec_hash: str,
        spec: dict[str, Any],
        *,
        actor: str = "system",
    ) -> BenchmarkRecord:
        return self._benchmarks.add(name, version, spec_hash, spec, actor=actor)

    def benchmark(self, name: str, version: int | None = None) -> BenchmarkRecord:
        return self._benchmarks.get(name, version)

    def benchmarks(self) -> list[BenchmarkRecord]:
        return self._benchmarks.all()

    # -- submissions (:class:`~.submissions.Submissions`) --------------------------------------

    def add_submission(
        self,
        benchmark: BenchmarkRecord,
        bundle_sha: str,
        info: SubmissionInfo,
        manifest: dict[str, Any],
        token: Token | None,
    ) -> tuple[SubmissionRecord, bool]:
        return self._submissions.add(benchmark, bundle_sha, info, manifest, token)

    def submission(self, submission_id: str) -> SubmissionRecord:
        return self._submissions.get(submission_id)

    def submissions(
        self, benchmark: str | None = None, *, status: Status | None = None
    ) -> list[SubmissionRecord]:
        return self._submissions.all(benchmark, status=status)

    def set_status(
        self,
        submission_id: str,
        status: Status,
        *,
        reason: str | None = None,
        actor: str = "system",
    ) -> None:
        self._submissions.set_status(submission_id, status, reason=reason, actor=actor)

    def submissions_since(self, token: Token, since: datetime) -> int:
        return self._submissions.since(token, since)

    # -- rescores (:class:`~.rescores.Rescores`) -----------------------------------------------

    def add_rescore(
        self,
        submission_id: str,
        rescore: Rescore,
        *,
        actor: str = "system",
        action: str = "rescore.add",
        **audit: Any,
    ) -> int:
        return self._rescores.add(submission_id, rescore, actor=actor, action=action, **audit)

    def latest_rescore(self, submission_id: str) -> Rescore | None:
        return self._rescores.latest(submission_id)

    def rescore_history(self, submission_id: str) -> list[RescoreRecord]:
        return self._rescores.history(submission_id)

    def latest_scorer_versions(
        self, benchmark: str | None = None
    ) -> list[tuple[str, str, int, str]]:
        return self._rescores.latest_scorer_versions(benchmark)

    def board_entries(
        self,
        benchmark_name: str,
        *,
        version: int | None = None,
        tiers: Iterable[Tier] = ("re-scored", "verified"),
        method: str | None = None,
    ) -> list[tuple[SubmissionRecord, Rescore]]:
        return self._rescores.board_entries(
            benchmark_name, version=version, tiers=tiers, method=method
        )

    def rescored_at(self, submission_ids: Iterable[str]) -> dict[str, datetime]:
        return self._rescores.latest_times(submission_ids)

    # -- arena matches (:class:`~.arena.ArenaMatches`) ----------------------------------------

    def add_arena_submission(
        self,
        records: list[MatchRecord],
        manifest: dict[str, Any],
        token: Token | None,
        errored: Sequence[ErroredMatch] = (),
    ) -> tuple[ArenaSubmission, bool]:
        return self._arena.add(records, manifest, token, errored)

    def arena_matches(self, env_id: str) -> list[tuple[str, MatchRecord]]:
        return self._arena.matches(env_id)

    def arena_errored(self, env_id: str) -> list[tuple[str, ErroredMatch]]:
        return self._arena.errored(env_id)

    def arena_envs(self) -> list[tuple[str, int]]:
        return self._arena.envs()

    # -- audit (:class:`~.audit.AuditLog`) -----------------------------------------------------

    def audit_log(self, *, target: str | None = None, limit: int = 100) -> list[AuditEntry]:
        return self._audit.entries(target=target, limit=limit)
