"""reasoning-gym's procedurally generated tasks as agentgym envs, scored by their own scorers.

One id per dataset (``reasoning-gym/<dataset>-v1``, see
:mod:`agentgym.envs.reasoning.reasoning_gym_ids`), all served by :class:`ReasoningGymEnv`. The
doc page is the class docstring and ``docs/reasoning-gym.md``.

How a task id becomes a question: ``split/difficulty/index`` is item ``index`` of the dataset
``create_dataset(name, seed=SPLIT_SEEDS[split], size=<split size>, **config)``, where the config
is the dataset's default or a level of its reasoning-gym curriculum, so anyone can rebuild a
task with reasoning-gym alone. Most datasets generate item ``i`` from ``Random(seed + i)``: the
splits' seed ranges do not overlap, so no two splits share a generator seed (datasets with tiny
question spaces, such as one-digit sums, can still repeat a question across splits). One dataset
object per (dataset, difficulty, split) is built once per process and kept, and the last 512
items generated are kept too: generation is deterministic, and replays are free.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import difflib
import functools
import hashlib
import importlib.metadata
import io
import json
import math
import pickle
import re
import threading
import time
import tokenize
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from reasoning_gym.coaching.base_curriculum import DefaultCurriculumContext, RangeAttributeMode
from reasoning_gym.factory import CURRICULA
from reasoning_gym.factory import DATASETS as REGISTERED

from agentgym.core import DEFAULT_SPLIT_SIZES, GeneratedTaskSet, Task, Verdict
from agentgym.envs.reasoning.reasoning_gym_ids import (
    DATASETS,
    EXCLUDED,
    EXECUTES_ANSWER,
    FAMILY,
    LEVELS,
    REASONING_GYM_VERSION,
    SPLIT_SIZES,
)
from agentgym.errors import InfrastructureError, UsageError, VerifierError
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = [
    "CANARY",
    "CURRICULUM_LEVELS",
    "SPLIT_SEEDS",
    "LevelAudit",
    "Question",
    "ReasoningGymEnv",
    "ReasoningGymTask",
    "audit",
    "build",
    "code_in_answer",
    "dataset_config",
    "extract_answer",
    "fingerprints",
    "generate",
    "reference_answer",
]

SPLIT_SEEDS: dict[str, int] = {"train": 0, "dev": 1_000_000_000, "test": 2_000_000_000}
"""The reasoning-gym seed of each split's dataset: item ``i`` draws from ``Random(seed + i)``,
so the splits are disjoint as long as they hold fewer than a billion tasks."""

CURRICULUM_LEVELS: dict[str, int | None] = {"easy": 0, "medium": 1, "hard": 2, "default": None}
"""Difficulty name -> level of the dataset's reasoning-gym curriculum (``None``: its default
config). Each curriculum attribute is set to that level (capped at its last one) and takes only
that level's values (reasoning-gym's ``upper_bound`` mode), so ``hard`` holds no easy items."""

REFERENCE_KEYS: dict[str, str] = {
    "graph_color": "possible_answer",
    "rubiks_cube": "example_correct_answer",
}
"""Datasets whose items have no single gold ``answer`` (any valid solution scores), and the
metadata key of the reference solution the oracle gives instead."""

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"<answer>", re.IGNORECASE)

_MAX_OBSERVATION = 65_536
_MAX_ACTION = 16_384


# --------------------------------------------------------------------------- generation


# reasoning-gym is not written for threads (bf's compiler keeps module-level state, pool_matrix
# seeds NumPy's global generator), and the evaluator steps envs from a thread pool: every call
# into it takes this lock. Generation and scoring hold the GIL anyway.
_LOCK = threading.Lock()


def dataset_config(name: str, difficulty: str, split: str) -> Any:
    """The reasoning-gym config object of a split of ``name`` at ``difficulty``."""
    config_cls = REGISTERED[name][1]
    seed, size = SPLIT_SEEDS[split], _sizes(name)[split]
    level = CURRICULUM_LEVELS[difficulty]
    if level is None:
        return config_cls(seed=seed, size=size)
    curriculum = CURRICULA[name]()
    curriculum.set_global_level(level)
    context = DefaultCurriculumContext(mode=RangeAttributeMode.UPPER_BOUND)
    return curriculum.generate_configuration({"seed": seed, "size": size}, context)


def build(name: str, difficulty: str, split: str) -> Any:
    """A fresh reasoning-gym dataset object; its failures raise InfrastructureError."""
    if name not in REGISTERED:
        raise UsageError(f"reasoning-gym has no dataset {name!r}")
    if difficulty not in CURRICULUM_LEVELS or split not in SPLIT_SEEDS:
        raise UsageError(
            f"no difficulty {difficulty!r} or split {split!r}; difficulties are "
            f"{list(CURRICULUM_LEVELS)}, splits {list(SPLIT_SEEDS)}"
        )
    try:
        config = dataset_config(name, difficulty, split)
        return REGISTERED[name][0](config=config)
    except Exception as error:
        raise InfrastructureError(
            f"reasoning-gym could not build dataset {name!r} at difficulty {difficulty!r} for "
            f"the {split} split: {type(error).__name__}: {error}"
        ) from error


_DATASETS: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
_KEPT_DATASETS = 64


def _dataset(name: str, difficulty: str, split: str) -> Any:
    """The split's dataset object, built once per process (a few take a second to load data):
    looked up and built under the lock, so threads that miss together build it once."""
    key = (name, difficulty, split)
    with _LOCK:
        if key not in _DATASETS:
            _DATASETS[key] = build(name, difficulty, split)
            if len(_DATASETS) > _KEPT_DATASETS:
                _DATASETS.popitem(last=False)
        _DATASETS.move_to_end(key)
        return _DATASETS[key]


def generate(name: str, difficulty: str, split: str, index: int) -> dict[str, Any]:
    """Item ``index`` of a split of ``name`` (a fresh copy); failures raise InfrastructureError."""
    return copy.deepcopy(_entry(name, difficulty, split, index))


@functools.lru_cache(maxsize=512)
def _entry(name: str, difficulty: str, split: str, index: int) -> dict[str, Any]:
    dataset = _dataset(name, difficulty, split)
    try:
        with _LOCK:
            entry = dataset[index]
    except Exception as error:
        raise InfrastructureError(
            f"reasoning-gym failed to generate item {index} of {name!r} ({difficulty}, "
            f"{split} split): {type(error).__name__}: {error}"
        ) from error
    if not isinstance(entry, Mapping) or not isinstance(entry.get("question"), str):
        raise InfrastructureError(
            f"reasoning-gym's {name!r} item {index} ({difficulty}, {split}) has no question "
            f"text: {entry!r:.200}"
        )
    return dict(entry)


def reference_answer(name: str, entry: Mapping[str, Any]) -> str:
    """The answer the oracle gives: the item's gold ``answer``, or its reference solution."""
    key = REFERENCE_KEYS.get(name)
    gold = entry.get("answer") if key is None else entry.get("metadata", {}).get(key)
    if isinstance(gold, Mapping):
        return json.dumps(gold)
    if gold is None:
        raise InfrastructureError(f"reasoning-gym's {name!r} item has no gold answer to give")
    return str(gold)


