"""The batch fit behind the arena's ratings: Plackett-Luce by maximum likelihood, with
Bradley-Terry as its two-player case.

The model: player i has a strength ``gamma_i = exp(theta_i)``. A match's placing is built
best first; at each stage the next player is drawn from those still unplaced, each with
probability ``gamma_i / sum(gamma of the unplaced)`` (Plackett-Luce). With two players this
is Bradley-Terry: ``P(i beats j) = gamma_i / (gamma_i + gamma_j)``, a logistic model in
``theta_i - theta_j``. Hunter (2004), "MM algorithms for generalized Bradley-Terry models"
(Annals of Statistics 32(1)), sets out the model and when its maximum exists. The log-
likelihood is concave in theta, so Newton's method with step halving finds the maximum in
about ten steps; all of a bootstrap's fits run as one array computation.

Conventions, and why:

* **Ties are averaged over their orders.** Equal scores are a block of tied players; the
  likelihood counts every order of the block, each with equal weight (the average of the
  log-likelihoods). With two players this is the usual "a draw is half a win for each".
  A tied block of k players expands to ``k * 2**(k-1)`` weighted stages (a stage where the
  still-unplaced part of the block is S and i comes next has weight
  ``1 / (C(k, |S|) * |S|)``), not ``k!`` orders; blocks of more than :data:`MAX_TIED`
  players are refused.
* **A prior keeps every rating finite.** A player who won (or lost) every match has no
  maximum-likelihood rating. Each player gets ``prior`` virtual games against a virtual
  reference of strength 1 (``theta = 0``), half won and half lost: a prior that pulls
  ratings towards one another, weighing as much as ``prior`` games, so its pull fades as
  real matches accumulate (the default, one game, beside 20 games per pair). ``prior=0`` is the
  plain maximum likelihood, which exists only when the "beat" graph is strongly connected
  (Hunter's condition: every split of the players into two sets has someone in each set
  beating someone in the other); otherwise the fit refuses with the reason.
* **The Elo scale.** Ratings are ``theta * 400 / ln 10`` (:data:`ELO_PER_LOGIT`), so 400
  points are odds of 10 to 1, as in chess Elo. Only differences are identified: a rating is
  anchored to the players' mean (0) or to one named player (0).
* **Order does not matter.** Matches are sorted by id before fitting, so the same set of
  matches gives the same numbers bit for bit, whatever order they arrived in.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from agentgym.arena.records import MatchRecord

__all__ = [
    "DECIMALS",
    "DEFAULT_PRIOR",
    "ELO_PER_LOGIT",
    "MAX_TIED",
    "Comparisons",
    "fit",
    "fit_strengths",
    "to_elo",
]

ELO_PER_LOGIT = 400 / math.log(10)
"""Elo points per unit of log-strength: 400 points are odds of 10 to 1."""

DEFAULT_PRIOR = 1.0
"""Virtual games per player against the reference (half won, half lost)."""

MAX_TIED = 10
"""The largest block of tied players a match may have (it expands to k * 2**(k-1) stages)."""

TOLERANCE = 1e-10
"""The fit stops when no log-strength moves by more than this in one Newton step."""

DECIMALS = 9
"""Ratings are rounded, so equal ratings reached by different sums compare equal (and no
rating prints as -0.0)."""

MAX_STEPS = 200
"""Newton steps before the fit gives up (it takes about ten)."""

MAX_HALVINGS = 50
"""Step halvings per Newton step before a step that lowers the likelihood is taken anyway."""

CHUNK = 256
"""Bootstrap draws fitted in one array operation (bounds the memory: chunk x sets x players)."""


@dataclass(frozen=True)
class Comparisons:
    """Matches unrolled into Plackett-Luce stages, in arrays: a stage is a set of players
    still unplaced (``members``), the one placed next (``winners``), and the weight the tie
    convention gives it. ``cluster_of`` maps each stage to its match's bootstrap group, and
    ``set_of`` to one of the distinct member ``sets``, on which the fit runs."""

    players: tuple[str, ...]
    clusters: tuple[str, ...]
    members: np.ndarray  # (stages, players) 0/1
    winners: np.ndarray  # (stages,) player index
    weights: np.ndarray  # (stages,)
    cluster_of: np.ndarray  # (stages,) cluster index
    matches: dict[str, int]  # player -> matches played
    sets: np.ndarray  # (sets, players) 0/1: the distinct member sets of the stages
    set_of: np.ndarray  # (stages,) the index of each stage's member set

    @classmethod
    def of(cls, records: Iterable[MatchRecord]) -> Comparisons:
        listed = sorted(records, key=lambda r: r.match_id)
        if not listed:
            raise ValueError("no matches to rate: the ratings need at least one finished match")
        players = tuple(sorted({p for r in listed for p in r.players}))
        clusters = tuple(sorted({r.cluster for r in listed}))
        index = {p: i for i, p in enumerate(players)}
        cluster_index = {c: i for i, c in enumerate(clusters)}
        rows: list[tuple[int, list[int], float, int]] = []
        for record in listed:
            for winner, unplaced, weight in _stages(record):
                rows.append(
                    (
                        index[winner],
                        [index[p] for p in unplaced],
                        weight,
                        cluster_index[record.cluster],
                    )
                )
        members = np.zeros((len(rows), len(players)))
        for s, (_, columns, _, _) in enumerate(rows):
            members[s, columns] = 1.0
        sets, set_of = np.unique(members, axis=0, return_inverse=True)
        return cls(
            players=players,
            clusters=clusters,
            members=members,
            winners=np.array([r[0] for r in rows], dtype=np.int64),
            weights=np.array([r[2] for r in rows]),
            cluster_of=np.array([r[3] for r in rows], dtype=np.int64),
            matches={p: sum(p in r.players for r in listed) for p in players},
            sets=sets.reshape(-1, len(players)),
            set_of=np.asarray(set_of).reshape(-1),
        )

    def group_wins(self) -> np.ndarray:
        """(clusters, players): each group's weighted count of each player placed next."""
        summed = np.zeros((len(self.clusters), len(self.players)))
        np.add.at(summed, (self.cluster_of, self.winners), self.weights)
        return summed

    def group_totals(self) -> np.ndarray:
        """(clusters, sets): each group's total stage weight on each member set."""
        summed = np.zeros((len(self.clusters), len(self.sets)))
        np.add.at(summed, (self.cluster_of, self.set_of), self.weights)
        return summed

    @property
    def two_player(self) -> bool:
        """Whether every stage is a pair (Bradley-Terry's case)."""
        return bool((self.members.sum(axis=1) == 2).all())


