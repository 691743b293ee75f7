"""The telecom domain: its database, tools, checks and every template's oracle script."""

from __future__ import annotations

import dataclasses
import json
import pickle
import re
from typing import Any

import numpy as np
import pytest

from agentgym.envs.usersim.dialogue import Dialogue, judge, rehearse
from agentgym.envs.usersim.domain import (
    DB,
    Move,
    TaskDraft,
    TaskTemplate,
    ToolError,
    db_hash,
    normalize,
)
from agentgym.envs.usersim.domains.telecom import TelecomDomain
from agentgym.envs.usersim.domains.telecom.data_model import MAX_REFUEL_GB, _faults

DOMAIN = TelecomDomain()
TEMPLATES = DOMAIN.templates()
AGENT = {tool.name: tool for tool in DOMAIN.agent_tools()}
USER = {tool.name: tool for tool in DOMAIN.user_tools()}
MAX_DRAWS = 50
READ_ONLY_DB = DOMAIN.db()  # what the templates draw from (they must not change it)


def draw(template: TaskTemplate, seed: int) -> TaskDraft:
    """What the task set does: redraw from the same generator until a draft fits."""
    rng = np.random.default_rng(seed)
    for _ in range(MAX_DRAWS):
        draft = template.draw(READ_ONLY_DB, rng)
        if draft is not None:
            return draft
    raise AssertionError(f"{template.name} drew nothing in {MAX_DRAWS} draws (seed {seed})")


def line_where(db: DB, faults: str = "", **fields: Any) -> dict[str, Any]:
    """The first line (by id) with exactly these faults and these field values."""
    wanted = frozenset(faults.split())
    for _, line in sorted(db["lines"].items()):
        if _faults(db, line) == wanted and all(line[k] == v for k, v in fields.items()):
            return line
    raise AssertionError(f"no line with faults {faults!r} and {fields}")


def mine(line: dict[str, Any]) -> dict[str, Any]:
    """The context of the user whose own phone is ``line``'s."""
    return {"phone_number": line["phone_number"]}


def signed_in(line: dict[str, Any]) -> Dialogue:
    """A dialogue with the holder of ``line`` (their phone is the user's own), whose agent has
    authenticated them."""
    draft = draw(TEMPLATES[0], 0)
    scenario = dataclasses.replace(draft.scenario, context=mine(line))
    dialogue = Dialogue(DOMAIN, DOMAIN.db(), scenario)
    name = dialogue.db["customers"][line["customer_id"]]["name"]
    dialogue.call(
        "get_customer_by_phone", {"phone_number": line["phone_number"], "full_name": name}
    )
    return dialogue


# ------------------------------------------------------------------ the database


def test_build_db_is_deterministic_and_sized():
    db = DOMAIN.build_db(0)
    assert json.dumps(db, sort_keys=True) == json.dumps(DOMAIN.build_db(0), sort_keys=True)
    assert db != DOMAIN.build_db(1)
    assert len(db["customers"]) == 120
    assert len(db["lines"]) == len(db["devices"]) == 200
    assert len(db["plans"]) == 4
    assert set(db) == {"customers", "lines", "plans", "devices"}  # no session table
    for line in db["lines"].values():
        assert db["devices"][line["phone_number"]]["line_id"] == line["line_id"]
        assert line["line_id"] in db["customers"][line["customer_id"]]["line_ids"]
    json.dumps(db, allow_nan=False)  # JSON values only


def test_unpaid_suspensions_go_with_an_overdue_bill():
    db = DOMAIN.db()
    for line in db["lines"].values():
        customer = db["customers"][line["customer_id"]]
        overdue = any(bill["status"] == "overdue" for bill in customer["bills"])
        if line["suspension_reason"] == "unpaid_bill":
            assert overdue and len(customer["line_ids"]) == 1
        assert (customer["account_status"] == "past_due") == overdue


# ------------------------------------------------------------------ templates and oracle


