"""The store's database: its URL, its engine (SQLite's pragmas and locking included), its
read and write sessions, and the migrations that make its schema.

Every write goes through :meth:`Database.write`, which adds the write's audit entry in the
same transaction: both land or neither, and the newest audit id versions the whole store
(what :class:`~agentgym.leaderboard.pages.Site` keys its views on).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, sessionmaker

from agentgym.errors import UsageError

from .schema import AuditRow

__all__ = [
    "MIGRATIONS",
    "WRITE_OPTION",
    "Database",
    "alembic_config",
    "database_url",
    "default_blob_dir",
    "sqlite_file",
    "utcnow",
]

MIGRATIONS = Path(__file__).parent.parent / "migrations"
WRITE_OPTION = "agentgym_write"
"""The execution option that marks a write transaction (:func:`_on_sqlite_begin`)."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def database_url(where: str | Path) -> str:
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
    url = make_url(database_url(where))
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def default_blob_dir(url: str) -> Path:
    """``blobs/`` beside a SQLite file; a server database has no folder beside it."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        return Path(parsed.database).parent / "blobs"
    raise UsageError(
        f"a store at {parsed.render_as_string()} keeps its bundle files in a folder it cannot "
        "derive from the URL: pass blob_dir="
    )


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


def _make_engine(url: str) -> Engine:
    if make_url(url).get_backend_name() != "sqlite":
        return create_engine(url)
    Path(make_url(url).database or ".").parent.mkdir(parents=True, exist_ok=True)
    # One connection per thread at a time from the pool; the server's threads share it.
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    event.listen(engine, "connect", _on_sqlite_connect)
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


class Database:
    """One engine, its sessions and the store's clock, shared by every table's part.

    Args:
        url: a SQLAlchemy URL (:func:`database_url` makes one of a path).
        clock: the store's time (tests pass a fixed one).
    """

    def __init__(self, url: str, clock: Callable[[], datetime] = utcnow) -> None:
        self.url = url
        self.clock = clock
        self.engine = _make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._writes = sessionmaker(
            self.engine.execution_options(**{WRITE_OPTION: True}), expire_on_commit=False
        )

    def close(self) -> None:
        """Close the database's connections (idempotent)."""
        self.engine.dispose()

    def migrate(self) -> None:
        """Create or upgrade the schema to the newest migration."""
        with self.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")

    @contextmanager
    def write(self, actor: str, action: str, target: str, **detail: Any) -> Iterator[Session]:
        """A transaction that writes its audit entry with it (both land or neither)."""
        with self._writes.begin() as session:
            yield session
            session.add(
                AuditRow(at=self.clock(), actor=actor, action=action, target=target, detail=detail)
            )

    def write_unaudited(self) -> AbstractContextManager[Session]:
        """A write transaction without an audit entry, for what changes nothing a page shows
        (a token's last-used time): it leaves the store's version, and every kept view, as
        they are."""
        return self._writes.begin()

    def read(self) -> Session:
        return self._sessions()
