"""``usersim/Retail-v1``: the customer service of an online shop (tau-bench's retail domain).

The agent works for *Northwind Goods*. A customer contacts it about their orders: where one
is, cancelling it, changing its items, address or payment, returning or exchanging what was
delivered, or updating their default address. The agent follows the policy below, looks
things up and makes changes with tools, and talks to a simulated customer who knows their
email, name, zip code and order ids and says them only when asked.

**Database** (built from a seed; 200 users, 30 products, 500 orders; money as floats of
dollars rounded to cents):

* ``users``: ``user_id`` (``"mia_garcia_4516"``), ``name`` (``first_name``, ``last_name``),
  ``email``, ``address`` (``address1``, ``address2``, ``city``, ``state``, ``country``,
  ``zip``), ``payment_methods`` by id (``credit_card_...`` with ``brand`` and
  ``last_four``, ``paypal_...``, ``gift_card_...`` with a ``balance``), ``orders`` (ids);
* ``products``: ``product_id``, ``name`` and 3 to 10 ``variants`` by ``item_id``, each with
  ``options`` (colour, size, material...), ``price`` and ``available``;
* ``orders``: ``order_id`` (``"#W1234567"``), ``user_id``, ``address``, ``items`` (``name``,
  ``product_id``, ``item_id``, ``price``, ``options``), ``status`` (``pending``,
  ``processed``, ``delivered``, ``cancelled``; after a change ``pending (item modified)``,
  ``return requested``, ``exchange requested``), ``fulfillments`` (tracking ids) and
  ``payment_history`` (payments and refunds by payment method).

**Tools.** Authentication: ``find_user_id_by_email``, ``find_user_id_by_name_zip``. Reads:
``get_user_details``, ``get_order_details``, ``get_product_details``,
``list_all_product_types``, ``calculate`` (arithmetic, no ``eval``). Writes:
``cancel_pending_order``, ``modify_pending_order_items``, ``modify_pending_order_address``,
``modify_pending_order_payment``, ``modify_user_address``, ``return_delivered_order_items``,
``exchange_delivered_order_items``. End: ``transfer_to_human_agents``. Every tool refuses a
bad value (an unknown id, a wrong status, an unavailable variant, a payment method the user
does not own, a gift card that does not cover a charge) with a message that says what would
work.

**Policy** (:attr:`RetailDomain.policy`, in the agent's instructions): authenticate first (by
email, or by name and zip code); one user per conversation; only pending orders can be
cancelled or modified, and their items only once; only delivered orders can be returned or
exchanged, for available variants of the same product; refunds go back to the original
payment method (returns: or to the user's gift card); list the details and get an explicit
yes before each change; refuse what the policy does not allow and say why.

**Templates** (24): easy — ``cancel_pending_order``, ``order_status``,
``modify_order_address``, ``modify_user_address``, ``gift_card_balance``,
``return_one_item``, ``change_payment_method``; medium — ``cancel_by_name_zip`` (the user does
not know their email), ``refuse_cancel_shipped``, ``refuse_return_undelivered``,
``exchange_item``, ``modify_item_variant``, ``return_to_gift_card`` (a computed total),
``product_price``, ``refuse_exchange_unavailable``, ``cancel_change_of_mind``; hard —
``exchange_change_of_mind``, ``cancel_and_return``, ``move_house`` (default address and every
pending order), ``modify_two_items`` (a computed net difference), ``modify_items_once``,
``cancel_one_refuse_other``, ``return_all_and_status``, ``exchange_and_reroute``. In the
hard ones the user does not know their order ids: the agent finds the orders from the items
the user describes.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Domain,
    Fact,
    Move,
    Request,
    Scenario,
    TaskDraft,
    TaskTemplate,
    Tool,
    ToolError,
)

__all__ = ["RetailDomain"]

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

# ------------------------------------------------------------------------------ the data

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
TRAITS = (
    "a busy nurse; you are polite but brief",
    "a retired teacher; you are patient and chatty",
    "a graduate student; you are casual and a little impatient",
    "a small-business owner; you are direct and precise",
    "a new parent; you are tired but friendly",
    "a software engineer; you are terse and expect competence",
    "a freelance photographer; you are warm and talkative",
    "a restaurant manager; you are in a hurry",
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


# ------------------------------------------------------------------------------ the tools


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


def _ids(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ToolError(f"{what} must be a non-empty list of item ids (strings), got {value!r}")
    return value


def _positions(order: Record, item_ids: list[str]) -> list[int]:
    """Where each of ``item_ids`` is in the order's items (each item used once)."""
    free = list(range(len(order["items"])))
    positions = []
    for item_id in item_ids:
        match = [i for i in free if order["items"][i]["item_id"] == item_id]
        if not match:
            have = ", ".join(item["item_id"] for item in order["items"])
            raise ToolError(
                f"item {item_id!r} is not in order {order['order_id']} (or is listed twice); "
                f"its items are {have}"
            )
        positions.append(match[0])
        free.remove(match[0])
    return positions


def _replacements(
    db: DB, order: Record, item_ids: Any, new_item_ids: Any
) -> list[tuple[int, Record]]:
    """Checked (position, new variant) pairs: same product, available, a different variant."""
    old, new = _ids(item_ids, "item_ids"), _ids(new_item_ids, "new_item_ids")
    if len(old) != len(new):
        raise ToolError(
            f"item_ids has {len(old)} items and new_item_ids {len(new)}: give one new item "
            "per item, in the same order"
        )
    pairs = []
    for position, new_id in zip(_positions(order, old), new, strict=True):
        item = order["items"][position]
        product, variant = _variant(db, new_id)
        if product["product_id"] != item["product_id"]:
            raise ToolError(
                f"item {new_id} is a {product['name']}, not a {item['name']}: an item can only "
                "become another variant of the same product"
            )
        if new_id == item["item_id"]:
            raise ToolError(f"item {new_id} is the same variant as the one in the order")
        if not variant["available"]:
            raise ToolError(f"item {new_id} ({_options(variant['options'])}) is not available")
        pairs.append((position, variant))
    return pairs


def _charge(method: Record, amount: float) -> None:
    """Check that a gift card covers ``amount`` (a charge), and take it from the balance."""
    if method["source"] == "gift_card" and method["balance"] + 1e-9 < amount:
        raise ToolError(
            f"gift card {method['id']} has a balance of ${method['balance']:.2f}, not "
            f"enough for ${amount:.2f}; choose another payment method"
        )
    if method["source"] == "gift_card":
        method["balance"] = round(method["balance"] - amount, 2)


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


def find_user_id_by_email(db: DB, email: str) -> str:
    wanted = email.strip().lower()
    for user in db["users"].values():
        if user["email"] == wanted:
            return str(user["user_id"])
    raise ToolError(
        f"no user has the email {email!r}; check its spelling with the user, or find them "
        "by name and zip code (find_user_id_by_name_zip)"
    )


def find_user_id_by_name_zip(db: DB, first_name: str, last_name: str, zip: str) -> str:
    name = (first_name.strip().lower(), last_name.strip().lower())
    for user in db["users"].values():
        full = (user["name"]["first_name"].lower(), user["name"]["last_name"].lower())
        if full == name and user["address"]["zip"] == zip.strip():
            return str(user["user_id"])
    raise ToolError(
        f"no user named {first_name} {last_name} with zip code {zip!r}; check them with the "
        "user, or find them by email (find_user_id_by_email)"
    )


def get_user_details(db: DB, user_id: str) -> Record:
    return copy.deepcopy(_user(db, user_id))


def get_order_details(db: DB, order_id: str) -> Record:
    return copy.deepcopy(_order(db, order_id))


