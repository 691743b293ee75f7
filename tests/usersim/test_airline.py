"""The airline domain: its database, its tools' refusals, and every template's oracle script
played against the scripted user (it must score 1; doing nothing, or skipping a step of the
policy, must not)."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hash_seeds import outputs_under_two_hash_seeds

from agentgym.envs.usersim.dialogue import Dialogue, judge, rehearse
from agentgym.envs.usersim.domain import Move, TaskDraft, ToolError, db_hash, run_tool
from agentgym.envs.usersim.domains.airline import AirlineDomain
from agentgym.envs.usersim.domains.airline.data_model import (
    CABINS,
    DAY_AGO,
    TODAY,
    build_airline_db,
)

DOMAIN = AirlineDomain()
TEMPLATES = {t.name: t for t in DOMAIN.templates()}
TOOLS = {t.name: t for t in DOMAIN.agent_tools()}
WRITE_TOOLS = {name for name, tool in TOOLS.items() if tool.writes}
MAX_DRAWS = 50  # as the task set (envs/usersim/env.py)


SHARED = DOMAIN.db()  # templates only read the database: one copy serves every draw


def draw(name: str, seed: int) -> TaskDraft:
    """A template's draft for ``seed``, redrawing on ``None`` as the task set does."""
    rng, db = np.random.default_rng(seed), SHARED
    for _ in range(MAX_DRAWS):
        draft = TEMPLATES[name].draw(db, rng)
        if draft is not None:
            return draft
    raise AssertionError(f"{name} found nothing that fits in {MAX_DRAWS} draws (seed {seed})")


def call(db: dict[str, Any], name: str, **arguments: Any) -> Any:
    return run_tool(TOOLS, db, name, arguments)


# ------------------------------------------------------------------------- the database


def test_the_database_is_deterministic_and_of_the_intended_size():
    db = build_airline_db(0)
    assert db == build_airline_db(0)
    assert db != build_airline_db(1)
    assert {table: len(rows) for table, rows in db.items() if table != "flights"} == {
        "airports": 12,
        "users": 150,
        "reservations": 400,
    }
    assert 120 <= len(db["flights"]) <= 320
    assert Counter(r["status"] for r in db["reservations"].values())["active"] > 300


def test_the_database_does_not_depend_on_the_string_hash_salt():
    code = (
        "import numpy as np\n"
        "from agentgym.envs.usersim.domain import db_hash\n"
        "from agentgym.envs.usersim.domains.airline import AirlineDomain\n"
        "d = AirlineDomain()\n"
        "print(db_hash(d.db()))\n"
        "for t in d.templates()[::5]:\n"
        "    print(repr(t.draw(d.db(), np.random.default_rng(3))))\n"
    )
    assert len(outputs_under_two_hash_seeds(code)) == 1


def test_the_records_are_consistent():
    db = DOMAIN.db()
    for reservation in db["reservations"].values():
        user = db["users"][reservation["user_id"]]
        assert reservation["reservation_id"] in user["reservations"]
        assert len(reservation["reservation_id"]) == 6 and reservation["reservation_id"].isupper()
        assert 1 <= len(reservation["passengers"]) <= 5 and reservation["cabin"] in CABINS
        for flight in reservation["flights"]:
            assert flight["date"] in db["flights"][flight["flight_number"]]["dates"]
        paid = sum(p["amount"] for p in reservation["payment_history"])
        assert (paid == 0) == (reservation["status"] == "cancelled")
        assert reservation["created_at"] < "2026-05-15T15:00:00"
        for payment in reservation["payment_history"]:
            assert payment["payment_id"] in user["payment_methods"]
    recent = [r for r in db["reservations"].values() if r["created_at"] >= DAY_AGO]
    assert len(recent) >= 10


# ------------------------------------------------------------------------- the tools


@pytest.fixture
def db() -> dict[str, Any]:
    return DOMAIN.db()


def first(db: dict[str, Any], test: Any) -> dict[str, Any]:
    return next(r for r in db["reservations"].values() if test(r))


def status(db: dict[str, Any], flight: dict[str, Any]) -> str:
    return db["flights"][flight["flight_number"]]["dates"][flight["date"]]["status"]


