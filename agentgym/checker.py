"""The conformance checker: does an env keep the agentgym contract?

:func:`check_env` runs Gymnasium's own ``check_env`` (warnings count as failures) and then
agentgym's checks, each a small named function that raises its own
:class:`~agentgym.errors.ConformanceError` subclass with a message naming the env, the task,
the seed and what went wrong:

==========================  =================================================================
check                       what it proves
==========================  =================================================================
``gymnasium``               Gymnasium's API: spaces, seeding, step/reset types, render, close
``info_contract``           ``info`` has ``instructions`` at reset, ``state_key`` and
                            ``verdict`` every step; no step is both ``terminated`` and
                            ``truncated`` (in every episode a check plays)
``oracle``                  on sampled tasks of every split and difficulty the oracle reaches
                            the maximum score: each task is solvable and its verifier says so
``random_agent``            a random agent (valid actions where listed) scores below the oracle
                            (an env whose ``metadata`` says ``"oracle": False`` fails
                            ``oracle``: every task must be proven solvable)
(open-ended games)          an env with no maximum to reach declares ``metadata["open_ended"]``:
                            ``oracle`` then plays its reference player against random actions
                            on the same tasks and holds the reference to a margin above random
                            with a 95% interval above 0 (:func:`check_reference`)
``determinism``             same seed, same task, same actions: identical episode, replaying
                            the oracle's actions and random valid ones with global randomness
                            and the clock drawn apart (:func:`check_determinism`)
``task_blind``              policies that see nothing of the task (end at once, repeat one
                            action, replay another task's solution, name every option) score
                            no more than the env's chance (:func:`check_task_blind`)
``bad_actions``             malformed actions are feedback (``invalid_action``), not
                            exceptions; wrong argument *types* raise a ``TypeError``
``snapshot``                ``get_state``/``set_state`` restore the episode (when declared)
``close``                   ``close()`` may be called twice, before or after ``reset``
``leaks``                   no growth of threads, file descriptors or child processes over
                            many make/reset/step/close cycles
==========================  =================================================================

**Tiers.** Most checks depend on an id's tasks; four prove the env *class's* own code, the
same whatever tasks it serves (:data:`CLASS_CHECKS`): Gymnasium's API, the handling of
malformed actions (the class's parser), ``close``, and the long leak cycle. An id is checked in
one of two tiers (:data:`TIERS`): ``class`` runs everything; ``task`` runs every check that
depends on the tasks (info contract, oracle at the maximum, random agent below it,
determinism, task-blind policies at most at chance, snapshots, and a short leak cycle of
:data:`TASK_LEAK_CYCLES`) and leaves out the class-level ones. :func:`plan_tiers` gives the
``class`` tier to the first id of every env class and of every distinct set of constructor
arguments that changes behaviour (an env names the arguments that only choose its task source,
such as MiniWoB++'s ``task`` or reasoning-gym's ``dataset``, in ``metadata["task_kwargs"]``),
and ``task`` to the rest. The report says which tier an id got; ``agentgym check --full``
gives every id the ``class`` tier.

The test suite runs it over the whole registry, so an env is checked the moment it is
registered. ``agentgym check [ID ...]`` runs it from the command line. Multi-agent envs have
their own checker, :mod:`agentgym.multiagent_checker`, built from the same pieces.
"""

from __future__ import annotations

import contextlib
import gc
import io
import itertools
import json
import os
import pickle
import random
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from gymnasium.utils.env_checker import data_equivalence

from agentgym.checking import drawn_tasks, made, more_tasks
from agentgym.core import Verdict
from agentgym.errors import (
    BadActionError,
    CloseError,
    DeterminismError,
    GymnasiumCheckError,
    InfoContractError,
    InfrastructureError,
    LeakError,
    MissingExtraError,
    NullAgentError,
    OracleError,
    SnapshotError,
    TaskBlindError,
    UsageError,
)
from agentgym.registry import EnvSpec, make_limited
from agentgym.sandbox.process import descendants
from agentgym.spaces import Text

__all__ = ["CHECKS", "CLASS_CHECKS", "TIERS", "CheckReport", "check_env", "plan_tiers"]

EnvFactory = Callable[[], gymnasium.Env[Any, Any]]

CHECKS = (
    "gymnasium",
    "info_contract",
    "oracle",
    "random_agent",
    "determinism",
    "task_blind",
    "bad_actions",
    "snapshot",
    "close",
    "leaks",
)

CLASS_CHECKS = ("gymnasium", "bad_actions", "close")
"""Checks of the env class's own code, left out of the ``task`` tier (with the long leak cycle)."""

TIERS = ("class", "task")
"""``class``: every check; ``task``: the checks that depend on the id's tasks (module docstring)."""

INFRA_RETRIES = 1
"""How many times a check is run again after an infrastructure error (see CheckReport.run)."""

TASK_LEAK_CYCLES = 3
"""The short leak cycle of the ``task`` tier (on one seed, after one warm-up cycle): a leak in
the class's code is measured over the long cycle of its ``class``-tier sibling; this one
catches a resource that every episode of these tasks leaves behind."""

LEAK_SETTLE = 5.0
"""Seconds the leak check waits for resources that ``close()`` released to be gone."""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

WORDLESS_ACTIONS = ("", "   \n\t ", "\x00\x01\x02\x7f")
"""Actions with no word in them: invalid in every env."""
SAYABLE_ACTIONS = ("🙂🙃🙂🙃", "((((]]]]", "\\u0000;DROP TABLE")
"""Malformed actions that are still text a person could be sent: an env whose actions are
free text (it declares ``metadata["free_text_actions"]``: a message to a simulated person)
may take them as said, and must still answer them without an exception."""
MALFORMED_ACTIONS = (*WORDLESS_ACTIONS, *SAYABLE_ACTIONS)
"""Actions no env could take for a valid move."""