def _sizes(name: str) -> Mapping[str, int]:
    return SPLIT_SIZES.get(name, DEFAULT_SPLIT_SIZES)


# --------------------------------------------------------------------------- answers


def extract_answer(reply: str) -> str:
    """The text of the last ``<answer>...</answer>`` in ``reply``, stripped.

    Raises InvalidAction, saying what to write, when there is none or it is empty.
    """
    found: list[str] = _ANSWER.findall(reply)  # one group: each match is its text
    if not found:
        if _OPEN.search(reply):
            raise InvalidAction("the <answer> tag is not closed; end the answer with </answer>")
        raise InvalidAction(
            "no answer found: write the final answer between <answer> and </answer>, e.g. "
            "<answer>42</answer>"
        )
    answer = found[-1].strip()
    if not answer:
        raise InvalidAction("the answer between <answer> and </answer> is empty")
    return answer


# Nodes of a Python expression that evaluate without running code (no calls, attributes,
# subscripts, operators or comprehensions).
_LITERAL_NODES = (
    ast.Expression,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.Name,
    ast.Load,
    ast.UnaryOp,
    ast.UAdd,
    ast.USub,
    ast.Not,
)

# Names of sympy's parsing namespace a math answer may use: functions and constants that
# compute nothing costly. Other names of that namespace (builtins such as open and exec, sympy
# functions such as N or sympify) are refused; names outside it become sympy symbols.
_MATH_NAMES = frozenset(
    {
        *("sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec"),
        *("acsc", "sinh", "cosh", "tanh", "coth", "sech", "csch", "asinh", "acosh", "atanh"),
        *("acoth", "exp", "log", "ln", "sqrt", "cbrt", "Abs", "abs", "sign", "floor"),
        *("ceiling", "pi", "E", "I", "oo", "Integral"),
    }
)
_MATH_OPS = frozenset({"+", "-", "*", "/", "**", "^", "(", ")", ","})
_HARMLESS_TOKENS = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)


