"""The airline domain: bookings, flight changes, cancellations, baggage and compensation.

A tau-bench-style airline ("Horizon Air Travel", flight numbers ``HAT123``) with our own
generated data. "Now" is fixed at **2026-05-15 15:00 EST** (:data:`NOW`), so every task is
deterministic; flights run from 2026-05-10 to 2026-05-30 (:data:`DATES`).

**Tables** (built by :meth:`AirlineDomain.build_db` from a seed; money is a float of dollars
rounded to cents):

* ``airports`` (12): ``{"code": "JFK", "city": "New York"}``;
* ``users`` (150), keyed by user id (``"omar_hassan_7362"``): name, email, date of birth,
  ``membership`` (``regular``, ``silver`` or ``gold``), ``payment_methods`` by id (credit cards
  with brand and last four digits, gift cards with a ``balance``, travel certificates with an
  ``amount``, used once), ``saved_passengers`` and the ids of their ``reservations``;
* ``flights`` (~160 flight numbers), keyed by flight number: route, scheduled times (EST) and,
  for each date, a ``status`` (``available``, ``delayed``, ``cancelled`` by the airline, or
  ``landed``), the ``seats`` left and the ``prices``, as lists in cabin order
  (``basic_economy``, ``economy``, ``business``: :data:`CABINS`);
* ``reservations`` (400), keyed by a six-character id (``"Q4ZK7M"``): user, origin,
  destination, ``flight_type`` (``one_way`` or ``round_trip``), cabin, flights (number, date,
  price paid), passengers, ``payment_history`` (refunds are negative), ``created_at``, bags
  (``total_baggages``, ``nonfree_baggages``), ``insurance`` (``yes``/``no``) and ``status``
  (``active`` or ``cancelled``).

**Tools.** Reads: ``get_user_details`` (authenticates the user), ``get_reservation_details``,
``get_flight_status``, ``search_direct_flight``, ``search_onestop_flight``,
``list_all_airports``, ``calculate``. Writes: ``book_reservation``, ``cancel_reservation``,
``update_reservation_flights``, ``update_reservation_baggages``,
``update_reservation_passengers``, ``send_certificate``. ``transfer_to_human_agents`` ends the
conversation. The tools refuse what the data forbids (an unknown id, a full or cancelled
flight, a payment method the user does not own, a wrong bag count); the policy's judgement
calls (may this reservation be cancelled? may a basic economy trip change? is this user
owed compensation?) are the agent's.

**Policy** (:data:`POLICY`, in short): identify the user by user id; an explicit yes before
each write; cancellation only within 24 hours of booking, for a flight cancelled by the
airline, in business, or with travel insurance for a covered reason (illness, injury, severe
weather); basic economy cannot change flights or cabin; free bags by membership and cabin,
$50 per extra bag; insurance $30 per passenger; compensation certificates ($100 per passenger
for a cancelled flight, $50 for a delayed one) only for silver or gold members, insured or
business reservations, only when the user complains, after checking the facts; a refusal says
the request is "not eligible".

**Templates** (:meth:`AirlineDomain.templates`): easy: cancel within 24 hours, cancel a
business trip, refuse a cancellation, add bags, correct a passenger, flight status, book a
one-way trip; medium: cancel for an airline-cancelled flight, cancel with insurance for
illness, refuse an insured cancellation for another reason, round trip for two, booking with
bags and insurance, certificate plus card, change a date, upgrade to business, refuse a basic
economy change, compensation for a cancelled or delayed flight, refused compensation; hard:
one-stop booking, a change of mind on the cabin or on the new date, cancel one trip and add
bags to another, a refused cancellation turned into a date change, a passenger fix plus an
upgrade, cancel an airline-cancelled trip and then get compensation.
"""

from __future__ import annotations

import ast
import copy
import datetime
import hashlib
import itertools
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

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

__all__ = ["NOW", "POLICY", "TODAY", "AirlineDomain"]

TODAY = "2026-05-15"
"""The current date (EST) in every conversation."""
NOW = "2026-05-15T15:00:00"
"""The current time (EST): bookings made now get this ``created_at``."""
DAY_AGO = "2026-05-14T15:00:00"
"""Reservations created at or after this moment were booked within the last 24 hours."""
DATES = tuple(f"2026-05-{day:02d}" for day in range(10, 31))
"""The dates flights run on."""
CABINS = ("basic_economy", "economy", "business")
MEMBERSHIPS = ("regular", "silver", "gold")
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 2},
    "gold": {"basic_economy": 2, "economy": 3, "business": 3},
}
"""Free checked bags per passenger, by membership and cabin."""
BAG_FEE = 50.0
INSURANCE_FEE = 30.0
COMPENSATION = {"cancelled": 100.0, "delayed": 50.0}
"""Certificate per passenger, by the status of the flight the user complains about."""
MAX_PASSENGERS = 5
AIRPORTS = {
    "JFK": ("New York", 40.6, -73.8),
    "BOS": ("Boston", 42.4, -71.0),
    "ATL": ("Atlanta", 33.6, -84.4),
    "MIA": ("Miami", 25.8, -80.3),
    "ORD": ("Chicago", 42.0, -87.9),
    "DFW": ("Dallas", 32.9, -97.0),
    "DEN": ("Denver", 39.9, -104.7),
    "PHX": ("Phoenix", 33.4, -112.0),
    "LAS": ("Las Vegas", 36.1, -115.2),
    "LAX": ("Los Angeles", 33.9, -118.4),
    "SFO": ("San Francisco", 37.6, -122.4),
    "SEA": ("Seattle", 47.4, -122.3),
}
"""Airport code -> (city, latitude, longitude); the distance sets a flight's duration."""

POLICY = """\
# Horizon Air Travel: agent policy

The current time is **2026-05-15 15:00 EST**. You help customers of Horizon Air Travel with
their bookings. You may only act for the authenticated user, on their own reservations and
their own payment methods.

## General rules
- Before anything else, authenticate the user: ask for their **user id** and look it up with
  `get_user_details`. Users know their user id.
- Before every action that changes the database (book, cancel, change flights or cabin, add
  bags, change passengers, send a certificate), tell the user what you will do, with its price,
  and get an explicit **yes**. One confirmation covers one action.
- Give only information from the tools or this policy; do not guess. Use `calculate` for sums
  if you like.
- When this policy forbids a request, refuse it: tell the user that the request is
  **not eligible** and which rule applies.
- Transfer the user to a human agent (`transfer_to_human_agents`) only for a request you
  cannot handle with your tools, such as cancelling a reservation with a flight already flown.

## Flights and reservations
- A flight's status on a date is `available` (bookable), `delayed`, `cancelled` (by the
  airline) or `landed` (flown). Cabins: `basic_economy`, `economy`, `business`; each has its
  own price and seats on each date.
- A reservation has a trip type (`one_way` or `round_trip`), one cabin for all its flights,
  1 to 5 passengers who all take the same flights, the price paid per passenger for each
  flight, its payment history, its bags and whether it has travel insurance.

## Booking
- Ask for the trip type, origin, destination, dates, cabin, passengers (first name, last
  name, date of birth; the user's saved passengers may be used), checked bags, travel
  insurance and payment. Airports are given by code (`list_all_airports`).
- Only flights with status `available` and enough seats in the cabin can be booked.
- Total = the flights' prices in the cabin x passengers, + $30 per passenger for travel
  insurance, + $50 per checked bag beyond the free allowance.
- Free checked bags per passenger:

  | membership | basic_economy | economy | business |
  |---|---|---|---|
  | regular | 0 | 1 | 2 |
  | silver | 1 | 2 | 2 |
  | gold | 2 | 3 | 3 |

- Payment: methods from the user's profile only, at most one travel certificate, one credit
  card and three gift cards; the amounts must add up to the total. A gift card or certificate
  cannot pay more than its balance. A certificate is used once: any remainder is lost.
- Travel insurance can only be bought when booking.

## Changing a reservation
- **Basic economy** reservations cannot change flights or cabin.
- Other reservations may change flights, but not the origin, the destination or the trip
  type. Flights already flown cannot be changed (keep them in the list).
- The cabin can be changed for the whole reservation, unless a flight has been flown.
- Price: a changed flight costs today's price in the cabin; unchanged flights keep the price
  paid, unless the cabin changes, then every flight costs today's price. The difference x
  passengers is charged to, or refunded to, one credit card or gift card of the user
  (certificates cannot be used). Tell the user the difference before asking to confirm.
- Checked bags can be added, not removed; each bag beyond the allowance costs $50, paid by a
  credit card or gift card.
- Passengers' names and dates of birth can be corrected; their number cannot change.

## Cancellation
- A reservation can be cancelled only if none of its flights has been flown, and at least one
  of these holds:
  - it was booked within the last 24 hours (created at or after 2026-05-14 15:00 EST);
  - one of its flights was cancelled by the airline;
  - its cabin is business;
  - it has travel insurance and the reason is a passenger's illness or injury, or severe
    weather.
- Otherwise the cancellation is not eligible.
- The refund is everything paid for the reservation, to the original payment methods, within
  5 to 7 business days. Tell the user the refund total.

## Compensation
- Never offer compensation unless the user complains about a cancelled or delayed flight.
- Only silver and gold members, reservations with travel insurance, and business reservations
  are eligible; for anyone else, compensation is not eligible.
- First check the facts (the reservation, and the flight's status with `get_flight_status`).
- Then offer a travel certificate (`send_certificate`): $100 per passenger of the reservation
  for a cancelled flight, $50 per passenger for a delayed flight. One certificate per complaint.
"""


