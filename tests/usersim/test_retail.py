"""The retail domain: its database, its tools' refusals, and every template played by the oracle
against the scripted user (score 1) and by a do-nothing agent (score 0)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentgym.envs.usersim.dialogue import Dialogue, judge, rehearse
from agentgym.envs.usersim.domain import DB, Move, TaskDraft, TaskTemplate, ToolError, run_tool
from agentgym.envs.usersim.domains.retail import RetailDomain
from agentgym.envs.usersim.scripted import CONFIRM_CUES

DOMAIN = RetailDomain()
TEMPLATES = DOMAIN.templates()
TOOLS = {tool.name: tool for tool in DOMAIN.agent_tools()}
WRITES = {name for name, tool in TOOLS.items() if tool.writes}
MAX_DRAWS = 50
DB_FOR_DRAWS = DOMAIN.db()  # templates only read it (a test checks)


def draw(template: TaskTemplate, seed: int) -> TaskDraft:
    """The draft a task set draws: redraws from the same generator while the draw is None."""
    db, rng = DB_FOR_DRAWS, np.random.default_rng(seed)
    for _ in range(MAX_DRAWS):
        draft = template.draw(db, rng)
        if draft is not None:
            return draft
    raise AssertionError(f"{template.name} found nothing in {MAX_DRAWS} draws for seed {seed}")


def call(db: DB, name: str, **arguments):
    return run_tool(TOOLS, db, name, arguments)


def first(db: DB, status: str, where=lambda order: True) -> dict:
    return next(o for o in db["orders"].values() if o["status"] == status and where(o))


def other_variant(db: DB, item: dict, available: bool = True) -> dict:
    variants = db["products"][item["product_id"]]["variants"].values()
    return next(
        v for v in variants if v["item_id"] != item["item_id"] and v["available"] == available
    )


# ------------------------------------------------------------------------------ the database


def test_build_db_is_deterministic_and_of_the_intended_size():
    one, two = DOMAIN.build_db(0), DOMAIN.build_db(0)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert json.dumps(one) != json.dumps(DOMAIN.build_db(1))
    assert (len(one["users"]), len(one["products"]), len(one["orders"])) == (200, 30, 500)
    assert all(3 <= len(p["variants"]) <= 10 for p in one["products"].values())
    statuses = {o["status"] for o in one["orders"].values()}
    assert statuses == {"pending", "processed", "delivered", "cancelled"}
    assert all(len(o) == 9 and o.startswith("#W") for o in one["orders"])
    identities = {
        (u["name"]["first_name"], u["name"]["last_name"], u["address"]["zip"])
        for u in one["users"].values()
    }
    assert len(identities) == 200  # name and zip code find one user


def test_orders_add_up_and_belong_to_their_users():
    db = DOMAIN.db()
    for order_id, order in db["orders"].items():
        assert order_id in db["users"][order["user_id"]]["orders"]
        paid = order["payment_history"][0]
        assert paid["amount"] == round(sum(i["price"] for i in order["items"]), 2)
        assert paid["payment_method_id"] in db["users"][order["user_id"]]["payment_methods"]


# ------------------------------------------------------------------------------ the templates


def test_there_are_enough_templates_of_every_difficulty_covering_every_write():
    assert len(TEMPLATES) >= 20
    assert len({t.name for t in TEMPLATES}) == len(TEMPLATES)
    for difficulty in ("easy", "medium", "hard"):
        assert sum(t.difficulty == difficulty for t in TEMPLATES) >= 6
    used = {
        move.call
        for template in TEMPLATES
        for seed in range(3)
        for move in draw(template, seed).moves
    }
    assert used >= WRITES


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_every_template_draws_for_many_seeds(template):
    for seed in range(25):
        draft = draw(template, seed)
        assert draft.moves and draft.scenario.requests
        assert len(draft.moves) <= 36  # the env allows 40 steps
        assert all(r.writes or r.expects for r in draft.scenario.requests)
    assert DOMAIN.db() == DB_FOR_DRAWS  # drawing changed nothing


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_the_oracle_scores_one(template):
    for seed in (0, 1, 2):
        draft = draw(template, seed)
        dialogue = rehearse(DOMAIN, draft)
        verdict = judge(DOMAIN, draft, dialogue)
        assert dialogue.ended and dialogue.ended_by == "the user ended it", dialogue.transcript
        assert verdict.score == 1.0, verdict.details
        assert dialogue.tool_errors == 0 and dialogue.violations == []


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_doing_nothing_scores_zero(template):
    draft = draw(template, 4)
    idle = TaskDraft(draft.scenario, tuple(Move(say="ok") for _ in range(10)))
    dialogue = rehearse(DOMAIN, idle)
    assert dialogue.ended  # the scripted user loses patience
    assert judge(DOMAIN, draft, dialogue).score == 0.0


def test_skipping_the_confirmation_is_a_violation():
    template = next(t for t in TEMPLATES if t.name == "cancel_pending_order")
    draft = draw(template, 0)
    hasty = tuple(
        m for m in draft.moves if m.say is None or not any(c in m.say.lower() for c in CONFIRM_CUES)
    )
    dialogue = rehearse(DOMAIN, TaskDraft(draft.scenario, hasty))
    assert any("without the user's explicit confirmation" in v for v in dialogue.violations)
    assert judge(DOMAIN, draft, dialogue).score == 0.0


def test_a_write_before_authentication_is_refused():
    db = DOMAIN.db()
    order = first(db, "pending")
    template = next(t for t in TEMPLATES if t.name == "cancel_pending_order")
    dialogue = Dialogue(DOMAIN, db, draw(template, 0).scenario)
    dialogue.open()
    with pytest.raises(ToolError, match="not authenticated"):
        dialogue.call(
            "cancel_pending_order", {"order_id": order["order_id"], "reason": "no longer needed"}
        )
    assert db["orders"][order["order_id"]]["status"] == "pending"
    assert dialogue.violations and dialogue.tool_errors == 1


def test_a_change_of_mind_needs_the_second_proposal():
    template = next(t for t in TEMPLATES if t.name == "cancel_change_of_mind")
    draft = draw(template, 0)
    request = draft.scenario.requests[0]
    assert request.change and request.then_confirm != request.confirm
    writes = [m for m in draft.moves if m.call == "cancel_pending_order"]
    assert [m.arguments["order_id"].lower() for m in writes] == [request.then_confirm[0]]


# ------------------------------------------------------------------------------ the tools


def test_authentication_tools_find_users_and_refuse_strangers():
    db = DOMAIN.db()
    user = next(iter(db["users"].values()))
    name, zip_code = user["name"], user["address"]["zip"]
    assert call(db, "find_user_id_by_email", email=user["email"].upper()) == user["user_id"]
    found = call(
        db, "find_user_id_by_name_zip", first_name=name["first_name"],
        last_name=name["last_name"], zip=zip_code,
    )  # fmt: skip
    assert found == user["user_id"]
    with pytest.raises(ToolError, match="no user has the email"):
        call(db, "find_user_id_by_email", email="nobody@example.com")
    with pytest.raises(ToolError, match="zip code"):
        call(
            db, "find_user_id_by_name_zip", first_name=name["first_name"],
            last_name=name["last_name"], zip="00000",
        )  # fmt: skip


def test_reads_refuse_unknown_ids():
    db = DOMAIN.db()
    with pytest.raises(ToolError, match="unknown user id"):
        call(db, "get_user_details", user_id="nobody_1234")
    with pytest.raises(ToolError, match="with the '#'"):
        call(db, "get_order_details", order_id="W0000000")
    with pytest.raises(ToolError, match="unknown product id"):
        call(db, "get_product_details", product_id="123")
    products = call(db, "list_all_product_types")
    assert len(products) == 30 and "T-Shirt" in products


def test_calculate_does_arithmetic_and_nothing_else():
    db = DOMAIN.db()
    assert call(db, "calculate", expression="(24.99 + 13.5) * 2 - 1") == 75.98
    assert call(db, "calculate", expression="-$10 / 4") == -2.5
    for bad in ("__import__('os')", "2 ** 8", "1 +", "x + 1"):
        with pytest.raises(ToolError):
            call(db, "calculate", expression=bad)
    with pytest.raises(ToolError, match="divides by zero"):
        call(db, "calculate", expression="1 / 0")


def test_cancel_refunds_and_refuses_the_wrong_status_or_reason():
    db = DOMAIN.db()
    order = first(db, "pending")
    with pytest.raises(ToolError, match="reason must be"):
        call(db, "cancel_pending_order", order_id=order["order_id"], reason="too expensive")
    shipped = first(db, "delivered")
    with pytest.raises(ToolError, match="'delivered'"):
        call(db, "cancel_pending_order", order_id=shipped["order_id"], reason="no longer needed")
    result = call(db, "cancel_pending_order", order_id=order["order_id"], reason="no longer needed")
    assert result["status"] == "cancelled"
    refund = result["payment_history"][-1]
    assert refund["transaction_type"] == "refund"
    assert refund["amount"] == order["payment_history"][0]["amount"]


def test_cancel_refunds_a_gift_card_at_once():
    db = DOMAIN.db()

    def by_gift_card(order):
        return order["payment_history"][0]["payment_method_id"].startswith("gift_card")

    order = first(db, "pending", by_gift_card)
    method_id = order["payment_history"][0]["payment_method_id"]
    card = db["users"][order["user_id"]]["payment_methods"][method_id]
    before = card["balance"]
    call(db, "cancel_pending_order", order_id=order["order_id"], reason="ordered by mistake")
    assert card["balance"] == round(before + order["payment_history"][0]["amount"], 2)


def test_modify_items_checks_the_variant_and_happens_once():
    db = DOMAIN.db()
    order = first(db, "pending")
    item = order["items"][0]
    method = order["payment_history"][0]["payment_method_id"]
    oid = order["order_id"]

    def modify(old, new, payment=method):
        return call(
            db, "modify_pending_order_items", order_id=oid, item_ids=old, new_item_ids=new,
            payment_method_id=payment,
        )  # fmt: skip

    other_product = next(
        p for p in db["products"].values() if p["product_id"] != item["product_id"]
    )
    with pytest.raises(ToolError, match="same product"):
        modify([item["item_id"]], [next(iter(other_product["variants"]))])
    with pytest.raises(ToolError, match="not available"):
        modify([item["item_id"]], [other_variant(db, item, available=False)["item_id"]])
    with pytest.raises(ToolError, match="same variant"):
        modify([item["item_id"]], [item["item_id"]])
    with pytest.raises(ToolError, match="not in order"):
        modify(["0000000000"], [item["item_id"]])
    new = other_variant(db, item)
    with pytest.raises(ToolError, match="one new item per item"):
        modify([item["item_id"]], [new["item_id"], new["item_id"]])
    with pytest.raises(ToolError, match="is not one of"):
        modify([item["item_id"]], [new["item_id"]], payment="paypal_0000000")
    result = modify([item["item_id"]], [new["item_id"]])
    assert result["status"] == "pending (item modified)"
    assert result["items"][0]["item_id"] == new["item_id"]
    with pytest.raises(ToolError, match="only be modified once"):
        modify([new["item_id"]], [item["item_id"]])


def test_a_gift_card_must_cover_a_charge():
    db = DOMAIN.db()
    for order in db["orders"].values():
        methods = db["users"][order["user_id"]]["payment_methods"]
        card = next((m for m in methods.values() if m["source"] == "gift_card"), None)
        history = order["payment_history"]
        if order["status"] == "pending" and card and history[0]["payment_method_id"] != card["id"]:
            break
    card["balance"] = 0.0
    with pytest.raises(ToolError, match="not enough"):
        call(
            db, "modify_pending_order_payment", order_id=order["order_id"],
            payment_method_id=card["id"],
        )  # fmt: skip


def test_modify_payment_refuses_the_same_method():
    db = DOMAIN.db()
    order = first(db, "pending")
    method = order["payment_history"][0]["payment_method_id"]
    with pytest.raises(ToolError, match="already paid with"):
        call(
            db, "modify_pending_order_payment", order_id=order["order_id"], payment_method_id=method
        )


def test_address_changes_check_the_address_and_the_status():
    db = DOMAIN.db()
    address = {
        "address1": "1 Main Street", "address2": "", "city": "Austin", "state": "TX",
        "country": "USA", "zip": "78701",
    }  # fmt: skip
    pending, delivered = first(db, "pending"), first(db, "delivered")
    call(db, "modify_pending_order_address", order_id=pending["order_id"], **address)
    assert db["orders"][pending["order_id"]]["address"] == address
    with pytest.raises(ToolError, match="'delivered'"):
        call(db, "modify_pending_order_address", order_id=delivered["order_id"], **address)
    with pytest.raises(ToolError, match="five digits"):
        call(db, "modify_user_address", user_id=pending["user_id"], **{**address, "zip": "787"})
    with pytest.raises(ToolError, match="city must not be empty"):
        call(db, "modify_user_address", user_id=pending["user_id"], **{**address, "city": " "})
    with pytest.raises(ToolError, match="unknown user id"):
        call(db, "modify_user_address", user_id="nobody_1", **address)


def test_returns_need_a_delivered_order_and_an_allowed_refund_method():
    db = DOMAIN.db()

    def paid_by_card(order):
        methods = db["users"][order["user_id"]]["payment_methods"]
        original = order["payment_history"][0]["payment_method_id"]
        return original.startswith("credit_card") and any(
            m["source"] == "paypal" for m in methods.values()
        )

    order = first(db, "delivered", paid_by_card)
    item_id = order["items"][0]["item_id"]
    methods = db["users"][order["user_id"]]["payment_methods"]
    paypal = next(m["id"] for m in methods.values() if m["source"] == "paypal")
    with pytest.raises(ToolError, match="original payment method"):
        call(
            db, "return_delivered_order_items", order_id=order["order_id"], item_ids=[item_id],
            payment_method_id=paypal,
        )  # fmt: skip
    pending = first(db, "processed")
    with pytest.raises(ToolError, match="'processed'"):
        call(
            db, "return_delivered_order_items", order_id=pending["order_id"],
            item_ids=[pending["items"][0]["item_id"]],
            payment_method_id=pending["payment_history"][0]["payment_method_id"],
        )  # fmt: skip
    with pytest.raises(ToolError, match="non-empty list"):
        call(
            db, "return_delivered_order_items", order_id=order["order_id"], item_ids=[],
            payment_method_id=order["payment_history"][0]["payment_method_id"],
        )  # fmt: skip
    result = call(
        db, "return_delivered_order_items", order_id=order["order_id"], item_ids=[item_id],
        payment_method_id=order["payment_history"][0]["payment_method_id"],
    )  # fmt: skip
    assert result["status"] == "return requested" and result["return_items"] == [item_id]


def test_exchanges_are_recorded_in_a_canonical_order():
    one, two = DOMAIN.db(), DOMAIN.db()
    order = first(one, "delivered", lambda o: len(o["items"]) >= 2)
    items = order["items"][:2]
    news = [other_variant(one, item)["item_id"] for item in items]
    olds = [item["item_id"] for item in items]
    method = order["payment_history"][0]["payment_method_id"]
    for db, (a, b) in ((one, (olds, news)), (two, (olds[::-1], news[::-1]))):
        call(
            db, "exchange_delivered_order_items", order_id=order["order_id"], item_ids=a,
            new_item_ids=b, payment_method_id=method,
        )  # fmt: skip
    assert one == two
    assert one["orders"][order["order_id"]]["status"] == "exchange requested"
    with pytest.raises(ToolError, match="'exchange requested'"):
        call(
            one, "exchange_delivered_order_items", order_id=order["order_id"], item_ids=olds,
            new_item_ids=news, payment_method_id=method,
        )  # fmt: skip


def test_transfer_ends_the_conversation():
    db = DOMAIN.db()
    template = next(t for t in TEMPLATES if t.name == "order_status")
    dialogue = Dialogue(DOMAIN, db, draw(template, 0).scenario)
    dialogue.open()
    dialogue.call("transfer_to_human_agents", {"summary": "wants a refund in cash"})
    assert dialogue.ended and "transfer_to_human_agents" in dialogue.ended_by
