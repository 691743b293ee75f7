"""Math: word problems scored by the math verifier, alone or with a Python tool.

Two envs share the tasks and the scoring:

* ``reasoning/Math-v1`` (:class:`MathEnv`) — single turn: the reply is the solution, its final
  answer (``\\boxed{}``, else "the answer is") is compared with the gold one by
  :func:`agentgym.verifiers.verify_math` (``1/2``, ``0.5`` and ``\\frac{1}{2}`` agree; so do
  ``25\\%`` and ``0.25``, ``3.2 \\times 10^{4}`` and ``32000``);
* ``reasoning/MathTool-v1`` (:class:`MathToolEnv`) — multi-turn: a reply with a fenced
  ```` ```python ```` block runs it in a sandbox (no network, time and memory limits) and shows
  its output; a reply with a ``\\boxed{}`` answer ends the episode and is scored.

Tasks come from the project's own generator (:mod:`agentgym.envs.reasoning.math_problems`:
templates and seeds, answers computed exactly; ``easy``/``medium``/``hard``; 100,000 train,
1,000 dev and 1,000 test tasks per level), or from a dataset file in its published format
with ``dataset=`` and ``path=`` (all rows become the ``test`` split):

==========  ===========================================================================
``gsm8k``   JSONL rows ``{"question", "answer"}``; the gold is after ``####`` in ``answer``
``math``    JSONL rows ``{"problem", "solution", "level", "type"}``; the gold is the last
            ``\\boxed{}`` of ``solution``; ``level`` ("Level 1".."Level 5") is the difficulty
``aime``    JSONL rows ``{"problem" or "question", "answer"}`` (an integer 0..999)
==========  ===========================================================================

(With HuggingFace ``datasets`` installed, ``load_dataset(...).to_json(path)`` writes these.)

**Scoring.** 1 when the final answer equals the gold one, else 0; components ``extracted``
(an answer was found) and ``correct``. An answer too large to evaluate (``9^{9^{9}}``)
scores 0 at once, with the reason in the verdict's details: never an errored episode. The
final answer must be marked (``\boxed{}``, or
"the answer is"): a reply without one is an invalid action, which ends the single-turn
episode with 0. **Oracle.** Generated tasks: the worked solution with
the boxed answer; with the tool, first the Python that computes it, then the answer read from
its output. Dataset tasks: the gold answer, boxed. **Version history.** v1: percentages and
scientific notation compared as numbers; an answer too large to evaluate scores 0 with the
reason (it ran the verifier past its deadline: errored). v0: first release.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym.core import DataTaskSet, GeneratedTaskSet, Task, Verdict
from agentgym.envs.reasoning.jsonl import read_rows
from agentgym.envs.reasoning.math_problems import generate
from agentgym.envs.reasoning.python_tool import PythonTool, python_blocks
from agentgym.errors import UsageError
from agentgym.task_env import InvalidAction, TaskEnv
from agentgym.verifiers.math import extract_answer, stated_answer, verify_math

__all__ = ["MathEnv", "MathTask", "MathToolEnv", "load_math_dataset"]

LEVELS = ("easy", "medium", "hard")
INSTRUCTIONS = "Solve the problem. End your reply with the final answer as \\boxed{ANSWER}."


@dataclass
class MathWorld:
    """One episode: the problem, what the agent answered, and its tool runs."""

    question: str
    gold: str
    answer_text: str | None = None
    verdict: Verdict | None = None
    runs: list[str] = field(default_factory=list)  # outputs of the tool, newest last
    python: PythonTool = field(default_factory=PythonTool)  # the tool env's sandbox


class MathTask(Task[MathWorld]):
    """A problem with its gold answer, and how the oracle solves it."""

    def __init__(
        self,
        id: str,
        split: str,
        difficulty: str,
        seed: int,
        *,
        question: str,
        gold: str,
        solution: str,
        expression: str | None = None,
    ) -> None:
        super().__init__(id, split, difficulty, seed)
        self.question, self.gold, self.solution, self.expression = (
            question,
            gold,
            solution,
            expression,
        )

    @classmethod
    def generated(cls, id: str, split: str, difficulty: str, seed: int) -> MathTask:
        """A task of the project's generator."""
        problem = generate(difficulty, seed)
        return cls(
            id,
            split,
            difficulty,
            seed,
            question=problem.question,
            gold=problem.answer,
            solution=f"{problem.solution} The answer is \\boxed{{{problem.answer}}}.",
            expression=problem.expression,
        )

    def setup(self, rng: Any) -> tuple[MathWorld, str]:
        return MathWorld(self.question, self.gold), self.question

    def validate(self, world: MathWorld) -> Verdict:
        if world.verdict is not None:
            return world.verdict
        return Verdict(0.0, False, {"extracted": 0.0, "correct": 0.0}, "no answer yet")

    def solve(self, world: MathWorld) -> str | None:
        if world.answer_text is not None:
            return None
        return self.solution

    def teardown(self, world: MathWorld) -> None:
        world.python.close()


def load_math_dataset(dataset: str, path: str | Path) -> DataTaskSet:
    """The tasks of a GSM8K, MATH or AIME JSONL file (see the module docstring)."""
    readers = {"gsm8k": _gsm8k, "math": _math, "aime": _aime}
    if dataset not in readers:
        raise UsageError(f"unknown math dataset {dataset!r}; use one of {sorted(readers)}")
    tasks: list[MathTask] = []
    for question, gold, difficulty in read_rows(path, dataset, readers[dataset]):
        index = len(tasks)
        tasks.append(
            MathTask(
                f"test/{index}",
                "test",
                difficulty,
                0,
                question=question,
                gold=gold,
                solution=f"The answer is \\boxed{{{gold}}}.",
            )
        )
    return DataTaskSet({"test": tasks})


