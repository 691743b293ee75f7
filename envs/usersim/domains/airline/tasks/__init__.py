"""The airline task templates: plain functions ``template(db, rng) -> TaskDraft | None``,
grouped by what the user wants (cancel, change, compensation, book).
"""

from __future__ import annotations

from agentgym.envs.usersim.domain import (
    TaskTemplate,
)
from agentgym.envs.usersim.domains.airline.tasks.book import (
    book_bags_insurance,
    book_certificate_and_card,
    book_change_of_mind_cabin,
    book_one_way,
    book_onestop,
    book_round_trip,
)
from agentgym.envs.usersim.domains.airline.tasks.cancel import (
    cancel_airline_cancelled,
    cancel_business,
    cancel_insured_illness,
    cancel_within_24_hours,
    refuse_cancellation,
    refuse_insured_cancellation,
)
from agentgym.envs.usersim.domains.airline.tasks.change import (
    add_bags,
    cancel_and_add_bags,
    change_date,
    change_date_change_of_mind,
    fix_passenger,
    fix_passenger_and_upgrade,
    refuse_basic_economy_change,
    refused_cancellation_then_change,
    upgrade_business,
)
from agentgym.envs.usersim.domains.airline.tasks.compensation import (
    cancel_and_compensation,
    compensation_cancelled,
    compensation_delayed,
    flight_status,
    refuse_compensation,
)

TEMPLATES = (
    TaskTemplate("cancel_within_24_hours", "easy", cancel_within_24_hours),
    TaskTemplate("cancel_business", "easy", cancel_business),
    TaskTemplate("refuse_cancellation", "easy", refuse_cancellation),
    TaskTemplate("add_bags", "easy", add_bags),
    TaskTemplate("fix_passenger", "easy", fix_passenger),
    TaskTemplate("flight_status", "easy", flight_status),
    TaskTemplate("book_one_way", "easy", book_one_way),
    TaskTemplate("cancel_airline_cancelled", "medium", cancel_airline_cancelled),
    TaskTemplate("cancel_insured_illness", "medium", cancel_insured_illness),
    TaskTemplate("refuse_insured_cancellation", "medium", refuse_insured_cancellation),
    TaskTemplate("book_round_trip", "medium", book_round_trip),
    TaskTemplate("book_bags_insurance", "medium", book_bags_insurance),
    TaskTemplate("book_certificate_and_card", "medium", book_certificate_and_card),
    TaskTemplate("change_date", "medium", change_date),
    TaskTemplate("upgrade_business", "medium", upgrade_business),
    TaskTemplate("refuse_basic_economy_change", "medium", refuse_basic_economy_change),
    TaskTemplate("compensation_cancelled", "medium", compensation_cancelled),
    TaskTemplate("compensation_delayed", "medium", compensation_delayed),
    TaskTemplate("refuse_compensation", "medium", refuse_compensation),
    TaskTemplate("book_onestop", "hard", book_onestop),
    TaskTemplate("book_change_of_mind_cabin", "hard", book_change_of_mind_cabin),
    TaskTemplate("change_date_change_of_mind", "hard", change_date_change_of_mind),
    TaskTemplate("cancel_and_add_bags", "hard", cancel_and_add_bags),
    TaskTemplate("refused_cancellation_then_change", "hard", refused_cancellation_then_change),
    TaskTemplate("fix_passenger_and_upgrade", "hard", fix_passenger_and_upgrade),
    TaskTemplate("cancel_and_compensation", "hard", cancel_and_compensation),
)
