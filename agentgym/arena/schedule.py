"""Who plays whom in an arena: round-robin tables and Swiss rounds, deterministic from a seed.

* **Seat swaps on shared seeds.** A table of ``n`` players plays its games in blocks of ``n``:
  the games of a block share one seed (the same task, the same random draws of the game) and
  rotate the players through the seats, so every player sits in every seat of the same game.
  For two seats that is a game and its seat-swapped twin. A block is one bootstrap ``group``
  (:class:`~agentgym.arena.records.MatchRecord`): its games are not independent draws.
* **Blocks share seeds across tables.** Block ``k`` of every table has the same seed, so
  every pairing plays the same positions: a player's rating does not depend on which tasks
  its opponents happened to draw.
* **Round-robin** (:func:`round_robin`): every table of ``seats`` players out of the field
  plays ``games`` games. With two seats, every pair; with more seats and exactly as many
  players, one table of everyone; with more players than seats, every combination (the
  count grows fast: name few players for games of many seats).
* **Swiss** (:func:`swiss_round`): two-seat games only. Each round pairs players of close
  current score (the sum of their scores so far), the first round in an order the seed
  shuffles; a pairing already played is avoided where another pairing of the round allows
  it; with an odd field the lowest-placed player who has not sat out sits out. Each pairing
  plays ``games`` games, seat-swapped; a game and its seat-swapped twin (one seed) are one
  group. A
  round's pairings depend on the results before it, so :func:`swiss_schedule` plans one
  round at a time: the runner plays each round before the next is planned, and a
  leaderboard rebuilds a finished run's rounds from its records the same way.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentgym.arena.records import MatchRecord
from agentgym.errors import UsageError

__all__ = [
    "ScheduledMatch",
    "block_seed",
    "check_players",
    "round_robin",
    "swiss_round",
    "swiss_schedule",
]


@dataclass(frozen=True)
class ScheduledMatch:
    """One match to play: its id, the players by seat, the game's seed and its group."""

    match_id: str
    seats: dict[str, str]
    seed: int
    group: str
    round: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "match_id": self.match_id,
            "seats": dict(self.seats),
            "seed": self.seed,
            "group": self.group,
            "round": self.round,
        }


def check_players(players: Sequence[str], seats: Sequence[str], games: int) -> None:
    """One clear line for a field the arena cannot schedule."""
    if len(set(players)) != len(players):
        twice = sorted({p for p in players if players.count(p) > 1})
        raise UsageError(f"--agents names {twice} more than once; name each player once")
    if len(players) < len(seats):
        raise UsageError(
            f"--agents names {len(players)} player(s) but the game has {len(seats)} seats "
            f"({', '.join(seats)}); name at least {len(seats)}"
        )
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise UsageError(f"--games must be a positive count of games per table, got {games!r}")


def block_seed(seed: int, block: int, round: int = 0) -> int:
    """The game seed of block ``block`` (of round ``round``), shared by every table."""
    return zlib.crc32(f"arena:{seed}:{round}:{block}".encode()) & 0x7FFFFFFF


def _table_games(
    table: Sequence[str], seats: Sequence[str], games: int, seed: int, round: int, prefix: str
) -> list[ScheduledMatch]:
    """``games`` games of one table: blocks of ``len(seats)`` rotations sharing a seed."""
    n = len(seats)
    name = "-vs-".join(table)
    matches = []
    for k in range(games):
        block, turn = divmod(k, n)
        order = [table[(i + turn) % n] for i in range(n)]
        matches.append(
            ScheduledMatch(
                match_id=f"{prefix}{name}/{k}",
                seats=dict(zip(seats, order, strict=True)),
                seed=block_seed(seed, block, round),
                group=f"{prefix}{name}/block-{block}",
                round=round,
            )
        )
    return matches


def round_robin(
    players: Sequence[str], seats: Sequence[str], games: int, seed: int
) -> list[ScheduledMatch]:
    """Every table of ``len(seats)`` players plays ``games`` games (see the module docstring)."""
    check_players(players, seats, games)
    matches = []
    for table in itertools.combinations(players, len(seats)):
        matches.extend(_table_games(table, seats, games, seed, 0, ""))
    return matches


def swiss_round(
    players: Sequence[str],
    seats: Sequence[str],
    games: int,
    seed: int,
    round: int,
    points: Mapping[str, float],
    played: set[frozenset[str]],
    sat_out: set[str],
) -> list[ScheduledMatch]:
    """Round ``round`` (from 1) of a Swiss arena, given each player's ``points`` so far, the
    pairs ``played`` before and who has ``sat_out`` (see the module docstring)."""
    check_players(players, seats, games)
    if len(seats) != 2:
        raise UsageError(
            f"--schedule swiss pairs two players a game; this game has {len(seats)} seats "
            f"({', '.join(seats)}): use --schedule round-robin"
        )
    shuffled = list(np.random.default_rng([seed, 0]).permutation(len(players)))
    standing = sorted(players, key=lambda p: (-points.get(p, 0.0), shuffled[players.index(p)], p))
    if len(standing) % 2:
        resting = next((p for p in reversed(standing) if p not in sat_out), standing[-1])
        standing.remove(resting)
    pairs = _pair(standing, played) or _pair(standing, set())
    assert pairs is not None  # without the no-repeat rule any even field pairs
    matches = []
    for a, b in pairs:
        matches.extend(_table_games((a, b), seats, games, seed, round, f"swiss-{round}/"))
    return matches


def swiss_schedule(
    players: Sequence[str],
    seats: Sequence[str],
    games: int,
    seed: int,
    rounds: int,
    results: Callable[[], Iterable[MatchRecord]],
) -> Iterator[list[ScheduledMatch]]:
    """The ``rounds`` rounds of a Swiss arena, one list of matches a round, each planned from
    the results of the rounds before it.

    ``results()`` is called as each round is planned and gives the scored records so far: a
    runner plays a round before it asks for the next (and reads its run directory again), a
    leaderboard passes a finished run's records at once. Only the records of earlier rounds
    count, so a result recorded later (a resumed run's) never changes a pairing, and an
    errored match, which has no record, gives its players no points."""
    played: set[frozenset[str]] = set()
    sat_out: set[str] = set()
    earlier: set[str] = set()  # the ids of the rounds before this one
    for round in range(1, rounds + 1):
        points: dict[str, float] = {}
        for record in results():
            if record.match_id in earlier:
                for seat, player in record.seats.items():
                    points[player] = points.get(player, 0.0) + record.scores[seat]
        batch = swiss_round(players, seats, games, seed, round, points, played, sat_out)
        sat_out |= set(players) - {p for m in batch for p in m.seats.values()}
        played |= {frozenset(m.seats.values()) for m in batch}
        earlier |= {m.match_id for m in batch}
        yield batch


def _pair(standing: list[str], played: set[frozenset[str]]) -> list[tuple[str, str]] | None:
    """Pair ``standing`` top down, each with the nearest unplayed opponent (backtracking);
    None when no pairing avoids every repeat."""
    if not standing:
        return []
    first, rest = standing[0], standing[1:]
    for i, other in enumerate(rest):
        if frozenset((first, other)) in played:
            continue
        tail = _pair(rest[:i] + rest[i + 1 :], played)
        if tail is not None:
            return [(first, other), *tail]
    return None
