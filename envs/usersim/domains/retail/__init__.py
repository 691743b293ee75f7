"""``usersim/Retail-v2``: the customer service of an online shop (tau-bench's retail domain).

The agent works for *Northwind Goods*. A customer contacts it about their orders: where one
is, cancelling it, changing its items, address or payment, returning or exchanging what was
delivered, or updating their default address. The agent follows the policy below, looks
things up and makes changes with tools, and talks to a simulated customer who knows their
email, name, zip code and order ids and says them only when asked.

**Database** (built from a seed; 200 users, 30 products, 500 orders; money as floats of
dollars rounded to cents):

* ``users``: ``user_id`` (``"mia_garcia_4516"``), ``name`` (``first_name``, ``last_name``),
  ``email``, ``address`` (``address1``, ``address2``, ``city``, ``state``, ``country``,
  ``zip``), ``payment_methods`` by id (``credit_card_...`` with ``brand`` and
  ``last_four``, ``paypal_...``, ``gift_card_...`` with a ``balance``), ``orders`` (ids);
* ``products``: ``product_id``, ``name`` and 3 to 10 ``variants`` by ``item_id``, each with
  ``options`` (colour, size, material...), ``price`` and ``available``;
* ``orders``: ``order_id`` (``"#W1234567"``), ``user_id``, ``address``, ``items`` (``name``,
  ``product_id``, ``item_id``, ``price``, ``options``), ``status`` (``pending``,
  ``processed``, ``delivered``, ``cancelled``; after a change ``pending (item modified)``,
  ``return requested``, ``exchange requested``), ``fulfillments`` (tracking ids) and
  ``payment_history`` (payments and refunds by payment method).

**Tools.** Authentication: ``find_user_id_by_email``, ``find_user_id_by_name_zip``. Reads:
``get_user_details``, ``get_order_details``, ``get_product_details``,
``list_all_product_types``, ``calculate`` (arithmetic, no ``eval``). Writes:
``cancel_pending_order``, ``modify_pending_order_items``, ``modify_pending_order_address``,
``modify_pending_order_payment``, ``modify_user_address``, ``return_delivered_order_items``,
``exchange_delivered_order_items``. End: ``transfer_to_human_agents``. Every tool refuses a
bad value (an unknown id, a wrong status, an unavailable variant, a payment method the user
does not own, a gift card that does not cover a charge) with a message that says what would
work.

**Policy** (``policy.md``, in the agent's instructions): authenticate first (by
email, or by name and zip code); one user per conversation; only pending orders can be
cancelled or modified, and their items only once; only delivered orders can be returned or
exchanged, for available variants of the same product; refunds go back to the original
payment method (returns: or to the user's gift card); list the details and get an explicit
yes before each change; refuse what the policy does not allow and say why.

**Templates** (24): easy — ``cancel_pending_order``, ``order_status``,
``modify_order_address``, ``modify_user_address``, ``gift_card_balance``,
``return_one_item``, ``change_payment_method``; medium — ``cancel_by_name_zip`` (the user does
not know their email), ``refuse_cancel_shipped``, ``refuse_return_undelivered``,
``exchange_item``, ``modify_item_variant``, ``return_to_gift_card`` (a computed total),
``product_price``, ``refuse_exchange_unavailable``, ``cancel_change_of_mind``; hard —
``exchange_change_of_mind``, ``cancel_and_return``, ``move_house`` (default address and every
pending order), ``modify_two_items`` (a computed net difference), ``modify_items_once``,
``cancel_one_refuse_other``, ``return_all_and_status``, ``exchange_and_reroute``. In the
hard ones the user does not know their order ids: the agent finds the orders from the items
the user describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentgym.envs.usersim.domain import DB, Domain, TaskTemplate, Tool
from agentgym.envs.usersim.domains.retail.data_model import STATUSES, _order, build_retail_db
from agentgym.envs.usersim.domains.retail.tasks import TEMPLATES
from agentgym.envs.usersim.domains.retail.tools import TOOLS

__all__ = ["RetailDomain"]


class RetailDomain(Domain):
    """Northwind Goods' customer service; see the module docstring."""

    name = "retail"
    title = "a customer-service agent of Northwind Goods, an online shop"
    policy = (Path(__file__).parent / "policy.md").read_text(encoding="utf-8")
    auth_tools = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"})
    end_tools = frozenset({"transfer_to_human_agents"})
    vocabularies = (STATUSES,)

    def owner(self, db: DB, name: str, arguments: Mapping[str, Any], result: Any) -> str | None:
        if name in self.auth_tools:
            return str(result)
        if "order_id" in arguments:
            return str(_order(db, arguments["order_id"])["user_id"])
        return str(arguments["user_id"]) if "user_id" in arguments else None

    def build_db(self, seed: int) -> DB:
        return build_retail_db(seed)

    def agent_tools(self) -> list[Tool]:
        return list(TOOLS)

    def templates(self) -> list[TaskTemplate]:
        return list(TEMPLATES)
