"""The retail task templates: plain functions ``template(db, rng) -> TaskDraft | None``, each
named after its template.
"""

from __future__ import annotations

from agentgym.envs.usersim.domain import (
    TaskTemplate,
)
from agentgym.envs.usersim.domains.retail.tasks.compound import (
    cancel_and_return,
    cancel_change_of_mind,
    cancel_one_refuse_other,
    exchange_and_reroute,
    exchange_change_of_mind,
    modify_items_once,
    modify_two_items,
    move_house,
    return_all_and_status,
)
from agentgym.envs.usersim.domains.retail.tasks.simple import (
    cancel_by_name_zip,
    cancel_pending_order,
    change_payment_method,
    exchange_item,
    gift_card_balance,
    modify_item_variant,
    modify_order_address,
    modify_user_address,
    order_status,
    product_price,
    refuse_cancel_shipped,
    refuse_exchange_unavailable,
    refuse_return_undelivered,
    return_one_item,
    return_to_gift_card,
)

TEMPLATES = (
    TaskTemplate("cancel_pending_order", "easy", cancel_pending_order),
    TaskTemplate("order_status", "easy", order_status),
    TaskTemplate("modify_order_address", "easy", modify_order_address),
    TaskTemplate("modify_user_address", "easy", modify_user_address),
    TaskTemplate("gift_card_balance", "easy", gift_card_balance),
    TaskTemplate("return_one_item", "easy", return_one_item),
    TaskTemplate("change_payment_method", "easy", change_payment_method),
    TaskTemplate("cancel_by_name_zip", "medium", cancel_by_name_zip),
    TaskTemplate("refuse_cancel_shipped", "medium", refuse_cancel_shipped),
    TaskTemplate("refuse_return_undelivered", "medium", refuse_return_undelivered),
    TaskTemplate("exchange_item", "medium", exchange_item),
    TaskTemplate("modify_item_variant", "medium", modify_item_variant),
    TaskTemplate("return_to_gift_card", "medium", return_to_gift_card),
    TaskTemplate("product_price", "medium", product_price),
    TaskTemplate("refuse_exchange_unavailable", "medium", refuse_exchange_unavailable),
    TaskTemplate("cancel_change_of_mind", "medium", cancel_change_of_mind),
    TaskTemplate("exchange_change_of_mind", "hard", exchange_change_of_mind),
    TaskTemplate("cancel_and_return", "hard", cancel_and_return),
    TaskTemplate("move_house", "hard", move_house),
    TaskTemplate("modify_two_items", "hard", modify_two_items),
    TaskTemplate("modify_items_once", "hard", modify_items_once),
    TaskTemplate("cancel_one_refuse_other", "hard", cancel_one_refuse_other),
    TaskTemplate("return_all_and_status", "hard", return_all_and_status),
    TaskTemplate("exchange_and_reroute", "hard", exchange_and_reroute),
)
