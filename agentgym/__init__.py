"""agentgym: a gym suite for LLM agents.

One API — Gymnasium for one agent, PettingZoo for many — over environments whose rewards come
from verifiers and whose every task has an oracle, checked by a conformance checker.

>>> import agentgym
>>> env = agentgym.make("games/TowerOfHanoi-v0")
>>> obs, info = env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.step("move A C")
"""

from agentgym.checker import check_env
from agentgym.core import (
    SPLITS,
    DataTaskSet,
    Env,
    GeneratedTaskSet,
    Task,
    TaskSet,
    UserModel,
    Verdict,
)
from agentgym.errors import (
    AgentGymError,
    ConformanceError,
    InfrastructureError,
    MissingExtraError,
    TaskError,
    UnknownEnvError,
    UsageError,
)
from agentgym.multiagent import SimultaneousEnv, TurnBasedEnv
from agentgym.multiagent_checker import check_multiagent_env
from agentgym.registry import (
    EnvSpec,
    families,
    list_envs,
    load_families,
    make,
    make_multi,
    register,
    spec,
)
from agentgym.spaces import ChatMessages, Text, ToolCall, tool
from agentgym.task_env import InvalidAction, TaskEnv, looks_like_tool_call, parse_tool_call

__version__ = "0.1.0"

__all__ = [
    "SPLITS",
    "AgentGymError",
    "ChatMessages",
    "ConformanceError",
    "DataTaskSet",
    "Env",
    "EnvSpec",
    "GeneratedTaskSet",
    "InfrastructureError",
    "InvalidAction",
    "MissingExtraError",
    "SimultaneousEnv",
    "Task",
    "TaskEnv",
    "TaskError",
    "TaskSet",
    "Text",
    "ToolCall",
    "TurnBasedEnv",
    "UnknownEnvError",
    "UsageError",
    "UserModel",
    "Verdict",
    "__version__",
    "check_env",
    "check_multiagent_env",
    "families",
    "list_envs",
    "load_families",
    "looks_like_tool_call",
    "make",
    "make_multi",
    "parse_tool_call",
    "register",
    "spec",
    "tool",
]

# Last, when every name above exists: a family's module may import agentgym to register.
load_families()
