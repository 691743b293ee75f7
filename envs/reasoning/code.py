"""Code: write a Python function that passes hidden unit tests, in one reply or with a sandbox.

Two envs share the tasks and the scoring (:func:`agentgym.verifiers.code.verify_code`: hidden
tests in a fresh sandbox, with the program in its own process, see ``docs/reasoning-code.md``):

* ``reasoning/Code-v0`` (:class:`CodeEnv`) — single turn: the reply is the program;
* ``reasoning/CodeInteractive-v0`` (:class:`CodeInteractiveEnv`) — up to 10 turns: run code
  in the episode's sandbox, run the visible examples, then submit.

Tasks come from the project's own generator (:mod:`agentgym.envs.reasoning.code_tasks`: 37
parameterised problem templates, ``easy``/``medium``/``hard``; 100,000 train, 1,000 dev and
1,000 test tasks per level), or from a HumanEval or MBPP JSONL file with ``path=`` (and
``dataset="humaneval"``/``"mbpp"``, default ``"auto"``; every row is a ``test`` task; the
formats are described in :mod:`agentgym.envs.reasoning.code_tasks.datasets`).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym.core import DataTaskSet, GeneratedTaskSet, Task, Verdict
from agentgym.envs.reasoning.code_tasks import LEVELS, CodeProblem, generate
from agentgym.envs.reasoning.code_tasks.datasets import load_problems
from agentgym.envs.reasoning.python_tool import PythonTool, python_blocks
from agentgym.errors import UsageError
from agentgym.sandbox.base import check_timeout
from agentgym.task_env import InvalidAction, TaskEnv
from agentgym.verifiers.code import run_code_tests, verify_code

__all__ = [
    "CodeEnv",
    "CodeInteractiveEnv",
    "CodeTask",
    "CodeWorld",
    "extract_program",
    "load_code_dataset",
]

_COMMAND = re.compile(r"\b(run|test|submit)\b", re.IGNORECASE)
RUN_TIMEOUT = 10.0


def extract_program(reply: str) -> str:
    """The code of the last ```python (or unlabelled) fenced block of a reply, else the reply."""
    blocks = list(python_blocks(reply))
    return blocks[-1][1] if blocks else reply


@dataclass
class CodeWorld:
    """One episode: the problem, what the agent submitted, its last run or test."""

    problem: CodeProblem
    submission: str | None = None
    verdict: Verdict | None = None
    last: str = ""  # the last run or test: what was run and what came back
    tested: bool = False  # the visible examples were run
    python: PythonTool = field(default_factory=PythonTool)  # the interactive env's sandbox


class CodeTask(Task[CodeWorld]):
    """A programming problem; generated ones are made from the task's seed when first played."""

    def __init__(
        self, id: str, split: str, difficulty: str, seed: int, problem: CodeProblem | None = None
    ) -> None:
        super().__init__(id, split, difficulty, seed)
        self._problem = problem

    @property
    def problem(self) -> CodeProblem:
        if self._problem is None:
            self._problem = generate(self.difficulty, self.seed)
        return self._problem

    def setup(self, rng: Any) -> tuple[CodeWorld, str]:
        goal = f"{self.problem.prompt}\n\nThe program is scored by hidden unit tests."
        return CodeWorld(self.problem), goal

    def validate(self, world: CodeWorld) -> Verdict:
        if world.verdict is not None:
            return world.verdict
        total = float(len(world.problem.hidden))
        components = {"passed_tests": 0.0, "total_tests": total}
        return Verdict(0.0, False, components, "no program submitted yet")

    def solve(self, world: CodeWorld) -> str | None:
        if world.submission is not None:
            return None
        return f"```python\n{world.problem.reference.rstrip()}\n```"

    def teardown(self, world: CodeWorld) -> None:
        world.python.close()


def load_code_dataset(path: str | Path, dataset: str = "auto") -> DataTaskSet:
    """The ``test`` tasks of a HumanEval or MBPP JSONL file (ids ``test/<task_id>``)."""
    tasks = [
        CodeTask(f"test/{task_id}", "test", "default", 0, problem)
        for task_id, problem in load_problems(path, dataset)
    ]
    return DataTaskSet({"test": tasks})


class CodeEnv(TaskEnv[CodeWorld]):
    """Write a Python function that passes hidden unit tests; one reply, scored in a sandbox.

    **What the agent sees.** The function to write: its name, signature and docstring with
    a few examples (``>>> f(x)`` and the result). **What it may do.** Reply once with the
    complete program; the last ```` ```python ```` block of the reply is taken (without one,
    the whole reply). A reply that is empty or does not parse is an invalid action (which
    ends the single-turn episode with 0). For dataset tasks in HumanEval's completion style,
    a reply that does not define the function is appended to the prompt.
    **Scoring.** The fraction of hidden tests passed (about 14 per built-in task: edge cases
    and random inputs), by :func:`agentgym.verifiers.code.verify_code`; ``passed`` when all
    pass; components ``passed_tests`` and ``total_tests``. A crash, a timeout (2 s per
    built-in test, ``timeout=10`` s in all) or a fake report scores the tests it really
    passed; only a failure of the sandbox itself errors the episode.
    **Levels.** ``easy`` (a loop: multiples, ciphers, palindromes...), ``medium`` (intervals,
    brackets, spirals, Roman numerals, base conversion...), ``hard`` (edit distance with
    costs, coin change, knapsack, grid search, RPN, topological order...); parameters and
    hidden inputs are drawn from each task's seed. With ``path=``: the file's rows, level
    ``default``. **Oracle.** The reference solution (it passes every hidden test).
    **Version history.** v0: first release.
    """

    metadata = {**TaskEnv.metadata, "needs_sandbox": True, "action_style": "raw"}
    max_action_length = 32_768

    def __init__(
        self,
        *,
        path: str | None = None,
        dataset: str | None = None,
        timeout: float = 10.0,
        **kwargs: Any,
    ) -> None:
        if path is None and dataset is not None:
            raise UsageError(
                f"dataset={dataset!r} names the format of a file: give the file with path= too"
            )
        if path is None:
            self.tasks = GeneratedTaskSet("code", CodeTask, LEVELS)
        else:
            self.tasks = load_code_dataset(path, dataset or "auto")
            kwargs.setdefault("split", "test")
        self.timeout = check_timeout(timeout)
        super().__init__(**kwargs)

    def act(self, world: CodeWorld, action: str) -> str:
        return self._submit(world, self._program(world, extract_program(action)))

    def _program(self, world: CodeWorld, code: str) -> str:
        """The program to run for a reply's code: completed with the prompt where that is the
        dataset's style, and checked to parse (parsing runs nothing)."""
        if not code.strip():
            raise InvalidAction(
                "the reply holds no program: write the complete program in a ```python block"
            )
        prefix = world.problem.prefix
        if prefix and (_parses(prefix + code) or not _parses(code)):
            # The prompt goes first: it completes a body-only reply, and it keeps the helpers
            # the prompt defines for a reply that writes the whole function again (the stub
            # with only a docstring is then redefined).
            code = prefix + code
        try:
            ast.parse(code)
        except SyntaxError as error:
            raise InvalidAction(
                f"the program does not parse (line {error.lineno}: {error.msg}); reply with the "
                f"complete program in one ```python block"
            ) from None
        except (ValueError, RecursionError, MemoryError) as error:
            raise InvalidAction(f"the program cannot be parsed: {error}") from None
        return code

    def _submit(self, world: CodeWorld, program: str) -> str:
        verdict = verify_code(program, world.problem.hidden, timeout=self.timeout)
        world.submission, world.verdict = program, verdict
        return f"Submitted: {verdict.details}."

    def observe(self, world: CodeWorld) -> str:
        if world.submission is not None:
            return "The episode is over."
        return "Reply with the complete program in a ```python block."

    def state_key(self, world: CodeWorld) -> str:
        return json.dumps(
            [
                world.problem.entry_point,
                _digest(world.problem.prompt),
                _digest(world.submission),
                _digest(world.last),
            ]
        )

    def is_over(self, world: CodeWorld) -> bool:
        return world.submission is not None

    def action_syntax(self) -> str:
        return (
            "Reply with the complete program (the function and any imports it needs) in one "
            "```python block; the last such block of the reply is what is tested."
        )