def test_templates_cover_difficulties_and_every_write_tool():
    assert len(TEMPLATES) >= 20
    assert len({t.name for t in TEMPLATES}) == len(TEMPLATES)
    for difficulty in ("easy", "medium", "hard"):
        assert sum(t.difficulty == difficulty for t in TEMPLATES) >= 5
    called = {m.call for t in TEMPLATES for s in range(3) for m in draw(t, s).moves if m.call}
    assert {name for name, tool in AGENT.items() if tool.writes} <= called
    used = {name for t in TEMPLATES for s in range(3) for m in draw(t, s).moves
            for name, _ in m.user_calls}  # fmt: skip
    assert {name for name, tool in USER.items() if tool.writes} <= used


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_template_draws_for_many_seeds(template: TaskTemplate):
    drafts = [draw(template, seed) for seed in range(25)]
    assert all(d.moves and d.scenario.requests for d in drafts)
    assert db_hash(READ_ONLY_DB) == db_hash(DOMAIN.db())
    assert draw(template, 7) == draw(template, 7)  # same seed, same draft


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_oracle_script_scores_one(template: TaskTemplate):
    for seed in range(4):
        draft = draw(template, seed)
        dialogue = rehearse(DOMAIN, draft)
        verdict = judge(DOMAIN, draft, dialogue)
        assert dialogue.ended and dialogue.ended_by == "the user ended it", dialogue.transcript
        assert verdict.score == 1.0, verdict.details
        assert dialogue.tool_errors == 0
        assert dialogue.violations == []


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_messages_trigger_exactly_their_user_calls(template: TaskTemplate):
    for seed in range(3):
        for move in draw(template, seed).moves:
            if move.say is not None:
                triggered = [t.name for t in USER.values() if t.triggered_by(normalize(move.say))]
                assert triggered == [name for name, _ in move.user_calls], move.say


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_a_do_nothing_agent_scores_zero(template: TaskTemplate):
    draft = draw(template, 0)
    dialogue = Dialogue(DOMAIN, DOMAIN.db(), draft.scenario)
    dialogue.open()
    for _ in range(10):
        if dialogue.ended:
            break
        dialogue.say("ok")
    assert dialogue.ended
    assert judge(DOMAIN, draft, dialogue).score == 0.0


def test_read_only_tasks_require_their_outputs():
    for name in ("data_remaining", "overdue_amount", "plan_question"):
        template = next(t for t in TEMPLATES if t.name == name)
        draft = draw(template, 0)
        assert draft.outputs
        assert not any(m.call and AGENT[m.call].writes for m in draft.moves)


def test_a_write_without_confirmation_is_a_violation():
    template = next(t for t in TEMPLATES if t.name == "suspended_unpaid")
    draft = draw(template, 0)
    at = next(i for i, m in enumerate(draft.moves) if m.call == "pay_bill")
    skipped = TaskDraft(draft.scenario, draft.moves[: at - 1] + draft.moves[at:])
    dialogue = rehearse(DOMAIN, skipped)
    assert any("pay_bill" in v and "confirmation" in v for v in dialogue.violations)
    assert judge(DOMAIN, skipped, dialogue).score == 0.0


def test_a_write_before_authentication_is_refused():
    db = DOMAIN.db()
    line = line_where(db, "roaming_line")
    dialogue = Dialogue(DOMAIN, db, draw(TEMPLATES[0], 0).scenario)
    with pytest.raises(ToolError, match="not authenticated"):
        dialogue.call("enable_roaming", {"line_id": line["line_id"]})
    assert dialogue.violations and dialogue.db["lines"][line["line_id"]]["roaming_enabled"] is False


def test_a_wrong_name_does_not_authenticate():
    db = DOMAIN.db()
    line = line_where(db)
    dialogue = Dialogue(DOMAIN, db, draw(TEMPLATES[0], 0).scenario)
    with pytest.raises(ToolError, match="does not match"):
        dialogue.call(
            "get_customer_by_phone",
            {"phone_number": line["phone_number"], "full_name": "Nobody Atall"},
        )
    assert not dialogue.authenticated


def test_phone_numbers_are_found_however_written():
    db = DOMAIN.db()
    before = db_hash(db)
    line = line_where(db)
    name = db["customers"][line["customer_id"]]["name"]
    area, mid, last = line["phone_number"].split("-")
    for written in (f"({area}) {mid}-{last}", f"+1 {area} {mid} {last}", area + mid + last):
        found = AGENT["get_customer_by_phone"].function(db, written, name.upper())
        assert found["customer_id"] == line["customer_id"]
    assert db_hash(db) == before  # authentication is a pure read
    assert not AGENT["get_customer_by_phone"].writes


def test_every_scenario_names_the_phone_it_is_about():
    for template in TEMPLATES:
        draft = draw(template, 0)
        phone = draft.scenario.context["phone_number"]
        assert set(draft.scenario.context) == {"phone_number"}
        auth = next(m for m in draft.moves if m.call == "get_customer_by_phone")
        assert auth.arguments["phone_number"] == phone
        assert phone in draft.scenario.persona
        for request in draft.scenario.requests:
            assert request.done_when in (None, f"mobile_data_works:{phone}", f"fast_data:{phone}")


# ------------------------------------------------------------------ user tools and checks


