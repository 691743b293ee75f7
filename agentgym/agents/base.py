"""The Agent protocol: anything that maps observations to actions, one instance per episode.

The evaluator runs many episodes at once, so it makes **one agent per episode** from an
:data:`AgentFactory` and calls, in order: :meth:`Agent.reset` with the episode's
:class:`EpisodeContext` (instructions, ids, seed, and the env for privileged agents such as
the oracle), then :meth:`Agent.act` once per step. Agents that share something expensive (a
model whose calls are batched across episodes) hold a reference to one shared backend; the
per-episode object keeps only that episode's state (its chat history).

``act`` is async, so an agent waiting on a model never blocks the other episodes; plain
synchronous code plugs in through :class:`FunctionAgent` (any ``f(observation, info)``) or by
overriding :meth:`Agent.act_sync`.

An action may come back bare (``"up"``) or as an :class:`AgentReply` carrying what the
ledger keeps: the model's raw text and its exact tokens and logprobs.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from agentgym.errors import UsageError
from agentgym.ledger import TokenRecord

__all__ = ["Agent", "AgentFactory", "AgentReply", "EpisodeContext", "FunctionAgent"]


@dataclass
class EpisodeContext:
    """What an agent learns at the start of an episode."""

    env_id: str
    task_id: str
    seed: int | None  # the agent's seed: the env's reset seed unless the plan set agent_seed
    instructions: str
    info: dict[str, Any]
    env: gymnasium.Env[Any, Any] | None = None  # for privileged agents (oracle); None for LLMs
    sampling: dict[str, Any] = field(default_factory=dict)
    # The env's tools when its actions are tool calls (a ToolCall space): JSON-schema function
    # declarations, for agents that call tools natively. None for text actions.
    tools: list[dict[str, Any]] | None = None
    # How the env wants LLM replies read (its metadata["action_style"]); None: no preference.
    action_style: str | None = None
    # How the env reads a final answer (its metadata["answer_format"], e.g.
    # "<answer>{answer}</answer>"); None for envs without one.
    answer_format: str | None = None
    # Whether the env's observations hold images (its metadata["multimodal"]: a GUI env's
    # screenshots): an agent over a vision endpoint sends them as images.
    multimodal: bool = False


@dataclass
class AgentReply:
    """An action plus what the ledger should keep about how it was produced."""

    action: Any
    text: str | None = None
    tokens: TokenRecord | None = None
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens


class Agent:
    """Base class of agents. Override :meth:`act` (async) or :meth:`act_sync`."""

    name: str = "agent"

    def reset(self, context: EpisodeContext) -> None:
        """Start an episode (default: remember the context)."""
        self.context = context

    async def act(self, observation: Any, info: dict[str, Any]) -> Any:
        """The next action (or an :class:`AgentReply`). Default: :meth:`act_sync` in a thread."""
        return await asyncio.to_thread(self.act_sync, observation, info)

    def act_sync(self, observation: Any, info: dict[str, Any]) -> Any:
        """Synchronous version of :meth:`act`, for agents that do not await anything."""
        raise NotImplementedError(f"{type(self).__name__} must override act() or act_sync()")

    def close(self) -> None:
        """Release per-episode resources (default: nothing)."""


AgentFactory = Callable[[], Agent]


class FunctionAgent(Agent):
    """Wraps ``f(observation, info) -> action`` (sync or async) as a stateless agent."""

    def __init__(self, function: Callable[..., Any], name: str | None = None) -> None:
        if not callable(function):
            raise UsageError(f"FunctionAgent needs a callable, got {function!r}")
        self.function = function
        self.name = str(name or getattr(function, "__name__", "function"))
        self._is_async = inspect.iscoroutinefunction(function)

    async def act(self, observation: Any, info: dict[str, Any]) -> Any:
        if self._is_async:
            return await self.function(observation, info)
        return await asyncio.to_thread(self.function, observation, info)
