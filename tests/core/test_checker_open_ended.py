"""Open-ended envs in the checker: a reference player held to a margin above random, with a
95% interval above 0, in place of the oracle at the maximum (docs/contract.md, "Open-ended
games").

The test game: each task has a secret letter, named in its goal; every step that says it
earns a point, ten points are the maximum, and nothing ends the episode. Random letters earn
a point one step in 26; a reference that reads the goal earns one every step; one that always
says ``a`` does no better than random.
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec

from agentgym.checker import OpenEnded, check_env, check_reference, declared_open_ended
from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.errors import OracleError, TaskBlindError
from agentgym.task_env import InvalidAction, TaskEnv

LETTERS = string.ascii_lowercase


class Tally:
    def __init__(self, letter: str) -> None:
        self.letter, self.points = letter, 0


class LetterTask(Task[Tally]):
    def setup(self, rng: np.random.Generator) -> tuple[Tally, str]:
        letter = LETTERS[self.seed % 26]
        return Tally(letter), f"Say the letter {letter}, as often as you can."

    def validate(self, world: Tally) -> Verdict:
        return Verdict(min(world.points, 10) / 10, False, details=f"{world.points} points")

    def solve(self, world: Tally) -> str | None:
        return world.letter


class LetterEnv(TaskEnv[Tally]):
    metadata: dict[str, Any] = {
        **TaskEnv.metadata,
        "open_ended": {"reference": "reads the letter", "margin": 0.3, "episodes": 8, "steps": 12},
    }

    def __init__(self, **options: Any) -> None:
        self.tasks = GeneratedTaskSet("letters", LetterTask, ("standard",))
        super().__init__(**options)

    def act(self, world: Tally, action: str) -> str:
        word = action.strip().lower()
        if word not in LETTERS or not word:
            raise InvalidAction(f"{action[:20]!r} is not a letter a-z")
        world.points += word == world.letter
        return ""

    def observe(self, world: Tally) -> str:
        return f"{world.points} points"

    def state_key(self, world: Tally) -> str:
        return f"{world.letter}{world.points}"

    def admissible_actions(self, world: Tally) -> list[str]:
        return list(LETTERS)


class SaysATask(LetterTask):
    def solve(self, world: Tally) -> str | None:
        return "a"


class SaysAEnv(LetterEnv):
    """Its reference ignores the goal: it scores where the letter is ``a``, as random does."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.tasks = GeneratedTaskSet("letters", SaysATask, ("standard",))


class FirstHalfTask(LetterTask):
    def setup(self, rng: np.random.Generator) -> tuple[Tally, str]:
        letter = LETTERS[self.seed % 13]
        return Tally(letter), f"Say the letter {letter}, as often as you can."


class FirstHalfEnv(LetterEnv):
    """Its verifier gives a point for any letter of a-m, not only the task's own."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.tasks = GeneratedTaskSet("letters", FirstHalfTask, ("standard",))

    def act(self, world: Tally, action: str) -> str:
        word = action.strip().lower()
        if word not in LETTERS or not word:
            raise InvalidAction(f"{action[:20]!r} is not a letter a-z")
        world.points += word < "n"
        return ""


@pytest.fixture
def made() -> Iterator[Callable[[type], Callable[[], gymnasium.Env[Any, Any]]]]:
    """Factories of the test envs: specs made here, in no registry (agentgym's or
    Gymnasium's), so nothing outlives the test."""

    def factory(cls: type) -> Callable[[], gymnasium.Env[Any, Any]]:
        spec = EnvSpec(id=f"test/{cls.__name__}-v0", entry_point=cls, max_episode_steps=50)
        return lambda: gymnasium.make(spec)

    yield factory


def test_a_reference_that_beats_random_passes_every_check(made: Any) -> None:
    report = check_env(made(LetterEnv), leak_cycles=10)
    assert report.skipped == {"random_agent": "open-ended: played in the oracle check"}
    assert "oracle" in report.passed and "task_blind" in report.passed
    assert report.oracle_mean_score == 1.0 and report.random_mean_score < 0.2
    assert report.reference_interval is not None
    low, high = report.reference_interval
    assert 0.3 < low <= high
    assert len(report.oracle_tasks) == 8
    assert "reference 1.00 vs random" in report.summary()


def test_a_reference_no_better_than_random_fails_with_its_figures(made: Any) -> None:
    with pytest.raises(OracleError) as caught:
        check_env(made(SaysAEnv), leak_cycles=10)
    message = str(caught.value)
    assert message.startswith(
        "test/SaysAEnv-v0: the reference player (reads the letter) did not beat random "
        "actions clearly over 8 tasks of 12 steps (seed 0): reference "
    )
    assert "the env declares a margin of 0.3 and the interval must exclude 0" in message


def test_the_margin_is_held_even_where_the_interval_excludes_0(made: Any) -> None:
    """A lead whose interval lies above 0 but below the margin fails."""
    declared = OpenEnded("reads the letter", margin=0.99, episodes=8, steps=12)
    tasks = [f"test/standard/{i}" for i in range(2)]
    with pytest.raises(OracleError, match=r"a lead of 0\.9\d\d with 95% interval \[0\.\d+, "):
        check_reference(made(LetterEnv), "test/LetterEnv-v0", tasks, 0, declared)
    lower = dataclasses.replace(declared, margin=0.5)
    found = check_reference(made(LetterEnv), "test/LetterEnv-v0", tasks, 0, lower)
    assert found.low > 0 and found.reference - found.random < 0.99


def test_a_blind_policy_is_held_below_the_reference_less_the_margin(made: Any) -> None:
    """Where any letter of a-m earns a point, another task's letter earns as much as the
    task's own: a task-blind error, though the reference beats random (1.0 against 0.5)."""
    with pytest.raises(TaskBlindError, match="the open-ended env's reference mean less its"):
        check_env(made(FirstHalfEnv), leak_cycles=10, skip=["leaks"])


@pytest.mark.parametrize(
    "declared",
    [
        {"margin": 0.1},
        {"reference": "bot", "margin": 0},
        {"reference": "bot", "margin": "0.1"},
        {"reference": "bot", "margin": 0.1, "episodes": 1},
        {"reference": "bot", "margin": 0.1, "horizon": 5},
        "a bot",
    ],
)
def test_a_malformed_declaration_is_refused_in_one_line(declared: Any) -> None:
    env = LetterEnv()
    env.metadata = {**env.metadata, "open_ended": declared}
    with pytest.raises(OracleError, match=r"^test: metadata\['open_ended'\] is malformed \("):
        declared_open_ended(env, "test")
