"""What the airline templates share: the user's words and persona, the oracle's script, and
the reservations a template draws from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
from agentgym.envs.usersim.domains.airline.data_model import (
    AIRPORTS,
    DATES,
    TODAY,
    _flown,
    _paid,
    _pick,
    _price,
    _seats_left,
)
from agentgym.envs.usersim.domains.airline.tools import _departures

TRAITS = (
    "a busy nurse",
    "a retired teacher",
    "a software engineer who travels for work",
    "a graduate student",
    "a small-business owner",
    "a parent who plans the family trips",
    "a freelance photographer",
    "a sales manager",
)


MANNERS = (
    "polite but brief",
    "friendly and chatty",
    "a little impatient",
    "calm and precise",
    "slightly anxious",
)


USER_ASK = ("user id",)
RESERVATION_ASK = ("reservation id", "reservation number")
CONFIRM = " Please confirm (yes) that I should proceed."
ILLNESSES = (
    "I broke my leg and my doctor says I cannot fly",
    "I have pneumonia and my doctor told me not to travel",
    "my daughter, who is travelling with me, has been hospitalised",
)


OTHER_REASONS = (
    "my work conference was moved to another week",
    "I found a cheaper fare with another airline",
    "my friend cancelled the holiday we had planned",
)


class _Script:
    """The oracle's moves, built in order."""

    def __init__(self) -> None:
        self.moves: list[Move] = []

    def say(self, text: str) -> None:
        self.moves.append(Move(say=text))

    def propose(self, text: str) -> None:
        self.moves.append(Move(say=text + CONFIRM))

    def call(self, name: str, **arguments: Any) -> None:
        self.moves.append(Move(call=name, arguments=arguments))


def _dollars(amount: float) -> str:
    return f"${amount:.2f}"


def _money(amount: float) -> str:
    """An amount as a required output: ``"250"`` (said as $250.00) or ``"123.45"``."""
    return f"{amount:.2f}".removesuffix(".00")


def _day(date: str) -> str:
    return f"May {int(date[8:])}"


def _city(code: str) -> str:
    return AIRPORTS[code][0]


def _cabin(cabin: str) -> str:
    return cabin.replace("_", " ")


def _full_name(person: Mapping[str, str]) -> str:
    return f"{person['first_name']} {person['last_name']}"


def _method_words(method: Mapping[str, Any]) -> str:
    if method["source"] == "credit_card":
        brand = {"visa": "Visa card", "mastercard": "Mastercard", "amex": "Amex card"}
        return f"{brand[method['brand']]} ending in {method['last_four']}"
    kind = "travel certificate" if method["source"] == "certificate" else "gift card"
    return f"{kind} ending in {method['id'][-4:]}"


def _trip(reservation: Mapping[str, Any]) -> str:
    origin, destination = _city(reservation["origin"]), _city(reservation["destination"])
    dates = [flight["date"] for flight in reservation["flights"]]
    if reservation["flight_type"] == "round_trip":
        return (
            f"my round trip from {origin} to {destination}, leaving {_day(dates[0])} and "
            f"returning {_day(dates[-1])}"
        )
    return f"my trip from {origin} to {destination} on {_day(dates[0])}"


def _persona(rng: np.random.Generator, user: Mapping[str, Any]) -> str:
    return (
        f"You are {_full_name(user['name'])}, {_pick(rng, TRAITS)}; you are {_pick(rng, MANNERS)}."
    )


def _card(rng: np.random.Generator, user: Mapping[str, Any]) -> dict[str, Any]:
    cards = [m for m in user["payment_methods"].values() if m["source"] == "credit_card"]
    return dict(_pick(rng, cards))


def _status(db: DB, flight: Mapping[str, Any]) -> str:
    return str(db["flights"][flight["flight_number"]]["dates"][flight["date"]]["status"])


