"""The household family: ALFWorld's household tasks on alfworld's own text engine.

Importing this module registers the ids; nothing heavy is imported until an env is made.
See ``docs/envs/household.md`` and :mod:`agentgym.envs.household.alfworld_env`.
"""

from agentgym.registry import register

register(
    "household/ALFWorld-v0",
    entry_point="agentgym.envs.household.alfworld_env:ALFWorldEnv",
    max_episode_steps=50,
    description="ALFWorld: six household task types in text (alfworld's PDDL engine)",
)
