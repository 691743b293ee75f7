"""Test doubles for the checker's own tests: a tiny counting env and one broken variant per check.

``CounterEnv`` is correct: the agent types ``inc`` until the counter reaches the target (``dec``
and ``zero`` make a random walk unlikely to get there). Each
subclass breaks exactly one rule, and the checker test asserts the exact error it gets.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from typing import Any

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.errors import EnvCrashedError
from agentgym.task_env import InvalidAction, TaskEnv


class Counter:
    def __init__(self, target: int) -> None:
        self.value = 0
        self.target = target


class CounterTask(Task[Counter]):
    def setup(self, rng: np.random.Generator) -> tuple[Counter, str]:
        return Counter(6 + self.seed % 3), "Count up to the target."

    def validate(self, world: Counter) -> Verdict:
        done = world.value == world.target
        return Verdict(float(done), done, {"solved": float(done)}, f"at {world.value}")

    def solve(self, world: Counter) -> str | None:
        return "inc" if world.value < world.target else None


class CounterEnv(TaskEnv[Counter]):
    """Type ``inc`` until the counter reaches the target; ``dec`` goes back."""

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet(
            "counter", CounterTask, ("easy",), sizes={"train": 5, "dev": 5, "test": 5}
        )
        super().__init__(**kwargs)

    def act(self, world: Counter, action: str) -> str:
        if action.strip() == "inc":
            world.value += 1
        elif action.strip() == "dec" and world.value > 0:
            world.value -= 1
        elif action.strip() == "zero":
            world.value = 0
        else:
            raise InvalidAction("type 'inc', 'dec' or 'zero'")
        return f"now {world.value}"

    def observe(self, world: Counter) -> str:
        return f"counter {world.value} of {world.target}"

    def state_key(self, world: Counter) -> str:
        return f"{world.value}/{world.target}"

    def admissible_actions(self, world: Counter) -> list[str]:
        return ["inc", "dec", "zero"]


class WrongOracleTask(CounterTask):
    def solve(self, world: Counter) -> str | None:
        return "dec"


class WrongOracleEnv(CounterEnv):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tasks.make_task = WrongOracleTask


class AlwaysPassTask(CounterTask):
    def validate(self, world: Counter) -> Verdict:
        return Verdict(1.0, True, details="everything passes")


class AlwaysPassEnv(CounterEnv):
    """A verifier that cannot tell success from failure."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tasks.make_task = AlwaysPassTask

    def is_over(self, world: Counter) -> bool:
        return False


class HiddenTargetEnv(CounterEnv):
    """A correct CounterEnv whose target is hidden (not in observations or state keys) and which
    lists no admissible actions: only a replay that plays the game (the oracle's actions)
    finds out where the target is. Its subclasses draw the target from somewhere other than
    the seed; the step that reaches the first replay's target is the first to differ."""

    def start(self, task: Task[Counter]) -> tuple[Counter, str]:
        world, goal = super().start(task)
        world.target = 5 + self.hidden_draw() % 20
        return world, goal

    def hidden_draw(self) -> int:
        return 2

    def observe(self, world: Counter) -> str:
        return f"counter {world.value}"

    def state_key(self, world: Counter) -> str:
        return str(world.value)

    def admissible_actions(self, world: Counter) -> list[str] | None:
        return None


class GlobalRandomEnv(HiddenTargetEnv):
    """Draws its hidden target from Python's global ``random``."""

    def hidden_draw(self) -> int:
        return random.randrange(1000)


class NumpyGlobalRandomEnv(HiddenTargetEnv):
    """Draws its hidden target from NumPy's global generator (``np.random.randint``)."""

    def hidden_draw(self) -> int:
        return int(np.random.randint(1000))


class ClockEnv(HiddenTargetEnv):
    """Reads its hidden target from the clock: the minute of the hour."""

    def hidden_draw(self) -> int:
        return int(time.time()) // 60


_EPISODES = itertools.count()


class EpisodeCounterEnv(HiddenTargetEnv):
    """Takes its hidden target from a module-level count of the episodes this process started."""

    def hidden_draw(self) -> int:
        return next(_EPISODES)


class CrashOnBadActionEnv(CounterEnv):
    def act(self, world: Counter, action: str) -> str:
        if action.strip() not in ("inc", "dec", "zero"):
            raise ValueError(f"cannot parse {action!r}")
        return super().act(world, action)


class AcceptsAnythingEnv(CounterEnv):
    """Silently ignores what it cannot parse instead of giving feedback."""

    def act(self, world: Counter, action: str) -> str:
        try:
            return super().act(world, action)
        except InvalidAction:
            return "nothing happens"


class NoStateKeyEnv(CounterEnv):
    def state_key(self, world: Counter) -> str:
        return ""


class NoInstructionsEnv(CounterEnv):
    def instructions(self, goal: str) -> str:
        return ""


class ShallowSnapshotEnv(CounterEnv):
    """get_state() keeps a reference to the live world, so later steps change the snapshot."""

    def get_state(self) -> Any:
        snapshot = super().get_state()
        snapshot.world = self._world
        return snapshot

    def set_state(self, state: Any) -> None:
        super().set_state(state)
        self._world = state.world


class CloseTwiceFailsEnv(CounterEnv):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._closed = False

    def close(self) -> None:
        if self._closed:
            raise RuntimeError("already closed")
        self._closed = True
        super().close()


class ThreadLeakEnv(CounterEnv):
    """Starts a helper thread per reset and never stops it."""

    def reset(self, **kwargs: Any) -> Any:
        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()
        self._stops = [*getattr(self, "_stops", []), stop]
        _LEAKED.append(stop)
        return super().reset(**kwargs)


_LEAKED: list[threading.Event] = []