def get_product_details(db: DB, product_id: str) -> Record:
    product = db["products"].get(product_id)
    if product is None:
        raise ToolError(
            f"unknown product id {product_id!r}; list_all_product_types gives the product ids "
            "(an item id is not a product id)"
        )
    return copy.deepcopy(product)


def list_all_product_types(db: DB) -> dict[str, str]:
    return {p["name"]: p["product_id"] for p in sorted(db["products"].values(), key=_by_name)}


def _by_name(product: Record) -> str:
    return str(product["name"])


_OPERATORS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ToolError("only numbers, + - * / and parentheses are allowed")


def calculate(db: DB, expression: str) -> float:
    if len(expression) > 500:
        raise ToolError("the expression is too long (500 characters at most)")
    try:
        tree = ast.parse(expression.replace("$", ""), mode="eval")
    except SyntaxError:
        raise ToolError(
            f"cannot parse {expression!r}: write numbers, + - * / and parentheses"
        ) from None
    try:
        return round(_evaluate(tree), 2)
    except ZeroDivisionError:
        raise ToolError(f"{expression!r} divides by zero") from None


def cancel_pending_order(db: DB, order_id: str, reason: str) -> Record:
    order = _order(db, order_id, PENDING)
    if reason not in REASONS:
        raise ToolError(
            f"reason must be 'no longer needed' or 'ordered by mistake', got {reason!r}"
        )
    paid: dict[str, float] = {}
    for entry in order["payment_history"]:
        sign = 1 if entry["transaction_type"] == "payment" else -1
        method_id = entry["payment_method_id"]
        paid[method_id] = round(paid.get(method_id, 0.0) + sign * entry["amount"], 2)
    methods = db["users"][order["user_id"]]["payment_methods"]
    for method_id, amount in paid.items():
        if amount > 0:
            order["payment_history"].append(
                {"transaction_type": "refund", "amount": amount, "payment_method_id": method_id}
            )
            if methods.get(method_id, {}).get("source") == "gift_card":
                methods[method_id]["balance"] = round(methods[method_id]["balance"] + amount, 2)
    order["status"], order["cancel_reason"] = "cancelled", reason
    return copy.deepcopy(order)


