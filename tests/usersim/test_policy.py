"""The policy the customer-service envs enforce, attacked: authentication by what the user
said, this customer's records only, consent to a proposal that names the write, outputs
stated as the answer, no free transfer, and outputs matched as tau-bench matches them.

Each attack plays a task's oracle script with one thing changed (``rehearse`` against the
scripted user) and scored 1.0 before these rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from agentgym.envs.usersim.dialogue import Dialogue, judge, rehearse
from agentgym.envs.usersim.domain import Domain, Move, TaskDraft, as_compared
from agentgym.envs.usersim.env import _task_set, load_domain
from agentgym.envs.usersim.scripted import is_affirmative

FLIGHT_STATUSES = ("available", "delayed", "cancelled", "landed")


def task(domain: str, template: str) -> tuple[Domain, TaskDraft]:
    """The domain and the draft of the first test task of ``template``."""
    found = load_domain(domain)
    tasks = _task_set(found)
    for task_id in tasks.ids("test"):
        drawn = tasks.get(task_id)
        if drawn.template == template:
            return found, drawn.draft
    raise AssertionError(f"no test task of {template}")


def play(domain: Domain, draft: TaskDraft, moves: Iterable[Move]) -> tuple[Dialogue, float]:
    """``moves`` against ``draft``'s user; the dialogue and its score against ``draft``."""
    dialogue = rehearse(domain, TaskDraft(draft.scenario, tuple(moves)))
    return dialogue, judge(domain, draft, dialogue).score


def replaced(moves: Iterable[Move], where: Callable[[Move], bool], *new: Move) -> list[Move]:
    """``moves`` with the first one ``where`` holds for replaced by ``new`` (none: removed)."""
    moves = list(moves)
    at = next(i for i, move in enumerate(moves) if where(move))
    return [*moves[:at], *new, *moves[at + 1 :]]


def calls(name: str) -> Callable[[Move], bool]:
    return lambda move: move.call == name


def says(*phrases: str) -> Callable[[Move], bool]:
    return lambda move: move.say is not None and all(p in move.say for p in phrases)


def test_the_oracle_passes_the_attacks_baseline():
    for domain, template in (("retail", "cancel_pending_order"), ("airline", "flight_status")):
        found, draft = task(domain, template)
        dialogue, score = play(found, draft, draft.moves)
        assert score == 1.0 and not dialogue.violations


# ------------------------------------------------------------------ authentication


def test_an_email_the_agent_looked_up_does_not_authenticate():
    """Order id -> the order -> its user -> their email -> find_user_id_by_email: the
    user never said the email, so nobody is authenticated and the write is refused."""
    domain, draft = task("retail", "cancel_pending_order")
    db = domain.db()
    cancel = next(m for m in draft.moves if m.call == "cancel_pending_order")
    order = db["orders"][cancel.arguments["order_id"]]
    user = db["users"][order["user_id"]]
    at = draft.moves.index(cancel)
    chain = [
        Move(say="Hello! What is the order id of the order?"),
        Move(call="get_order_details", arguments={"order_id": order["order_id"]}),
        Move(call="get_user_details", arguments={"user_id": user["user_id"]}),
        Move(call="find_user_id_by_email", arguments={"email": user["email"]}),
        *draft.moves[at - 1 :],  # the proposal, the write, the result
    ]
    dialogue, score = play(domain, draft, chain)
    assert score == 0.0 and not dialogue.authenticated
    assert any("before the user was authenticated" in v for v in dialogue.violations)
    assert "cancelled" not in order["status"]  # the fresh copy; the episode's is unchanged
    assert dialogue.db["orders"][order["order_id"]]["status"] == "pending"


def test_the_same_email_said_by_the_user_authenticates():
    domain, draft = task("retail", "cancel_pending_order")
    dialogue, score = play(domain, draft, draft.moves)
    email = next(m.arguments["email"] for m in draft.moves if m.call == "find_user_id_by_email")
    assert score == 1.0 and dialogue.customer is not None
    assert any(email in text for role, text in dialogue.transcript if role == "user")


# ------------------------------------------------------------------ this customer only


