"""Multi-agent text envs: they ARE PettingZoo envs.

:class:`TurnBasedEnv` is a :class:`pettingzoo.AECEnv` (agents act in turn) and
:class:`SimultaneousEnv` a :class:`pettingzoo.ParallelEnv` (agents act at once). Both keep the
single-agent contract where it carries over:

* observations and actions are text (:class:`~agentgym.spaces.Text`), one space object per
  agent, so PettingZoo's space seeding works;
* episodes come from a :class:`~agentgym.core.TaskSet` (``reset(seed=, options={"task_id":})``);
* a malformed or illegal action is feedback in that agent's next observation, counted in its
  ``info["invalid_actions"]``; after ``max_invalid_actions`` mistakes the agent forfeits;
* every agent's ``info`` carries ``state_key``, ``invalid_action``, and at reset
  ``instructions``; when the game ends, each agent's ``info["verdict"]`` says how it did;
* ``oracle_action(agent)`` is a non-LLM policy for the agent (perfect play where the game is
  small enough, else a strong heuristic).

PettingZoo's ``api_test`` passes arbitrary keys in ``reset(options=...)``, so these envs read
the keys they know (``task_id``, ``split``, ``difficulty``) and ignore others, as PettingZoo
envs do. Subclasses write the rules: see :class:`TurnBasedEnv` and
``envs/multiagent/tictactoe.py``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import pettingzoo
from gymnasium.utils import seeding

from agentgym.core import TaskSet, Verdict
from agentgym.errors import ResetNeeded, UsageError
from agentgym.spaces import Text, TextObservation
from agentgym.task_env import InvalidAction

__all__ = ["ReferencePlayer", "SimultaneousEnv", "TurnBasedEnv"]

WorldT = TypeVar("WorldT")


class ReferencePlayer(Protocol):
    """A non-LLM player for a seat at a set strength: an engine (Stockfish, GNU Go), a solver
    (perfect play, a CFR policy) or a rule-based bot. The arena seats them beside agents, and
    a game's tests measure them (the strongest must beat random by a stated margin).

    ``act`` reads the env's current state (it may keep its own, e.g. an engine process) and
    returns a legal action text for ``agent``, the one to move; ``close`` frees what it holds.
    A player is made per game by the factory of :meth:`_TextAgents.reference_players`.
    """

    name: str

    def act(self, env: Any, agent: str) -> str: ...

    def close(self) -> None: ...


class _TextAgents(Generic[WorldT]):
    """What both bases share: agents, text spaces, tasks, seeding and the info contract."""

    possible_agents: list[str]
    tasks: TaskSet
    max_invalid_actions = 3
    max_observation_length = 16_384
    max_action_length = 4_096

    def _setup_agents(self, split: str, difficulty: str | None, render_mode: str | None) -> None:
        self.tasks.check_split(split)
        self.tasks.check_difficulty(difficulty)
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode={render_mode!r} is not supported; use 'ansi' or None")
        self.split, self.difficulty, self.render_mode = split, difficulty, render_mode
        self.observation_spaces = {
            a: Text(self.max_observation_length) for a in self.possible_agents
        }
        self.action_spaces = {a: Text(self.max_action_length) for a in self.possible_agents}
        self.world: WorldT | None = None
        self.task: Any = None
        self.np_random, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> Text:
        """The agent's observation space (the same object every call, as PettingZoo asks)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Text:
        """The agent's action space (the same object every call)."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ hooks for games

    @abstractmethod
    def new_world(self, task: Any, rng: np.random.Generator) -> WorldT:
        """A fresh game for ``task``."""

    @abstractmethod
    def describe(self, world: WorldT, agent: str) -> str:
        """What ``agent`` sees now (its private view)."""

    @abstractmethod
    def state_key(self, world: WorldT) -> str:
        """The canonical game state, without history."""

    @abstractmethod
    def outcome(self, world: WorldT) -> Mapping[str, float] | None:
        """Final scores in ``[0, 1]`` per agent when the game is over, else ``None``."""

    @abstractmethod
    def rules(self) -> str:
        """The rules and action syntax, for every agent's instructions."""

    @abstractmethod
    def oracle_action(self, agent: str) -> str | None:
        """A non-LLM policy's action for ``agent`` in the current state."""

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        """The game's reference players by name (e.g. ``"stockfish-skill-5"``, ``"random"``),
        each a factory of a fresh :class:`ReferencePlayer`; names are stable ids the arena and
        the docs use. Default: none beyond :meth:`oracle_action`."""
        return {}

    # ------------------------------------------------------------------ shared machinery

    def _begin(self, seed: int | None, options: Any) -> None:
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise UsageError(f"reset(seed=...) takes an int or None, got {type(seed).__name__}")
        if options is not None and not isinstance(options, Mapping):
            raise UsageError(
                f"reset(options=...) takes a dict or None, got {type(options).__name__}"
            )
        options = dict(options or {})
        if seed is not None:
            self.np_random, _ = seeding.np_random(int(seed))
        if isinstance(options.get("task_id"), str):
            self.task = self.tasks.get(options["task_id"])
        else:
            split = options.get("split", self.split)
            difficulty = options.get("difficulty", self.difficulty)
            self.task = self.tasks.sample(self.np_random, split, difficulty)
        self.world = self.new_world(self.task, self.np_random)
        self.agents = list(self.possible_agents)
        self._invalid = dict.fromkeys(self.agents, 0)
        self._feedback = dict.fromkeys(self.agents, "")

    def _forfeits(self) -> dict[str, float] | None:
        losers = [a for a, n in self._invalid.items() if n >= self.max_invalid_actions]
        if not losers:
            return None
        return {a: 0.0 if a in losers else 1.0 for a in self.possible_agents}

    def _agent_info(self, agent: str, invalid: bool = False) -> dict[str, Any]:
        assert self.world is not None
        return {
            "task_id": self.task.id,
            "state_key": self.state_key(self.world),
            "invalid_action": invalid,
            "invalid_actions": self._invalid[agent],
        }

    def _text(self, agent: str) -> str:
        assert self.world is not None
        feedback = self._feedback.get(agent, "")
        text = (
            f"{feedback}\n\n{self.describe(self.world, agent)}"
            if feedback
            else self.describe(self.world, agent)
        )
        return TextObservation(text[: self.max_observation_length])

    def _apply(self, agent: str, action: Any) -> bool:
        """Run ``act``; returns whether the action was invalid (and records feedback)."""
        if not isinstance(action, str):
            raise UsageError(
                f"step() takes the agent's action as a str, got {type(action).__name__} "
                f"{action!r:.80}"
            )
        try:
            if len(action) > self.max_action_length:
                raise InvalidAction(
                    f"the action is longer than {self.max_action_length} characters"
                )
            assert self.world is not None  # step() is refused before reset()
            self._feedback[agent] = self.act(self.world, agent, action)
            return False
        except InvalidAction as mistake:
            self._invalid[agent] += 1
            left = self.max_invalid_actions - self._invalid[agent]
            self._feedback[agent] = (
                f"Invalid action: {mistake} ({left} mistakes left before you forfeit)"
            )
            return True

    @abstractmethod
    def act(self, world: WorldT, agent: str, action: str) -> str:
        """Apply ``agent``'s text; return feedback or raise InvalidAction."""

    def _verdict(self, score: float) -> Verdict:
        return Verdict(
            score=score,
            passed=score >= 1.0,
            components={"result": score},
            details={1.0: "won", 0.5: "drew", 0.0: "lost"}.get(score, f"scored {score}"),
        )

    def render(self) -> str | None:
        """The first agent's view of the game (``ansi``)."""
        if self.world is None:
            return None
        return self.describe(self.world, self.possible_agents[0])

    def close(self) -> None:
        """Drop the game; idempotent."""
        self.world = None


