"""The scripted user's rules, one by one, on a hand-written scenario (no domain needed)."""

from __future__ import annotations

from agentgym.envs.usersim.domain import Fact, Request, Scenario, Tool
from agentgym.envs.usersim.scripted import PATIENCE, STOP, YES, ScriptedUser, is_affirmative

EMAIL = Fact("email address", "ava@example.com", ("email",))
USER_ID = Fact("user id", "?", ("user id",), known=False)
CANCEL = Request("Please cancel order #W1.", writes=1, confirm=("#w1",), expects=("12.50",))
STATUS = Request("Where is order #W2?", expects=("delivered",))
SCENARIO = Scenario(
    persona="You are Ava.",
    opening="Hi, I need help with my orders.",
    facts=(EMAIL, USER_ID),
    requests=(CANCEL, STATUS),
)


def user(scenario: Scenario = SCENARIO, **kwargs) -> ScriptedUser:
    return ScriptedUser(scenario, **kwargs)


def test_a_full_conversation_in_order():
    u = user()
    assert u.opening() == "Hi, I need help with my orders."
    assert (
        u.reply("Could you give me your email address?") == "My email address is ava@example.com."
    )
    assert u.reply("Please confirm (yes) that I should cancel order #W1.") == YES
    assert u.reply("Done: a refund of $12.50 is on its way.") == STATUS.says
    assert u.reply("Order #W2 was delivered yesterday.").endswith(STOP)


def test_facts_come_only_when_asked_and_unknown_ones_are_admitted():
    u = user()
    assert u.reply("How can I help?") == CANCEL.says  # nothing asked: the request again
    assert u.reply("What is your user id?") == "Sorry, I don't know my user id."
    both = u.reply("Your user id and email, please.")
    assert "ava@example.com" in both and "don't know my user id" in both


def test_a_proposal_without_the_requests_phrases_is_refused():
    u = user()
    answer = u.reply("Shall I cancel order #W9 for you?")
    assert answer.startswith("No, that's not what I want.") and CANCEL.says in answer
    assert u.confirmed == 0


def test_the_user_waits_for_the_outputs_before_moving_on():
    u = user()
    u.reply("Please confirm: cancel #W1?")
    assert u.reply("It is done.") == CANCEL.says  # the refund amount was never said
    assert u.reply("Your refund of 12.50 dollars is coming.") == STATUS.says


def test_a_change_of_mind_comes_once_and_then_needs_the_new_phrases():
    change = Request(
        "Exchange my red shirt.",
        writes=1,
        confirm=("red",),
        change="Actually, make it the blue one.",
        then_confirm=("blue",),
    )
    u = user(Scenario("You are Ava.", "Hi.", (), (change,)))
    assert u.reply("Confirm: exchange for the red one?") == "Actually, make it the blue one."
    assert u.reply("Confirm: exchange for the red one?").startswith("No")
    assert u.reply("Confirm: exchange for the blue one?") == YES
    assert u.reply("Exchanged.").endswith(STOP)


def test_the_user_acts_on_its_own_device_when_told():
    calls = []
    tool = Tool(
        "set_airplane_mode",
        "Turn airplane mode on or off.",
        {"on": {"type": "boolean"}},
        lambda db, on: None,
        writes=True,
        triggers=(("turn off", "airplane mode"),),
        trigger_arguments={"on": False},
    )
    works = Request("My phone has no data.", done_when="data")
    u = user(
        Scenario("You are Ava.", "Hi.", (), (works,)),
        tools=[tool],
        use_tool=lambda name, args: calls.append((name, dict(args))) or "airplane mode is off",
        check=lambda name: bool(calls),
    )
    assert u.reply("Is anything else wrong?") == works.says  # the check fails: not done
    answer = u.reply("Please turn off airplane mode.")
    assert calls == [("set_airplane_mode", {"on": False})] and "airplane mode is off" in answer
    assert u.reply("Does it work now?").endswith(STOP)


def test_the_user_gives_up_after_its_patience_runs_out():
    u = user()
    answers = [u.reply("Hmm.") for _ in range(PATIENCE)]
    assert all(a == CANCEL.says for a in answers[:-1]) and answers[-1].endswith(STOP)


def test_same_messages_same_answers():
    messages = ["Hello", "Your email?", "Confirm: cancel #W1?", "refund of 12.50", "ok"]
    first, second = user(), user()
    assert [first.reply(m) for m in messages] == [second.reply(m) for m in messages]


def test_what_counts_as_yes():
    assert is_affirmative("Yes, please go ahead.") and is_affirmative("ok, proceed")
    assert not is_affirmative("No, don't do that.") and not is_affirmative("Wait, not yet")
    assert not is_affirmative("My email is a@b.c")
