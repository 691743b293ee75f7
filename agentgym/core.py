"""The core contract: what an env, a task and a verdict are, and why.

An agentgym env **is** a :class:`gymnasium.Env`. Everything Gymnasium users know holds:
``reset(seed=, options=) -> (obs, info)``, ``step(action) -> (obs, reward, terminated,
truncated, info)``, ``render()``, ``close()``, real spaces, and ``gymnasium.utils.env_checker``
passes on every registered env. What agentgym adds is what language agents and honest
evaluation need:

**Tasks.** Every env draws its episodes from a :class:`TaskSet`: ``train``/``dev``/``test``
splits of stable task ids (``"test/hard/17"``), finite or generated from seeds. ``reset(seed=s,
options={"task_id": t})`` is deterministic; without a ``task_id`` the seed picks the task.
A :class:`Task` has four verbs: ``setup`` builds the world and states the goal, ``validate``
judges the world and returns a :class:`Verdict`, ``solve`` is the **oracle** (the next action of
a solver that needs no LLM), ``teardown`` releases what ``setup`` took.

**Oracles.** Every task has one, and the conformance checker runs it: if the oracle cannot
reach the maximum score, the task or its verifier is wrong. A do-nothing or random agent must
score below it, or the verifier cannot tell success from failure.

**Verdicts.** Rewards come from verifiers, which return a :class:`Verdict`: a score, a passed
flag, named components and a human-readable explanation. An env's step reward is the change in
the verdict's score, so an episode's return equals its final score.

**Text in, text out.** Observations of text envs are strings; the action is what the model
wrote. A malformed or illegal action is feedback: the next observation says what was wrong,
``info["invalid_action"]`` is set, and the episode goes on.

**info.** At reset ``info`` carries the ``instructions`` (what a system prompt needs: goal and
action syntax). Every step it carries ``state_key`` (a canonical string: equal keys mean the
agent faces the same situation, which GiGPO groups on) and the current ``verdict``.
Wall-clock timings are *not* put in ``info``: ``info`` must be identical for identical episodes
(Gymnasium's checker compares it), so timing is measured by the evaluator and kept in the ledger.

**Capabilities** are declared in ``metadata`` (``supports_state_snapshot``, ``multimodal``,
``needs_sandbox``, ``needs_browser``...), and the checker tests what is declared.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import gymnasium
import numpy as np

from agentgym.errors import TaskError

__all__ = [
    "SPLITS",
    "DataTaskSet",
    "Env",
    "GeneratedTaskSet",
    "Task",
    "TaskSet",
    "UserModel",
    "Verdict",
]

SPLITS: tuple[str, ...] = ("train", "dev", "test")
"""The standard splits. Train on ``train``, tune on ``dev``, report on ``test``."""

WorldT = TypeVar("WorldT")
ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")


@dataclass(frozen=True)
class Verdict:
    """A verifier's judgement of an episode or a state.

    Attributes:
        score: the score, in ``[0, max_score]``.
        passed: whether the goal was reached (for binary tasks: ``score == max_score``).
        components: named parts of the score (``{"solved": 1.0, "steps": 0.8}``), for analysis
            and for composite rewards.
        details: a sentence a person can read: why this score.
        max_score: the highest score this task can give (1.0 unless a family says otherwise).

    >>> Verdict(score=1.0, passed=True, details="all boxes on goals")
    Verdict(score=1.0, passed=True, components={}, details='all boxes on goals', max_score=1.0)
    """

    score: float
    passed: bool
    components: Mapping[str, float] = field(default_factory=dict)
    details: str = ""
    max_score: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.score <= self.max_score:
            raise ValueError(f"Verdict score {self.score} is outside [0, {self.max_score}]")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, as the ledger stores it."""
        return {
            "score": self.score,
            "passed": self.passed,
            "components": dict(self.components),
            "details": self.details,
            "max_score": self.max_score,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """The inverse of :meth:`to_dict`."""
        return cls(
            score=float(data["score"]),
            passed=bool(data["passed"]),
            components=dict(data.get("components", {})),
            details=str(data.get("details", "")),
            max_score=float(data.get("max_score", 1.0)),
        )


class Task(ABC, Generic[WorldT]):
    """One thing an env can be about: a level, a puzzle instance, a quest, a web task.

    A task does not hold episode state; the *world* does. ``setup`` builds a world, the env
    changes it as the agent acts, and ``validate`` judges it. Keeping the world separate is what
    lets ``get_state``/``set_state`` snapshot an episode and lets the oracle plan from any state.

    Attributes:
        id: the stable task id, e.g. ``"test/hard/17"``.
        split: ``train``, ``dev`` or ``test``.
        difficulty: a family-defined level such as ``easy``/``medium``/``hard``.
        seed: the seed the task's content was generated from (tasks that are data, not
            generated, use 0).
    """

    max_score: ClassVar[float] = 1.0

    def __init__(self, id: str, split: str, difficulty: str, seed: int) -> None:
        self.id = id
        self.split = split
        self.difficulty = difficulty
        self.seed = seed

    @abstractmethod
    def setup(self, rng: np.random.Generator) -> tuple[WorldT, str]:
        """Build a fresh world for one episode and state the goal in words.

        ``rng`` is the env's seeded generator: draw any per-episode randomness from it, never
        from global state, so that the same reset seed gives the same episode.
        """

    @abstractmethod
    def validate(self, world: WorldT) -> Verdict:
        """Judge the world as it is now."""

    @abstractmethod
    def solve(self, world: WorldT) -> Any:
        """The oracle: the next action, in the env's own action language, toward the goal.

        It may use privileged knowledge (hidden mines, the walkthrough). It returns ``None``
        when there is nothing left to do.
        """

    def teardown(self, world: WorldT) -> None:
        """Release what ``setup`` acquired (processes, files). Most tasks hold nothing."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"


class TaskSet(ABC):
    """The tasks an env can be about, by split and difficulty, addressed by stable ids."""

    splits: tuple[str, ...] = SPLITS
    difficulties: tuple[str, ...] = ("default",)
    strata: str | None = None
    """What else a suite's count of tasks is spread over, within each difficulty (SWE's
    ``"repository"``: :meth:`stratum` names a task's); ``None``: the first tasks in id order."""

    def stratum(self, task_id: str) -> str:
        """The stratum of a task (its repository, for SWE); asked only when :attr:`strata`
        is set, for every task of the levels a count is taken from."""
        raise NotImplementedError(f"{type(self).__name__} declares no strata")

    @abstractmethod
    def count(self, split: str, difficulty: str | None = None) -> int:
        """How many tasks the split holds (for one difficulty, or all)."""

    @abstractmethod
    def ids(self, split: str, difficulty: str | None = None) -> Sequence[str]:
        """The task ids of a split, in a fixed order."""

    @abstractmethod
    def get(self, task_id: str) -> Task[Any]:
        """The task with this id. Raises :class:`TaskError` naming valid ids if unknown."""

    def sample(
        self, rng: np.random.Generator, split: str = "train", difficulty: str | None = None
    ) -> Task[Any]:
        """A task drawn uniformly from the split (and difficulty) with ``rng``."""
        ids = self.ids(split, difficulty)
        return self.get(ids[int(rng.integers(len(ids)))])

    def check_split(self, split: str) -> None:
        """Raise :class:`TaskError` unless ``split`` is one of :attr:`splits`."""
        if split not in self.splits:
            raise TaskError(f"unknown split {split!r}; this env has splits {list(self.splits)}")

    def check_difficulty(self, difficulty: str | None) -> None:
        """Raise :class:`TaskError` unless ``difficulty`` is None or one of :attr:`difficulties`."""
        if difficulty is not None and difficulty not in self.difficulties:
            raise TaskError(
                f"unknown difficulty {difficulty!r}; this env has {list(self.difficulties)}"
            )


class _IndexRange(Sequence[str]):
    """The ids ``split/difficulty/i`` for ``i`` in ``range(size)``, per difficulty, lazily."""

    def __init__(self, split: str, difficulties: Sequence[str], size: int) -> None:
        self._split, self._difficulties, self._size = split, tuple(difficulties), size

    def __len__(self) -> int:
        return self._size * len(self._difficulties)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        difficulty, index = divmod(i % len(self), self._size)
        return f"{self._split}/{self._difficulties[difficulty]}/{index}"

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))