@functools.cache
def _sympy_namespace() -> frozenset[str]:
    """The names ``sympy.parse_expr`` resolves (everything else becomes a Symbol)."""
    namespace: dict[str, Any] = {}
    exec("from sympy import *", namespace)  # what parse_expr itself does
    return frozenset(namespace) | frozenset(vars(builtins)) | {"lambda"}


def code_in_answer(kind: str, answer: str) -> str | None:
    """Why ``answer`` would run code in a scorer of ``kind`` (``python``/``sympy``), or None.

    ``python`` scorers ``eval`` the answer: only literals (numbers, strings, lists, tuples,
    sets, dicts, bare names) pass. ``sympy`` scorers ``parse_expr`` it: only numbers, names that
    sympy turns into symbols, the math functions of ``_MATH_NAMES``, ``+ - * / ^ ( ) ,`` and
    powers with a small number as exponent (no towers, so ``9**9**9`` cannot hang the scorer)
    pass.
    """
    if kind == "python":
        return _python_code(answer)
    if kind == "sympy":
        return _sympy_code(answer)
    raise UsageError(f"unknown scorer kind {kind!r}; expected 'python' or 'sympy'")


def _python_code(answer: str) -> str | None:
    # eval() strips leading spaces and tabs; some scorers strip the answer first.
    for source in {answer.lstrip(" \t"), answer.strip()}:
        try:
            tree = ast.parse(source, mode="eval")
        except (SyntaxError, ValueError):
            continue  # eval() fails on it the same way, before running anything
        except Exception as error:  # nested too deep to check: refuse
            return f"it cannot be checked ({type(error).__name__})"
        for node in ast.walk(tree):
            if not isinstance(node, _LITERAL_NODES):
                return f"it is Python code (a {type(node).__name__} expression)"
    return None


def _sympy_code(answer: str) -> str | None:
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(answer.strip()).readline)
            if t.type not in _HARMLESS_TOKENS
        ]
    except (tokenize.TokenError, SyntaxError):
        return None  # sympy tokenizes the same way and fails before evaluating anything
    for position, token in enumerate(tokens):
        text = token.string
        if token.type == tokenize.NAME:
            if text not in _MATH_NAMES and (text.startswith("_") or text in _sympy_namespace()):
                return f"it uses {text!r}, which is not one of the math functions allowed"
        elif token.type == tokenize.OP:
            if text not in _MATH_OPS:
                return f"it uses {text!r}, which is not an arithmetic operator"
            if text in ("**", "^") and not _small_exponent(tokens, position):
                return "its exponents are not small numbers"
        elif token.type != tokenize.NUMBER:
            return f"it contains {text!r}"
    return None


