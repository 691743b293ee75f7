"""The reasoning family: math, code, search QA, tool use, and reasoning-gym's tasks.

Every env here scores with the shared verifiers (:mod:`agentgym.verifiers`), except the
``reasoning-gym/*`` ids, which score with reasoning-gym's own scorers; a failure to judge (a
sandbox gone, a judge endpoint down) is a typed error that errors the episode, never a
reward of 0. Importing this module registers the ids; nothing heavy is imported until
an env is made. See ``docs/reasoning.md``.
"""

from agentgym.envs.reasoning.reasoning_gym_ids import register_all
from agentgym.registry import register

_BASE = "agentgym.envs.reasoning"

register(
    "reasoning/Math-v1",
    entry_point=f"{_BASE}.math:MathEnv",
    max_episode_steps=1,
    extra="reasoning",
    description="answer a math word problem (single turn)",
)
register(
    "reasoning/MathTool-v1",
    entry_point=f"{_BASE}.math:MathToolEnv",
    max_episode_steps=12,
    extra="reasoning",
    description="solve a math word problem with a Python tool, then answer",
)
register(
    "reasoning/ToolUse-v1",
    entry_point=f"{_BASE}.tool_use:ToolUseEnv",
    max_episode_steps=20,
    extra="reasoning",
    description="run errands in a shop through JSON-schema tools (native or in text)",
)
register(
    "reasoning/Code-v0",
    entry_point=f"{_BASE}.code:CodeEnv",
    max_episode_steps=1,
    extra="reasoning",
    description="write a function that passes hidden unit tests (single turn)",
)
register(
    "reasoning/CodeInteractive-v0",
    entry_point=f"{_BASE}.code:CodeInteractiveEnv",
    max_episode_steps=10,
    extra="reasoning",
    description="write a function, run it in a sandbox as often as needed, then submit",
)
register(
    "reasoning/SearchQA-v0",
    entry_point=f"{_BASE}.search_qa:SearchQAEnv",
    max_episode_steps=20,
    extra="reasoning",
    description="answer a multi-hop question by searching and reading a local corpus",
)

register_all()  # reasoning-gym/<dataset>-v1, one id per audited dataset (docs/reasoning-gym.md)