def _stages(record: MatchRecord) -> list[tuple[str, list[str], float]]:
    """(placed next, still unplaced, weight) for each stage of the match's placing, ties
    averaged over their orders; the last stage (one player left, probability 1) is left out."""
    blocks = record.placings()
    stages = []
    for position, block in enumerate(blocks):
        after = [p for later in blocks[position + 1 :] for p in later]
        k = len(block)
        if k > MAX_TIED:
            raise ValueError(
                f"match {record.match_id!r}: {k} players tied on one score; the ratings "
                f"average ties over their orders and take at most {MAX_TIED} tied players"
            )
        for size in range(1, k + 1):
            weight = 1.0 / (math.comb(k, size) * size)
            for subset in itertools.combinations(block, size):
                unplaced = [*subset, *after]
                if len(unplaced) > 1:
                    stages += [(p, unplaced, weight) for p in subset]
    return stages


def fit_strengths(
    comparisons: Comparisons, draws: np.ndarray | None = None, prior: float = DEFAULT_PRIOR
) -> np.ndarray:
    """Log-strengths maximizing the likelihood, one row per row of ``draws``: how many times
    each group counts (shape (fits, groups); the bootstrap fits all its draws at once), or
    every group once when None. With ``prior > 0`` they are relative to the virtual reference
    (theta 0); with ``prior == 0`` they sum to 0.

    The likelihood depends on the matches only through each player's weighted wins and each
    distinct member set's total weight, so the fit runs on those, summed per group once: a
    round-robin of n players has n(n-1)/2 sets whatever the number of matches."""
    if prior < 0 or not math.isfinite(prior):
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
    counts = np.ones((1, len(comparisons.clusters))) if draws is None else np.atleast_2d(draws)
    if prior == 0:
        for row in counts:
            _require_connected(comparisons, row[comparisons.cluster_of] * comparisons.weights)
    wins = counts @ comparisons.group_wins()
    totals = counts @ comparisons.group_totals()
    fits = [
        _newton(comparisons.sets, wins[i : i + CHUNK], totals[i : i + CHUNK], prior)
        for i in range(0, len(counts), CHUNK)
    ]
    return np.concatenate(fits)


