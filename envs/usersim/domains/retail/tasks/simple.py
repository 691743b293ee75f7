"""Retail templates with one request, on an order whose id the user knows."""

from __future__ import annotations

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Fact,
    Request,
    TaskDraft,
)
from agentgym.envs.usersim.domains.retail.data_model import REASONS, Record, _options, _pick, _total
from agentgym.envs.usersim.domains.retail.tasks.script import (
    CONFIRM,
    _address_arguments,
    _address_confirm,
    _address_text,
    _alternatives,
    _cancel,
    _changed,
    _choice,
    _covers,
    _Draw,
    _exchange_or_modify,
    _fresh_address,
    _item,
    _method_key,
    _method_text,
    _method_user,
    _money,
    _orders,
    _original,
    _reroute,
    _return,
    _user_of,
)


def cancel_pending_order(db: DB, rng: np.random.Generator, by_email: bool = True) -> TaskDraft:
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


def order_status(db: DB, rng: np.random.Generator) -> TaskDraft:
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


def modify_order_address(db: DB, rng: np.random.Generator) -> TaskDraft:
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


def modify_user_address(db: DB, rng: np.random.Generator) -> TaskDraft:
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


def gift_card_balance(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def return_one_item(db: DB, rng: np.random.Generator) -> TaskDraft:
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


def change_payment_method(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def cancel_by_name_zip(db: DB, rng: np.random.Generator) -> TaskDraft:
    return cancel_pending_order(db, rng, by_email=False)


def refuse_cancel_shipped(db: DB, rng: np.random.Generator) -> TaskDraft:
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


def refuse_return_undelivered(db: DB, rng: np.random.Generator) -> TaskDraft:
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


def exchange_item(db: DB, rng: np.random.Generator, status: str = "delivered") -> TaskDraft | None:
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


def modify_item_variant(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return exchange_item(db, rng, status="pending")


def return_to_gift_card(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def product_price(db: DB, rng: np.random.Generator) -> TaskDraft:
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


def refuse_exchange_unavailable(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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