@dataclass
class CheckReport:
    """What :func:`check_env` found; every listed check passed."""

    env_id: str
    tier: str = "class"
    passed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    oracle_tasks: list[str] = field(default_factory=list)
    oracle_mean_score: float = 0.0
    random_mean_score: float = 0.0
    reference_interval: tuple[float, float] | None = None
    """An open-ended env's 95% interval of the reference's mean lead over random actions."""
    blind_scores: dict[str, float] = field(default_factory=dict)
    """Each task-blind policy's mean score, a fraction of the maximum (:data:`BLIND_POLICIES`)."""
    seconds: dict[str, float] = field(default_factory=dict)
    infrastructure: list[str] = field(default_factory=list)
    """Infrastructure errors met (and overcome by running the check again)."""

    def summary(self) -> str:
        """One line for the CLI."""
        skipped = f", skipped {sorted(self.skipped)}" if self.skipped else ""
        scores = f"oracle {self.oracle_mean_score:.2f}"
        if "random_agent" in self.passed:
            scores += f" vs random {self.random_mean_score:.2f}"
        if self.reference_interval is not None:
            low, high = self.reference_interval
            scores = (
                f"reference {self.oracle_mean_score:.2f} vs random {self.random_mean_score:.2f}"
                f" (lead 95% CI [{low:.2f}, {high:.2f}])"
            )
        if "task_blind" in self.passed and self.blind_scores:
            scores += f", task-blind {max(self.blind_scores.values()):.2f}"
        tier = "" if self.tier == "class" else f" [{self.tier} tier]"
        return (
            f"{self.env_id}{tier}: {len(self.passed)} checks passed{skipped}; {scores} over "
            f"{len(self.oracle_tasks)} tasks ({sum(self.seconds.values()):.1f}s)"
        )

    @classmethod
    def begin(
        cls, env_id: str, skip: Sequence[str], checks: Sequence[str], tier: str = "class"
    ) -> CheckReport:
        """An empty report, with ``skip`` and ``tier`` validated (the tier's skips added)."""
        unknown = sorted(set(skip) - set(checks))
        if unknown:
            raise UsageError(f"unknown check name(s) {unknown}; checks are {list(checks)}")
        if tier not in TIERS:
            raise UsageError(f"unknown tier {tier!r}; tiers are {list(TIERS)}")
        skipped = dict.fromkeys(skip, "skipped by the caller")
        if tier == "task":
            for name in CLASS_CHECKS:
                skipped.setdefault(name, "a class-level check: run on the class tier's id")
        return cls(env_id, tier=tier, skipped=skipped)

    def run(self, name: str, check: Callable[[], None]) -> None:
        """Run one named check unless it is skipped, timing it; a failure raises through.

        An infrastructure error (a browser that died, a sandbox that would not start) is not
        the env breaking the contract: the check is run again, :data:`INFRA_RETRIES` times at
        most, as the evaluator replays an episode; each one is listed in ``infrastructure``.
        If it persists it raises, typed as what it is, never as a ConformanceError.
        """
        if name in self.skipped:
            return
        started = time.perf_counter()
        for attempt in range(INFRA_RETRIES + 1):
            try:
                check()
                break
            except InfrastructureError as error:
                self.infrastructure.append(f"{name}: {type(error).__name__}: {error}")
                if attempt == INFRA_RETRIES:
                    raise
        self.seconds[name] = time.perf_counter() - started
        self.passed.append(name)


def check_env(
    env: str | gymnasium.Env[Any, Any] | EnvFactory,
    *,
    seed: int = 0,
    tasks_per_split: int = 1,
    leak_cycles: int = 200,
    skip: Sequence[str] = (),
    tier: str = "class",
) -> CheckReport:
    """Check an env against the contract; raise a ConformanceError subclass on the first failure.

    Args:
        env: an env id, an env instance made by :func:`agentgym.make` (fresh instances are
            made from its spec), or a zero-argument factory returning an env.
        seed: the seed every check derives its randomness from.
        tasks_per_split: tasks sampled per split and difficulty for the oracle and random agent.
        leak_cycles: make/reset/step/close cycles of the leak check (the contract says 200).
        skip: names from :data:`CHECKS` to leave out (reported as skipped).
        tier: ``"class"`` (every check) or ``"task"`` (no :data:`CLASS_CHECKS`, and at most
            :data:`TASK_LEAK_CYCLES` leak cycles); see the module docstring.
    """
    factory, env_id = _factory(env)
    report = CheckReport.begin(env_id, skip, CHECKS, tier)
    if tier == "task":
        leak_cycles = min(leak_cycles, TASK_LEAK_CYCLES)
    run = report.run
    run("gymnasium", lambda: check_gymnasium(factory, env_id))
    run("info_contract", lambda: check_info_contract(factory, env_id, seed))
    tasks = _sample_tasks(factory, seed, tasks_per_split)
    solutions: dict[str, list[Any]] = {}  # the oracle's actions per task, for task_blind

    def oracle() -> None:
        report.oracle_tasks = list(tasks)
        report.oracle_mean_score = check_oracle(factory, env_id, tasks, seed, solutions)

    def random_agent() -> None:
        report.random_mean_score = check_random_agent(factory, env_id, tasks, seed)

    def reference(declared: OpenEnded) -> None:
        found = check_reference(factory, env_id, tasks, seed, declared, solutions)
        report.oracle_tasks = list(found.tasks)
        report.oracle_mean_score, report.random_mean_score = found.reference, found.random
        report.reference_interval = (found.low, found.high)

    def task_blind() -> None:
        ceiling = None if open_ended is None else report.oracle_mean_score - open_ended.margin
        report.blind_scores = check_task_blind(factory, env_id, tasks, seed, solutions, ceiling)

    with made(factory) as probe:
        declares_snapshot = bool(probe.metadata.get("supports_state_snapshot"))
        has_oracle = probe.metadata.get("oracle", True) is not False
        open_ended = declared_open_ended(probe, env_id)
    if has_oracle and open_ended is not None:
        declared = open_ended
        run("oracle", lambda: reference(declared))
        report.skipped.setdefault("random_agent", "open-ended: played in the oracle check")
    elif has_oracle:
        run("oracle", oracle)
        run("random_agent", random_agent)
    else:
        run("oracle", lambda: _no_oracle(env_id))
        report.skipped.setdefault("random_agent", "no oracle to compare a random agent with")
        report.skipped.setdefault("task_blind", "no oracle to draw task-blind policies from")
    run("determinism", lambda: check_determinism(factory, env_id, tasks[0], seed, has_oracle))
    if has_oracle:  # after determinism: it replays the oracle's actions of other episodes
        run("task_blind", task_blind)
    run("bad_actions", lambda: check_bad_actions(factory, env_id, seed))
    if declares_snapshot:
        run("snapshot", lambda: check_snapshot(factory, env_id, seed))
    elif "snapshot" not in report.skipped:
        report.skipped["snapshot"] = "the env does not declare supports_state_snapshot"
    run("close", lambda: check_close(factory, env_id))
    seeds = 1 if tier == "task" else 3
    run("leaks", lambda: check_leaks(factory, env_id, leak_cycles, seed, seeds=seeds))
    return report


