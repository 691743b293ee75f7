"""The shop's database: its schema, writing a catalogue, and reading products and orders back.

One SQLite database per episode holds the catalogue (``products`` and its attribute, bullet and
option rows), the ``cart`` and the ``orders`` with their ``order_items``. Prices are whole
cents, so no float ever decides whether a price is under a cap. ``meta`` names the catalogue
(``seed`` and size), which is what the site's search-index cache is keyed on.

The env process reads purchases from here to score an episode (:func:`read_purchases`):
the judge looks at the application's state, never at the page.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from agentgym.envs.web.sites.shop.catalog import Product
from agentgym.envs.web.sites.shop.reward import Purchase

__all__ = ["SCHEMA", "load_products", "read_purchases", "write_catalogue"]

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT UNIQUE NOT NULL,
    category TEXT NOT NULL, type TEXT NOT NULL, price_cents INTEGER NOT NULL,
    description TEXT NOT NULL);
CREATE TABLE product_attributes (product_id INTEGER NOT NULL REFERENCES products(id),
    position INTEGER NOT NULL, attribute TEXT NOT NULL, PRIMARY KEY (product_id, position));
CREATE TABLE product_bullets (product_id INTEGER NOT NULL REFERENCES products(id),
    position INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (product_id, position));
CREATE TABLE product_options (product_id INTEGER NOT NULL REFERENCES products(id),
    position INTEGER NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (product_id, position));
CREATE TABLE cart (id INTEGER PRIMARY KEY AUTOINCREMENT,
    product_id INTEGER NOT NULL REFERENCES products(id), options TEXT NOT NULL,
    quantity INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,
    address TEXT NOT NULL, total_cents INTEGER NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id), title TEXT NOT NULL,
    options TEXT NOT NULL, price_cents INTEGER NOT NULL, quantity INTEGER NOT NULL);
"""


def write_catalogue(db: sqlite3.Connection, seed: int, products: Sequence[Product]) -> None:
    """Create the schema in an empty database and write the catalogue into it, in one
    transaction that the caller commits.

    The database is a template that :class:`~agentgym.envs.web.sites.base.SiteState` builds
    under a temporary name and renames when done, so it skips the per-write sync (which alone
    cost more than the rest of a build).
    """
    db.executescript(f"PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; BEGIN; {SCHEMA}")
    db.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("catalogue", f"{seed}:{len(products)}"), ("seed", str(seed))],
    )
    db.executemany(
        "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?)",
        [
            (p.id, p.title, p.category, p.type, round(p.price * 100), p.description)
            for p in products
        ],
    )
    db.executemany(
        "INSERT INTO product_attributes VALUES (?, ?, ?)",
        [(p.id, i, a) for p in products for i, a in enumerate(p.attributes)],
    )
    db.executemany(
        "INSERT INTO product_bullets VALUES (?, ?, ?)",
        [(p.id, i, b) for p in products for i, b in enumerate(p.bullets)],
    )
    db.executemany(
        "INSERT INTO product_options VALUES (?, ?, ?, ?)",
        [
            (p.id, i, name, value)
            for p in products
            for i, (name, value) in enumerate(
                (name, value) for name, values in p.options.items() for value in values
            )
        ],
    )


def load_products(db: sqlite3.Connection) -> list[Product]:
    """The catalogue as :class:`Product` objects, read back from the database."""
    attributes: dict[int, list[str]] = {}
    for pid, attribute in db.execute(
        "SELECT product_id, attribute FROM product_attributes ORDER BY product_id, position"
    ):
        attributes.setdefault(pid, []).append(attribute)
    bullets: dict[int, list[str]] = {}
    for pid, text in db.execute(
        "SELECT product_id, text FROM product_bullets ORDER BY product_id, position"
    ):
        bullets.setdefault(pid, []).append(text)
    options: dict[int, dict[str, list[str]]] = {}
    for pid, name, value in db.execute(
        "SELECT product_id, name, value FROM product_options ORDER BY product_id, position"
    ):
        options.setdefault(pid, {}).setdefault(name, []).append(value)
    return [
        Product(
            id=pid,
            title=title,
            category=category,
            type=kind,
            attributes=tuple(attributes.get(pid, ())),
            options={n: tuple(v) for n, v in options.get(pid, {}).items()},
            price=cents / 100,
            description=description,
            bullets=tuple(bullets.get(pid, ())),
        )
        for pid, title, category, kind, cents, description in db.execute(
            "SELECT id, title, category, type, price_cents, description FROM products ORDER BY id"
        )
    ]


def read_purchases(db: sqlite3.Connection) -> list[Purchase]:
    """The lines of the episode's first order (the purchase that ends a WebShop episode)."""
    first = db.execute("SELECT min(id) FROM orders").fetchone()[0]
    if first is None:
        return []
    purchases = []
    for row in db.execute(
        "SELECT i.product_id, i.title, i.options, i.price_cents, p.type, p.category "
        "FROM order_items i JOIN products p ON p.id = i.product_id WHERE i.order_id = ? "
        "ORDER BY i.rowid",
        (first,),
    ):
        attributes = tuple(
            a
            for (a,) in db.execute(
                "SELECT attribute FROM product_attributes WHERE product_id = ? ORDER BY position",
                (row[0],),
            )
        )
        purchases.append(
            Purchase(
                title=row[1],
                type=row[4],
                category=row[5],
                attributes=attributes,
                options=json.loads(row[2]),
                price=row[3] / 100,
            )
        )
    return purchases
