"""What the retail templates share: the user's words and persona, the oracle's script
(:class:`_Draw`), and the orders a template draws from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Fact,
    Move,
    Request,
    Scenario,
    TaskDraft,
)
from agentgym.envs.usersim.domains.retail.data_model import (
    ADDRESS,
    Record,
    T,
    _address,
    _options,
    _pick,
    _total,
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


ORDER_ASK = ("order id", "order number")
CONFIRM = "Please confirm (yes) that I should proceed."


def _money(amount: float) -> str:
    return f"{abs(amount):.2f}"


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
