"""The shop site: search a generated catalogue, pick options, buy through a cart and checkout.

Pages (all under ``/shop``):

* ``/`` — a search box and the categories;
* ``/search?q=...&category=...&page=N`` — BM25-ranked results (:mod:`.search`), ten a page,
  with previous/next links; an empty query browses a category in catalogue order;
* ``/item/{id}`` — a product: price, description, bullet points, attributes, one radio group
  per option (none chosen at first), and *Add to cart* / *Buy now* (which adds the chosen
  configuration to the cart and goes straight to checkout);
* ``/cart`` — the cart's lines, each removable, and *Empty cart*;
* ``/checkout`` — the cart again, a name and a shipping address, *Place order*;
* ``/orders`` and ``/orders/{id}`` — placed orders.

Every write is a POST answered by a redirect to a page (POST-redirect-GET), so reloading never
buys twice. The catalogue, the cart and the orders all live in the episode's SQLite database;
the search index is built from the catalogue's rows the first time an episode of a catalogue
searches, and shared by episodes of the same catalogue (the catalogue is never written).
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from agentgym.envs.web.sites.base import Site
from agentgym.envs.web.sites.shop.catalog import CATEGORIES, DEFAULT_SIZE, generate_catalogue
from agentgym.envs.web.sites.shop.search import SearchIndex
from agentgym.envs.web.sites.shop.store import load_products, write_catalogue

__all__ = ["PAGE_SIZE", "ShopSite", "options_text"]

PAGE_SIZE = 10
"""Search results per page."""

_INDEXES_KEPT = 32


class ShopSite(Site):
    """See the module docstring. ``size`` is the number of products a catalogue has."""

    name = "shop"
    title = "Shop"
    version = 1

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._indexes: OrderedDict[str, SearchIndex] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ data

    def build(self, db: sqlite3.Connection, seed: int) -> None:
        write_catalogue(db, seed, generate_catalogue(seed, self.size))

    def index(self, db: sqlite3.Connection) -> SearchIndex:
        """The search index of the database's catalogue (built once per catalogue)."""
        (key,) = db.execute("SELECT value FROM meta WHERE key = 'catalogue'").fetchone()
        with self._lock:
            if key in self._indexes:
                self._indexes.move_to_end(key)
                return self._indexes[key]
        index = SearchIndex(load_products(db))
        with self._lock:
            self._indexes[key] = index
            while len(self._indexes) > _INDEXES_KEPT:
                self._indexes.popitem(last=False)
        return index

    # ------------------------------------------------------------------ routes

    def routes(self) -> Sequence[Any]:
        from starlette.routing import Route

        return [
            Route("/", self.home),
            Route("/search", self.search),
            Route("/item/{product_id:int}", self.item),
            Route("/cart", self.cart),
            Route("/cart/add", self.add_to_cart, methods=["POST"]),
            Route("/cart/remove", self.remove_from_cart, methods=["POST"]),
            Route("/cart/clear", self.clear_cart, methods=["POST"]),
            Route("/buy", self.buy_now, methods=["POST"]),
            Route("/checkout", self.checkout, methods=["GET", "POST"]),
            Route("/orders", self.orders),
            Route("/orders/{order_id:int}", self.order),
        ]

    def page(self, request: Any, template: str, status_code: int = 200, **context: Any) -> Any:
        """A page with the header's cart count filled in."""
        db = request.state.db
        (count,) = db.execute("SELECT coalesce(sum(quantity), 0) FROM cart").fetchone()
        return self.render(request, template, status_code, cart_count=count, **context)

    def error(self, request: Any, message: str, status_code: int = 400) -> Any:
        """An error page that says what was wrong (the agent reads it in its observation)."""
        return self.page(request, "error.html", status_code, message=message)

    def redirect(self, path: str) -> Any:
        from starlette.responses import RedirectResponse

        return RedirectResponse(f"/{self.name}{path}", status_code=303)

    async def home(self, request: Any) -> Any:
        return self.page(request, "home.html", categories=CATEGORIES)

    async def search(self, request: Any) -> Any:
        query = request.query_params.get("q", "").strip()
        category = request.query_params.get("category") or None
        if category is not None and category not in CATEGORIES:
            return self.error(request, f"unknown category {category!r}; the shop has {CATEGORIES}")
        page_text = request.query_params.get("page", "1")
        if not page_text.isdigit() or int(page_text) < 1:
            return self.error(request, f"page must be a whole number from 1, got {page_text!r}")
        page = int(page_text)
        db = request.state.db
        ranked = self.index(db).search(query, category)
        pages = max(1, math.ceil(len(ranked) / PAGE_SIZE))
        shown = ranked[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        rows = {r["id"]: r for r in _product_rows(db, shown)}

        def link(to_page: int) -> str:
            params = {"q": query, "page": to_page}
            if category:
                params["category"] = category
            return f"/{self.name}/search?{urlencode(params)}"

        return self.page(
            request,
            "search.html",
            query=query,
            category=category,
            products=[rows[pid] for pid in shown],
            total=len(ranked),
            first=(page - 1) * PAGE_SIZE + 1,
            page=page,
            pages=pages,
            previous=link(page - 1) if page > 1 else None,
            next=link(page + 1) if page < pages else None,
            back=urlencode(
                {"q": query, "page": page, **({"category": category} if category else {})}
            ),
        )

    async def item(self, request: Any) -> Any:
        db = request.state.db
        product_id = request.path_params["product_id"]
        rows = _product_rows(db, [product_id])
        if not rows:
            return self.error(request, f"there is no product {product_id}", 404)
        query = request.query_params.get("q")
        back = None
        if query is not None:
            back = f"/{self.name}/search?{urlencode(dict(request.query_params))}"
        return self.page(
            request,
            "item.html",
            product=rows[0],
            attributes=_column(db, "product_attributes", "attribute", product_id),
            bullets=_column(db, "product_bullets", "text", product_id),
            options=_options(db, product_id),
            back=back,
        )

    async def add_to_cart(self, request: Any) -> Any:
        problem = await self._add_line(request)
        return self.error(request, problem) if problem else self.redirect("/cart")

    async def buy_now(self, request: Any) -> Any:
        problem = await self._add_line(request)
        return self.error(request, problem) if problem else self.redirect("/checkout")

    async def _add_line(self, request: Any) -> str | None:
        """Add the posted product configuration to the cart; a message if the post is bad."""
        db = request.state.db
        form = await request.form()
        product_text = str(form.get("product_id", ""))
        if not product_text.isdigit() or not _product_rows(db, [int(product_text)]):
            return f"there is no product {product_text!r} to add to the cart"
        product_id = int(product_text)
        offered = _options(db, product_id)
        chosen: dict[str, str] = {}
        for key, value in form.multi_items():
            if not key.startswith("option-"):
                continue
            name = key.removeprefix("option-")
            if name not in offered:
                return f"this product has no option {name!r}; its options are {list(offered)}"
            if value not in offered[name]:
                return f"{value!r} is not a {name} of this product; choose one of {offered[name]}"
            chosen[name] = str(value)
        options = json.dumps(chosen, sort_keys=True)
        line = db.execute(
            "SELECT id FROM cart WHERE product_id = ? AND options = ?", (product_id, options)
        ).fetchone()
        if line:
            db.execute("UPDATE cart SET quantity = quantity + 1 WHERE id = ?", (line["id"],))
        else:
            db.execute(
                "INSERT INTO cart (product_id, options, quantity) VALUES (?, ?, 1)",
                (product_id, options),
            )
        db.commit()
        return None

    async def cart(self, request: Any) -> Any:
        lines = _cart_lines(request.state.db)
        return self.page(request, "cart.html", lines=lines, total=_total(lines))

    async def remove_from_cart(self, request: Any) -> Any:
        db = request.state.db
        line = str((await request.form()).get("line", ""))
        if (
            not line.isdigit()
            or not db.execute("SELECT 1 FROM cart WHERE id = ?", (int(line),)).fetchone()
        ):
            return self.error(request, f"there is no cart line {line!r} to remove")
        db.execute("DELETE FROM cart WHERE id = ?", (int(line),))
        db.commit()
        return self.redirect("/cart")

    async def clear_cart(self, request: Any) -> Any:
        db = request.state.db
        db.execute("DELETE FROM cart")
        db.commit()
        return self.redirect("/cart")

    async def checkout(self, request: Any) -> Any:
        db = request.state.db
        lines = _cart_lines(db)
        if request.method == "GET":
            return self.page(request, "checkout.html", lines=lines, total=_total(lines))
        form = await request.form()
        name = str(form.get("name", "")).strip()
        address = str(form.get("address", "")).strip()
        problems = [
            text
            for text, missing in (
                ("the cart is empty: add a product before placing an order", not lines),
                ("write the name to ship to", not name),
                ("write the shipping address", not address),
            )
            if missing
        ]
        if problems:
            return self.page(
                request,
                "checkout.html",
                400,
                lines=lines,
                total=_total(lines),
                problems=problems,
                name=name,
                address=address,
            )
        cursor = db.execute(
            "INSERT INTO orders (name, address, total_cents) VALUES (?, ?, ?)",
            (name, address, sum(line["price_cents"] * line["quantity"] for line in lines)),
        )
        db.executemany(
            "INSERT INTO order_items (order_id, product_id, title, options, price_cents, quantity)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    cursor.lastrowid,
                    line["product_id"],
                    line["title"],
                    line["options_json"],
                    line["price_cents"],
                    line["quantity"],
                )
                for line in lines
            ],
        )
        db.execute("DELETE FROM cart")
        db.commit()
        return self.redirect(f"/orders/{cursor.lastrowid}")

    async def orders(self, request: Any) -> Any:
        rows = request.state.db.execute(
            "SELECT o.id, o.name, o.total_cents, count(i.order_id) AS lines FROM orders o "
            "LEFT JOIN order_items i ON i.order_id = o.id GROUP BY o.id ORDER BY o.id DESC"
        ).fetchall()
        return self.page(request, "orders.html", orders=rows)

    async def order(self, request: Any) -> Any:
        db = request.state.db
        order_id = request.path_params["order_id"]
        order = db.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
        if order is None:
            return self.error(request, f"there is no order {order_id}", 404)
        items = [
            {**dict(row), "options": options_text(json.loads(row["options"]))}
            for row in db.execute(
                "SELECT * FROM order_items WHERE order_id = ? ORDER BY rowid", (order_id,)
            )
        ]
        return self.page(request, "order.html", order=order, items=items)


