"""Airline templates: flight status, and compensation for a cancelled or delayed flight."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Request,
    TaskDraft,
)
from agentgym.envs.usersim.domains.airline.data_model import COMPENSATION, TODAY, _flown, _pick
from agentgym.envs.usersim.domains.airline.tasks.script import (
    _active_reservations,
    _airline_cancelled,
    _cabin,
    _cancel_request,
    _city,
    _day,
    _dollars,
    _draft,
    _eligible_compensation,
    _identify,
    _money,
    _Script,
    _status,
    _trip,
    _with_says,
)


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


def cancel_and_compensation(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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