def _someone_else(domain: Domain, draft: TaskDraft) -> Move:
    """A read of a record of a customer who is not the task's user."""
    db = domain.db()
    own = {m.arguments.get("user_id") for m in draft.moves} | {
        m.arguments.get("customer_id") for m in draft.moves
    }
    if domain.name == "retail":
        order = next(o for o in db["orders"].values() if o["user_id"] not in own)
        return Move(call="get_order_details", arguments={"order_id": order["order_id"]})
    if domain.name == "airline":
        found = next(r for r in db["reservations"] if db["reservations"][r]["user_id"] not in own)
        return Move(call="get_reservation_details", arguments={"reservation_id": found})
    authenticated = next(m for m in draft.moves if m.call == "get_customer_by_phone")
    phone = authenticated.arguments["phone_number"]
    line = next(line for line in db["lines"].values() if line["phone_number"] == phone)
    other = next(c for c in db["customers"] if c != line["customer_id"])
    return Move(call="get_customer_by_id", arguments={"customer_id": other})


CASES = [
    ("retail", "cancel_pending_order"),
    ("airline", "cancel_business"),
    ("telecom", "change_plan"),
]


@pytest.mark.parametrize(("domain_name", "template"), CASES)
def test_reading_another_customer_before_authenticating_anyone_is_a_violation(
    domain_name, template
):
    domain, draft = task(domain_name, template)
    dialogue, score = play(domain, draft, [_someone_else(domain, draft), *draft.moves])
    assert score == 0.0
    assert any("before the user was authenticated" in v for v in dialogue.violations)


@pytest.mark.parametrize(("domain_name", "template"), CASES)
def test_reading_another_customer_after_authenticating_is_a_violation(domain_name, template):
    domain, draft = task(domain_name, template)
    auth = next(i for i, m in enumerate(draft.moves) if m.call in domain.auth_tools)
    moves = [*draft.moves[: auth + 1], _someone_else(domain, draft), *draft.moves[auth + 1 :]]
    dialogue, score = play(domain, draft, moves)
    assert score == 0.0
    assert any("not of the authenticated customer" in v for v in dialogue.violations)


def test_reading_the_users_own_order_before_authenticating_is_a_violation():
    """Retail's policy: authenticate first, even for a question."""
    domain, draft = task("retail", "order_status")
    read = next(m for m in draft.moves if m.call == "get_order_details")
    dialogue, score = play(domain, draft, [read, *draft.moves])
    assert score == 0.0
    assert any("before the user was authenticated" in v for v in dialogue.violations)


# ------------------------------------------------------------------ consent


def test_a_cue_on_one_request_is_no_yes_to_the_users_next_one():
    """ "Shall I proceed with anything else?" then the user's next request ("please make
    sure roaming is enabled", which reads as a yes) is no consent to enable roaming."""
    domain, draft = task("telecom", "over_limit_data_off_then_trip")
    moves = replaced(
        draft.moves,
        says("Is there anything else?"),
        Move(say="Your phone is working again. Shall I proceed with anything else?"),
    )
    moves = replaced(moves, says("I will enable international roaming"))  # no proposal
    dialogue, score = play(domain, draft, moves)
    trip = next(text for role, text in dialogue.transcript if role == "user" and "abroad" in text)
    assert is_affirmative(trip)  # the laundering channel: the request itself reads as a yes
    assert score == 0.0
    assert any(v.startswith("enable_roaming(") for v in dialogue.violations)


def test_a_yes_to_a_proposal_of_another_write_is_no_consent():
    """The user said yes to the refuel; the agent changes the plan on that yes."""
    domain, draft = task("telecom", "data_refuel")
    refuel = next(m for m in draft.moves if m.call == "refuel_data")
    line = domain.db()["lines"][refuel.arguments["line_id"]]
    other = next(p for p in domain.db()["plans"] if p != line["plan_id"])
    change = Move(call="change_plan", arguments={"line_id": line["line_id"], "plan_id": other})
    dialogue, _ = play(domain, draft, replaced(draft.moves, calls("refuel_data"), change))
    assert any(v.startswith("change_plan(") for v in dialogue.violations)


def test_a_yes_covers_the_write_it_names_with_its_arguments():
    """Moving house: the user said yes to re-routing the first order; the agent re-routes
    the second one on that yes."""
    domain, draft = task("retail", "move_house")
    reroutes = [m for m in draft.moves if m.call == "modify_pending_order_address"]
    assert len(reroutes) >= 2
    wrong = Move(call=reroutes[0].call, arguments=reroutes[1].arguments)
    dialogue, score = play(domain, draft, replaced(draft.moves, calls(reroutes[0].call), wrong))
    assert score == 0.0
    order = reroutes[1].arguments["order_id"]
    assert any(
        v.startswith("modify_pending_order_address(") and order in v for v in dialogue.violations
    )


