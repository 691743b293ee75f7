"""``web/Shop-v1``: find, configure and buy the product an instruction describes (WebShop)."""

from __future__ import annotations

from typing import Any

from agentgym.core import GeneratedTaskSet
from agentgym.envs.web.base import WebEnv, WebWorld
from agentgym.envs.web.sites.shop.tasks import LEVELS, ShopTask

__all__ = ["ShopEnv"]


class ShopEnv(WebEnv):
    """Shop in a generated store for the product a WebShop-style instruction describes.

    **The task.** An instruction such as *"i need a men's shirt that is long sleeve and machine
    washable, in navy, in size large, and price lower than 40.00 dollars"*. The shop
    (``/shop/``) sells a catalogue of 300 products over five categories, generated from a
    seed; train, dev and test shop in different catalogues.

    **What the agent sees.** The page as an accessibility tree in which every element has an
    id: the home page with a search box and categories, BM25-ranked search results ten a page
    with *Previous page*/*Next page* links, product pages (price, description, features, a
    radio group per option, *Add to cart* and *Buy now*), the cart, the checkout form (name,
    shipping address, *Place order*) and the orders.

    **What it may do.** The web action language (``click("12")``, ``fill("5", "navy shirt")``,
    ``check("31")``, ``go_back()``, ...); ``goto`` is limited to ``/shop/``. Placing an order
    ends the episode; so do ``answer`` and ``report_infeasible``, which buy nothing.

    **Scoring.** The WebShop reward of the first order, read from the shop's database:
    ``(attributes matched + options chosen right + price within the cap) / (attributes +
    options + 1) * r_type`` (a price equal to the cap is within it, as in WebShop), where
    ``r_type`` is 1 for the asked type of product, 0.5 for another type of its category, 0.1
    for a product whose title shares a word with the asked type, else 0. An order of several
    lines scores its worst line; no order scores 0. The verdict's components are
    ``attributes``, ``options``, ``price`` and ``type``; the task is passed at score 1. See
    :mod:`agentgym.envs.web.sites.shop.reward`.

    **Levels.** ``easy`` (one attribute, one option, no price cap, the product on the first
    result page), ``medium`` (two attributes, two options, a loose cap, three look-alikes on
    the first page), ``hard`` (three attributes, two options, a tight cap, five look-alikes);
    see :mod:`agentgym.envs.web.sites.shop.tasks`. Splits: 10,000 train, 300 dev and 500 test
    tasks per level.

    **Oracle.** Reads only the page: searches the instruction's attributes and type, pages
    through the results to the product the task was generated from, checks the asked
    options, *Buy now*, fills name and address and places the order. From any other state it
    recovers (a different search is redone, a cart with anything else in it is emptied).

    **Version history.** v0: first release. v1 (2026-11): a price equal to the cap counts as
    within it (WebShop's ``price <= price_upper``; it had scored as over); the instructions
    end with the line every web task's instructions end with, on ``report_infeasible``.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet(
            "web-shop",
            ShopTask,
            tuple(LEVELS),
            sizes={"train": 10_000, "dev": 300, "test": 500},
        )
        super().__init__(**kwargs)

    def is_over(self, world: WebWorld) -> bool:
        """An order ends the episode, as buying does in WebShop (the order is then scored)."""
        if super().is_over(world):
            return True
        db = world.db("shop")
        try:
            return db.execute("SELECT 1 FROM orders LIMIT 1").fetchone() is not None
        finally:
            db.close()
