"""The reference agents every report is read against: the oracle (the ceiling) and random.

* ``oracle`` plays the task's own solver (``env.oracle_action()``): it shows the score a
  perfect agent gets under the same step limits, and proves every task solvable.
* ``random`` picks uniformly among ``info["admissible_actions"]`` when the env lists them,
  else samples the action space (for text: random characters, i.e. invalid actions). Its rng is
  seeded from the episode seed, so its episodes are reproducible. It is the floor.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from agentgym.agents.base import Agent, EpisodeContext
from agentgym.errors import UsageError

__all__ = ["OracleAgent", "RandomAgent"]


class OracleAgent(Agent):
    """Plays ``env.unwrapped.oracle_action()``; needs the env in its context."""

    name = "oracle"

    def reset(self, context: EpisodeContext) -> None:
        if context.env is None:
            raise UsageError("the oracle agent needs the env (EpisodeContext.env)")
        self.context = context
        # An agentgym env under its wrappers: Gymnasium's type does not know oracle_action.
        self._env: Any = context.env.unwrapped

    async def act(self, observation: Any, info: dict[str, Any]) -> Any:
        action = await asyncio.to_thread(self._env.oracle_action)
        # An oracle with nothing left to do on a live episode still has to move: it waits.
        return action if action is not None else ""


class RandomAgent(Agent):
    """A uniformly random valid action where the env lists them; a sampled one otherwise."""

    name = "random"

    def reset(self, context: EpisodeContext) -> None:
        self.context = context
        self._rng = np.random.default_rng(context.seed if context.seed is not None else 0)
        self._space = context.env.action_space if context.env is not None else None
        if self._space is not None:
            self._space.seed(int(self._rng.integers(2**31)))

    async def act(self, observation: Any, info: dict[str, Any]) -> Any:
        actions = info.get("admissible_actions")
        if actions:
            return actions[int(self._rng.integers(len(actions)))]
        if self._space is None:
            raise UsageError("the random agent needs admissible_actions or the env's space")
        return self._space.sample()