def _active_reservations(db: DB, test: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    return [r for r in db["reservations"].values() if r["status"] == "active" and test(r)]


def _upcoming(db: DB, reservation: Mapping[str, Any]) -> bool:
    """Every flight is after today and none is cancelled: the trip can still be changed."""
    return all(f["date"] > TODAY and _status(db, f) != "cancelled" for f in reservation["flights"])


def _airline_cancelled(db: DB, reservation: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [f for f in reservation["flights"] if _status(db, f) == "cancelled"]


def _eligible_compensation(db: DB, reservation: Mapping[str, Any]) -> str | None:
    """Why the reservation's user may be compensated (a clause), or None."""
    membership = db["users"][reservation["user_id"]]["membership"]
    if membership != "regular":
        return f"you are a {membership} member"
    if reservation["insurance"] == "yes":
        return "your reservation has travel insurance"
    if reservation["cabin"] == "business":
        return "your reservation is in business class"
    return None


def _unique_trip(db: DB, reservation: Mapping[str, Any]) -> bool:
    """No other reservation of the user has the same route and first date."""
    key = (reservation["origin"], reservation["destination"], reservation["flights"][0]["date"])
    user = db["users"][reservation["user_id"]]
    same = [
        rid
        for rid in user["reservations"]
        if (
            db["reservations"][rid]["origin"],
            db["reservations"][rid]["destination"],
            db["reservations"][rid]["flights"][0]["date"],
        )
        == key
    ]
    return same == [reservation["reservation_id"]]


def _identify(
    script: _Script,
    db: DB,
    rng: np.random.Generator,
    user: Mapping[str, Any],
    reservation: Mapping[str, Any] | None = None,
) -> list[Fact]:
    """Ask for the user id (and the reservation id), authenticate, look the reservation up.

    A user who does not know the reservation id describes the trip; the agent then looks
    through the user's reservations."""
    facts = [Fact("user id", user["user_id"], USER_ASK)]
    if reservation is None:
        script.say("I can help with that. Could you tell me your user id?")
        script.call("get_user_details", user_id=user["user_id"])
        return facts
    rid = reservation["reservation_id"]
    known = not _unique_trip(db, reservation) or rng.random() < 0.6
    facts.append(Fact("reservation id", rid, RESERVATION_ASK, known))
    script.say("I can help with that. Could you tell me your user id and the reservation id?")
    script.call("get_user_details", user_id=user["user_id"])
    if known:
        script.call("get_reservation_details", reservation_id=rid)
    else:
        _find(script, user, rid)
    return facts


def _find(script: _Script, user: Mapping[str, Any], rid: str) -> None:
    """Look through the user's reservations up to ``rid`` (at most the two before it)."""
    place = user["reservations"].index(rid)
    for other in user["reservations"][max(0, place - 2) : place + 1]:
        script.call("get_reservation_details", reservation_id=other)


def _draft(
    rng: np.random.Generator,
    user: Mapping[str, Any],
    opening: str,
    facts: Sequence[Fact],
    requests: Sequence[Request],
    script: _Script,
    refuses: Sequence[str] = (),
) -> TaskDraft:
    scenario = Scenario(_persona(rng, user), opening, tuple(facts), tuple(requests), tuple(refuses))
    return TaskDraft(scenario, tuple(script.moves))


def _cheapest(
    db: DB, origin: str, destination: str, date: str, cabin: str, passengers: int
) -> dict[str, Any] | None:
    """The one cheapest direct flight with seats in ``cabin`` (None if none, or a tie)."""
    rows = [
        f
        for f in _departures(db, origin, date)
        if f["destination"] == destination and _seats_left(f["dates"][date], cabin) >= passengers
    ]
    if not rows:
        return None
    rows.sort(key=lambda f: _price(f["dates"][date], cabin))
    prices = [_price(f["dates"][date], cabin) for f in rows]
    return rows[0] if len(prices) == 1 or prices[0] < prices[1] else None


def _leg(flight: Mapping[str, Any], date: str) -> dict[str, str]:
    return {"flight_number": flight["flight_number"], "date": date}


def _describe(flight: Mapping[str, Any], date: str) -> str:
    return (
        f"flight {flight['flight_number']} on {date}, leaving {flight['origin']} at "
        f"{flight['scheduled_departure_time_est'][:5]} and landing in {flight['destination']} "
        f"at {flight['scheduled_arrival_time_est'][:5]}"
    )


def _random_route(db: DB, rng: np.random.Generator) -> tuple[str, str, str]:
    flight = db["flights"][_pick(rng, sorted(db["flights"]))]
    date = _pick(rng, [d for d in DATES if d > TODAY])
    return flight["origin"], flight["destination"], date


def _me(user: Mapping[str, Any]) -> dict[str, str]:
    return {**user["name"], "dob": user["dob"]}


def _cancel_request(
    db: DB, reservation: Mapping[str, Any], script: _Script, why: str
) -> tuple[Request, float]:
    """Propose the cancellation (``why`` it is allowed), cancel, report the refund."""
    rid, refund = reservation["reservation_id"], _paid(reservation)
    script.propose(
        f"{why}, so reservation {rid} can be cancelled with a full refund of {_dollars(refund)} "
        "to the original payment method."
    )
    script.call("cancel_reservation", reservation_id=rid)
    script.say(
        f"Reservation {rid} is cancelled. The refund of {_dollars(refund)} will reach the "
        "original payment method within 5 to 7 business days."
    )
    return Request("", writes=1, confirm=(rid.lower(), "cancel"), expects=(_money(refund),)), refund


def _with_says(request: Request, says: str) -> Request:
    return Request(
        says,
        request.writes,
        request.confirm,
        request.expects,
        request.change,
        request.then_confirm,
    )


def _draw_cancel(
    db: DB,
    rng: np.random.Generator,
    test: Callable[[dict[str, Any]], bool],
    says: Callable[[dict[str, Any]], str],
    why: Callable[[dict[str, Any]], str],
    check_status: bool = False,
) -> TaskDraft | None:
    found = _active_reservations(db, lambda r: not _flown(db, r) and test(r))
    if not found:
        return None
    reservation = _pick(rng, found)
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    if check_status:
        for flight in reservation["flights"]:
            script.call(
                "get_flight_status", flight_number=flight["flight_number"], date=flight["date"]
            )
    request, _ = _cancel_request(db, reservation, script, why(reservation))
    text = says(reservation)
    return _draft(rng, user, f"Hi. {text}", facts, [_with_says(request, text)], script)
