"""The arena's runner: plays a schedule of matches into a run directory and rates the players.

::

    RUN_DIR/
      manifest.json    the arena asked for (env, players, schedule, games, rounds, seed) and
                       its sha256 digest, which a resume must match
      matches.jsonl    one MatchRecord per scored match (agentgym.arena.records), appended as
                       each finishes, with the seed, task and moves that replay it
      errored.jsonl    one line per errored match: its id, seats, seed and the error
      episodes.jsonl   every agent seat's view of its matches as an EpisodeRecord (the ledger)
      ratings.json     the official ratings (intervals, ranks) and the provisional openskill ones

**Many matches at once.** Each match is one asyncio task (``num_matches`` at a time); its game
runs on a worker thread of a :class:`~agentgym.eval.threads.DaemonThreadPool`, and agents'
``act`` run on the event loop (:mod:`agentgym.arena.match`), so a batching backend gathers
requests across matches. Limits are the evaluator's :class:`~agentgym.eval.engine.EngineLimits`:
``step_timeout`` is an agent's time for one move, ``episode_timeout`` a whole match's,
``retries`` how often an errored match is played again.

**An agent can only lose.** An agent's bad move is feedback inside the game, which forfeits a
seat that keeps making them; an agent whose ``act`` (or ``reset``) raises an error of its own
or runs past ``step_timeout`` forfeits its seat (:mod:`agentgym.arena.match`). Either way the
match is scored, the seat lost, and its record names the forfeit.

**Errored, never scored.** An exception from the env or a reference player, a typed
:class:`~agentgym.errors.InfrastructureError` from an agent (a model server that failed: a
:class:`~agentgym.errors.ModelError`), a match over ``episode_timeout``, or a game that does
not end is an infrastructure failure: the match is retried from the start (a
:class:`~agentgym.errors.ContextLengthError` is not: it would overflow again, as the
evaluator has it), then written to ``errored.jsonl`` and left out of the ratings. A
:class:`~agentgym.errors.UsageError` stops the run.

**Resumable.** Rerunning with ``resume=True`` on the same directory checks the manifest's
digest and plays only the matches without a record in ``matches.jsonl`` or
``errored.jsonl``; a Swiss arena replans its rounds from the recorded results, which give the
same pairings. A match's episodes go to the ledger before its record, so a crash between the
two leaves episodes of a match that is played again: the resume drops them from
``episodes.jsonl`` first, and no episode id is written twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentgym.agents import AgentFactory, resolve_agent
from agentgym.agents.specs import resolve_agent_object
from agentgym.arena.match import MatchPlay, play_match
from agentgym.arena.provisional import ProvisionalRating, provisional_ratings
from agentgym.arena.ratings import Ratings, rate
from agentgym.arena.records import MatchRecord
from agentgym.arena.schedule import ScheduledMatch, check_players, round_robin, swiss_schedule
from agentgym.errors import ContextLengthError, UsageError
from agentgym.eval.engine import EngineLimits, check_num_envs, gather_or_cancel
from agentgym.eval.run import open_run_dir
from agentgym.eval.threads import DaemonThreadPool
from agentgym.ledger import EpisodeRecord, EpisodeWriter, read_episodes, rewrite_episodes

__all__ = ["Arena", "ArenaResult", "run_arena", "run_arena_async"]

Schedule = Literal["round-robin", "swiss"]
MANIFEST_VERSION = "1.0"


@dataclass(frozen=True)
class Arena:
    """What an arena plays: the env, the players (reference player names of the env, or
    agent specs), the schedule, games per table (per pairing and round for Swiss), the
    Swiss rounds, the base seed and the split of the games' tasks."""

    env_id: str
    players: tuple[str, ...]
    games: int
    schedule: Schedule = "round-robin"
    rounds: int | None = None
    seed: int = 0
    split: str = "test"
    """The split the games' tasks are drawn from (as eval's default, the held-out one)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "players": list(self.players),
            "games": self.games,
            "schedule": self.schedule,
            "rounds": self.rounds,
            "seed": self.seed,
            "split": self.split,
        }

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()

    def swiss_rounds(self) -> int:
        """The Swiss rounds: as asked, else enough to rank the field (ceil(log2 n) + 1)."""
        return self.rounds or max(1, (len(self.players) - 1).bit_length() + 1)

    def match_count(self, seats: int) -> int:
        """How many matches the schedule holds for a game of ``seats`` seats: every table's
        games for a round-robin, a pairing's games each round for a Swiss arena."""
        if self.schedule == "swiss":
            return self.swiss_rounds() * (len(self.players) // 2) * self.games
        return math.comb(len(self.players), seats) * self.games

    def batches(
        self, seats: Sequence[str], results: Callable[[], Iterable[MatchRecord]]
    ) -> Iterator[list[ScheduledMatch]]:
        """The schedule, one batch at a time: all of a round-robin at once; a Swiss round
        each, planned from ``results()``, the scored records so far (the runner's run
        directory, or a submitted run's replayed records on the leaderboard)."""
        players = list(self.players)
        if self.schedule == "round-robin":
            yield round_robin(players, seats, self.games, self.seed)
        elif self.schedule == "swiss":
            rounds = self.swiss_rounds()
            yield from swiss_schedule(players, seats, self.games, self.seed, rounds, results)
        else:
            raise UsageError(f"unknown schedule {self.schedule!r}; use round-robin or swiss")


@dataclass
class ArenaResult:
    """What :func:`run_arena` returns."""

    run_dir: Path
    records: list[MatchRecord]
    errored: list[dict[str, Any]]
    ratings: Ratings | None
    provisional: list[ProvisionalRating]
    resumed: int
    """Matches found already done."""
    episodes: list[EpisodeRecord] = field(default_factory=list)


def run_arena(arena: Arena, out: str | os.PathLike[str], **options: Any) -> ArenaResult:
    """Play ``arena`` into the run directory ``out``; see :func:`run_arena_async`."""
    return asyncio.run(run_arena_async(arena, out, **options))


async def run_arena_async(
    arena: Arena,
    out: str | os.PathLike[str],
    *,
    num_matches: int = 8,
    resume: bool = False,
    limits: EngineLimits | None = None,
    agent_options: dict[str, Any] | None = None,
    agents: Mapping[str, Any] | None = None,
    make_env: Callable[..., Any] | None = None,
    on_match: Callable[[MatchRecord | None], None] | None = None,
) -> ArenaResult:
    """Play every match of ``arena`` (``num_matches`` at once) into ``out``, then rate.

    ``agent_options`` configure the LLM agent specs among the players (as ``--agent-option``
    does for eval); ``agents`` gives players as Python objects by name (an Agent class or
    instance, a factory, ``f(observation, info)``: what :func:`~agentgym.agents.resolve_agent`
    takes), for players no spec string names; ``make_env(env_id, split=...)`` builds a game
    (default :func:`~agentgym.registry.make_multi`); ``on_match`` hears of each finished match (None
    for an errored one).
    """
    from agentgym.registry import make_multi

    check_num_envs(num_matches)
    build = make_env or make_multi
    references, seats = _game_facts(build, arena.env_id, arena.split)
    check_players(list(arena.players), seats, arena.games)
    factories = _agent_factories(arena.players, references, agent_options, agents or {})
    run_dir = Path(out)
    done = _prepare(run_dir, arena, resume, agent_options or {})
    lim = limits or EngineLimits()
    # A thread per match in flight (a match's thread waits on its agents for most of the
    # game, unlike the evaluator's short env calls), plus spares for abandoned hung ones.
    pool = DaemonThreadPool(num_matches + 8, name="agentgym-arena")
    how = MatchPlay(
        arena.env_id,
        references,
        factories,
        asyncio.get_running_loop(),
        lim.step_timeout,
        env_kwargs={"split": arena.split},
    )
    runner = _Runner(how, build, lim, pool, run_dir, on_match)
    resumed = len(done)
    try:
        with runner.open():
            for batch in arena.batches(seats, lambda: read_matches(run_dir)[0]):
                todo = [m for m in batch if m.match_id not in done]
                await runner.play(todo, num_matches)
    finally:
        pool.shutdown()
    records, errored = read_matches(run_dir)
    ratings = rate(records, seed=arena.seed) if records else None
    provisional = provisional_ratings(records) if records else []
    _write_ratings(run_dir, ratings, provisional)
    return ArenaResult(run_dir, records, errored, ratings, provisional, resumed)


def _game_facts(
    build: Callable[..., Any], env_id: str, split: str
) -> tuple[dict[str, Any], list[str]]:
    """The env's reference players (name -> factory) and its seats."""
    env = build(env_id, split=split)
    try:
        game = env.unwrapped
        return dict(game.reference_players()), list(game.possible_agents)
    finally:
        env.close()


def _agent_factories(
    players: Sequence[str],
    references: dict[str, Any],
    options: dict[str, Any] | None,
    objects: Mapping[str, Any],
) -> dict[str, AgentFactory]:
    """An agent factory for each player that is not a reference player of the env (a
    reference player's name wins over an agent spec of the same name, e.g. ``random``)."""
    stray = sorted(set(objects) - set(players))
    if stray:
        raise UsageError(f"agents= names {stray}, who are not among the players {list(players)}")
    factories = {}
    for name in players:
        if name in objects:
            factories[name] = resolve_agent_object(objects[name], name)[0]
        elif name not in references:
            try:
                factories[name] = resolve_agent(name, options)[0]
            except UsageError as error:
                known = ", ".join(sorted(references))
                raise UsageError(
                    f"{name!r} is not a reference player of this game ({known}), and as an "
                    f"agent spec: {error}"
                ) from None
    return factories


@dataclass
class _Runner:
    """Plays matches and writes what they give to the run directory."""

    how: MatchPlay
    build: Callable[..., Any]
    limits: EngineLimits
    pool: DaemonThreadPool
    run_dir: Path
    on_match: Callable[[MatchRecord | None], None] | None

    def open(self) -> EpisodeWriter:
        self.matches = _Appender(self.run_dir / "matches.jsonl")
        self.errors = _Appender(self.run_dir / "errored.jsonl")
        self.ledger = EpisodeWriter(self.run_dir / "episodes.jsonl")
        return self.ledger

    async def play(self, matches: list[ScheduledMatch], num_matches: int) -> None:
        gate = asyncio.Semaphore(num_matches)

        async def one(match: ScheduledMatch) -> None:
            async with gate:
                await self._match(match)

        await gather_or_cancel([one(m) for m in matches])

    async def _match(self, match: ScheduledMatch) -> None:
        """Play one match, retrying failures; write its record, or its error."""
        errors: list[str] = []
        for _attempt in range(self.limits.retries + 1):
            try:
                async with asyncio.timeout(self.limits.episode_timeout):
                    played = await self.pool.run(
                        lambda: play_match(
                            self.how, self.build, match.seats, match.seed, match.match_id
                        )
                    )
            except UsageError:
                raise
            except TimeoutError:
                errors.append(f"the match ran over its timeout of {self.limits.episode_timeout} s")
                continue
            except Exception as error:
                errors.append(f"{type(error).__name__}: {error}")
                if isinstance(error, ContextLengthError):
                    break
                continue
            result = played.result
            record = MatchRecord(
                match_id=match.match_id,
                env_id=self.how.env_id,
                seats=match.seats,
                scores=result.outcome,
                group=match.group,
                seed=match.seed,
                task_id=result.task_id,
                moves=tuple(result.moves),
                forfeit=played.forfeit,
            )
            for episode in played.episodes:  # before the record: see _drop_orphan_episodes
                self.ledger.write(episode)
            self.matches.append(record.to_dict())
            if self.on_match is not None:
                self.on_match(record)
            return
        self.errors.append(
            {**match.to_dict(), "error": f"{len(errors)} attempt(s) failed; last: {errors[-1]}"}
        )
        if self.on_match is not None:
            self.on_match(None)


class _Appender:
    """One JSON object a line, each line written and fsynced at once (as the ledger does)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, data: dict[str, Any]) -> None:
        line = json.dumps(data, ensure_ascii=False) + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def read_matches(run_dir: Path) -> tuple[list[MatchRecord], list[dict[str, Any]]]:
    """The run's scored match records (first record of an id wins) and errored matches; a
    torn last line (a crash mid-write) is skipped."""
    records: dict[str, MatchRecord] = {}
    path = run_dir / "matches.jsonl"
    for number, data in _lines(path):
        try:
            record = MatchRecord.from_dict(data)
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise UsageError(f"{path} line {number} is not a match record: {error}") from None
        records.setdefault(record.match_id, record)
    errored = [e for _, e in _lines(run_dir / "errored.jsonl") if e["match_id"] not in records]
    return list(records.values()), errored


def _lines(path: Path) -> list[tuple[int, Any]]:
    """Each line's number and JSON value; blank lines and a torn last line are skipped."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            found.append((i + 1, json.loads(line)))
        except json.JSONDecodeError:
            if i < len(lines) - 1:
                raise UsageError(f"{path}: line {i + 1} is not JSON; is it an arena run?") from None
    return found


def _prepare(run_dir: Path, arena: Arena, resume: bool, agent_options: dict[str, Any]) -> set[str]:
    """Create the run directory, or check it holds this arena, its agents configured the same
    way (``--agent-option``: another model or temperature is another arena), for a resume;
    the ids of the matches already recorded (scored or errored)."""
    from agentgym import __version__

    options = json.loads(json.dumps(agent_options, sort_keys=True, default=str))
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "arena": arena.to_dict(),
        "arena_hash": arena.digest(),
        "agent_options": options,
        "created_at": time.time(),
        "agentgym_version": __version__,
    }

    def differs(old: dict[str, Any]) -> str | None:
        if old.get("arena_hash") != arena.digest():
            return f"it holds another arena ({old.get('arena')}); this one is {arena.to_dict()}"
        if old.get("agent_options", {}) != options:
            return f"its agent options are {old.get('agent_options', {})}, this run's {options}"
        return None

    if not open_run_dir(run_dir, manifest, resume, "an arena", differs):
        return set()
    records, errored = read_matches(run_dir)
    done = {r.match_id for r in records} | {e["match_id"] for e in errored}
    _drop_orphan_episodes(run_dir / "episodes.jsonl", done)
    return done


def _drop_orphan_episodes(ledger: Path, done: set[str]) -> None:
    """Drop the ledger's episodes of matches not in ``done``: a match's episodes are written
    before its record, so a crash between the two leaves episodes of a match the resume plays
    again, which would write them a second time under the same ids. (Writing the record
    first would lose the episodes of a recorded match instead.)"""
    if not ledger.exists():
        return
    episodes = list(read_episodes(ledger))
    kept = [e for e in episodes if e.episode_id.rpartition("/")[0] in done]
    if len(kept) < len(episodes):
        rewrite_episodes(ledger, kept)


def _write_ratings(
    run_dir: Path, ratings: Ratings | None, provisional: list[ProvisionalRating]
) -> None:
    _write_json(
        run_dir / "ratings.json",
        {
            "ratings": ratings.to_dict() if ratings is not None else None,
            "provisional": [p.to_dict() for p in provisional],
        },
    )


def _write_json(path: Path, data: dict[str, Any]) -> None:
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(scratch, path)