def plan_tiers(specs: Sequence[EnvSpec], full: bool = False) -> list[tuple[EnvSpec, str]]:
    """The tier each spec is checked in: ``class`` for the first of every behaviour class.

    Two specs are of one behaviour class when they share the entry point and every constructor
    argument but those the class names in ``metadata["task_kwargs"]`` (arguments that only
    choose the task source). ``full`` gives every spec the ``class`` tier. Multi-agent specs
    always get it (their checker has no tiers).
    """
    seen: set[tuple[str, str]] = set()
    planned = []
    for spec in specs:
        key = behaviour_class(spec)
        tier = "task" if key in seen and not full and spec.kind == "env" else "class"
        seen.add(key)
        planned.append((spec, tier))
    return planned


def behaviour_class(spec: EnvSpec) -> tuple[str, str]:
    """``(entry point, the constructor arguments that change behaviour)`` of a spec."""
    try:
        task_kwargs = set(getattr(spec.load(), "metadata", {}).get("task_kwargs", ()))
    except (MissingExtraError, ImportError):  # its own check reports that, with the extra
        task_kwargs = set()
    behaviour = {k: v for k, v in spec.kwargs.items() if k not in task_kwargs}
    return spec.entry_point, repr(sorted(behaviour.items()))


# --------------------------------------------------------------------------- the checks


def check_gymnasium(factory: EnvFactory, env_id: str) -> None:
    """Gymnasium's ``check_env`` on the unwrapped env; its warnings are failures too."""
    with made(factory) as env, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # render_mode="human" prints
                gymnasium_check_env(env.unwrapped)
        except InfrastructureError:  # no breach: CheckReport.run retries it
            raise
        except Exception as error:
            raise GymnasiumCheckError(
                f"{env_id}: Gymnasium's check_env failed: {type(error).__name__}: {error}"
            ) from error
    messages = sorted(
        {_ANSI.sub("", str(w.message)) for w in caught if "gymnasium" in (w.filename or "")}
    )
    if messages:
        raise GymnasiumCheckError(
            f"{env_id}: Gymnasium's check_env warned: " + " | ".join(messages)
        )


def check_info_contract(factory: EnvFactory, env_id: str, seed: int) -> None:
    """``instructions`` at reset; ``state_key`` and ``verdict`` at reset and every step; a step
    not both terminated and truncated (checked in every episode the checks play, too)."""
    with made(factory) as env:
        _, info = env.reset(seed=seed)
        instructions = info.get("instructions")
        if not isinstance(instructions, str) or not instructions.strip():
            raise InfoContractError(
                f"{env_id}: reset() info must carry 'instructions' (a non-empty str: the goal "
                f"and the action syntax), got {instructions!r:.80}"
            )
        _check_step_info(env_id, "reset()", info)
        step = env.step(_some_action(env, info, np.random.default_rng(seed)))
        _check_step_info(env_id, "step()", step[4])
        _check_one_ending(env_id, step, info.get("task_id"), seed)
        info = step[4]
        if not isinstance(info.get("invalid_action"), bool):
            raise InfoContractError(
                f"{env_id}: step() info must carry 'invalid_action' (bool), got "
                f"{info.get('invalid_action')!r}"
            )


def _no_oracle(env_id: str) -> None:
    raise OracleError(
        f"{env_id}: the env declares no oracle (metadata['oracle'] is False). Every task needs "
        f"one: it proves the task solvable and its verifier able to say so. Write its "
        f"oracle_action(), or do not register the env until it has one"
    )


def check_oracle(
    factory: EnvFactory,
    env_id: str,
    tasks: Sequence[str],
    seed: int,
    solutions: dict[str, list[Any]] | None = None,
) -> float:
    """The oracle reaches the maximum score on every sampled task; returns its mean score.

    The actions it played are put in ``solutions`` (by task id) for :func:`check_task_blind`.
    """
    scores = []
    with made(factory) as env:
        for task_id in tasks:
            episode = _play(env, task_id, seed, policy=_oracle)
            if solutions is not None:
                solutions[task_id] = episode.actions
            verdict = episode.verdict
            if not (verdict.passed and verdict.score >= verdict.max_score - 1e-9):
                raise OracleError(
                    f"{env_id}: the oracle did not reach the maximum score on task {task_id!r} "
                    f"(seed {seed}): score {verdict.score} of {verdict.max_score}, passed="
                    f"{verdict.passed}, after {episode.steps} steps ({episode.ending}); "
                    f"verdict: {verdict.details!r}. The task or its verifier is wrong. Last "
                    f"observation: {episode.last_observation[-300:]!r}"
                )
            scores.append(verdict.score)
    return float(np.mean(scores))


def check_random_agent(factory: EnvFactory, env_id: str, tasks: Sequence[str], seed: int) -> float:
    """A random agent scores below the maximum on average; returns its mean score."""
    rng = np.random.default_rng(seed)
    scores, maxima = [], []
    with made(factory) as env:
        for task_id in tasks:
            episode = _play(
                env, task_id, seed, policy=lambda e, info: _some_action(e, info, rng), limit=200
            )
            scores.append(episode.verdict.score)
            maxima.append(episode.verdict.max_score)
    mean, best = float(np.mean(scores)), float(np.mean(maxima))
    if mean >= best - 1e-9:
        raise NullAgentError(
            f"{env_id}: a random agent scored {mean:.3f} on average over {len(tasks)} tasks, as "
            f"high as the oracle ({best:.3f}): the verifier cannot tell success from failure, "
            f"or the tasks are trivial"
        )
    return mean


@dataclass(frozen=True)
class OpenEnded:
    """An open-ended env's declaration, ``metadata["open_ended"]``: a game with no maximum to
    reach (Crafter, NetHack) proves its verifier with a reference player instead of an oracle
    at the maximum. The env's ``oracle_action`` plays the reference."""

    reference: str
    """What the reference player is, for messages (``"a scripted bot: ..."``)."""
    margin: float
    """How far, as a fraction of the maximum, the reference's mean must lie above random's."""
    episodes: int = 10
    """Tasks each player plays (the same tasks: the comparison is paired)."""
    steps: int = 300
    """Steps each episode plays at most (both players: the same horizon)."""


REFERENCE_Z = 1.96
"""The normal quantile of a two-sided 95% interval (:func:`check_reference`)."""


