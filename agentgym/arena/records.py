"""A finished match, as the arena records it and its ratings read it.

A match seats named players (agents or reference players) in an env's seats and ends with a
score per seat: the game's verdict (a win 1, a draw 0.5, a loss 0), or a utility where the
game has one. The ratings read only the order of the scores: the higher score placed better,
equal scores tied.

``group`` is the unit the bootstrap resamples: the matches of one table that share a seed
(a game and its seat-swapped twin) are not independent draws, so they are drawn together or
not at all.

``seed``, ``task_id`` and ``moves`` are the game itself: the reset that started it and every
turn ``{seat: action}`` in order (as :class:`~agentgym.multiagent.GameResult` has them), so a
match replays from ``(env_id, seed, task_id, moves)`` and its scores can be checked again.
Records written before these fields existed read back with them empty.

``forfeit`` names the seat whose agent failed (its ``act`` raised, or ran past the step
timeout) and why: the match ended there, ``moves`` holds the turns before it, and the scores
are :func:`forfeit_scores`, what the games' invalid-move forfeit gives (the forfeiting seat 0,
every other seat 1). An agent can only lose: its own failure is a lost match, never an
errored one that the ratings leave out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Forfeit", "MatchRecord", "forfeit_scores"]

MAX_REASON = 500
"""The longest forfeit reason kept (an exception's message can be any length)."""


@dataclass(frozen=True)
class Forfeit:
    """The seat whose agent failed and ended the match, and why (``"its move raised
    ValueError: ..."``, ``"its move took over the step timeout of 300 s"``)."""

    seat: str
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", self.reason[:MAX_REASON])

    def to_dict(self) -> dict[str, str]:
        return {"seat": self.seat, "reason": self.reason}


def forfeit_scores(seats: Iterable[str], seat: str) -> dict[str, float]:
    """The outcome of a match that ``seat`` forfeits: 0 for it and 1 for every other seat,
    as :class:`~agentgym.multiagent.TurnBasedEnv` scores a seat that runs out of invalid
    moves."""
    return {s: 0.0 if s == seat else 1.0 for s in seats}


@dataclass(frozen=True)
class MatchRecord:
    """One finished match: who sat where and how each seat scored."""

    match_id: str
    env_id: str
    seats: Mapping[str, str]
    """Seat (the env's agent name, e.g. ``player_0``) -> the player seated there."""
    scores: Mapping[str, float]
    """Seat -> its outcome; higher is better, equal scores are a tie."""
    group: str = ""
    """The bootstrap's cluster (the seed or pairing the match shares); the match id if empty."""
    seed: int | None = None
    """The seed of the game's reset; None where the record does not say."""
    task_id: str = ""
    """The task the game's reset picked; empty where the record does not say."""
    moves: tuple[dict[str, str], ...] = ()
    """Every turn in order, each ``{seat: action}``; empty where the record does not say."""
    forfeit: Forfeit | None = None
    """The seat that forfeited the match, and why; None for a game played to its end."""

    def __post_init__(self) -> None:
        seats = tuple(self.seats)
        if len(seats) < 2:
            raise ValueError(f"match {self.match_id!r}: {len(seats)} seat(s); a match needs two")
        if set(self.scores) != set(seats):
            raise ValueError(
                f"match {self.match_id!r}: scores for seats {sorted(self.scores)} but the seats "
                f"are {sorted(seats)}; every seat needs exactly one score"
            )
        players = list(self.seats.values())
        if len(set(players)) != len(players):
            raise ValueError(
                f"match {self.match_id!r}: a player holds several seats ({players}); a match "
                "against oneself says nothing about strength, so ratings cannot use it"
            )
        for seat, score in self.scores.items():
            if not math.isfinite(score):
                raise ValueError(f"match {self.match_id!r}: seat {seat!r} scored {score!r}")
        if self.forfeit is not None and self.forfeit.seat not in seats:
            raise ValueError(
                f"match {self.match_id!r}: seat {self.forfeit.seat!r} forfeited, but the seats "
                f"are {sorted(seats)}"
            )
        object.__setattr__(self, "seats", dict(self.seats))
        object.__setattr__(self, "scores", {s: float(self.scores[s]) for s in seats})
        object.__setattr__(self, "moves", tuple(dict(turn) for turn in self.moves))

    @property
    def cluster(self) -> str:
        """What the bootstrap resamples this match with: its group, else the match alone."""
        return self.group or self.match_id

    @property
    def players(self) -> list[str]:
        return list(self.seats.values())

    def placings(self) -> list[list[str]]:
        """The players from best to worst, those with equal scores in one block."""
        by_score: dict[float, list[str]] = {}
        for seat in self.seats:
            by_score.setdefault(self.scores[seat], []).append(self.seats[seat])
        return [sorted(by_score[score]) for score in sorted(by_score, reverse=True)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``forfeit`` only when there is one (so a record of a game played
        to its end keeps the bytes, and the digest, it had before forfeits existed)."""
        data: dict[str, Any] = {
            "match_id": self.match_id,
            "env_id": self.env_id,
            "seats": dict(self.seats),
            "scores": dict(self.scores),
            "group": self.group,
            "seed": self.seed,
            "task_id": self.task_id,
            "moves": [dict(turn) for turn in self.moves],
        }
        if self.forfeit is not None:
            data["forfeit"] = self.forfeit.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchRecord:
        return cls(
            match_id=str(data["match_id"]),
            env_id=str(data["env_id"]),
            seats={str(k): str(v) for k, v in data["seats"].items()},
            scores={str(k): float(v) for k, v in data["scores"].items()},
            group=str(data.get("group", "")),
            seed=None if data.get("seed") is None else int(data["seed"]),
            task_id=str(data.get("task_id", "")),
            moves=tuple(
                {str(seat): str(action) for seat, action in turn.items()}
                for turn in data.get("moves", ())
            ),
            forfeit=_forfeit(data.get("forfeit")),
        )


def _forfeit(data: Any) -> Forfeit | None:
    if data is None:
        return None
    return Forfeit(seat=str(data["seat"]), reason=str(data.get("reason", "")))
