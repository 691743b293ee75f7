"""The airline domain: bookings, flight changes, cancellations, baggage and compensation.

A tau-bench-style airline ("Horizon Air Travel", flight numbers ``HAT123``) with our own
generated data. "Now" is fixed at **2026-05-15 15:00 EST** (``data_model.NOW``), so every task is
deterministic; flights run from 2026-05-10 to 2026-05-30 (``data_model.DATES``).

**Tables** (built by :meth:`AirlineDomain.build_db` from a seed; money is a float of dollars
rounded to cents):

* ``airports`` (12): ``{"code": "JFK", "city": "New York"}``;
* ``users`` (150), keyed by user id (``"omar_hassan_7362"``): name, email, date of birth,
  ``membership`` (``regular``, ``silver`` or ``gold``), ``payment_methods`` by id (credit cards
  with brand and last four digits, gift cards with a ``balance``, travel certificates with an
  ``amount``, used once), ``saved_passengers`` and the ids of their ``reservations``;
* ``flights`` (~160 flight numbers), keyed by flight number: route, scheduled times (EST) and,
  for each date, a ``status`` (``available``, ``delayed``, ``cancelled`` by the airline, or
  ``landed``), the ``seats`` left and the ``prices``, as lists in cabin order
  (``basic_economy``, ``economy``, ``business``: :data:`CABINS`);
* ``reservations`` (400), keyed by a six-character id (``"Q4ZK7M"``): user, origin,
  destination, ``flight_type`` (``one_way`` or ``round_trip``), cabin, flights (number, date,
  price paid), passengers, ``payment_history`` (refunds are negative), ``created_at``, bags
  (``total_baggages``, ``nonfree_baggages``), ``insurance`` (``yes``/``no``) and ``status``
  (``active`` or ``cancelled``).

**Tools.** Reads: ``get_user_details`` (authenticates the user), ``get_reservation_details``,
``get_flight_status``, ``search_direct_flight``, ``search_onestop_flight``,
``list_all_airports``, ``calculate``. Writes: ``book_reservation``, ``cancel_reservation``,
``update_reservation_flights``, ``update_reservation_baggages``,
``update_reservation_passengers``, ``send_certificate``. ``transfer_to_human_agents`` ends the
conversation. The tools refuse what the data forbids (an unknown id, a full or cancelled
flight, a payment method the user does not own, a wrong bag count); the policy's judgement
calls (may this reservation be cancelled? may a basic economy trip change? is this user
owed compensation?) are the agent's.

**Policy** (``policy.md``, in short): identify the user by user id; an explicit yes before
each write; cancellation only within 24 hours of booking, for a flight cancelled by the
airline, in business, or with travel insurance for a covered reason (illness, injury, severe
weather); basic economy cannot change flights or cabin; free bags by membership and cabin,
$50 per extra bag; insurance $30 per passenger; compensation certificates ($100 per passenger
for a cancelled flight, $50 for a delayed one) only for silver or gold members, insured or
business reservations, only when the user complains, after checking the facts; a refusal says
the request is "not eligible".

**Templates** (:meth:`AirlineDomain.templates`): easy: cancel within 24 hours, cancel a
business trip, refuse a cancellation, add bags, correct a passenger, flight status, book a
one-way trip; medium: cancel for an airline-cancelled flight, cancel with insurance for
illness, refuse an insured cancellation for another reason, round trip for two, booking with
bags and insurance, certificate plus card, change a date, upgrade to business, refuse a basic
economy change, compensation for a cancelled or delayed flight, refused compensation; hard:
one-stop booking, a change of mind on the cabin or on the new date, cancel one trip and add
bags to another, a refused cancellation turned into a date change, a passenger fix plus an
upgrade, cancel an airline-cancelled trip and then get compensation.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentgym.envs.usersim.domain import DB, Domain, TaskTemplate, Tool
from agentgym.envs.usersim.domains.airline.data_model import _reservation, build_airline_db
from agentgym.envs.usersim.domains.airline.tasks import TEMPLATES
from agentgym.envs.usersim.domains.airline.tools import TOOLS

__all__ = ["AirlineDomain"]


class AirlineDomain(Domain):
    """Horizon Air Travel's customer service; see the module docstring."""

    name = "airline"
    title = "a customer-service agent of an airline, Horizon Air Travel"
    policy = (Path(__file__).parent / "policy.md").read_text(encoding="utf-8")
    auth_tools = frozenset({"get_user_details"})
    end_tools = frozenset({"transfer_to_human_agents"})
    vocabularies = (("available", "delayed", "cancelled", "landed"),)

    def owner(self, db: DB, name: str, arguments: Mapping[str, Any], result: Any) -> str | None:
        if "reservation_id" in arguments:
            return str(_reservation(db, arguments["reservation_id"])["user_id"])
        return str(arguments["user_id"]) if "user_id" in arguments else None

    def build_db(self, seed: int) -> DB:
        return build_airline_db(seed)

    def agent_tools(self) -> list[Tool]:
        return list(TOOLS)

    def templates(self) -> list[TaskTemplate]:
        return list(TEMPLATES)