def declared_open_ended(env: gymnasium.Env[Any, Any], env_id: str) -> OpenEnded | None:
    """The env's ``metadata["open_ended"]`` read and checked, ``None`` when not declared."""
    declared = env.unwrapped.metadata.get("open_ended")
    if declared is None:
        return None
    fields = set(OpenEnded.__dataclass_fields__)
    try:
        if not isinstance(declared, Mapping) or not set(declared) <= fields:
            raise TypeError(f"keys must be among {sorted(fields)}")
        found = OpenEnded(**declared)
        counts = (found.episodes, found.steps)
        if not (isinstance(found.reference, str) and found.reference.strip()):
            raise TypeError("'reference' must say what the reference player is")
        if isinstance(found.margin, bool) or not isinstance(found.margin, int | float):
            raise TypeError("'margin' must be a number")
        if not 0 < found.margin <= 1:
            raise ValueError("'margin' must be in (0, 1]")
        if any(isinstance(n, bool) or not isinstance(n, int) for n in counts) or min(counts) < 2:
            raise ValueError("'episodes' and 'steps' must be ints of at least 2")
    except (TypeError, ValueError) as error:
        raise OracleError(
            f"{env_id}: metadata['open_ended'] is malformed ({error}): it is a dict with "
            f"'reference' (str), 'margin' (a fraction of the maximum score, in (0, 1]) and "
            f"optionally 'episodes' and 'steps' (ints), got {declared!r:.200}"
        ) from None
    return found


@dataclass(frozen=True)
class _ReferenceResult:
    tasks: list[str]
    reference: float
    random: float
    low: float
    high: float


def check_reference(
    factory: EnvFactory,
    env_id: str,
    tasks: Sequence[str],
    seed: int,
    declared: OpenEnded,
    solutions: dict[str, list[Any]] | None = None,
) -> _ReferenceResult:
    """An open-ended env's reference player beats random actions clearly.

    The reference (the env's ``oracle_action``) and a random agent (valid actions where
    listed) play the same ``declared.episodes`` tasks (``tasks``, then more of every split),
    ``declared.steps`` steps each at most. Over the paired differences of their scores (as
    fractions of the maximum), the mean must be at least ``declared.margin`` and its 95%
    interval (normal approximation: the mean plus or minus 1.96 standard errors) must exclude
    0. The reference's actions are put in ``solutions`` for :func:`check_task_blind`.
    """
    rng = np.random.default_rng(seed)
    pairs: list[tuple[float, float]] = []
    with made(factory) as env:
        chosen = more_tasks(env, tasks, seed, declared.episodes)[: declared.episodes]
        for task_id in chosen:
            ours = _play(env, task_id, seed, policy=_oracle, limit=declared.steps)
            drawn = _play(
                env, task_id, seed, lambda e, i: _some_action(e, i, rng), limit=declared.steps
            )
            if solutions is not None:
                solutions[task_id] = ours.actions
            pairs.append((_fraction(ours.verdict), _fraction(drawn.verdict)))
    reference, random_ = (float(np.mean(column)) for column in zip(*pairs, strict=True))
    lead = np.array([a - b for a, b in pairs])
    error = (
        REFERENCE_Z * float(lead.std(ddof=1)) / float(np.sqrt(len(lead))) if len(lead) > 1 else 0
    )
    low, high = reference - random_ - error, reference - random_ + error
    if reference - random_ < declared.margin - 1e-9 or low <= 0:
        raise OracleError(
            f"{env_id}: the reference player ({declared.reference}) did not beat random "
            f"actions clearly over {len(pairs)} tasks of {declared.steps} steps (seed {seed}): "
            f"reference {reference:.3f}, random {random_:.3f} of the maximum on average, a "
            f"lead of {reference - random_:.3f} with 95% interval [{low:.3f}, {high:.3f}]; "
            f"the env declares a margin of {declared.margin:g} and the interval must exclude "
            f"0. Make the reference player stronger, or check that the verifier rewards "
            f"progress (metadata['open_ended'])"
        )
    return _ReferenceResult(chosen, reference, random_, low, high)


def _fraction(verdict: Verdict) -> float:
    return verdict.score / verdict.max_score if verdict.max_score > 0 else 0.0


BLIND_POLICIES = ("end_at_once", "repeat_one_action", "replay_another_task", "say_every_option")
"""The task-blind policies of :func:`check_task_blind`, built from the oracle's actions on the
other sampled tasks, never from the task they play."""

BLIND_TASKS = 2
"""Tasks each task-blind policy plays where the env's chance is 0 (one pass fails the check)."""

BLIND_TASKS_AT_CHANCE = 16
"""Tasks each task-blind policy plays where the env declares a chance above 0: enough for a
policy that always passes to stand out from a guess (at chance 0.5 the bound is 0.875)."""

CHANCE_SIGMAS = 3.0
"""How many standard errors above the chance a policy's mean may lie (:func:`chance_bound`)."""


def check_task_blind(
    factory: EnvFactory,
    env_id: str,
    tasks: Sequence[str],
    seed: int,
    solutions: dict[str, list[Any]] | None = None,
    ceiling: float | None = None,
) -> dict[str, float]:
    """Policies that see nothing of the task score no more than chance; returns each
    policy's mean score (a fraction of the maximum).

    A reward that a policy can earn without reading the task is the first thing RL finds. Each
    policy of :data:`BLIND_POLICIES` is built from the oracle's actions on *other* sampled tasks
    (the donor: the next sampled task), so it works on every family without knowing its
    syntax, and plays :data:`BLIND_TASKS` tasks:

    * ``end_at_once``: the donor's last action (its ``submit``, its final answer, its stop),
      played first, with nothing done;
    * ``repeat_one_action``: the donor's first action;
    * ``replay_another_task``: the donor's whole solution;
    * ``say_every_option``: one action naming the final answers of every sampled task, joined
      by new lines (tool calls: each argument's values joined). A blind agent that names every
      option names the right one too, so this task's own is among them, never first or last: a
      verifier may read one answer by its place (the last ``\\boxed{}``), but must not take
      any answer listed.

    Each plays as many steps as the task's own oracle did, at most (a longer walk searches a
    small world, as easy Tower of Hanoi's 27 states, rather than test the verifier), its last
    action repeated until the episode ends: a conversation ends when the simulated user ends
    it. An episode whose actions are the task's own solution (two tasks with the same answer)
    is no evidence and is not counted. ``solutions`` holds the oracle's actions per task from
    :func:`check_oracle`; the oracle is played for a task missing from it. The bound is
    :func:`chance_bound` of the env's ``metadata["chance_score"]``, or ``ceiling`` where the
    caller gives one: an open-ended game, where every policy scores something, holds a blind
    policy below its reference's mean less the declared margin (:func:`check_reference`).
    """
    solutions = {} if solutions is None else solutions
    with made(factory) as env:
        chance = declared_chance(env, env_id)
        donors = _donor_tasks(env, tasks, seed)
        count = BLIND_TASKS if chance == 0 else BLIND_TASKS_AT_CHANCE
        targets = more_tasks(env, donors, seed, count)[:count]

        def solution(task_id: str) -> list[Any]:
            if task_id not in solutions:
                solutions[task_id] = _play(env, task_id, seed, policy=_oracle).actions
            return solutions[task_id]

        finals = [solution(task)[-1] for task in donors if solution(task)]
        played: dict[str, list[_BlindEpisode]] = {name: [] for name in BLIND_POLICIES}
        for index, task_id in enumerate(targets):
            own = solution(task_id)
            donor = _donor(donors, index, task_id)
            if donor is None:  # the env has one task: nothing is blind to it
                continue
            tried: list[list[Any]] = []
            for name, actions in _blind_actions(solution(donor), finals, own).items():
                if actions in tried:  # as another policy played it on this task
                    continue
                tried.append(actions)
                episode = _play(env, task_id, seed, _scripted(actions), limit=len(actions))
                if episode.actions != own:  # the task's own solution proves nothing
                    played[name].append(_BlindEpisode(name, task_id, episode))
    return _judge_blind(env_id, seed, chance, played, ceiling)