class LazyWorkerEnv(CounterEnv):
    """Starts one shared helper thread, once, on reset number ``start_at``: a lazily filled
    pool (bounded growth), which the leak check must not call a leak."""

    resets = 0
    start_at = 10

    def reset(self, **kwargs: Any) -> Any:
        LazyWorkerEnv.resets += 1
        if LazyWorkerEnv.resets == LazyWorkerEnv.start_at:
            stop = threading.Event()
            threading.Thread(target=stop.wait, daemon=True).start()
            _LEAKED.append(stop)
        return super().reset(**kwargs)


def release_leaked_threads() -> None:
    """Stop the threads ThreadLeakEnv left behind (test cleanup)."""
    for stop in _LEAKED:
        stop.set()
    _LEAKED.clear()


class CrashingResetEnv(CounterEnv):
    """Its reset raises an infrastructure error (an engine that died) on the resets whose
    numbers are in ``crash_on``: the checker must call that infrastructure, not a breach."""

    resets = 0
    crash_on: frozenset[int] = frozenset()

    def reset(self, **kwargs: Any) -> Any:
        CrashingResetEnv.resets += 1
        if CrashingResetEnv.resets in CrashingResetEnv.crash_on:
            raise EnvCrashedError(f"simulated engine crash on reset {CrashingResetEnv.resets}")
        return super().reset(**kwargs)


class Submission(Counter):
    def __init__(self, target: int) -> None:
        super().__init__(target)
        self.submitted = False


class SubmitCounterTask(CounterTask):
    """Count up to the target, then ``submit``: only the submitted count is judged."""

    def setup(self, rng: np.random.Generator) -> tuple[Counter, str]:
        return Submission(6 + self.seed % 3), "Count up to the target, then submit."

    def validate(self, world: Counter) -> Verdict:
        assert isinstance(world, Submission)
        done = world.submitted and world.value == world.target
        return Verdict(float(done), done, {"solved": float(done)}, f"at {world.value}")

    def solve(self, world: Counter) -> str | None:
        assert isinstance(world, Submission)
        if world.submitted:
            return None
        return "inc" if world.value < world.target else "submit"


class SubmitCounterEnv(CounterEnv):
    """A correct counter that ends on ``submit`` (listed nowhere, as a final answer is not):
    no policy blind to the target passes it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tasks.make_task = self.task_class

    task_class: type[CounterTask] = SubmitCounterTask

    def act(self, world: Counter, action: str) -> str:
        if action.strip() == "submit" and isinstance(world, Submission):
            world.submitted = True
            return f"submitted {world.value}"
        return super().act(world, action)

    def is_over(self, world: Counter) -> bool:
        return isinstance(world, Submission) and world.submitted


class SubmitPassesTask(SubmitCounterTask):
    def validate(self, world: Counter) -> Verdict:
        assert isinstance(world, Submission)
        return Verdict(float(world.submitted), world.submitted, details="submitted")


class SubmitPassesEnv(SubmitCounterEnv):
    """Its verifier judges that the agent submitted, not what: ``submit`` at once passes (as
    a SWE grader that a submission of the untouched repository passes). A random agent never
    submits (the action is not listed), so only a task-blind policy finds it."""

    task_class = SubmitPassesTask


class Quiz:
    def __init__(self, answer: int) -> None:
        self.answer = answer
        self.reply: str | None = None


class QuizTask(Task[Quiz]):
    """Answer with the number the goal names; one reply ends the episode. The oracle's reply
    names its quiz, as a worked solution would, so two quizzes with one answer have two
    different solutions."""

    def setup(self, rng: np.random.Generator) -> tuple[Quiz, str]:
        answer = self.answer()
        return Quiz(answer), f"Reply 'answer {answer}'."

    def answer(self) -> int:
        return 100 + self.seed * 7919 % 900

    def validate(self, world: Quiz) -> Verdict:
        done = world.reply is not None and self.judge(world.reply, world.answer)
        return Verdict(float(done), done, details=f"replied {world.reply!r}")

    def judge(self, reply: str, answer: int) -> bool:
        return reply.split()[-1] == str(answer)

    def solve(self, world: Quiz) -> str | None:
        return None if world.reply is not None else f"quiz {self.seed}: answer {world.answer}"


class QuizEnv(TaskEnv[Quiz]):
    """One reply, judged by its last word: a correct quiz (a reply naming several answers
    is judged by the last one, a guess)."""

    quiz_task: type[QuizTask] = QuizTask

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet(
            "quiz", self.quiz_task, ("easy",), sizes={"train": 50, "dev": 50, "test": 50}
        )
        super().__init__(**kwargs)

    def act(self, world: Quiz, action: str) -> str:
        if "answer" not in action:
            raise InvalidAction("reply 'answer N'")
        world.reply = action.strip()
        return "noted"

    def observe(self, world: Quiz) -> str:
        return "replied" if world.reply else "waiting for a reply"

    def state_key(self, world: Quiz) -> str:
        return f"{world.answer}:{world.reply}"

    def is_over(self, world: Quiz) -> bool:
        return world.reply is not None


class SubstringQuizTask(QuizTask):
    def judge(self, reply: str, answer: int) -> bool:
        return str(answer) in reply.split()


class SubstringQuizEnv(QuizEnv):
    """Its verifier finds the answer anywhere in the reply: a reply naming every option
    passes (as the simulated users' required outputs matched a message listing every
    status)."""

    quiz_task = SubstringQuizTask


class CoinQuizTask(QuizTask):
    def answer(self) -> int:
        return 10 + self.seed % 2


class CoinQuizEnv(QuizEnv):
    """A correct two-option quiz (the answer is 10 or 11): a guess passes half the time, and
    the env declares so."""

    metadata = {**QuizEnv.metadata, "chance_score": 0.5}
    quiz_task = CoinQuizTask
