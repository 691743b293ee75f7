"""The telecom task templates: plain functions ``template(db, rng) -> TaskDraft | None``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Fact,
    Move,
    Request,
    Scenario,
    TaskDraft,
    TaskTemplate,
)
from agentgym.envs.usersim.domains.telecom.data_model import (
    _DEVICE_FAULTS,
    _PLANS,
    CARRIER,
    MAX_REFUEL_GB,
    _describe,
    _faults,
    _limit,
    _money,
    _overdue,
)

__all__ = ["TEMPLATES"]
_OCCUPATIONS = (
    "a busy nurse",
    "a retired teacher",
    "a freelance photographer",
    "a university student",
    "a small-business owner",
    "a delivery driver",
    "a software tester",
    "a hotel receptionist",
)


_TONES = (
    "polite but brief",
    "friendly and chatty",
    "a little impatient",
    "calm and precise",
    "not very technical and slightly anxious",
)


_FIX_SAY: dict[str, tuple[str, tuple[str, dict[str, Any]]]] = {
    "airplane": (
        "Your phone is in airplane mode, which blocks every connection. Please turn off "
        "airplane mode.",
        ("set_airplane_mode", {"on": False}),
    ),
    "sim_missing": (
        "Your phone does not detect its SIM card. Please take out the SIM card and put it "
        "back in firmly.",
        ("reseat_sim", {}),
    ),
    "reboot": (
        "Your line and settings look right, but the phone has not registered on our "
        "network. Please restart your phone.",
        ("reboot_device", {}),
    ),
    "data_off": (
        "Mobile data is switched off in your settings. Please turn on mobile data.",
        ("set_mobile_data", {"on": True}),
    ),
    "apn": (
        "Your APN (data connection) settings have been edited and no longer work. Please "
        "reset your APN settings to the defaults.",
        ("reset_apn_settings", {}),
    ),
    "roaming_phone": (
        "Since you are abroad, your handset also has to allow roaming. Please turn on data "
        "roaming in your settings.",
        ("set_data_roaming", {"on": True}),
    ),
    "3g": (
        "Your phone is limited to 3G, which is very slow. Please set your preferred network "
        "mode to 5G.",
        ("set_network_mode", {"mode": "5g"}),
    ),
    "saver": (
        "Data saver is on and it throttles your connection. Please turn off data saver.",
        ("set_data_saver", {"on": False}),
    ),
}


_PROCEED = "Please confirm (yes) that I should proceed."


class _Script:
    """The oracle's script for one customer and line, built move by move."""

    def __init__(self, db: DB, rng: np.random.Generator, line: dict[str, Any]) -> None:
        self.db, self.rng, self.line = db, rng, line
        self.customer = db["customers"][line["customer_id"]]
        self.device = db["devices"][line["phone_number"]]
        self.plan = db["plans"][line["plan_id"]]
        self.phone = line["phone_number"]
        self.moves: list[Move] = []
        self.facts: list[Fact] = [
            Fact("full name", self.customer["name"], ("full name",)),
            Fact("phone number", self.phone, ("phone number",)),
            Fact("customer id", self.customer["customer_id"], ("customer id",), known=False),
        ]
        self.name = self.customer["name"]
        first = self.name.split()[0]
        occupation = _OCCUPATIONS[int(rng.integers(len(_OCCUPATIONS)))]
        tone = _TONES[int(rng.integers(len(_TONES)))]
        self.persona = (
            f"You are {self.name}, {occupation}; you are {tone}. You are a {CARRIER} "
            f"customer and you are calling about the phone with the number {self.phone}."
        )
        self.first = first

    def say(self, text: str, *user_calls: tuple[str, Mapping[str, Any]]) -> None:
        self.moves.append(Move(say=text, user_calls=tuple(user_calls)))

    def call(self, name: str, **arguments: Any) -> None:
        self.moves.append(Move(call=name, arguments=arguments))

    def authenticate(self) -> None:
        self.say(
            "I can help with that. First I need to verify your identity: please tell me your "
            "full name and the phone number of the line this is about."
        )
        self.call("get_customer_by_phone", phone_number=self.phone, full_name=self.name)
        self.call("get_line_details", line_id=self.line["line_id"])

    def draft(
        self, opening: str, requests: list[Request], refuses: tuple[str, ...] = ()
    ) -> TaskDraft:
        scenario = Scenario(
            self.persona,
            opening,
            tuple(self.facts),
            tuple(requests),
            refuses,
            context={"phone_number": self.phone},
        )
        return TaskDraft(scenario, tuple(self.moves))

    # ---- pieces of the carrier's side

    def pay_overdue(self, *, single: bool) -> tuple[str, tuple[str, ...]]:
        """Ask how to pay, propose, pay: the amount, and the proposal's confirm phrases."""
        bill = _overdue(self.customer)[0]
        amount = _money(bill["amount"])
        methods = self.customer["payment_methods"]
        method = methods[int(self.rng.integers(len(methods)))]
        self.facts.append(Fact("payment method", f"my {_describe(method)}", ("payment method",)))
        self.call("get_bills", customer_id=self.customer["customer_id"])
        on_file = " or your ".join(_describe(m) for m in methods)
        self.say(
            f"Bill {bill['bill_id']} for ${amount} (due {bill['due_date']}) is overdue. Which "
            f"payment method on file would you like to use: your {on_file}?"
        )
        self.say(
            f"I will pay bill {bill['bill_id']} of ${amount} with your {_describe(method)}. "
            f"{_PROCEED}"
        )
        self.call(
            "pay_bill",
            customer_id=self.customer["customer_id"],
            bill_id=bill["bill_id"],
            payment_method_id=method["payment_method_id"],
        )
        return amount, ((amount,) if single else ())

    def resume(self) -> None:
        self.say(
            f"The bill is paid. Next I will resume your line {self.phone}, which was suspended "
            f"for the unpaid bill. {_PROCEED}"
        )
        self.call("resume_line", line_id=self.line["line_id"])

    def enable_roaming(self, why: str) -> None:
        self.say(
            f"{why} I will enable international roaming on your line {self.phone}; usage "
            f"abroad is billed at your plan's roaming rates. {_PROCEED}"
        )
        self.call("enable_roaming", line_id=self.line["line_id"])

    def refuel(self, gb: int) -> str:
        """Propose and make a refuel of ``gb`` GB; returns its cost."""
        cost = _money(gb * self.plan["refuel_price_per_gb"])
        self.say(
            f"I will add {gb} GB of data to your line {self.phone} for ${cost} (at "
            f"${_money(self.plan['refuel_price_per_gb'])} per GB), charged to your current "
            f"bill. {_PROCEED}"
        )
        self.call("refuel_data", line_id=self.line["line_id"], gb=gb)
        return cost

    def ask_refuel(self, gb: int) -> None:
        price = _money(self.plan["refuel_price_per_gb"])
        left = MAX_REFUEL_GB - self.line["data_refuel_gb"]
        self.facts.append(Fact("data top-up amount", f"{gb} GB", ("how much data",)))
        self.call("get_data_usage", line_id=self.line["line_id"])
        self.say(
            f"You have used all the data of your {self.plan['name']} plan this cycle. I can "
            f"add data at ${price} per GB, up to {left} GB. How much data would you like to "
            "add?"
        )

    def propose_plan(self, plan: dict[str, Any]) -> None:
        self.say(
            f"I will move your line {self.phone} from {self.plan['name']} to {plan['name']}, "
            f"which costs ${_money(plan['price'])} per month with {plan['data_limit_gb']} GB "
            f"of data. {_PROCEED}"
        )

    def check(self, goal: str) -> None:
        if goal == "fast_data":
            self.say("Thank you. Now please run a speed test.", ("run_speed_test", {}))
        else:
            self.say(
                "Thank you. Now please check your status bar and tell me what it shows.",
                ("check_status_bar", {}),
            )