def _small_exponent(tokens: list[tokenize.TokenInfo], position: int) -> bool:
    """The power at ``position`` has a number of at most 3 characters as exponent, and that
    number is not itself raised to a power (``2**(9**9)`` and ``2**9**9`` are refused)."""
    index = position + 1
    while index < len(tokens) and tokens[index].string in ("(", "-", "+"):
        index += 1
    if index >= len(tokens) or tokens[index].type != tokenize.NUMBER:
        return False
    if len(tokens[index].string) > 3:
        return False
    index += 1
    while index < len(tokens) and tokens[index].string == ")":
        index += 1
    return index >= len(tokens) or tokens[index].string not in ("**", "^")


# --------------------------------------------------------------------------- task and env


@dataclass
class Question:
    """The world of one episode: a reasoning-gym item and the agent's answer to it."""

    dataset: str
    entry: dict[str, Any]
    reference: str
    answer: str | None = None
    score: float | None = None

    @property
    def question(self) -> str:
        """The question text, as reasoning-gym wrote it."""
        return str(self.entry["question"])


class ReasoningGymTask(Task[Question]):
    """Item ``index`` of a split of a reasoning-gym dataset at one difficulty."""

    def __init__(
        self, id: str, split: str, difficulty: str, seed: int, *, dataset: str, index: int
    ) -> None:
        super().__init__(id, split, difficulty, seed)
        self.dataset = dataset
        self.index = index

    def setup(self, rng: np.random.Generator) -> tuple[Question, str]:
        entry = generate(self.dataset, self.difficulty, self.split, self.index)
        reference = reference_answer(self.dataset, entry)
        world = Question(self.dataset, entry, reference)
        return world, world.question

    def validate(self, world: Question) -> Verdict:
        if world.score is None:
            return Verdict(0.0, False, {"score_answer": 0.0}, "not answered yet")
        passed = world.score >= 1.0
        return Verdict(
            float(passed),  # partial credit goes to blind answers too: see the class docstring
            passed,
            {"score_answer": world.score},
            f"reasoning-gym's {world.dataset} scorer gave {world.score:g} to the answer "
            f"{world.answer!r:.200}"
            + ("" if passed else f"; a full-score answer is {world.reference!r:.200}"),
        )

    def solve(self, world: Question) -> str | None:
        if world.answer is not None:
            return None
        return f"<answer>{world.reference}</answer>"

    def score(self, world: Question, answer: str) -> float:
        """reasoning-gym's own score of ``answer``; InvalidAction if the scorer cannot read it.

        A scorer that raises on an answer has judged the answer unreadable (a number where it
        wants a list...): that is the agent's mistake and comes back as feedback. A score
        outside ``[0, 1]`` is reasoning-gym's fault: VerifierError.
        """
        kind = EXECUTES_ANSWER.get(self.dataset)
        refusal = code_in_answer(kind, answer) if kind else None
        if refusal:
            raise InvalidAction(
                f"reasoning-gym's {self.dataset} scorer would run this answer as code, and "
                f"{refusal}; write the answer the way the question asks for it"
            )
        dataset = _dataset(self.dataset, self.difficulty, self.split)
        try:
            with _LOCK:
                raw = dataset.score_answer(answer, copy.deepcopy(world.entry))
        except Exception as error:
            raise InvalidAction(
                f"reasoning-gym's {self.dataset} scorer could not read the answer "
                f"({type(error).__name__}: {str(error)[:200]}); write it the way the question "
                f"asks for it"
            ) from None
        try:
            value = float(raw)
        except (TypeError, ValueError):
            value = math.nan
        if not 0.0 <= value <= 1.0 + 1e-9:
            raise VerifierError(
                f"reasoning-gym's {self.dataset} scorer returned {raw!r} for {answer!r:.80}; "
                f"scores must lie in [0, 1]"
            )
        return min(value, 1.0)