class CodeInteractiveEnv(CodeEnv):
    """Write a Python function with a sandbox at hand: run code, try the examples, submit.

    **What the agent sees.** The function to write (as in ``reasoning/Code-v0``), then what
    each of its actions gave back. **What it may do.** Each reply ends with an action word on
    the line just before a ```` ```python ```` block (the first of ``run``, ``test`` and
    ``submit`` on that line counts; reasoning may come before it):

    * ``run`` — runs the block as ``python3 main.py`` in the episode's sandbox (no network;
      ``run_timeout=10`` s, 1 GiB, 64 processes; files persist between runs) and shows the
      exit code, stdout and stderr, each cut to 2,000 characters;
    * ``test`` — runs the visible examples of the prompt against the block (in a fresh
      sandbox) and shows each example's outcome;
    * ``submit`` — the block is the final program: it is scored on the hidden tests and the
      episode ends. A submission that does not parse is an invalid action.

    The hidden tests are run only at ``submit``. **Scoring.** As ``reasoning/Code-v0``; no
    submission within the 10 steps scores 0. **Oracle.** Tests the reference solution on the
    examples, then submits it. **Version history.** v0: first release.
    """

    metadata = {**CodeEnv.metadata, "supports_state_snapshot": False}  # files persist

    def __init__(self, *, run_timeout: float = RUN_TIMEOUT, **kwargs: Any) -> None:
        """``run_timeout``: wall-clock seconds of a ``run``; other options as ``CodeEnv``."""
        self.run_timeout = check_timeout(run_timeout, "run_timeout")
        super().__init__(**kwargs)

    def act(self, world: CodeWorld, action: str) -> str:
        command, code = _command(action)
        if command == "run":
            return self._run(world, code)
        if command == "test":
            return self._test(world, self._program(world, code))
        return self._submit(world, self._program(world, code))

    def _run(self, world: CodeWorld, code: str) -> str:
        # A sandbox that cannot start is the infrastructure's failure: it errors the episode.
        result = world.python.execute(code, self.run_timeout)
        tool = world.python
        report = (
            f"Ran main.py ({tool.status(result, self.run_timeout)}).\n"
            f"stdout:\n{tool.cut(result.stdout.rstrip()) or '(empty)'}\n"
            f"stderr:\n{tool.cut(result.stderr.rstrip()) or '(empty)'}"
        )
        world.last = f"run\n{code}\n{report}"
        return report

    def _test(self, world: CodeWorld, program: str) -> str:
        examples = world.problem.examples
        if examples is None:
            raise InvalidAction(
                "this task shows no examples to test; use run with asserts of your own"
            )
        report = run_code_tests(program, examples, timeout=self.timeout)
        lines = [f"Visible examples: {report.passed_tests} of {len(report.outcomes)} passed."]
        for outcome in report.outcomes:
            lines.append(f"- {outcome.label}: {outcome.problem or 'passed'}")
        world.tested = True
        world.last = f"test\n{program}\n" + "\n".join(lines)
        return "\n".join(lines)

    def observe(self, world: CodeWorld) -> str:
        if world.submission is not None:
            return "The episode is over."
        return "Next: run, test or submit, followed by a ```python block."

    def oracle_action(self) -> str | None:
        program: str | None = super().oracle_action()  # a text env's oracle writes text
        if program is None or self._world is None:
            return program
        if self._world.problem.examples is not None and not self._world.tested:
            return f"test\n{program}"
        return f"submit\n{program}"

    def action_syntax(self) -> str:
        return (
            "End each reply with an action word on its own line, then a ```python block: "
            "'run' runs the block in your sandbox and shows its output; 'test' runs the "
            "visible examples against the block; 'submit' submits the block as the final "
            "program (scored by hidden tests; this ends the episode)."
        )


def _command(action: str) -> tuple[str, str]:
    """``(run|test|submit, code)`` of an interactive reply, or InvalidAction saying why not.

    The command is the first of the three words on the last line of text before the last
    ```python block ("Let me run it to test it." runs it).
    """
    blocks = list(python_blocks(action))
    if not blocks:
        raise InvalidAction(
            "no ```python block found: write run, test or submit, then the code in a "
            "```python block"
        )
    start, code = blocks[-1]
    lines = [line for line in action[:start].splitlines() if line.strip()]
    words = _COMMAND.findall(lines[-1]) if lines else []
    if not words:
        raise InvalidAction(
            "say what to do with the code: write run, test or submit on the line just before "
            "the ```python block"
        )
    return words[0].lower(), code


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _digest(text: str | None) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16] if text else "-"
