"""The ``benchmarks`` table: a name, a version and the hash of its spec. A changed spec is a
new version."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentgym.errors import UsageError

from .database import Database
from .records import BenchmarkRecord, ConflictError, NotFoundError
from .schema import BenchmarkRow

__all__ = ["MAX_NAME", "MAX_VERSION", "Benchmarks", "benchmark_row"]

MAX_VERSION = 2**31 - 1
"""The highest benchmark version a store holds (its column is a 32-bit integer on
PostgreSQL): a version above it names no benchmark."""
MAX_NAME = 200
"""The longest benchmark name a store holds (its column's width)."""


class Benchmarks:
    """Register benchmark versions and read them back."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def add(
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
        same = self._same_spec(name, version, spec_hash)
        if same is not None:
            return same
        try:
            with self.database.write(
                actor, "benchmark.add", f"{name} v{version}", spec_hash=spec_hash
            ) as session:
                row = BenchmarkRow(
                    name=name,
                    version=version,
                    spec_hash=spec_hash,
                    spec=spec,
                    created_at=self.database.clock(),
                )
                session.add(row)
        except IntegrityError as error:
            raise ConflictError(
                f"{name} v{version} is registered with another spec; a changed spec is a new "
                "version"
            ) from error
        return _benchmark(row)

    def _same_spec(self, name: str, version: int, spec_hash: str) -> BenchmarkRecord | None:
        """The benchmark registered with ``spec_hash`` if it is ``name`` v``version``; None if
        none is; a :class:`ConflictError` if another is."""
        with self.database.read() as session:
            same = session.scalar(select(BenchmarkRow).where(BenchmarkRow.spec_hash == spec_hash))
            if same is None:
                return None
            if (same.name, same.version) != (name, version):
                raise ConflictError(
                    f"spec hash {spec_hash} is {same.name} v{same.version}, not {name} v{version}"
                )
            return _benchmark(same)

    def get(self, name: str, version: int | None = None) -> BenchmarkRecord:
        """A registered benchmark; without ``version``, its newest."""
        with self.database.read() as session:
            return _benchmark(benchmark_row(session, name, version))

    def all(self) -> list[BenchmarkRecord]:
        with self.database.read() as session:
            query = select(BenchmarkRow).order_by(BenchmarkRow.name, BenchmarkRow.version)
            return [_benchmark(row) for row in session.scalars(query)]


def benchmark_row(session: Session, name: str, version: int | None) -> BenchmarkRow:
    """The row of ``name`` v``version`` (its newest without one); :class:`NotFoundError` if
    none is registered."""
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


def _benchmark(row: BenchmarkRow) -> BenchmarkRecord:
    return BenchmarkRecord(
        row.id, row.name, row.version, row.spec_hash, dict(row.spec), row.created_at
    )
