"""The arena's official ratings: the batch fit (:mod:`agentgym.arena.fit`) with bootstrap
intervals over match groups, ranks and tie groups.

* **Intervals resample groups.** A group is the matches that share a seed or pairing (a game
  and its seat-swapped twin): they are not independent draws, so the bootstrap draws whole
  groups with replacement, B times, refits each draw and reports the percentile interval
  (95% by default, B = :data:`~agentgym.eval.BOOTSTRAP_SAMPLES`). A draw is a weighting of
  the stages by how often their group was drawn, so all B fits run as one array fit. The
  draws depend only on the seed and the groups, not on the order the matches came in.
* **Ranks and ties use the leaderboard's rule** (:func:`agentgym.eval.rank_by_intervals`):
  rank = 1 + the number of players whose interval lies wholly above this one's; a tie group
  is the players of one rank. Two players are ranked apart only when the data separates them.
* Every draw is anchored the same way as the estimate (the players' mean, or one named
  player at 0), so an anchored player's interval is [0, 0] and the others' intervals are
  differences from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from agentgym.arena.fit import DECIMALS, DEFAULT_PRIOR, Comparisons, fit_strengths, to_elo
from agentgym.arena.records import MatchRecord
from agentgym.eval import BOOTSTRAP_SAMPLES, CONFIDENCE, rank_by_intervals

__all__ = ["Rating", "Ratings", "rate"]

Method = Literal["bradley-terry", "plackett-luce"]


@dataclass(frozen=True)
class Rating:
    """One player's row: the rating (Elo scale), its interval, rank and tie group."""

    player: str
    rating: float
    low: float
    high: float
    rank: int
    tie_group: int
    matches: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "rating": self.rating,
            "low": self.low,
            "high": self.high,
            "rank": self.rank,
            "tie_group": self.tie_group,
            "matches": self.matches,
        }


@dataclass(frozen=True)
class Ratings:
    """The rating table, best first, with what it was computed from."""

    rows: list[Rating]
    method: Method
    matches: int
    groups: int
    samples: int
    seed: int
    confidence: float
    prior: float
    anchor: str | None

    def by_player(self) -> dict[str, Rating]:
        return {row.player: row for row in self.rows}

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "matches": self.matches,
            "groups": self.groups,
            "samples": self.samples,
            "seed": self.seed,
            "confidence": self.confidence,
            "prior": self.prior,
            "anchor": self.anchor,
            "rows": [row.to_dict() for row in self.rows],
        }


def rate(
    records: Iterable[MatchRecord],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
) -> Ratings:
    """Rate the players of ``records``: Bradley-Terry when every match has two seats,
    Plackett-Luce otherwise; intervals by the group bootstrap; ranks with tie groups."""
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if prior <= 0:
        raise ValueError(
            f"the bootstrap needs prior > 0 (got {prior}): a draw can leave a player without a "
            "win or a loss, whose rating would be infinite"
        )
    listed = list(records)
    comparisons = Comparisons.of(listed)
    estimate = _elo(comparisons, None, prior, anchor)[0]
    draws = _elo(comparisons, _draws(len(comparisons.clusters), samples, seed), prior, anchor)
    tail = (1 - confidence) / 2
    lows, highs = (np.round(np.quantile(draws, q, axis=0), DECIMALS) for q in (tail, 1 - tail))
    ranks = rank_by_intervals(
        [_Bounds(float(low), float(high)) for low, high in zip(lows, highs, strict=True)]
    )
    groups = {rank: group for group, rank in enumerate(sorted(set(ranks)))}
    rows = [
        Rating(
            player=player,
            rating=float(estimate[i]),
            low=float(lows[i]),
            high=float(highs[i]),
            rank=ranks[i],
            tie_group=groups[ranks[i]],
            matches=comparisons.matches[player],
        )
        for i, player in enumerate(comparisons.players)
    ]
    return Ratings(
        rows=sorted(rows, key=lambda r: (r.rank, -r.rating, r.player)),
        method="bradley-terry" if comparisons.two_player else "plackett-luce",
        matches=len(listed),
        groups=len(comparisons.clusters),
        samples=samples,
        seed=seed,
        confidence=confidence,
        prior=prior,
        anchor=anchor,
    )


@dataclass(frozen=True)
class _Bounds:
    low: float
    high: float


def _elo(
    comparisons: Comparisons, draws: np.ndarray | None, prior: float, anchor: str | None
) -> np.ndarray:
    theta = fit_strengths(comparisons, draws, prior)
    return np.round(to_elo(theta, comparisons.players, anchor), DECIMALS) + 0.0


def _draws(groups: int, samples: int, seed: int) -> np.ndarray:
    """(samples, groups): how many times each group is drawn, ``groups`` draws with
    replacement per sample."""
    rng = np.random.default_rng(seed)
    return np.asarray(rng.multinomial(groups, np.full(groups, 1.0 / groups), size=samples))
