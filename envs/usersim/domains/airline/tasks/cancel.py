"""Airline templates: cancellations, allowed and refused by the policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Move,
    Request,
    TaskDraft,
)
from agentgym.envs.usersim.domains.airline.data_model import DAY_AGO, _flown, _pick
from agentgym.envs.usersim.domains.airline.tasks.script import (
    ILLNESSES,
    OTHER_REASONS,
    _active_reservations,
    _airline_cancelled,
    _cabin,
    _draft,
    _draw_cancel,
    _identify,
    _Script,
    _trip,
)


def cancel_within_24_hours(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def cancel_airline_cancelled(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def cancel_insured_illness(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def refuse_cancellation(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _refusal(
        db,
        rng,
        lambda r: _not_cancellable(db, r),
        lambda r: f"I want to cancel {_trip(r)} and get my money back; my plans changed.",
        _why_not_cancellable,
        lookups=_status_lookups,
    )


def refuse_insured_cancellation(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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
