"""Alembic's entry to the store's migrations.

:meth:`Store.migrate` hands over its own connection (``config.attributes["connection"]``), so
the migrations run in the store's transaction on the store's engine, SQLite's pragmas
included; a developer drafting a revision points ``sqlalchemy.url`` at a database instead.
"""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection

from agentgym.errors import UsageError
from agentgym.leaderboard.store.schema import Base, UTCDateTime


def render_item(kind: str, item: Any, autogen_context: Any) -> str | Literal[False]:
    """Draft the store's own column type as the plain type it stands for, so a migration
    does not import the store."""
    if kind == "type" and isinstance(item, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,  # SQLite alters a table by copying it
        render_item=render_item,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    config = context.config
    connection = config.attributes.get("connection")
    if connection is not None:
        run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if url is None:
        raise UsageError("set sqlalchemy.url to the database to migrate (or pass a connection)")
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=Base.metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            run(connection)
    finally:
        engine.dispose()


main()
