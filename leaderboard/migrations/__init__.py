"""The store's Alembic migrations, shipped in the package and run by
:meth:`agentgym.leaderboard.store.Store.migrate` (no ``alembic.ini``).

A change to the store's tables is a new file in ``versions/``, written by hand or drafted by
autogenerate against a database at head::

    from alembic import command
    from agentgym.leaderboard.store import alembic_config

    config = alembic_config()
    config.set_main_option("sqlalchemy.url", "sqlite:////tmp/at-head.db")
    command.revision(config, "what changed", autogenerate=True)

A migration never imports the store's tables: it says what the schema was at its revision,
which the tables in ``store/schema.py`` stop saying as soon as they change again.
``tests/leaderboard/test_store.py`` checks that the migrated schema is the tables' schema, on
SQLite and on PostgreSQL.
"""
