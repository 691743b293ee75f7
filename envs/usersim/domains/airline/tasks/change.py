"""Airline templates: flight, cabin, passenger and baggage changes."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Fact,
    Request,
    TaskDraft,
)
from agentgym.envs.usersim.domains.airline.data_model import (
    BAG_FEE,
    DATES,
    DAY_AGO,
    FREE_BAGS,
    TODAY,
    _flown,
    _free_bags,
    _pick,
    _price,
    _round,
    _seats_left,
)
from agentgym.envs.usersim.domains.airline.tasks.cancel import (
    _not_cancellable,
    _refusal,
    _status_lookups,
    _why_not_cancellable,
)
from agentgym.envs.usersim.domains.airline.tasks.script import (
    RESERVATION_ASK,
    USER_ASK,
    _active_reservations,
    _cabin,
    _cancel_request,
    _card,
    _cheapest,
    _day,
    _describe,
    _dollars,
    _draft,
    _find,
    _full_name,
    _identify,
    _leg,
    _method_words,
    _money,
    _Script,
    _status,
    _trip,
    _unique_trip,
    _upcoming,
    _with_says,
)


def _change_flight(
    db: DB,
    rng: np.random.Generator,
    reservation: Mapping[str, Any],
    exclude: Sequence[str] = (),
) -> tuple[int, str, dict[str, Any], float] | None:
    """A new date for the reservation's last flight (the only one of a one-way trip, the
    return of a round trip): (index, date, cheapest flight, price difference)."""
    index = len(reservation["flights"]) - 1
    flight = reservation["flights"][index]
    earliest = reservation["flights"][0]["date"] if index else TODAY
    dates = [d for d in DATES if d > earliest and d != flight["date"] and d not in exclude]
    people, cabin = len(reservation["passengers"]), reservation["cabin"]
    for date in rng.permutation(dates):
        new = _cheapest(db, flight["origin"], flight["destination"], str(date), cabin, people)
        if new is None:
            continue
        difference = _round((_price(new["dates"][date], cabin) - flight["price"]) * people)
        if difference:
            return index, str(date), new, difference
    return None


def _change_request(
    db: DB,
    reservation: Mapping[str, Any],
    script: _Script,
    card: Mapping[str, Any],
    change: tuple[int, str, dict[str, Any], float],
    search: bool = True,
) -> tuple[str, ...]:
    """Search, propose, change, report; returns the proposal's confirm phrases."""
    index, date, new, difference = change
    rid, old = reservation["reservation_id"], reservation["flights"][index]
    if search:
        script.call(
            "search_direct_flight", origin=old["origin"], destination=old["destination"], date=date
        )
    direction = "charged to" if difference > 0 else "refunded to"
    script.propose(
        f"The cheapest direct flight in {_cabin(reservation['cabin'])} is "
        f"{_describe(new, date)}. Moving reservation {rid} to it changes the fare by "
        f"{_dollars(abs(difference))} for all passengers, {direction} your "
        f"{_method_words(card)}."
    )
    return rid.lower(), new["flight_number"].lower()


def _apply_change(
    reservation: Mapping[str, Any],
    script: _Script,
    card: Mapping[str, Any],
    change: tuple[int, str, dict[str, Any], float],
) -> str:
    index, date, new, difference = change
    flights = [_leg(f, f["date"]) for f in reservation["flights"]]
    flights[index] = _leg(new, date)
    script.call(
        "update_reservation_flights",
        reservation_id=reservation["reservation_id"],
        cabin=reservation["cabin"],
        flights=flights,
        payment_id=card["id"],
    )
    direction = "charged to" if difference > 0 else "refunded to"
    script.say(
        f"Done: reservation {reservation['reservation_id']} is now on flight "
        f"{new['flight_number']} on {date}, and {_dollars(abs(difference))} was {direction} "
        f"your {_method_words(card)}."
    )
    return _money(abs(difference))


def _change_says(reservation: Mapping[str, Any], date: str, card: Mapping[str, Any]) -> str:
    which = "the return flight of" if reservation["flight_type"] == "round_trip" else ""
    return (
        f"I need to move {which or 'the flight of'} {_trip(reservation)} to {_day(date)}. The "
        "cheapest direct flight that day in the same cabin is fine; use my "
        f"{_method_words(card)} for any difference."
    )


def _changeable(db: DB, r: Mapping[str, Any]) -> bool:
    return r["cabin"] != "basic_economy" and _upcoming(db, r)


