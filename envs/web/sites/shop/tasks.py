"""Shopping tasks: WebShop-style instructions generated from a target product of a catalogue.

A task's seed picks a catalogue of its split (:data:`CATALOGUES`: train, dev and test shop in
different catalogues, so no test product was ever a training target), a target product, and
what the instruction asks of it: some of the target's attributes, some of its option values,
and a price cap. Any product that fits the instruction scores 1, not only the target (the
reward judges the purchase against the goal, :mod:`.reward`).

**Levels** (:data:`LEVELS`). The *query* of a task is its attributes and type (``long sleeve
men's shirt``); a *look-alike* is a product of the target's type that does not fit the
instruction (wrong attributes, options it does not offer, or over the price cap).

* ``easy`` — one attribute, one option, no price cap; the target is on the first page of
  results for the query;
* ``medium`` — two attributes, two options (as many as the product has), a loose price cap
  (the next multiple of ten above 1.2 to 1.6 times the price); the target is in the first
  three pages, and the first page shows at least three look-alikes;
* ``hard`` — three attributes, two options, a tight price cap (one to three dollars above the
  price's whole dollars); the target is in the first five pages, and the first page shows at
  least five look-alikes, so the agent has to read product pages to tell them apart.

**The oracle** (:meth:`ShopTask.solve`) decides each action from the page alone (the URL and
the accessibility tree): search for the query with the header's search box, page through the
results to the target's title, choose the instruction's options, *Buy now*, fill the name and
address and place the order. Asked from any state it recovers: another search is replaced by
its own, a cart holding anything but the target configuration is emptied first.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import numpy as np

from agentgym.core import Verdict
from agentgym.envs.web.actions import format_action
from agentgym.envs.web.base import WebTask, WebWorld
from agentgym.envs.web.sites.shop.catalog import Product, generate_catalogue
from agentgym.envs.web.sites.shop.reward import Goal, price_ok, score_purchases
from agentgym.envs.web.sites.shop.search import SearchIndex
from agentgym.envs.web.sites.shop.site import PAGE_SIZE, options_text
from agentgym.envs.web.sites.shop.store import read_purchases
from agentgym.errors import TaskError

__all__ = ["CATALOGUES", "LEVELS", "Level", "ShopTask", "make_goal"]

CATALOGUES: Mapping[str, range] = {
    "train": range(0, 32),
    "dev": range(1000, 1004),
    "test": range(2000, 2008),
}
"""The catalogue seeds each split shops in (disjoint, so test products are never trained on)."""


@dataclass(frozen=True)
class Level:
    """What a difficulty asks for (see the module docstring)."""

    attributes: int
    options: int
    price_cap: Literal["loose", "tight"] | None
    pages: int
    """The target ranks within this many result pages of the query."""
    lookalikes: int = 0
    """The first page of results shows at least this many look-alikes."""


LEVELS: Mapping[str, Level] = {
    "easy": Level(attributes=1, options=1, price_cap=None, pages=1),
    "medium": Level(attributes=2, options=2, price_cap="loose", pages=3, lookalikes=3),
    "hard": Level(attributes=3, options=2, price_cap="tight", pages=5, lookalikes=5),
}

SHIPPING_NAME = "Alex Morgan"
SHIPPING_ADDRESS = "12 Harbor Street, Springfield"
_ATTEMPTS = 500

_OPENINGS = (
    "i am looking for {a}{type} that {is_} {attributes}",
    "i need {a}{type} that {is_} {attributes}",
    "find me {a}{attributes_before} {type}",
    "i want to buy {a}{attributes_before} {type}",
)
_OPTION_PHRASES = {
    "color": "in {v}",
    "size": "in size {v}",
    "flavor": "in {v} flavor",
    "scent": "with {v} scent",
    "model": "for the {v}",
    "length": "{v} long",
    "capacity": "with {v} capacity",
    "pack": "as a {v}",
    "band size": "with a {v} band",
}


def make_goal(product: Product, level: Level, rng: np.random.Generator) -> Goal | None:
    """A goal the product fits, as ``level`` asks, or None if the product has too few
    attributes for the level."""
    if len(product.attributes) < level.attributes:
        return None
    picked = rng.choice(len(product.attributes), size=level.attributes, replace=False)
    attributes = tuple(product.attributes[i] for i in sorted(picked))
    names = list(product.options)
    count = min(level.options, len(names))
    chosen = [names[i] for i in sorted(rng.choice(len(names), size=count, replace=False))]
    options = {n: product.options[n][int(rng.integers(len(product.options[n])))] for n in chosen}
    cap = None
    if level.price_cap == "loose":
        cap = math.ceil(product.price * float(rng.uniform(1.2, 1.6)) / 10) * 10.0
    elif level.price_cap == "tight":
        cap = math.floor(product.price) + float(rng.integers(1, 4))
    return Goal(product.type, product.category, attributes, options, cap)


def instruction(goal: Goal, rng: np.random.Generator) -> str:
    """The goal in words, WebShop's way (lower case, one sentence)."""
    opening = _OPENINGS[int(rng.integers(len(_OPENINGS)))]
    plural = goal.type.endswith("s") and not goal.type.endswith("ss")  # jeans, earbuds
    text = opening.format(
        a="" if plural else "an " if goal.type[0] in "aeio" else "a ",
        is_="are" if plural else "is",
        type=goal.type,
        attributes=" and ".join(goal.attributes),
        attributes_before=" ".join(goal.attributes),
    )
    parts = [text] + [
        _OPTION_PHRASES.get(name, name + " {v}").format(v=value)
        for name, value in goal.options.items()
    ]
    if goal.price_cap is not None:
        parts.append(f"and price lower than {goal.price_cap:.2f} dollars")
    return ", ".join(parts)