class _TaskSet(GeneratedTaskSet):
    """``split/difficulty/index`` -> item ``index`` of that split's reasoning-gym dataset."""

    def __init__(self, dataset: str) -> None:
        super().__init__(f"{FAMILY}/{dataset}", self._task, LEVELS[dataset], _sizes(dataset))
        self.dataset = dataset

    def _task(self, task_id: str, split: str, difficulty: str, seed: int) -> ReasoningGymTask:
        index = int(task_id.rsplit("/", 1)[1])
        return ReasoningGymTask(task_id, split, difficulty, seed, dataset=self.dataset, index=index)

    def seed_of(self, task_id: str) -> int:
        """The item's reasoning-gym seed: its split's seed plus its index."""
        split, _, index = task_id.split("/")
        return SPLIT_SEEDS[split] + int(index)


class ReasoningGymEnv(TaskEnv[Question]):
    """A question from reasoning-gym, answered in one reply and scored by reasoning-gym itself.

    One env class serves every dataset of reasoning-gym that passes agentgym's audit, one id
    each: ``reasoning-gym/<dataset>-v1`` (``agentgym list --family reasoning-gym``). The
    datasets left out, and why, are listed in ``docs/reasoning-gym.md``.

    **What the agent sees.** The question as reasoning-gym wrote it (it says what form the
    answer takes). The instructions add how to reply and which dataset it is.

    **What it may do.** Reply once, with the final answer between ``<answer>`` and
    ``</answer>`` (reasoning-gym's own convention). Reasoning may come before the tags; only
    the last ``<answer>...</answer>`` is scored. A reply without one, with an empty one, or one
    the scorer cannot read is an invalid action (feedback, score 0). Where a dataset's scorer
    runs the answer as code (Python ``eval`` or ``sympy.parse_expr``), an answer that would
    run code is refused the same way, before the scorer sees it.

    **Scoring.** The dataset's own ``score_answer`` judges the answer: ``passed`` when it gives
    1.0, and the verdict's score is 1.0 then, 0.0 otherwise; the component ``score_answer``
    holds the raw score. (A departure from reasoning-gym, whose partial credit goes to answers
    that never read the task: 0.01 or 0.05 to any well-formed answer, 0.98 to another item's
    Game of Life grid, 0.675 to another item's mini sudoku; the conformance checker's
    ``task_blind`` check found them.) The episode ends after one answer
    (``max_episode_steps=1``).

    **Tasks and levels.** Task ``split/difficulty/i`` is item ``i`` of
    ``create_dataset(name, seed=S, size=N, **config)`` with S = 0 (train, 100,000 tasks per
    level; 5,000 for acre, 20,000 for word_ladder), 1,000,000,000 (dev, 1,000) or
    2,000,000,000 (test, 1,000). ``easy``/``medium``/
    ``hard`` are levels 0/1/2 of the dataset's curriculum; datasets without a usable
    curriculum have one level, ``default`` (their default config). Generation failures raise
    :class:`~agentgym.errors.InfrastructureError`: the episode is errored, never scored 0.

    **Oracle.** The item's gold answer (or, where a dataset has none, the reference solution in
    its metadata) between answer tags: it scores 1.0.

    **Version history.** v1: the score is pass or fail (1 or 0): reasoning-gym's partial
    credit paid answers that never read the item (0.98 for another item's Game of Life grid);
    ``propositional_logic`` and ``puzzle24`` are no longer served (a blind answer passes
    them). v0: first release (reasoning-gym 0.1.25).
    """

    # It reads <answer> tags itself; ``dataset`` only chooses the task source (checker tiers).
    metadata = {
        **TaskEnv.metadata,
        "action_style": "raw",
        "answer_format": "<answer>{answer}</answer>",
        "task_kwargs": ("dataset",),
    }

    max_observation_length = _MAX_OBSERVATION
    max_action_length = _MAX_ACTION

    def __init__(self, *, dataset: str, **kwargs: Any) -> None:
        if not isinstance(dataset, str) or dataset not in DATASETS:
            raise UsageError(_unknown_dataset(dataset))
        if dataset not in REGISTERED:
            raise UsageError(
                f"the installed reasoning-gym ({importlib.metadata.version('reasoning_gym')}) has "
                f"no dataset {dataset!r}; agentgym's reasoning-gym ids were audited against "
                f"reasoning-gym {REASONING_GYM_VERSION}: pip install "
                f"'reasoning-gym=={REASONING_GYM_VERSION}'"
            )
        self.dataset = dataset
        self.category = REGISTERED[dataset][0].__module__.split(".")[1]
        self.tasks = _TaskSet(dataset)
        super().__init__(**kwargs)

    def act(self, world: Question, action: str) -> str:
        answer = extract_answer(action)
        task = self.task
        assert isinstance(task, ReasoningGymTask)
        world.score = task.score(world, answer)
        world.answer = answer
        return f"Your answer scored {world.score:g}."

    def observe(self, world: Question) -> str:
        if world.answer is None:
            return "Reply with your final answer between <answer> and </answer>."
        return f"Answered: {world.answer!r:.500}"

    def state_key(self, world: Question) -> str:
        digest = hashlib.sha256(world.question.encode()).hexdigest()[:16]
        answered = "" if world.answer is None else ":answered"
        return f"{FAMILY}/{world.dataset}:{digest}{answered}"

    def is_over(self, world: Question) -> bool:
        return world.answer is not None

    def action_syntax(self) -> str:
        return (
            "Reply with the final answer only, between <answer> and </answer> tags, written "
            "the way the question asks for it, e.g. <answer>42</answer>. You may reason before "
            "the tags; only the last <answer>...</answer> counts, and one reply ends the "
            f"episode. This is reasoning-gym's {self.dataset} task (category {self.category}), "
            "scored by reasoning-gym's own scorer."
        )