def test_user_tools_act_on_the_users_own_phone_only():
    db = DOMAIN.db()
    line = line_where(db, "airplane")
    phone, context = line["phone_number"], mine(line)
    # before (and without) any authentication: the user's phone is theirs
    assert USER["check_status_bar"].function(db, context)["signal"].startswith("none, airplane")
    assert "airplane" in DOMAIN.user_view(db, context)
    assert not DOMAIN.checks()["mobile_data_works"](db, context)  # bare: the user's own phone
    before = json.loads(json.dumps(db["devices"]))
    USER["set_airplane_mode"].function(db, context, on=False)
    changed = [key for key, device in db["devices"].items() if device != before[key]]
    assert changed == [phone]
    assert DOMAIN.checks()["mobile_data_works"](db, context)
    assert re.search(r"Mobile data: [45]G icon", DOMAIN.user_view(db, context))


def test_user_tools_in_a_dialogue_act_on_the_scenarios_phone():
    line = line_where(DOMAIN.db(), "airplane")
    dialogue = signed_in(line)
    phone = line["phone_number"]
    assert not dialogue.check(f"mobile_data_works:{phone}")
    assert not dialogue.check("mobile_data_works")  # bare: the user's own phone
    assert "airplane" in DOMAIN.user_view(dialogue.db, dialogue.scenario.context)
    USER["set_airplane_mode"].function(dialogue.db, dialogue.scenario.context, on=False)
    assert dialogue.check(f"mobile_data_works:{phone}") and dialogue.check("has_service")
    assert "Mobile data:" in DOMAIN.user_view(dialogue.db, dialogue.scenario.context)


def test_user_view_shows_the_users_phone_from_the_start():
    draft = draw(next(t for t in TEMPLATES if t.name == "airplane_mode"), 0)
    dialogue = Dialogue(DOMAIN, DOMAIN.db(), draft.scenario)
    assert not dialogue.authenticated
    view = DOMAIN.user_view(dialogue.db, draft.scenario.context)
    assert view.startswith("Signal: none, airplane mode icon shown.")
    assert "Mobile data: no mobile data icon" in view


def test_slow_data_is_fixed_on_the_phone():
    line = line_where(DOMAIN.db(), "3g saver")
    db = signed_in(line).db
    phone, context = line["phone_number"], mine(line)
    checks = DOMAIN.checks()
    assert checks[f"mobile_data_works:{phone}"](db, {})
    assert not checks[f"fast_data:{phone}"](db, {}) and not checks["fast_data"](db, context)
    assert USER["run_speed_test"].function(db, context)["rating"] == "very slow"
    USER["set_network_mode"].function(db, context, mode="5g")
    USER["set_data_saver"].function(db, context, on=False)
    assert checks[f"fast_data:{phone}"](db, {}) and checks["fast_data"](db, context)
    assert USER["run_speed_test"].function(db, context)["rating"] == "fast"
    with pytest.raises(ToolError, match="does not exist"):
        USER["set_network_mode"].function(db, context, mode="6g")


def test_check_names():
    checks = DOMAIN.checks()
    assert "mobile_data_works:415-555-0000" in checks and "fast_data" in checks
    assert "signal_strength:415-555-0000" not in checks
    db = DOMAIN.db()
    healthy = line_where(db)
    assert not checks["has_service:000-000-0000"](db, mine(healthy))  # no such phone
    assert checks[f"has_service:{healthy['phone_number']}"](db, {})  # kind:phone, any context
    assert checks["has_service"](db, mine(healthy))  # bare: the user's own phone
    assert not checks["has_service"](db, {})  # no phone of their own
    assert set(checks) == {"has_service", "mobile_data_works", "fast_data"}
    assert DOMAIN.user_view(db, {}) == ""
    assert DOMAIN.user_view(db, mine(healthy)).startswith("Signal: 4 bars")


def test_refuel_is_charged_to_the_open_bill():
    db = DOMAIN.db()
    line = line_where(db, "over_limit", data_refuel_gb=0)
    customer = db["customers"][line["customer_id"]]
    open_bill = dict(next(b for b in customer["bills"] if b["status"] == "open"))
    price = db["plans"][line["plan_id"]]["refuel_price_per_gb"]
    result = AGENT["refuel_data"].function(db, line["line_id"], 2)
    assert result["cost"] == round(2 * price, 2)
    bill = next(b for b in customer["bills"] if b["bill_id"] == open_bill["bill_id"])
    assert bill["amount"] == round(open_bill["amount"] + 2 * price, 2)
    assert db["lines"][line["line_id"]]["data_refuel_gb"] == 2


def test_pay_then_resume():
    db = DOMAIN.db()
    line = line_where(db, "suspended")
    customer = db["customers"][line["customer_id"]]
    bill = next(b for b in customer["bills"] if b["status"] == "overdue")
    method = customer["payment_methods"][0]["payment_method_id"]
    with pytest.raises(ToolError, match="pay it first"):
        AGENT["resume_line"].function(db, line["line_id"])
    AGENT["pay_bill"].function(db, customer["customer_id"], bill["bill_id"], method)
    assert customer["account_status"] == "active"
    AGENT["resume_line"].function(db, line["line_id"])
    assert db["lines"][line["line_id"]]["status"] == "active"


