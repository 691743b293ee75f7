"""The roguelike family: open-ended games in text, scored by BALROG's progression metric.

Importing this module registers the ids; nothing heavy is imported until an env is made.
See ``docs/envs/roguelike.md`` and each env's docstring for what the agent sees, does and is
scored on.
"""

from agentgym.registry import register

register(
    "roguelike/Crafter-v0",
    entry_point="agentgym.envs.roguelike.crafter_env:CrafterEnv",
    max_episode_steps=2000,
    description="Crafter in text: unlock as many of its 22 achievements as you can",
)

register(
    "roguelike/NetHack-v0",
    entry_point="agentgym.envs.roguelike.nethack_env:NetHackEnv",
    max_episode_steps=1000,
    description="NetHack in text (nle): go as deep and as high in level as you can",
)