def _gsm8k(row: dict[str, Any]) -> tuple[str, str, str]:
    gold = row["answer"].split("####")[-1].strip().replace(",", "")
    if "####" not in row["answer"] or not gold:
        raise ValueError("the answer has no '#### N' line")
    return row["question"], gold, "default"


def _math(row: dict[str, Any]) -> tuple[str, str, str]:
    from agentgym.verifiers.math import _last_boxed

    gold = _last_boxed(row["solution"])
    if not gold:
        raise ValueError("the solution has no \\boxed{} answer")
    level = str(row.get("level", "default")).lower().replace(" ", "")
    return row["problem"], gold, level or "default"


def _aime(row: dict[str, Any]) -> tuple[str, str, str]:
    question = row.get("problem", row.get("question"))
    if not isinstance(question, str):
        raise KeyError("problem")
    return question, str(row["answer"]).strip(), "default"


class MathEnv(TaskEnv[MathWorld]):
    """Math word problems, single turn: the reply is scored by the math verifier.

    **What the agent sees.** The problem. **What it may do.** Reply once with its solution,
    ending with ``\\boxed{ANSWER}``. **Scoring.** 1 when the extracted final answer equals the
    gold one (fractions, decimals and LaTeX forms agree), else 0. **Levels.** easy, medium,
    hard (generated); a dataset's own levels with ``dataset=``/``path=``. **Oracle.** A worked
    solution with the boxed answer. **Version history.** v1: percentages and scientific
    notation compared as numbers; an answer too large to evaluate scores 0 (it was errored).
    v0: first release.
    """

    # The verifier finds the answer in the whole reply; agents reading answers flexibly box it.
    metadata = {**TaskEnv.metadata, "action_style": "raw", "answer_format": "\\boxed{{answer}}"}

    def __init__(
        self, *, dataset: str | None = None, path: str | None = None, **kwargs: Any
    ) -> None:
        if dataset is None and path is None:
            self.tasks = GeneratedTaskSet("math", MathTask.generated, LEVELS)
        elif dataset is None or path is None:
            raise UsageError("give both dataset= and path= to load a math dataset file")
        else:
            self.tasks = load_math_dataset(dataset, path)
            kwargs.setdefault("split", "test")
        super().__init__(**kwargs)

    def act(self, world: MathWorld, action: str) -> str:
        if stated_answer(action) is None:
            raise InvalidAction(
                "no final answer found: end your reply with \\boxed{ANSWER} "
                "(or 'The answer is ANSWER')"
            )
        return self._answer(world, action)

    def _answer(self, world: MathWorld, text: str) -> str:
        world.answer_text = text
        world.verdict = verify_math(text, world.gold)
        return f"Answer received: {world.verdict.details}."

    def observe(self, world: MathWorld) -> str:
        return world.question if world.answer_text is None else "The episode is over."

    def state_key(self, world: MathWorld) -> str:
        return json.dumps([world.question, world.answer_text, world.runs[-1:]])

    def is_over(self, world: MathWorld) -> bool:
        return world.answer_text is not None

    def action_syntax(self) -> str:
        return INSTRUCTIONS


class MathToolEnv(MathEnv):
    """Math word problems with a Python tool: compute in a sandbox, then answer.

    **What the agent sees.** The problem, then the output of each program it runs.
    **What it may do.** Reply with a fenced ```` ```python ```` block to run it (stdout and
    stderr come back, cut to 2,000 characters; 10 s and 1 GiB per run, no network), or reply
    with the final answer as ``\\boxed{ANSWER}`` to end the episode. A reply with both runs
    the code. **Scoring.** As ``reasoning/Math-v1``. **Oracle.** Runs the Python that computes
    the answer, then boxes what it printed. **Version history.** v1: as
    ``reasoning/Math-v1``. v0: first release.
    """

    # No answer_format: a reply may be a program instead of an answer, so a number in it must
    # not be read as the final answer.
    metadata = {
        **TaskEnv.metadata,
        "action_style": "raw",
        "needs_sandbox": True,
        "supports_state_snapshot": False,
    }

    def act(self, world: MathWorld, action: str) -> str:
        code = [block for _, block in python_blocks(action)]
        if code:
            return self._run(world, code[-1])
        if stated_answer(action) is not None:
            return self._answer(world, action)
        raise InvalidAction(
            "reply with a ```python``` block to run code, or with the final answer as "
            "\\boxed{ANSWER}"
        )

    def _run(self, world: MathWorld, code: str) -> str:
        status, output = world.python.run(code)
        world.runs.append(output)
        return f"Ran your code ({status}). Output:\n{output or '(nothing printed)'}"

    def observe(self, world: MathWorld) -> str:
        if world.answer_text is not None:
            return "The episode is over."
        return world.question if not world.runs else "Continue: run more code, or answer."

    def oracle_action(self) -> str | None:
        task, world = self._task, self._world
        if not isinstance(task, MathTask) or world is None:
            program: str | None = super().oracle_action()  # raises ResetNeeded before a reset
            return program
        return _tool_oracle(task, world)

    def action_syntax(self) -> str:
        return (
            "Reply with a ```python``` block to run it in a sandbox and see its output, or "
            "with the final answer as \\boxed{ANSWER} to finish."
        )


def _tool_oracle(task: MathTask, world: MathWorld) -> str | None:
    """The tool env's oracle: compute with Python first, then answer with what it printed."""
    if world.answer_text is not None:
        return None
    if task.expression is None:
        return task.solution
    if not world.runs:
        return f"```python\nfrom fractions import Fraction\nprint({task.expression})\n```"
    printed = extract_answer(world.runs[-1]) or world.runs[-1]
    return f"The program printed {printed}, so the answer is \\boxed{{{printed}}}."