def _newton(sets: np.ndarray, wins: np.ndarray, totals: np.ndarray, prior: float) -> np.ndarray:
    """Newton's method with step halving on the concave log-likelihood, all rows at once.
    Without a prior the likelihood is flat along "add c to every theta"; adding the all-ones
    matrix to the information fixes that direction (every step then sums to 0)."""
    n = sets.shape[1]
    gauge = np.full((n, n), 1.0 / n) if prior == 0 else np.zeros((n, n))
    theta = np.zeros(wins.shape)
    current = _log_likelihood(sets, wins, totals, prior, theta)
    for _ in range(MAX_STEPS):
        chance = _chances(sets, theta)  # (fits, sets, players)
        weighted = totals[:, :, None] * chance
        expected = weighted.sum(axis=1)
        sigma = 1 / (1 + np.exp(-theta))
        gradient = wins + prior / 2 - expected - prior * sigma
        information = (
            (expected + prior * sigma * (1 - sigma))[:, :, None] * np.eye(n)
            - weighted.transpose(0, 2, 1) @ chance
            + gauge
        )
        step = np.linalg.solve(information, gradient[..., None])[..., 0]
        scale = np.ones(len(theta))
        for _ in range(MAX_HALVINGS):
            trial = _log_likelihood(sets, wins, totals, prior, theta + scale[:, None] * step)
            worse = trial < current - 1e-12 * (1 + np.abs(current))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        theta = theta + scale[:, None] * step
        current = trial if not worse.any() else _log_likelihood(sets, wins, totals, prior, theta)
        if np.abs(scale[:, None] * step).max() < TOLERANCE:
            return theta
    raise ArithmeticError(f"the rating fit did not converge in {MAX_STEPS} Newton steps")


def _strengths(sets: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp(theta - top)`` per player (top: the row's largest theta, for stability) and
    each set's sum of them over its members: (fits, players), (fits, sets)."""
    shifted = np.exp(theta - theta.max(axis=1, keepdims=True))
    return shifted, shifted @ sets.T


def _chances(sets: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """(fits, sets, players): each member's chance to be placed next from each set."""
    shifted, sums = _strengths(sets, theta)
    return np.asarray(shifted[:, None, :] * sets[None] / sums[:, :, None])


def _log_likelihood(
    sets: np.ndarray, wins: np.ndarray, totals: np.ndarray, prior: float, theta: np.ndarray
) -> np.ndarray:
    """(fits,): the weighted log-likelihood of each row, the prior's virtual games included
    (half won, half lost against theta 0: ``prior/2 * theta - prior * log(1 + e^theta)``)."""
    _, sums = _strengths(sets, theta)
    spread = theta.max(axis=1, keepdims=True) + np.log(sums)
    virtual = prior / 2 * theta - prior * np.logaddexp(0, theta)
    return np.asarray(
        (wins * theta).sum(axis=1) - (totals * spread).sum(axis=1) + virtual.sum(axis=1)
    )


def _require_connected(comparisons: Comparisons, weights: np.ndarray) -> None:
    """Hunter's condition for the maximum likelihood to exist (needed with no prior): in the
    graph "i beat j", every player reaches every other (transitive closure by squaring)."""
    n = len(comparisons.players)
    beat = np.eye(n, dtype=bool)
    for s in np.flatnonzero(weights > 0):
        beat[comparisons.winners[s], comparisons.members[s] > 0] = True
    reach = beat
    for _ in range(max(1, math.ceil(math.log2(max(n, 2))))):
        reach = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
    if not reach.all():
        raise ValueError(
            "with prior=0 the ratings have no maximum: some players never beat (or never lost "
            "to) the rest, so their rating would be infinite; use a prior > 0"
        )


def to_elo(theta: np.ndarray, players: Sequence[str], anchor: str | None = None) -> np.ndarray:
    """Log-strengths on the Elo scale, anchored: the players' mean is 0, or ``anchor``'s
    rating is 0."""
    elo = np.atleast_2d(theta) * ELO_PER_LOGIT
    if anchor is None:
        return np.asarray(elo - elo.mean(axis=1, keepdims=True))
    if anchor not in players:
        raise ValueError(f"anchor {anchor!r} played no match; the players are {list(players)}")
    return np.asarray(elo - elo[:, [list(players).index(anchor)]])


def fit(
    records: Iterable[MatchRecord], *, prior: float = DEFAULT_PRIOR, anchor: str | None = None
) -> dict[str, float]:
    """Each player's rating on the Elo scale: the point estimate, no interval
    (:func:`agentgym.arena.rate` adds the bootstrap)."""
    comparisons = Comparisons.of(records)
    theta = fit_strengths(comparisons, prior=prior)
    elo = to_elo(theta, comparisons.players, anchor)[0]
    return {
        p: round(float(r), DECIMALS) + 0.0 for p, r in zip(comparisons.players, elo, strict=True)
    }