DEFAULT_SPLIT_SIZES: Mapping[str, int] = {"train": 100_000, "dev": 1_000, "test": 1_000}
"""Tasks per difficulty in each split of a generated task set, unless a family says otherwise."""


class GeneratedTaskSet(TaskSet):
    """Tasks generated from seeds: id ``"{split}/{difficulty}/{index}"``.

    Each id maps to a seed through a stable hash of ``namespace`` and the id, so splits are
    disjoint streams of instances, ids never change meaning, and the generator itself
    (``make_task``) only ever sees a seed.

    >>> ts = GeneratedTaskSet("demo", lambda *a: None, ("easy", "hard"), sizes={"train": 3})
    >>> list(ts.ids("train"))
    ['train/easy/0', 'train/easy/1', 'train/easy/2', 'train/hard/0', 'train/hard/1', 'train/hard/2']
    """

    def __init__(
        self,
        namespace: str,
        make_task: Callable[[str, str, str, int], Task[Any]],
        difficulties: Sequence[str],
        sizes: Mapping[str, int] | None = None,
    ) -> None:
        """Create the set.

        Args:
            namespace: salts the seeds (usually the game's name).
            make_task: ``make_task(id, split, difficulty, seed) -> Task``.
            difficulties: the difficulty levels, easiest first.
            sizes: tasks per difficulty in each split. Defaults to 100,000 train, 1,000 dev,
                1,000 test; generators can make more, but a fixed size keeps ids meaningful.
        """
        self.namespace = namespace
        self.make_task = make_task
        self.difficulties = tuple(difficulties)
        self.sizes = dict(sizes or DEFAULT_SPLIT_SIZES)
        self.splits = tuple(self.sizes)

    def count(self, split: str, difficulty: str | None = None) -> int:
        self.check_split(split)
        self.check_difficulty(difficulty)
        return self.sizes[split] * (1 if difficulty else len(self.difficulties))

    def ids(self, split: str, difficulty: str | None = None) -> Sequence[str]:
        self.check_split(split)
        self.check_difficulty(difficulty)
        levels = [difficulty] if difficulty else self.difficulties
        return _IndexRange(split, levels, self.sizes[split])

    def get(self, task_id: str) -> Task[Any]:
        parts = task_id.split("/") if isinstance(task_id, str) else []
        valid = (
            len(parts) == 3
            and parts[0] in self.sizes
            and parts[1] in self.difficulties
            and parts[2].isdigit()
            and int(parts[2]) < self.sizes[parts[0]]
        )
        if not valid:
            raise TaskError(
                f"unknown task id {task_id!r}: ids look like 'SPLIT/DIFFICULTY/INDEX' with "
                f"SPLIT in {list(self.sizes)}, DIFFICULTY in {list(self.difficulties)} and "
                f"INDEX below the split's size {self.sizes}"
            )
        split, difficulty, _ = parts
        return self.make_task(task_id, split, difficulty, self.seed_of(task_id))

    def seed_of(self, task_id: str) -> int:
        """The generator seed of a task id: a stable 63-bit hash."""
        digest = hashlib.blake2b(f"{self.namespace}:{task_id}".encode(), digest_size=8)
        return int.from_bytes(digest.digest(), "big") >> 1


class Env(gymnasium.Env[ObsT, ActT]):
    """Base class of single-agent agentgym envs: a Gymnasium env with tasks and an oracle.

    Beyond :class:`gymnasium.Env`, a subclass provides:

    * ``tasks`` — its :class:`TaskSet`;
    * :meth:`oracle_action` — the oracle's next action from the current state;
    * ``metadata`` capability flags, and :meth:`get_state`/:meth:`set_state` when it declares
      ``supports_state_snapshot``.

    Most text envs should subclass :class:`agentgym.TaskEnv`, which implements reset/step,
    feedback for bad actions, rewards from verdicts and the ``info`` contract once.
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi"],
        "render_fps": 4,
        "supports_state_snapshot": False,
        "multimodal": False,
        "needs_sandbox": False,
        "needs_browser": False,
    }
    tasks: TaskSet

    @abstractmethod
    def oracle_action(self) -> ActT | None:
        """The oracle's next action from the current state, or ``None`` if there is none."""

    def get_state(self) -> Any:
        """An opaque, picklable snapshot of the episode (only if ``supports_state_snapshot``)."""
        raise NotImplementedError(f"{type(self).__name__} does not support state snapshots")

    def set_state(self, state: Any) -> None:
        """Restore a snapshot taken by :meth:`get_state` (only if ``supports_state_snapshot``)."""
        raise NotImplementedError(f"{type(self).__name__} does not support state snapshots")


