"""``usersim/Telecom-v1``: a phone carrier's support desk, where only the user can touch the phone.

Dual control, in the style of tau2-bench's telecom domain (our own data and words). The agent
has the carrier's database (**agent tools**); the customer has their phone, whose settings only
they can change (**user tools**). To get the customer's mobile data working, the agent must
find the causes on both sides: fix the carrier's side itself (with the customer's yes before
each change) and walk the customer through the phone's side, one step at a time.

**Database** (``build_db(seed)``, about 120 customers and 200 lines; money in dollars, floats
rounded to cents; data in GB, one decimal):

* ``customers`` by ``customer_id`` (``C12345``): name, phone_number (contact), email, dob,
  account_status (``active`` | ``past_due``), line_ids, payment_methods (``card_4821`` or
  ``bank_7731`` with kind, brand, last4) and bills (bill_id ``B123456``, period, amount,
  due_date, status ``paid`` | ``overdue`` | ``open``, items);
* ``lines`` by ``line_id`` (``L12345``): customer_id, phone_number (``415-555-0123``), plan_id,
  status (``active`` | ``suspended``), suspension_reason (``unpaid_bill`` |
  ``lost_or_stolen`` | ``None``), data_used_gb, data_refuel_gb, roaming_enabled (the carrier's
  side of roaming);
* ``plans`` by ``plan_id`` (``P-PLUS30``): name, data_limit_gb, price, refuel_price_per_gb;
* ``devices`` by phone number, one per line: the phone's own state — airplane_mode,
  mobile_data, data_roaming (the phone's side of roaming), sim_status (``active`` |
  ``missing`` | ``locked_pin``), apn (``correct`` | ``broken``), network_mode (``5g`` | ``4g``
  | ``3g_only``), data_saver, wifi_calling, registration (``ok`` | ``stale``: the phone must
  restart to register), abroad and country.

The user's own phone is the scenario's :attr:`Scenario.context` (``{"phone_number":
"415-555-0123"}``, the phone of the line the task is about; never shown to the agent): the user
tools act on it, the user's view shows its status bar, and a bare check checks it. The user can
use their phone at any time, before or without the agent's authentication, and authentication is
a pure read.

A phone's **mobile data works** iff its line is active, within its data limit (plan plus
refuels), airplane mode is off, mobile data is on, the SIM is active, the APN is correct, the
phone is registered, and, when abroad, roaming is on both on the line and on the phone. Data
is **fast** when it works, the network mode is not ``3g_only`` and data saver is off.
Checks for :attr:`Request.done_when`: ``mobile_data_works:<phone>``, ``fast_data:<phone>`` and
``has_service:<phone>`` (calls and texts); a bare ``mobile_data_works``, ``fast_data`` or
``has_service`` checks the user's own phone.

**Agent tools.** Read: ``get_customer_by_phone(phone_number, full_name)`` (the only
authentication tool), ``get_customer_by_id``, ``get_details_by_id`` (any customer, line, plan
or bill id), ``get_bills``, ``get_line_details``, ``get_plan_details``, ``list_plans``,
``get_data_usage``. Write: ``pay_bill`` (an overdue bill, with a payment method on file),
``resume_line`` (a line suspended for an unpaid bill, once no bill is overdue),
``refuel_data`` (whole GB, at most 5 GB per line per cycle, charged to the open bill),
``change_plan``, ``enable_roaming``, ``disable_roaming``. End: ``transfer_to_human_agents``.

**User tools** (each acts on the user's own phone, the scenario's context; the scripted user
calls one when the agent's message holds all the phrases of one of its triggers). Read:
``check_status_bar`` ("check" + "status bar"), ``check_network_settings`` ("check" + "network
settings"), ``run_speed_test`` ("speed test"). Write: ``set_airplane_mode`` ("turn off" +
"airplane mode": off), ``set_mobile_data`` ("turn on" + "mobile data": on),
``set_data_roaming`` ("turn on" + "data roaming": on), ``reset_apn_settings`` ("reset" +
"apn"), ``reseat_sim`` ("take out" + "sim" + "put it back"), ``set_network_mode`` ("network
mode" + "5g": 5g), ``set_data_saver`` ("turn off" + "data saver": off), ``reboot_device``
("restart" + "phone").

**Policy** (:attr:`TelecomDomain.policy`): authenticate by full name and phone number; an
explicit yes before each change; device steps one at a time; a line suspended for an unpaid
bill is resumed only after the overdue bill is paid with a payment method on file the
customer chooses; other suspensions and locked SIMs go to a human agent; refuels of at most
5 GB per cycle; roaming enabled for customers abroad or about to travel.

**Templates** (30): easy — airplane_mode, mobile_data_off, broken_apn, sim_not_detected,
stuck_on_3g, data_saver_slow, needs_restart, data_remaining, overdue_amount, plan_question,
disable_roaming_home; medium — data_refuel, roaming_line_abroad, roaming_phone_abroad,
roaming_both_abroad, suspended_unpaid, airplane_and_data_off, sim_and_data_off,
slow_3g_and_saver, pay_overdue_bill, change_plan; hard — suspended_and_airplane,
abroad_over_limit, suspended_apn_data_off, refuel_change_of_mind, upgrade_instead_of_refuel,
over_limit_data_off_then_trip, abroad_sim_missing, data_off_then_pay_bill,
change_plan_change_of_mind.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    Domain,
    Fact,
    Move,
    Request,
    Scenario,
    TaskDraft,
    TaskTemplate,
    Tool,
    ToolError,
)

__all__ = ["TelecomDomain"]

CARRIER = "Brightwave Mobile"
MAX_REFUEL_GB = 5
"""The most data a line may be refueled with per billing cycle, in GB."""

# plan_id, name, data_limit_gb, price, refuel_price_per_gb
_PLANS = (
    ("P-BASIC5", "Basic 5GB", 5, 25.0, 6.0),
    ("P-ESSENTIAL15", "Essential 15GB", 15, 40.0, 5.0),
    ("P-PLUS30", "Plus 30GB", 30, 55.0, 4.0),
    ("P-MAX60", "Max 60GB", 60, 70.0, 3.0),
)
_FIRST = (  # noqa: SIM905
    "Mia Liam Noah Emma Ava Lucas Zoe Omar Priya Diego Hana Ines Kofi Lena Mateo "
    "Nadia Oscar Rosa Sami Tara Yusuf Elif Jonas Keiko Marta Nikhil Paula Rui Sofia Theo"
).split()
_LAST = (  # noqa: SIM905
    "Garcia Chen Okafor Novak Silva Tanaka Haddad Kowalski Moreau Patel Rossi Jensen "
    "Ibrahim Lindqvist Mendes Nakamura Owusu Petrov Quinn Romero Schmidt Torres Varga "
    "Weber Yilmaz Alvarez Brennan Costa Dubois Eriksen"
).split()
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
_COUNTRIES = ("Spain", "Japan", "Mexico", "Italy", "Portugal", "Germany", "Thailand", "Canada")
_AREAS = (212, 305, 312, 415, 503, 617, 702, 808, 917)
# the device faults, in the order the oracle fixes them
_DEVICE_FAULTS: tuple[str, ...] = ("airplane", "sim_missing", "reboot", "data_off", "apn")
_DEVICE_FAULTS += ("roaming_phone", "3g", "saver")
# (faults of a line, how many lines have them); "grace": the customer has an overdue bill
# but the line is not suspended; "abroad_ok": abroad with roaming on at both ends.
_PROFILES: tuple[tuple[frozenset[str], int], ...] = tuple(
    (frozenset(faults.split()), count)
    for faults, count in (
        ("airplane", 6),
        ("data_off", 6),
        ("apn", 6),
        ("sim_missing", 6),
        ("3g", 6),
        ("saver", 6),
        ("reboot", 6),
        ("over_limit", 9),
        ("roaming_line", 6),
        ("roaming_phone", 6),
        ("roaming_line roaming_phone", 6),
        ("abroad_ok", 4),
        ("suspended", 7),
        ("suspended airplane", 5),
        ("suspended apn data_off", 5),
        ("suspended_other", 2),
        ("airplane data_off", 5),
        ("sim_missing data_off", 5),
        ("3g saver", 5),
        ("roaming_line roaming_phone over_limit", 5),
        ("roaming_line roaming_phone sim_missing", 5),
        ("over_limit data_off", 5),
        ("grace", 6),
        ("grace data_off", 5),
        ("sim_locked", 3),
    )
)

# ------------------------------------------------------------------ lookups and state


def _digits(phone: str) -> str:
    digits = "".join(ch for ch in phone if ch.isdigit())
    return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits


def _find_phone(db: DB, phone_number: str) -> str:
    """The devices key of ``phone_number`` written any common way (``(415) 555-0123``)."""
    wanted = _digits(phone_number)
    for key in db["devices"]:
        if _digits(key) == wanted:
            return key
    raise ToolError(
        f"no line has the phone number {phone_number!r}; phone numbers look like 415-555-0123"
    )


def _customer(db: DB, customer_id: str) -> dict[str, Any]:
    record = db["customers"].get(customer_id)
    if record is None:
        raise ToolError(
            f"no customer has the id {customer_id!r}; customer ids look like C12345 "
            "(get_customer_by_phone finds the customer of a phone number)"
        )
    return record


def _line(db: DB, line_id: str) -> dict[str, Any]:
    record = db["lines"].get(line_id)
    if record is None:
        raise ToolError(
            f"no line has the id {line_id!r}; line ids look like L12345 and are listed in "
            "the customer's line_ids"
        )
    return record


def _plan(db: DB, plan_id: str) -> dict[str, Any]:
    record = db["plans"].get(plan_id)
    if record is None:
        raise ToolError(f"no plan has the id {plan_id!r}; plans: {', '.join(db['plans'])}")
    return record


def _bill(customer: dict[str, Any], bill_id: str) -> dict[str, Any]:
    for bill in customer["bills"]:
        if bill["bill_id"] == bill_id:
            return dict(bill)
    ids = ", ".join(b["bill_id"] for b in customer["bills"])
    raise ToolError(
        f"customer {customer['customer_id']} has no bill {bill_id!r}; their bills: {ids}"
    )


def _line_of(db: DB, phone: str) -> dict[str, Any]:
    return db["lines"][db["devices"][phone]["line_id"]]


def _limit(db: DB, line: dict[str, Any]) -> float:
    return float(db["plans"][line["plan_id"]]["data_limit_gb"] + line["data_refuel_gb"])


def _has_service(db: DB, phone: str) -> bool:
    device, line = db["devices"][phone], _line_of(db, phone)
    return (
        line["status"] == "active"
        and not device["airplane_mode"]
        and device["sim_status"] == "active"
        and device["registration"] == "ok"
        and (not device["abroad"] or line["roaming_enabled"])
    )


def _mobile_data_works(db: DB, phone: str) -> bool:
    device, line = db["devices"][phone], _line_of(db, phone)
    return (
        _has_service(db, phone)
        and device["mobile_data"]
        and device["apn"] == "correct"
        and line["data_used_gb"] < _limit(db, line)
        and (not device["abroad"] or device["data_roaming"])
    )


def _speed_mbps(db: DB, phone: str) -> float:
    if not _mobile_data_works(db, phone):
        return 0.0
    device = db["devices"][phone]
    speed = {"5g": 180.0, "4g": 45.0, "3g_only": 1.5}[device["network_mode"]]
    return min(speed, 2.0) if device["data_saver"] else speed


def _fast_data(db: DB, phone: str) -> bool:
    return _speed_mbps(db, phone) >= 10.0


def _faults(db: DB, line: dict[str, Any]) -> frozenset[str]:
    """Everything wrong with a line and its phone (the customer's overdue bill aside)."""
    device = db["devices"][line["phone_number"]]
    found = set()
    if line["status"] == "suspended":
        unpaid = line["suspension_reason"] == "unpaid_bill"
        found.add("suspended" if unpaid else "suspended_other")
    if line["data_used_gb"] >= _limit(db, line):
        found.add("over_limit")
    flags = {
        "airplane": device["airplane_mode"],
        "data_off": not device["mobile_data"],
        "apn": device["apn"] != "correct",
        "sim_missing": device["sim_status"] == "missing",
        "sim_locked": device["sim_status"] == "locked_pin",
        "3g": device["network_mode"] == "3g_only",
        "saver": device["data_saver"],
        "reboot": device["registration"] != "ok",
        "roaming_line": device["abroad"] and not line["roaming_enabled"],
        "roaming_phone": device["abroad"] and not device["data_roaming"],
    }
    found.update(name for name, on in flags.items() if on)
    return frozenset(found)


def _overdue(customer: dict[str, Any]) -> list[dict[str, Any]]:
    return [bill for bill in customer["bills"] if bill["status"] == "overdue"]


def _money(amount: float) -> str:
    return f"{amount:.2f}"


# ------------------------------------------------------------------ agent tools


def get_customer_by_phone(db: DB, phone_number: str, full_name: str) -> dict[str, Any]:
    phone = _find_phone(db, phone_number)
    customer = db["customers"][_line_of(db, phone)["customer_id"]]
    if " ".join(full_name.lower().split()) != customer["name"].lower():
        raise ToolError(
            f"the name {full_name!r} does not match the holder of {phone}; ask the customer "
            "for the full name on the account"
        )
    return {k: v for k, v in customer.items() if k != "bills"}


def get_customer_by_id(db: DB, customer_id: str) -> dict[str, Any]:
    return {k: v for k, v in _customer(db, customer_id).items() if k != "bills"}


def get_details_by_id(db: DB, id: str) -> dict[str, Any]:
    if id in db["customers"]:
        return get_customer_by_id(db, id)
    for table in ("lines", "plans"):
        if id in db[table]:
            return dict(db[table][id])
    for customer in db["customers"].values():
        for bill in customer["bills"]:
            if bill["bill_id"] == id:
                return {**bill, "customer_id": customer["customer_id"]}
    raise ToolError(
        f"nothing has the id {id!r}; ids look like C12345 (customer), L12345 (line), "
        "B123456 (bill) or P-PLUS30 (plan)"
    )


def get_bills(db: DB, customer_id: str) -> list[dict[str, Any]]:
    return [dict(bill) for bill in _customer(db, customer_id)["bills"]]


def get_line_details(db: DB, line_id: str) -> dict[str, Any]:
    line = _line(db, line_id)
    return {**line, "plan_name": db["plans"][line["plan_id"]]["name"]}


def get_plan_details(db: DB, plan_id: str) -> dict[str, Any]:
    return dict(_plan(db, plan_id))


def list_plans(db: DB) -> list[dict[str, Any]]:
    return [dict(plan) for plan in db["plans"].values()]


def get_data_usage(db: DB, line_id: str) -> dict[str, Any]:
    line = _line(db, line_id)
    plan = db["plans"][line["plan_id"]]
    limit = _limit(db, line)
    return {
        "line_id": line_id,
        "data_used_gb": line["data_used_gb"],
        "data_limit_gb": plan["data_limit_gb"],
        "data_refuel_gb": line["data_refuel_gb"],
        "data_remaining_gb": round(max(limit - line["data_used_gb"], 0.0), 1),
        "over_limit": line["data_used_gb"] >= limit,
        "refuel_price_per_gb": plan["refuel_price_per_gb"],
        "refuel_left_this_cycle_gb": MAX_REFUEL_GB - line["data_refuel_gb"],
    }


def pay_bill(db: DB, customer_id: str, bill_id: str, payment_method_id: str) -> dict[str, Any]:
    customer = _customer(db, customer_id)
    bill = _bill(customer, bill_id)
    if bill["status"] != "overdue":
        raise ToolError(
            f"bill {bill_id} is {bill['status']}, not overdue: only overdue bills are paid "
            "here (open bills are charged automatically on their due date)"
        )
    methods = {m["payment_method_id"]: m for m in customer["payment_methods"]}
    if payment_method_id not in methods:
        raise ToolError(
            f"customer {customer_id} has no payment method {payment_method_id!r}; on file: "
            f"{', '.join(methods)}"
        )
    for record in customer["bills"]:
        if record["bill_id"] == bill_id:
            record["status"], record["paid_with"] = "paid", payment_method_id
    if not _overdue(customer):
        customer["account_status"] = "active"
    return {"bill_id": bill_id, "status": "paid", "amount": bill["amount"]}


def resume_line(db: DB, line_id: str) -> dict[str, Any]:
    line = _line(db, line_id)
    if line["status"] != "suspended":
        raise ToolError(f"line {line_id} is {line['status']}, not suspended")
    if line["suspension_reason"] != "unpaid_bill":
        raise ToolError(
            f"line {line_id} is suspended for {line['suspension_reason']}: only a human agent "
            "can lift that (transfer_to_human_agents)"
        )
    overdue = _overdue(db["customers"][line["customer_id"]])
    if overdue:
        raise ToolError(
            f"line {line_id} stays suspended while bill {overdue[0]['bill_id']} "
            f"(${_money(overdue[0]['amount'])}) is overdue: pay it first (pay_bill)"
        )
    line["status"], line["suspension_reason"] = "active", None
    return {"line_id": line_id, "status": "active"}


def refuel_data(db: DB, line_id: str, gb: int) -> dict[str, Any]:
    line = _line(db, line_id)
    if line["status"] != "active":
        raise ToolError(f"line {line_id} is {line['status']}: only active lines can be refueled")
    left = MAX_REFUEL_GB - line["data_refuel_gb"]
    if isinstance(gb, bool) or not isinstance(gb, int) or gb < 1:
        raise ToolError(f"gb must be a whole number of GB, at least 1 (got {gb!r})")
    if gb > left:
        raise ToolError(
            f"line {line_id} can get at most {left} GB more this cycle (the policy's limit is "
            f"{MAX_REFUEL_GB} GB per cycle; it has {line['data_refuel_gb']} GB already)"
        )
    price = db["plans"][line["plan_id"]]["refuel_price_per_gb"]
    cost = round(gb * price, 2)
    line["data_refuel_gb"] += gb
    customer = db["customers"][line["customer_id"]]
    bill = next(b for b in customer["bills"] if b["status"] == "open")
    bill["amount"] = round(bill["amount"] + cost, 2)
    bill["items"].append({"description": f"data refuel {gb} GB ({line_id})", "amount": cost})
    return {"line_id": line_id, "added_gb": gb, "cost": cost, "charged_to_bill": bill["bill_id"]}


def change_plan(db: DB, line_id: str, plan_id: str) -> dict[str, Any]:
    line = _line(db, line_id)
    plan = _plan(db, plan_id)
    if line["status"] != "active":
        raise ToolError(f"line {line_id} is {line['status']}: resume it before changing plans")
    if line["plan_id"] == plan_id:
        raise ToolError(f"line {line_id} is already on {plan_id} ({plan['name']})")
    line["plan_id"] = plan_id
    return {"line_id": line_id, "plan_id": plan_id, "plan_name": plan["name"]}


def _set_roaming(db: DB, line_id: str, on: bool) -> dict[str, Any]:
    line = _line(db, line_id)
    if line["roaming_enabled"] == on:
        raise ToolError(f"roaming is already {'enabled' if on else 'disabled'} on line {line_id}")
    if on and line["status"] != "active":
        raise ToolError(f"line {line_id} is {line['status']}: roaming needs an active line")
    line["roaming_enabled"] = on
    return {"line_id": line_id, "roaming_enabled": on}


def enable_roaming(db: DB, line_id: str) -> dict[str, Any]:
    return _set_roaming(db, line_id, True)


def disable_roaming(db: DB, line_id: str) -> dict[str, Any]:
    return _set_roaming(db, line_id, False)


def transfer_to_human_agents(db: DB, summary: str) -> str:
    return "Transfer successful: a human agent will take over the conversation."


# ------------------------------------------------------------------ user tools


def _my_phone(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    """The user's own phone: the device of the scenario's ``context["phone_number"]``."""
    device: dict[str, Any] = db["devices"][context["phone_number"]]
    return device


def _status_bar(db: DB, phone: str) -> dict[str, Any]:
    device, line = db["devices"][phone], _line_of(db, phone)
    if device["airplane_mode"]:
        signal = "none, airplane mode icon shown"
    elif device["sim_status"] == "missing":
        signal = "No SIM"
    elif device["sim_status"] == "locked_pin":
        signal = "SIM locked, PIN required"
    elif device["registration"] != "ok":
        signal = "No service"
    elif line["status"] != "active" or (device["abroad"] and not line["roaming_enabled"]):
        signal = "Emergency calls only"
    else:
        signal = "4 bars" + (f", roaming in {device['country']}" if device["abroad"] else "")
    if _mobile_data_works(db, phone):
        data = {"5g": "5G", "4g": "4G", "3g_only": "3G"}[device["network_mode"]] + " icon"
    else:
        data = "no mobile data icon"
    icons = [n for n in ("data_saver", "wifi_calling") if device[n]]
    return {"signal": signal, "mobile_data": data, "other_icons": icons}


def check_status_bar(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    return _status_bar(db, _my_phone(db, context)["phone_number"])


def check_network_settings(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    device = _my_phone(db, context)
    return {
        "airplane_mode": device["airplane_mode"],
        "mobile_data": device["mobile_data"],
        "data_roaming": device["data_roaming"],
        "preferred_network_mode": device["network_mode"],
        "data_saver": device["data_saver"],
        "apn": "default" if device["apn"] == "correct" else "custom (edited)",
        "sim_card": {"active": "detected", "missing": "not detected", "locked_pin": "locked"}[
            device["sim_status"]
        ],
    }


def run_speed_test(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    speed = _speed_mbps(db, _my_phone(db, context)["phone_number"])
    if speed == 0.0:
        return {"result": "no connection"}
    return {"download_mbps": speed, "rating": "fast" if speed >= 10.0 else "very slow"}


def _set_setting(db: DB, context: Mapping[str, Any], on: bool, setting: str) -> str:
    _my_phone(db, context)[setting] = bool(on)
    return f"{setting.replace('_', ' ')} is now {'on' if on else 'off'}"


def reset_apn_settings(db: DB, context: Mapping[str, Any]) -> str:
    _my_phone(db, context)["apn"] = "correct"
    return "APN settings restored to the defaults"


def reseat_sim(db: DB, context: Mapping[str, Any]) -> str:
    device = _my_phone(db, context)
    if device["sim_status"] == "missing":
        device["sim_status"] = "active"
    return f"SIM card taken out and put back; SIM status: {device['sim_status']}"


def set_network_mode(db: DB, context: Mapping[str, Any], mode: str) -> str:
    if mode not in ("5g", "4g", "3g_only"):
        raise ToolError(f"network mode {mode!r} does not exist: choose 5g, 4g or 3g_only")
    _my_phone(db, context)["network_mode"] = mode
    return f"preferred network mode is now {mode}"


def reboot_device(db: DB, context: Mapping[str, Any]) -> str:
    _my_phone(db, context)["registration"] = "ok"
    return "the phone restarted"


_ON = {"on": {"type": "boolean", "description": "true to turn it on, false to turn it off"}}


def _user_tools() -> list[Tool]:
    def setter(name: str, field: str, on: bool) -> Tool:
        words = field.replace("_", " ")
        verbs = ("turn on", "switch on", "enable") if on else ("turn off", "switch off", "disable")
        return Tool(
            name,
            f"Turn {words} on or off on your phone.",
            _ON,
            functools.partial(_set_setting, setting=field),
            writes=True,
            triggers=tuple((verb, words) for verb in verbs),
            trigger_arguments={"on": on},
        )

    return [
        Tool(
            "check_status_bar",
            "Look at your phone's status bar: signal, mobile data icon, other icons.",
            {},
            check_status_bar,
            triggers=(("check", "status bar"),),
        ),
        Tool(
            "check_network_settings",
            "Open your phone's mobile network settings and read them.",
            {},
            check_network_settings,
            triggers=(("check", "network settings"),),
        ),
        Tool(
            "run_speed_test",
            "Run a speed test of your phone's mobile data.",
            {},
            run_speed_test,
            triggers=(("speed test",),),
        ),
        setter("set_airplane_mode", "airplane_mode", False),
        setter("set_mobile_data", "mobile_data", True),
        setter("set_data_roaming", "data_roaming", True),
        setter("set_data_saver", "data_saver", False),
        Tool(
            "reset_apn_settings",
            "Reset your phone's APN (data connection) settings to the defaults.",
            {},
            reset_apn_settings,
            writes=True,
            triggers=(("reset", "apn"),),
        ),
        Tool(
            "reseat_sim",
            "Take the SIM card out of your phone and put it back in.",
            {},
            reseat_sim,
            writes=True,
            triggers=(("reseat", "sim"), ("take out", "sim", "put it back")),
        ),
        Tool(
            "set_network_mode",
            "Set your phone's preferred network mode: 5g, 4g or 3g_only.",
            {"mode": {"type": "string", "description": "5g, 4g or 3g_only"}},
            set_network_mode,
            writes=True,
            triggers=(("network mode", "5g"),),
            trigger_arguments={"mode": "5g"},
        ),
        Tool(
            "reboot_device",
            "Restart your phone.",
            {},
            reboot_device,
            writes=True,
            triggers=(("restart", "phone"), ("reboot", "phone")),
        ),
    ]


# ------------------------------------------------------------------ checks


class _Checks(Mapping[str, Callable[[DB, Mapping[str, Any]], bool]]):
    """``kind:phone`` (``mobile_data_works:415-555-0123``) -> ``check(db, context)`` of that
    phone; a bare ``kind`` checks the user's own phone, ``context["phone_number"]``."""

    kinds: ClassVar[dict[str, Callable[[DB, str], bool]]] = {
        "has_service": _has_service,
        "mobile_data_works": _mobile_data_works,
        "fast_data": _fast_data,
    }

    def __getitem__(self, name: str) -> Callable[[DB, Mapping[str, Any]], bool]:
        kind, _, phone = name.partition(":")
        check = self.kinds.get(kind)
        if check is None:
            raise KeyError(name)

        def run(db: DB, context: Mapping[str, Any]) -> bool:
            number = phone or context.get("phone_number")
            return number in db["devices"] and check(db, number)

        return run

    def __iter__(self) -> Iterator[str]:
        return iter(self.kinds)

    def __len__(self) -> int:
        return len(self.kinds)


# ------------------------------------------------------------------ the database


def _build(seed: int) -> DB:
    rng = np.random.default_rng(seed)
    sizes = [int(s) for s in rng.permutation([1] * 55 + [2] * 50 + [3] * 15)]
    n_customers, n_lines = len(sizes), sum(sizes)
    owner = [c for c, size in enumerate(sizes) for _ in range(size)]
    names = [(f, last) for f in _FIRST for last in _LAST]
    picked = [names[int(i)] for i in rng.choice(len(names), n_customers, replace=False)]
    customer_ids = [f"C{int(i)}" for i in rng.choice(90000, n_customers, replace=False) + 10000]
    line_ids = [f"L{int(i)}" for i in rng.choice(90000, n_lines, replace=False) + 10000]
    numbers = rng.choice(9000, n_lines, replace=False) + 1000
    phones = [
        f"{_AREAS[int(rng.integers(len(_AREAS)))]}-555-{int(n):04d}"  # 555-0100..: fictional
        for n in numbers
    ]

    specs: list[frozenset[str]] = [faults for faults, count in _PROFILES for _ in range(count)]
    specs += [frozenset()] * (n_lines - len(specs))
    alone = [i for i in range(n_lines) if sizes[owner[i]] == 1]
    suspended = [s for s in specs if s & {"suspended", "suspended_other"}]
    others = [s for s in specs if not s & {"suspended", "suspended_other"}]
    assigned: dict[int, frozenset[str]] = {}
    for i, spec in zip(rng.permutation(alone)[: len(suspended)], suspended, strict=True):
        assigned[int(i)] = spec
    rest = [i for i in range(n_lines) if i not in assigned]
    for i, k in zip(rest, rng.permutation(len(others)), strict=True):
        assigned[i] = others[int(k)]

    plans: dict[str, dict[str, Any]] = {
        pid: {
            "plan_id": pid,
            "name": name,
            "data_limit_gb": limit,
            "price": price,
            "refuel_price_per_gb": refuel,
        }
        for pid, name, limit, price, refuel in _PLANS
    }
    lines: dict[str, dict[str, Any]] = {}
    devices: dict[str, dict[str, Any]] = {}
    for i in range(n_lines):
        spec = assigned[i]
        pid = _PLANS[int(rng.integers(len(_PLANS)))][0]
        limit = plans[pid]["data_limit_gb"]
        refuel = int(rng.choice([0, 0, 0, 1, 2]))
        if "over_limit" in spec:
            used = float(limit + refuel)
        else:
            used = round(float(rng.uniform(0.05, 0.85)) * limit, 1)
        abroad = bool(spec & {"roaming_line", "roaming_phone", "abroad_ok"})
        status = "suspended" if spec & {"suspended", "suspended_other"} else "active"
        reason = None
        if status == "suspended":
            reason = "unpaid_bill" if "suspended" in spec else "lost_or_stolen"
        lines[line_ids[i]] = {
            "line_id": line_ids[i],
            "customer_id": customer_ids[owner[i]],
            "phone_number": phones[i],
            "plan_id": pid,
            "status": status,
            "suspension_reason": reason,
            "data_used_gb": used,
            "data_refuel_gb": refuel,
            "roaming_enabled": ("roaming_line" not in spec if abroad else bool(rng.random() < 0.3)),
        }
        sim = "active"
        if "sim_missing" in spec:
            sim = "missing"
        elif "sim_locked" in spec:
            sim = "locked_pin"
        devices[phones[i]] = {
            "phone_number": phones[i],
            "line_id": line_ids[i],
            "airplane_mode": "airplane" in spec,
            "mobile_data": "data_off" not in spec,
            "data_roaming": "roaming_phone" not in spec if abroad else bool(rng.random() < 0.5),
            "sim_status": sim,
            "apn": "broken" if "apn" in spec else "correct",
            "network_mode": "3g_only" if "3g" in spec else ("5g" if rng.random() < 0.6 else "4g"),
            "data_saver": "saver" in spec,
            "wifi_calling": bool(rng.random() < 0.4),
            "registration": "stale" if "reboot" in spec else "ok",
            "abroad": abroad,
            "country": _COUNTRIES[int(rng.integers(len(_COUNTRIES)))] if abroad else None,
        }

    customers: dict[str, dict[str, Any]] = {}
    bill_ids = iter(int(i) for i in rng.choice(900000, 3 * n_customers, replace=False) + 100000)
    for c, cid in enumerate(customer_ids):
        first, last = picked[c]
        mine = [i for i in range(n_lines) if owner[i] == c]
        overdue = any(bool(assigned[i] & {"grace", "suspended"}) for i in mine)
        methods = [_method(rng, "card")] + ([_method(rng, "bank")] if rng.random() < 0.5 else [])
        monthly = sum(plans[lines[line_ids[i]]["plan_id"]]["price"] for i in mine)
        bills = []
        for period, due, status in (
            ("2026-08", "2026-09-20", "paid"),
            ("2026-09", "2026-10-20", "overdue" if overdue else "paid"),
            ("2026-10", "2026-11-20", "open"),
        ):
            extra = float(rng.choice([0.0, 0.0, 4.99, 9.5, 12.75]))
            items = [{"description": "monthly plans", "amount": float(monthly)}]
            if extra:
                items.append({"description": "international calls", "amount": extra})
            bills.append(
                {
                    "bill_id": f"B{next(bill_ids)}",
                    "period": period,
                    "amount": round(monthly + extra, 2),
                    "due_date": due,
                    "status": status,
                    "items": items,
                }
            )
        customers[cid] = {
            "customer_id": cid,
            "name": f"{first} {last}",
            "phone_number": phones[mine[0]],
            "email": f"{first.lower()}.{last.lower()}{int(rng.integers(10, 99))}@example.com",
            "dob": f"{int(rng.integers(1950, 2004))}-{int(rng.integers(1, 13)):02d}-"
            f"{int(rng.integers(1, 29)):02d}",
            "account_status": "past_due" if overdue else "active",
            "line_ids": [line_ids[i] for i in mine],
            "payment_methods": methods,
            "bills": bills,
        }
    return {
        "customers": customers,
        "lines": lines,
        "plans": plans,
        "devices": devices,
    }


def _method(rng: np.random.Generator, kind: str) -> dict[str, Any]:
    last4 = f"{int(rng.integers(10000)):04d}"
    if kind == "card":
        brand = ("visa", "mastercard", "amex")[int(rng.integers(3))]
        return {"payment_method_id": f"card_{last4}", "kind": "credit_card", "brand": brand,
                "last4": last4}  # fmt: skip
    return {"payment_method_id": f"bank_{last4}", "kind": "bank_account", "brand": "bank",
            "last4": last4}  # fmt: skip


def _describe(method: dict[str, Any]) -> str:
    if method["kind"] == "credit_card":
        brand = {"visa": "Visa", "mastercard": "Mastercard", "amex": "Amex"}[method["brand"]]
        return f"{brand} card ending in {method['last4']}"
    return f"bank account ending in {method['last4']}"


# ------------------------------------------------------------------ the oracle's scripts

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


def _fix_template(
    name: str,
    difficulty: str,
    faults: str,
    *,
    change: str | None = None,
    then: str | None = None,
) -> TaskTemplate:
    """A broken phone: fix every cause in ``faults``. ``change``: "amount" (the user changes
    the refuel amount) or "upgrade" (a plan change instead of a refuel); ``then``: a second
    request once it works, "trip" (roaming for a trip) or "pay" (an overdue bill)."""
    wanted = frozenset(faults.split())
    goal = "fast_data" if wanted & {"3g", "saver"} else "mobile_data_works"
    pay_after = then == "pay"

    def draw(db: DB, rng: np.random.Generator) -> TaskDraft | None:
        base = _exactly(db, wanted, overdue=pay_after)

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
        single = writes == 1
        expects: tuple[str, ...] = ()
        confirm: tuple[str, ...] = ()
        then_confirm: tuple[str, ...] = ()
        change_text: str | None = None
        closing = ["Your phone is working again."]
        if "suspended" in carrier:
            amount, _ = s.pay_overdue(single=False)
            s.resume()
            expects += (amount,)
            closing.append(f"Bill payment of ${amount} received and your line is active.")
        if "roaming_line" in carrier:
            s.enable_roaming("International roaming is not enabled on your line.")
            confirm = ("roaming",) if single else ()
            closing.append("Roaming is now on for your line.")
        if "over_limit" in carrier:
            left = MAX_REFUEL_GB - line["data_refuel_gb"]
            gb = int(rng.integers(1, min(3, left) + 1))
            s.ask_refuel(gb)
            if change == "amount":
                other = [n for n in range(1, left + 1) if n != gb]
                final = other[int(rng.integers(len(other)))]
                s.say(
                    f"I will add {gb} GB of data to your line {s.phone} for "
                    f"${_money(gb * s.plan['refuel_price_per_gb'])}, charged to your current "
                    f"bill. {_PROCEED}"
                )
                change_text = f"Actually, could you make it {final} GB instead?"
                confirm, then_confirm = (f"{gb} gb",), (f"{final} gb",)
                cost = s.refuel(final)
                expects += (cost,)
                closing.append(f"{final} GB were added for ${cost}.")
            elif change == "upgrade":
                price = s.plan["refuel_price_per_gb"]
                s.say(
                    f"I will add {gb} GB of data to your line {s.phone} for "
                    f"${_money(gb * price)}, charged to your current bill. {_PROCEED}"
                )
                bigger = [
                    p for p in db["plans"].values()
                    if p["data_limit_gb"] > max(s.plan["data_limit_gb"], line["data_used_gb"])
                ]  # fmt: skip
                plan = bigger[int(rng.integers(len(bigger)))]
                change_text = (
                    "Actually, rather than a one-off top-up, please move me to the "
                    f"{plan['name']} plan."
                )
                confirm, then_confirm = (f"{gb} gb",), (plan["name"].lower(),)
                s.call("list_plans")
                s.propose_plan(plan)
                s.call("change_plan", line_id=line["line_id"], plan_id=plan["plan_id"])
                expects += (_money(plan["price"]),)
                closing.append(
                    f"You are now on {plan['name']} at ${_money(plan['price'])} per month."
                )
            else:
                cost = s.refuel(gb)
                confirm = (f"{gb} gb",) if single else ()
                expects += (cost,)
                closing.append(f"The {gb} GB refuel cost ${cost} and is on your current bill.")
        s.check(goal)
        requests = [
            Request(
                says="Please help me get my phone's mobile data working properly again.",
                writes=writes,
                confirm=confirm,
                expects=expects,
                change=change_text,
                then_confirm=then_confirm,
                done_when=f"{goal}:{s.phone}",
            )
        ]
        s.say(" ".join(closing) + " Is there anything else?")
        if then == "trip":
            requests.append(
                Request(
                    says="One more thing: I am travelling abroad next week. Please make sure "
                    "international roaming is enabled on my line.",
                    writes=1,
                    confirm=("roaming",),
                )
            )
            s.enable_roaming("Roaming is currently disabled on your line.")
            s.say("Roaming is now active on your line. Have a good trip!")
        elif pay_after:
            amount, confirm = s.pay_overdue(single=True)
            requests.append(
                Request(
                    says="Also, I got a notice about an overdue bill. Could you pay it for me?",
                    writes=1,
                    confirm=confirm,
                    expects=(amount,),
                )
            )
            s.say(f"Done: ${amount} is paid and your account is in good standing.")
        return s.draft(_opening(rng, wanted, s.device), requests)

    return TaskTemplate(name, difficulty, draw)


def _data_remaining(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def _overdue_amount(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def _plan_question(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def _disable_roaming(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def _pay_overdue_bill(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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


def _change_plan_template(name: str, difficulty: str, *, change: bool) -> TaskTemplate:
    def draw(db: DB, rng: np.random.Generator) -> TaskDraft | None:
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
        return s.draft(
            "Hi, I'd like to change my plan.",
            [
                Request(
                    says=ask,
                    writes=1,
                    confirm=confirm,
                    expects=(price,),
                    change=change_text,
                    then_confirm=then_confirm,
                )
            ],
        )

    return TaskTemplate(name, difficulty, draw)


_POLICY = f"""\
# {CARRIER} technical support policy

You are a support agent of {CARRIER}, a mobile phone carrier. You help customers with their
lines, bills, plans and mobile data problems. Today is 2026-11-05.

## Identity
- Before you look into an account or change anything, authenticate the customer: ask for
  their **full name** and the **phone number** of the line the call is about, and call
  `get_customer_by_phone` with them. A customer id alone does not authenticate anyone.
- Help the authenticated customer with their own lines only.

## Changes to the account
- The changes are `pay_bill`, `resume_line`, `refuel_data`, `change_plan`,
  `enable_roaming` and `disable_roaming`. Before each one, tell the customer exactly what you
  will do (which bill or line, the amount or price) and get an explicit **yes**. One yes
  covers one change.
- Quote money with two decimals ($12.00) and data with one decimal (2.5 GB).

## Troubleshooting (you cannot see or touch the customer's phone)
- Only the customer can check or change their phone. Ask them to check their status bar, their
  network settings or to run a speed test, and guide them through **one step at a time**.
- Mobile data works when the line is active, within its data allowance, and the phone has
  airplane mode off, mobile data on, a detected SIM card, default APN settings, is
  registered on the network (a restart fixes a stale registration), and, when the customer is
  abroad, roaming is enabled both on the line (`enable_roaming`) and on the phone (data
  roaming). Slow data comes from a phone limited to 3G (set the network mode to 5G) or from
  data saver.
- A SIM card that is not detected: ask the customer to take it out and put it back in. A SIM
  locked by its PIN needs a PUK code: transfer to a human agent.

## Suspended lines and bills
- A line suspended for an unpaid bill is resumed only after the overdue bill is paid. Pay it
  with a payment method on file that the customer chooses (ask which), then resume the line
  with a separate confirmation.
- Lines suspended for any other reason (lost or stolen) can only be resumed by a human agent.
- Only overdue bills can be paid here; open bills are charged on their due date.

## Data and plans
- A line over its data allowance can be refueled: whole GB, at most {MAX_REFUEL_GB} GB per line
  per billing cycle in total, at the plan's refuel price, charged to the open bill. Ask how
  much data the customer wants and tell them the cost.
- A customer may change the plan of an active line to any other plan; tell them its price.
- Enable roaming only for a customer who is abroad or about to travel; disable it on request.

## Transfers
- Transfer to a human agent (`transfer_to_human_agents`) only when the request cannot be
  handled with your tools under this policy.
"""


def _switch(*verbs: str) -> tuple[tuple[str, ...], ...]:
    """How a proposal names turning roaming on (or off): a verb and "roaming"."""
    return tuple((verb, "roaming") for verb in verbs)


class TelecomDomain(Domain):
    """A mobile carrier, dual control: see the module docstring."""

    name = "telecom"
    title = f"a technical-support agent of {CARRIER}, a mobile phone carrier"
    policy = _POLICY
    auth_tools = frozenset({"get_customer_by_phone"})
    end_tools = frozenset({"transfer_to_human_agents"})
    vocabularies = (tuple(name.lower() for _, name, *_ in _PLANS),)

    def owner(self, db: DB, name: str, arguments: Mapping[str, Any], result: Any) -> str | None:
        if isinstance(result, dict) and "customer_id" in result:
            return str(result["customer_id"])
        if "customer_id" in arguments:
            return str(arguments["customer_id"])
        if "line_id" in arguments:
            return str(_line(db, arguments["line_id"])["customer_id"])
        return None

    def names(self, argument: str, value: Any, db: DB) -> tuple[str, ...]:
        """A line is named by its phone number too, a plan by its name."""
        names = super().names(argument, value, db)
        if argument == "line_id" and value in db["lines"]:
            return (*names, db["lines"][value]["phone_number"])
        if argument == "plan_id" and value in db["plans"]:
            return (*names, str(db["plans"][value]["name"]).lower())
        return names

    def build_db(self, seed: int) -> DB:
        return _build(seed)

    def agent_tools(self) -> list[Tool]:
        s = {"type": "string"}
        customer_id = {"customer_id": {**s, "description": "the customer's id, like C12345"}}
        line_id = {"line_id": {**s, "description": "the line's id, like L12345"}}
        return [
            Tool(
                "get_customer_by_phone",
                "Authenticate a customer by a phone number of theirs and their full name; "
                "returns their record (lines, payment methods).",
                {
                    "phone_number": {**s, "description": "a phone number, like 415-555-0123"},
                    "full_name": {**s, "description": "the account holder's full name"},
                },
                get_customer_by_phone,
            ),
            Tool("get_customer_by_id", "A customer's record.", customer_id, get_customer_by_id),
            Tool(
                "get_details_by_id",
                "Any record by its id: customer (C...), line (L...), bill (B...), plan (P-...).",
                {"id": {**s, "description": "the id"}},
                get_details_by_id,
            ),
            Tool("get_bills", "A customer's bills.", customer_id, get_bills),
            Tool("get_line_details", "A line's details.", line_id, get_line_details),
            Tool(
                "get_plan_details",
                "A plan's details.",
                {"plan_id": {**s, "description": "the plan's id, like P-PLUS30"}},
                get_plan_details,
            ),
            Tool("list_plans", "Every plan on offer.", {}, list_plans),
            Tool(
                "get_data_usage",
                "A line's data usage this billing cycle, its allowance and refuel price.",
                line_id,
                get_data_usage,
            ),
            Tool(
                "pay_bill",
                "Pay a customer's overdue bill with one of their payment methods on file.",
                {
                    **customer_id,
                    "bill_id": {**s, "description": "the bill's id, like B123456"},
                    "payment_method_id": {**s, "description": "like card_4821 or bank_7731"},
                },
                pay_bill,
                writes=True,
                proposed_as=(("pay",),),
                named_arguments=("bill_id",),
            ),
            Tool(
                "resume_line",
                "Resume a line suspended for an unpaid bill (once no bill is overdue).",
                line_id,
                resume_line,
                writes=True,
                proposed_as=(("resume",),),
                named_arguments=("line_id",),
            ),
            Tool(
                "refuel_data",
                "Add data to a line for this billing cycle, charged to the open bill.",
                {**line_id, "gb": {"type": "integer", "description": "whole GB to add"}},
                refuel_data,
                writes=True,
                proposed_as=(("data",),),
                named_arguments=("line_id", "gb"),
            ),
            Tool(
                "change_plan",
                "Move an active line to another plan.",
                {**line_id, "plan_id": {**s, "description": "the new plan's id"}},
                change_plan,
                writes=True,
                proposed_as=(("plan",), ("move",), ("switch",), ("change",), ("upgrade",)),
                named_arguments=("line_id", "plan_id"),
            ),
            Tool(
                "enable_roaming",
                "Enable roaming on a line.",
                line_id,
                enable_roaming,
                writes=True,
                proposed_as=_switch("enable", "turn on", "activate", "switch on"),
                named_arguments=("line_id",),
            ),
            Tool(
                "disable_roaming",
                "Disable roaming on a line.",
                line_id,
                disable_roaming,
                writes=True,
                proposed_as=_switch("disable", "turn off", "deactivate", "switch off"),
                named_arguments=("line_id",),
            ),
            Tool(
                "transfer_to_human_agents",
                "Hand the conversation to a human agent; it ends your part.",
                {"summary": {**s, "description": "the customer's issue, for the human agent"}},
                transfer_to_human_agents,
            ),
        ]

    def user_tools(self) -> list[Tool]:
        return _user_tools()

    def checks(self) -> Mapping[str, Callable[[DB, Mapping[str, Any]], bool]]:
        return _Checks()

    def user_view(self, db: DB, context: Mapping[str, Any]) -> str:
        phone = context.get("phone_number")
        if phone not in db["devices"]:
            return ""  # no phone of the user's own (not a telecom scenario)
        bar = _status_bar(db, phone)
        icons = ", ".join(bar["other_icons"]) or "none"
        return f"Signal: {bar['signal']}. Mobile data: {bar['mobile_data']}. Icons: {icons}."

    def templates(self) -> list[TaskTemplate]:
        fix = _fix_template
        return [
            fix("airplane_mode", "easy", "airplane"),
            fix("mobile_data_off", "easy", "data_off"),
            fix("broken_apn", "easy", "apn"),
            fix("sim_not_detected", "easy", "sim_missing"),
            fix("stuck_on_3g", "easy", "3g"),
            fix("data_saver_slow", "easy", "saver"),
            fix("needs_restart", "easy", "reboot"),
            TaskTemplate("data_remaining", "easy", _data_remaining),
            TaskTemplate("overdue_amount", "easy", _overdue_amount),
            TaskTemplate("plan_question", "easy", _plan_question),
            TaskTemplate("disable_roaming_home", "easy", _disable_roaming),
            fix("data_refuel", "medium", "over_limit"),
            fix("roaming_line_abroad", "medium", "roaming_line"),
            fix("roaming_phone_abroad", "medium", "roaming_phone"),
            fix("roaming_both_abroad", "medium", "roaming_line roaming_phone"),
            fix("suspended_unpaid", "medium", "suspended"),
            fix("airplane_and_data_off", "medium", "airplane data_off"),
            fix("sim_and_data_off", "medium", "sim_missing data_off"),
            fix("slow_3g_and_saver", "medium", "3g saver"),
            TaskTemplate("pay_overdue_bill", "medium", _pay_overdue_bill),
            _change_plan_template("change_plan", "medium", change=False),
            fix("suspended_and_airplane", "hard", "suspended airplane"),
            fix("abroad_over_limit", "hard", "roaming_line roaming_phone over_limit"),
            fix("suspended_apn_data_off", "hard", "suspended apn data_off"),
            fix("refuel_change_of_mind", "hard", "over_limit", change="amount"),
            fix("upgrade_instead_of_refuel", "hard", "over_limit", change="upgrade"),
            fix("over_limit_data_off_then_trip", "hard", "over_limit data_off", then="trip"),
            fix("abroad_sim_missing", "hard", "roaming_line roaming_phone sim_missing"),
            fix("data_off_then_pay_bill", "hard", "data_off", then="pay"),
            _change_plan_template("change_plan_change_of_mind", "hard", change=True),
        ]
