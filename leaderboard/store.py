"""The leaderboard's storage: tokens, bundle files, benchmarks, submissions, every re-score of
them and an audit log, in one SQL database (SQLite by default, PostgreSQL by URL) beside a
folder of content-addressed bundle files.

The same code runs on both databases: SQLAlchemy 2 typed ORM tables, every query
parameterised, the schema made by Alembic migrations shipped in the package
(:meth:`Store.migrate`). SQLite runs in WAL mode, so the pages read while a check writes, with
foreign keys on (SQLite's default is off).

What it keeps, and why that way:

* **tokens** -- writes need one, reads do not. Only the sha256 of a token is stored: a copy of
  the database gives no one a way in. :meth:`Store.create_token` returns the plaintext once.
* **blobs** -- a bundle is a file on disk named by its sha256 (``ab/cd/abcd...``), written
  atomically; the database records that it is there. The same bytes are one file.
* **benchmarks** -- a name, a version and the hash of its spec. A changed spec is a new version.
* **submissions** -- a bundle submitted to a benchmark by a token, with the submitter's
  :class:`SubmissionInfo` and the run's manifest, stored as given (the pages escape them).
  The same bundle twice is one submission.
* **rescores** -- every check of a submission, never edited: a new scorer version adds a row
  and the older ones stay as history. Each :class:`ScoredEpisode` is a row of its own, so
  paired comparisons and confidence intervals read the board without reading any JSONL.
* **audit_log** -- who (a token's name, or ``system``) wrote what, when: every write above
  adds its entry in the same transaction.

Errors::

    AgentGymError
    └── StoreError                   the store cannot do what was asked
        ├── AuthError                a token that is unknown, revoked or lacks the scope
        ├── NotFoundError (KeyError) no such submission, benchmark, token or blob
        └── ConflictError            a write that contradicts what is stored

Reads return plain frozen records (:class:`Token`, :class:`SubmissionRecord`...), never ORM
objects, so nothing a caller holds reaches back into a closed session.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    create_engine,
    event,
    func,
    insert,
    make_url,
    select,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    aliased,
    mapped_column,
    sessionmaker,
)

from agentgym.errors import AgentGymError, UsageError

from .results import OUTCOMES, TIERS, Rescore, ScoredEpisode, Tier
from .submission import SubmissionInfo

__all__ = [
    "SCOPES",
    "STATUSES",
    "AuditEntry",
    "AuthError",
    "Base",
    "BenchmarkRecord",
    "ConflictError",
    "NotFoundError",
    "RescoreRecord",
    "Scope",
    "Status",
    "Store",
    "StoreError",
    "SubmissionRecord",
    "Token",
    "alembic_config",
    "sqlite_file",
]

Scope = Literal["submit", "admin"]
"""``submit``: send bundles; ``admin``: everything (tokens, benchmarks, statuses, re-scores)."""
SCOPES: tuple[Scope, ...] = get_args(Scope)

Status = Literal["received", "checking", "rejected", "scored"]
"""Where a submission is: stored, being checked, refused (with a reason), on the board."""
STATUSES: tuple[Status, ...] = get_args(Status)

AuthFailure = Literal["unknown", "revoked", "lacks scope"]

MIGRATIONS = Path(__file__).parent / "migrations"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 20
MAX_VERSION = 2**31 - 1
"""The highest benchmark version a store holds (its column is a 32-bit integer on
PostgreSQL): a version above it names no benchmark."""
MAX_NAME = 200
"""The longest benchmark name a store holds (its column's width)."""
TOKEN_PREFIX = "agl_"
"""How every token begins: never with ``-`` (which a command line would read as an option,
one token in 64 of bare base64url), and recognisable in a leaked log."""
MAX_TOKEN_NAME = 100
"""The longest token name (its column's width; the audit log names actors by it)."""


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


# ---------------------------------------------------------------------------------------------
# Schema


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


# Every field of a ScoredEpisode, in its order: a field added there without a column here
# fails at import, not as a silently dropped value.
_EPISODE_COLUMNS = [getattr(EpisodeRow, f.name) for f in fields(ScoredEpisode)]


# ---------------------------------------------------------------------------------------------
# The store


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _database_url(where: str | Path) -> str:
    """A URL as given (``postgresql://`` means psycopg 3), a bare path as SQLite's file."""
    text = str(where)
    if "://" not in text:
        return f"sqlite:///{Path(text).expanduser().resolve()}"
    url = make_url(text)
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    return url.render_as_string(hide_password=False)


def sqlite_file(where: str | Path) -> Path | None:
    """The file of a SQLite store at ``where`` (a path or a URL); None for another database."""
    url = make_url(_database_url(where))
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def _default_blob_dir(url: str) -> Path:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        return Path(parsed.database).parent / "blobs"
    raise UsageError(
        f"a store at {parsed.render_as_string()} keeps its bundle files in a folder it cannot "
        "derive from the URL: pass blob_dir="
    )


def _latest_rescore_id() -> Any:
    """The id of the submission's newest re-score, correlated with the outer query's
    submission: what a board and the scorer-version check join on."""
    newer = aliased(RescoreRow)
    return (
        select(func.max(newer.id))
        .where(newer.submission_id == SubmissionRow.id)
        .correlate(SubmissionRow)
        .scalar_subquery()
    )


def _on_sqlite_connect(connection: Any, _record: Any) -> None:
    """Foreign keys on, WAL, and transactions that SQLAlchemy begins itself (below)."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()
    # Python's sqlite3 begins a transaction only before a data change: schema changes commit
    # one by one (a failed migration would stay half done) and reads see a new snapshot each.
    connection.isolation_level = None


def _on_sqlite_begin(connection: Any) -> None:
    """Reads begin deferred; writes take SQLite's write lock up front (``IMMEDIATE``). A
    deferred transaction that reads and then writes fails at once ("database is locked",
    no waiting) when another connection committed in between; an immediate one waits its
    turn for up to the connection's timeout instead."""
    write = connection.get_execution_options().get(WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


WRITE_OPTION = "agentgym_write"
"""The execution option that marks a write transaction (:func:`_on_sqlite_begin`)."""


def alembic_config(connection: Connection | None = None) -> Config:
    """The Alembic configuration of the migrations shipped in the package (no alembic.ini).

    With ``connection`` the migrations run on it; a new revision is made with
    ``alembic.command.revision(alembic_config(), "what", autogenerate=True)`` after pointing
    ``config.set_main_option("sqlalchemy.url", ...)`` at a database at head.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


class Store:
    """The leaderboard's database and bundle folder.

    Args:
        where: a SQLAlchemy URL (``postgresql+psycopg://user@/db?host=/run/postgresql``,
            ``sqlite:///path``) or the path of a SQLite file.
        blob_dir: where bundle files live; by default ``blobs/`` beside a SQLite file (a
            server database has no folder beside it: pass one).
        clock: the store's time (tests pass a fixed one).

    The schema is made or upgraded by :meth:`migrate`; a store is closed by :meth:`close`
    (or by leaving a ``with`` block).
    """

    def __init__(
        self,
        where: str | Path,
        *,
        blob_dir: str | Path | None = None,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.url = _database_url(where)
        self.blob_dir = Path(blob_dir) if blob_dir is not None else _default_blob_dir(self.url)
        self._clock = clock
        self.engine = self._make_engine()
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._writes = sessionmaker(
            self.engine.execution_options(**{WRITE_OPTION: True}), expire_on_commit=False
        )

    def _make_engine(self) -> Engine:
        if make_url(self.url).get_backend_name() != "sqlite":
            return create_engine(self.url)
        Path(make_url(self.url).database or ".").parent.mkdir(parents=True, exist_ok=True)
        # One connection per thread at a time from the pool; the server's threads share it.
        engine = create_engine(self.url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _on_sqlite_connect)
        event.listen(engine, "begin", _on_sqlite_begin)
        return engine

    def __repr__(self) -> str:
        return f"Store({make_url(self.url).render_as_string()!r}, blob_dir={str(self.blob_dir)!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database's connections (idempotent)."""
        self.engine.dispose()

    def migrate(self) -> None:
        """Create or upgrade the schema to the newest migration."""
        with self.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")

    @contextmanager
    def _write(self, actor: str, action: str, target: str, **detail: Any) -> Iterator[Session]:
        """A transaction that writes its audit entry with it (both land or neither)."""
        with self._writes.begin() as session:
            yield session
            session.add(
                AuditRow(at=self._clock(), actor=actor, action=action, target=target, detail=detail)
            )

    def _read(self) -> Session:
        return self._sessions()

    # -- tokens --------------------------------------------------------------------------------

    def create_token(self, name: str, scopes: Iterable[Scope], *, actor: str = "system") -> str:
        """Make a token and return its plaintext: the only time anyone sees it."""
        wanted = tuple(dict.fromkeys(scopes))
        unknown = [s for s in wanted if s not in SCOPES]
        if not name.strip() or len(name) > MAX_TOKEN_NAME or not wanted or unknown:
            raise UsageError(
                f"a token needs a name of 1 to {MAX_TOKEN_NAME} characters and scopes from "
                f"{SCOPES}, got {name[:120]!r} and {wanted}"
            )
        # Never beginning with "-": `--token VALUE` would read such a value as an option.
        plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
        try:
            with self._write(actor, "token.create", name, scopes=list(wanted)) as session:
                session.add(
                    TokenRow(
                        name=name,
                        token_sha256=_digest(plaintext),
                        scopes=list(wanted),
                        created_at=self._clock(),
                    )
                )
        except IntegrityError as error:
            raise ConflictError(f"a token named {name!r} exists (names are never reused)") from (
                error
            )
        return plaintext

    def authorize(self, plaintext: str, scope: Scope) -> Token:
        """The token behind ``plaintext`` if it may act in ``scope``; else :class:`AuthError`.

        Its last-used time is recorded; the audit log gets the write it authorises, not this.
        """
        if scope not in SCOPES:
            raise UsageError(f"scope must be one of {SCOPES}, got {scope!r}")
        digest = _digest(plaintext)
        with self._writes.begin() as session:
            # The lookup compares sha256 digests, whose timing says nothing usable about a
            # plaintext; the digest found is compared again in constant time all the same.
            row = session.scalar(select(TokenRow).where(TokenRow.token_sha256 == digest))
            if row is None or not hmac.compare_digest(row.token_sha256, digest):
                raise AuthError("unknown", "no such token")
            if row.revoked_at is not None:
                raise AuthError("revoked", f"token {row.name!r} was revoked")
            token = _token(row)
            if not token.allows(scope):
                raise AuthError("lacks scope", f"token {row.name!r} may not {scope}")
            row.last_used_at = self._clock()
            return _token(row)

    def revoke(self, name: str, *, actor: str = "system") -> None:
        """Revoke the token called ``name`` (idempotent: a revoked token keeps its first time)."""
        with self._write(actor, "token.revoke", name) as session:
            row = session.scalar(select(TokenRow).where(TokenRow.name == name))
            if row is None:
                raise NotFoundError(f"no token named {name!r}")
            row.revoked_at = row.revoked_at or self._clock()

    def tokens(self) -> list[Token]:
        with self._read() as session:
            return [_token(row) for row in session.scalars(select(TokenRow).order_by(TokenRow.id))]

    # -- blobs ---------------------------------------------------------------------------------

    def blob_path(self, sha: str) -> Path:
        """Where the file of ``sha`` lives: two levels of fan-out keep folders small."""
        if not _SHA256.match(sha):
            raise UsageError(f"a blob is named by a lowercase sha256 hex digest, got {sha!r}")
        return self.blob_dir / sha[:2] / sha[2:4] / sha

    def put_blob(self, source: bytes | Path, *, actor: str = "system") -> str:
        """Store bytes (or a file's bytes) and return their sha256.

        The file is written to a temporary name, synced and renamed into place, so a reader
        never sees half a bundle; it is in place before the database says so, so a crash
        between leaves only a file that the next put of the same bytes adopts.
        """
        sha, size = self._write_blob_file(source)
        with self._read() as session:
            if session.get(BlobRow, sha) is not None:
                return sha
        try:
            with self._write(actor, "blob.put", sha, size=size) as session:
                session.add(BlobRow(sha256=sha, size=size, created_at=self._clock()))
        except IntegrityError:
            pass  # the same bytes, put by another writer at the same moment
        return sha

    def _write_blob_file(self, source: bytes | Path) -> tuple[str, int]:
        staging = self.blob_dir / "tmp"
        staging.mkdir(parents=True, exist_ok=True)
        digest, size = hashlib.sha256(), 0
        fd, temporary = tempfile.mkstemp(dir=staging)
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in _chunks(source):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, 0o444)
            final = self.blob_path(digest.hexdigest())
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(temporary, final)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        return digest.hexdigest(), size

    def has_blob(self, sha: str) -> bool:
        path = self.blob_path(sha)
        with self._read() as session:
            return session.get(BlobRow, sha) is not None and path.exists()

    def get_blob(self, sha: str) -> bytes:
        """The bytes of ``sha``, checked against their name (a changed file is an error)."""
        path = self.blob_path(sha)
        with self._read() as session:
            if session.get(BlobRow, sha) is None:
                raise NotFoundError(f"no blob {sha}")
        try:
            data = path.read_bytes()
        except FileNotFoundError as error:
            raise StoreError(f"blob {sha} is recorded but its file {path} is gone") from error
        if hashlib.sha256(data).hexdigest() != sha:
            raise StoreError(f"blob file {path} no longer holds the bytes of its name")
        return data

    # -- benchmarks ----------------------------------------------------------------------------

    def add_benchmark(
        self,
        name: str,
        version: int,
        spec_hash: str,
        spec: dict[str, Any],
        *,
        actor: str = "system",
    ) -> BenchmarkRecord:
        """Register a benchmark version (the same spec again returns the stored one).

        A name and version already registered with another spec hash is a
        :class:`ConflictError`: a changed spec must be a new version, or two boards would
        rank runs of different plans side by side.
        """
        if not 0 <= version <= MAX_VERSION or not 0 < len(name) <= MAX_NAME:
            raise UsageError(
                f"a board needs a name of 1 to {MAX_NAME} characters and a version from 0 to "
                f"{MAX_VERSION:,}; {name[:80]!r} v{version} is not"
            )
        with self._read() as session:
            same = session.scalar(select(BenchmarkRow).where(BenchmarkRow.spec_hash == spec_hash))
            if same is not None:
                if (same.name, same.version) != (name, version):
                    raise ConflictError(
                        f"spec hash {spec_hash} is {same.name} v{same.version}, not {name} "
                        f"v{version}"
                    )
                return _benchmark(same)
        try:
            with self._write(
                actor, "benchmark.add", f"{name} v{version}", spec_hash=spec_hash
            ) as session:
                row = BenchmarkRow(
                    name=name,
                    version=version,
                    spec_hash=spec_hash,
                    spec=spec,
                    created_at=self._clock(),
                )
                session.add(row)
        except IntegrityError as error:
            raise ConflictError(
                f"{name} v{version} is registered with another spec; a changed spec is a new "
                "version"
            ) from error
        return _benchmark(row)

    def benchmark(self, name: str, version: int | None = None) -> BenchmarkRecord:
        """A registered benchmark; without ``version``, its newest."""
        with self._read() as session:
            return _benchmark(self._benchmark_row(session, name, version))

    def benchmarks(self) -> list[BenchmarkRecord]:
        with self._read() as session:
            query = select(BenchmarkRow).order_by(BenchmarkRow.name, BenchmarkRow.version)
            return [_benchmark(row) for row in session.scalars(query)]

    @staticmethod
    def _benchmark_row(session: Session, name: str, version: int | None) -> BenchmarkRow:
        query = select(BenchmarkRow).where(BenchmarkRow.name == name)
        if version is not None and not 0 <= version <= MAX_VERSION:
            raise NotFoundError(f"no benchmark {name[:200]!r} has version {version}")
        if version is not None:
            query = query.where(BenchmarkRow.version == version)
        row = session.scalar(query.order_by(BenchmarkRow.version.desc()).limit(1))
        if row is None:
            shown = name if version is None else f"{name} v{version}"
            raise NotFoundError(f"no benchmark {shown!r} is registered")
        return row

    # -- submissions ---------------------------------------------------------------------------

    def add_submission(
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
        existing = self._find_submission(benchmark.id, bundle_sha)
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
            created_at=self._clock(),
        )
        actor = token.name if token else "system"
        detail = {"benchmark": f"{benchmark.name} v{benchmark.version}", "bundle": bundle_sha}
        try:
            with self._write(actor, "submission.add", row.id, **detail) as session:
                session.add(row)
        except IntegrityError as error:
            raced = self._find_submission(benchmark.id, bundle_sha)
            if raced is None:
                raise ConflictError(
                    f"submission of bundle {bundle_sha} refused: is the bundle stored "
                    "(put_blob) and the benchmark registered?"
                ) from error
            return raced, False
        return self.submission(row.id), True

    def _find_submission(self, benchmark_id: int, bundle_sha: str) -> SubmissionRecord | None:
        query = _submission_query().where(
            SubmissionRow.benchmark_id == benchmark_id, SubmissionRow.bundle_sha == bundle_sha
        )
        with self._read() as session:
            row = session.execute(query).one_or_none()
        return _submission(row) if row is not None else None

    def submission(self, submission_id: str) -> SubmissionRecord:
        with self._read() as session:
            row = session.execute(
                _submission_query().where(SubmissionRow.id == submission_id)
            ).one_or_none()
        if row is None:
            raise NotFoundError(f"no submission {submission_id!r}")
        return _submission(row)

    def submissions(
        self, benchmark: str | None = None, *, status: Status | None = None
    ) -> list[SubmissionRecord]:
        """Submissions, oldest first, of one benchmark (any version) and status if given."""
        query = _submission_query().order_by(SubmissionRow.created_at, SubmissionRow.id)
        if benchmark is not None:
            query = query.where(BenchmarkRow.name == benchmark)
        if status is not None:
            query = query.where(SubmissionRow.status == status)
        with self._read() as session:
            return [_submission(row) for row in session.execute(query)]

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
        reason = _storable(reason) if reason else reason
        with self._write(
            actor, "submission.status", submission_id, status=status, reason=reason
        ) as session:
            row = self._submission_row(session, submission_id)
            row.status, row.reject_reason = status, reason

    @staticmethod
    def _submission_row(session: Session, submission_id: str) -> SubmissionRow:
        row = session.get(SubmissionRow, submission_id)
        if row is None:
            raise NotFoundError(f"no submission {submission_id!r}")
        return row

    def submissions_since(self, token: Token, since: datetime) -> int:
        """How many submissions ``token`` sent from ``since`` on (for rate limits)."""
        query = select(func.count()).where(
            SubmissionRow.token_id == token.id, SubmissionRow.created_at >= since
        )
        with self._read() as session:
            return int(session.scalar(query) or 0)

    # -- rescores ------------------------------------------------------------------------------

    def add_rescore(
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
        with self._write(actor, action, submission_id, **detail) as session:
            submission = self._submission_row(session, submission_id)
            row = RescoreRow(
                submission_id=submission_id,
                benchmark=rescore.benchmark,
                benchmark_version=rescore.benchmark_version,
                benchmark_hash=rescore.benchmark_hash,
                scorer_version=rescore.scorer_version,
                tier=rescore.tier,
                flags=list(rescore.flags),
                seconds=rescore.seconds,
                computed_at=self._clock(),
                episodes=len(rescore.episodes),
                passed=passed,
                errored=rescore.errored,
                missing=rescore.missing,
                mismatched=rescore.mismatched,
            )
            session.add(row)
            session.flush()
            if rescore.episodes:
                session.execute(insert(EpisodeRow), _episode_rows(row.id, rescore.episodes))
            if submission.status != "rejected":
                submission.status, submission.reject_reason = "scored", None
            return row.id

    def latest_rescore(self, submission_id: str) -> Rescore | None:
        """The newest check of a submission, exactly as it was added (None: never checked)."""
        history = self._rescores(submission_id, latest_only=True)
        return history[0].rescore if history else None

    def rescore_history(self, submission_id: str) -> list[RescoreRecord]:
        """Every check of a submission, oldest first."""
        return self._rescores(submission_id, latest_only=False)

    def _rescores(self, submission_id: str, *, latest_only: bool) -> list[RescoreRecord]:
        query = select(RescoreRow).where(RescoreRow.submission_id == submission_id)
        if latest_only:
            query = query.order_by(RescoreRow.id.desc()).limit(1)
        else:
            query = query.order_by(RescoreRow.id)
        with self._read() as session:
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
        latest = _latest_rescore_id()
        query = (
            select(SubmissionRow.id, BenchmarkRow.name, BenchmarkRow.version)
            .add_columns(RescoreRow.scorer_version)
            .join(BenchmarkRow, BenchmarkRow.id == SubmissionRow.benchmark_id)
            .join(RescoreRow, RescoreRow.id == latest)
            .where(SubmissionRow.status == "scored")
            .order_by(SubmissionRow.created_at, SubmissionRow.id)
        )
        if benchmark is not None:
            query = query.where(BenchmarkRow.name == benchmark)
        with self._read() as session:
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
        with self._read() as session:
            bench = self._benchmark_row(session, benchmark_name, version)
            latest = _latest_rescore_id()
            query = (
                _submission_query()
                .add_columns(RescoreRow)
                .join(RescoreRow, RescoreRow.id == latest)
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
            episodes = _episodes_of(session, [row.RescoreRow.id for row in rows])
        return [(_submission(row), _rescore(row.RescoreRow, episodes)) for row in rows]

    # -- audit ---------------------------------------------------------------------------------

    def audit_log(self, *, target: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """The newest entries first (of one target if given)."""
        query = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
        if target is not None:
            query = query.where(AuditRow.target == target)
        with self._read() as session:
            return [
                AuditEntry(row.id, row.at, row.actor, row.action, row.target, row.detail)
                for row in session.scalars(query)
            ]


# ---------------------------------------------------------------------------------------------
# Rows to records


def _digest(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def _chunks(source: bytes | Path) -> Iterator[bytes]:
    if isinstance(source, bytes | bytearray | memoryview):
        yield bytes(source)
        return
    with open(source, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            yield chunk


def _token(row: TokenRow) -> Token:
    scopes = tuple(s for s in SCOPES if s in row.scopes)
    return Token(row.id, row.name, scopes, row.created_at, row.revoked_at, row.last_used_at)


def _benchmark(row: BenchmarkRow) -> BenchmarkRecord:
    return BenchmarkRecord(
        row.id, row.name, row.version, row.spec_hash, dict(row.spec), row.created_at
    )


def _submission_query() -> Any:
    """A submission with its benchmark's name and version and its token's name."""
    return (
        select(SubmissionRow, BenchmarkRow.name, BenchmarkRow.version, TokenRow.name)
        .join(BenchmarkRow, BenchmarkRow.id == SubmissionRow.benchmark_id)
        .outerjoin(TokenRow, TokenRow.id == SubmissionRow.token_id)
    )


def _submission(row: Any) -> SubmissionRecord:
    sub: SubmissionRow = row[0]
    info = SubmissionInfo(
        agent=sub.agent,
        model=sub.model,
        model_revision=sub.model_revision,
        method=sub.method,  # type: ignore[arg-type]
        code_hash=sub.code_hash,
        contact=sub.contact,
        notes=sub.notes,
    )
    return SubmissionRecord(
        id=sub.id,
        benchmark=row[1],
        benchmark_version=row[2],
        token_name=row[3],
        bundle_sha=sub.bundle_sha,
        info=info,
        manifest=sub.manifest,
        status=sub.status,  # type: ignore[arg-type]
        reject_reason=sub.reject_reason,
        created_at=sub.created_at,
    )


def _episode_rows(rescore_id: int, episodes: list[ScoredEpisode]) -> list[dict[str, Any]]:
    return [
        {
            "rescore_id": rescore_id,
            "position": i,
            **episode.to_dict(),
            "reason": _storable(episode.reason),
        }
        for i, episode in enumerate(episodes)
    ]


def _storable(text: str | None) -> str | None:
    """``text`` with every NUL character replaced (U+FFFD): PostgreSQL's text holds none, and
    a reason may quote what a record said (an errored episode's error)."""
    return text.replace("\x00", "\ufffd") if text else text


def _episodes_of(session: Session, rescore_ids: list[int]) -> dict[int, list[ScoredEpisode]]:
    """The episodes of many re-scores by id, in plan order: one query per 5,000 re-scores.

    By the ids the caller read, not by re-running its query: on a database that gives each
    statement its own snapshot, a re-score added in between would be another set of ids.
    """
    found: dict[int, list[ScoredEpisode]] = {rescore_id: [] for rescore_id in rescore_ids}
    for start in range(0, len(rescore_ids), 5_000):
        query = (
            select(EpisodeRow.rescore_id, *_EPISODE_COLUMNS)
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
        tier=row.tier,  # type: ignore[arg-type]
        episodes=episodes[row.id],
        scorer_version=row.scorer_version,
        flags=list(row.flags),
        seconds=row.seconds,
    )
