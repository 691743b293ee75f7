"""The retail agent's tools: authentication, reads, changes to pending orders, returns and
exchanges of delivered ones, and the transfer to a human agent.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable
from typing import Any

from agentgym.envs.usersim.domain import (
    DB,
    Tool,
    ToolError,
)
from agentgym.envs.usersim.domains.retail.data_model import (
    PENDING,
    REASONS,
    Record,
    _method,
    _new_address,
    _options,
    _order,
    _user,
    _variant,
)


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