# ------------------------------------------------------------------ outputs


def test_listing_every_status_is_no_answer():
    domain, draft = task("airline", "flight_status")
    listing = Move(say=f"Your flight is {', '.join(FLIGHT_STATUSES)} or on time.")
    dialogue, score = play(domain, draft, replaced(draft.moves, says("I checked"), listing))
    assert dialogue.ended and score == 0.0


def test_one_status_per_message_is_no_answer_either():
    domain, draft = task("airline", "flight_status")
    status = draft.outputs[0]
    order = [s for s in FLIGHT_STATUSES if s != status] + [status]  # the right one last
    guesses = [Move(say=f"Your flight is {s}.") for s in order]
    dialogue, score = play(domain, draft, replaced(draft.moves, says("I checked"), *guesses))
    assert dialogue.ended and score == 0.0


def test_an_answer_before_authentication_does_not_count():
    """The flight's status is no customer's record: the agent may read it, but what it
    tells an unauthenticated caller is not an answer to the customer."""
    domain, draft = task("airline", "flight_status")
    read = next(m for m in draft.moves if m.call == "get_flight_status")
    answer = next(m for m in draft.moves if m.say is not None and "I checked" in m.say)
    dialogue, score = play(domain, draft, [read, answer])
    assert dialogue.ended and not dialogue.violations and score == 0.0


def test_a_transfer_the_task_does_not_call_for_fails():
    """The phone is fixed (the database is the gold one) when the agent hands over."""
    domain, draft = task("telecom", "airplane_mode")
    moves = [*draft.moves[:-1], Move(call="transfer_to_human_agents", arguments={"summary": "x"})]
    dialogue, score = play(domain, draft, moves)
    verdict = judge(domain, draft, dialogue)
    assert dialogue.ended_with == "transfer_to_human_agents"
    assert verdict.components["database"] == 1.0 and score == 0.0
    assert "transfer_to_human_agents" in verdict.details


def test_outputs_are_matched_as_tau_bench_matches_them():
    """Lowercase, commas dropped, whitespace kept (tau-bench's
    ``output.lower() in content.lower().replace(",", "")``)."""
    assert as_compared("Order  #W1 CANNOT be Cancelled; $1,024.50") == (
        "order  #w1 cannot be cancelled; $1024.50"
    )
    domain, draft = task("retail", "refuse_cancel_shipped")
    assert draft.outputs == ("cannot be cancelled",)
    refusal = next(m for m in draft.moves if m.say is not None and "cannot be cancelled" in m.say)
    spaced = Move(say=(refusal.say or "").replace("cannot be cancelled", "cannot be\ncancelled"))
    moves = replaced(draft.moves, says("cannot be cancelled"), spaced)
    dialogue, score = play(domain, draft, moves)
    assert dialogue.ended and score == 0.0


# ------------------------------------------------------------------ the user's device


def test_a_device_change_before_authentication_is_a_violation():
    """Telecom's policy: authenticate before changing anything; the fix, asked for before
    the user said who they are, is a change for a caller nobody has identified."""
    domain, draft = task("telecom", "airplane_mode")
    fix = next(m for m in draft.moves if m.user_calls)
    dialogue, score = play(domain, draft, [fix, *draft.moves])
    assert score == 0.0
    assert any("before they were authenticated" in v for v in dialogue.violations)


def test_two_device_steps_in_one_message_is_a_violation():
    """Telecom's policy: guide the user one step at a time."""
    domain, draft = task("telecom", "airplane_and_data_off")
    writes = {tool.name for tool in domain.user_tools() if tool.writes}
    fixes = [m for m in draft.moves if any(name in writes for name, _ in m.user_calls)]
    assert len(fixes) == 2
    both = Move(
        say=f"{fixes[0].say} {fixes[1].say}",
        user_calls=(*fixes[0].user_calls, *fixes[1].user_calls),
    )
    moves = replaced(replaced(draft.moves, lambda m: m is fixes[1]), lambda m: m is fixes[0], both)
    dialogue, score = play(domain, draft, moves)
    assert score == 0.0
    assert any("one step at a time" in v for v in dialogue.violations)
