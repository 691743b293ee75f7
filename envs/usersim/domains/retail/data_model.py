"""The retail database: users, products and orders, the generator that fills them from a
seed, and the lookups every tool and template reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    ToolError,
)

Record = dict[str, Any]
T = TypeVar("T")
N_USERS = 200
N_ORDERS = 500
PENDING = ("pending", "pending (item modified)")
STATUSES = (
    "pending",
    "processed",
    "delivered",
    "cancelled",
    "return requested",
    "exchange requested",
)
"""The order statuses an answer may state (``pending (item modified)`` states ``pending``)."""


REASONS = ("no longer needed", "ordered by mistake")
FIRST_NAMES = (
    "Mia", "Liam", "Ava", "Noah", "Emma", "Ethan", "Sofia", "Lucas", "Amara", "Mateo",
    "Chloe", "Omar", "Isla", "Yusuf", "Hana", "Diego", "Priya", "Jonas", "Lena", "Kwame",
    "Nora", "Ravi", "Elena", "Tomas", "Aisha", "Felix", "Maya", "Hugo", "Zara", "Ivan",
)  # fmt: skip


LAST_NAMES = (
    "Garcia", "Nguyen", "Okafor", "Schmidt", "Rossi", "Kim", "Haddad", "Silva", "Novak",
    "Tanaka", "Moreau", "Patel", "Larsen", "Cohen", "Mendez", "Walker", "Ito", "Kowalski",
    "Byrne", "Santos", "Lindqvist", "Adeyemi", "Costa", "Hughes", "Petrov", "Reyes",
    "Fischer", "Ahmed", "Brooks", "Dubois",
)  # fmt: skip


CITIES = (
    ("Austin", "TX", 787), ("Denver", "CO", 802), ("Portland", "OR", 972),
    ("Columbus", "OH", 432), ("Raleigh", "NC", 276), ("Madison", "WI", 537),
    ("Tucson", "AZ", 857), ("Boise", "ID", 837), ("Richmond", "VA", 232),
    ("Omaha", "NE", 681), ("Albany", "NY", 122), ("Savannah", "GA", 314),
)  # fmt: skip


STREETS = (
    "Maple Avenue", "Cedar Lane", "Harbor Road", "Willow Street", "Sunset Boulevard",
    "Birch Court", "Lakeview Drive", "Orchard Way", "Granite Street", "Meadow Lane",
    "Juniper Road", "Elm Street", "Riverside Drive", "Aspen Court", "Hillcrest Avenue",
)  # fmt: skip


EMAIL_HOSTS = ("example.com", "mailbox.net", "inbox.org")
CARD_BRANDS = ("Visa", "Mastercard", "Amex")
SIZES = ("small", "medium", "large", "x-large")
PRODUCTS: tuple[tuple[str, float, dict[str, tuple[str, ...]]], ...] = (
    ("T-Shirt", 24, {"color": ("red", "blue", "black", "white", "green"), "size": SIZES}),
    ("Hoodie", 49, {"color": ("gray", "navy", "black", "maroon"), "size": SIZES}),
    ("Jeans", 59, {"fit": ("slim", "regular", "relaxed"), "waist": ("30", "32", "34", "36")}),
    ("Running Shoes", 89, {"color": ("white", "black", "blue", "red"), "size": tuple("789")}),
    ("Hiking Boots", 139, {"material": ("leather", "synthetic"), "size": ("8", "9", "10", "11")}),
    ("Rain Jacket", 79, {"color": ("yellow", "navy", "olive"), "size": SIZES[:3]}),
    ("Backpack", 65, {"color": ("black", "gray", "green"), "capacity": ("20 liters", "30 liters")}),
    (
        "Water Bottle",
        19,
        {"capacity": ("500 ml", "750 ml", "1000 ml"), "material": ("stainless steel", "glass")},
    ),
    ("Desk Lamp", 39, {"color": ("black", "white", "silver"), "bulb": ("led", "halogen")}),
    ("Office Chair", 229, {"material": ("mesh", "leather", "fabric"), "color": ("black", "gray")}),
    ("Wireless Earbuds", 129, {"color": ("black", "white", "blue"), "case": ("standard", "qi")}),
    (
        "Bluetooth Speaker",
        59,
        {"color": ("black", "red", "blue", "green"), "water resistance": ("ipx4", "ipx7")},
    ),
    ("Smart Watch", 249, {"color": ("black", "silver", "gold"), "band": ("silicone", "leather")}),
    (
        "Laptop Stand",
        45,
        {"material": ("aluminum", "wood", "plastic"), "height": ("fixed", "adjustable")},
    ),
    (
        "Mechanical Keyboard",
        99,
        {"switch": ("linear", "clicky", "tactile"), "layout": ("full size", "tenkeyless")},
    ),
    ("Gaming Mouse", 55, {"color": ("black", "white"), "connectivity": ("wired", "wireless")}),
    (
        "Coffee Maker",
        85,
        {"capacity": ("4 cups", "8 cups", "12 cups"), "color": ("black", "white")},
    ),
    (
        "Electric Kettle",
        42,
        {"capacity": ("1 liter", "1.7 liters"), "material": ("glass", "steel")},
    ),
    ("Blender", 95, {"power": ("600w", "900w", "1200w"), "color": ("black", "white", "red")}),
    ("Yoga Mat", 32, {"thickness": ("4mm", "6mm", "8mm"), "color": ("purple", "blue", "green")}),
    ("Dumbbell Set", 119, {"weight": ("20 lb", "30 lb", "50 lb"), "material": ("iron", "rubber")}),
    ("Tent", 189, {"capacity": ("2 person", "4 person", "6 person"), "color": ("green", "orange")}),
    (
        "Sleeping Bag",
        89,
        {"season": ("summer", "three season", "winter"), "length": ("regular", "long")},
    ),
    ("Sunglasses", 69, {"frame": ("black", "tortoise", "gold"), "lens": ("polarized", "tinted")}),
    ("Wall Clock", 35, {"style": ("modern", "vintage", "minimalist"), "color": ("black", "wood")}),
    (
        "Throw Pillow",
        28,
        {"color": ("beige", "navy", "mustard", "teal"), "fabric": ("cotton", "velvet")},
    ),
    (
        "Bed Sheets",
        75,
        {"size": ("twin", "full", "queen", "king"), "material": ("cotton", "linen")},
    ),
    ("Skateboard", 79, {"deck": ("maple", "bamboo"), "length": ("28 inch", "31 inch", "33 inch")}),
    ("Bicycle Helmet", 59, {"size": SIZES[:3], "color": ("black", "white", "red", "blue")}),
    ("Headphones", 179, {"color": ("black", "silver", "blue"), "fit": ("over-ear", "on-ear")}),
)


def _pick(rng: np.random.Generator, items: Sequence[T]) -> T:
    """One of ``items``, drawn with ``rng`` (numpy's choice would turn strings into numpy's)."""
    return items[int(rng.integers(len(items)))]


def _new_id(rng: np.random.Generator, digits: int, taken: set[str]) -> str:
    while True:
        value = str(int(rng.integers(10 ** (digits - 1), 10**digits)))
        if value not in taken:
            taken.add(value)
            return value


def _address(rng: np.random.Generator) -> Record:
    city, state, prefix = _pick(rng, CITIES)
    unit = _pick(rng, ("Apt", "Suite", "Unit"))
    return {
        "address1": f"{int(rng.integers(10, 1000))} {_pick(rng, STREETS)}",
        "address2": f"{unit} {int(rng.integers(1, 40))}{_pick(rng, 'ABC')}",
        "city": city,
        "state": state,
        "country": "USA",
        "zip": f"{prefix}{int(rng.integers(100)):02d}",
    }


def _build_products(rng: np.random.Generator, taken: set[str]) -> dict[str, Record]:
    products: dict[str, Record] = {}
    for name, base, options in PRODUCTS:
        combos: list[dict[str, str]] = [{}]
        for option, values in options.items():
            combos = [{**combo, option: value} for combo in combos for value in values]
        count = min(len(combos), int(rng.integers(3, 11)))
        chosen = sorted(int(i) for i in rng.choice(len(combos), size=count, replace=False))
        product_id = _new_id(rng, 10, taken)
        variants: dict[str, Record] = {}
        prices: set[float] = set()
        for index in chosen:
            price = round(float(base) * float(rng.uniform(0.8, 1.3)), 2)
            while price in prices:
                price = round(price + 0.37, 2)
            prices.add(price)
            item_id = _new_id(rng, 10, taken)
            variants[item_id] = {
                "item_id": item_id,
                "options": combos[index],
                "price": price,
                "available": bool(rng.random() < 0.75),
            }
        for variant in list(variants.values())[:2]:  # every product can be exchanged
            variant["available"] = True
        products[product_id] = {"product_id": product_id, "name": name, "variants": variants}
    return products


def _build_users(rng: np.random.Generator, taken: set[str]) -> dict[str, Record]:
    users: dict[str, Record] = {}
    emails: set[str] = set()
    identities: set[tuple[str, str, str]] = set()
    while len(users) < N_USERS:
        first, last = _pick(rng, FIRST_NAMES), _pick(rng, LAST_NAMES)
        address = _address(rng)
        user_id = f"{first.lower()}_{last.lower()}_{int(rng.integers(1000, 10000))}"
        email = (
            f"{first.lower()}.{last.lower()}{int(rng.integers(10, 100))}@{_pick(rng, EMAIL_HOSTS)}"
        )
        identity = (first, last, address["zip"])
        if user_id in users or email in emails or identity in identities:
            continue
        emails.add(email)
        identities.add(identity)
        methods: dict[str, Record] = {}
        kinds = ["credit_card"] + [k for k in ("paypal", "gift_card") if rng.random() < 0.5]
        for kind in kinds:
            method_id = f"{kind}_{_new_id(rng, 7, taken)}"
            method: Record = {"source": kind, "id": method_id}
            if kind == "credit_card":
                method |= {"brand": _pick(rng, CARD_BRANDS), "last_four": _new_id(rng, 4, set())}
            elif kind == "gift_card":
                method["balance"] = round(float(rng.uniform(20, 400)), 2)
            methods[method_id] = method
        users[user_id] = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "email": email,
            "address": address,
            "payment_methods": methods,
            "orders": [],
        }
    return users


def _build_orders(
    rng: np.random.Generator,
    users: dict[str, Record],
    products: dict[str, Record],
    taken: set[str],
) -> dict[str, Record]:
    orders: dict[str, Record] = {}
    user_list, product_list = list(users.values()), list(products.values())
    order_ids: set[str] = set()
    for _ in range(N_ORDERS):
        user = _pick(rng, user_list)
        order_id = f"#W{_new_id(rng, 7, order_ids)}"
        count = int(rng.integers(1, 5))
        items = []
        for index in sorted(int(i) for i in rng.choice(len(product_list), count, replace=False)):
            product = product_list[index]
            variant = _pick(rng, list(product["variants"].values()))
            items.append(
                {
                    "name": product["name"],
                    "product_id": product["product_id"],
                    "item_id": variant["item_id"],
                    "price": variant["price"],
                    "options": dict(variant["options"]),
                }
            )
        roll = rng.random()
        status = (
            "pending"
            if roll < 0.3
            else "processed"
            if roll < 0.45
            else "delivered"
            if roll < 0.85
            else "cancelled"
        )
        method = _pick(rng, list(user["payment_methods"]))
        total = round(sum(item["price"] for item in items), 2)
        history = [{"transaction_type": "payment", "amount": total, "payment_method_id": method}]
        order: Record = {
            "order_id": order_id,
            "user_id": user["user_id"],
            "address": dict(user["address"]),
            "items": items,
            "status": status,
            "fulfillments": [],
            "payment_history": history,
        }
        if status in ("processed", "delivered"):
            order["fulfillments"] = [
                {
                    "tracking_id": [_new_id(rng, 12, taken)],
                    "item_ids": [item["item_id"] for item in items],
                }
            ]
        if status == "cancelled":
            history.append({**history[0], "transaction_type": "refund"})
            order["cancel_reason"] = _pick(rng, REASONS)
        orders[order_id] = order
        user["orders"].append(order_id)
    return orders


def _user(db: DB, user_id: str) -> Record:
    user: Record | None = db["users"].get(user_id)
    if user is None:
        raise ToolError(
            f"unknown user id {user_id!r}; find it with find_user_id_by_email or "
            "find_user_id_by_name_zip (user ids look like 'mia_garcia_4516')"
        )
    return user


def _order(db: DB, order_id: str, statuses: Iterable[str] = ()) -> Record:
    order: Record | None = db["orders"].get(order_id)
    if order is None:
        hint = " (with the '#')" if not order_id.startswith("#") else ""
        raise ToolError(
            f"unknown order id {order_id!r}; order ids look like '#W1234567'{hint}, and "
            "get_user_details lists a user's orders"
        )
    wanted = tuple(statuses)
    if wanted and order["status"] not in wanted:
        raise ToolError(
            f"order {order_id} is {order['status']!r}; this needs an order that is "
            + " or ".join(repr(s) for s in wanted)
        )
    return order


def _method(db: DB, user_id: str, method_id: str) -> Record:
    methods = _user(db, user_id)["payment_methods"]
    if method_id not in methods:
        raise ToolError(
            f"payment method {method_id!r} is not one of user {user_id}'s: {', '.join(methods)}"
        )
    method: Record = methods[method_id]
    return method


def _variant(db: DB, item_id: str) -> tuple[Record, Record]:
    """The product and the variant of ``item_id``."""
    for product in db["products"].values():
        if item_id in product["variants"]:
            return product, product["variants"][item_id]
    raise ToolError(f"unknown item id {item_id!r}; get_product_details lists a product's items")


def _total(items: Iterable[Record]) -> float:
    return round(float(sum(item["price"] for item in items)), 2)


ADDRESS = ("address1", "address2", "city", "state", "country", "zip")


def _new_address(*values: str) -> Record:
    address = dict(zip(ADDRESS, (v.strip() for v in values), strict=True))
    for name in ("address1", "city", "state", "country"):
        if not address[name]:
            raise ToolError(f"{name} must not be empty")
    if not (len(address["zip"]) == 5 and address["zip"].isdigit()):
        raise ToolError(f"zip must be five digits, got {address['zip']!r}")
    return address


def _options(options: Record) -> str:
    return ", ".join(f"{name}: {value}" for name, value in options.items())


def build_retail_db(seed: int) -> DB:
    """The retail database of ``seed``: products, users, then their orders."""
    rng = np.random.default_rng(seed)
    taken: set[str] = set()
    products = _build_products(rng, taken)
    users = _build_users(rng, taken)
    orders = _build_orders(rng, users, products, taken)
    return {"users": users, "products": products, "orders": orders}
