"""``usersim/Telecom-v2``: a phone carrier's support desk, where only the user can touch the phone.

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

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentgym.envs.usersim.domain import DB, Domain, TaskTemplate, Tool
from agentgym.envs.usersim.domains.telecom.data_model import _PLANS, CARRIER, _build, _Checks, _line
from agentgym.envs.usersim.domains.telecom.tasks import TEMPLATES
from agentgym.envs.usersim.domains.telecom.tools import TOOLS
from agentgym.envs.usersim.domains.telecom.user_tools import USER_TOOLS, _status_bar

__all__ = ["TelecomDomain"]


class TelecomDomain(Domain):
    """A mobile carrier, dual control: see the module docstring."""

    name = "telecom"
    title = f"a technical-support agent of {CARRIER}, a mobile phone carrier"
    policy = (Path(__file__).parent / "policy.md").read_text(encoding="utf-8")
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
        return list(TOOLS)

    def user_tools(self) -> list[Tool]:
        return list(USER_TOOLS)

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
        return list(TEMPLATES)