def modify_pending_order_items(
    db: DB, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> Record:
    order = _order(db, order_id)
    if order["status"] == "pending (item modified)":
        raise ToolError(
            f"the items of order {order_id} were already modified: an order's items can only "
            "be modified once"
        )
    _order(db, order_id, ("pending",))
    pairs = _replacements(db, order, item_ids, new_item_ids)
    method = _method(db, order["user_id"], payment_method_id)
    difference = round(sum(v["price"] - order["items"][i]["price"] for i, v in pairs), 2)
    _charge(method, difference)
    for position, variant in pairs:
        item = order["items"][position]
        item |= {"item_id": variant["item_id"], "price": variant["price"]}
        item["options"] = dict(variant["options"])
    if difference:
        kind = "payment" if difference > 0 else "refund"
        order["payment_history"].append(
            {"transaction_type": kind, "amount": abs(difference), "payment_method_id": method["id"]}
        )
    order["status"] = "pending (item modified)"
    return copy.deepcopy(order)


def modify_pending_order_address(
    db: DB,
    order_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> Record:
    order = _order(db, order_id, PENDING)
    order["address"] = _new_address(address1, address2, city, state, country, zip)
    return copy.deepcopy(order)


def modify_user_address(
    db: DB,
    user_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> Record:
    user = _user(db, user_id)
    user["address"] = _new_address(address1, address2, city, state, country, zip)
    return copy.deepcopy(user)


def modify_pending_order_payment(db: DB, order_id: str, payment_method_id: str) -> Record:
    order = _order(db, order_id, PENDING)
    history = order["payment_history"]
    if len(history) != 1:
        raise ToolError(
            f"order {order_id} has {len(history)} payment transactions; the payment method can "
            "only be changed for an order paid in one payment"
        )
    old_id, amount = history[0]["payment_method_id"], history[0]["amount"]
    if payment_method_id == old_id:
        raise ToolError(f"order {order_id} is already paid with {old_id}")
    new = _method(db, order["user_id"], payment_method_id)
    _charge(new, amount)
    old = db["users"][order["user_id"]]["payment_methods"].get(old_id)
    if old is not None and old["source"] == "gift_card":
        _charge(old, -amount)
    history += [
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
        {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
    ]
    return copy.deepcopy(order)


def return_delivered_order_items(
    db: DB, order_id: str, item_ids: list[str], payment_method_id: str
) -> Record:
    order = _order(db, order_id, ("delivered",))
    positions = _positions(order, _ids(item_ids, "item_ids"))
    method = _method(db, order["user_id"], payment_method_id)
    original = order["payment_history"][0]["payment_method_id"]
    if payment_method_id != original and method["source"] != "gift_card":
        raise ToolError(
            f"a refund goes to the original payment method ({original}) or to a gift card of "
            f"the user, not to {payment_method_id}"
        )
    order["status"] = "return requested"
    order["return_items"] = sorted(order["items"][i]["item_id"] for i in positions)
    order["return_payment_method_id"] = payment_method_id
    return copy.deepcopy(order)


def exchange_delivered_order_items(
    db: DB, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> Record:
    order = _order(db, order_id, ("delivered",))
    pairs = _replacements(db, order, item_ids, new_item_ids)
    method = _method(db, order["user_id"], payment_method_id)
    difference = round(sum(v["price"] - order["items"][i]["price"] for i, v in pairs), 2)
    if method["source"] == "gift_card" and method["balance"] + 1e-9 < difference:
        raise ToolError(
            f"gift card {method['id']} has a balance of ${method['balance']:.2f}, not enough "
            f"for the price difference of ${difference:.2f}; choose another payment method"
        )
    pairs.sort(key=lambda pair: str(order["items"][pair[0]]["item_id"]))
    order["status"] = "exchange requested"
    order["exchange_items"] = [order["items"][i]["item_id"] for i, _ in pairs]
    order["exchange_new_items"] = [v["item_id"] for _, v in pairs]
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = difference
    return copy.deepcopy(order)


def transfer_to_human_agents(db: DB, summary: str) -> str:
    return "Transfer successful: a human agent will take over the conversation."


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _list(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


_ADDRESS_PARAMETERS = {
    "address1": _string("street address, e.g. '12 Elm Street'"),
    "address2": _string("apartment, suite or unit, e.g. 'Apt 3B' (may be empty)"),
    "city": _string("city"),
    "state": _string("two-letter state code, e.g. 'TX'"),
    "country": _string("country, e.g. 'USA'"),
    "zip": _string("five-digit zip code"),
}
_ORDER_ID = _string("the order id, with the '#', e.g. '#W1234567'")
_METHOD_ID = _string("a payment method id of the user, e.g. 'credit_card_1234567'")

TOOLS = (
    Tool(
        "find_user_id_by_email",
        "Find a user's id by their email address (this authenticates the user).",
        {"email": _string("the user's email address")},
        find_user_id_by_email,
    ),
    Tool(
        "find_user_id_by_name_zip",
        "Find a user's id by their first name, last name and the zip code of their address "
        "(this authenticates the user).",
        {
            "first_name": _string("first name, e.g. 'Mia'"),
            "last_name": _string("last name, e.g. 'Garcia'"),
            "zip": _string("five-digit zip code"),
        },
        find_user_id_by_name_zip,
    ),
    Tool(
        "get_user_details",
        "A user's name, email, default address, payment methods (gift card balances) and orders.",
        {"user_id": _string("the user id, e.g. 'mia_garcia_4516'")},
        get_user_details,
    ),
    Tool(
        "get_order_details",
        "An order's status, items, address, shipments (tracking ids) and payment history.",
        {"order_id": _ORDER_ID},
        get_order_details,
    ),
    Tool(
        "get_product_details",
        "A product's variants: item id, options, price and availability.",
        {"product_id": _string("the product id (from list_all_product_types), not an item id")},
        get_product_details,
    ),
    Tool(
        "list_all_product_types",
        "The shop's product types: name -> product id.",
        {},
        list_all_product_types,
    ),
    Tool(
        "calculate",
        "Compute an arithmetic expression (numbers, + - * / and parentheses); the result is "
        "rounded to cents.",
        {"expression": _string("e.g. '24.99 + 13.50 - 5'")},
        calculate,
    ),
    Tool(
        "cancel_pending_order",
        "Cancel a pending order; everything paid is refunded to the payment methods it was "
        "paid with (a gift card at once, others in 5-7 business days).",
        {"order_id": _ORDER_ID, "reason": _string("'no longer needed' or 'ordered by mistake'")},
        cancel_pending_order,
        writes=True,
        proposed_as=(("cancel",),),
        named_arguments=("order_id", "reason"),
    ),
    Tool(
        "modify_pending_order_items",
        "Change items of a pending order into other available variants of the same products "
        "(only once per order: give every change in one call). The price difference is "
        "charged to, or refunded to, the payment method.",
        {
            "order_id": _ORDER_ID,
            "item_ids": _list("the item ids to change, e.g. ['1008292230']"),
            "new_item_ids": _list("the new item ids, one per item, in the same order"),
            "payment_method_id": _METHOD_ID,
        },
        modify_pending_order_items,
        writes=True,
        proposed_as=(("change",), ("modif",)),
        named_arguments=("order_id", "item_ids", "new_item_ids"),
    ),
    Tool(
        "modify_pending_order_address",
        "Change the shipping address of a pending order.",
        {"order_id": _ORDER_ID, **_ADDRESS_PARAMETERS},
        modify_pending_order_address,
        writes=True,
        proposed_as=(("address",),),
        named_arguments=("order_id", "address1", "zip"),
    ),
    Tool(
        "modify_pending_order_payment",
        "Pay a pending order with another payment method of the user; the old one is refunded.",
        {"order_id": _ORDER_ID, "payment_method_id": _METHOD_ID},
        modify_pending_order_payment,
        writes=True,
        proposed_as=(("pay",),),
        named_arguments=("order_id", "payment_method_id"),
    ),
    Tool(
        "modify_user_address",
        "Change a user's default address (existing orders keep theirs).",
        {"user_id": _string("the user id"), **_ADDRESS_PARAMETERS},
        modify_user_address,
        writes=True,
        proposed_as=(("address",),),
        named_arguments=("address1", "zip"),
    ),
    Tool(
        "return_delivered_order_items",
        "Request the return of items of a delivered order; the refund goes to the original "
        "payment method or to a gift card of the user.",
        {
            "order_id": _ORDER_ID,
            "item_ids": _list("the item ids to return"),
            "payment_method_id": _METHOD_ID,
        },
        return_delivered_order_items,
        writes=True,
        proposed_as=(("return",),),
        named_arguments=("order_id", "item_ids"),
    ),
    Tool(
        "exchange_delivered_order_items",
        "Request the exchange of items of a delivered order for other available variants of "
        "the same products; the price difference is charged to or refunded to the payment "
        "method.",
        {
            "order_id": _ORDER_ID,
            "item_ids": _list("the item ids to exchange"),
            "new_item_ids": _list("the new item ids, one per item, in the same order"),
            "payment_method_id": _METHOD_ID,
        },
        exchange_delivered_order_items,
        writes=True,
        proposed_as=(("exchange",),),
        named_arguments=("order_id", "item_ids", "new_item_ids"),
    ),
    Tool(
        "transfer_to_human_agents",
        "Hand the conversation to a human agent (only for a request within the policy that "
        "the tools cannot handle); this ends the conversation.",
        {"summary": _string("a summary of the user's issue for the human agent")},
        transfer_to_human_agents,
    ),
)

POLICY = """\
# Northwind Goods: customer-service policy

You are a customer-service agent of Northwind Goods, an online shop. You help the customer
with their orders, returns, exchanges, payments and addresses.

## Every conversation
- Authenticate the customer first, even when they only ask a question: find their user id
  with `find_user_id_by_email`; if they do not know their email, with
  `find_user_id_by_name_zip` (first name, last name and zip code). Do this even if they give
  you a user id.
- Help one customer per conversation; refuse anything about another person's account.
- Use only what the tools return: do not make up information, items or procedures. Compute
  amounts (totals, refunds, price differences) with `calculate`.
- Before every action that changes the database, list its details (order id, items, new
  variants, address, payment method, amount) and ask the customer to confirm; act only after
  an explicit yes. One yes covers one action.
- After an action, tell the customer the result: what changed and the amount refunded or
  charged, and to which payment method.
- Refuse a request the policy does not allow, and tell the customer the reason in the words
  below. Transfer to a human agent (`transfer_to_human_agents`) only for a request the
  policy allows but the tools cannot carry out.

## Orders
An order is `pending`, then `processed` (packed and shipped), then `delivered`; or
`cancelled`. After a change it becomes `pending (item modified)`, `return requested` or
`exchange requested`.

## Pending orders (`pending` or `pending (item modified)`)
- **Cancel**: ask for the reason, which must be "no longer needed" or "ordered by mistake".
  Everything paid is refunded to the payment methods it was paid with; tell the customer
  the total refund.
- **Change the shipping address** to a full address (street, apartment or suite, city, state,
  country, zip code).
- **Change the payment method** to another payment method of the customer. The order must
  have been paid in one payment, and a gift card must cover the whole order.
- **Modify items** (status `pending` only): each item may become another *available*
  variant of the same product (another colour, size...). The items of an order can only be
  modified once, so collect every change first and make them in one call. The price
  difference is charged to, or refunded to, a payment method of the customer (a gift card
  must cover a charge); tell the customer the difference.
- An order that is processed, delivered or cancelled cannot be cancelled or modified: tell
  the customer it "cannot be cancelled" (or modified) and why.

## Delivered orders (`delivered`)
- **Return** items: the refund goes to the original payment method or to the customer's
  gift card; tell the customer the total refund.
- **Exchange** items for other available variants of the same product (not for another
  product); the price difference is charged to or refunded to a payment method of the
  customer; tell the customer the difference.
- Items of an order that is not delivered cannot be returned or exchanged: tell the customer
  they "cannot be returned" and why.
- A variant whose `available` is false cannot be ordered: tell the customer it is "not
  available".

## Customer details
- `modify_user_address` changes the customer's default address; it does not change the
  address of existing orders.
"""


# ------------------------------------------------------------------------------ the templates

ORDER_ASK = ("order id", "order number")
CONFIRM = "Please confirm (yes) that I should proceed."


def _money(amount: float) -> str:
    return f"{abs(amount):.2f}"


def _options(options: Record) -> str:
    return ", ".join(f"{name}: {value}" for name, value in options.items())


def _item(item: Record) -> str:
    return f"{item['name']} ({_options(item['options'])})"


def _address_text(address: Record) -> str:
    return ", ".join(address[k] for k in ("address1", "address2", "city")) + (
        f", {address['state']} {address['zip']}, {address['country']}"
    )


def _method_text(method: Record) -> str:
    if method["source"] == "credit_card":
        return f"the {method['brand']} credit card ending in {method['last_four']} ({method['id']})"
    if method["source"] == "paypal":
        return f"PayPal ({method['id']})"
    return f"the gift card ({method['id']})"


def _method_user(method: Record) -> str:
    """How the customer names a payment method."""
    if method["source"] == "credit_card":
        return f"my {method['brand']} card ending in {method['last_four']}"
    return "my PayPal account" if method["source"] == "paypal" else "my gift card"


def _method_key(method: Record) -> str:
    """The phrase a proposal must name for the customer to recognize a payment method."""
    if method["source"] == "credit_card":
        return str(method["last_four"])
    return "paypal" if method["source"] == "paypal" else "gift card"


def _changed(old: Record, new: Record) -> tuple[str, ...]:
    """The option values of ``new`` that differ from ``old``'s: what the customer asked for."""
    return tuple(v for k, v in new["options"].items() if old["options"].get(k) != v)


class _Script:
    """The oracle's moves, written in order."""

    def __init__(self) -> None:
        self.moves: list[Move] = []

    def say(self, text: str) -> None:
        self.moves.append(Move(say=text))

    def call(self, name: str, **arguments: Any) -> None:
        self.moves.append(Move(call=name, arguments=arguments))


class _Draw:
    """What every template draws first: a customer, how they authenticate, who they are."""

    def __init__(self, db: DB, rng: np.random.Generator, user: Record, by_email: bool = True):
        self.db, self.rng, self.user, self.by_email = db, rng, user, by_email
        self.script = _Script()
        self.first = user["name"]["first_name"]
        self.name = f"{self.first} {user['name']['last_name']}"
        self.persona = f"You are {self.name}, {_pick(rng, TRAITS)}."
        if not by_email:
            self.persona += " You do not remember which email address your account uses."
        self.facts: list[Fact] = []
        self.read: set[str] = set()  # the orders the oracle has read

    def authenticate(self) -> None:
        """Ask for the email (or name and zip), find the user id, read the user's details."""
        user, script = self.user, self.script
        script.say(
            "I'd be glad to help. First I need to verify your identity: what is the email "
            "address on your account?"
        )
        if self.by_email:
            self.facts.append(Fact("email address", user["email"], ("email",)))
            script.call("find_user_id_by_email", email=user["email"])
        else:
            zip_code = user["address"]["zip"]
            self.facts += [
                Fact("email address", "", ("email",), known=False),
                Fact("full name", self.name, ("full name",)),
                Fact("zip code", zip_code, ("zip",)),
            ]
            script.say("No problem. Then please tell me your full name and your zip code.")
            first, last = user["name"]["first_name"], user["name"]["last_name"]
            script.call("find_user_id_by_name_zip", first_name=first, last_name=last, zip=zip_code)
        script.call("get_user_details", user_id=user["user_id"])

    def ask_order(self, order: Record, what: str) -> None:
        """The customer knows the order id: ask for it and read the order."""
        self.facts.append(Fact("order id", order["order_id"], ORDER_ASK))
        self.script.say(f"Thank you, {self.first}. What is the order id of the order {what}?")
        self.script.call("get_order_details", order_id=order["order_id"])

    def find_orders(self, *wanted: Record) -> None:
        """The customer does not know the order ids: read their orders until all are found."""
        if not any(f.label == "order id" for f in self.facts):
            self.facts.append(Fact("order id", "", ORDER_ASK, known=False))
        missing = {order["order_id"] for order in wanted} - self.read
        for order_id in self.user["orders"]:
            if not missing:
                break
            if order_id not in self.read:
                self.read.add(order_id)
                self.script.call("get_order_details", order_id=order_id)
                missing.discard(order_id)

    def method(self, method_id: str) -> Record:
        return dict(self.user["payment_methods"][method_id])

    def draft(self, opening: str, *requests: Request, refuses: Sequence[str] = ()) -> TaskDraft:
        scenario = Scenario(self.persona, opening, tuple(self.facts), requests, tuple(refuses))
        return TaskDraft(scenario, tuple(self.script.moves))


def _orders(db: DB, *statuses: str, where: Callable[[Record], bool] | None = None) -> list[Record]:
    return [
        o for o in db["orders"].values() if o["status"] in statuses and (where is None or where(o))
    ]


def _user_of(db: DB, order: Record) -> Record:
    user: Record = db["users"][order["user_id"]]
    return user


def _describes(db: DB, user: Record, order: Record) -> list[Record]:
    """The items of ``order`` whose product is in no other order of the customer: the ones
    the customer can name the order by."""
    others = {
        item["product_id"]
        for order_id in user["orders"]
        if order_id != order["order_id"]
        for item in db["orders"][order_id]["items"]
    }
    return [item for item in order["items"] if item["product_id"] not in others]


def _alternatives(db: DB, item: Record, exclude: Iterable[str] = ()) -> list[Record]:
    """Available variants of the item's product other than the item (and ``exclude``)."""
    skip = {item["item_id"], *exclude}
    variants = db["products"][item["product_id"]]["variants"].values()
    return [v for v in variants if v["available"] and v["item_id"] not in skip]


def _original(order: Record) -> str:
    return str(order["payment_history"][0]["payment_method_id"])


def _covers(method: Record, amount: float) -> bool:
    return bool(method["source"] != "gift_card" or method["balance"] >= amount)


def _difference_text(difference: float, method: Record) -> str:
    if difference > 0:
        return f"you pay ${_money(difference)} more, charged to {_method_text(method)}"
    return f"you get ${_money(difference)} back, refunded to {_method_text(method)}"


def _choice(rng: np.random.Generator, candidates: Sequence[T]) -> T | None:
    return _pick(rng, candidates) if candidates else None


def _fresh_address(rng: np.random.Generator, old: Record) -> Record:
    address = _address(rng)
    return address if address["zip"] != old["zip"] else _fresh_address(rng, old)


def _address_arguments(address: Record) -> dict[str, str]:
    return {k: str(address[k]) for k in ADDRESS}


# ---------------------------------------------------------------- single-order pieces


def _cancel(d: _Draw, order: Record, reason: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Propose the cancellation, make it, report the refund; the request's ``confirm`` and
    ``expects`` phrases."""
    oid, total = order["order_id"], _total(order["items"])
    method = d.method(_original(order))
    items = "; ".join(_item(i) for i in order["items"])
    d.script.say(
        f"Order {oid} is pending and contains: {items}. I will cancel it with the reason "
        f'"{reason}", and the total of ${_money(total)} will be refunded to '
        f"{_method_text(method)}. {CONFIRM}"
    )
    d.script.call("cancel_pending_order", order_id=oid, reason=reason)
    d.script.say(
        f"Order {oid} is now cancelled. ${_money(total)} will be refunded to "
        f"{_method_text(method)}."
    )
    return (oid.lower(), reason), (_money(total),)


def _exchange_or_modify(
    d: _Draw, order: Record, item: Record, new: Record, method: Record, tool: str
) -> float:
    """Propose changing ``item`` into variant ``new``, make it, report the difference."""
    oid, difference = order["order_id"], round(float(new["price"] - item["price"]), 2)
    verb = "exchange" if tool == "exchange_delivered_order_items" else "change"
    new_item = {"name": item["name"], "options": new["options"]}
    d.script.call("get_product_details", product_id=item["product_id"])
    d.script.call("calculate", expression=f"{new['price']} - {item['price']}")
    d.script.say(
        f"In order {oid} I will {verb} the {_item(item)} (item {item['item_id']}, "
        f"${item['price']:.2f}) for the {_item(new_item)} (item {new['item_id']}, "
        f"${new['price']:.2f}): {_difference_text(difference, method)}. {CONFIRM}"
    )
    d.script.call(
        tool,
        order_id=oid,
        item_ids=[item["item_id"]],
        new_item_ids=[new["item_id"]],
        payment_method_id=method["id"],
    )
    done = "exchange is requested" if verb == "exchange" else "order is updated"
    d.script.say(
        f"Done: the {done} ({oid}), and the price difference of ${_money(difference)} is "
        f"{'charged to' if difference > 0 else 'refunded to'} {_method_text(method)}."
    )
    return difference


def _return(d: _Draw, order: Record, items: list[Record], method: Record) -> float:
    """Propose returning ``items``, make it, report the total refund."""
    oid, total = order["order_id"], _total(items)
    if len(items) > 1:
        d.script.call("calculate", expression=" + ".join(str(i["price"]) for i in items))
    listed = "; ".join(f"{_item(i)} (item {i['item_id']}, ${i['price']:.2f})" for i in items)
    d.script.say(
        f"I will request the return of these items of order {oid}: {listed}. The refund of "
        f"${_money(total)} will go to {_method_text(method)}. {CONFIRM}"
    )
    d.script.call(
        "return_delivered_order_items",
        order_id=oid,
        item_ids=[i["item_id"] for i in items],
        payment_method_id=method["id"],
    )
    d.script.say(
        f"The return is requested for order {oid}. Once the items are back, "
        f"${_money(total)} will be refunded to {_method_text(method)}."
    )
    return total


def _reroute(d: _Draw, order: Record, address: Record) -> None:
    oid, text = order["order_id"], _address_text(address)
    d.script.say(f"I will change the shipping address of order {oid} to {text}. {CONFIRM}")
    d.script.call("modify_pending_order_address", order_id=oid, **_address_arguments(address))


def _address_confirm(address: Record) -> tuple[str, ...]:
    return (address["address1"].lower(), address["zip"])


# ---------------------------------------------------------------- easy


def _cancel_pending_order(db: DB, rng: np.random.Generator, by_email: bool = True) -> TaskDraft:
    order = _pick(rng, _orders(db, "pending"))
    d = _Draw(db, rng, _user_of(db, order), by_email)
    reason = _pick(rng, REASONS)
    d.authenticate()
    d.facts.append(Fact("reason for cancelling", reason, ("reason",)))
    d.ask_order(order, "you want to cancel, and what is the reason for cancelling")
    confirm, expects = _cancel(d, order, reason)
    product = _pick(rng, order["items"])["name"]
    says = f"I'd like to cancel my order with the {product}."
    opening = (
        "Hi, I need to cancel an order I placed."
        if by_email
        else "Hello, I want to cancel an order, but I can't remember which email I used."
    )
    return d.draft(opening, Request(says, writes=1, confirm=confirm, expects=expects))


def _order_status(db: DB, rng: np.random.Generator) -> TaskDraft:
    order = _pick(rng, _orders(db, "processed", "delivered"))
    d = _Draw(db, rng, _user_of(db, order))
    tracking = order["fulfillments"][0]["tracking_id"][0]
    d.authenticate()
    d.ask_order(order, "you are asking about")
    d.script.say(
        f"Your order {order['order_id']} is {order['status']}. Its tracking number is {tracking}."
    )
    product = _pick(rng, order["items"])["name"]
    says = f"Could you tell me the status of my order with the {product}, and its tracking number?"
    return d.draft(
        "Hi, I'm wondering where my order is.",
        Request(says, expects=(order["status"], tracking)),
    )


def _modify_order_address(db: DB, rng: np.random.Generator) -> TaskDraft:
    order = _pick(rng, _orders(db, "pending"))
    d = _Draw(db, rng, _user_of(db, order))
    address = _fresh_address(rng, order["address"])
    d.authenticate()
    d.ask_order(order, "you want to send elsewhere")
    _reroute(d, order, address)
    d.script.say(f"Done: order {order['order_id']} will now ship to {_address_text(address)}.")
    says = f"Please ship my order to {_address_text(address)} instead."
    return d.draft(
        "Hi, I need one of my orders delivered to a different address.",
        Request(says, writes=1, confirm=(order["order_id"].lower(), *_address_confirm(address))),
    )


def _modify_user_address(db: DB, rng: np.random.Generator) -> TaskDraft:
    user = _pick(rng, list(db["users"].values()))
    d = _Draw(db, rng, user)
    address = _fresh_address(rng, user["address"])
    text = _address_text(address)
    d.authenticate()
    d.script.say(f"I will change the default address of your account to {text}. {CONFIRM}")
    d.script.call("modify_user_address", user_id=user["user_id"], **_address_arguments(address))
    d.script.say(f"Done: your default address is now {text}.")
    return d.draft(
        "Hello, I moved recently and my account still has my old address.",
        Request(
            f"Please change the default address on my account to {text}.",
            writes=1,
            confirm=_address_confirm(address),
        ),
    )


def _gift_card_balance(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    users = [
        u
        for u in db["users"].values()
        if any(m["source"] == "gift_card" for m in u["payment_methods"].values())
    ]
    d = _Draw(db, rng, _pick(rng, users))
    card = next(m for m in d.user["payment_methods"].values() if m["source"] == "gift_card")
    d.authenticate()
    d.script.say(f"Your gift card ({card['id']}) has a balance of ${card['balance']:.2f}.")
    return d.draft(
        "Hi, I have a question about my gift card.",
        Request("How much is left on my gift card?", expects=(_money(card["balance"]),)),
    )


def _return_one_item(db: DB, rng: np.random.Generator) -> TaskDraft:
    order = _pick(rng, _orders(db, "delivered"))
    d = _Draw(db, rng, _user_of(db, order))
    item = _pick(rng, order["items"])
    method = d.method(_original(order))
    d.authenticate()
    d.ask_order(order, "with the item you want to return")
    total = _return(d, order, [item], method)
    says = (
        f"I'd like to return the {_item(item)} I received; the refund should go back to "
        "what I paid with."
    )
    return d.draft(
        "Hi, I want to return something I bought.",
        Request(
            says,
            writes=1,
            confirm=(order["order_id"].lower(), item["name"].lower()),
            expects=(_money(total),),
        ),
    )


def _change_payment_method(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    order = _pick(rng, _orders(db, "pending", where=lambda o: len(o["payment_history"]) == 1))
    d = _Draw(db, rng, _user_of(db, order))
    total, old = _total(order["items"]), d.method(_original(order))
    choices = [
        m for m in d.user["payment_methods"].values() if m["id"] != old["id"] and _covers(m, total)
    ]
    new = _choice(rng, choices)
    if new is None:
        return None
    oid = order["order_id"]
    d.authenticate()
    d.ask_order(order, "you want to pay differently")
    d.script.say(
        f"I will change the payment of order {oid} (${total:.2f}) from {_method_text(old)} to "
        f"{_method_text(new)}; {_method_text(old)} will be refunded. {CONFIRM}"
    )
    d.script.call("modify_pending_order_payment", order_id=oid, payment_method_id=new["id"])
    d.script.say(f"Done: order {oid} is now paid with {_method_text(new)}.")
    return d.draft(
        "Hi, I'd like to change how I pay for an order.",
        Request(
            f"I want to pay for my order with {_method_user(new)} instead.",
            writes=1,
            confirm=(oid.lower(), _method_key(new)),
        ),
    )


# ---------------------------------------------------------------- medium


def _cancel_by_name_zip(db: DB, rng: np.random.Generator) -> TaskDraft:
    return _cancel_pending_order(db, rng, by_email=False)


def _refuse_cancel_shipped(db: DB, rng: np.random.Generator) -> TaskDraft:
    order = _pick(rng, _orders(db, "processed", "delivered"))
    d = _Draw(db, rng, _user_of(db, order))
    d.authenticate()
    d.ask_order(order, "you want to cancel")
    d.script.say(
        f"I'm sorry: order {order['order_id']} is already {order['status']}, so it cannot be "
        "cancelled. Only pending orders can be cancelled."
    )
    product = _pick(rng, order["items"])["name"]
    return d.draft(
        "Hi, I want to cancel an order.",
        Request(
            f"Please cancel my order with the {product}; I don't need it any more.",
            expects=("cannot be cancelled",),
        ),
        refuses=("You do not want to be transferred to a human agent.",),
    )


def _refuse_return_undelivered(db: DB, rng: np.random.Generator) -> TaskDraft:
    order = _pick(rng, _orders(db, "processed"))
    d = _Draw(db, rng, _user_of(db, order))
    d.authenticate()
    d.ask_order(order, "with the item you want to return")
    item = _pick(rng, order["items"])
    d.script.say(
        f"I'm sorry: order {order['order_id']} is {order['status']} and not delivered yet, so "
        "its items cannot be returned. Only delivered orders can be returned."
    )
    return d.draft(
        "Hi, I want to send something back.",
        Request(
            f"I'd like to return the {_item(item)} from my order.",
            expects=("cannot be returned",),
        ),
    )


def _one_change(
    db: DB, rng: np.random.Generator, status: str, alternatives: int = 1
) -> tuple[_Draw, Record, Record, list[Record], Record] | None:
    """An order of ``status``, one of its items, ``alternatives`` available other variants
    whose price difference the original payment method covers, and that method."""
    order = _pick(rng, _orders(db, status))
    item = _pick(rng, order["items"])
    user = _user_of(db, order)
    method = dict(user["payment_methods"][_original(order)])
    choices = [v for v in _alternatives(db, item) if _covers(method, v["price"] - item["price"])]
    if len(choices) < alternatives:
        return None
    picked = [choices[int(i)] for i in rng.choice(len(choices), alternatives, replace=False)]
    return _Draw(db, rng, user), order, item, picked, method


def _exchange_item(db: DB, rng: np.random.Generator, status: str = "delivered") -> TaskDraft | None:
    tool = (
        "exchange_delivered_order_items" if status == "delivered" else "modify_pending_order_items"
    )
    drawn = _one_change(db, rng, status)
    if drawn is None:
        return None
    d, order, item, (new,), method = drawn
    d.authenticate()
    d.ask_order(order, "with the item you want to change")
    difference = _exchange_or_modify(d, order, item, new, method, tool)
    wish = _options(new["options"])
    if status == "delivered":
        opening = "Hi, something I received isn't quite right and I'd like a different one."
        says = f"I want to exchange the {_item(item)} I received for the same thing with {wish}."
    else:
        opening = "Hi, I ordered the wrong variant of something and it hasn't shipped yet."
        says = f"Please change the {_item(item)} in my order to the one with {wish}."
    says += " Use the same payment method as the order for any difference."
    return d.draft(
        opening,
        Request(
            says,
            writes=1,
            confirm=(order["order_id"].lower(), *_changed(item, new)),
            expects=(_money(difference),),
        ),
    )


def _modify_item_variant(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _exchange_item(db, rng, status="pending")


def _return_to_gift_card(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    def fits(order: Record) -> bool:
        methods = db["users"][order["user_id"]]["payment_methods"].values()
        return len(order["items"]) >= 2 and any(m["source"] == "gift_card" for m in methods)

    order = _pick(rng, _orders(db, "delivered", where=fits))
    d = _Draw(db, rng, _user_of(db, order))
    card = next(m for m in d.user["payment_methods"].values() if m["source"] == "gift_card")
    picked = sorted(int(i) for i in rng.choice(len(order["items"]), 2, replace=False))
    items = [order["items"][i] for i in picked]
    d.authenticate()
    d.ask_order(order, "with the items you want to return")
    total = _return(d, order, items, card)
    names = " and the ".join(_item(i) for i in items)
    return d.draft(
        "Hello, I'd like to send back a couple of things from an order.",
        Request(
            f"I want to return the {names}, and I'd like the refund on my gift card.",
            writes=1,
            confirm=(order["order_id"].lower(), "gift card", *(i["name"].lower() for i in items)),
            expects=(_money(total),),
        ),
        refuses=("You do not want the refund on your original payment method.",),
    )


def _product_price(db: DB, rng: np.random.Generator) -> TaskDraft:
    d = _Draw(db, rng, _pick(rng, list(db["users"].values())))
    product = _pick(rng, list(db["products"].values()))
    variant = _pick(rng, [v for v in product["variants"].values() if v["available"]])
    wish = _options(variant["options"])
    d.authenticate()
    d.script.call("list_all_product_types")
    d.script.call("get_product_details", product_id=product["product_id"])
    d.script.say(
        f"The {product['name']} with {wish} (item {variant['item_id']}) is available and costs "
        f"${variant['price']:.2f}."
    )
    return d.draft(
        "Hi, I have a question about one of your products.",
        Request(
            f"Do you have the {product['name']} with {wish}, and how much does it cost?",
            expects=(_money(variant["price"]),),
        ),
    )


def _refuse_exchange_unavailable(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    order = _pick(rng, _orders(db, "delivered"))
    item = _pick(rng, order["items"])
    variants = db["products"][item["product_id"]]["variants"].values()
    wanted = _choice(rng, [v for v in variants if not v["available"]])
    if wanted is None:
        return None
    d = _Draw(db, rng, _user_of(db, order))
    d.authenticate()
    d.ask_order(order, "with the item you want to exchange")
    d.script.call("get_product_details", product_id=item["product_id"])
    d.script.say(
        f"I'm sorry: the {item['name']} with {_options(wanted['options'])} is not available, so "
        "I cannot exchange your item for it."
    )
    return d.draft(
        "Hi, I'd like to exchange something I got.",
        Request(
            f"I want to exchange the {_item(item)} for the one with "
            f"{_options(wanted['options'])}; I only want that one.",
            expects=("not available",),
        ),
        refuses=("You do not want any other variant than the one you asked for.",),
    )


def _cancel_change_of_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    order = _pick(rng, _orders(db, "pending"))
    user = _user_of(db, order)
    others = [
        db["orders"][o]
        for o in user["orders"]
        if o != order["order_id"] and db["orders"][o]["status"] == "pending"
    ]
    other = _choice(rng, others)
    if other is None:
        return None
    d = _Draw(db, rng, user)
    reason = _pick(rng, REASONS)
    d.authenticate()
    d.facts.append(Fact("reason for cancelling", reason, ("reason",)))
    d.ask_order(order, "you want to cancel, and what is the reason for cancelling")
    first, _ = _cancel(d, order, reason)
    d.script.moves[-2:] = []  # the customer changes their mind before the first cancellation
    d.script.call("get_order_details", order_id=other["order_id"])
    second, expects = _cancel(d, other, reason)
    change = (
        f"Actually, wait: I mixed up my orders. Don't cancel that one; cancel order "
        f"{other['order_id']} instead, for the same reason."
    )
    return d.draft(
        "Hi, I need to cancel one of my orders.",
        Request(
            "I'd like to cancel one of my orders.",
            writes=1,
            confirm=first,
            expects=expects,
            change=change,
            then_confirm=second,
        ),
    )


# ---------------------------------------------------------------- hard


def _exchange_change_of_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    tool = "exchange_delivered_order_items"
    drawn = _one_change(db, rng, "delivered", alternatives=2)
    if drawn is None:
        return None
    d, order, item, (first, second), method = drawn
    d.authenticate()
    d.ask_order(order, "with the item you want to exchange")
    difference = _exchange_or_modify(d, order, item, first, method, tool)
    del d.script.moves[-2:]  # the customer changes their mind before the first exchange
    difference = _exchange_or_modify(d, order, item, second, method, tool)
    return d.draft(
        "Hi, I'd like to exchange something from an order that arrived.",
        Request(
            f"I want to exchange the {_item(item)} for the same thing with "
            f"{_options(first['options'])}. Use the same payment method as the order.",
            writes=1,
            confirm=(order["order_id"].lower(), *_changed(item, first)),
            expects=(_money(difference),),
            change=f"Actually, wait: I'd rather have the one with {_options(second['options'])}.",
            then_confirm=(order["order_id"].lower(), *_changed(item, second)),
        ),
    )


def _two_orders(
    db: DB, rng: np.random.Generator, first: Sequence[str], second: Sequence[str]
) -> tuple[Record, Record, Record, Record, Record] | None:
    """A customer with an order of status ``first`` and another of status ``second``, each
    named by one of its items that no other order of theirs has."""

    def named(user: Record, statuses: Sequence[str]) -> list[Record]:
        orders = (db["orders"][o] for o in user["orders"])
        return [o for o in orders if o["status"] in statuses and _describes(db, user, o)]

    users = [u for u in db["users"].values() if named(u, first) and named(u, second)]
    user = _choice(rng, users)
    if user is None:
        return None
    a = _pick(rng, named(user, first))
    b = _choice(rng, [o for o in named(user, second) if o is not a])
    if b is None:
        return None
    return user, a, _pick(rng, _describes(db, user, a)), b, _pick(rng, _describes(db, user, b))


def _cancel_and_return(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    drawn = _two_orders(db, rng, ("pending",), ("delivered",))
    if drawn is None:
        return None
    user, pending, named, delivered, item = drawn
    d = _Draw(db, rng, user)
    reason = _pick(rng, REASONS)
    d.facts.append(Fact("reason for cancelling", reason, ("reason",)))
    d.authenticate()
    d.find_orders(pending, delivered)
    confirm, expects = _cancel(d, pending, reason)
    cards = [m for m in user["payment_methods"].values() if m["source"] == "gift_card"]
    method = dict(cards[0]) if cards else d.method(_original(delivered))
    refunded = _return(d, delivered, [item], method)
    where = "on my gift card" if cards else "back to what I paid with"
    return d.draft(
        "Hi, I have two things to sort out with my orders.",
        Request(
            f"First, please cancel my order with the {named['name']}; the reason: {reason}.",
            writes=1,
            confirm=confirm,
            expects=expects,
        ),
        Request(
            f"Also, I want to return the {_item(item)} I received, with the refund {where}.",
            writes=1,
            confirm=(delivered["order_id"].lower(), item["name"].lower(), _method_key(method)),
            expects=(_money(refunded),),
        ),
    )


def _move_house(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    def pending_orders(user: Record) -> list[Record]:
        return [db["orders"][o] for o in user["orders"] if db["orders"][o]["status"] == "pending"]

    users = [
        u
        for u in db["users"].values()
        if 2 <= len(pending_orders(u)) <= 3 and len(u["orders"]) <= 6
    ]
    user = _pick(rng, users)
    pending = pending_orders(user)
    d = _Draw(db, rng, user)
    address = _fresh_address(rng, user["address"])
    text = _address_text(address)
    d.authenticate()
    d.script.say(f"I will change the default address of your account to {text}. {CONFIRM}")
    d.script.call("modify_user_address", user_id=user["user_id"], **_address_arguments(address))
    d.script.say(f"Done: your default address is now {text}.")
    d.find_orders(*pending)
    for order in pending:
        _reroute(d, order, address)
    ids = ", ".join(o["order_id"] for o in pending)
    d.script.say(f"Done: your pending orders {ids} will now ship to {text}.")
    return d.draft(
        "Hi, I just moved house and need to update some things.",
        Request(
            f"Please change the default address on my account to {text}.",
            writes=1,
            confirm=_address_confirm(address),
        ),
        Request(
            "Please also send all of my orders that haven't shipped yet to the new address.",
            writes=len(pending),
            confirm=_address_confirm(address),
        ),
    )


def _two_changes(
    db: DB, rng: np.random.Generator
) -> tuple[Record, Record, list[Record], list[Record]] | None:
    """A pending order, two of its items and an available other variant for each."""
    order = _pick(rng, _orders(db, "pending", where=lambda o: len(o["items"]) >= 2))
    picked = sorted(int(i) for i in rng.choice(len(order["items"]), 2, replace=False))
    items = [order["items"][i] for i in picked]
    options = [_alternatives(db, item) for item in items]
    if not all(options):
        return None
    return _user_of(db, order), order, items, [_pick(rng, o) for o in options]


def _modify_two_items(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    drawn = _two_changes(db, rng)
    if drawn is None:
        return None
    user, order, items, news = drawn
    difference = round(sum(n["price"] - i["price"] for i, n in zip(items, news, strict=True)), 2)
    methods = [m for m in user["payment_methods"].values() if _covers(m, difference)]
    method = _choice(rng, methods)
    if method is None or abs(difference) < 0.01:
        return None
    d = _Draw(db, rng, user)
    oid = order["order_id"]
    d.authenticate()
    d.ask_order(order, "you want to change")
    changes = []
    for item, new in zip(items, news, strict=True):
        d.script.call("get_product_details", product_id=item["product_id"])
        changes.append(
            f"the {_item(item)} (item {item['item_id']}, ${item['price']:.2f}) becomes the one "
            f"with {_options(new['options'])} (item {new['item_id']}, ${new['price']:.2f})"
        )
    prices = " + ".join(f"({n['price']} - {i['price']})" for i, n in zip(items, news, strict=True))
    d.script.call("calculate", expression=prices)
    d.script.say(
        f"In order {oid} I will change these items: {'; and '.join(changes)}. Altogether "
        f"{_difference_text(difference, method)}. The items of an order can only be modified "
        f"once, so this is final. {CONFIRM}"
    )
    d.script.call(
        "modify_pending_order_items",
        order_id=oid,
        item_ids=[i["item_id"] for i in items],
        new_item_ids=[n["item_id"] for n in news],
        payment_method_id=method["id"],
    )
    d.script.say(
        f"Done: order {oid} is updated, and the net difference of ${_money(difference)} is "
        f"{'charged to' if difference > 0 else 'refunded to'} {_method_text(method)}."
    )
    wishes = " and ".join(
        f"the {_item(i)} to the one with {_options(n['options'])}"
        for i, n in zip(items, news, strict=True)
    )
    return d.draft(
        "Hi, I need to change a couple of things in an order that hasn't shipped.",
        Request(
            f"Please change {wishes}. Settle any difference with {_method_user(method)}.",
            writes=1,
            confirm=(
                oid.lower(),
                *(v for i, n in zip(items, news, strict=True) for v in _changed(i, n)),
                _method_key(method),
            ),
            expects=(_money(difference),),
        ),
    )


def _modify_items_once(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    drawn = _two_changes(db, rng)
    if drawn is None:
        return None
    user, order, (item, later), (new, later_new) = drawn
    method = dict(user["payment_methods"][_original(order)])
    if not _covers(method, new["price"] - item["price"]):
        return None
    d = _Draw(db, rng, user)
    tool = "modify_pending_order_items"
    d.authenticate()
    d.ask_order(order, "you want to change")
    difference = _exchange_or_modify(d, order, item, new, method, tool)
    d.script.say(
        f"I'm sorry: the items of order {order['order_id']} have just been modified, and the "
        "items of an order can only be modified once, so I cannot change the "
        f"{later['name']} now."
    )
    return d.draft(
        "Hi, I'd like to change something in an order that hasn't shipped yet.",
        Request(
            f"Please change the {_item(item)} in my order to the one with "
            f"{_options(new['options'])}. Use the same payment method as the order.",
            writes=1,
            confirm=(order["order_id"].lower(), *_changed(item, new)),
            expects=(_money(difference),),
        ),
        Request(
            f"Oh, and could you also change the {_item(later)} in that order to the one with "
            f"{_options(later_new['options'])}?",
            expects=("modified once",),
        ),
    )


def _cancel_one_refuse_other(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    drawn = _two_orders(db, rng, ("pending",), ("processed", "delivered"))
    if drawn is None:
        return None
    user, pending, named, shipped, other = drawn
    d = _Draw(db, rng, user)
    reason = _pick(rng, REASONS)
    d.facts.append(Fact("reason for cancelling", reason, ("reason",)))
    d.authenticate()
    d.find_orders(pending)
    confirm, expects = _cancel(d, pending, reason)
    d.find_orders(shipped)
    d.script.say(
        f"I'm sorry: your order with the {other['name']} ({shipped['order_id']}) is already "
        f"{shipped['status']}, so it cannot be cancelled. Only pending orders can be cancelled."
    )
    return d.draft(
        "Hi, I want to cancel some orders.",
        Request(
            f"Please cancel my order with the {named['name']}; the reason: {reason}.",
            writes=1,
            confirm=confirm,
            expects=expects,
        ),
        Request(
            f"And please cancel my order with the {other['name']} too.",
            expects=("cannot be cancelled",),
        ),
    )


def _return_all_and_status(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    drawn = _two_orders(db, rng, ("delivered",), ("processed",))
    if drawn is None:
        return None
    user, delivered, named, processed, other = drawn
    if len(delivered["items"]) < 2:
        return None
    d = _Draw(db, rng, user, by_email=False)
    method = d.method(_original(delivered))
    d.authenticate()
    d.find_orders(delivered)
    total = _return(d, delivered, list(delivered["items"]), method)
    d.find_orders(processed)
    tracking = processed["fulfillments"][0]["tracking_id"][0]
    d.script.say(
        f"Your order with the {other['name']} ({processed['order_id']}) is processed: it has "
        f"shipped, and its tracking number is {tracking}."
    )
    return d.draft(
        "Hello, I want to send back an order, but I don't remember my account's email.",
        Request(
            f"I want to return everything in my order with the {named['name']}, refunded to "
            "what I paid with. How much will I get back?",
            writes=1,
            confirm=(delivered["order_id"].lower(), _money(total)),
            expects=(_money(total),),
        ),
        Request(
            f"Also, where is my order with the {other['name']}? I'd like its tracking number.",
            expects=(tracking,),
        ),
    )


def _exchange_and_reroute(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    drawn = _two_orders(db, rng, ("delivered",), ("pending",))
    if drawn is None:
        return None
    user, delivered, item, pending, named = drawn
    method = dict(user["payment_methods"][_original(delivered)])
    new = _choice(
        rng, [v for v in _alternatives(db, item) if _covers(method, v["price"] - item["price"])]
    )
    if new is None:
        return None
    d = _Draw(db, rng, user)
    address = _fresh_address(rng, pending["address"])
    d.authenticate()
    d.find_orders(delivered)
    difference = _exchange_or_modify(
        d, delivered, item, new, method, "exchange_delivered_order_items"
    )
    d.find_orders(pending)
    _reroute(d, pending, address)
    d.script.say(f"Done: order {pending['order_id']} will now ship to {_address_text(address)}.")
    return d.draft(
        "Hi, I need help with two of my orders.",
        Request(
            f"I want to exchange the {_item(item)} I received for the one with "
            f"{_options(new['options'])}. Use the same payment method as the order.",
            writes=1,
            confirm=(delivered["order_id"].lower(), *_changed(item, new)),
            expects=(_money(difference),),
        ),
        Request(
            f"And my order with the {named['name']} hasn't shipped yet: please send it to "
            f"{_address_text(address)} instead.",
            writes=1,
            confirm=(pending["order_id"].lower(), *_address_confirm(address)),
        ),
    )


TEMPLATES = (
    TaskTemplate("cancel_pending_order", "easy", _cancel_pending_order),
    TaskTemplate("order_status", "easy", _order_status),
    TaskTemplate("modify_order_address", "easy", _modify_order_address),
    TaskTemplate("modify_user_address", "easy", _modify_user_address),
    TaskTemplate("gift_card_balance", "easy", _gift_card_balance),
    TaskTemplate("return_one_item", "easy", _return_one_item),
    TaskTemplate("change_payment_method", "easy", _change_payment_method),
    TaskTemplate("cancel_by_name_zip", "medium", _cancel_by_name_zip),
    TaskTemplate("refuse_cancel_shipped", "medium", _refuse_cancel_shipped),
    TaskTemplate("refuse_return_undelivered", "medium", _refuse_return_undelivered),
    TaskTemplate("exchange_item", "medium", _exchange_item),
    TaskTemplate("modify_item_variant", "medium", _modify_item_variant),
    TaskTemplate("return_to_gift_card", "medium", _return_to_gift_card),
    TaskTemplate("product_price", "medium", _product_price),
    TaskTemplate("refuse_exchange_unavailable", "medium", _refuse_exchange_unavailable),
    TaskTemplate("cancel_change_of_mind", "medium", _cancel_change_of_mind),
    TaskTemplate("exchange_change_of_mind", "hard", _exchange_change_of_mind),
    TaskTemplate("cancel_and_return", "hard", _cancel_and_return),
    TaskTemplate("move_house", "hard", _move_house),
    TaskTemplate("modify_two_items", "hard", _modify_two_items),
    TaskTemplate("modify_items_once", "hard", _modify_items_once),
    TaskTemplate("cancel_one_refuse_other", "hard", _cancel_one_refuse_other),
    TaskTemplate("return_all_and_status", "hard", _return_all_and_status),
    TaskTemplate("exchange_and_reroute", "hard", _exchange_and_reroute),
)


class RetailDomain(Domain):
    """Northwind Goods' customer service; see the module docstring."""

    name = "retail"
    title = "a customer-service agent of Northwind Goods, an online shop"
    policy = POLICY
    auth_tools = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"})
    end_tools = frozenset({"transfer_to_human_agents"})
    vocabularies = (STATUSES,)

    def owner(self, db: DB, name: str, arguments: Mapping[str, Any], result: Any) -> str | None:
        if name in self.auth_tools:
            return str(result)
        if "order_id" in arguments:
            return str(_order(db, arguments["order_id"])["user_id"])
        return str(arguments["user_id"]) if "user_id" in arguments else None

    def build_db(self, seed: int) -> DB:
        rng = np.random.default_rng(seed)
        taken: set[str] = set()
        products = _build_products(rng, taken)
        users = _build_users(rng, taken)
        orders = _build_orders(rng, users, products, taken)
        return {"users": users, "products": products, "orders": orders}

    def agent_tools(self) -> list[Tool]:
        return list(TOOLS)

    def templates(self) -> list[TaskTemplate]:
        return list(TEMPLATES)
