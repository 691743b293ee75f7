"""Airline templates: new bookings (one way, round trip, one stop; bags, insurance,
certificates).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Request,
    TaskDraft,
)
from agentgym.envs.usersim.domains.airline.data_model import (
    AIRPORTS,
    BAG_FEE,
    CABINS,
    DATES,
    INSURANCE_FEE,
    _free_bags,
    _pick,
    _price,
    _round,
)
from agentgym.envs.usersim.domains.airline.tasks.script import (
    _cabin,
    _card,
    _cheapest,
    _city,
    _day,
    _describe,
    _dollars,
    _draft,
    _full_name,
    _identify,
    _leg,
    _me,
    _method_words,
    _money,
    _random_route,
    _Script,
)
from agentgym.envs.usersim.domains.airline.tools import _connections, search_direct_flight


def _book(
    db: DB,
    script: _Script,
    user: Mapping[str, Any],
    legs: Sequence[tuple[Mapping[str, Any], str]],
    cabin: str,
    people: Sequence[Mapping[str, str]],
    bags: int,
    insurance: str,
    payments: Sequence[tuple[Mapping[str, Any], float | None]],
    round_trip: bool = False,
) -> tuple[float, list[float]]:
    """Propose the booking, book it, report the total; returns the total and the payments
    (a ``None`` amount pays the rest)."""
    price = sum(_price(flight["dates"][date], cabin) for flight, date in legs)
    nonfree = max(0, bags - _free_bags(user["membership"], cabin, len(people)))
    insured = INSURANCE_FEE * len(people) if insurance == "yes" else 0.0
    total = _round(price * len(people) + insured + BAG_FEE * nonfree)
    fixed = sum(amount for _, amount in payments if amount is not None)
    amounts = [_round(total - fixed) if a is None else a for _, a in payments]
    paid = " and ".join(
        f"{_dollars(amount)} with your {_method_words(method)}"
        for (method, _), amount in zip(payments, amounts, strict=True)
    )
    bag_text = f"{bags} checked bag(s), {nonfree} of them paid" if bags else "no checked bags"
    script.propose(
        f"I would book a {'round trip' if round_trip else 'one-way trip'} in {_cabin(cabin)} "
        f"for {', '.join(_full_name(p) for p in people)} on "
        f"{'; then '.join(_describe(f, d) for f, d in legs)}. With {bag_text} and "
        f"{'travel insurance' if insurance == 'yes' else 'no travel insurance'}, the total is "
        f"{_dollars(total)}, paid {paid}."
    )
    script.call(
        "book_reservation",
        user_id=user["user_id"],
        origin=legs[0][0]["origin"],
        destination=legs[0][0]["destination"] if round_trip else legs[-1][0]["destination"],
        flight_type="round_trip" if round_trip else "one_way",
        cabin=cabin,
        flights=[_leg(f, d) for f, d in legs],
        passengers=[dict(p) for p in people],
        payment_methods=[
            {"payment_id": method["id"], "amount": amount}
            for (method, _), amount in zip(payments, amounts, strict=True)
        ],
        total_baggages=bags,
        nonfree_baggages=nonfree,
        insurance=insurance,
    )
    script.say(f"You're booked! The total of {_dollars(total)} was paid {paid}.")
    return total, amounts


def _travellers(
    rng: np.random.Generator, user: Mapping[str, Any], count: int
) -> tuple[list[dict[str, str]], str]:
    """The user and up to ``count - 1`` saved passengers, and how the user names them."""
    others = [dict(p) for p in user["saved_passengers"][: count - 1]]
    names = " and ".join(_full_name(p) for p in others)
    who = f"me and {names} (saved in my profile)" if others else "just me"
    return [_me(user), *others], who


def _booking_says(
    origin: str,
    destination: str,
    dates: Sequence[str],
    cabin: str,
    who: str,
    bags: int,
    insurance: str,
    paying: str,
    cheapest: str = "on the cheapest direct flight",
) -> str:
    trip = (
        f"a round trip from {_city(origin)} to {_city(destination)}, leaving {_day(dates[0])} "
        f"and returning {_day(dates[1])}"
        if len(dates) == 2
        else f"a one-way trip from {_city(origin)} to {_city(destination)} on {_day(dates[0])}"
    )
    return (
        f"I'd like to book {trip} in {_cabin(cabin)} for {who}, {cheapest}. "
        + (f"We'll check {bags} bag(s) in all. " if bags else "No checked bags. ")
        + ("I want travel insurance. " if insurance == "yes" else "No travel insurance. ")
        + f"Please pay {paying}."
    )


def _one_way(
    db: DB, rng: np.random.Generator, cabins: Sequence[str], people: int
) -> tuple[str, str, str, list[dict[str, Any]]] | None:
    """A route and date with one cheapest direct flight in each of ``cabins``."""
    for _ in range(30):
        origin, destination, date = _random_route(db, rng)
        found = [_cheapest(db, origin, destination, date, c, people) for c in cabins]
        if all(found):
            return origin, destination, date, [f for f in found if f is not None]
    return None


def _search(script: _Script, origin: str, destination: str, date: str, stops: bool = False) -> None:
    name = "search_onestop_flight" if stops else "search_direct_flight"
    script.call(name, origin=origin, destination=destination, date=date)


def book_one_way(
    db: DB, rng: np.random.Generator, extras: bool = False, mind: bool = False
) -> TaskDraft | None:
    user = _pick(rng, list(db["users"].values()))
    count = int(rng.integers(1, 3)) if extras or mind else 1
    people, who = _travellers(rng, user, count)
    cabin = _pick(rng, CABINS) if extras else "economy"
    cabins = [cabin, "business"] if mind else [cabin]
    drawn = _one_way(db, rng, cabins, len(people))
    if drawn is None:
        return None
    origin, destination, date, flights = drawn
    bags = int(rng.integers(1, 4)) if extras else 0
    insurance = "yes" if extras else "no"
    card = _card(rng, user)
    script = _Script()
    facts = _identify(script, db, rng, user)
    script.call("list_all_airports")
    _search(script, origin, destination, date)
    says = _booking_says(
        origin, destination, [date], cabin, who, bags, insurance, f"with my {_method_words(card)}"
    )
    if mind:
        script.propose(
            f"The cheapest direct flight in economy is {_describe(flights[0], date)}, at "
            f"{_dollars(_price(flights[0]['dates'][date], 'economy'))} per passenger."
        )
        flights = flights[1:]
        cabin = "business"
    total, _ = _book(
        db, script, user, [(flights[0], date)], cabin, people, bags, insurance, [(card, None)]
    )
    request = Request(
        says,
        writes=1,
        confirm=(flights[0]["flight_number"].lower(), _cabin(cabin))
        if not mind
        else (str(drawn[3][0]["flight_number"]).lower(), "economy"),
        expects=(_money(total),),
    )
    if mind:
        request = Request(
            says,
            writes=1,
            confirm=request.confirm,
            expects=request.expects,
            change="Actually, make it business class instead, on the cheapest direct business "
            "flight that day.",
            then_confirm=(flights[0]["flight_number"].lower(), "business"),
        )
    return _draft(rng, user, f"Hi! {says}", facts, [request], script)


def book_bags_insurance(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return book_one_way(db, rng, extras=True)


def book_change_of_mind_cabin(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return book_one_way(db, rng, mind=True)


def book_round_trip(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    user = _pick(rng, [u for u in db["users"].values() if u["saved_passengers"]])
    people, who = _travellers(rng, user, 2)
    cabin = _pick(rng, ["economy", "business"])
    drawn = _one_way(db, rng, [cabin], len(people))
    if drawn is None:
        return None
    origin, destination, date, (out,) = drawn
    back_date = DATES[min(DATES.index(date) + int(rng.integers(2, 6)), len(DATES) - 1)]
    back = _cheapest(db, destination, origin, back_date, cabin, len(people))
    if back is None or back_date == date:
        return None
    card = _card(rng, user)
    script = _Script()
    facts = _identify(script, db, rng, user)
    script.call("list_all_airports")
    _search(script, origin, destination, date)
    _search(script, destination, origin, back_date)
    legs = [(out, date), (back, back_date)]
    total, _ = _book(
        db, script, user, legs, cabin, people, 0, "no", [(card, None)], round_trip=True
    )
    says = _booking_says(
        origin,
        destination,
        [date, back_date],
        cabin,
        who,
        0,
        "no",
        f"with my {_method_words(card)}",
        "on the cheapest direct flight each way",
    )
    confirm = (out["flight_number"].lower(), back["flight_number"].lower())
    request = Request(says, writes=1, confirm=confirm, expects=(_money(total),))
    return _draft(rng, user, f"Hi! {says}", facts, [request], script)


def book_certificate_and_card(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    holders = [
        u
        for u in db["users"].values()
        if any(m["source"] == "certificate" for m in u["payment_methods"].values())
    ]
    user = _pick(rng, holders)
    certificate = next(m for m in user["payment_methods"].values() if m["source"] == "certificate")
    cabin = _pick(rng, ["economy", "business"])
    drawn = _one_way(db, rng, [cabin], 1)
    if drawn is None:
        return None
    origin, destination, date, (flight,) = drawn
    if _price(flight["dates"][date], cabin) <= certificate["amount"]:
        return None
    card = _card(rng, user)
    script = _Script()
    facts = _identify(script, db, rng, user)
    script.call("list_all_airports")
    _search(script, origin, destination, date)
    payments = [(certificate, certificate["amount"]), (card, None)]
    total, amounts = _book(
        db, script, user, [(flight, date)], cabin, [_me(user)], 0, "no", payments
    )
    says = _booking_says(
        origin,
        destination,
        [date],
        cabin,
        "just me",
        0,
        "no",
        f"with my travel certificate first and the rest with my {_method_words(card)}",
    )
    confirm = (flight["flight_number"].lower(), "certificate")
    request = Request(says, writes=1, confirm=confirm, expects=(_money(total), _money(amounts[1])))
    return _draft(rng, user, f"Hi! {says}", facts, [request], script)


def book_onestop(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    user = _pick(rng, list(db["users"].values()))
    for _ in range(40):
        origin, destination, date = _random_route(db, rng)
        destination = _pick(rng, [c for c in sorted(AIRPORTS) if c != origin])
        if search_direct_flight(db, origin, destination, date):
            continue
        pairs = [
            (pair, sum(leg["prices"]["economy"] for leg in pair))
            for pair in _connections(db, origin, destination, date)
            if all(leg["available_seats"]["economy"] >= 1 for leg in pair)
        ]
        pairs.sort(key=lambda item: item[1])
        if pairs and (len(pairs) == 1 or pairs[0][1] < pairs[1][1]):
            break
    else:
        return None
    legs = [(db["flights"][leg["flight_number"]], date) for leg in pairs[0][0]]
    card = _card(rng, user)
    script = _Script()
    facts = _identify(script, db, rng, user)
    script.call("list_all_airports")
    _search(script, origin, destination, date)
    _search(script, origin, destination, date, stops=True)
    total, _ = _book(db, script, user, legs, "economy", [_me(user)], 0, "no", [(card, None)])
    says = _booking_says(
        origin,
        destination,
        [date],
        "economy",
        "just me",
        0,
        "no",
        f"with my {_method_words(card)}",
        "on the cheapest option; a connection is fine",
    )
    confirm = tuple(leg["flight_number"].lower() for leg in pairs[0][0])
    request = Request(says, writes=1, confirm=confirm, expects=(_money(total),))
    return _draft(rng, user, f"Hi! {says}", facts, [request], script)