# ------------------------------------------------------------------ tools refuse bad values


def _bad_calls(db: DB) -> list[tuple[str, dict[str, Any], str]]:
    healthy = line_where(db)
    customer = db["customers"][healthy["customer_id"]]
    paid = next(b for b in customer["bills"] if b["status"] == "paid")
    unpaid = line_where(db, "suspended")
    debtor = db["customers"][unpaid["customer_id"]]
    overdue = next(b for b in debtor["bills"] if b["status"] == "overdue")
    lost = line_where(db, "suspended_other")
    capped = next(
        line for _, line in sorted(db["lines"].items())
        if line["status"] == "active" and line["data_refuel_gb"] == 2
    )  # fmt: skip
    roaming = line_where(db, "", roaming_enabled=True)
    other_plan = next(p for p in db["plans"] if p != healthy["plan_id"])
    cid, lid = customer["customer_id"], healthy["line_id"]
    return [
        ("get_customer_by_phone", {"phone_number": "999-555-0000", "full_name": "X"}, "no line"),
        ("get_customer_by_id", {"customer_id": "C1"}, "no customer"),
        ("get_details_by_id", {"id": "Z9"}, "nothing has the id"),
        ("get_bills", {"customer_id": "nobody"}, "no customer"),
        ("get_line_details", {"line_id": "L0"}, "no line has the id"),
        ("get_plan_details", {"plan_id": "P-GOLD"}, "no plan"),
        ("get_data_usage", {"line_id": "#L1"}, "no line has the id"),
        ("pay_bill", {"customer_id": cid, "bill_id": "B0", "payment_method_id": "x"}, "no bill"),
        (
            "pay_bill",
            {"customer_id": cid, "bill_id": paid["bill_id"], "payment_method_id": "x"},
            "not overdue",
        ),
        (
            "pay_bill",
            {
                "customer_id": debtor["customer_id"],
                "bill_id": overdue["bill_id"],
                "payment_method_id": customer["payment_methods"][0]["payment_method_id"],
            },
            "no payment method",
        ),
        ("resume_line", {"line_id": lid}, "not suspended"),
        ("resume_line", {"line_id": lost["line_id"]}, "human agent"),
        ("resume_line", {"line_id": unpaid["line_id"]}, "pay it first"),
        ("refuel_data", {"line_id": unpaid["line_id"], "gb": 1}, "only active lines"),
        ("refuel_data", {"line_id": lid, "gb": 0}, "at least 1"),
        ("refuel_data", {"line_id": capped["line_id"], "gb": MAX_REFUEL_GB}, "at most 3 GB"),
        ("change_plan", {"line_id": lid, "plan_id": healthy["plan_id"]}, "already on"),
        ("change_plan", {"line_id": lid, "plan_id": "P-NONE"}, "no plan"),
        ("change_plan", {"line_id": unpaid["line_id"], "plan_id": other_plan}, "resume it"),
        ("enable_roaming", {"line_id": roaming["line_id"]}, "already enabled"),
        ("enable_roaming", {"line_id": unpaid["line_id"]}, "needs an active line"),
        ("disable_roaming", {"line_id": line_where(db, "roaming_line")["line_id"]}, "already"),
    ]


def test_each_tool_rejects_bad_values():
    db = DOMAIN.db()
    before = json.dumps(db, sort_keys=True)
    calls = _bad_calls(db)
    assert {name for name, _, _ in calls} >= {
        name for name in AGENT if name not in ("list_plans", "transfer_to_human_agents")
    }
    for name, arguments, message in calls:
        with pytest.raises(ToolError, match=message):
            AGENT[name].function(db, **arguments)
    assert json.dumps(db, sort_keys=True) == before  # a refused call changes nothing


def test_transfer_ends_the_conversation():
    dialogue = Dialogue(DOMAIN, DOMAIN.db(), draw(TEMPLATES[0], 0).scenario)
    dialogue.call("transfer_to_human_agents", {"summary": "SIM locked by PIN"})
    assert dialogue.ended and "transfer_to_human_agents" in dialogue.ended_by


def test_moves_are_actions():
    move = draw(TEMPLATES[0], 0).moves[1]
    assert isinstance(move, Move) and move.action() == {
        "name": "get_customer_by_phone",
        "arguments": dict(move.arguments),
    }


def test_a_dialogue_pickles():
    """The env snapshots dialogues: every tool function must be picklable."""
    dialogue = rehearse(DOMAIN, draw(TEMPLATES[0], 0))
    copy = pickle.loads(pickle.dumps(dialogue))
    assert copy.db == dialogue.db
