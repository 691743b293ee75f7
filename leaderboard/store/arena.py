"""The ``arena_submissions`` and ``arena_matches`` tables: an arena run's match records, each
re-scored by replay before it reaches the store (:mod:`agentgym.leaderboard.arena`), its
errored matches, and who sent them. The same matches twice are one submission; an arena
board reads every match of its env.

An errored match is a row of ``arena_matches`` too, its ``record`` ``{"errored": ...}``
(:meth:`ErroredMatch.to_dict`), so a submission's rows are its whole schedule, in order:
the scored records first, then the errored ones."""

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

__all__ = ["ArenaMatches", "ArenaSubmission", "ErroredMatch", "content_sha"]


@dataclass(frozen=True)
class ArenaSubmission:
    """An accepted arena submission: its matches are on the boards of their envs."""

    id: str
    token_name: str | None
    matches: int
    """Every match of its schedule: the scored ones and the errored ones."""
    manifest: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class ErroredMatch:
    """A scheduled match the run could not play (its ``errored.jsonl`` entry): who sat where,
    its seed and group, why it errored, and ``scores``, what the board counts it as (see
    :func:`agentgym.leaderboard.arena.errored_scores`)."""

    match_id: str
    env_id: str
    seats: dict[str, str]
    seed: int
    group: str
    error: str
    scores: dict[str, float]

    def as_record(self) -> MatchRecord:
        """The match as the board's fit counts it: its seats and the board's scores."""
        return MatchRecord(
            match_id=self.match_id,
            env_id=self.env_id,
            seats=self.seats,
            scores=self.scores,
            group=self.group,
            seed=self.seed,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "env_id": self.env_id,
            "seats": dict(self.seats),
            "seed": self.seed,
            "group": self.group,
            "error": self.error,
            "scores": dict(self.scores),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ErroredMatch:
        return cls(
            match_id=str(data["match_id"]),
            env_id=str(data["env_id"]),
            seats={str(k): str(v) for k, v in data["seats"].items()},
            seed=int(data["seed"]),
            group=str(data["group"]),
            error=str(data["error"]),
            scores={str(k): float(v) for k, v in data["scores"].items()},
        )


def content_sha(records: Sequence[MatchRecord], errored: Sequence[ErroredMatch] = ()) -> str:
    """The submission's identity: the sha256 of its records (then its errored matches) in
    canonical JSON."""
    rows = [r.to_dict() for r in records] + [{"errored": e.to_dict()} for e in errored]
    text = json.dumps(rows, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ArenaMatches:
    """Store replayed arena matches and read them back by env."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def add(
        self,
        records: Sequence[MatchRecord],
        manifest: dict[str, Any],
        token: Token | None,
        errored: Sequence[ErroredMatch] = (),
    ) -> tuple[ArenaSubmission, bool]:
        """Store an arena submission of replayed ``records`` and its ``errored`` matches:
        (the submission, whether it is new). The same matches again are the submission
        already stored."""
        sha = content_sha(records, errored)
        existing = self._find(sha)
        if existing is not None:
            return existing, False
        count = len(records) + len(errored)
        row = ArenaSubmissionRow(
            id=str(uuid.uuid4()),
            token_id=token.id if token else None,
            content_sha=sha,
            manifest=manifest,
            matches=count,
            created_at=self.database.clock(),
        )
        rows = [(r.env_id, r.match_id, r.to_dict()) for r in records]
        rows += [(e.env_id, e.match_id, {"errored": e.to_dict()}) for e in errored]
        actor = token.name if token else "system"
        with self.database.write(actor, "arena.add", row.id, matches=count) as session:
            session.add(row)
            session.flush()
            session.add_all(
                ArenaMatchRow(
                    submission_id=row.id,
                    position=position,
                    env_id=env_id,
                    match_id=match_id,
                    record=data,
                )
                for position, (env_id, match_id, data) in enumerate(rows)
            )
        return self._record(row, token.name if token else None), True

    def matches(self, env_id: str) -> list[tuple[str, MatchRecord]]:
        """Every scored match of ``env_id``: (its submission's id, the record), in the order
        submitted."""
        return [(sub, MatchRecord.from_dict(data)) for sub, data in self._rows(env_id, False)]

    def errored(self, env_id: str) -> list[tuple[str, ErroredMatch]]:
        """Every errored match of ``env_id``: (its submission's id, the match), in the order
        submitted."""
        rows = self._rows(env_id, True)
        return [(sub, ErroredMatch.from_dict(data["errored"])) for sub, data in rows]

    def _rows(self, env_id: str, errored: bool) -> list[tuple[str, dict[str, Any]]]:
        query = (
            select(ArenaMatchRow.submission_id, ArenaMatchRow.record)
            .join(ArenaSubmissionRow)
            .where(ArenaMatchRow.env_id == env_id)
            .order_by(ArenaSubmissionRow.created_at, ArenaMatchRow.submission_id)
            .order_by(ArenaMatchRow.position)
        )
        with self.database.read() as session:
            rows = [(sub, data) for sub, data in session.execute(query)]
        return [(sub, data) for sub, data in rows if ("errored" in data) == errored]

    def envs(self) -> list[tuple[str, int]]:
        """Every env with stored matches, and how many (errored ones included): (env id,
        matches), by env id."""
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