def _product_rows(db: sqlite3.Connection, ids: Sequence[int]) -> list[sqlite3.Row]:
    marks = ",".join("?" * len(ids))
    return db.execute(f"SELECT * FROM products WHERE id IN ({marks})", list(ids)).fetchall()


def _column(db: sqlite3.Connection, table: str, column: str, product_id: int) -> list[str]:
    return [
        row[0]
        for row in db.execute(
            f"SELECT {column} FROM {table} WHERE product_id = ? ORDER BY position", (product_id,)
        )
    ]


def _options(db: sqlite3.Connection, product_id: int) -> dict[str, list[str]]:
    """The product's options in page order: name -> values."""
    options: dict[str, list[str]] = {}
    for row in db.execute(
        "SELECT name, value FROM product_options WHERE product_id = ? ORDER BY position",
        (product_id,),
    ):
        options.setdefault(row["name"], []).append(row["value"])
    return options


def options_text(options: Mapping[str, str]) -> str:
    """How a chosen configuration is written on the cart, checkout and order pages."""
    return "; ".join(f"{name}: {value}" for name, value in sorted(options.items())) or "none chosen"


def _cart_lines(db: sqlite3.Connection) -> list[dict[str, Any]]:
    return [
        {
            **dict(row),
            "options_json": row["options"],
            "options": options_text(json.loads(row["options"])),
        }
        for row in db.execute(
            "SELECT c.id, c.product_id, c.options, c.quantity, p.title, p.price_cents "
            "FROM cart c JOIN products p ON p.id = c.product_id ORDER BY c.id"
        )
    ]


def _total(lines: Sequence[Mapping[str, Any]]) -> int:
    return sum(line["price_cents"] * line["quantity"] for line in lines)
