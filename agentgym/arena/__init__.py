"""The arena: matches between named players and the ratings they earn (docs/arena.md).

The official rating is a batch Bradley-Terry fit (Plackett-Luce for more than two seats)
with bootstrap intervals over match groups (:func:`rate`); openskill's online rating is a
live, provisional number beside it (:func:`provisional_ratings`), never the official one.
"""

from agentgym.arena.fit import DEFAULT_PRIOR, ELO_PER_LOGIT, fit
from agentgym.arena.provisional import PROVISIONAL, ProvisionalRating, provisional_ratings
from agentgym.arena.ratings import Rating, Ratings, rate
from agentgym.arena.records import MatchRecord

__all__ = [
    "DEFAULT_PRIOR",
    "ELO_PER_LOGIT",
    "PROVISIONAL",
    "MatchRecord",
    "ProvisionalRating",
    "Rating",
    "Ratings",
    "fit",
    "provisional_ratings",
    "rate",
]
