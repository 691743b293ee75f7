"""The airline task templates: plain functions ``template(db, rng) -> TaskDraft | None``,
grouped by what the user wants (cancel, change, compensation, book).
"""

from __future__ import annotations

from agentgym.envs.usersim.domain import (
    TaskTemplate,
)
from agentgym.envs.usersim.domains.airline.tasks.book import (
    book_bags_insurance,
    book_certificate,
    book_change_cabin,
    book_one_way,
    book_onestop,
    book_round_trip,
)
from agentgym.envs.usersim.domains.airline.tasks.cancel import (
    cancel_airline,
    cancel_business,
    cancel_insured,
    cancel_recent,
    refuse_cancel,
    refuse_insured,
)
from agentgym.envs.usersim.domains.airline.tasks.change import (
    add_bags,
    cancel_and_bags,
    change_date,
    change_date_mind,
    fix_and_upgrade,
    fix_passenger,
    refuse_basic_change,
    refuse_then_change,
    upgrade,
)
from agentgym.envs.usersim.domains.airline.tasks.compensation import (
    cancel_and_compensate,
    compensation_cancelled,
    compensation_delayed,
    flight_status,
    refuse_compensation,
)

TEMPLATES = (
    TaskTemplate("cancel_within_24_hours", "easy", cancel_recent),
    TaskTemplate("cancel_business", "easy", cancel_business),
    TaskTemplate("refuse_cancellation", "easy", refuse_cancel),
    TaskTemplate("add_bags", "easy", add_bags),
    TaskTemplate("fix_passenger", "easy", fix_passenger),
    TaskTemplate("flight_status", "easy", flight_status),
    TaskTemplate("book_one_way", "easy", book_one_way),
    TaskTemplate("cancel_airline_cancelled", "medium", cancel_airline),
    TaskTemplate("cancel_insured_illness", "medium", cancel_insured),
    TaskTemplate("refuse_insured_cancellation", "medium", refuse_insured),
    TaskTemplate("book_round_trip", "medium", book_round_trip),
    TaskTemplate("book_bags_insurance", "medium", book_bags_insurance),
    TaskTemplate("book_certificate_and_card", "medium", book_certificate),
    TaskTemplate("change_date", "medium", change_date),
    TaskTemplate("upgrade_business", "medium", upgrade),
    TaskTemplate("refuse_basic_economy_change", "medium", refuse_basic_change),
    TaskTemplate("compensation_cancelled", "medium", compensation_cancelled),
    TaskTemplate("compensation_delayed", "medium", compensation_delayed),
    TaskTemplate("refuse_compensation", "medium", refuse_compensation),
    TaskTemplate("book_onestop", "hard", book_onestop),
    TaskTemplate("book_change_of_mind_cabin", "hard", book_change_cabin),
    TaskTemplate("change_date_change_of_mind", "hard", change_date_mind),
    TaskTemplate("cancel_and_add_bags", "hard", cancel_and_bags),
    TaskTemplate("refused_cancellation_then_change", "hard", refuse_then_change),
    TaskTemplate("fix_passenger_and_upgrade", "hard", fix_and_upgrade),
    TaskTemplate("cancel_and_compensation", "hard", cancel_and_compensate),
)