# ===================================================================== helpers on the data


def _user(db: DB, user_id: str) -> dict[str, Any]:
    user: dict[str, Any] | None = db["users"].get(user_id)
    if user is None:
        raise ToolError(
            f"no user with id {user_id!r}; a user id looks like 'omar_hassan_7362' (ask the user)"
        )
    return user


def _reservation(db: DB, reservation_id: str) -> dict[str, Any]:
    reservation: dict[str, Any] | None = db["reservations"].get(reservation_id)
    if reservation is None:
        raise ToolError(
            f"no reservation with id {reservation_id!r}; a reservation id is six letters and "
            "digits such as 'Q4ZK7M' (the user's reservations are listed by get_user_details)"
        )
    return reservation


def _flight_day(db: DB, flight_number: str, date: str) -> dict[str, Any]:
    flight = db["flights"].get(flight_number)
    if flight is None:
        raise ToolError(
            f"no flight {flight_number!r}; flight numbers look like 'HAT123' "
            "(search_direct_flight lists them)"
        )
    day: dict[str, Any] | None = flight["dates"].get(date)
    if day is None:
        raise ToolError(
            f"flight {flight_number} does not fly on {date!r}; flights run on dates from "
            f"{DATES[0]} to {DATES[-1]}, written YYYY-MM-DD"
        )
    return day


def _active(reservation: dict[str, Any]) -> None:
    if reservation["status"] != "active":
        raise ToolError(f"reservation {reservation['reservation_id']} is already cancelled")


def _flown(db: DB, reservation: Mapping[str, Any]) -> list[str]:
    """The reservation's flights already flown, as ``"HAT123 on 2026-05-12"``."""
    return [
        f"{f['flight_number']} on {f['date']}"
        for f in reservation["flights"]
        if db["flights"][f["flight_number"]]["dates"][f["date"]]["status"] == "landed"
    ]


def _round(value: float) -> float:
    return round(float(value) + 0.0, 2)


def _paid(reservation: Mapping[str, Any]) -> float:
    return _round(sum(p["amount"] for p in reservation["payment_history"]))


def _free_bags(membership: str, cabin: str, passengers: int) -> int:
    return FREE_BAGS[membership][cabin] * passengers


def _digest(*parts: Any) -> int:
    text = json.dumps(parts, sort_keys=True)
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


_ID_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def _code(number: int, length: int = 6) -> str:
    letters = []
    for _ in range(length):
        number, rest = divmod(number, len(_ID_LETTERS))
        letters.append(_ID_LETTERS[rest])
    return "".join(letters)


# ===================================================================== argument parsing


def _check_date(value: Any, what: str) -> str:
    try:
        datetime.date.fromisoformat(str(value))
    except ValueError:
        raise ToolError(f"{what} {value!r} is not a date written YYYY-MM-DD") from None
    if len(str(value)) != 10:
        raise ToolError(f"{what} {value!r} is not a date written YYYY-MM-DD")
    return str(value)


def _check_cabin(cabin: str) -> str:
    if cabin not in CABINS:
        raise ToolError(f"unknown cabin {cabin!r}; cabins: {', '.join(CABINS)}")
    return cabin


def _check_airport(db: DB, code: str) -> str:
    if code not in db["airports"]:
        raise ToolError(
            f"unknown airport {code!r}; use a three-letter code from list_all_airports, "
            f"such as {', '.join(sorted(db['airports'])[:4])}"
        )
    return code


def _parse_flights(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, list) or not value:
        raise ToolError(
            'flights must be a non-empty list of {"flight_number": "HAT123", "date": '
            '"2026-05-20"} objects'
        )
    found = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"flight_number", "date"}
            or not all(isinstance(v, str) for v in item.values())
        ):
            raise ToolError(
                f"each flight must be an object with exactly the strings 'flight_number' and "
                f"'date', got {item!r}"
            )
        found.append((item["flight_number"], _check_date(item["date"], "flight date")))
    if len(set(found)) != len(found):
        raise ToolError(f"the same flight is listed twice in {value!r}")
    return found


def _parse_passengers(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_PASSENGERS:
        raise ToolError(
            f"passengers must be a list of 1 to {MAX_PASSENGERS} objects with 'first_name', "
            f"'last_name' and 'dob' (YYYY-MM-DD), got {value!r}"
        )
    found = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"first_name", "last_name", "dob"}
            or not all(isinstance(v, str) and v.strip() for v in item.values())
        ):
            raise ToolError(
                f"each passenger must be an object with exactly 'first_name', 'last_name' "
                f"and 'dob' (non-empty strings), got {item!r}"
            )
        dob = _check_date(item["dob"], "date of birth")
        if dob >= TODAY:
            raise ToolError(f"date of birth {dob} is not in the past")
        found.append({"first_name": item["first_name"], "last_name": item["last_name"], "dob": dob})
    return found


def _parse_payments(value: Any) -> list[tuple[str, float]]:
    if not isinstance(value, list) or not value:
        raise ToolError(
            'payment_methods must be a non-empty list of {"payment_id": ..., "amount": ...} objects'
        )
    found = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"payment_id", "amount"}
            or not isinstance(item["payment_id"], str)
            or isinstance(item["amount"], bool)
            or not isinstance(item["amount"], int | float)
        ):
            raise ToolError(
                f"each payment must be an object with exactly 'payment_id' (a string) and "
                f"'amount' (a number), got {item!r}"
            )
        if item["amount"] <= 0:
            raise ToolError(f"payment amount {item['amount']} must be positive")
        found.append((item["payment_id"], _round(item["amount"])))
    ids = [payment_id for payment_id, _ in found]
    if len(set(ids)) != len(ids):
        raise ToolError(f"a payment method is listed twice in {value!r}")
    return found


def _payment_method(user: Mapping[str, Any], payment_id: str) -> dict[str, Any]:
    method: dict[str, Any] | None = user["payment_methods"].get(payment_id)
    if method is None:
        raise ToolError(
            f"user {user['user_id']} has no payment method {payment_id!r}; theirs: "
            f"{', '.join(sorted(user['payment_methods']))}"
        )
    return method


