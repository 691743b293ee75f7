"""The ``audit_log`` table: who (a token's name, or ``system``) wrote what, when. Every write
adds its entry in the same transaction (:meth:`~.database.Database.write`); this part reads
them."""

from __future__ import annotations

from sqlalchemy import select

from .database import Database
from .records import AuditEntry
from .schema import AuditRow

__all__ = ["AuditLog"]


class AuditLog:
    """The store's audit entries."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def entries(self, *, target: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """The newest entries first (of one target if given)."""
        query = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
        if target is not None:
            query = query.where(AuditRow.target == target)
        with self.database.read() as session:
            return [
                AuditEntry(row.id, row.at, row.actor, row.action, row.target, row.detail)
                for row in session.scalars(query)
            ]
