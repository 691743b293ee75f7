"""Reference players every game can reuse: a seeded random player and a policy player.

A :class:`~agentgym.multiagent.ReferencePlayer` reads the env it is handed; the env may come
wrapped (``make_multi`` puts PettingZoo's order-enforcing wrapper around AEC envs), so players
look through ``unwrapped``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["PolicyPlayer", "RandomPlayer", "unwrap"]


def unwrap(env: Any) -> Any:
    """The game itself under any PettingZoo wrappers."""
    return getattr(env, "unwrapped", env)


class RandomPlayer:
    """A uniformly random legal move.

    Seeded so that the same env seed gives the same game: with no ``seed``, the player draws
    one from the env's ``np_random`` at its first move (the env's generator is seeded by
    ``reset(seed=...)``), so different env seeds give different random games.
    """

    name = "random"

    def __init__(
        self, legal_moves: Callable[[Any, str], list[str]], seed: int | None = None
    ) -> None:
        self._legal_moves = legal_moves
        self._rng = None if seed is None else np.random.default_rng(seed)

    def act(self, env: Any, agent: str) -> str:
        game = unwrap(env)
        if self._rng is None:
            self._rng = np.random.default_rng(int(game.np_random.integers(2**32)))
        moves = self._legal_moves(game, agent)
        return moves[int(self._rng.integers(len(moves)))]

    def close(self) -> None:
        """Nothing to free."""


class PolicyPlayer:
    """A deterministic policy of the game's state: a solver, a search at a set depth."""

    def __init__(self, name: str, policy: Callable[[Any, str], str]) -> None:
        self.name = name
        self._policy = policy

    def act(self, env: Any, agent: str) -> str:
        return self._policy(unwrap(env), agent)

    def close(self) -> None:
        """Nothing to free."""
