"""The live, provisional rating: openskill's Plackett-Luce model updated match by match.

It gives a number while an arena is still running, after each match, without refitting.
It is **provisional and never the official rating**: an online update depends on the order
the matches arrive in (the same matches in another order give other numbers; a test shows
it), and it carries no interval. TextArena's public ratings are this kind of number. The
official rating is the batch fit with bootstrap intervals (:func:`agentgym.arena.rate`).

openskill's defaults: mu 25, sigma 25/3 per new player; ``ordinal`` = mu - 3 sigma, the
conservative number openskill ranks by.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentgym.arena.records import MatchRecord
from agentgym.errors import MissingExtraError

__all__ = ["PROVISIONAL", "ProvisionalRating", "provisional_ratings"]

PROVISIONAL = "provisional (openskill Plackett-Luce, online: depends on match order, no interval)"
"""The label every provisional number carries wherever it is shown."""


@dataclass(frozen=True)
class ProvisionalRating:
    """A player's live openskill rating after the matches seen so far."""

    player: str
    mu: float
    sigma: float
    ordinal: float
    matches: int
    label: str = PROVISIONAL

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "mu": self.mu,
            "sigma": self.sigma,
            "ordinal": self.ordinal,
            "matches": self.matches,
            "label": self.label,
        }


def provisional_ratings(records: Iterable[MatchRecord]) -> list[ProvisionalRating]:
    """openskill ratings after playing ``records`` in the order given, best ordinal first.
    Ties (equal scores) share a rank, as openskill's ``ranks`` take them."""
    try:
        from openskill.models import PlackettLuce
    except ModuleNotFoundError as missing:
        raise MissingExtraError(
            "the provisional ratings need the Python package 'openskill', which is not "
            "installed. Install the extra: pip install 'agentgym[multiagent]'"
        ) from missing
    model = PlackettLuce()
    current: dict[str, Any] = {}
    played: dict[str, int] = {}
    for record in records:
        players = record.players
        teams = [[current.get(p) or model.rating(name=p)] for p in players]
        placing = {p: i for i, block in enumerate(record.placings()) for p in block}
        updated = model.rate(teams, ranks=[placing[p] for p in players])
        for player, (rating,) in zip(players, updated, strict=True):
            current[player] = rating
            played[player] = played.get(player, 0) + 1
    rows = [
        ProvisionalRating(p, float(r.mu), float(r.sigma), float(r.ordinal()), played[p])
        for p, r in current.items()
    ]
    return sorted(rows, key=lambda r: (-r.ordinal, r.player))
