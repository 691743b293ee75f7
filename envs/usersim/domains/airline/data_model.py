"""The airline database: airports, users, flights and reservations, the generator that fills
them from a seed, and the lookups every tool and template reads ("now" is :data:`NOW`).
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    ToolError,
)

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


def _price(day: Mapping[str, Any], cabin: str) -> float:
    return float(day["prices"][CABINS.index(cabin)])


def _seats_left(day: Mapping[str, Any], cabin: str) -> int:
    return int(day["seats"][CABINS.index(cabin)])


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


def _drawn_legs(
    rng: np.random.Generator,
    flights: dict[str, dict[str, Any]],
    numbers: list[str],
    by_route: dict[tuple[str, str], list[str]],
) -> list[tuple[dict[str, Any], str]]:
    """A reservation's flights and dates: one out, and half the time one back a few days
    later when a flight flies the route back."""
    out = flights[_pick(rng, numbers)]
    first = int(rng.integers(len(DATES) - 2))
    legs = [(out, DATES[first])]
    returns = by_route.get((out["destination"], out["origin"]), [])
    if returns and rng.random() < 0.5:
        back = first + int(rng.integers(1, 6))
        if back < len(DATES):
            legs.append((flights[_pick(rng, returns)], DATES[back]))
    return legs


def _drawn_passengers(rng: np.random.Generator, user: dict[str, Any]) -> list[dict[str, Any]]:
    """The user, and sometimes one or two more: saved passengers or new people."""
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
    return people


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
        legs = _drawn_legs(rng, flights, numbers, by_route)
        out = legs[0][0]
        cabin = str(rng.choice(CABINS, p=[0.3, 0.45, 0.25]))
        people = _drawn_passengers(rng, user)
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
