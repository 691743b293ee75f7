"""Arena boards: an arena run's whole schedule, re-scored by replay on submission, and a board
per env rating every player from every accepted match.

As single-agent runs are replayed before they are ranked (:mod:`agentgym.leaderboard.rescore`),
every submitted match is played again from its seed and task with its recorded moves
(:func:`agentgym.arena.replay.replay`) before anything is stored: a match whose moves do not
play as recorded, or whose claimed scores are not the game's, refuses the whole submission
with the match and the turn named, and nothing of it is kept. So a board's numbers come from
games this server replayed, never from scores a submitter claimed.

**The whole schedule or nothing.** A run is not a pile of matches to pick from: the server
rebuilds the schedule from the manifest's arena (its players, games, seed, schedule and
rounds; :func:`~agentgym.arena.schedule.round_robin`, or for Swiss
:func:`~agentgym.arena.schedule.swiss_schedule` over the replayed results, which gives the
pairings the runner played) and every scheduled match must be in the upload exactly once,
scored or errored, with its seats, seed and group as scheduled, and the task its seed draws.
A missing match (a loss left out), an unknown or repeated id, or an edited seat, seed or task
refuses the submission.

**An errored match counts against the agents in it.** An errored match has no result, and
leaving it out of the fit would let an agent's backend "fail" its way out of a loss. The
board counts it as :func:`errored_scores` says: a reference player's seat won it and every
other (submitted-agent) seat lost it; seats of one kind draw. Each player's errored matches
are shown on the board.

The upload is JSON, ``{"manifest": {...}, "matches": [MatchRecord.to_dict(), ...],
"errored": [errored.jsonl's entries]}`` (:func:`arena_payload` makes it of a run directory),
sent like a bundle: the multipart field ``bundle``, a token with the ``submit`` scope, the
same size cap and rate, read by the board's one strict JSON reader
(:func:`~agentgym.leaderboard.bundle.parse_json`), at most :data:`MAX_MATCHES` matches.

A board (:func:`arena_board`) is :func:`agentgym.arena.rate` over every accepted match of the
env: ratings with their bootstrap intervals, ranks and tie groups, and each player's matches.
Matches from different submissions never share a bootstrap group: each match's id and group
are prefixed with its submission's id.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.arena import MatchRecord, Ratings, rate
from agentgym.arena.replay import ReplayMismatch, replay
from agentgym.arena.run import Arena
from agentgym.arena.schedule import ScheduledMatch
from agentgym.errors import AgentGymError, RegistryError, TaskError, UsageError
from agentgym.registry import make_multi

from .bundle import BundleRejected, parse_json
from .store import ErroredMatch, NotFoundError, Store, Token
from .store.arena import ArenaSubmission

__all__ = [
    "ArenaBoard",
    "ArenaRejected",
    "ArenaUpload",
    "accept_arena",
    "arena_board",
    "arena_matches_json",
    "arena_payload",
    "errored_scores",
    "read_arena_payload",
]

MANIFEST_FILE = "manifest.json"
MAX_MATCHES = 100_000
"""The most matches one upload may hold (as a bundle's episodes): each is replayed."""
MAX_PLAYERS = 1_000
"""The most players a manifest may name (Swiss pairing recurses once per pair)."""


class ArenaRejected(AgentGymError):
    """An arena submission refused, with the reason (a match that does not replay names the
    match and the turn)."""


@dataclass(frozen=True)
class ArenaUpload:
    """An upload as read: the manifest, the arena it describes, the scored records and the
    errored matches (each as scheduled, with its error)."""

    manifest: dict[str, Any]
    arena: Arena
    records: list[MatchRecord]
    errored: list[tuple[ScheduledMatch, str]]


def arena_payload(run_dir: Path) -> bytes:
    """The upload of an arena run directory: its manifest, match records and errored matches."""
    from agentgym.arena.report import read_run

    records, errored = read_run(Path(run_dir))  # one clear line for a folder that is not a run
    manifest_path = Path(run_dir) / MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    matches = [record.to_dict() for record in records]
    return json.dumps({"manifest": manifest, "matches": matches, "errored": errored}).encode()


def read_arena_payload(data: bytes) -> ArenaUpload:
    """The manifest, arena, records and errored matches of an upload; :class:`ArenaRejected`
    naming what is wrong."""
    try:
        payload = parse_json(data, "the upload")
    except BundleRejected as error:
        raise ArenaRejected(str(error)) from None
    if not isinstance(payload, dict) or not isinstance(payload.get("matches"), list):
        raise ArenaRejected('the upload must be {"manifest": {...}, "matches": [...]}')
    manifest = payload.get("manifest") or {}
    if not isinstance(manifest, dict):
        raise ArenaRejected("the manifest must be a JSON object")
    listed, errored = payload["matches"], payload.get("errored") or []
    if not isinstance(errored, list):
        raise ArenaRejected('"errored" must be a list of errored.jsonl\'s entries')
    if not listed and not errored:
        raise ArenaRejected("the upload holds no match")
    if len(listed) + len(errored) > MAX_MATCHES:
        raise ArenaRejected(f"the upload holds over {MAX_MATCHES:,} matches")
    records = []
    for number, data_ in enumerate(listed, 1):
        try:
            records.append(MatchRecord.from_dict(data_))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ArenaRejected(f"match {number} is not a match record: {error}") from None
    _refuse_copies(records)
    entries = [_errored_entry(number, entry) for number, entry in enumerate(errored, 1)]
    return ArenaUpload(manifest, _arena_of(manifest), records, entries)


def _refuse_copies(records: list[MatchRecord]) -> None:
    """One game sent twice under two ids would count twice."""
    games: dict[str, str] = {}
    for record in records:
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


def _errored_entry(number: int, entry: Any) -> tuple[ScheduledMatch, str]:
    """An ``errored.jsonl`` entry: the match as scheduled, and its error."""
    try:
        seats, seed = entry["seats"], entry["seed"]
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"its seed {seed!r} is not an integer")
        match = ScheduledMatch(
            match_id=str(entry["match_id"]),
            seats={str(seat): str(player) for seat, player in seats.items()},
            seed=seed,
            group=str(entry.get("group", "")),
        )
        return match, str(entry.get("error", ""))
    except (KeyError, TypeError, AttributeError) as error:
        raise ArenaRejected(
            f"errored entry {number} is not an errored match (match_id, seats, seed, group, "
            f"error: a line of errored.jsonl): {error}"
        ) from None


