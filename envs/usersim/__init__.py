"""The simulated-users family: customer-service conversations and an information-seeking dialogue.

Importing this module registers the ids; nothing heavy is imported until an env is made.
See ``docs/envs/usersim.md``.
"""

from agentgym.registry import register

_BASE = "agentgym.envs.usersim"

for _domain, _what in (
    ("Retail", "an online shop's orders, returns and exchanges"),
    ("Airline", "an airline's bookings, changes, cancellations and baggage"),
    ("Telecom", "a phone carrier, where only the user can change their phone (dual control)"),
):
    register(
        f"usersim/{_domain}-v2",
        entry_point=f"{_BASE}.env:UserSimEnv",
        kwargs={"domain": _domain.lower()},
        max_episode_steps=40,
        description=f"help a simulated customer of {_what}, by policy, with tools",
    )

register(
    "usersim/Diagnosis-v0",
    entry_point=f"{_BASE}.diagnosis:DiagnosisEnv",
    max_episode_steps=20,
    description="find a simulated patient's hidden condition by asking the right questions",
)