def declared_chance(env: gymnasium.Env[Any, Any], env_id: str) -> float:
    """The env's ``metadata["chance_score"]``: the mean score, as a fraction of the maximum,
    that an answer chosen without reading the task can expect (0.0 when not declared)."""
    chance = env.unwrapped.metadata.get("chance_score", 0.0)
    if isinstance(chance, bool) or not isinstance(chance, int | float) or not 0 <= chance < 1:
        raise TaskBlindError(
            f"{env_id}: metadata['chance_score'] must be a number in [0, 1) (the mean score a "
            f"guess can expect, as a fraction of the maximum), got {chance!r:.40}"
        )
    return float(chance)


def chance_bound(chance: float, episodes: int) -> float:
    """The highest mean score a task-blind policy may reach over ``episodes`` tasks: the chance
    plus :data:`CHANCE_SIGMAS` standard errors of a guess that passes with that probability
    (0 at chance 0: no task-blind pass at all)."""
    return chance + CHANCE_SIGMAS * float(np.sqrt(chance * (1 - chance) / max(episodes, 1)))


@dataclass
class _BlindEpisode:
    policy: str
    task_id: str
    episode: _Episode

    @property
    def fraction(self) -> float:
        return _fraction(self.episode.verdict)


def _blind_actions(donor: list[Any], finals: list[Any], own: list[Any]) -> dict[str, list[Any]]:
    """The actions of each task-blind policy (see :func:`check_task_blind`); a policy with no
    action to play is left out."""
    every = _every_option(finals, own[-1]) if own else None
    actions = {
        "end_at_once": donor[-1:],
        "repeat_one_action": donor[:1],
        "replay_another_task": list(donor),
        "say_every_option": [] if every is None else [every],
    }
    steps = max(len(own), 1)
    return {name: _insisting(listed, steps) for name, listed in actions.items() if listed}


def _insisting(actions: list[Any], steps: int) -> list[Any]:
    """``actions`` cut or lengthened to ``steps``, the last one repeated."""
    return [*actions[:steps], *actions[-1:] * (steps - len(actions))]