def _arena_of(manifest: Mapping[str, Any]) -> Arena:
    """The arena the manifest says the run played: what its schedule is rebuilt from."""
    spec = manifest.get("arena")
    if not isinstance(spec, dict):
        raise ArenaRejected(
            "the manifest has no arena (the run's manifest.json, which agentgym arena writes, "
            "says what was scheduled); send the run directory as the arena left it"
        )
    try:
        players, rounds = spec["players"], spec.get("rounds")
        for key, value in [("games", spec["games"]), ("seed", spec.get("seed", 0))]:
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{key} {value!r} is not an integer")
        if rounds is not None and (not isinstance(rounds, int) or isinstance(rounds, bool)):
            raise TypeError(f"rounds {rounds!r} is not an integer")
        if not isinstance(players, list) or not 2 <= len(players) <= MAX_PLAYERS:
            raise TypeError(f"players must be a list of 2 to {MAX_PLAYERS} names")
        return Arena(
            env_id=str(spec["env_id"]),
            players=tuple(str(p) for p in players),
            games=spec["games"],
            schedule=spec.get("schedule", "round-robin"),
            rounds=rounds,
            seed=spec.get("seed", 0),
            split=str(spec.get("split", "test")),
        )
    except (KeyError, TypeError) as error:
        raise ArenaRejected(f"the manifest's arena does not read: {error}") from None


