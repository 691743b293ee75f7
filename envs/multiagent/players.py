"""A reference player made of a policy function, for the games' solvers and searches.

(The ``"random"`` player is :class:`agentgym.multiagent.RandomPlayer`, or a subclass of it
that draws the game's own way from the same seeded streams: negotiation's and taboo's.) A
:class:`~agentgym.multiagent.ReferencePlayer` reads the env it is handed; the env may come
wrapped (``make_multi`` puts PettingZoo's order-enforcing wrapper around AEC envs), so the
policy is handed the game under the wrappers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["PolicyPlayer"]


class PolicyPlayer:
    """A deterministic policy of the game's state: a solver, a search at a set depth."""

    def __init__(self, name: str, policy: Callable[[Any, str], str]) -> None:
        self.name = name
        self._policy = policy

    def act(self, env: Any, agent: str) -> str:
        return self._policy(getattr(env, "unwrapped", env), agent)

    def close(self) -> None:
        """Nothing to free."""