def _every_option(finals: Sequence[Any], own: Any) -> Any:
    """One action naming every answer of ``finals``, ``own`` among them but never first or
    last; ``None`` where the answers cannot be joined into one action."""
    others: list[Any] = []
    for final in finals:
        if final != own and final not in others:
            others.append(final)
    if not others:
        return own
    half = max(1, len(others) // 2)
    listed = [*others[:half], own, *(others[half:] or others[:1])]
    calls = [call for call in map(_as_call, listed) if call is not None]
    if len(calls) == len(listed) and len({repr(call["name"]) for call in calls}) == 1:
        arguments = _joined_arguments([call["arguments"] for call in calls])
        merged = {"name": calls[0]["name"], "arguments": arguments}  # every value in one call
        return merged if isinstance(own, Mapping) else json.dumps(merged)
    if all(isinstance(action, str) for action in listed):
        return "\n".join(listed)
    return None


def _as_call(action: Any) -> dict[str, Any] | None:
    """A tool call (native, or written as JSON text) as ``{"name", "arguments"}``, else None."""
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except (ValueError, RecursionError):
            return None
    if not isinstance(action, Mapping) or "name" not in action:
        return None
    arguments = action.get("arguments", {})
    return (
        {"name": action["name"], "arguments": arguments} if isinstance(arguments, Mapping) else None
    )


def _joined_arguments(arguments: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each argument's values joined by new lines (one value where the calls agree)."""
    joined = {}
    for key in dict.fromkeys(k for a in arguments for k in a):
        values = [a[key] for a in arguments if key in a]
        same = all(value == values[0] for value in values)
        joined[key] = values[0] if same else "\n".join(str(value) for value in values)
    return joined


def _judge_blind(
    env_id: str,
    seed: int,
    chance: float,
    played: dict[str, list[_BlindEpisode]],
    ceiling: float | None = None,
) -> dict[str, float]:
    """Each policy's mean score; raise for the first above :func:`chance_bound` (or above
    ``ceiling``, an open-ended game's)."""
    means = {}
    for name, episodes in played.items():
        if not episodes:
            continue
        mean = float(np.mean([e.fraction for e in episodes]))
        means[name] = mean
        bound = chance_bound(chance, len(episodes)) if ceiling is None else ceiling
        if mean <= bound + 1e-9:
            continue
        best = max(episodes, key=lambda e: e.fraction)
        episode, verdict = best.episode, best.episode.verdict
        limit = "chance 0: no pass at all" if chance == 0 else f"{bound:.3f} at chance {chance:g}"
        if ceiling is not None:
            limit = f"{ceiling:.3f}: the open-ended env's reference mean less its margin"
        raise TaskBlindError(
            f"{env_id}: the task-blind policy {name} scored {mean:.3f} of the maximum on "
            f"average over {len(episodes)} tasks (the bound is {limit}); on task "
            f"{best.task_id!r} (seed {seed}) it scored {verdict.score:g} of "
            f"{verdict.max_score:g}, passed={verdict.passed}, playing "
            f"{episode.actions!r:.200} ({episode.ending}); verdict: {verdict.details!r:.200}. "
            f"A reward earned without reading the task is the first thing RL finds: the "
            f"verifier must judge this task's own answer (an env where a guess passes this "
            f"often declares metadata['chance_score'])"
        )
    return means


def _donor(donors: Sequence[str], index: int, task_id: str) -> str | None:
    """The donor of the ``index``-th task played: the next sampled task that is another."""
    others = [t for t in (*donors[index + 1 :], *donors[: index + 1]) if t != task_id]
    return others[0] if others else None


def _donor_tasks(env: gymnasium.Env[Any, Any], tasks: Sequence[str], seed: int) -> list[str]:
    """The sampled tasks whose solutions the task-blind policies are built from: at least two,
    where the env has two, so that every task has a donor other than itself."""
    return more_tasks(env, tasks, seed, 2)


def _scripted(actions: Sequence[Any]) -> Callable[[gymnasium.Env[Any, Any], dict[str, Any]], Any]:
    """A policy that plays ``actions`` in turn whatever it is shown (``None`` after them), but
    stops rather than say again an action the env just refused: it would be refused again,
    and a refusal can cost seconds (a browser waiting for an element that is not there)."""
    queue = iter(actions)
    said: list[Any] = []

    def policy(_env: gymnasium.Env[Any, Any], info: dict[str, Any]) -> Any:
        action = next(queue, None)
        if said and info.get("invalid_action") is True and action == said[-1]:
            return None
        said.append(action)
        return action

    return policy


def _oracle(env: gymnasium.Env[Any, Any], _info: dict[str, Any]) -> Any:
    return _ours(env).oracle_action()


def check_determinism(
    factory: EnvFactory, env_id: str, task_id: str, seed: int, oracle: bool = True
) -> None:
    """Two fresh envs, the same seed, task and actions: identical episodes, step by step.

    The first env plays real trajectories (:func:`_record`): the oracle's actions where the env
    has an oracle, random valid actions where it lists them, then a reset by the seed alone (the
    seed must pick the task too), :data:`DETERMINISM_STEPS` steps each at most. The second env
    replays the same actions, and each reset and step must return what it did the first time:
    observation, reward, terminated, truncated and every ``info`` entry (``state_key`` and
    ``verdict`` first).

    The replays are made to diverge for an env whose episode does not follow from its seed: they
    run with the ``random`` and ``np.random`` globals seeded differently, the second with the
    clock (``time.time``) moved on by :data:`CLOCK_SHIFT`, and a module-level counter has moved
    on by itself. Not caught in one process: set order that depends on ``PYTHONHASHSEED`` (it
    is fixed per process), and ``id()`` only by chance (freed memory is reused).
    """
    with _globals_drawn_apart(0), made(factory) as env:
        recorded = _record(env, task_id, seed, oracle)
    with _globals_drawn_apart(1), made(factory) as env:
        for segment in recorded:
            _replay(env, segment, env_id, task_id, seed)


DETERMINISM_STEPS = 30
"""Steps each trajectory of the determinism check plays at most (the oracle's, the random one)."""

GLOBAL_SEEDS = (1, 2)
"""The seeds of the ``random`` and ``np.random`` globals in the determinism check's two replays."""

CLOCK_SHIFT = 90_061.0
"""Seconds the second replay's ``time.time`` is moved on: a day, an hour, a minute and a second,
so a state read from the clock at any of those resolutions differs."""

_LIKELY_CAUSE = (
    "An episode must depend only on the seed, the task and the actions: draw randomness from "
    "the env's seeded generator (self.np_random), not from the random or np.random globals, "
    "the clock, or process state (id(), a module-level counter, the order of a set of str). "
    "The two replays ran with the random and np.random globals seeded differently and the "
    "clock a day apart"
)


@dataclass
class _Segment:
    """One episode of the determinism check's first replay: how it was reset, the actions
    played, and what the reset and each step returned."""

    name: str
    task_id: str | None
    actions: list[Any]
    results: list[tuple[Any, ...]]


def _record(env: gymnasium.Env[Any, Any], task_id: str, seed: int, oracle: bool) -> list[_Segment]:
    """The first replay: the oracle's trajectory, random valid actions where the env lists them
    (random text where it has no oracle either), then a reset by the seed alone."""
    segments: list[_Segment] = []
    if oracle:
        segments.append(_play_segment(env, task_id, seed, "the oracle's actions", None))
    lists_actions = not segments or "admissible_actions" in segments[0].results[0][1]
    if lists_actions:  # random text would never parse: the oracle's trajectory plays the game
        rng = np.random.default_rng(seed)
        name = "random valid actions" if oracle else "random actions"
        segments.append(_play_segment(env, task_id, seed, name, rng))
    segments.append(_Segment("a reset by the seed alone", None, [], [env.reset(seed=seed)]))
    return segments


def _play_segment(
    env: gymnasium.Env[Any, Any],
    task_id: str,
    seed: int,
    name: str,
    rng: np.random.Generator | None,
) -> _Segment:
    """:data:`DETERMINISM_STEPS` steps at most of ``task_id``: the oracle's actions, or random
    ones drawn with ``rng`` (valid ones where the env lists them)."""
    observation, info = env.reset(seed=seed, options={"task_id": task_id})
    segment = _Segment(name, task_id, [], [(observation, info)])
    while len(segment.actions) < DETERMINISM_STEPS:
        action = _ours(env).oracle_action() if rng is None else _some_action(env, info, rng)
        if action is None:  # the oracle has nothing left to do
            break
        step = env.step(action)
        segment.actions.append(action)
        segment.results.append(step)
        info = step[4]
        if step[2] or step[3]:
            break
    return segment


def _replay(
    env: gymnasium.Env[Any, Any], segment: _Segment, env_id: str, task_id: str, seed: int
) -> None:
    """Play ``segment``'s actions again; raise at the first result that differs."""
    options = None if segment.task_id is None else {"task_id": segment.task_id}
    results: Iterator[tuple[Any, ...]] = itertools.chain(
        [env.reset(seed=seed, options=options)], (env.step(a) for a in segment.actions)
    )
    for index, (first, again) in enumerate(zip(segment.results, results, strict=True)):
        difference = _first_difference(first, again)
        if difference is None:
            continue
        name, x, y = difference
        where = "reset" if index == 0 else f"step {index} ({segment.actions[index - 1]!r:.60})"
        episode = (
            f"the same seed {seed} and task {task_id!r}"
            if segment.task_id is not None
            else f"the same seed {seed} (no task id: the seed picks the task)"
        )
        raise DeterminismError(
            f"{env_id}: {episode} gave different episodes playing {segment.name}, first at "
            f"{where}: {name} differs: {x!r:.200} vs {y!r:.200}. {_LIKELY_CAUSE}"
        )


_FIELDS = {
    2: ("observation", "info"),
    5: ("observation", "reward", "terminated", "truncated", "info"),
}


def _first_difference(
    first: tuple[Any, ...], again: tuple[Any, ...]
) -> tuple[str, Any, Any] | None:
    """``(what, first value, second value)`` of the first field that differs, or ``None``;
    ``info`` is compared entry by entry, ``state_key`` and ``verdict`` first."""
    for name, x, y in zip(_FIELDS[len(first)], first, again, strict=True):
        if name != "info":
            if not data_equivalence(x, y, exact=True):
                return name, x, y
            continue
        keys = sorted(x.keys() | y.keys(), key=lambda k: (k not in _INFO_FIRST, str(k)))
        missing = object()
        for key in keys:
            a, b = x.get(key, missing), y.get(key, missing)
            if a is missing or b is missing or not data_equivalence(a, b, exact=True):
                return f"info[{key!r}]", _shown(a, missing), _shown(b, missing)
    return None


_INFO_FIRST = ("state_key", "verdict")


def _shown(value: Any, missing: object) -> Any:
    return "(missing)" if value is missing else value


@contextlib.contextmanager
def _globals_drawn_apart(replay: int) -> Iterator[None]:
    """The determinism check's replay number ``replay`` with global randomness and the clock
    of its own: ``random`` and ``np.random`` seeded with ``GLOBAL_SEEDS[replay]``, ``time.time``
    moved on by ``replay * CLOCK_SHIFT``; everything is put back afterwards."""
    saved_random, saved_numpy = random.getstate(), np.random.get_state()
    clock, clock_ns = time.time, time.time_ns
    shift = replay * CLOCK_SHIFT
    random.seed(GLOBAL_SEEDS[replay])
    np.random.seed(GLOBAL_SEEDS[replay])  # the legacy global RandomState, as np.random.rand draws
    if shift:
        time.time = lambda: clock() + shift
        time.time_ns = lambda: clock_ns() + int(shift * 1e9)
    try:
        yield
    finally:
        time.time, time.time_ns = clock, clock_ns
        random.setstate(saved_random)
        np.random.set_state(saved_numpy)


def check_bad_actions(factory: EnvFactory, env_id: str, seed: int) -> None:
    """Malformed actions come back as feedback; wrong argument types raise TypeError."""
    with made(factory) as env:
        env.reset(seed=seed)
        space = env.action_space
        malformed: list[Any] = list(MALFORMED_ACTIONS)
        if isinstance(space, Text):
            malformed.append("x" * (space.max_length + 1))
        free_text = bool(env.unwrapped.metadata.get("free_text_actions"))
        for action in malformed:
            try:
                observation, _, terminated, truncated, info = env.step(action)
            except InfrastructureError:  # no breach: CheckReport.run retries it
                raise
            except Exception as error:
                raise BadActionError(
                    f"{env_id}: step({action!r:.40}) raised {type(error).__name__}: {error}. A "
                    f"malformed action is the agent's mistake: answer it with feedback in the "
                    f"observation and info['invalid_action'] = True"
                ) from error
            if not env.observation_space.contains(observation):
                raise BadActionError(
                    f"{env_id}: after step({action!r:.40}) the observation is not in the "
                    f"observation space: {observation!r:.80}"
                )
            may_be_said = free_text and action in SAYABLE_ACTIONS
            if info.get("invalid_action") is not True and not may_be_said:
                raise BadActionError(
                    f"{env_id}: step({action!r:.40}) was accepted as a valid action; expected "
                    f"info['invalid_action'] = True and feedback saying what is wrong"
                )
            if terminated or truncated:
                env.reset(seed=seed)
        for call, description in (
            (lambda: env.step(12345), "step(12345)"),
            (lambda: env.step(None), "step(None)"),
            # Wrong types on purpose: the contract says they raise TypeError.
            (lambda: env.reset(seed="zero"), "reset(seed='zero')"),  # type: ignore[arg-type]
            (lambda: env.reset(options=["task"]), "reset(options=['task'])"),  # type: ignore[arg-type]
        ):
            env.reset(seed=seed)
            try:
                call()
            except TypeError:
                continue
            except InfrastructureError:  # no breach: CheckReport.run retries it
                raise
            except Exception as error:
                raise BadActionError(
                    f"{env_id}: {description} raised {type(error).__name__}: {error}; a wrong "
                    f"argument type should raise a TypeError (agentgym.UsageError) naming it"
                ) from error
            raise BadActionError(
                f"{env_id}: {description} was accepted; a wrong argument type should raise a "
                f"TypeError (agentgym.UsageError) naming the expected type"
            )


def check_snapshot(factory: EnvFactory, env_id: str, seed: int) -> None:
    """``set_state(get_state())`` replays the same future; snapshots pickle."""
    rng = np.random.default_rng(seed)
    with made(factory) as env:
        base = _ours(env)
        _, info = env.reset(seed=seed)
        for _ in range(3):
            _, _, terminated, truncated, info = env.step(_some_action(env, info, rng))
            if terminated or truncated:
                _, info = env.reset(seed=seed)
        snapshot = base.get_state()
        try:
            pickle.dumps(snapshot)
        except InfrastructureError:  # no breach: CheckReport.run retries it
            raise
        except Exception as error:
            raise SnapshotError(
                f"{env_id}: get_state() returned an unpicklable snapshot: {error}"
            ) from error
        actions, first = [], []
        for _ in range(5):
            action = _some_action(env, info, rng)
            actions.append(action)
            step = base.step(action)
            first.append(step)
            info = step[4]
            if step[2] or step[3]:
                break
        base.set_state(snapshot)
        for index, action in enumerate(actions):
            again = base.step(action)
            if not data_equivalence(first[index], again, exact=True):
                raise SnapshotError(
                    f"{env_id}: after set_state(get_state()) step {index + 1} with action "
                    f"{action!r:.40} gave a different result: {first[index]!r:.200} vs "
                    f"{again!r:.200}"
                )


def check_close(factory: EnvFactory, env_id: str) -> None:
    """``close()`` twice, with and without a reset, never raises."""
    for reset_first in (False, True):
        env = factory()
        if reset_first:
            env.reset(seed=0)
        for attempt in ("first", "second"):
            try:
                env.close()
            except InfrastructureError:  # no breach: CheckReport.run retries it
                raise
            except Exception as error:
                raise CloseError(
                    f"{env_id}: the {attempt} close() "
                    f"{'after reset' if reset_first else 'before any reset'} raised "
                    f"{type(error).__name__}: {error}; close() must be idempotent"
                ) from error


def check_leaks(
    factory: EnvFactory,
    env_id: str,
    cycles: int,
    seed: int,
    touch: Callable[[Any, int], object] | None = None,
    seeds: int = 3,
) -> None:
    """No growth of threads, open file descriptors or child processes over many cycles.

    ``touch(env, index)`` plays a little of each episode (default: reset and one step). The
    cycles rotate over ``seeds`` seeds, the ones the warm-up plays: a leak shows up on a task
    seen before as well as on a new one, and families that generate their tasks (TextWorld:
    seconds per game) are measured, not their generators. (The ``task`` tier's short cycle
    plays one seed: its class's long cycle covered the rotation.)
    """

    def one_step(env: Any, index: int) -> None:
        _, info = env.reset(seed=seed + index % seeds)
        env.step(_some_action(env, info, np.random.default_rng(index)))

    def cycle(index: int) -> None:
        env = factory()
        (touch or one_step)(env, index)
        env.close()

    for index in range(seeds):  # warm caches and lazy imports before measuring
        cycle(index)

    def play() -> None:
        for index in range(cycles):
            cycle(index)

    before = _resources()
    after = _settled_growth(before, play)
    if after is not None:
        # Growth once is not yet a leak: a pool that fills lazily (a worker thread started when
        # two calls overlapped once) grows by a bounded amount. A leak keeps growing, so the
        # same number of cycles again must grow it further.
        again = _settled_growth(after, play)
        if again is not None:
            # Name what kept growing in the confirming round, not what grew in the first.
            name = next(k for k, v in after.items() if again[k] > v)
            count = before[name]
            threads = ", ".join(sorted(t.name for t in threading.enumerate()))
            raise LeakError(
                f"{env_id}: {name} grew from {count} to {after[name]} over {cycles} "
                f"make/reset/step/close cycles and to {again[name]} over {cycles} more; "
                f"close() must release every resource an episode takes (threads now: {threads})"
            )


def _settled_growth(before: dict[str, int], play: Callable[[], object]) -> dict[str, int] | None:
    """Run ``play``; the resources then if any grew past ``before`` and stayed grown.

    Processes and threads that close() ended may take a moment to exit (a browser's
    renderers): growth counts only if it is still there after :data:`LEAK_SETTLE` seconds.
    """
    play()
    after = _resources()
    deadline = time.monotonic() + LEAK_SETTLE
    while any(after[k] > v for k, v in before.items()) and time.monotonic() < deadline:
        time.sleep(0.1)
        after = _resources()
    return after if any(after[k] > v for k, v in before.items()) else None


# --------------------------------------------------------------------------- helpers


@dataclass
class _Episode:
    verdict: Verdict
    steps: int
    ending: str
    last_observation: str
    transcript: list[tuple[Any, ...]]
    actions: list[Any] = field(default_factory=list)
    """The actions played, in turn."""


def _play(
    env: gymnasium.Env[Any, Any],
    task_id: str,
    seed: int,
    policy: Callable[[gymnasium.Env[Any, Any], dict[str, Any]], Any],
    limit: int = 10_000,
    record: bool = False,
) -> _Episode:
    observation, info = env.reset(seed=seed, options={"task_id": task_id})
    transcript: list[tuple[Any, ...]] = [(observation, info)] if record else []
    steps, ending, actions = 0, "step limit of the check", []
    while steps < limit:
        action = policy(env, info)
        if action is None:
            ending = "the policy had no action left"
            break
        actions.append(action)
        step = env.step(action)
        observation, _, terminated, truncated, info = step
        steps += 1
        if record:
            transcript.append(step)
        _check_one_ending(env_id_of(env), step, task_id, seed)
        if terminated or truncated:
            ending = (
                "terminated"
                if terminated
                else f"truncated ({info.get('truncation_reason', 'step limit')})"
            )
            break
    verdict = info.get("verdict")
    if not isinstance(verdict, Verdict):
        raise InfoContractError(f"{env_id_of(env)}: info['verdict'] is missing or not a Verdict")
    return _Episode(verdict, steps, ending, str(observation), transcript, actions)


def _some_action(
    env: gymnasium.Env[Any, Any], info: dict[str, Any], rng: np.random.Generator
) -> Any:
    """A random admissible action where the env lists them, else a sample of the action space."""
    actions = info.get("admissible_actions")
    if actions:
        return actions[int(rng.integers(len(actions)))]
    env.action_space.seed(int(rng.integers(2**31)))
    return env.action_space.sample()


def _sample_tasks(factory: EnvFactory, seed: int, per_split: int) -> list[str]:
    """``per_split`` task ids of every split and difficulty, drawn with ``seed``."""
    with made(factory) as env:
        return drawn_tasks(_ours(env).tasks, seed, per_split)


def _check_step_info(env_id: str, where: str, info: dict[str, Any]) -> None:
    key = info.get("state_key")
    if not isinstance(key, str) or not key:
        raise InfoContractError(
            f"{env_id}: {where} info must carry 'state_key' (a non-empty str naming the "
            f"canonical state), got {key!r:.80}"
        )
    if not isinstance(info.get("verdict"), Verdict):
        raise InfoContractError(
            f"{env_id}: {where} info must carry 'verdict' (an agentgym.Verdict), got "
            f"{info.get('verdict')!r:.80}"
        )


def _check_one_ending(env_id: str, step: tuple[Any, ...], task_id: Any, seed: int) -> None:
    """A step ends an episode for one reason (``docs/contract.md``, "Ending an episode"):
    ``terminated`` when the env ended it, ``truncated`` when a limit cut it short first."""
    if step[2] and step[3]:
        raise InfoContractError(
            f"{env_id}: a step returned terminated=True and truncated=True together (task "
            f"{task_id!r}, seed {seed}); an episode ends for one reason: terminated when the "
            f"env ended it (an answer, right or wrong), truncated only when a limit cut it "
            f"short first. Gymnasium's TimeLimit says both on the last step it allows: make "
            f"the env with agentgym.make, whose TimeLimit does not"
        )


def _resources() -> dict[str, int]:
    gc.collect()
    return {
        "threads": threading.active_count(),
        "open file descriptors": len(os.listdir("/proc/self/fd")),
        "child processes": len(descendants(os.getpid())),  # grandchildren count too
    }


def _ours(env: gymnasium.Env[Any, Any]) -> Any:
    """The agentgym env under the wrappers, used through the contract's own methods
    (``oracle_action``, ``tasks``, ``get_state``) that Gymnasium's type does not know."""
    return env.unwrapped


def env_id_of(env: gymnasium.Env[Any, Any]) -> str:
    """The registered id of an env, or its class name."""
    spec = env.spec
    return spec.id if spec is not None else type(env.unwrapped).__name__


def _factory(env: Any) -> tuple[EnvFactory, str]:
    if isinstance(env, str):
        from agentgym.registry import make

        make(env).close()  # unknown ids and missing extras fail here, with their own errors
        return (lambda: make(env)), env
    if isinstance(env, gymnasium.Env):
        if env.spec is None:
            raise UsageError(
                f"check_env() needs fresh instances of {type(env.unwrapped).__name__}; pass an "
                f"env made by agentgym.make(), an id, or a zero-argument factory"
            )
        spec = env.spec
        return (lambda: make_limited(spec)), spec.id  # agentgym's TimeLimit, as make() gives
    if callable(env):
        with made(env) as probe:
            return env, env_id_of(probe)
    raise UsageError(f"check_env() takes an env id, an env, or a factory, got {type(env).__name__}")
