"""The ``arena_submissions`` and ``arena_matches`` tables: an arena run's match records, each
re-scored by replay before it reaches the store (:mod:`agentgym.leaderboard.arena`), and who
sent them. The same matches twice are one submission; an arena board reads every match of
its env."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from agentgym.arena import MatchRecord

from .database import Database
from .records import Token
from .schema import ArenaMatchRow, ArenaSubmissionRow, TokenRow

__all__ = ["ArenaMatches", "ArenaSubmission", "content_sha"]


@dataclass(frozen=True)
class ArenaSubmission:
    """An accepted arena submission: its matches are on the boards of their envs."""

    id: str
    token_name: str | None
    matches: int
    manifest: dict[str, Any]
    created_at: datetime


def content_sha(records: Sequence[MatchRecord]) -> str:
    """The submission's identity: the sha256 of its records in canonical JSON."""
    text = json.dumps([r.to_dict() for r in records], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ArenaMatches:
    """Store replayed arena matches and read them back by env."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def add(
        self, records: Sequence[MatchRecord], manifest: dict[str, Any], token: Token | None
    ) -> tuple[ArenaSubmission, bool]:
        """Store an arena submission of replayed ``records``: (the submission, whether it is
        new). The same records again are the submission already stored."""
        sha = content_sha(records)
        existing = self._find(sha)
        if existing is not None:
            return existing, False
        row = ArenaSubmissionRow(
            id=str(uuid.uuid4()),
            token_id=token.id if token else None,
            content_sha=sha,
            manifest=manifest,
            matches=len(records),
            created_at=self.database.clock(),
        )
        actor = token.name if token else "system"
        with self.database.write(actor, "arena.add", row.id, matches=len(records)) as session:
            session.add(row)
            session.flush()
            session.add_all(
                ArenaMatchRow(
                    submission_id=row.id,
                    position=position,
                    env_id=record.env_id,
                    match_id=record.match_id,
                    record=record.to_dict(),
                )
                for position, record in enumerate(records)
            )
        return self._record(row, token.name if token else None), True

    def matches(self, env_id: str) -> list[tuple[str, MatchRecord]]:
        """Every stored match of ``env_id``: (its submission's id, the record), in the order
        submitted."""
        query = (
            select(ArenaMatchRow.submission_id, ArenaMatchRow.record)
            .join(ArenaSubmissionRow)
            .where(ArenaMatchRow.env_id == env_id)
            .order_by(ArenaSubmissionRow.created_at, ArenaMatchRow.submission_id)
            .order_by(ArenaMatchRow.position)
        )
        with self.database.read() as session:
            return [(sub, MatchRecord.from_dict(data)) for sub, data in session.execute(query)]

    def envs(self) -> list[tuple[str, int]]:
        """Every env with stored matches, and how many: (env id, matches), by env id."""
        query = (
            select(ArenaMatchRow.env_id, func.count())
            .group_by(ArenaMatchRow.env_id)
            .order_by(ArenaMatchRow.env_id)
        )
        with self.database.read() as session:
            return [(env_id, int(count)) for env_id, count in session.execute(query)]

    def _find(self, sha: str) -> ArenaSubmission | None:
        query = (
            select(ArenaSubmissionRow, TokenRow.name)
            .outerjoin(TokenRow)
            .where(ArenaSubmissionRow.content_sha == sha)
        )
        with self.database.read() as session:
            found = session.execute(query).first()
            return None if found is None else self._record(found[0], found[1])

    @staticmethod
    def _record(row: ArenaSubmissionRow, token_name: str | None) -> ArenaSubmission:
        return ArenaSubmission(row.id, token_name, row.matches, row.manifest, row.created_at)
