"""Retail templates with a change of mind or several requests; in the hard ones the user
does not know their order ids, and the agent finds the orders from the items described.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Fact,
    Request,
    TaskDraft,
)
from agentgym.envs.usersim.domains.retail.data_model import REASONS, Record, _options, _pick
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
    _describes,
    _difference_text,
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
from agentgym.envs.usersim.domains.retail.tasks.simple import _one_change


def cancel_change_of_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def exchange_change_of_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def cancel_and_return(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def move_house(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def modify_two_items(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def modify_items_once(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def cancel_one_refuse_other(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def return_all_and_status(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def exchange_and_reroute(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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