def _unknown_dataset(name: Any) -> str:
    if name in EXCLUDED:
        return f"reasoning-gym's dataset {name!r} is not served: {EXCLUDED[name]}"
    close = difflib.get_close_matches(str(name), DATASETS, n=3)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    return f"no reasoning-gym dataset {name!r} is served.{hint} Served: {', '.join(DATASETS)}"


# --------------------------------------------------------------------------- the audit


@dataclass
class LevelAudit:
    """What :func:`audit` found for one dataset at one difficulty."""

    dataset: str
    difficulty: str
    tasks: int = 0
    build_seconds: float = 0.0
    mean_seconds: float = 0.0
    slowest_seconds: float = 0.0
    printed: bool = False
    executes_answer: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No problem found and fast enough to serve."""
        return not self.problems


CANARY = 'setattr(__import__("builtins"), "AGENTGYM_CANARY", 1)'
"""An answer that, if a scorer ran it as code, would leave a mark the audit can see."""

MAX_SECONDS_PER_TASK = 0.2
MAX_BUILD_SECONDS = 5.0


def audit(name: str, difficulty: str, tasks_per_split: int = 10) -> LevelAudit:
    """Generate and score ``tasks_per_split`` items of every split of ``name`` at ``difficulty``.

    Checks what serving the dataset needs: items generate without error, identically from a
    fresh dataset object, within :data:`MAX_SECONDS_PER_TASK` on average; the oracle's answer
    scores 1.0 through the env's own reply handling and a wrong answer scores less; items
    survive ``deepcopy`` and ``pickle``; questions and answers fit the env's text limits; the
    scorer does not run an answer as code (or the dataset is in ``EXECUTES_ANSWER``).
    """
    result = LevelAudit(name, difficulty)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            for split in SPLIT_SEEDS:
                _audit_split(result, name, difficulty, split, tasks_per_split)
                if result.problems:
                    break
        except InfrastructureError as error:
            result.problems.append(str(error))
    result.printed = bool(printed.getvalue())
    if result.tasks:
        result.mean_seconds /= result.tasks
    if result.mean_seconds > MAX_SECONDS_PER_TASK:
        result.problems.append(f"{result.mean_seconds:.2f}s per task on average")
    if result.build_seconds > MAX_BUILD_SECONDS:
        result.problems.append(f"{result.build_seconds:.1f}s to build a split's dataset")
    return result


def fingerprints(name: str, difficulty: str, per_split: int) -> list[tuple[str, str]]:
    """``(question, gold answer)`` sha256 prefixes of ``per_split`` items of every split.

    What must not change from one process to the next: Python salts ``str`` hashes per
    process, so a generator that iterates over a set of strings can change its items.
    """
    found: list[tuple[str, str]] = []
    with contextlib.redirect_stdout(io.StringIO()):
        for split in SPLIT_SEEDS:
            size = _sizes(name)[split]
            for k in range(per_split):
                entry = generate(name, difficulty, split, k * size // per_split)
                texts = (entry["question"], reference_answer(name, entry))
                question, gold = (hashlib.sha256(t.encode()).hexdigest()[:16] for t in texts)
                found.append((question, gold))
    return found


def _audit_split(result: LevelAudit, name: str, difficulty: str, split: str, count: int) -> None:
    started = time.perf_counter()
    first = build(name, difficulty, split)
    result.build_seconds = max(result.build_seconds, time.perf_counter() - started)
    size = _sizes(name)[split]
    indices = [k * size // count for k in range(count)]
    entries = []
    for index in indices:
        started = time.perf_counter()
        try:
            entries.append(first[index])
        except Exception as error:
            result.problems.append(f"item {index} ({split}): {type(error).__name__}: {error}")
            return
        seconds = time.perf_counter() - started
        result.tasks += 1
        result.mean_seconds += seconds
        result.slowest_seconds = max(result.slowest_seconds, seconds)
        if seconds > 10 * MAX_SECONDS_PER_TASK:
            result.problems.append(f"item {index} ({split}) took {seconds:.1f}s")
            return
    second = build(name, difficulty, split)  # a fresh object, asked in the opposite order
    for index, entry in reversed(list(zip(indices, entries, strict=True))):
        again = second[index]
        if (again["question"], again.get("answer")) != (entry["question"], entry.get("answer")):
            result.problems.append(f"item {index} ({split}) differs between two generations")
            return
    for index, entry in zip(indices, entries, strict=True):
        problem = _audit_item(result, first, name, split, index, entry)
        if problem:
            result.problems.append(f"item {index} ({split}): {problem}")
            return


def _audit_item(
    result: LevelAudit, dataset: Any, name: str, split: str, index: int, entry: dict[str, Any]
) -> str | None:
    try:
        pickle.loads(pickle.dumps(entry))
        copy.deepcopy(entry)
    except Exception as error:
        return f"the item cannot be copied or pickled: {type(error).__name__}: {error}"
    if len(entry["question"]) > _MAX_OBSERVATION - 2_000:
        return f"the question is {len(entry['question'])} characters long"
    try:
        reference = reference_answer(name, entry)
    except InfrastructureError as error:
        return str(error)
    if len(reference) + 20 > _MAX_ACTION:
        return f"the gold answer is {len(reference)} characters long"
    difficulty = result.difficulty
    task = ReasoningGymTask(
        f"{split}/{difficulty}/{index}", split, difficulty, 0, dataset=name, index=index
    )
    world = Question(name, entry, reference)
    try:
        gold = task.score(world, extract_answer(f"<answer>{reference}</answer>"))
    except (InvalidAction, VerifierError) as error:
        return f"the gold answer is refused: {error}"
    if gold < 1.0:
        return f"the gold answer {reference!r:.80} scores {gold}"
    wrong = []
    for reply in ("wrong", "0", "[]", "no idea"):
        try:
            wrong.append(task.score(world, reply))
        except InvalidAction:
            wrong.append(0.0)
    if min(wrong) >= 1.0:
        return "wrong answers score 1.0"
    for reply in (CANARY, f"[{CANARY}]"):
        with contextlib.suppress(Exception):
            dataset.score_answer(reply, copy.deepcopy(entry))
        if hasattr(builtins, "AGENTGYM_CANARY"):
            delattr(builtins, "AGENTGYM_CANARY")
            result.executes_answer = True
        with contextlib.suppress(InvalidAction):
            task.score(world, reply)
        if hasattr(builtins, "AGENTGYM_CANARY"):
            delattr(builtins, "AGENTGYM_CANARY")
            return "its scorer ran an answer as code through the env; add it to EXECUTES_ANSWER"
    return None