def accept_arena(
    store: Store, data: bytes, token: Token
) -> tuple[ArenaSubmission, bool, list[str], int]:
    """Read an upload, replay every match, check it is the arena's whole schedule, and store
    it: (the submission, whether it is new, the envs whose boards it is on, its errored
    matches). :class:`ArenaRejected` (nothing stored) when a match does not replay, the
    schedule is not whole, or the upload does not read."""
    upload = read_arena_payload(data)
    env_id = upload.arena.env_id
    for record in upload.records:
        if record.env_id != env_id:
            raise ArenaRejected(
                f"match {record.match_id!r} is a game of {record.env_id!r} but the manifest's "
                f"arena plays {env_id!r}; send one arena run at a time"
            )
    env = _make(env_id, upload.arena.split)
    try:
        replayed = [_replayed(record, env) for record in upload.records]
        seats = list(env.possible_agents)
        references = set(env.unwrapped.reference_players())
        _check_whole_schedule(_schedule(upload.arena, seats, replayed), replayed, upload.errored)
        _check_tasks(env, upload.arena.split, replayed)
    finally:
        env.close()
    errored = [
        ErroredMatch(
            match.match_id,
            env_id,
            dict(match.seats),
            match.seed,
            match.group,
            error,
            errored_scores(match.seats, references),
        )
        for match, error in upload.errored
    ]
    found, new = store.add_arena_submission(replayed, upload.manifest, token, errored)
    return found, new, [env_id], len(errored)


def _make(env_id: str, split: str) -> Any:
    try:
        return make_multi(env_id, split=split)
    except (RegistryError, UsageError, TaskError) as error:  # an unknown id or split
        if isinstance(error, ImportError):  # a missing extra: the server's own lack
            raise
        raise ArenaRejected(f"the manifest's arena plays {env_id!r}: {error}") from None


def _check_tasks(env: Any, split: str, records: list[MatchRecord]) -> None:
    """Each match's task must be the one its (scheduled) seed draws from the arena's split,
    as the runner's reset drew it: a record cannot swap in a game on another task."""
    drawn: dict[int | None, str] = {}
    for record in records:
        if record.seed not in drawn:
            env.reset(seed=record.seed)
            drawn[record.seed] = env.unwrapped.task.id
        if record.task_id != drawn[record.seed]:
            raise ArenaRejected(
                f"match {record.match_id!r} played task {record.task_id!r}, but its seed "
                f"{record.seed} draws {drawn[record.seed]!r} from the {split!r} split: the "
                "record was edited, or is from another arena"
            )


def _replayed(record: MatchRecord, env: Any) -> MatchRecord:
    try:
        return replay(record, env=env)
    except ReplayMismatch as mismatch:
        raise ArenaRejected(str(mismatch)) from None


def errored_scores(seats: Mapping[str, str], references: Iterable[str]) -> dict[str, float]:
    """What the board counts an errored match as: a seat held by one of the game's reference
    ``references`` won it (1), every other seat, a submitted agent's, lost it (0). Seats of
    one kind tie: between two agents it is a draw. So an error never hides an agent's loss."""
    kept = set(references)
    return {seat: 1.0 if player in kept else 0.0 for seat, player in seats.items()}


def _schedule(
    arena: Arena, seats: list[str], records: list[MatchRecord]
) -> Iterator[list[ScheduledMatch]]:
    """Every match ``arena`` scheduled, a batch at a time: a round-robin's all at once, a
    Swiss arena's round by round, each planned from ``records`` (the replayed results) as
    the runner planned it."""
    count = arena.match_count(len(seats))
    if count > MAX_MATCHES:
        raise ArenaRejected(
            f"the manifest's arena schedules {count:,} matches, over the {MAX_MATCHES:,} an "
            "upload may hold"
        )
    try:
        yield from arena.batches(seats, lambda: records)
    except UsageError as error:
        raise ArenaRejected(f"the manifest's arena cannot be scheduled: {error}") from None


