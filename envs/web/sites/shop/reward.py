"""The WebShop reward: how well a purchased product fits a shopping instruction.

WebShop (Yao et al., 2022) scores a purchase against the instruction's goal as

    reward = (attributes matched + options matched + price ok) / (attributes + options + 1)
             * r_type

so buying the right kind of product with most of what was asked earns partial credit, and
buying the wrong kind earns little whatever it matches. Here every part is exact, because the
shop's catalogue is generated and its vocabulary is known (WebShop needs fuzzy matching over
scraped Amazon text):

* **attributes** — a goal attribute (``machine washable``) matches when it is one of the
  product's attributes;
* **options** — a goal option (``size: large``) matches when the buyer chose exactly that value
  for that option on the product page;
* **price** — ok when the price paid is at most the goal's cap, or when the goal has no cap.
  The instruction says ``price lower than 40.00 dollars`` and a price of exactly 40.00 is ok:
  both are WebShop's (its ``get_reward`` tests ``price <= goal['price_upper']``);
* **r_type** — 1 if the product is of the goal's type (``men's shirt``); otherwise 0.5 if it is
  in the goal's category (a women's blouse for a men's shirt); otherwise 0.1 if its title shares
  a word with the goal's type, stopwords and the words ``men's``/``women's`` aside (an
  electronics ``phone case`` for a beauty ``makeup case``); otherwise 0.

A purchase of several products (an order with several lines) scores the *lowest* of its lines,
so putting extra products in the order can never raise the score.

Where this differs from WebShop's ``web_agent_site/engine/goal.py`` and why is listed in
``docs/envs/web.md`` (exact matching for attributes, options and type; no fuzzy match of an
option or attribute against the title and description; the worst line of an order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agentgym.envs.web.sites.shop.search import tokenize

__all__ = [
    "Goal",
    "Purchase",
    "Reward",
    "price_ok",
    "score_purchase",
    "score_purchases",
    "type_match",
]

_GENERIC_TYPE_WORDS = frozenset({"men", "mens", "women", "womens"})


@dataclass(frozen=True)
class Goal:
    """What a shopping instruction asks for."""

    type: str
    category: str
    attributes: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    price_cap: float | None = None


@dataclass(frozen=True)
class Purchase:
    """One bought product as the order recorded it: what it is and which options were chosen."""

    title: str
    type: str
    category: str
    attributes: tuple[str, ...]
    options: Mapping[str, str]
    price: float


@dataclass(frozen=True)
class Reward:
    """The score of a purchase and its parts (fractions in [0, 1])."""

    score: float
    attributes: float
    options: float
    price: float
    type: float
    details: str

    def components(self) -> dict[str, float]:
        """The named parts, as a :class:`~agentgym.core.Verdict` carries them."""
        return {
            "attributes": self.attributes,
            "options": self.options,
            "price": self.price,
            "type": self.type,
        }


def type_match(goal: Goal, purchase: Purchase) -> float:
    """``r_type``: 1, 0.5, 0.1 or 0 (see the module docstring)."""
    if purchase.type == goal.type:
        return 1.0
    if purchase.category == goal.category:
        return 0.5
    wanted = set(tokenize(goal.type)) - _GENERIC_TYPE_WORDS
    return 0.1 if wanted & set(tokenize(purchase.title)) else 0.0


def price_ok(goal: Goal, price: float) -> bool:
    """Whether ``price`` is within the goal's cap: at most the cap, as in WebShop."""
    return goal.price_cap is None or price <= goal.price_cap


def score_purchase(goal: Goal, purchase: Purchase) -> Reward:
    """The WebShop reward of buying ``purchase`` for ``goal``."""
    attributes = [a for a in goal.attributes if a in purchase.attributes]
    options = [n for n, v in goal.options.items() if purchase.options.get(n) == v]
    price_fits = price_ok(goal, purchase.price)
    r_type = type_match(goal, purchase)
    matched = len(attributes) + len(options) + int(price_fits)
    possible = len(goal.attributes) + len(goal.options) + 1
    score = matched / possible * r_type
    missing = [a for a in goal.attributes if a not in attributes] + [
        f"{n}: {v}" for n, v in goal.options.items() if n not in options
    ]
    details = (
        f"bought {purchase.title!r} ({purchase.type}) at {purchase.price:.2f}: "
        f"{matched}/{possible} of attributes, options and price, type match {r_type:g}"
        + (f"; missing {', '.join(missing)}" if missing else "")
        + ("" if price_fits else f"; price over {goal.price_cap:.2f}")
    )
    return Reward(
        score=score,
        attributes=len(attributes) / len(goal.attributes) if goal.attributes else 1.0,
        options=len(options) / len(goal.options) if goal.options else 1.0,
        price=float(price_fits),
        type=r_type,
        details=details,
    )


def score_purchases(goal: Goal, purchases: Sequence[Purchase]) -> Reward:
    """The reward of an order: its worst line (0 with nothing bought)."""
    if not purchases:
        return Reward(0.0, 0.0, 0.0, 0.0, 0.0, "nothing was bought")
    rewards = [score_purchase(goal, p) for p in purchases]
    worst = min(rewards, key=lambda r: r.score)
    if len(rewards) == 1:
        return worst
    return Reward(
        worst.score,
        worst.attributes,
        worst.options,
        worst.price,
        worst.type,
        f"the order has {len(rewards)} lines and scores its worst: {worst.details}",
    )
