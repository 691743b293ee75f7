"""The telecom database: its tables, the generator that fills them from a seed, and the
state every tool and check reads (is the line over its limit? does the phone's data work?).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from agentgym.envs.usersim.domain import (
    DB,
    ToolError,
)

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


@dataclass(frozen=True)
class _Layout:
    """The database's skeleton: each line's owner (a customer's index), the names, ids and
    phone numbers, and the faults each line is given (by ``_PROFILES``)."""

    owner: list[int]
    picked: list[tuple[str, str]]
    customer_ids: list[str]
    line_ids: list[str]
    phones: list[str]
    assigned: dict[int, frozenset[str]]


def _layout(rng: np.random.Generator) -> _Layout:
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
    # Suspended lines go to customers with one line; every other profile to any line.
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
    return _Layout(owner, picked, customer_ids, line_ids, phones, assigned)


def _build(seed: int) -> DB:
    """The telecom database of ``seed`` (see the package's docstring for its tables)."""
    rng = np.random.default_rng(seed)
    layout = _layout(rng)
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
    for i, line_id in enumerate(layout.line_ids):
        lines[line_id] = _new_line(rng, layout, i, plans)
        devices[layout.phones[i]] = _new_device(rng, layout, i)
    customers = _build_customers(rng, layout, lines, plans)
    return {
        "customers": customers,
        "lines": lines,
        "plans": plans,
        "devices": devices,
    }


def _abroad(spec: frozenset[str]) -> bool:
    return bool(spec & {"roaming_line", "roaming_phone", "abroad_ok"})


def _new_line(
    rng: np.random.Generator, layout: _Layout, i: int, plans: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Line ``i`` of the layout, on a random plan, with its faults on the carrier's side."""
    spec = layout.assigned[i]
    pid = _PLANS[int(rng.integers(len(_PLANS)))][0]
    limit = plans[pid]["data_limit_gb"]
    refuel = int(rng.choice([0, 0, 0, 1, 2]))
    if "over_limit" in spec:
        used = float(limit + refuel)
    else:
        used = round(float(rng.uniform(0.05, 0.85)) * limit, 1)
    status = "suspended" if spec & {"suspended", "suspended_other"} else "active"
    reason = None
    if status == "suspended":
        reason = "unpaid_bill" if "suspended" in spec else "lost_or_stolen"
    return {
        "line_id": layout.line_ids[i],
        "customer_id": layout.customer_ids[layout.owner[i]],
        "phone_number": layout.phones[i],
        "plan_id": pid,
        "status": status,
        "suspension_reason": reason,
        "data_used_gb": used,
        "data_refuel_gb": refuel,
        "roaming_enabled": (
            "roaming_line" not in spec if _abroad(spec) else bool(rng.random() < 0.3)
        ),
    }


def _new_device(rng: np.random.Generator, layout: _Layout, i: int) -> dict[str, Any]:
    """The phone of line ``i``, with its faults on the phone's side."""
    spec = layout.assigned[i]
    abroad = _abroad(spec)
    sim = "active"
    if "sim_missing" in spec:
        sim = "missing"
    elif "sim_locked" in spec:
        sim = "locked_pin"
    return {
        "phone_number": layout.phones[i],
        "line_id": layout.line_ids[i],
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


def _build_customers(
    rng: np.random.Generator,
    layout: _Layout,
    lines: dict[str, dict[str, Any]],
    plans: dict[str, dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """The customers of the layout, with their payment methods and three months of bills."""
    n_lines = len(layout.line_ids)
    customers: dict[str, dict[str, Any]] = {}
    count = len(layout.customer_ids)
    bill_ids = iter(int(i) for i in rng.choice(900000, 3 * count, replace=False) + 100000)
    for c, cid in enumerate(layout.customer_ids):
        first, last = layout.picked[c]
        mine = [i for i in range(n_lines) if layout.owner[i] == c]
        overdue = any(bool(layout.assigned[i] & {"grace", "suspended"}) for i in mine)
        methods = [_method(rng, "card")] + ([_method(rng, "bank")] if rng.random() < 0.5 else [])
        monthly = sum(plans[lines[layout.line_ids[i]]["plan_id"]]["price"] for i in mine)
        bills = _bills(rng, bill_ids, monthly, overdue)
        customers[cid] = {
            "customer_id": cid,
            "name": f"{first} {last}",
            "phone_number": layout.phones[mine[0]],
            "email": f"{first.lower()}.{last.lower()}{int(rng.integers(10, 99))}@example.com",
            "dob": f"{int(rng.integers(1950, 2004))}-{int(rng.integers(1, 13)):02d}-"
            f"{int(rng.integers(1, 29)):02d}",
            "account_status": "past_due" if overdue else "active",
            "line_ids": [layout.line_ids[i] for i in mine],
            "payment_methods": methods,
            "bills": bills,
        }
    return customers


def _bills(
    rng: np.random.Generator, bill_ids: Iterator[int], monthly: float, overdue: bool
) -> list[dict[str, Any]]:
    """A customer's bills of August (paid), September (overdue or paid) and October (open)."""
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
    return bills


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
