"""The airline agent's tools: reads, bookings, changes, cancellations, certificates, and the
transfer to a human agent. Each refuses what the data forbids, as a real API would.
"""

from __future__ import annotations

import ast
import copy
import datetime
import itertools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agentgym.envs.usersim.domain import (
    DB,
    Tool,
    ToolError,
)
from agentgym.envs.usersim.domains.airline.data_model import (
    BAG_FEE,
    CABINS,
    DATES,
    FREE_BAGS,
    INSURANCE_FEE,
    MAX_PASSENGERS,
    NOW,
    TODAY,
    _active,
    _code,
    _digest,
    _flight_day,
    _flown,
    _free_bags,
    _price,
    _reservation,
    _round,
    _seats_left,
    _user,
)


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


def _seats(db: DB, flights: Iterable[Mapping[str, Any]], cabin: str, change: int) -> None:
    for flight in flights:
        day = db["flights"][flight["flight_number"]]["dates"][flight["date"]]
        if day["status"] in ("available", "delayed"):
            day["seats"][CABINS.index(cabin)] += change


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

    if len(expression) > 500:  # as retail's: a long unary chain exhausts the parser's memory
        raise ToolError("the expression is too long (500 characters at most)")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ToolError(f"cannot parse {expression!r} as arithmetic") from None
    try:
        return _round(value(tree.body))
    except ZeroDivisionError:
        raise ToolError(f"{expression!r} divides by zero") from None


def _check_bags(user: Mapping[str, Any], cabin: str, people: int, total: int, nonfree: int) -> None:
    """Refuse bag counts that are negative or whose non-free count is not what the user's
    membership and the cabin make it."""
    if total < 0 or nonfree < 0:
        raise ToolError("bag counts cannot be negative")
    free = _free_bags(user["membership"], cabin, people)
    if nonfree != max(0, total - free):
        raise ToolError(
            f"with {total} bags, nonfree_baggages must be "
            f"{max(0, total - free)}: a {user['membership']} member gets "
            f"{FREE_BAGS[user['membership']][cabin]} free bags per passenger in {cabin}"
        )


def _spend(user: Mapping[str, Any], payments: Sequence[tuple[str, float]]) -> None:
    """Take a booking's payments: a gift card's balance goes down, a certificate is used up."""
    for payment_id, amount in payments:
        method = user["payment_methods"][payment_id]
        if method["source"] == "gift_card":
            method["balance"] = _round(method["balance"] - amount)
        elif method["source"] == "certificate":
            del user["payment_methods"][payment_id]


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
    _check_bags(user, cabin, len(people), total_baggages, nonfree_baggages)
    insured = INSURANCE_FEE * len(people) if insurance == "yes" else 0.0
    total = _round(sum(prices) * len(people) + insured + BAG_FEE * nonfree_baggages)
    _check_payments(user, payments, total)
    _spend(user, payments)
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
    reservation: dict[str, Any] = {
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
