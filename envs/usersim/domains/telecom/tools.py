"""The telecom agent's tools: the carrier's side (customers, lines, bills, plans, roaming)."""

from __future__ import annotations

from typing import Any

from agentgym.envs.usersim.domain import (
    DB,
    Tool,
    ToolError,
)
from agentgym.envs.usersim.domains.telecom.data_model import (
    MAX_REFUEL_GB,
    _bill,
    _customer,
    _find_phone,
    _limit,
    _line,
    _line_of,
    _money,
    _overdue,
    _plan,
)


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


def _switch(*verbs: str) -> tuple[tuple[str, ...], ...]:
    """How a proposal names turning roaming on (or off): a verb and "roaming"."""
    return tuple((verb, "roaming") for verb in verbs)


_S = {"type": "string"}
_CUSTOMER_ID = {"customer_id": {**_S, "description": "the customer's id, like C12345"}}
_LINE_ID = {"line_id": {**_S, "description": "the line's id, like L12345"}}
TOOLS: tuple[Tool, ...] = (
    Tool(
        "get_customer_by_phone",
        "Authenticate a customer by a phone number of theirs and their full name; "
        "returns their record (lines, payment methods).",
        {
            "phone_number": {**_S, "description": "a phone number, like 415-555-0123"},
            "full_name": {**_S, "description": "the account holder's full name"},
        },
        get_customer_by_phone,
    ),
    Tool("get_customer_by_id", "A customer's record.", _CUSTOMER_ID, get_customer_by_id),
    Tool(
        "get_details_by_id",
        "Any record by its id: customer (C...), line (L...), bill (B...), plan (P-...).",
        {"id": {**_S, "description": "the id"}},
        get_details_by_id,
    ),
    Tool("get_bills", "A customer's bills.", _CUSTOMER_ID, get_bills),
    Tool("get_line_details", "A line's details.", _LINE_ID, get_line_details),
    Tool(
        "get_plan_details",
        "A plan's details.",
        {"plan_id": {**_S, "description": "the plan's id, like P-PLUS30"}},
        get_plan_details,
    ),
    Tool("list_plans", "Every plan on offer.", {}, list_plans),
    Tool(
        "get_data_usage",
        "A line's data usage this billing cycle, its allowance and refuel price.",
        _LINE_ID,
        get_data_usage,
    ),
    Tool(
        "pay_bill",
        "Pay a customer's overdue bill with one of their payment methods on file.",
        {
            **_CUSTOMER_ID,
            "bill_id": {**_S, "description": "the bill's id, like B123456"},
            "payment_method_id": {**_S, "description": "like card_4821 or bank_7731"},
        },
        pay_bill,
        writes=True,
        proposed_as=(("pay",),),
        named_arguments=("bill_id",),
    ),
    Tool(
        "resume_line",
        "Resume a line suspended for an unpaid bill (once no bill is overdue).",
        _LINE_ID,
        resume_line,
        writes=True,
        proposed_as=(("resume",),),
        named_arguments=("line_id",),
    ),
    Tool(
        "refuel_data",
        "Add data to a line for this billing cycle, charged to the open bill.",
        {**_LINE_ID, "gb": {"type": "integer", "description": "whole GB to add"}},
        refuel_data,
        writes=True,
        proposed_as=(("data",),),
        named_arguments=("line_id", "gb"),
    ),
    Tool(
        "change_plan",
        "Move an active line to another plan.",
        {**_LINE_ID, "plan_id": {**_S, "description": "the new plan's id"}},
        change_plan,
        writes=True,
        proposed_as=(("plan",), ("move",), ("switch",), ("change",), ("upgrade",)),
        named_arguments=("line_id", "plan_id"),
    ),
    Tool(
        "enable_roaming",
        "Enable roaming on a line.",
        _LINE_ID,
        enable_roaming,
        writes=True,
        proposed_as=_switch("enable", "turn on", "activate", "switch on"),
        named_arguments=("line_id",),
    ),
    Tool(
        "disable_roaming",
        "Disable roaming on a line.",
        _LINE_ID,
        disable_roaming,
        writes=True,
        proposed_as=_switch("disable", "turn off", "deactivate", "switch off"),
        named_arguments=("line_id",),
    ),
    Tool(
        "transfer_to_human_agents",
        "Hand the conversation to a human agent; it ends your part.",
        {"summary": {**_S, "description": "the customer's issue, for the human agent"}},
        transfer_to_human_agents,
    ),
)