def upcoming(db: dict[str, Any], r: dict[str, Any]) -> bool:
    return r["status"] == "active" and all(
        f["date"] > TODAY and status(db, f) == "available" for f in r["flights"]
    )


def bookable(db: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """A flight number, its record and a date it can be booked on (seats in every cabin)."""
    for number, flight in db["flights"].items():
        for date, day in flight["dates"].items():
            if date > TODAY and day["status"] == "available" and min(day["seats"]) >= 2:
                return number, flight, date
    raise AssertionError("no bookable flight")


def booking(db: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Arguments of a valid one-way economy booking for one passenger, with ``changes``."""
    number, flight, date = bookable(db)
    user = next(
        u
        for u in db["users"].values()
        if any(m["source"] == "gift_card" for m in u["payment_methods"].values())
        and u["membership"] == "regular"
    )
    gift = next(m for m in user["payment_methods"].values() if m["source"] == "gift_card")
    card = next(m for m in user["payment_methods"].values() if m["source"] == "credit_card")
    price = flight["dates"][date]["prices"][1]
    on_gift = min(gift["balance"], 10.0)
    arguments = {
        "user_id": user["user_id"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": number, "date": date}],
        "passengers": [{**user["name"], "dob": user["dob"]}],
        "payment_methods": [
            {"payment_id": card["id"], "amount": round(price - on_gift, 2)},
            {"payment_id": gift["id"], "amount": on_gift},
        ],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    return arguments | changes


def test_a_booking_takes_seats_and_gift_card_money_and_is_listed_for_the_user(db):
    arguments = booking(db)
    user = db["users"][arguments["user_id"]]
    gift = next(m for m in user["payment_methods"].values() if m["source"] == "gift_card")
    balance = gift["balance"]
    flight = arguments["flights"][0]
    seats = db["flights"][flight["flight_number"]]["dates"][flight["date"]]["seats"][1]
    reservation = call(db, "book_reservation", **arguments)
    assert db["reservations"][reservation["reservation_id"]]["status"] == "active"
    assert user["reservations"][-1] == reservation["reservation_id"]
    assert gift["balance"] == round(balance - arguments["payment_methods"][1]["amount"], 2)
    assert db["flights"][flight["flight_number"]]["dates"][flight["date"]]["seats"][1] == seats - 1
    assert reservation["created_at"] == "2026-05-15T15:00:00"
    again = DOMAIN.db()
    assert call(again, "book_reservation", **booking(again)) == reservation  # same id: replayable


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"user_id": "nobody_0000"}, "no user"),
        ({"origin": "XXX"}, "unknown airport"),
        ({"cabin": "first"}, "unknown cabin"),
        ({"flight_type": "return"}, "flight_type"),
        ({"insurance": True}, "insurance"),
        ({"flights": [{"flight_number": "HAT000", "date": "2026-05-20"}]}, "no flight"),
        ({"flights": [{"flight_number": "HAT1"}]}, "each flight"),
        ({"passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-13-01"}]}, "date"),
        ({"passengers": []}, "passengers"),
        ({"payment_methods": [{"payment_id": "credit_card_1", "amount": 1.0}]}, "no payment"),
        ({"total_baggages": 3, "nonfree_baggages": 0}, "nonfree_baggages must be 2"),
        ({"destination": "ZZZ"}, "unknown airport"),
    ],
)
def test_a_booking_with_a_bad_value_is_refused(db, changes, message):
    before = db_hash(db)
    with pytest.raises(ToolError, match=message):
        call(db, "book_reservation", **booking(db, **changes))
    assert db_hash(db) == before


def test_a_booking_must_be_paid_exactly_and_on_a_bookable_flight(db):
    arguments = booking(db)
    short = copy.deepcopy(arguments["payment_methods"])
    short[0]["amount"] -= 1
    with pytest.raises(ToolError, match="add up to"):
        call(db, "book_reservation", **(arguments | {"payment_methods": short}))
    number, day = next(
        (n, d)
        for n, f in db["flights"].items()
        for d, v in f["dates"].items()
        if v["status"] == "cancelled" and d > TODAY
    )
    flight = db["flights"][number]
    with pytest.raises(ToolError, match="cannot be booked"):
        call(
            db,
            "book_reservation",
            **booking(
                db,
                origin=flight["origin"],
                destination=flight["destination"],
                flights=[{"flight_number": number, "date": day}],
            ),
        )
    with pytest.raises(ToolError, match="must end there"):
        call(db, "book_reservation", **(arguments | {"destination": arguments["origin"]}))


def test_cancelling_refunds_every_payment_and_only_once(db):
    reservation = first(db, lambda r: upcoming(db, r))
    paid = sum(p["amount"] for p in reservation["payment_history"])
    result = call(db, "cancel_reservation", reservation_id=reservation["reservation_id"])
    assert result["status"] == "cancelled"
    assert sum(p["amount"] for p in result["payment_history"]) == 0 and paid > 0
    with pytest.raises(ToolError, match="already cancelled"):
        call(db, "cancel_reservation", reservation_id=reservation["reservation_id"])
    with pytest.raises(ToolError, match="no reservation"):
        call(db, "cancel_reservation", reservation_id="ZZZZZZ")


def test_a_reservation_with_a_flown_flight_cannot_be_cancelled(db):
    flown = first(
        db,
        lambda r: r["status"] == "active" and any(status(db, f) == "landed" for f in r["flights"]),
    )
    with pytest.raises(ToolError, match="already flown"):
        call(db, "cancel_reservation", reservation_id=flown["reservation_id"])


def test_an_upgrade_charges_the_difference_and_the_route_cannot_change(db):
    reservation = first(
        db,
        lambda r: (
            upcoming(db, r)
            and r["cabin"] == "economy"
            and all(
                db["flights"][f["flight_number"]]["dates"][f["date"]]["seats"][2]
                >= len(r["passengers"])
                for f in r["flights"]
            )
        ),
    )
    rid, people = reservation["reservation_id"], len(reservation["passengers"])
    user = db["users"][reservation["user_id"]]
    card = next(m for m in user["payment_methods"].values() if m["source"] == "credit_card")
    flights = [
        {"flight_number": f["flight_number"], "date": f["date"]} for f in reservation["flights"]
    ]
    business = sum(
        db["flights"][f["flight_number"]]["dates"][f["date"]]["prices"][2]
        for f in reservation["flights"]
    )
    paid = sum(f["price"] for f in reservation["flights"])
    other = next(f for f in db["flights"].values() if f["origin"] != reservation["origin"])
    with pytest.raises(ToolError, match="leaves from"):
        call(
            db,
            "update_reservation_flights",
            reservation_id=rid,
            cabin="economy",
            flights=[{"flight_number": other["flight_number"], "date": "2026-05-29"}],
            payment_id=card["id"],
        )
    result = call(
        db,
        "update_reservation_flights",
        reservation_id=rid,
        cabin="business",
        flights=flights,
        payment_id=card["id"],
    )
    assert result["cabin"] == "business"
    assert result["payment_history"][-1] == {
        "payment_id": card["id"],
        "amount": round((business - paid) * people, 2),
    }


def test_a_change_cannot_be_paid_with_a_certificate(db):
    reservation = first(
        db,
        lambda r: (
            upcoming(db, r)
            and any(
                m["source"] == "certificate"
                for m in db["users"][r["user_id"]]["payment_methods"].values()
            )
        ),
    )
    user = db["users"][reservation["user_id"]]
    certificate = next(m for m in user["payment_methods"].values() if m["source"] == "certificate")
    with pytest.raises(ToolError, match="credit card or gift card"):
        call(
            db,
            "update_reservation_flights",
            reservation_id=reservation["reservation_id"],
            cabin=reservation["cabin"],
            flights=[
                {"flight_number": f["flight_number"], "date": f["date"]}
                for f in reservation["flights"]
            ],
            payment_id=certificate["id"],
        )


def test_bags_can_only_be_added_with_the_right_allowance(db):
    reservation = first(db, lambda r: upcoming(db, r) and r["total_baggages"] >= 1)
    rid = reservation["reservation_id"]
    user = db["users"][reservation["user_id"]]
    card = next(m for m in user["payment_methods"].values() if m["source"] == "credit_card")
    with pytest.raises(ToolError, match="only be added"):
        call(
            db,
            "update_reservation_baggages",
            reservation_id=rid,
            total_baggages=0,
            nonfree_baggages=0,
            payment_id=card["id"],
        )
    with pytest.raises(ToolError, match="nonfree_baggages must be"):
        call(
            db,
            "update_reservation_baggages",
            reservation_id=rid,
            total_baggages=reservation["total_baggages"] + 20,
            nonfree_baggages=0,
            payment_id=card["id"],
        )
    with pytest.raises(ToolError, match="no payment method"):
        call(
            db,
            "update_reservation_baggages",
            reservation_id=rid,
            total_baggages=reservation["total_baggages"],
            nonfree_baggages=reservation["nonfree_baggages"],
            payment_id="credit_card_0000000",
        )


def test_passengers_can_be_corrected_but_not_added(db):
    reservation = first(db, lambda r: upcoming(db, r))
    rid, people = reservation["reservation_id"], reservation["passengers"]
    with pytest.raises(ToolError, match="cannot change"):
        call(
            db, "update_reservation_passengers", reservation_id=rid, passengers=[*people, people[0]]
        )
    with pytest.raises(ToolError, match="first_name"):
        call(db, "update_reservation_passengers", reservation_id=rid, passengers=[{"name": "A"}])
    fixed = [{**people[0], "first_name": "Corrected"}, *people[1:]]
    result = call(db, "update_reservation_passengers", reservation_id=rid, passengers=fixed)
    assert result["passengers"][0]["first_name"] == "Corrected"


def test_reads_and_certificates_refuse_bad_values(db):
    user_id = next(iter(db["users"]))
    with pytest.raises(ToolError, match="no user"):
        call(db, "get_user_details", user_id="Omar Hassan")
    with pytest.raises(ToolError, match="YYYY-MM-DD"):
        call(db, "get_flight_status", flight_number=next(iter(db["flights"])), date="May 20")
    with pytest.raises(ToolError, match="unknown airport"):
        call(db, "search_direct_flight", origin="New York", destination="BOS", date="2026-05-20")
    with pytest.raises(ToolError, match="past"):
        call(db, "search_onestop_flight", origin="JFK", destination="SEA", date="2026-05-11")
    with pytest.raises(ToolError, match="cannot calculate"):
        call(db, "calculate", expression="__import__('os')")
    with pytest.raises(ToolError, match="between"):
        call(db, "send_certificate", user_id=user_id, amount=-50)
    assert call(db, "calculate", expression="(120 + 80.5) * 2") == 401.0
    text = call(db, "send_certificate", user_id=user_id, amount=100)
    assert "certificate_" in text
    assert any(
        m["source"] == "certificate" and m["amount"] == 100.0
        for m in db["users"][user_id]["payment_methods"].values()
    )


def test_search_lists_only_bookable_flights(db):
    number, flight, date = bookable(db)
    rows = call(
        db,
        "search_direct_flight",
        origin=flight["origin"],
        destination=flight["destination"],
        date=date,
    )
    assert number in [row["flight_number"] for row in rows]
    assert all(row["status"] == "available" for row in rows)
    assert set(rows[0]["prices"]) == set(CABINS)


# ------------------------------------------------------------------------- the templates


def test_drawing_does_not_change_the_database():
    before = db_hash(SHARED)
    for name in TEMPLATES:
        draw(name, 5)
    assert db_hash(SHARED) == before == db_hash(DOMAIN.db())


def test_there_are_twenty_templates_over_three_difficulties_covering_every_write():
    counts = Counter(t.difficulty for t in TEMPLATES.values())
    assert len(TEMPLATES) >= 20 and min(counts[d] for d in ("easy", "medium", "hard")) >= 5
    written = {
        move.call for name in TEMPLATES for move in draw(name, 0).moves if move.call in WRITE_TOOLS
    }
    assert written == WRITE_TOOLS


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_draws_for_many_seeds_the_same_draft_for_the_same_seed(name):
    drafts = [draw(name, seed) for seed in range(25)]
    assert draw(name, 7) == drafts[7]
    assert len({repr(d.scenario) for d in drafts}) > 5  # the draws differ
    for draft in drafts:
        assert len(draft.moves) <= 40  # the env's max_episode_steps
        assert draft.scenario.facts[0].asked_by == ("user id",)
        assert "###STOP###" not in draft.scenario.opening


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_oracle_script_scores_one_against_the_scripted_user(name):
    for seed in (0, 11):
        draft = draw(name, seed)
        dialogue = rehearse(DOMAIN, draft)
        verdict = judge(DOMAIN, draft, dialogue)
        assert dialogue.ended and dialogue.ended_by == "the user ended it", dialogue.transcript
        assert verdict.score == 1.0, verdict.details
        assert dialogue.tool_errors == 0 and dialogue.violations == []


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_an_agent_that_does_nothing_scores_zero(name):
    draft = draw(name, 1)
    dialogue = Dialogue(DOMAIN, DOMAIN.db(), draft.scenario)
    dialogue.open()
    for _ in range(10):
        if not dialogue.ended:
            dialogue.say("ok")
    assert dialogue.ended  # the user gives up
    assert judge(DOMAIN, draft, dialogue).score == 0.0


def test_a_write_without_the_users_confirmation_is_a_violation():
    draft = draw("cancel_within_24_hours", 0)
    write = next(i for i, m in enumerate(draft.moves) if m.call == "cancel_reservation")
    assert draft.moves[write - 1].say and "confirm" in draft.moves[write - 1].say
    skipped = TaskDraft(draft.scenario, draft.moves[: write - 1] + draft.moves[write:])
    dialogue = rehearse(DOMAIN, skipped)
    assert any("without the user's explicit confirmation" in v for v in dialogue.violations)
    assert judge(DOMAIN, draft, dialogue).score == 0.0


def test_a_write_before_authentication_is_refused():
    draft = draw("cancel_within_24_hours", 0)
    write = next(m for m in draft.moves if m.call == "cancel_reservation")
    dialogue = Dialogue(DOMAIN, DOMAIN.db(), draft.scenario)
    dialogue.open()
    before = db_hash(dialogue.db)
    with pytest.raises(ToolError, match="not authenticated"):
        dialogue.call("cancel_reservation", write.arguments)
    assert dialogue.violations and db_hash(dialogue.db) == before


def test_a_change_of_mind_is_spoken_at_the_first_proposal_and_the_script_follows_it():
    draft = draw("book_change_of_mind_cabin", 2)
    request = draft.scenario.requests[0]
    dialogue = rehearse(DOMAIN, draft)
    replies = [text for role, text in dialogue.transcript if role == "user"]
    assert request.change in replies
    assert replies[replies.index(request.change) + 1] == "Yes, please go ahead."
    booked = next(m for m in draft.moves if m.call == "book_reservation")
    assert booked.arguments["cabin"] == "business"


def test_a_refusal_writes_nothing_and_an_agent_that_cancels_anyway_fails():
    draft = draw("refuse_cancellation", 0)
    assert not [m for m in draft.moves if m.call in WRITE_TOOLS]
    rid = next(
        m.arguments["reservation_id"] for m in draft.moves if m.call == "get_reservation_details"
    )
    eager = [
        *draft.moves[:-1],
        Move(say="I can cancel it. Please confirm (yes) that I should proceed."),
        Move(call="cancel_reservation", arguments={"reservation_id": rid}),
        draft.moves[-1],
    ]
    dialogue = rehearse(DOMAIN, TaskDraft(draft.scenario, tuple(eager)))
    assert judge(DOMAIN, draft, dialogue).score == 0.0


@pytest.mark.parametrize("domain", ["Airline", "Retail"])
def test_a_long_unary_chain_is_a_tool_error_not_a_crash(domain):
    # 8,000 unary minuses fit the action limit and made ast.parse raise MemoryError: the
    # agent's expression crashed the step (airline had no length limit; retail had one).
    import agentgym

    env = agentgym.make(f"usersim/{domain}-v2")
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    observation = env.step({"name": "calculate", "arguments": {"expression": "-" * 8000 + "1"}})[0]
    assert observation.startswith("Tool calculate failed") and "too long" in observation
    env.close()
