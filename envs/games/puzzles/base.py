"""What every native text puzzle shares: a world class, a generator, a solver, one env class.

A puzzle is written as three pure pieces plus a thin env subclass:

* a :class:`PuzzleWorld` — the state, with ``apply`` (parse the agent's text and make the
  move, or raise :class:`~agentgym.InvalidAction` with a helpful message), ``render``, ``key``,
  ``legal_actions``, ``solved`` and ``lost``;
* ``generate(rng, **level) -> world`` — a seeded generator; ``level`` comes from the env's
  ``levels`` table (``{"easy": {...}, "medium": {...}, "hard": {...}}``);
* ``solve(world) -> list[str]`` — a real solver returning actions in the puzzle's own action
  language; the oracle follows its plan and re-plans if the agent left it;
* a :class:`PuzzleEnv` subclass whose docstring is the puzzle's doc page.

Tasks are generated from seeds (:class:`~agentgym.core.GeneratedTaskSet`), so every id names
one fixed instance. Snapshots, ``state_key``, rewards and feedback come from
:class:`~agentgym.TaskEnv`.
"""

from __future__ import annotations

import copy
import functools
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = ["PuzzleEnv", "PuzzleTask", "PuzzleWorld", "last_line", "parse_command"]


class PuzzleWorld(ABC):
    """The state of one puzzle instance."""

    @abstractmethod
    def apply(self, action: str) -> str:
        """Parse and make the move; return feedback. Raise InvalidAction if it cannot be made."""

    @abstractmethod
    def render(self) -> str:
        """The state as text, as the agent sees it."""

    @abstractmethod
    def key(self) -> str:
        """Canonical state string: equal keys mean equal situations."""

    @abstractmethod
    def solved(self) -> bool:
        """Whether the goal is reached."""

    def lost(self) -> bool:
        """Whether the puzzle can no longer be solved (a mine, no guesses left)."""
        return False

    def legal_actions(self) -> list[str] | None:
        """Every legal action now, if they can be listed cheaply (``None`` otherwise)."""
        return None

    def status(self) -> str:
        """One sentence on where the puzzle stands, for the verdict's details."""
        if self.solved():
            return "solved"
        return "lost" if self.lost() else "not solved yet"

    def copy(self) -> PuzzleWorld:
        """An independent copy (the oracle plans on copies)."""
        return copy.deepcopy(self)


class PuzzleTask(Task[PuzzleWorld]):
    """A generated puzzle instance: ``setup`` generates it, ``validate`` checks ``solved``."""

    def __init__(self, env_cls: type[PuzzleEnv], id: str, split: str, difficulty: str, seed: int):
        super().__init__(id, split, difficulty, seed)
        self.env_cls = env_cls
        self._plan: dict[str, str] = {}

    def setup(self, rng: np.random.Generator) -> tuple[PuzzleWorld, str]:
        # A class is hashable; mypy checks type[...] against Hashable wrongly (python/mypy#20409).
        world = _generated(self.env_cls, self.difficulty, self.seed).copy()  # type: ignore[arg-type]
        return world, self.env_cls.goal(world)

    def validate(self, world: PuzzleWorld) -> Verdict:
        solved = world.solved()
        return Verdict(
            score=1.0 if solved else 0.0,
            passed=solved,
            components={"solved": float(solved)},
            details=world.status(),
        )

    def solve(self, world: PuzzleWorld) -> str | None:
        """Follow the solver's plan; re-plan when the world is off it."""
        key = world.key()
        if key not in self._plan:
            self._plan = {}
            actions = self.env_cls.solve(world.copy())
            walker = world.copy()
            for action in actions:
                self._plan.setdefault(walker.key(), action)
                walker.apply(action)
            if actions and not walker.solved():
                raise AssertionError(
                    f"{self.env_cls.__name__}.solve() returned a plan that does not solve "
                    f"task {self.id!r}"
                )
        return self._plan.get(key)


@functools.lru_cache(maxsize=1024)
def _generated(env_cls: type[PuzzleEnv], difficulty: str, seed: int) -> PuzzleWorld:
    """Generate an instance once; resets of the same task get copies (Sokoban takes ~50 ms)."""
    return env_cls.generate(np.random.default_rng(seed), **env_cls.levels[difficulty])


class PuzzleEnv(TaskEnv[PuzzleWorld]):
    """Base class of native puzzles; subclasses set ``name``, ``levels`` and the three pieces."""

    name: ClassVar[str]
    levels: ClassVar[Mapping[str, Mapping[str, Any]]]
    syntax: ClassVar[str] = ""
    max_invalid_default = 50

    def __init__(self, **options: Any) -> None:
        """``options``: as for :class:`~agentgym.task_env.TaskEnv`."""
        self.tasks = GeneratedTaskSet(
            self.name,
            lambda id, split, difficulty, seed: PuzzleTask(type(self), id, split, difficulty, seed),
            tuple(self.levels),
        )
        super().__init__(**options)

    @staticmethod
    @abstractmethod
    def generate(rng: np.random.Generator, **level: Any) -> PuzzleWorld:
        """A new instance drawn with ``rng`` at the given level."""

    @staticmethod
    @abstractmethod
    def solve(world: PuzzleWorld) -> list[str]:
        """Actions that solve ``world`` from its current state (``[]`` if already solved)."""

    @staticmethod
    @abstractmethod
    def goal(world: PuzzleWorld) -> str:
        """The goal of this instance, in a sentence or two."""

    def action_syntax(self) -> str:
        return self.syntax

    def act(self, world: PuzzleWorld, action: str) -> str:
        return world.apply(action)

    def observe(self, world: PuzzleWorld) -> str:
        return world.render()

    def state_key(self, world: PuzzleWorld) -> str:
        return world.key()

    def admissible_actions(self, world: PuzzleWorld) -> list[str] | None:
        return world.legal_actions()

    def is_over(self, world: PuzzleWorld) -> bool:
        return world.lost()


def parse_command(text: str, commands: Mapping[str, int], example: str) -> tuple[str, list[str]]:
    """Split an action into a known command word and its arguments.

    Agents wrap actions in prose, quotes and code fences; this takes the last non-empty line,
    strips fences, quotes and trailing punctuation, and lower-cases it. ``commands`` maps each
    command to its number of arguments (``-1``: any number).

    >>> parse_command("I will move. `move 1 3`", {"move": 2}, "move 1 3")
    ('move', ['1', '3'])
    """
    line = last_line(text).strip("`'\"*.!?;: ")
    words = [w.strip("`'\"*.!?;:()[]") for w in line.replace(",", " ").split()]
    # Allow a leading "action:" label and a command written mid-line after prose.
    starts = [i for i, w in enumerate(words) if w in commands]
    if not starts:
        known = ", ".join(sorted(commands))
        raise InvalidAction(
            f"could not read {text.strip()[:80]!r}: use one of {known}, e.g. '{example}'"
        )
    start = starts[-1]
    command, args = words[start], words[start + 1 :]
    expected = commands[command]
    if expected >= 0 and len(args) != expected:
        raise InvalidAction(
            f"'{command}' takes {expected} argument(s), got {len(args)} in {line!r}; e.g. "
            f"'{example}'"
        )
    return command, args


def last_line(text: str) -> str:
    """The line of a reply that holds the action, lower-cased.

    Agents wrap actions in prose and code fences; by convention the action is the last
    non-empty line outside the fences.

    >>> last_line("I will push the box.\\n```\\nUp\\n```")
    'up'
    """
    lines = [ln.strip() for ln in text.strip().strip("`").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("```")]
    return (lines[-1] if lines else "").lower()