def _fits(product: Product, goal: Goal) -> bool:
    """Whether buying ``product`` in the goal's options would score 1."""
    return (
        product.type == goal.type
        and set(goal.attributes) <= set(product.attributes)
        and all(v in product.options.get(n, ()) for n, v in goal.options.items())
        and price_ok(goal, product.price)
    )


@functools.lru_cache(maxsize=64)
def _index(catalogue: int) -> SearchIndex:
    """The search index of a catalogue, as the site builds it (tasks check ranks with it)."""
    return SearchIndex(generate_catalogue(catalogue))


class ShopTask(WebTask):
    """Buy a product that fits a generated instruction; see the module docstring."""

    start_path = "/shop/"

    def __init__(self, id: str, split: str, difficulty: str, seed: int) -> None:
        super().__init__(id, split, difficulty, seed)
        if difficulty not in LEVELS:
            raise TaskError(f"unknown shop difficulty {difficulty!r}; levels are {list(LEVELS)}")
        if split not in CATALOGUES:
            raise TaskError(f"unknown shop split {split!r}; splits are {list(CATALOGUES)}")
        rng = np.random.default_rng(seed)
        catalogues = CATALOGUES[split]
        self.catalogue = catalogues[int(rng.integers(len(catalogues)))]
        self.sites = {"shop": self.catalogue}
        products = generate_catalogue(self.catalogue)
        index = _index(self.catalogue)
        level = LEVELS[difficulty]
        for _ in range(_ATTEMPTS):
            target = products[int(rng.integers(len(products)))]
            goal = make_goal(target, level, rng)
            if goal is None:
                continue
            query = " ".join([*goal.attributes, goal.type])
            ranked = index.search(query)
            rank = ranked.index(target.id)
            if rank >= level.pages * PAGE_SIZE:
                continue
            lookalikes = [
                pid
                for pid in ranked[:PAGE_SIZE]
                if products[pid - 1].type == goal.type and not _fits(products[pid - 1], goal)
            ]
            if len(lookalikes) < level.lookalikes:
                continue
            break
        else:
            raise TaskError(f"no {difficulty} shop task found for seed {seed} in {_ATTEMPTS} tries")
        self.target, self.goal_spec, self.query, self.rank = target, goal, query, rank
        self.instruction = instruction(goal, rng)

    def goal(self) -> str:
        return (
            f"{self.instruction}.\n(Find a product in the shop that fits, choose its options and "
            f"buy it; placing an order ends the task.)"
        )

    def validate(self, world: WebWorld) -> Verdict:
        db = world.db("shop")
        try:
            purchases = read_purchases(db)
        finally:
            db.close()
        reward = score_purchases(self.goal_spec, purchases)
        return Verdict(
            score=reward.score,
            passed=reward.score == 1.0,
            components=reward.components(),
            details=reward.details,
        )

    # ------------------------------------------------------------------ the oracle

    def solve(self, world: WebWorld) -> str | None:
        parts = urlsplit(world.path)
        route, params = parts.path.rstrip("/"), parse_qs(parts.query)
        snap = world.snapshot
        if route.startswith("/shop/orders/"):
            return None  # an order was placed: the episode is over
        if route == "/shop/checkout":
            return self._checkout(snap)
        if route == "/shop/cart":
            return self._cart(snap)
        if route == f"/shop/item/{self.target.id}":
            for value in self.goal_spec.options.values():
                radio = snap.find("radio", value)
                if not radio.checked:
                    return format_action("check", radio.id)
            return format_action("click", snap.find("button", "Buy now").id)
        if route == "/shop/search" and params.get("q") == [self.query]:
            for link in snap.find_all("link", self.target.title):
                return format_action("click", link.id)
            for link in snap.find_all("link", "Next page"):
                return format_action("click", link.id)
        box = snap.find("searchbox", "Search products")
        if box.value != self.query:
            return format_action("fill", box.id, self.query)
        return format_action("click", snap.find("button", "Search").id)

    def _holds_only_target(self, snap: Any) -> bool:
        """Whether the cart (as the page lists it) is exactly one target in the goal's options."""
        titles = [n for n in snap.find_all("link") if n.href and "/shop/item/" in n.href]
        wanted = options_text(self.goal_spec.options)
        return (
            len(titles) == 1
            and titles[0].name == self.target.title
            and bool(snap.find_all("cell", wanted))
        )

    def _checkout(self, snap: Any) -> str:
        if not self._holds_only_target(snap):
            return format_action("goto", "/shop/cart")
        for label, text in (("Full name", SHIPPING_NAME), ("Shipping address", SHIPPING_ADDRESS)):
            box = snap.find("textbox", label)
            if box.value != text:
                return format_action("fill", box.id, text)
        return format_action("click", snap.find("button", "Place order").id)

    def _cart(self, snap: Any) -> str:
        if self._holds_only_target(snap):
            return format_action("click", snap.find("link", "Proceed to checkout").id)
        empty = snap.find_all("button", "Empty cart")
        if empty:
            return format_action("click", empty[0].id)
        box = snap.find("searchbox", "Search products")
        if box.value != self.query:
            return format_action("fill", box.id, self.query)
        return format_action("click", snap.find("button", "Search").id)