def change_date(db: DB, rng: np.random.Generator, mind: bool = False) -> TaskDraft | None:
    found = _active_reservations(db, lambda r: _changeable(db, r))
    reservation = _pick(rng, found)
    user = db["users"][reservation["user_id"]]
    card = _card(rng, user)
    change = _change_flight(db, rng, reservation)
    if change is None:
        return None
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    confirm = _change_request(db, reservation, script, card, change)
    says = _change_says(reservation, change[1], card)
    if not mind:
        expects = _apply_change(reservation, script, card, change)
        request = Request(says, writes=1, confirm=confirm, expects=(expects,))
        return _draft(rng, user, f"Hi! {says}", facts, [request], script)
    second = _change_flight(db, rng, reservation, exclude=[change[1]])
    if second is None:
        return None
    then_confirm = _change_request(db, reservation, script, card, second)
    expects = _apply_change(reservation, script, card, second)
    request = Request(
        says,
        writes=1,
        confirm=confirm,
        expects=(expects,),
        change=f"Hmm, actually, could you move it to {_day(second[1])} instead?",
        then_confirm=then_confirm,
    )
    return _draft(rng, user, f"Hi! {says}", facts, [request], script)


def change_date_change_of_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return change_date(db, rng, mind=True)


def _upgrade(
    db: DB, reservation: Mapping[str, Any], script: _Script, card: Mapping[str, Any]
) -> Request:
    rid, people = reservation["reservation_id"], len(reservation["passengers"])
    prices = [
        _price(db["flights"][f["flight_number"]]["dates"][f["date"]], "business")
        for f in reservation["flights"]
    ]
    difference = _round((sum(prices) - sum(f["price"] for f in reservation["flights"])) * people)
    for flight in reservation["flights"]:
        script.call(
            "search_direct_flight",
            origin=flight["origin"],
            destination=flight["destination"],
            date=flight["date"],
        )
    script.propose(
        f"Upgrading reservation {rid} to business class on the same flights costs "
        f"{_dollars(difference)} more for all {people} passenger(s), charged to your "
        f"{_method_words(card)}."
    )
    script.call(
        "update_reservation_flights",
        reservation_id=rid,
        cabin="business",
        flights=[_leg(f, f["date"]) for f in reservation["flights"]],
        payment_id=card["id"],
    )
    script.say(
        f"Done: reservation {rid} is now in business class, and {_dollars(difference)} was "
        f"charged to your {_method_words(card)}."
    )
    says = (
        f"I'd like to upgrade {_trip(reservation)} to business class, same flights. Put the "
        f"difference on my {_method_words(card)}."
    )
    return Request(says, writes=1, confirm=(rid.lower(), "business"), expects=(_money(difference),))


def _upgradable(db: DB, r: Mapping[str, Any]) -> bool:
    people = len(r["passengers"])
    return (
        r["cabin"] == "economy"
        and _upcoming(db, r)
        and all(
            _status(db, f) == "available"
            and _seats_left(db["flights"][f["flight_number"]]["dates"][f["date"]], "business")
            >= people
            for f in r["flights"]
        )
    )