def _candidates(
    db: DB, test: Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Lines ``test(line, device, customer)`` accepts, in id order."""
    return [
        line
        for _, line in sorted(db["lines"].items())
        if test(line, db["devices"][line["phone_number"]], db["customers"][line["customer_id"]])
    ]


def _pick(
    db: DB,
    rng: np.random.Generator,
    test: Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], bool],
) -> dict[str, Any] | None:
    found = _candidates(db, test)
    return found[int(rng.integers(len(found)))] if found else None


def _exactly(db: DB, faults: frozenset[str], *, overdue: bool = False) -> Callable[..., bool]:
    def test(line: dict[str, Any], device: dict[str, Any], customer: dict[str, Any]) -> bool:
        return _faults(db, line) == faults and bool(_overdue(customer)) == (
            overdue or "suspended" in faults
        )

    return test


_CARRIER_FAULTS = ("suspended", "roaming_line", "over_limit")


def _opening(rng: np.random.Generator, faults: frozenset[str], device: dict[str, Any]) -> str:
    if faults & {"3g", "saver"} and not faults - {"3g", "saver"}:
        return "Hi, my mobile internet has become painfully slow. Pages take forever to load."
    where = f"I'm travelling in {device['country']} and " if device["abroad"] else ""
    symptom = (
        "my phone has no mobile data",
        "the internet on my phone stopped working",
        "I can't get online on my phone anymore",
    )[int(rng.integers(3))]
    if faults & {"airplane", "sim_missing", "reboot", "suspended"}:
        symptom = ("my phone has no service at all", "my phone can't connect to anything")[
            int(rng.integers(2))
        ]
    return f"Hi, {where}{symptom}."


@dataclass
class _Fixing:
    """What the first request of a fix asks of the agent, gathered while its script is built:
    the outputs, the proposal's phrases (and, after a change of mind, the new ones) and the
    closing message's sentences."""

    expects: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()
    then_confirm: tuple[str, ...] = ()
    change: str | None = None
    closing: list[str] = field(default_factory=lambda: ["Your phone is working again."])


def _fix(
    db: DB,
    rng: np.random.Generator,
    faults: str,
    *,
    change: str | None = None,
    then: str | None = None,
) -> TaskDraft | None:
    """A broken phone: fix every cause in ``faults``. ``change``: "amount" (the user changes
    the refuel amount) or "upgrade" (a plan change instead of a refuel); ``then``: a second
    request once it works, "trip" (roaming for a trip) or "pay" (an overdue bill)."""
    wanted = frozenset(faults.split())
    goal = "fast_data" if wanted & {"3g", "saver"} else "mobile_data_works"
    base = _exactly(db, wanted, overdue=then == "pay")

    def test(line: dict[str, Any], device: dict[str, Any], customer: dict[str, Any]) -> bool:
        if not base(line, device, customer):
            return False
        if then == "trip" and (device["abroad"] or line["roaming_enabled"]):
            return False
        return not (change == "upgrade" and line["plan_id"] == _PLANS[-1][0])

    line = _pick(db, rng, test)
    if line is None:
        return None
    s = _Script(db, rng, line)
    s.authenticate()
    for fault in _DEVICE_FAULTS:
        if fault in wanted:
            text, user_call = _FIX_SAY[fault]
            s.say(text, user_call)
    carrier = [f for f in _CARRIER_FAULTS if f in wanted]
    writes = len(carrier) + ("suspended" in carrier)  # paying and resuming: two writes
    fixing = _fix_carrier(s, carrier, change, single=writes == 1)
    s.check(goal)
    requests = [
        Request(
            says="Please help me get my phone's mobile data working properly again.",
            writes=writes,
            confirm=fixing.confirm,
            expects=fixing.expects,
            change=fixing.change,
            then_confirm=fixing.then_confirm,
            done_when=f"{goal}:{s.phone}",
        )
    ]
    s.say(" ".join(fixing.closing) + " Is there anything else?")
    if then == "trip":
        requests.append(_trip(s))
    elif then == "pay":
        requests.append(_pay_after(s))
    return s.draft(_opening(rng, wanted, s.device), requests)


def _fix_carrier(s: _Script, carrier: list[str], change: str | None, *, single: bool) -> _Fixing:
    """The carrier's side of a fix, in order: pay and resume, roaming, data over the limit."""
    fixing = _Fixing()
    if "suspended" in carrier:
        amount, _ = s.pay_overdue(single=False)
        s.resume()
        fixing.expects += (amount,)
        fixing.closing.append(f"Bill payment of ${amount} received and your line is active.")
    if "roaming_line" in carrier:
        s.enable_roaming("International roaming is not enabled on your line.")
        fixing.confirm = ("roaming",) if single else ()
        fixing.closing.append("Roaming is now on for your line.")
    if "over_limit" in carrier:
        _over_limit(s, fixing, change, single=single)
    return fixing


def _over_limit(s: _Script, fixing: _Fixing, change: str | None, *, single: bool) -> None:
    """A line over its data limit: a refuel, a refuel of another amount after a change of
    mind (``change="amount"``), or a bigger plan instead (``change="upgrade"``)."""
    db, rng, line = s.db, s.rng, s.line
    left = MAX_REFUEL_GB - line["data_refuel_gb"]
    gb = int(rng.integers(1, min(3, left) + 1))
    s.ask_refuel(gb)
    if change is None:
        cost = s.refuel(gb)
        fixing.confirm = (f"{gb} gb",) if single else ()
        fixing.expects += (cost,)
        fixing.closing.append(f"The {gb} GB refuel cost ${cost} and is on your current bill.")
        return
    s.say(
        f"I will add {gb} GB of data to your line {s.phone} for "
        f"${_money(gb * s.plan['refuel_price_per_gb'])}, charged to your current bill. "
        f"{_PROCEED}"
    )
    if change == "amount":
        other = [n for n in range(1, left + 1) if n != gb]
        final = other[int(rng.integers(len(other)))]
        fixing.change = f"Actually, could you make it {final} GB instead?"
        fixing.confirm, fixing.then_confirm = (f"{gb} gb",), (f"{final} gb",)
        cost = s.refuel(final)
        fixing.expects += (cost,)
        fixing.closing.append(f"{final} GB were added for ${cost}.")
        return
    bigger = [
        p for p in db["plans"].values()
        if p["data_limit_gb"] > max(s.plan["data_limit_gb"], line["data_used_gb"])
    ]  # fmt: skip
    plan = bigger[int(rng.integers(len(bigger)))]
    fixing.change = (
        f"Actually, rather than a one-off top-up, please move me to the {plan['name']} plan."
    )
    fixing.confirm, fixing.then_confirm = (f"{gb} gb",), (plan["name"].lower(),)
    s.call("list_plans")
    s.propose_plan(plan)
    s.call("change_plan", line_id=line["line_id"], plan_id=plan["plan_id"])
    fixing.expects += (_money(plan["price"]),)
    fixing.closing.append(f"You are now on {plan['name']} at ${_money(plan['price'])} per month.")


def _trip(s: _Script) -> Request:
    """Once the phone works: roaming on the line for a trip next week."""
    request = Request(
        says="One more thing: I am travelling abroad next week. Please make sure "
        "international roaming is enabled on my line.",
        writes=1,
        confirm=("roaming",),
    )
    s.enable_roaming("Roaming is currently disabled on your line.")
    s.say("Roaming is now active on your line. Have a good trip!")
    return request


def _pay_after(s: _Script) -> Request:
    """Once the phone works: pay the customer's overdue bill."""
    amount, confirm = s.pay_overdue(single=True)
    s.say(f"Done: ${amount} is paid and your account is in good standing.")
    return Request(
        says="Also, I got a notice about an overdue bill. Could you pay it for me?",
        writes=1,
        confirm=confirm,
        expects=(amount,),
    )


def data_remaining(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    line = _pick(db, rng, _exactly(db, frozenset()))
    if line is None:
        return None
    s = _Script(db, rng, line)
    s.authenticate()
    s.call("get_data_usage", line_id=line["line_id"])
    left = f"{_limit(db, line) - line['data_used_gb']:.1f}"
    s.say(
        f"You have used {line['data_used_gb']:.1f} GB this cycle and have {left} GB left on "
        f"your {s.plan['name']} plan."
    )
    ask = "How much mobile data do I have left this month?"
    return s.draft(f"Hi, {ask[0].lower()}{ask[1:]}", [Request(says=ask, expects=(left,))])


def overdue_amount(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    line = _pick(db, rng, _exactly(db, frozenset(), overdue=True))
    if line is None:
        return None
    s = _Script(db, rng, line)
    s.authenticate()
    s.call("get_bills", customer_id=s.customer["customer_id"])
    bill = _overdue(s.customer)[0]
    amount = _money(bill["amount"])
    s.say(
        f"Your bill {bill['bill_id']} for the period {bill['period']} is overdue: ${amount}, "
        f"due on {bill['due_date']}."
    )
    ask = "I got a reminder letter. How much do I owe that is overdue?"
    return s.draft("Hi, I received a payment reminder and I'm confused.", [
        Request(says=ask, expects=(amount,))
    ])  # fmt: skip


def plan_question(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    line = _pick(db, rng, _exactly(db, frozenset()))
    if line is None:
        return None
    s = _Script(db, rng, line)
    s.authenticate()
    s.call("get_plan_details", plan_id=line["plan_id"])
    price = _money(s.plan["price"])
    s.say(
        f"Your line is on the {s.plan['name']} plan: ${price} per month with "
        f"{s.plan['data_limit_gb']} GB of data."
    )
    ask = "Which plan is my line on and what does it cost per month?"
    return s.draft(
        "Hi, I'd like to know a bit more about my plan.",
        [Request(says=ask, expects=(s.plan["name"].lower(), price))],
    )


def disable_roaming_home(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    def test(line: dict[str, Any], device: dict[str, Any], customer: dict[str, Any]) -> bool:
        return _exactly(db, frozenset())(line, device, customer) and line["roaming_enabled"]

    line = _pick(db, rng, test)
    if line is None:
        return None
    s = _Script(db, rng, line)
    s.authenticate()
    s.say(
        f"International roaming is enabled on your line {s.phone}. I will disable roaming on "
        f"the line. {_PROCEED}"
    )
    s.call("disable_roaming", line_id=line["line_id"])
    s.say("Roaming is now off for your line, so no roaming charges can occur.")
    ask = "I'm back home from my trip: please switch off international roaming on my line."
    return s.draft(
        "Hi, I just got back from abroad and I don't want any surprise roaming charges.",
        [Request(says=ask, writes=1, confirm=("roaming",))],
    )


def pay_overdue_bill(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    line = _pick(db, rng, _exactly(db, frozenset(), overdue=True))
    if line is None:
        return None
    s = _Script(db, rng, line)
    s.authenticate()
    amount, confirm = s.pay_overdue(single=True)
    s.say(f"Done: ${amount} is paid and your account is in good standing.")
    ask = "I have an overdue bill and I'd like to pay it now."
    return s.draft(
        "Hi, I think I'm behind on a payment and want to sort it out.",
        [Request(says=ask, writes=1, confirm=confirm, expects=(amount,))],
    )


def _change_plan(db: DB, rng: np.random.Generator, *, change: bool) -> TaskDraft | None:
    """A move to a bigger plan; ``change``: the user first names one, then a bigger one."""

    def test(line: dict[str, Any], device: dict[str, Any], customer: dict[str, Any]) -> bool:
        top = _PLANS[-1 - change][2]
        here = db["plans"][line["plan_id"]]["data_limit_gb"]
        return _exactly(db, frozenset())(line, device, customer) and here < top

    line = _pick(db, rng, test)
    if line is None:
        return None
    s = _Script(db, rng, line)
    here = db["plans"][line["plan_id"]]["data_limit_gb"]
    bigger = sorted(
        (p for p in db["plans"].values() if p["data_limit_gb"] > here),
        key=lambda p: p["data_limit_gb"],
    )
    first = bigger[int(rng.integers(len(bigger) - change))]
    final = bigger[-1] if change else first
    s.authenticate()
    s.call("list_plans")
    confirm: tuple[str, ...] = (first["name"].lower(),)
    then_confirm: tuple[str, ...] = ()
    change_text = None
    if change:
        s.propose_plan(first)
        change_text = f"Hmm, actually, make it the {final['name']} plan instead."
        then_confirm = (final["name"].lower(),)
    s.propose_plan(final)
    s.call("change_plan", line_id=line["line_id"], plan_id=final["plan_id"])
    price = _money(final["price"])
    s.say(f"Done: your line is now on {final['name']}, ${price} per month.")
    ask = f"I keep running out of data. Please move my line to the {first['name']} plan."
    request = Request(
        says=ask,
        writes=1,
        confirm=confirm,
        expects=(price,),
        change=change_text,
        then_confirm=then_confirm,
    )
    return s.draft("Hi, I'd like to change my plan.", [request])


# ------------------------------------------------------------------ the templates


def airplane_mode(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "airplane")


def mobile_data_off(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "data_off")


def broken_apn(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "apn")


def sim_not_detected(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "sim_missing")


def stuck_on_3g(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "3g")


def data_saver_slow(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "saver")


def needs_restart(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "reboot")


def data_refuel(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "over_limit")


def roaming_line_abroad(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "roaming_line")


def roaming_phone_abroad(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "roaming_phone")


def roaming_both_abroad(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "roaming_line roaming_phone")


def suspended_unpaid(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "suspended")


def airplane_and_data_off(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "airplane data_off")


def sim_and_data_off(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "sim_missing data_off")


def slow_3g_and_saver(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "3g saver")


def change_plan(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _change_plan(db, rng, change=False)


def suspended_and_airplane(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "suspended airplane")


def abroad_over_limit(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "roaming_line roaming_phone over_limit")


def suspended_apn_data_off(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "suspended apn data_off")


def refuel_change_of_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "over_limit", change="amount")


def upgrade_instead_of_refuel(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "over_limit", change="upgrade")


def over_limit_data_off_then_trip(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "over_limit data_off", then="trip")


def abroad_sim_missing(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "roaming_line roaming_phone sim_missing")


def data_off_then_pay_bill(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _fix(db, rng, "data_off", then="pay")


def change_plan_change_of_mind(db: DB, rng: np.random.Generator) -> TaskDraft | None:
    return _change_plan(db, rng, change=True)


TEMPLATES = (
    TaskTemplate("airplane_mode", "easy", airplane_mode),
    TaskTemplate("mobile_data_off", "easy", mobile_data_off),
    TaskTemplate("broken_apn", "easy", broken_apn),
    TaskTemplate("sim_not_detected", "easy", sim_not_detected),
    TaskTemplate("stuck_on_3g", "easy", stuck_on_3g),
    TaskTemplate("data_saver_slow", "easy", data_saver_slow),
    TaskTemplate("needs_restart", "easy", needs_restart),
    TaskTemplate("data_remaining", "easy", data_remaining),
    TaskTemplate("overdue_amount", "easy", overdue_amount),
    TaskTemplate("plan_question", "easy", plan_question),
    TaskTemplate("disable_roaming_home", "easy", disable_roaming_home),
    TaskTemplate("data_refuel", "medium", data_refuel),
    TaskTemplate("roaming_line_abroad", "medium", roaming_line_abroad),
    TaskTemplate("roaming_phone_abroad", "medium", roaming_phone_abroad),
    TaskTemplate("roaming_both_abroad", "medium", roaming_both_abroad),
    TaskTemplate("suspended_unpaid", "medium", suspended_unpaid),
    TaskTemplate("airplane_and_data_off", "medium", airplane_and_data_off),
    TaskTemplate("sim_and_data_off", "medium", sim_and_data_off),
    TaskTemplate("slow_3g_and_saver", "medium", slow_3g_and_saver),
    TaskTemplate("pay_overdue_bill", "medium", pay_overdue_bill),
    TaskTemplate("change_plan", "medium", change_plan),
    TaskTemplate("suspended_and_airplane", "hard", suspended_and_airplane),
    TaskTemplate("abroad_over_limit", "hard", abroad_over_limit),
    TaskTemplate("suspended_apn_data_off", "hard", suspended_apn_data_off),
    TaskTemplate("refuel_change_of_mind", "hard", refuel_change_of_mind),
    TaskTemplate("upgrade_instead_of_refuel", "hard", upgrade_instead_of_refuel),
    TaskTemplate("over_limit_data_off_then_trip", "hard", over_limit_data_off_then_trip),
    TaskTemplate("abroad_sim_missing", "hard", abroad_sim_missing),
    TaskTemplate("data_off_then_pay_bill", "hard", data_off_then_pay_bill),
    TaskTemplate("change_plan_change_of_mind", "hard", change_plan_change_of_mind),
)
"""The templates, in the order of their difficulty's task indexes (a task's template is its
index modulo the count of its difficulty)."""