def _check_whole_schedule(
    batches: Iterable[list[ScheduledMatch]],
    records: list[MatchRecord],
    errored: list[tuple[ScheduledMatch, str]],
) -> None:
    """Every scheduled match exactly once, scored or errored, seated, seeded and grouped as
    scheduled; :class:`ArenaRejected` naming the first match that is not. A Swiss run is
    checked round by round, so a match left out is named in its round (the later rounds,
    planned from results without it, would not be the ones the run played)."""
    sent = [("scored", r.match_id, dict(r.seats), r.seed, r.group) for r in records]
    sent += [("errored", m.match_id, dict(m.seats), m.seed, m.group) for m, _ in errored]
    counts = Counter(match_id for _, match_id, *_ in sent)
    twice = next((match_id for match_id, n in counts.items() if n > 1), None)
    if twice is not None:
        raise ArenaRejected(
            f"match {twice!r} is sent {counts[twice]} times (scored or errored); a run plays "
            "each scheduled match once"
        )
    unplanned = {
        match_id: (kind, seats, seed, group) for kind, match_id, seats, seed, group in sent
    }
    for batch in batches:
        missing = [match for match in batch if match.match_id not in unplanned]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise ArenaRejected(
                f"scheduled match {missing[0].match_id!r} ({missing[0].seats}) is missing{more}: "
                "a run sends every match of its schedule, scored or errored (finish it with "
                "agentgym arena --resume and send the run directory as it is; or was the "
                "manifest edited?)"
            )
        for match in batch:
            kind, seats, seed, group = unplanned.pop(match.match_id)
            for what, got, want in [
                ("seats", seats, match.seats),
                ("seed", seed, match.seed),
                ("group", group, match.group),
            ]:
                if got != want:
                    raise ArenaRejected(
                        f"{kind} match {match.match_id!r} has {what} {got!r}, the schedule "
                        f"{want!r}: the record was edited, or is from another arena"
                    )
    if unplanned:
        match_id, (kind, *_) = next(iter(unplanned.items()))
        raise ArenaRejected(
            f"{kind} match {match_id!r} is not in the schedule of the manifest's arena: is it "
            "from another run, or was the manifest edited?"
        )


@dataclass(frozen=True)
class ArenaBoard:
    """One env's arena board: the ratings of every accepted match (errored ones counted as
    :func:`errored_scores` says) and what they came from."""

    env_id: str
    ratings: Ratings
    submissions: int
    errored: dict[str, int]
    """Each rated player's errored matches (0 for most)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "submissions": self.submissions,
            "ratings": self.ratings.to_dict(),
            "errored": dict(self.errored),
        }


def arena_board(store: Store, env_id: str, *, seed: int = 0) -> ArenaBoard:
    """The board of ``env_id``; :class:`NotFoundError` when no match of it is stored."""
    stored = store.arena_matches(env_id)
    failed = store.arena_errored(env_id)
    if not stored and not failed:
        raise NotFoundError(f"no arena match of {env_id[:200]!r} is on this board")
    records = [_namespaced(submission, record) for submission, record in stored]
    records += [_namespaced(submission, match.as_record()) for submission, match in failed]
    ratings = rate(records, seed=seed)
    errored = Counter(player for _, match in failed for player in match.seats.values())
    submissions = {s for s, _ in stored} | {s for s, _ in failed}
    return ArenaBoard(
        env_id, ratings, len(submissions), {row.player: errored[row.player] for row in ratings.rows}
    )


def arena_matches_json(store: Store, env_id: str) -> dict[str, Any]:
    """Every accepted match of ``env_id`` with its submission: the scored ones as replayed,
    the errored ones with the scores the board counts (the API's and the export's JSON)."""
    stored = store.arena_matches(env_id)
    failed = store.arena_errored(env_id)
    return {
        "env_id": env_id,
        "matches": [{"submission": sub, **record.to_dict()} for sub, record in stored],
        "errored": [{"submission": sub, **match.to_dict()} for sub, match in failed],
    }


def _namespaced(submission: str, record: MatchRecord) -> MatchRecord:
    """The record with its id and group inside its submission's: two runs' ``m1`` or
    ``seed3`` are different matches and different groups."""
    return dataclasses.replace(
        record,
        match_id=f"{submission}/{record.match_id}",
        group=f"{submission}/{record.cluster}",
    )