def upgrade_business(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    reservation = _pick(rng, _active_reservations(db, lambda r: _upgradable(db, r)))
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    request = _upgrade(db, reservation, script, _card(rng, user))
    return _draft(rng, user, f"Hi. {request.says}", facts, [request], script)


def refuse_basic_economy_change(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    date = _pick(rng, [d for d in DATES if d > "2026-05-17"])
    return _refusal(
        db,
        rng,
        lambda r: (
            r["cabin"] == "basic_economy" and _upcoming(db, r) and r["flights"][-1]["date"] != date
        ),
        lambda r: f"I need to move {_trip(r)} to {_day(date)}, please.",
        lambda r: (
            f"reservation {r['reservation_id']} is in basic economy, and basic economy "
            "flights cannot be changed, so this change is not eligible"
        ),
        expects=("not eligible", "basic economy"),
    )


def _fix_passenger(
    reservation: Mapping[str, Any], script: _Script, rng: np.random.Generator
) -> Request:
    rid, people = reservation["reservation_id"], [dict(p) for p in reservation["passengers"]]
    person = people[int(rng.integers(len(people)))]
    old = datetime.date.fromisoformat(person["dob"])
    new = (old + datetime.timedelta(days=int(rng.integers(1, 400)))).isoformat()
    person["dob"] = new
    name = _full_name(person)
    script.propose(
        f"I will change the date of birth of {name} on reservation {rid} to {new}, keeping the "
        "other passenger details as they are."
    )
    script.call("update_reservation_passengers", reservation_id=rid, passengers=people)
    script.say(f"Done: {name}'s date of birth on reservation {rid} is now {new}.")
    says = (
        f"The date of birth of {name} on {_trip(reservation)} is wrong: it should be {new} "
        "(year-month-day)."
    )
    return Request(says, writes=1, confirm=(rid.lower(), new))


def fix_passenger(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    reservation = _pick(rng, _active_reservations(db, lambda r: _upcoming(db, r)))
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    request = _fix_passenger(reservation, script, rng)
    return _draft(rng, user, f"Hello. {request.says}", facts, [request], script)


def fix_passenger_and_upgrade(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    reservation = _pick(rng, _active_reservations(db, lambda r: _upgradable(db, r)))
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    fix = _fix_passenger(reservation, script, rng)
    upgraded = _upgrade(db, reservation, script, _card(rng, user))
    opening = f"Hello. I have two things to sort out. First: {fix.says}"
    return _draft(rng, user, opening, facts, [fix, upgraded], script)


def _add_bags(
    db: DB, reservation: Mapping[str, Any], script: _Script, card: Mapping[str, Any], bags: int
) -> Request:
    rid, people = reservation["reservation_id"], len(reservation["passengers"])
    membership = db["users"][reservation["user_id"]]["membership"]
    free = _free_bags(membership, reservation["cabin"], people)
    total = reservation["total_baggages"] + bags
    nonfree = max(reservation["nonfree_baggages"], total - free)
    fee = _round((nonfree - reservation["nonfree_baggages"]) * BAG_FEE)
    script.propose(
        f"With {bags} more, reservation {rid} will have {total} checked bags. As a {membership} "
        f"member in {_cabin(reservation['cabin'])}, each of the {people} passenger(s) gets "
        f"{FREE_BAGS[membership][reservation['cabin']]} free bag(s), so {nonfree} bag(s) are "
        f"paid and the fee is {_dollars(fee)}, charged to your {_method_words(card)}."
    )
    script.call(
        "update_reservation_baggages",
        reservation_id=rid,
        total_baggages=total,
        nonfree_baggages=nonfree,
        payment_id=card["id"],
    )
    script.say(
        f"Done: reservation {rid} now has {total} checked bags, and the fee of {_dollars(fee)} "
        f"was charged to your {_method_words(card)}."
    )
    says = (
        f"I'd like to add {bags} checked bag{'s' if bags > 1 else ''} to {_trip(reservation)}. "
        f"Put any fee on my {_method_words(card)}."
    )
    return Request(says, writes=1, confirm=(rid.lower(), "bag"), expects=(_money(fee),))


def _bag_fee(db: DB, reservation: Mapping[str, Any], bags: int) -> float:
    membership = db["users"][reservation["user_id"]]["membership"]
    free = _free_bags(membership, reservation["cabin"], len(reservation["passengers"]))
    total = reservation["total_baggages"] + bags
    return float(max(0, total - free - reservation["nonfree_baggages"]) * BAG_FEE)


def add_bags(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    bags = int(rng.integers(1, 4))
    found = _active_reservations(db, lambda r: _upcoming(db, r) and _bag_fee(db, r, bags) > 0)
    reservation = _pick(rng, found)
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    request = _add_bags(db, reservation, script, _card(rng, user), bags)
    return _draft(rng, user, f"Hi. {request.says}", facts, [request], script)


def cancel_and_add_bags(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    bags = int(rng.integers(1, 3))
    recent = _active_reservations(
        db, lambda r: r["created_at"] >= DAY_AGO and not _flown(db, r) and _unique_trip(db, r)
    )
    pairs = [
        (first, db["reservations"][rid])
        for first in recent
        for rid in db["users"][first["user_id"]]["reservations"]
        if rid != first["reservation_id"]
        and db["reservations"][rid]["status"] == "active"
        and _upcoming(db, db["reservations"][rid])
        and _unique_trip(db, db["reservations"][rid])
        and _bag_fee(db, db["reservations"][rid], bags) > 0
    ]
    if not pairs:
        return None
    first, second = _pick(rng, pairs)
    user = db["users"][first["user_id"]]
    script = _Script()
    script.say("I can help with both. Could you tell me your user id?")
    script.call("get_user_details", user_id=user["user_id"])
    _find(script, user, first["reservation_id"])
    cancel, _ = _cancel_request(
        db, first, script, f"It was booked at {first['created_at']} EST, within the last 24 hours"
    )
    cancel_says = f"First, please cancel {_trip(first)}; I booked it in the last day by mistake."
    script.call("get_reservation_details", reservation_id=second["reservation_id"])
    bag = _add_bags(db, second, script, _card(rng, user), bags)
    facts = [
        Fact("user id", user["user_id"], USER_ASK),
        Fact("reservation ids", "", RESERVATION_ASK, known=False),
    ]
    opening = "Hi, I need to cancel one trip and add bags to another."
    return _draft(rng, user, opening, facts, [_with_says(cancel, cancel_says), bag], script)


def refused_cancellation_then_change(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    def follow(
        db: DB, rng: np.random.Generator, reservation: dict[str, Any], script: _Script
    ) -> Request | None:
        user = db["users"][reservation["user_id"]]
        card = _card(rng, user)
        change = _change_flight(db, rng, reservation)
        if change is None:
            return None
        confirm = _change_request(db, reservation, script, card, change)
        expects = _apply_change(reservation, script, card, change)
        says = "Then, instead of cancelling: " + _change_says(reservation, change[1], card)
        return Request(says, writes=1, confirm=confirm, expects=(expects,))

    return _refusal(
        db,
        rng,
        lambda r: _not_cancellable(db, r) and _changeable(db, r),
        lambda r: f"I want to cancel {_trip(r)}; my plans changed.",
        _why_not_cancellable,
        lookups=_status_lookups,
        follow=follow,
    )