class TurnBasedEnv(_TextAgents[WorldT], pettingzoo.AECEnv):
    """A PettingZoo AEC env for turn-based text games.

    A game writes ``new_world``, ``describe``, ``act``, ``state_key``, ``outcome``,
    ``to_move`` (whose turn it is), ``rules`` and ``oracle_action``. An invalid action leaves
    the turn with the same agent, with the reason in its next observation. Rewards are given
    when the game ends: +1 win, -1 loss, 0 draw (``verdict.score`` is 1, 0, 0.5).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi"],
        "name": "turn_based_text",
        "is_parallelizable": False,
    }

    def __init__(
        self, *, split: str = "train", difficulty: str | None = None, render_mode: str | None = None
    ) -> None:
        super().__init__()
        self._setup_agents(split, difficulty, render_mode)
        self.agents = []

    @abstractmethod
    def to_move(self, world: WorldT) -> str:
        """The agent whose turn it is."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._begin(seed, options)
        assert self.world is not None
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {**self._agent_info(a), "instructions": self.rules()} for a in self.agents}
        self.agent_selection = self.to_move(self.world)

    def observe(self, agent: str) -> str:
        if self.world is None:
            raise ResetNeeded("call reset() before observe()")
        return self._text(agent)

    def step(self, action: Any) -> None:
        if self.world is None:
            raise ResetNeeded("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        invalid = self._apply(agent, action)
        result = self._forfeits() or self.outcome(self.world)
        for a in self.agents:
            self.infos[a] = self._agent_info(a, invalid=invalid and a == agent)
        if result is not None:
            for a in self.agents:
                self.rewards[a] = 2.0 * result[a] - 1.0
                self.terminations[a] = True
                self.infos[a]["verdict"] = self._verdict(result[a])
        else:
            self.agent_selection = self.to_move(self.world)
        self._accumulate_rewards()


class SimultaneousEnv(_TextAgents[WorldT], pettingzoo.ParallelEnv):
    """A PettingZoo parallel env for games where every agent acts at once each round.

    A game writes ``new_world``, ``describe``, ``act`` (called per agent; invalid actions are
    feedback), ``resolve`` (applies the round once every action is in), ``state_key``,
    ``outcome``, ``round_rewards``, ``rules`` and ``oracle_action``.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "name": "simultaneous_text"}

    def __init__(
        self, *, split: str = "train", difficulty: str | None = None, render_mode: str | None = None
    ) -> None:
        self._setup_agents(split, difficulty, render_mode)
        self.agents = []

    @abstractmethod
    def resolve(self, world: WorldT, valid: Mapping[str, bool]) -> Mapping[str, float]:
        """Play the round from the actions ``act`` recorded; return each agent's reward."""

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        self._begin(seed, options)
        infos = {a: {**self._agent_info(a), "instructions": self.rules()} for a in self.agents}
        return {a: self._text(a) for a in self.agents}, infos

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[
        dict[str, str],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        if self.world is None or not self.agents:
            raise ResetNeeded("call reset() before step()")
        if not isinstance(actions, Mapping):
            raise UsageError(
                f"step() takes a dict of agent -> action, got {type(actions).__name__}"
            )
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise UsageError(f"step() needs an action for every live agent; missing {missing}")
        valid = {a: not self._apply(a, actions[a]) for a in self.agents}
        rewards = dict(self.resolve(self.world, valid))
        result = self._forfeits() or self.outcome(self.world)
        infos = {a: self._agent_info(a, invalid=not valid[a]) for a in self.agents}
        done = result is not None
        if result is not None:
            for a in self.agents:
                infos[a]["verdict"] = self._verdict(result[a])
        observations = {a: self._text(a) for a in self.agents}
        terminations = dict.fromkeys(self.agents, done)
        truncations = dict.fromkeys(self.agents, False)
        rewards = {a: float(rewards.get(a, 0.0)) for a in self.agents}
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos
