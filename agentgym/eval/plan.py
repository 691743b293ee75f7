"""The plan layer: a benchmark suite, the episodes it runs and their seeds.

:class:`Benchmark` pins what an evaluation runs so that numbers reproduce: env ids (with their
version), the split and difficulty to draw tasks from, how many tasks, episodes per task, step
limits, env kwargs, the base seed and the sampling parameters for model agents. Its
:meth:`Benchmark.digest` (a hash of the canonical content) goes into every run's manifest: two
runs with the same digest ran the same episodes. :meth:`Benchmark.plan` lists them as
:class:`EpisodePlan` rows, what the engine plays and the trainers build their groups from.

It lives in the core (the evaluator, the trainers and the CLI use it); the suites themselves
are data, YAML files in the ``agentgym.benchmarks`` package (``benchmarks/`` in a checkout),
found by :func:`load_benchmark` by name, or any YAML file by path. The format::

    name: quickstart
    version: 1
    description: a few minutes on a CPU
    seed: 0
    episodes_per_task: 2
    sampling: {temperature: 0.0, max_tokens: 48}
    envs:
      - id: games/Maze-v0
        split: test
        difficulty: easy
        tasks: 4            # the first 4 task ids of test/easy (or a list of task ids)
        max_steps: 30
        kwargs: {}
        group: mazes        # optional: envs of one group weigh as one env in the headline

Every number of a run is the mean of env means (:data:`~agentgym.eval.stats.HEADLINE`). A
suite that reproduces another benchmark's weighting names **groups**: envs sharing a
``group`` form one stratum, whose mean pools their tasks, so ``balrog-v0``'s five BabyAI ids
weigh as BALROG's one BabyAI environment. An env without a group is a group of its own.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from agentgym.core import TaskSet
from agentgym.errors import UsageError
from agentgym.seeding import derive

__all__ = [
    "MAX_EPISODES",
    "SUITES_PACKAGE",
    "Benchmark",
    "BenchmarkEnv",
    "EpisodePlan",
    "TaskSelection",
    "episode_seed",
    "list_benchmarks",
    "load_benchmark",
    "parse_env_kwargs",
    "select_tasks",
    "strata_of",
]

MAX_EPISODES = 1_000_000
"""The most episodes one suite may plan: more is a typo (``episodes_per_task: 99999999999``
would fill the memory with the plan before the first episode)."""

SUITES_PACKAGE = "agentgym.benchmarks"
"""The package whose YAML files are the shipped suites (data: nothing is imported from it)."""


def _suites_folder() -> Path:
    import importlib.util

    found = importlib.util.find_spec(SUITES_PACKAGE)
    if found is None or not found.submodule_search_locations:
        raise UsageError(f"the package of shipped suites, {SUITES_PACKAGE}, is not installed")
    return Path(next(iter(found.submodule_search_locations)))


@dataclass(frozen=True)
class EpisodePlan:
    """One episode of a run: which env and task, with which seed, the how-manieth repeat."""

    index: int
    env_id: str
    task_id: str
    seed: int
    repeat: int
    split: str
    max_steps: int | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    # The seed of the agent's sampling when it differs from the env's reset seed: the episodes
    # of a trainer's group share ``seed`` (the same start) and each samples its own replies.
    agent_seed: int | None = None
    # The training iteration that plays it (a trainer's plan); recorded in the ledger.
    iteration: int | None = None

    @property
    def episode_id(self) -> str:
        """Stable across runs and resumes: what ``--resume`` matches finished episodes by."""
        return f"{self.env_id}|{self.task_id}|{self.repeat}"


@dataclass(frozen=True)
class BenchmarkEnv:
    """One env's part of a suite."""

    id: str
    split: str = "test"
    difficulty: str | None = None
    tasks: int | list[str] = 10
    max_steps: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    group: str | None = None

    def __post_init__(self) -> None:
        where = f"env {self.id!r}"
        if self.group is not None and (not isinstance(self.group, str) or not self.group):
            raise UsageError(f"{where}: group must be a non-empty string, got {self.group!r}")
        if isinstance(self.tasks, list):
            if not self.tasks or not all(isinstance(t, str) for t in self.tasks):
                raise UsageError(f"{where}: tasks must be a positive count or a list of task ids")
        elif isinstance(self.tasks, bool) or not isinstance(self.tasks, int) or self.tasks < 1:
            raise UsageError(
                f"{where}: tasks must be a positive count or a list of task ids, got {self.tasks!r}"
            )
        if self.max_steps is not None and (
            isinstance(self.max_steps, bool)
            or not isinstance(self.max_steps, int)
            or self.max_steps < 1
        ):
            raise UsageError(f"{where}: max_steps must be a positive int, got {self.max_steps!r}")
        if not isinstance(self.kwargs, dict):
            raise UsageError(f"{where}: kwargs must be a mapping, got {self.kwargs!r}")

    def task_ids(self) -> list[str]:
        """The task ids this entry runs, drawn from the env's own task set."""
        return list(self.selection().ids)

    def selection(self) -> TaskSelection:
        """The task ids this entry runs and how they were chosen: a list as given, a count by
        :func:`select_tasks` from the env's task set (made once per entry)."""
        if isinstance(self.tasks, list):
            return TaskSelection(tuple(self.tasks), f"{len(self.tasks)} task ids, as listed")
        return self._counted

    @functools.cached_property
    def _counted(self) -> TaskSelection:
        import agentgym

        assert isinstance(self.tasks, int), "a list of ids needs no task set"
        try:
            env = agentgym.make(self.id, **self.kwargs)
        except TypeError as error:  # a keyword the env does not take
            raise UsageError(
                f"env {self.id!r}: it does not take the kwargs {self.kwargs!r} ({error})"
            ) from None
        try:
            tasks = cast(Any, env.unwrapped).tasks  # an agentgym env: it has a task set
            return select_tasks(tasks, self.split, self.difficulty, self.tasks)
        finally:
            env.close()


@dataclass(frozen=True)
class TaskSelection:
    """The tasks a suite's entry runs, and a sentence saying how they were chosen (the run's
    manifest records it, so a reader knows what ``tasks: 3`` meant)."""

    ids: tuple[str, ...]
    how: str


def select_tasks(tasks: TaskSet, split: str, difficulty: str | None, count: int) -> TaskSelection:
    """``count`` tasks of ``split``, spread **round-robin**: one from each difficulty in turn
    (only ``difficulty`` if given; a level with none left is skipped), and, where the task set
    declares :attr:`~agentgym.core.TaskSet.strata` (SWE's repositories), each from the stratum
    with the fewest tasks taken so far (ties to the first in id order), so ``--tasks 3`` on
    SWE takes three repositories, not one repository's first three. Within a level and a
    stratum the first tasks in id order; the result is listed level by level in id order.

    The seed plays no part: the same suite always runs the same tasks. Without strata this is
    what the shipped suites always ran (each level's first tasks), so their task sets stay
    the same; a count at or over what the split holds takes every task, in id order.
    """
    levels = [difficulty] if difficulty else list(tasks.difficulties)
    pools = [_by_stratum(tasks, split, level, count) for level in levels]
    order = {name: n for n, name in enumerate(dict.fromkeys(s for pool in pools for s in pool))}
    taken = dict.fromkeys(order, 0)
    chosen: list[list[str]] = [[] for _ in levels]
    total = 0
    while total < count:
        before = total
        for pool, mine in zip(pools, chosen, strict=True):
            left = [name for name, ids in pool.items() if ids]
            if left and total < count:
                name = min(left, key=lambda n: (taken[n], order[n]))
                mine.append(pool[name].popleft())
                taken[name] += 1
                total += 1
        if total == before:
            break  # every level is used up: the split holds fewer than count
    if tasks.strata:  # a stratum's picks are in id order, the level's mix of them is not
        for level, mine in zip(levels, chosen, strict=True):
            position = {task_id: n for n, task_id in enumerate(tasks.ids(split, level))}
            mine.sort(key=position.__getitem__)
    ids = tuple(task_id for mine in chosen for task_id in mine)
    return TaskSelection(ids, _how(tasks, split, levels, chosen, taken, count))


def _by_stratum(tasks: TaskSet, split: str, level: str, count: int) -> dict[str, deque[str]]:
    """A level's task ids by stratum, in id order (one unnamed stratum of the first
    ``count`` ids where the task set declares none: a generated split is not listed whole)."""
    if not tasks.strata:
        return {"": deque(tasks.ids(split, level)[:count])}
    found: dict[str, deque[str]] = {}
    for task_id in tasks.ids(split, level):
        found.setdefault(tasks.stratum(task_id), deque()).append(task_id)
    return found


def _how(
    tasks: TaskSet,
    split: str,
    levels: list[str],
    chosen: list[list[str]],
    taken: dict[str, int],
    count: int,
) -> str:
    """The sentence a manifest records: how many tasks, spread over what."""
    total = sum(map(len, chosen))
    short = f" ({count} asked; the split holds no more)" if total < count else ""
    if len(levels) == 1:
        spread = f"difficulty {levels[0]}"
    else:
        per_level = ", ".join(f"{lv} {len(m)}" for lv, m in zip(levels, chosen, strict=True))
        spread = f"round-robin over difficulties ({per_level})"
    if tasks.strata:
        per_stratum = ", ".join(f"{name} {n}" for name, n in taken.items() if n)
        spread += f", round-robin by {tasks.strata} ({per_stratum})"
    else:
        spread += ", each level's first in id order"
    return f"{total} {split} tasks{short}: {spread}"


@dataclass(frozen=True)
class Benchmark:
    """A suite: what to run, how often, with which seeds and limits."""

    name: str
    envs: tuple[BenchmarkEnv, ...]
    version: int = 1
    description: str = ""
    seed: int = 0
    episodes_per_task: int = 1
    sampling: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from agentgym.backends.sampling import SamplingParams

        for key, kind in (("name", str), ("version", int), ("description", str), ("seed", int)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, kind):
                raise UsageError(
                    f"benchmark {self.name!r}: {key} must be a{'n' if kind is int else ''} "
                    f"{kind.__name__}, got {value!r}"
                )
        if not isinstance(self.sampling, dict):
            raise UsageError(f"benchmark {self.name!r}: sampling must be a mapping")
        SamplingParams.from_dict(self.sampling)  # an unknown key or a bad value fails now
        if not self.envs:
            raise UsageError(f"benchmark {self.name!r} lists no envs")
        if not isinstance(self.episodes_per_task, int) or self.episodes_per_task < 1:
            raise UsageError(
                f"benchmark {self.name!r}: episodes_per_task must be a positive int, got "
                f"{self.episodes_per_task!r}"
            )
        self.strata()  # an env in two groups fails now

    def strata(self) -> dict[str, str]:
        """Each env id's stratum in the headline: its ``group``, else the id itself (the
        mapping :func:`~agentgym.eval.stats.summarize` and the leaderboard's board take)."""
        found: dict[str, str] = {}
        for env in self.envs:
            stratum = env.group or env.id
            if found.setdefault(env.id, stratum) != stratum:
                raise UsageError(
                    f"benchmark {self.name!r}: env {env.id!r} is listed in groups "
                    f"{found[env.id]!r} and {stratum!r}; an env weighs in one group"
                )
        return found

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> Benchmark:
        """Parse a suite; unknown keys are errors (a typo must not silently change a run)."""
        known = {"name", "version", "description", "seed", "episodes_per_task", "sampling"}
        unknown = set(data) - known - {"envs"}
        if unknown:
            raise UsageError(f"{source}: unknown benchmark keys {sorted(unknown)}")
        env_keys = {"id", "split", "difficulty", "tasks", "max_steps", "kwargs", "group"}
        envs = []
        for entry in data.get("envs") or []:
            if not isinstance(entry, dict) or "id" not in entry:
                raise UsageError(f"{source}: each env entry needs an 'id', got {entry!r}")
            bad = set(entry) - env_keys
            if bad:
                raise UsageError(f"{source}: env {entry['id']!r} has unknown keys {sorted(bad)}")
            try:
                envs.append(BenchmarkEnv(**entry))
            except UsageError as error:
                raise UsageError(f"{source}: {error}") from None
        if "name" not in data:
            raise UsageError(f"{source}: a benchmark needs a 'name'")
        fields = {key: data[key] for key in known if key in data}
        try:
            return cls(envs=tuple(envs), **fields)
        except UsageError as error:
            raise UsageError(f"{source}: {error}") from None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        # ``group`` only where set: a suite without groups keeps the digest it always had
        data["envs"] = [
            {k: v for k, v in asdict(env).items() if k != "group" or v is not None}
            for env in self.envs
        ]
        return data

    def digest(self) -> str:
        """sha256 of the canonical JSON of the suite (the manifest's ``benchmark_hash``)."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    def plan(self) -> list[EpisodePlan]:
        """Every episode of the suite, in a fixed order, each with its own derived seed."""
        tasks = [(env, env.task_ids()) for env in self.envs]
        count = sum(len(ids) for _, ids in tasks) * self.episodes_per_task
        if count > MAX_EPISODES:
            raise UsageError(
                f"benchmark {self.name!r} plans {count:,} episodes "
                f"({self.episodes_per_task:,} per task), over the {MAX_EPISODES:,} one run may play"
            )
        episodes: list[EpisodePlan] = []
        for env, task_ids in tasks:
            for task_id in task_ids:
                for repeat in range(self.episodes_per_task):
                    episodes.append(
                        EpisodePlan(
                            index=len(episodes),
                            env_id=env.id,
                            task_id=task_id,
                            seed=episode_seed(self.seed, env.id, task_id, repeat),
                            repeat=repeat,
                            split=env.split,
                            max_steps=env.max_steps,
                            env_kwargs=dict(env.kwargs),
                        )
                    )
        return episodes


def episode_seed(base: int, env_id: str, task_id: str, repeat: int) -> int:
    """An episode's reset seed: :func:`agentgym.seeding.derive` of its suite's seed, env, task
    and repeat, 31 bits wide (the width the published suites' seeds always had)."""
    return derive(base, env_id, task_id, repeat, bits=31)


def strata_of(spec: dict[str, Any] | None) -> dict[str, str]:
    """:meth:`Benchmark.strata` of a suite as a manifest or a board stores it (its dict),
    without parsing the rest; empty for none (each env its own stratum)."""
    envs = (spec or {}).get("envs") or []
    return {str(e["id"]): str(e.get("group") or e["id"]) for e in envs if isinstance(e, dict)}


def list_benchmarks() -> list[str]:
    """Names of the suites shipped with agentgym."""
    return sorted(path.stem for path in _suites_folder().glob("*.yaml"))


def load_benchmark(name_or_path: str) -> Benchmark:
    """A shipped suite by name, or a YAML file by path."""
    import yaml

    path = Path(name_or_path)
    if not path.suffix:
        shipped = _suites_folder() / f"{name_or_path}.yaml"
        path = shipped if shipped.is_file() or not path.is_dir() else path
    if path.is_dir():
        raise UsageError(f"the benchmark {name_or_path!r} is a directory, not a YAML file")
    if not path.is_file():
        raise UsageError(
            f"no benchmark {name_or_path!r}: shipped suites are {list_benchmarks()}, or give "
            f"the path of a YAML file"
        )
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:  # the message names the line and column
        raise UsageError(f"{path} is not valid YAML: {' '.join(str(error).split())}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the benchmark file {path}: {error}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a benchmark file holds a mapping, got {type(data).__name__}")
    return Benchmark.from_dict(data, str(path))


def parse_env_kwargs(text: str | None, flag: str = "--env-kwargs") -> dict[str, Any]:
    """An env's keyword arguments given as one JSON object, as a benchmark file's
    ``kwargs:`` (``agentgym eval --env`` and ``agentgym train`` both take them so); none
    when ``text`` is None."""
    if text is None:
        return {}
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{flag} {text!r} is not JSON ({error})") from None
    if not isinstance(kwargs, dict):
        raise UsageError(f"{flag} {text!r} is not a JSON object ({{...}})")
    return kwargs