def _charge_or_refund(user: Mapping[str, Any], payment_id: str, amount: float) -> None:
    """Check a change's payment method (a credit card or gift card) and move the money."""
    method = _payment_method(user, payment_id)
    if method["source"] not in ("credit_card", "gift_card"):
        raise ToolError(
            f"{payment_id} is a {method['source']}; changes are paid or refunded with a "
            "credit card or gift card"
        )
    if method["source"] == "gift_card":
        if amount > method["balance"]:
            raise ToolError(
                f"gift card {payment_id} has a balance of ${method['balance']:.2f}, less than "
                f"the ${amount:.2f} to pay"
            )
        method["balance"] = _round(method["balance"] - amount)


def _legs(db: DB, flights: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    legs = []
    for number, date in flights:
        _flight_day(db, number, date)
        legs.append(db["flights"][number] | {"date": date})
    return legs


def _check_route(
    legs: Sequence[Mapping[str, Any]], origin: str, destination: str, kind: str
) -> None:
    """The flights, in order, must go from origin to destination (and back for a round trip)."""
    if legs[0]["origin"] != origin:
        raise ToolError(
            f"the first flight {legs[0]['flight_number']} leaves from {legs[0]['origin']}, "
            f"not from the origin {origin}"
        )
    for before, after in itertools.pairwise(legs):
        if before["destination"] != after["origin"]:
            raise ToolError(
                f"flight {before['flight_number']} lands in {before['destination']} but the next "
                f"flight {after['flight_number']} leaves from {after['origin']}"
            )
        lands = (before["date"], before["scheduled_arrival_time_est"])
        leaves = (after["date"], after["scheduled_departure_time_est"])
        if leaves < lands:
            raise ToolError(
                f"flight {after['flight_number']} on {after['date']} leaves before flight "
                f"{before['flight_number']} on {before['date']} lands; list flights in order"
            )
    end = legs[-1]["destination"]
    if kind == "one_way" and end != destination:
        raise ToolError(
            f"a one-way trip to {destination} must end there, but the last flight lands in {end}"
        )
    if kind == "round_trip" and (
        end != origin or all(leg["destination"] != destination for leg in legs[:-1])
    ):
        raise ToolError(
            f"a round trip must reach {destination} and come back to {origin}; these flights "
            f"go {' -> '.join([legs[0]['origin'], *(leg['destination'] for leg in legs)])}"
        )


def _bookable(db: DB, number: str, date: str, cabin: str, passengers: int) -> float:
    """The price of a flight that can be booked now, or a ToolError saying why not."""
    day = _flight_day(db, number, date)
    if date < TODAY or day["status"] != "available":
        raise ToolError(
            f"flight {number} on {date} cannot be booked: its status is {day['status']} "
            "(only 'available' flights can be booked)"
        )
    if _seats_left(day, cabin) < passengers:
        raise ToolError(
            f"flight {number} on {date} has {_seats_left(day, cabin)} seats left in "
            f"{cabin}, fewer than the {passengers} passengers"
        )
    return _price(day, cabin)


def _price(day: Mapping[str, Any], cabin: str) -> float:
    return float(day["prices"][CABINS.index(cabin)])


def _seats_left(day: Mapping[str, Any], cabin: str) -> int:
    return int(day["seats"][CABINS.index(cabin)])


def _seats(db: DB, flights: Iterable[Mapping[str, Any]], cabin: str, change: int) -> None:
    for flight in flights:
        day = db["flights"][flight["flight_number"]]["dates"][flight["date"]]
        if day["status"] in ("available", "delayed"):
            day["seats"][CABINS.index(cabin)] += change


# ===================================================================== the tools


def get_user_details(db: DB, user_id: str) -> dict[str, Any]:
    return copy.deepcopy(_user(db, user_id))


def get_reservation_details(db: DB, reservation_id: str) -> dict[str, Any]:
    return copy.deepcopy(_reservation(db, reservation_id))


def get_flight_status(db: DB, flight_number: str, date: str) -> str:
    return str(_flight_day(db, flight_number, _check_date(date, "date"))["status"])


def list_all_airports(db: DB) -> dict[str, str]:
    return {code: airport["city"] for code, airport in sorted(db["airports"].items())}


def _search_row(flight: Mapping[str, Any], date: str) -> dict[str, Any]:
    day = flight["dates"][date]
    return {
        "flight_number": flight["flight_number"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "date": date,
        "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
        "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
        "status": day["status"],
        "available_seats": dict(zip(CABINS, day["seats"], strict=True)),
        "prices": dict(zip(CABINS, day["prices"], strict=True)),
    }


def _departures(db: DB, origin: str, date: str) -> list[dict[str, Any]]:
    """Bookable flights leaving ``origin`` on ``date``, by departure time."""
    found = [
        flight
        for flight in db["flights"].values()
        if flight["origin"] == origin and flight["dates"][date]["status"] == "available"
    ]
    return sorted(found, key=lambda f: (f["scheduled_departure_time_est"], f["flight_number"]))


def _search_args(db: DB, origin: str, destination: str, date: str) -> None:
    _check_airport(db, origin)
    _check_airport(db, destination)
    if origin == destination:
        raise ToolError(f"origin and destination are both {origin}")
    _check_date(date, "date")
    if date not in DATES:
        raise ToolError(f"no flights on {date}; flights run from {DATES[0]} to {DATES[-1]}")
    if date < TODAY:
        raise ToolError(f"{date} is in the past (today is {TODAY})")


def search_direct_flight(db: DB, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
    _search_args(db, origin, destination, date)
    return [
        _search_row(f, date)
        for f in _departures(db, origin, date)
        if f["destination"] == destination
    ]


def _connections(db: DB, origin: str, destination: str, date: str) -> list[list[dict[str, Any]]]:
    pairs = []
    for first in _departures(db, origin, date):
        if first["destination"] == destination:
            continue
        for second in _departures(db, first["destination"], date):
            layover = second["scheduled_departure_time_est"] >= _plus_hour(
                first["scheduled_arrival_time_est"]
            )
            if second["destination"] == destination and layover:
                pairs.append([_search_row(first, date), _search_row(second, date)])
    return pairs


def search_onestop_flight(
    db: DB, origin: str, destination: str, date: str
) -> list[list[dict[str, Any]]]:
    _search_args(db, origin, destination, date)
    return _connections(db, origin, destination, date)


def _plus_hour(time: str) -> str:
    hours, minutes, _ = time.split(":")
    return f"{int(hours) + 1:02d}:{minutes}:00"


_OPERATORS: Mapping[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def calculate(db: DB, expression: str) -> float:
    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)  # type: ignore[arg-type]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.operand))
        raise ToolError(
            f"cannot calculate {expression!r}: use numbers, + - * / and parentheses only"
        )

    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ToolError(f"cannot parse {expression!r} as arithmetic") from None
    try:
        return _round(value(tree.body))
    except ZeroDivisionError:
        raise ToolError(f"{expression!r} divides by zero") from None


def book_reservation(
    db: DB,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: str,
    cabin: str,
    flights: list[Any],
    passengers: list[Any],
    payment_methods: list[Any],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: str,
) -> dict[str, Any]:
    user = _user(db, user_id)
    _check_airport(db, origin)
    _check_airport(db, destination)
    if flight_type not in ("one_way", "round_trip"):
        raise ToolError(f"flight_type must be 'one_way' or 'round_trip', got {flight_type!r}")
    _check_cabin(cabin)
    if insurance not in ("yes", "no"):
        raise ToolError(f"insurance must be 'yes' or 'no', got {insurance!r}")
    chosen = _parse_flights(flights)
    people = _parse_passengers(passengers)
    payments = _parse_payments(payment_methods)
    legs = _legs(db, chosen)
    _check_route(legs, origin, destination, flight_type)
    prices = [_bookable(db, number, date, cabin, len(people)) for number, date in chosen]
    if total_baggages < 0 or nonfree_baggages < 0:
        raise ToolError("bag counts cannot be negative")
    free = _free_bags(user["membership"], cabin, len(people))
    if nonfree_baggages != max(0, total_baggages - free):
        raise ToolError(
            f"with {total_baggages} bags, nonfree_baggages must be "
            f"{max(0, total_baggages - free)}: a {user['membership']} member gets "
            f"{FREE_BAGS[user['membership']][cabin]} free bags per passenger in {cabin}"
        )
    insured = INSURANCE_FEE * len(people) if insurance == "yes" else 0.0
    total = _round(sum(prices) * len(people) + insured + BAG_FEE * nonfree_baggages)
    _check_payments(user, payments, total)
    for payment_id, amount in payments:
        method = user["payment_methods"][payment_id]
        if method["source"] == "gift_card":
            method["balance"] = _round(method["balance"] - amount)
        elif method["source"] == "certificate":
            del user["payment_methods"][payment_id]
    flight_rows = [
        {
            "flight_number": leg["flight_number"],
            "origin": leg["origin"],
            "destination": leg["destination"],
            "date": leg["date"],
            "price": price,
        }
        for leg, price in zip(legs, prices, strict=True)
    ]
    _seats(db, flight_rows, cabin, -len(people))
    number = _digest(user_id, len(db["reservations"]), chosen)
    while _code(number) in db["reservations"]:
        number += 1
    reservation = {
        "reservation_id": _code(number),
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": flight_rows,
        "passengers": people,
        "payment_history": [
            {"payment_id": payment_id, "amount": amount} for payment_id, amount in sorted(payments)
        ],
        "created_at": NOW,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
        "status": "active",
    }
    db["reservations"][reservation["reservation_id"]] = reservation
    user["reservations"].append(reservation["reservation_id"])
    return copy.deepcopy(reservation)


def _check_payments(
    user: Mapping[str, Any], payments: Sequence[tuple[str, float]], total: float
) -> None:
    counts = {"credit_card": 0, "gift_card": 0, "certificate": 0}
    for payment_id, amount in payments:
        method = _payment_method(user, payment_id)
        counts[method["source"]] += 1
        balance = method.get("balance", method.get("amount"))
        if balance is not None and amount > balance:
            raise ToolError(
                f"{payment_id} holds ${balance:.2f}, less than the ${amount:.2f} asked of it"
            )
    if counts["credit_card"] > 1 or counts["certificate"] > 1 or counts["gift_card"] > 3:
        raise ToolError(
            "a booking may use at most one credit card, one certificate and three gift cards"
        )
    paid = _round(sum(amount for _, amount in payments))
    if paid != total:
        raise ToolError(f"the payments add up to ${paid:.2f}, but the total is ${total:.2f}")


def cancel_reservation(db: DB, reservation_id: str) -> dict[str, Any]:
    reservation = _reservation(db, reservation_id)
    _active(reservation)
    flown = _flown(db, reservation)
    if flown:
        raise ToolError(
            f"reservation {reservation_id} has a flight already flown ({', '.join(flown)}); "
            "it cannot be cancelled here (transfer the user to a human agent)"
        )
    refunds = [
        {"payment_id": p["payment_id"], "amount": _round(-p["amount"])}
        for p in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    _seats(db, reservation["flights"], reservation["cabin"], len(reservation["passengers"]))
    return copy.deepcopy(reservation)


def update_reservation_flights(
    db: DB, reservation_id: str, cabin: str, flights: list[Any], payment_id: str
) -> dict[str, Any]:
    reservation = _reservation(db, reservation_id)
    _active(reservation)
    _check_cabin(cabin)
    user = db["users"][reservation["user_id"]]
    chosen = _parse_flights(flights)
    legs = _legs(db, chosen)
    _check_route(
        legs, reservation["origin"], reservation["destination"], reservation["flight_type"]
    )
    people = len(reservation["passengers"])
    old = {(f["flight_number"], f["date"]): f for f in reservation["flights"]}
    flown = {key for key in old if _flown(db, {"flights": [old[key]]})}
    missing = sorted(flown - set(chosen))
    if missing:
        raise ToolError(
            f"flight {missing[0][0]} on {missing[0][1]} has been flown and cannot be changed; "
            "keep it in the list"
        )
    if flown and cabin != reservation["cabin"]:
        raise ToolError("the cabin cannot change once a flight of the reservation has flown")
    rows, new_total, old_total = [], 0.0, _round(sum(f["price"] for f in old.values()))
    for leg in legs:
        key = (leg["flight_number"], leg["date"])
        if key in old and cabin == reservation["cabin"]:
            price = old[key]["price"]
        else:
            price = _bookable(db, key[0], key[1], cabin, people)
        new_total += price
        rows.append(
            {
                "flight_number": key[0],
                "origin": leg["origin"],
                "destination": leg["destination"],
                "date": key[1],
                "price": price,
            }
        )
    difference = _round((new_total - old_total) * people)
    _charge_or_refund(user, payment_id, difference)
    kept = [f for f in reservation["flights"] if (f["flight_number"], f["date"]) in flown]
    _seats(db, [f for f in reservation["flights"] if f not in kept], reservation["cabin"], people)
    _seats(db, [f for f in rows if (f["flight_number"], f["date"]) not in flown], cabin, -people)
    if difference:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": difference})
    reservation["flights"], reservation["cabin"] = rows, cabin
    return copy.deepcopy(reservation)


def update_reservation_baggages(
    db: DB, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> dict[str, Any]:
    reservation = _reservation(db, reservation_id)
    _active(reservation)
    if len(_flown(db, reservation)) == len(reservation["flights"]):
        raise ToolError(f"every flight of reservation {reservation_id} has been flown")
    if total_baggages < reservation["total_baggages"]:
        raise ToolError(
            f"bags can only be added: reservation {reservation_id} already has "
            f"{reservation['total_baggages']}, more than {total_baggages}"
        )
    user = db["users"][reservation["user_id"]]
    free = _free_bags(user["membership"], reservation["cabin"], len(reservation["passengers"]))
    want = max(reservation["nonfree_baggages"], total_baggages - free)
    if nonfree_baggages != want:
        raise ToolError(
            f"with {total_baggages} bags, nonfree_baggages must be {want}: this reservation's "
            f"{len(reservation['passengers'])} passengers get {free} free bags in all"
        )
    fee = _round((nonfree_baggages - reservation["nonfree_baggages"]) * BAG_FEE)
    _charge_or_refund(user, payment_id, fee)
    if fee:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": fee})
    reservation["total_baggages"], reservation["nonfree_baggages"] = total_baggages, want
    return copy.deepcopy(reservation)


def update_reservation_passengers(
    db: DB, reservation_id: str, passengers: list[Any]
) -> dict[str, Any]:
    reservation = _reservation(db, reservation_id)
    _active(reservation)
    people = _parse_passengers(passengers)
    if len(people) != len(reservation["passengers"]):
        raise ToolError(
            f"reservation {reservation_id} has {len(reservation['passengers'])} passengers; "
            f"the number cannot change (got {len(people)})"
        )
    reservation["passengers"] = people
    return copy.deepcopy(reservation)


def send_certificate(db: DB, user_id: str, amount: float) -> str:
    user = _user(db, user_id)
    if not 0 < amount <= 1000:
        raise ToolError(f"a certificate's amount must be between $0 and $1000, got {amount}")
    number = _digest(user_id, sorted(user["payment_methods"])) % 9_000_000 + 1_000_000
    while f"certificate_{number}" in user["payment_methods"]:
        number += 1
    certificate = f"certificate_{number}"
    user["payment_methods"][certificate] = {
        "source": "certificate",
        "id": certificate,
        "amount": _round(amount),
    }
    return f"Certificate {certificate} of ${amount:.2f} added to user {user_id}."


def transfer_to_human_agents(db: DB, summary: str) -> str:
    return "Transfer successful: a human agent will take over."


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _integer(description: str) -> dict[str, str]:
    return {"type": "integer", "description": description}


_FLIGHTS = {
    "type": "array",
    "description": 'the flights in travel order: [{"flight_number": "HAT123", "date": '
    '"2026-05-20"}, ...]',
    "items": {
        "type": "object",
        "properties": {"flight_number": {"type": "string"}, "date": {"type": "string"}},
    },
}
_PASSENGERS = {
    "type": "array",
    "description": 'the passengers: [{"first_name": ..., "last_name": ..., "dob": '
    '"YYYY-MM-DD"}, ...]',
    "items": {
        "type": "object",
        "properties": {
            "first_name": {"type": "string"},
            "last_name": {"type": "string"},
            "dob": {"type": "string"},
        },
    },
}
_RESERVATION_ID = _text("the reservation id, such as 'Q4ZK7M'")
_AIRPORT = "an airport code, such as 'JFK'"
_DATE = "the date, YYYY-MM-DD"

TOOLS = (
    Tool(
        "get_user_details",
        "Look up a user by user id (this authenticates the user): profile, membership, "
        "payment methods, saved passengers and reservation ids.",
        {"user_id": _text("the user id, such as 'omar_hassan_7362'")},
        get_user_details,
    ),
    Tool(
        "get_reservation_details",
        "Look up a reservation: flights, cabin, passengers, payments, bags, insurance, status.",
        {"reservation_id": _RESERVATION_ID},
        get_reservation_details,
    ),
    Tool(
        "get_flight_status",
        "The status of a flight on a date: available, delayed, cancelled or landed.",
        {"flight_number": _text("the flight number, such as 'HAT123'"), "date": _text(_DATE)},
        get_flight_status,
    ),
    Tool(
        "search_direct_flight",
        "Bookable direct flights between two airports on a date, with seats and prices.",
        {"origin": _text(_AIRPORT), "destination": _text(_AIRPORT), "date": _text(_DATE)},
        search_direct_flight,
    ),
    Tool(
        "search_onestop_flight",
        "Bookable one-stop connections (two flights the same day, at least an hour apart) "
        "between two airports on a date.",
        {"origin": _text(_AIRPORT), "destination": _text(_AIRPORT), "date": _text(_DATE)},
        search_onestop_flight,
    ),
    Tool("list_all_airports", "Every airport: code and city.", {}, list_all_airports),
    Tool(
        "calculate",
        "Evaluate arithmetic (numbers, + - * / and parentheses), rounded to cents.",
        {"expression": _text("such as '(289 + 310) * 2'")},
        calculate,
    ),
    Tool(
        "book_reservation",
        "Book flights for the user's passengers and pay for them.",
        {
            "user_id": _text("the user id"),
            "origin": _text(_AIRPORT),
            "destination": _text(_AIRPORT),
            "flight_type": _text("'one_way' or 'round_trip'"),
            "cabin": _text("'basic_economy', 'economy' or 'business'"),
            "flights": _FLIGHTS,
            "passengers": _PASSENGERS,
            "payment_methods": {
                "type": "array",
                "description": 'how the total is paid: [{"payment_id": ..., "amount": ...}]',
                "items": {
                    "type": "object",
                    "properties": {"payment_id": {"type": "string"}, "amount": {"type": "number"}},
                },
            },
            "total_baggages": _integer("checked bags in all"),
            "nonfree_baggages": _integer("checked bags beyond the free allowance"),
            "insurance": _text("'yes' or 'no'"),
        },
        book_reservation,
        writes=True,
        proposed_as=(("book",),),
        named_arguments=("origin", "destination", "cabin", "flights"),
    ),
    Tool(
        "cancel_reservation",
        "Cancel a reservation and refund every payment to its original method.",
        {"reservation_id": _RESERVATION_ID},
        cancel_reservation,
        writes=True,
        proposed_as=(("cancel",),),
        named_arguments=("reservation_id",),
    ),
    Tool(
        "update_reservation_flights",
        "Change a reservation's flights and/or cabin; the price difference is charged or "
        "refunded to the payment method.",
        {
            "reservation_id": _RESERVATION_ID,
            "cabin": _text("the cabin for every flight (the current one to keep it)"),
            "flights": _FLIGHTS | {"description": "all the flights, changed or not, in order"},
            "payment_id": _text("a credit card or gift card of the user"),
        },
        update_reservation_flights,
        writes=True,
        proposed_as=(("flight",), ("cabin",), ("class",)),
        named_arguments=("reservation_id", "cabin"),
    ),
    Tool(
        "update_reservation_baggages",
        "Set a reservation's checked bags (only more than now); the fee for new non-free bags "
        "is charged to the payment method.",
        {
            "reservation_id": _RESERVATION_ID,
            "total_baggages": _integer("checked bags in all, after the change"),
            "nonfree_baggages": _integer("of those, the bags beyond the free allowance"),
            "payment_id": _text("a credit card or gift card of the user"),
        },
        update_reservation_baggages,
        writes=True,
        proposed_as=(("bag",),),
        named_arguments=("reservation_id", "total_baggages"),
    ),
    Tool(
        "update_reservation_passengers",
        "Replace a reservation's passengers' details (the same number of passengers).",
        {"reservation_id": _RESERVATION_ID, "passengers": _PASSENGERS},
        update_reservation_passengers,
        writes=True,
        proposed_as=(("passenger",), ("name",), ("date of birth",)),
        named_arguments=("reservation_id",),
    ),
    Tool(
        "send_certificate",
        "Give the user a travel certificate (compensation) of the amount.",
        {"user_id": _text("the user id"), "amount": {"type": "number", "description": "dollars"}},
        send_certificate,
        writes=True,
        proposed_as=(("certificate",),),
        named_arguments=("amount",),
    ),
    Tool(
        "transfer_to_human_agents",
        "Hand the conversation to a human agent (ends it), with a summary of the issue.",
        {"summary": _text("what the user needs")},
        transfer_to_human_agents,
    ),
)


# ===================================================================== the database

FIRST_NAMES = (
    "Omar", "Mia", "Liam", "Sofia", "Noah", "Aisha", "Lucas", "Yuki", "Ethan", "Priya",
    "Mateo", "Chloe", "Daniel", "Fatima", "Hugo", "Ingrid", "Kwame", "Lena", "Marco", "Nadia",
    "Oscar", "Paula", "Rafael", "Sara", "Tomas", "Uma", "Victor", "Wen", "Ximena", "Yusuf",
    "Zoe", "Amara", "Bruno", "Carmen", "Dmitri", "Elena", "Felix", "Grace", "Hassan", "Isla",
)  # fmt: skip
LAST_NAMES = (
    "Hassan", "Garcia", "Chen", "Novak", "Okafor", "Silva", "Kim", "Patel", "Rossi", "Muller",
    "Tanaka", "Johnson", "Lopez", "Nguyen", "Ahmed", "Larsen", "Costa", "Ivanova", "Mensah",
    "Dubois", "Moreau", "Singh", "Kowalski", "Haddad", "Brown", "Sato", "Fischer", "Reyes",
    "Walker", "Petrov",
)  # fmt: skip
CARD_BRANDS = ("visa", "mastercard", "amex")


def _pick(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _person(rng: np.random.Generator, last_name: str | None = None) -> dict[str, str]:
    year, month, day = (
        int(rng.integers(1950, 2010)),
        int(rng.integers(1, 13)),
        int(rng.integers(1, 29)),
    )
    return {
        "first_name": _pick(rng, FIRST_NAMES),
        "last_name": last_name or _pick(rng, LAST_NAMES),
        "dob": f"{year}-{month:02d}-{day:02d}",
    }


def _build_flights(rng: np.random.Generator) -> dict[str, dict[str, Any]]:
    codes = sorted(AIRPORTS)
    numbers = iter(int(n) for n in rng.permutation(np.arange(100, 1000)))
    flights: dict[str, dict[str, Any]] = {}
    for origin in codes:
        for destination in codes:
            if origin == destination:
                continue
            count = int(rng.choice(4, p=[0.3, 0.35, 0.25, 0.1]))
            (_, lat1, lon1), (_, lat2, lon2) = AIRPORTS[origin], AIRPORTS[destination]
            minutes = int(45 + 7.5 * float(np.hypot(lat1 - lat2, lon1 - lon2)))
            base = 60 + 0.75 * minutes
            for _ in range(count):
                leave = int(rng.integers(5 * 4, 22 * 4)) * 15
                leave = min(leave, 23 * 60 + 45 - minutes - (minutes % 5))
                land = leave + minutes - minutes % 5
                number = f"HAT{next(numbers)}"
                flights[number] = {
                    "flight_number": number,
                    "origin": origin,
                    "destination": destination,
                    "scheduled_departure_time_est": f"{leave // 60:02d}:{leave % 60:02d}:00",
                    "scheduled_arrival_time_est": f"{land // 60:02d}:{land % 60:02d}:00",
                    "dates": {date: _flight_date(rng, date, leave, base) for date in DATES},
                }
    return dict(sorted(flights.items()))


def _flight_date(rng: np.random.Generator, date: str, leave: int, base: float) -> dict[str, Any]:
    draw = float(rng.random())
    if date < TODAY or (date == TODAY and leave < 15 * 60):
        status = "cancelled" if draw < 0.03 else "landed"
    elif draw < 0.07:
        status = "cancelled"
    elif draw < 0.3 and date <= "2026-05-18":
        status = "delayed"
    else:
        status = "available"
    economy = round(base * float(rng.uniform(0.8, 1.35)))
    return {
        "status": status,
        "seats": [int(rng.integers(0, 16)), int(rng.integers(0, 21)), int(rng.integers(0, 9))],
        "prices": [
            float(round(economy * float(rng.uniform(0.55, 0.75)))),
            float(economy),
            float(round(economy * float(rng.uniform(2.4, 3.6)))),
        ],
    }


def _build_users(rng: np.random.Generator, count: int) -> dict[str, dict[str, Any]]:
    users: dict[str, dict[str, Any]] = {}
    while len(users) < count:
        first, last = _pick(rng, FIRST_NAMES), _pick(rng, LAST_NAMES)
        user_id = f"{first.lower()}_{last.lower()}_{int(rng.integers(1000, 10000))}"
        if user_id in users:
            continue
        methods: dict[str, dict[str, Any]] = {}
        for _ in range(1 + int(rng.random() < 0.35)):
            card = f"credit_card_{int(rng.integers(1_000_000, 10_000_000))}"
            methods[card] = {
                "source": "credit_card",
                "id": card,
                "brand": _pick(rng, CARD_BRANDS),
                "last_four": f"{int(rng.integers(0, 10000)):04d}",
            }
        for _ in range(int(rng.choice(3, p=[0.45, 0.4, 0.15]))):
            gift = f"gift_card_{int(rng.integers(1_000_000, 10_000_000))}"
            balance = _round(float(rng.integers(2000, 60000)) / 100)
            methods[gift] = {"source": "gift_card", "id": gift, "balance": balance}
        if rng.random() < 0.4:
            certificate = f"certificate_{int(rng.integers(1_000_000, 10_000_000))}"
            amount = float(50 * int(rng.integers(1, 7)))
            methods[certificate] = {"source": "certificate", "id": certificate, "amount": amount}
        me = _person(rng, last)
        me["first_name"] = first
        saved = [
            _person(rng, last if rng.random() < 0.5 else None)
            for _ in range(int(rng.integers(0, 3)))
        ]
        users[user_id] = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "email": f"{first.lower()}.{last.lower()}{user_id[-4:]}@example.com",
            "dob": me["dob"],
            "membership": str(rng.choice(MEMBERSHIPS, p=[0.5, 0.3, 0.2])),
            "payment_methods": dict(sorted(methods.items())),
            "saved_passengers": saved,
            "reservations": [],
        }
    return dict(sorted(users.items()))


def _created_at(rng: np.random.Generator, first_date: str) -> str:
    if first_date > TODAY and rng.random() < 0.15:
        minutes = int(rng.integers(60, 24 * 60 - 30))  # after DAY_AGO, before NOW
        stamp = datetime.datetime.fromisoformat(DAY_AGO) + datetime.timedelta(minutes=minutes)
    else:
        latest = min(datetime.date.fromisoformat(first_date), datetime.date(2026, 5, 14))
        day = datetime.date(2026, 4, 1) + datetime.timedelta(
            days=int(rng.integers(0, (latest - datetime.date(2026, 4, 1)).days))
        )
        stamp = datetime.datetime.combine(day, datetime.time()) + datetime.timedelta(
            seconds=int(rng.integers(0, 86400))
        )
    return stamp.isoformat()


def _build_reservations(
    rng: np.random.Generator,
    users: dict[str, dict[str, Any]],
    flights: dict[str, dict[str, Any]],
    count: int,
) -> dict[str, dict[str, Any]]:
    by_route: dict[tuple[str, str], list[str]] = {}
    for number, flight in flights.items():
        by_route.setdefault((flight["origin"], flight["destination"]), []).append(number)
    user_ids, numbers = sorted(users), sorted(flights)
    reservations: dict[str, dict[str, Any]] = {}
    while len(reservations) < count:
        user = users[_pick(rng, user_ids)]
        out = flights[_pick(rng, numbers)]
        first = int(rng.integers(len(DATES) - 2))
        legs = [(out, DATES[first])]
        returns = by_route.get((out["destination"], out["origin"]), [])
        if returns and rng.random() < 0.5:
            back = first + int(rng.integers(1, 6))
            if back < len(DATES):
                legs.append((flights[_pick(rng, returns)], DATES[back]))
        cabin = str(rng.choice(CABINS, p=[0.3, 0.45, 0.25]))
        people = [
            {
                "first_name": user["name"]["first_name"],
                "last_name": user["name"]["last_name"],
                "dob": user["dob"],
            }
        ]
        for _ in range(int(rng.random() < 0.4) + int(rng.random() < 0.15)):
            pool = [p for p in user["saved_passengers"] if p not in people]
            people.append(_pick(rng, pool) if pool and rng.random() < 0.7 else _person(rng))
        rows = [
            {
                "flight_number": flight["flight_number"],
                "origin": flight["origin"],
                "destination": flight["destination"],
                "date": date,
                "price": _price(flight["dates"][date], cabin),
            }
            for flight, date in legs
        ]
        insurance = "yes" if rng.random() < 0.3 else "no"
        bags = int(rng.integers(0, 2 * len(people) + 1))
        nonfree = max(0, bags - _free_bags(user["membership"], cabin, len(people)))
        total = _round(
            sum(r["price"] for r in rows) * len(people)
            + (INSURANCE_FEE * len(people) if insurance == "yes" else 0)
            + BAG_FEE * nonfree
        )
        cards = [m for m in user["payment_methods"].values() if m["source"] == "credit_card"]
        gifts = [m for m in user["payment_methods"].values() if m["source"] == "gift_card"]
        method = _pick(rng, gifts) if gifts and rng.random() < 0.25 else _pick(rng, cards)
        payments = [{"payment_id": method["id"], "amount": total}]
        status = "cancelled" if rng.random() < 0.08 else "active"
        if status == "cancelled":
            payments.append({"payment_id": method["id"], "amount": -total})
        reservation_id = _code(int(rng.integers(0, len(_ID_LETTERS) ** 6)))
        if reservation_id in reservations:
            continue
        reservations[reservation_id] = {
            "reservation_id": reservation_id,
            "user_id": user["user_id"],
            "origin": out["origin"],
            "destination": out["destination"],
            "flight_type": "round_trip" if len(rows) == 2 else "one_way",
            "cabin": cabin,
            "flights": rows,
            "passengers": people,
            "payment_history": payments,
            "created_at": _created_at(rng, rows[0]["date"]),
            "total_baggages": bags,
            "nonfree_baggages": nonfree,
            "insurance": insurance,
            "status": status,
        }
        user["reservations"].append(reservation_id)
    return reservations


def build_airline_db(seed: int) -> DB:
    """The airline database for ``seed`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    flights = _build_flights(rng)
    users = _build_users(rng, 150)
    reservations = _build_reservations(rng, users, flights, 400)
    airports = {
        code: {"code": code, "city": city} for code, (city, _, _) in sorted(AIRPORTS.items())
    }
    return {
        "airports": airports,
        "users": users,
        "flights": flights,
        "reservations": dict(sorted(reservations.items())),
    }


# ===================================================================== the task templates

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


# ----------------------------------------------------------------------- cancellations


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


def cancel_recent(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _draw_cancel(
        db,
        rng,
        lambda r: r["created_at"] >= DAY_AGO,
        lambda r: (
            f"I booked {_trip(r)} in the last day, and I need to cancel it: my plans changed."
        ),
        lambda r: (
            f"Reservation {r['reservation_id']} was booked at {r['created_at']} EST, "
            "within the last 24 hours"
        ),
    )


def cancel_business(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _draw_cancel(
        db,
        rng,
        lambda r: (
            r["cabin"] == "business" and r["created_at"] < DAY_AGO and not _airline_cancelled(db, r)
        ),
        lambda r: f"I need to cancel {_trip(r)}, in business class; something came up at work.",
        lambda r: "Your reservation is in business class",
    )


def cancel_airline(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _draw_cancel(
        db,
        rng,
        lambda r: (
            r["cabin"] != "business"
            and r["created_at"] < DAY_AGO
            and bool(_airline_cancelled(db, r))
        ),
        lambda r: (
            f"I heard that a flight of {_trip(r)} was cancelled. Please cancel the whole "
            "reservation and refund me."
        ),
        lambda r: (
            f"Flight {_airline_cancelled(db, r)[0]['flight_number']} on "
            f"{_airline_cancelled(db, r)[0]['date']} was cancelled by the airline"
        ),
        check_status=True,
    )


def _insured(db: DB, r: Mapping[str, Any]) -> bool:
    return (
        r["insurance"] == "yes"
        and r["cabin"] != "business"
        and r["created_at"] < DAY_AGO
        and not _airline_cancelled(db, r)
    )


def cancel_insured(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    reason = _pick(rng, ILLNESSES)
    return _draw_cancel(
        db,
        rng,
        lambda r: _insured(db, r),
        lambda r: f"I have to cancel {_trip(r)}: {reason}. I bought travel insurance.",
        lambda r: (
            "Your reservation has travel insurance, and it covers cancelling because of "
            "illness or injury"
        ),
    )


def _refusal(
    db: DB,
    rng: np.random.Generator,
    test: Callable[[dict[str, Any]], bool],
    says: Callable[[dict[str, Any]], str],
    why: Callable[[dict[str, Any]], str],
    expects: tuple[str, ...] = ("not eligible",),
    lookups: Callable[[dict[str, Any]], list[Move]] = lambda r: [],
    follow: Callable[[DB, np.random.Generator, dict[str, Any], _Script], Request | None]
    | None = None,
) -> TaskDraft | None:
    """A request the policy forbids: look it up, say it is not eligible and why (and then,
    with ``follow``, a second request the policy allows)."""
    found = _active_reservations(db, lambda r: not _flown(db, r) and test(r))
    if not found:
        return None
    reservation = _pick(rng, found)
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    script.moves += lookups(reservation)
    script.say(f"I'm sorry, but {why(reservation)}.")
    text = says(reservation)
    requests = [Request(text, expects=expects)]
    if follow is not None:
        second = follow(db, rng, reservation, script)
        if second is None:
            return None
        requests.append(second)
    return _draft(rng, user, f"Hello. {text}", facts, requests, script)


def _status_lookups(reservation: Mapping[str, Any]) -> list[Move]:
    return [
        Move(
            call="get_flight_status",
            arguments={"flight_number": f["flight_number"], "date": f["date"]},
        )
        for f in reservation["flights"]
    ]


def _not_cancellable(db: DB, r: Mapping[str, Any]) -> bool:
    return (
        r["cabin"] != "business"
        and r["insurance"] == "no"
        and r["created_at"] < DAY_AGO
        and not _airline_cancelled(db, r)
    )


def _why_not_cancellable(r: Mapping[str, Any]) -> str:
    return (
        f"reservation {r['reservation_id']} is not eligible for cancellation: it was booked "
        f"more than 24 hours ago, it is in {_cabin(r['cabin'])} without travel insurance, and "
        "none of its flights was cancelled by the airline"
    )


def refuse_cancel(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _refusal(
        db,
        rng,
        lambda r: _not_cancellable(db, r),
        lambda r: f"I want to cancel {_trip(r)} and get my money back; my plans changed.",
        _why_not_cancellable,
        lookups=_status_lookups,
    )


def refuse_insured(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    reason = _pick(rng, OTHER_REASONS)
    return _refusal(
        db,
        rng,
        lambda r: _insured(db, r),
        lambda r: (
            f"Please cancel {_trip(r)}: {reason}. I have travel insurance, so I should "
            "get a refund."
        ),
        lambda r: (
            f"reservation {r['reservation_id']} is not eligible for cancellation: its "
            "travel insurance covers illness, injury or severe weather, not this reason, and it "
            "was booked more than 24 hours ago"
        ),
        lookups=_status_lookups,
    )


# ----------------------------------------------------------------------- changes


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


def change_date_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def upgrade(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    reservation = _pick(rng, _active_reservations(db, lambda r: _upgradable(db, r)))
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    request = _upgrade(db, reservation, script, _card(rng, user))
    return _draft(rng, user, f"Hi. {request.says}", facts, [request], script)


def refuse_basic_change(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def fix_and_upgrade(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    reservation = _pick(rng, _active_reservations(db, lambda r: _upgradable(db, r)))
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    fix = _fix_passenger(reservation, script, rng)
    upgraded = _upgrade(db, reservation, script, _card(rng, user))
    opening = f"Hello. I have two things to sort out. First: {fix.says}"
    return _draft(rng, user, opening, facts, [fix, upgraded], script)


# ----------------------------------------------------------------------- bags


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


def cancel_and_bags(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


# ----------------------------------------------------------------------- status, compensation


def flight_status(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    found = _active_reservations(
        db,
        lambda r: any(
            f["date"] >= TODAY and _status(db, f) in ("delayed", "cancelled") for f in r["flights"]
        ),
    )
    reservation = _pick(rng, found)
    flight = next(
        f
        for f in reservation["flights"]
        if f["date"] >= TODAY and _status(db, f) in ("delayed", "cancelled")
    )
    status = _status(db, flight)
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    script.call("get_flight_status", flight_number=flight["flight_number"], date=flight["date"])
    script.say(f"I checked: flight {flight['flight_number']} on {flight['date']} is {status}.")
    says = (
        f"Could you check whether my flight on {_day(flight['date'])} from "
        f"{_city(flight['origin'])} to {_city(flight['destination'])} is on schedule? It's part "
        f"of {_trip(reservation)}."
    )
    return _draft(rng, user, f"Hi. {says}", facts, [Request(says, expects=(status,))], script)


def _complaint(db: DB, reservation: Mapping[str, Any], flight: Mapping[str, Any]) -> str:
    return (
        f"My flight on {_day(flight['date'])} from {_city(flight['origin'])} to "
        f"{_city(flight['destination'])} ({_trip(reservation)}) was {_status(db, flight)}, and "
        "it really messed up my plans. I'm very unhappy about it."
    )


def _compensate(
    db: DB, reservation: Mapping[str, Any], flight: Mapping[str, Any], script: _Script, why: str
) -> Request:
    status, people = _status(db, flight), len(reservation["passengers"])
    amount = COMPENSATION[status] * people
    user_id = reservation["user_id"]
    script.call("get_flight_status", flight_number=flight["flight_number"], date=flight["date"])
    script.propose(
        f"I'm sorry about that. I checked: flight {flight['flight_number']} on {flight['date']} "
        f"was {status}. Because {why}, you are eligible for compensation: a travel certificate of "
        f"{_dollars(amount)} ({_dollars(COMPENSATION[status])} for each of the {people} "
        "passenger(s))."
    )
    script.call("send_certificate", user_id=user_id, amount=amount)
    script.say(f"Done: a travel certificate of {_dollars(amount)} is now in your account.")
    return Request(
        _complaint(db, reservation, flight),
        writes=1,
        confirm=("certificate", _money(amount)),
        expects=(_money(amount),),
    )


def _disrupted(db: DB, r: Mapping[str, Any], status: str) -> list[dict[str, Any]]:
    return [f for f in r["flights"] if _status(db, f) == status]


def _compensation(db: DB, rng: np.random.Generator, status: str) -> TaskDraft | None:
    found = _active_reservations(
        db, lambda r: bool(_disrupted(db, r, status)) and _eligible_compensation(db, r) is not None
    )
    reservation = _pick(rng, found)
    flight = _disrupted(db, reservation, status)[0]
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    why = str(_eligible_compensation(db, reservation))
    request = _compensate(db, reservation, flight, script, why)
    refuses = ("You do not want to cancel or change the reservation.",)
    return _draft(rng, user, request.says, facts, [request], script, refuses)


def compensation_cancelled(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _compensation(db, rng, "cancelled")


def compensation_delayed(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _compensation(db, rng, "delayed")


def refuse_compensation(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    status = _pick(rng, ["cancelled", "delayed"])
    found = _active_reservations(
        db, lambda r: bool(_disrupted(db, r, status)) and _eligible_compensation(db, r) is None
    )
    reservation = _pick(rng, found)
    flight = _disrupted(db, reservation, status)[0]
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    script.call("get_flight_status", flight_number=flight["flight_number"], date=flight["date"])
    script.say(
        f"I'm sorry about flight {flight['flight_number']} on {flight['date']}, which was "
        f"{status}. Compensation is for silver and gold members, insured reservations and "
        "business class; you are a regular member and this reservation is in "
        f"{_cabin(reservation['cabin'])} without insurance, so it is not eligible."
    )
    says = _complaint(db, reservation, flight) + " I want compensation."
    refuses = ("You do not want to cancel or change the reservation.",)
    request = Request(says, expects=("not eligible",))
    return _draft(rng, user, says, facts, [request], script, refuses)


def cancel_and_compensate(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    found = _active_reservations(
        db,
        lambda r: (
            bool(_airline_cancelled(db, r))
            and not _flown(db, r)
            and _eligible_compensation(db, r) is not None
        ),
    )
    reservation = _pick(rng, found)
    flight = _airline_cancelled(db, reservation)[0]
    user = db["users"][reservation["user_id"]]
    script = _Script()
    facts = _identify(script, db, rng, user, reservation)
    script.call("get_flight_status", flight_number=flight["flight_number"], date=flight["date"])
    cancel, _ = _cancel_request(
        db,
        reservation,
        script,
        f"Flight {flight['flight_number']} on {flight['date']} was cancelled by the airline",
    )
    cancel_says = (
        f"A flight of {_trip(reservation)} was cancelled, so I want to cancel the whole "
        "reservation and get a refund."
    )
    why = str(_eligible_compensation(db, reservation))
    compensate = _compensate(db, reservation, flight, script, why)
    complaint = (
        "Also, I'm really unhappy that the airline cancelled my flight; it ruined my plans. "
        "What can you do about it?"
    )
    requests = [_with_says(cancel, cancel_says), _with_says(compensate, complaint)]
    return _draft(rng, user, f"Hi. {cancel_says}", facts, requests, script)


# ----------------------------------------------------------------------- bookings


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


def book_change_cabin(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def book_certificate(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


# ----------------------------------------------------------------------- refusal, then a change


def refuse_then_change(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


TEMPLATES = (
    TaskTemplate("cancel_within_24_hours", "easy", cancel_recent),
    TaskTemplate("cancel_business", "easy", cancel_business),
    TaskTemplate("refuse_cancellation", "easy", refuse_cancel),
    TaskTemplate("add_bags", "easy", add_bags),
    TaskTemplate("fix_passenger", "easy", fix_passenger),
    TaskTemplate("flight_status", "easy", flight_status),
    TaskTemplate("book_one_way", "easy", book_one_way),
    TaskTemplate("cancel_airline_cancelled", "medium", cancel_airline),
    TaskTemplate("cancel_insured_illness", "medium", cancel_insured),
    TaskTemplate("refuse_insured_cancellation", "medium", refuse_insured),
    TaskTemplate("book_round_trip", "medium", book_round_trip),
    TaskTemplate("book_bags_insurance", "medium", book_bags_insurance),
    TaskTemplate("book_certificate_and_card", "medium", book_certificate),
    TaskTemplate("change_date", "medium", change_date),
    TaskTemplate("upgrade_business", "medium", upgrade),
    TaskTemplate("refuse_basic_economy_change", "medium", refuse_basic_change),
    TaskTemplate("compensation_cancelled", "medium", compensation_cancelled),
    TaskTemplate("compensation_delayed", "medium", compensation_delayed),
    TaskTemplate("refuse_compensation", "medium", refuse_compensation),
    TaskTemplate("book_onestop", "hard", book_onestop),
    TaskTemplate("book_change_of_mind_cabin", "hard", book_change_cabin),
    TaskTemplate("change_date_change_of_mind", "hard", change_date_mind),
    TaskTemplate("cancel_and_add_bags", "hard", cancel_and_bags),
    TaskTemplate("refused_cancellation_then_change", "hard", refuse_then_change),
    TaskTemplate("fix_passenger_and_upgrade", "hard", fix_and_upgrade),
    TaskTemplate("cancel_and_compensation", "hard", cancel_and_compensate),
)


class AirlineDomain(Domain):
    """Horizon Air Travel's customer service; see the module docstring."""

    name = "airline"
    title = "a customer-service agent of an airline, Horizon Air Travel"
    policy = POLICY
    auth_tools = frozenset({"get_user_details"})
    end_tools = frozenset({"transfer_to_human_agents"})
    vocabularies = (("available", "delayed", "cancelled", "landed"),)

    def owner(self, db: DB, name: str, arguments: Mapping[str, Any], result: Any) -> str | None:
        if "reservation_id" in arguments:
            return str(_reservation(db, arguments["reservation_id"])["user_id"])
        return str(arguments["user_id"]) if "user_id" in arguments else None

    def build_db(self, seed: int) -> DB:
        return build_airline_db(seed)

    def agent_tools(self) -> list[Tool]:
        return list(TOOLS)

    def templates(self) -> list[TaskTemplate]:
        return list(TEMPLATES)