class DataTaskSet(TaskSet):
    """Tasks that are data (rows of a dataset file), not generated: id ``"{split}/{key}"``.

    ``tasks`` maps each split to its tasks in file order; every split the env offers must
    be present (a dataset file usually fills one split, ``test``). Difficulties come from
    the tasks themselves.
    """

    def __init__(self, tasks: Mapping[str, Sequence[Task[Any]]]) -> None:
        if not tasks or not any(tasks.values()):
            raise TaskError("a DataTaskSet needs at least one task")
        self.splits = tuple(tasks)
        self._by_split = {split: list(found) for split, found in tasks.items()}
        self._by_id = {t.id: t for found in self._by_split.values() for t in found}
        if len(self._by_id) != sum(map(len, self._by_split.values())):
            raise TaskError("task ids of a DataTaskSet must be unique")
        levels = dict.fromkeys(t.difficulty for t in self._by_id.values())
        self.difficulties = tuple(levels)

    def count(self, split: str, difficulty: str | None = None) -> int:
        return len(self.ids(split, difficulty))

    def ids(self, split: str, difficulty: str | None = None) -> Sequence[str]:
        self.check_split(split)
        self.check_difficulty(difficulty)
        return [
            t.id for t in self._by_split[split] if difficulty is None or t.difficulty == difficulty
        ]

    def get(self, task_id: str) -> Task[Any]:
        try:
            return self._by_id[task_id]
        except (KeyError, TypeError):
            some = list(self._by_id)[:3]
            raise TaskError(
                f"unknown task id {task_id!r}; this dataset has {len(self._by_id)} tasks "
                f"with ids like {some}"
            ) from None


class UserModel(ABC):
    """A model that plays the *user* of a conversation env (a customer, a patient).

    Envs whose tasks are conversations with a simulated person (``usersim/*``) play that
    person with a scripted user by default, and with any ``UserModel`` handed to them as
    ``make(..., user=model)``. The evaluator builds one from an agent spec (``agentgym eval
    --user smollm2``: any LLM agent can play the user), and records its tokens in the ledger
    apart from the agent's. The env speaks to it in plain text, synchronously, from its own
    thread; a model is used by one episode at a time.
    """

    @abstractmethod
    def start(self, instructions: str, *, seed: int | None) -> None:
        """Begin a conversation: ``instructions`` are the user's system prompt (who they are,
        what they want, how to end the conversation); ``seed`` seeds its sampling."""

    @abstractmethod
    def reply(self, message: str) -> str:
        """The user's next message in answer to ``message`` (the agent's, or a tool's result
        for a user who has tools)."""

    def close(self) -> None:  # noqa: B027 (optional hook: most models hold nothing)
        """Release what the conversation holds (default: nothing)."""
