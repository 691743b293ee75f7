"""Arena boards: an arena run's match records, re-scored by replay on submission, and a board
per env rating every player from every accepted match.

As single-agent runs are replayed before they are ranked (:mod:`agentgym.leaderboard.rescore`),
every submitted match is played again from its seed and task with its recorded moves
(:func:`agentgym.arena.replay.replay`) before anything is stored: a match whose moves do not
play as recorded, or whose claimed scores are not the game's, refuses the whole submission
with the match and the turn named, and nothing of it is kept. So a board's numbers come from
games this server replayed, never from scores a submitter claimed.

The upload is JSON, ``{"manifest": {...}, "matches": [MatchRecord.to_dict(), ...]}``
(:func:`arena_payload` makes it of a run directory), sent like a bundle: the multipart field
``bundle``, a token with the ``submit`` scope, the same size cap and rate, read by the
board's one strict JSON reader (:func:`~agentgym.leaderboard.bundle.parse_json`), at most
:data:`MAX_MATCHES` matches.

A board (:func:`arena_board`) is :func:`agentgym.arena.rate` over every accepted match of the
env: ratings with their bootstrap intervals, ranks and tie groups, and each player's matches.
Matches from different submissions never share a bootstrap group: each match's id and group
are prefixed with its submission's id.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.arena import MatchRecord, Ratings, rate
from agentgym.arena.replay import ReplayMismatch, replay
from agentgym.errors import AgentGymError, RegistryError, UsageError
from agentgym.registry import make_multi

from .bundle import BundleRejected, parse_json
from .store import NotFoundError, Store, Token
from .store.arena import ArenaSubmission

__all__ = [
    "ArenaBoard",
    "ArenaRejected",
    "accept_arena",
    "arena_board",
    "arena_payload",
    "read_arena_payload",
]

MANIFEST_FILE = "manifest.json"
MAX_MATCHES = 100_000
"""The most matches one upload may hold (as a bundle's episodes): each is replayed."""


class ArenaRejected(AgentGymError):
    """An arena submission refused, with the reason (a match that does not replay names the
    match and the turn)."""


def arena_payload(run_dir: Path) -> bytes:
    """The upload of an arena run directory: its manifest and its match records."""
    from agentgym.arena.report import read_matches

    manifest_path = Path(run_dir) / MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    matches = [record.to_dict() for record in read_matches(Path(run_dir))]
    return json.dumps({"manifest": manifest, "matches": matches}).encode()


def read_arena_payload(data: bytes) -> tuple[dict[str, Any], list[MatchRecord]]:
    """The manifest and records of an upload; :class:`ArenaRejected` naming what is wrong."""
    try:
        payload = parse_json(data, "the upload")
    except BundleRejected as error:
        raise ArenaRejected(str(error)) from None
    if not isinstance(payload, dict) or not isinstance(payload.get("matches"), list):
        raise ArenaRejected('the upload must be {"manifest": {...}, "matches": [...]}')
    manifest = payload.get("manifest") or {}
    if not isinstance(manifest, dict):
        raise ArenaRejected("the manifest must be a JSON object")
    if not payload["matches"]:
        raise ArenaRejected("the upload holds no match")
    if len(payload["matches"]) > MAX_MATCHES:
        raise ArenaRejected(f"the upload holds over {MAX_MATCHES:,} matches")
    records = []
    for number, data_ in enumerate(payload["matches"], 1):
        try:
            records.append(MatchRecord.from_dict(data_))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ArenaRejected(f"match {number} is not a match record: {error}") from None
    ids = [record.match_id for record in records]
    if len(set(ids)) != len(ids):
        raise ArenaRejected("two matches share an id; each match needs its own")
    games: dict[str, str] = {}
    for record in records:  # one game sent twice under two ids would count twice
        game = json.dumps(
            [record.env_id, record.seed, record.task_id, record.seats, list(record.moves)],
            sort_keys=True,
        )
        if game in games:
            raise ArenaRejected(
                f"matches {games[game]!r} and {record.match_id!r} are the same game (same env, "
                f"seed, task, seats and moves); an arena plays each game once"
            )
        games[game] = record.match_id
    return manifest, records


def accept_arena(
    store: Store, data: bytes, token: Token
) -> tuple[ArenaSubmission, bool, list[str]]:
    """Read an upload, replay every match, and store the replayed records: (the submission,
    whether it is new, the envs whose boards it is on). :class:`ArenaRejected` (nothing
    stored) when a match does not replay or the upload does not read."""
    manifest, records = read_arena_payload(data)
    envs: dict[str, Any] = {}
    try:
        replayed = [_replayed(record, envs) for record in records]
    finally:
        for env in envs.values():
            env.close()
    found, new = store.add_arena_submission(replayed, manifest, token)
    return found, new, sorted(envs)


def _replayed(record: MatchRecord, envs: dict[str, Any]) -> MatchRecord:
    try:
        if record.env_id not in envs:
            envs[record.env_id] = make_multi(record.env_id)
        return replay(record, env=envs[record.env_id])
    except ReplayMismatch as mismatch:
        raise ArenaRejected(str(mismatch)) from None
    except (RegistryError, UsageError) as error:  # an unknown id, a single-agent env
        if isinstance(error, ImportError):  # a missing extra: the server's own lack
            raise
        raise ArenaRejected(f"match {record.match_id!r}: {error}") from None


@dataclass(frozen=True)
class ArenaBoard:
    """One env's arena board: the ratings of every accepted match and what they came from."""

    env_id: str
    ratings: Ratings
    submissions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "submissions": self.submissions,
            "ratings": self.ratings.to_dict(),
        }


def arena_board(store: Store, env_id: str, *, seed: int = 0) -> ArenaBoard:
    """The board of ``env_id``; :class:`NotFoundError` when no match of it is stored."""
    stored = store.arena_matches(env_id)
    if not stored:
        raise NotFoundError(f"no arena match of {env_id[:200]!r} is on this board")
    records = [_namespaced(submission, record) for submission, record in stored]
    return ArenaBoard(env_id, rate(records, seed=seed), len({s for s, _ in stored}))


def _namespaced(submission: str, record: MatchRecord) -> MatchRecord:
    """The record with its id and group inside its submission's: two runs' ``m1`` or
    ``seed3`` are different matches and different groups."""
    return dataclasses.replace(
        record,
        match_id=f"{submission}/{record.match_id}",
        group=f"{submission}/{record.cluster}",
    )
