"""``swe/Repair-v1``: fix a bug in a real Python repository with bash, an editor and its tests.

The agent gets an issue written from failing tests and a working copy of the repository at
``/testbed`` in its own sandbox (no network); it explores, edits and runs tests through
tools, then submits. The working copy's diff is graded as SWE-bench grades a patch, with
its holes closed (:mod:`agentgym.envs.swe.grading`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentgym.core import DataTaskSet, Task, Verdict
from agentgym.envs.swe.grading import grade, starting_files
from agentgym.envs.swe.instances import DEFAULT_TASKS, SWEInstance, load_instances
from agentgym.envs.swe.patches import apply_patch, split_patch
from agentgym.envs.swe.prepare import find_spec, prepared_repo
from agentgym.envs.swe.repos import PreparedRepo
from agentgym.envs.swe.statekey import WorkingCopyKey, git_state_key
from agentgym.envs.swe.testrun import REPO_DIR, run_tests
from agentgym.envs.swe.workspace import (
    WorkingCopyError,
    open_workspace,
    read_working_copy,
    write_files,
)
from agentgym.errors import SandboxFileNotFoundError, UsageError
from agentgym.sandbox import ResourceLimitError, Sandbox, Session
from agentgym.sandbox.base import check_timeout
from agentgym.spaces import describe_tools, tool
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = ["DEFAULT_TASKS", "TOOLS", "SWEEnv", "SWETask", "SWETaskSet", "SWEWorld"]

OUTPUT_LIMIT = 10_000
VIEW_LINES = 400
SEARCH_LINES = 100
PATCH_END = "AGENTGYM_PATCH_END"
ZERO_COMPONENTS = {"fail_to_pass": 0.0, "pass_to_pass": 0.0, "dropped_files": 0.0, "tampering": 0.0}


def _text(meaning: str) -> dict[str, str]:
    return {"type": "string", "description": meaning}


_PATH = _text("a file, relative to /testbed or absolute")

TOOLS = [
    tool(
        "bash",
        "Run a command in a persistent bash shell (cwd, variables and background jobs persist; "
        "it starts in /testbed). No network.",
        {"command": _text("the command line")},
    ),
    tool(
        "view",
        "Show a file with line numbers (optionally only lines start_line..end_line), or list "
        "a directory two levels deep.",
        {
            "path": _text("a file or directory, relative to /testbed or absolute"),
            "start_line": {"type": "integer", "description": "the first line shown (default 1)"},
            "end_line": {
                "type": "integer",
                "description": f"the last line shown (default: start_line + {VIEW_LINES - 1})",
            },
        },
        optional=("start_line", "end_line"),
    ),
    tool(
        "str_replace",
        "Replace the one occurrence of old_str in a file by new_str (old_str must occur exactly "
        "once; include enough context).",
        {
            "path": _PATH,
            "old_str": _text("the text to replace, exactly as in the file (indentation too)"),
            "new_str": _text("the text to put in its place"),
        },
    ),
    tool(
        "insert",
        "Insert text after line insert_line of a file (0 inserts at the top).",
        {
            "path": _PATH,
            "insert_line": {"type": "integer", "description": "the line to insert after"},
            "text": _text("the lines to insert"),
        },
    ),
    tool(
        "create",
        "Write a file with the given content (created, or replaced if it exists).",
        {"path": _PATH, "file_text": _text("the whole content of the file")},
    ),
    tool(
        "search",
        "Search files for a regular expression (grep -E), showing file:line: matches.",
        {
            "pattern": _text("an extended regular expression"),
            "path": _text("the file or directory to search (default: /testbed)"),
        },
        optional=("path",),
    ),
    tool(
        "run_tests",
        "Run tests (pytest node ids or paths; default: the failing tests of the issue) and show "
        "each one's outcome.",
        {
            "tests": {
                "type": "array",
                "items": {"type": "string"},
                "description": "pytest node ids or paths (default: the issue's failing tests)",
            }
        },
        optional=("tests",),
    ),
    tool("submit", "Submit the working copy's changes as the fix; this ends the episode."),
]
"""The agent's tools (an argument a tool does not declare is an invalid action)."""


@dataclass
class SWEWorld:
    """One episode: the task, its sandbox and shell, what came back last, the submission."""

    instance: SWEInstance
    prepared: PreparedRepo
    start: Mapping[str, str | None]
    box: Sandbox
    shell: Session
    backend: str = "bwrap"
    tree_key: Callable[[], str] | None = None
    """The working copy's state key (:mod:`agentgym.envs.swe.statekey`), set at setup."""
    probe: Session | None = None
    """Our own shell in the sandbox, for a state key read by git (the agent's is busy)."""
    last: str = ""
    patch: str | None = None
    verdict: Verdict | None = None


class SWETask(Task[SWEWorld]):
    """An :class:`~agentgym.envs.swe.instances.SWEInstance` as a task of the env."""

    def __init__(self, instance: SWEInstance, backend: str) -> None:
        super().__init__(instance.instance_id, instance.split, instance.difficulty, 0)
        self.instance = instance
        self.backend = backend

    def setup(self, rng: np.random.Generator) -> tuple[SWEWorld, str]:
        instance = self.instance
        prepared = prepared_repo(find_spec(instance.repo))
        start = starting_files(prepared, instance)
        box = open_workspace(prepared, start, backend=self.backend, git=True)
        try:
            shell = box.session()
            shell.run(f"cd {REPO_DIR}")
            world = SWEWorld(instance, prepared, start, box, shell, self.backend)
            git = functools.partial(_git_key, world)
            world.tree_key = WorkingCopyKey.of(box, prepared.tree, git) or git
        except BaseException:
            box.close()
            raise
        goal = (
            f"You are working in a checkout of the Python repository {instance.repo} "
            f"{instance.version} at {REPO_DIR} (a git repository; its tests run with pytest). "
            f"Resolve this issue:\n\n{instance.problem_statement}"
        )
        return world, goal

    def validate(self, world: SWEWorld) -> Verdict:
        if world.verdict is not None:
            return world.verdict
        return Verdict(0.0, False, dict(ZERO_COMPONENTS), "no fix submitted yet")

    def solve(self, world: SWEWorld) -> Any:
        """The gold patch (the reverse of the injected bug), then ``submit``; from a working
        copy the agent changed elsewhere, the gold files are written whole."""
        if world.patch is not None:
            return None
        gold = apply_patch(_texts(world), world.instance.patch)
        current = {path: _read(world.box, path) for path in gold}
        if current == gold:
            return {"name": "submit", "arguments": {}}
        if all(current[path] == world.start.get(path, _pristine(world, path)) for path in gold):
            command = f"git apply <<'{PATCH_END}'\n{world.instance.patch}{PATCH_END}"
            return {"name": "bash", "arguments": {"command": command}}
        path = next(p for p in gold if current[p] != gold[p] and gold[p] is not None)
        return {"name": "create", "arguments": {"path": path, "file_text": gold[path]}}

    def teardown(self, world: SWEWorld) -> None:
        world.shell.close()
        if world.probe is not None:
            world.probe.close()
        world.box.close()


def _git_key(world: SWEWorld) -> str:
    if world.probe is None:  # opened on first use: the overlay's key needs none
        world.probe = world.box.session()
    return git_state_key(world.probe)


def _pristine(world: SWEWorld, path: str) -> str | None:
    return world.prepared.read(path) if (world.prepared.tree / path).is_file() else None


def _texts(world: SWEWorld) -> dict[str, str]:
    """The starting text of every file the gold patch touches."""
    found: dict[str, str] = {}
    for part in split_patch(world.instance.patch):
        text = world.start.get(part.path, _pristine(world, part.path))
        if text is not None:
            found[part.path] = text
    return found


def _read(box: Sandbox, path: str) -> str | None:
    try:
        return box.get_file(f"{REPO_DIR}/{path}").decode("utf-8", "replace")
    except SandboxFileNotFoundError:
        return None


class SWETaskSet(DataTaskSet):
    """The tasks of an instances file; a suite's count of them is spread over repositories
    (``--tasks 3`` takes three repositories' tasks, not the first repository's three)."""

    strata = "repository"

    def stratum(self, task_id: str) -> str:
        task = self.get(task_id)
        assert isinstance(task, SWETask), "an SWETaskSet holds SWE tasks"
        return task.instance.repo


def load_task_set(path: str | Path, backend: str) -> SWETaskSet:
    """The tasks of an instances file, by split (every split present; empty ones allowed
    only if another has tasks)."""
    instances = load_instances(path)
    if not instances:
        raise UsageError(f"{path} holds no SWE instances")
    by_split: dict[str, list[Task[Any]]] = {}
    for instance in instances:
        by_split.setdefault(instance.split, []).append(SWETask(instance, backend))
    return SWETaskSet(by_split)


class SWEEnv(TaskEnv[SWEWorld]):
    """Fix a bug in a real Python repository, with bash, an editor and its tests.

    **What the agent sees.** An issue written from the tests the bug breaks (their names,
    assertion messages and the test-side lines of their tracebacks), and a working copy of
    the repository at ``/testbed`` in a sandbox of its own: no network, the repository's
    test environment (pytest and its test requirements) on ``PATH``, a git repository whose
    one commit is the starting state. Then each tool's output (cut to 10,000 characters).
    **What it may do.** Call the tools (natively, or written as JSON
    ``{"name": ..., "arguments": {...}}`` or ``name(key=...)``; a reply with a ```` ```bash
    ```` block runs the block): ``bash`` (a persistent shell, ``command_timeout=120`` s per
    command), ``view`` (a file with line numbers, or a directory), ``str_replace``,
    ``insert`` and ``create`` (edits), ``search`` (grep -E), ``run_tests`` (pytest on ids or
    paths, outcomes from JUnit XML), and ``submit``. A tool used wrongly (an ``old_str`` that
    is not there, a missing file) is an invalid action with a message saying why.
    **Scoring.** At ``submit``, the working copy's diff is graded in a fresh sandbox
    (:mod:`agentgym.envs.swe.grading`): only changes to the package's files count (tests and
    configuration stay the originals), and the score is 1 when every FAIL_TO_PASS and
    PASS_TO_PASS test passes, else 0 (SWE-bench's rule); components give the fraction of each
    set that passes. No submission scores 0. A grader that cannot run errors the episode;
    nothing the agent leaves in ``/testbed`` does: files a patch cannot carry (over 4 MiB,
    not UTF-8, not regular files) are left out and named in the verdict, and a working copy
    over its limits (64 MiB of changed files, too many files to list) scores 0 with the
    reason (:func:`~agentgym.envs.swe.workspace.read_working_copy`).
    **Tasks.** ``tasks=`` an instances file (JSON Lines; default: ``swe-v0``, the project's
    benchmark of bugs injected into six test, three train and one dev repository, three
    levels); each repository must be prepared once (``agentgym swe prepare``).
    **Oracle.** Applies the gold patch (the reverse of the injected change) with
    ``git apply``, then submits. **Version history.** v1: the grader's screen judges the
    patch's syntax tree and the canaries stand among the real tests (a patch that reaches
    into pytest scored 1.0 on any task); file names with spaces or newlines round-trip; the
    agent's files can no longer make an episode errored; the instructions list every tool
    with its arguments (typed, required or optional, one line of meaning), rendered from the
    schemas (made before any v1 score was published, so no new id; see ``docs/envs/swe.md``).
    v0: first release.
    """

    metadata = {
        **TaskEnv.metadata,
        "needs_sandbox": True,
        "supports_state_snapshot": False,
        "task_kwargs": ("tasks",),
        # Shell output carries timings and the like: a replay checks the verdict.
        "replay": "verdict",
    }
    tools = TOOLS
    max_action_length = 1_000_000

    def __init__(
        self,
        *,
        tasks: str | None = None,
        backend: str = "bwrap",
        command_timeout: float = 120.0,
        **kwargs: Any,
    ) -> None:
        self.tasks = load_task_set(tasks or DEFAULT_TASKS, backend)
        self.command_timeout = check_timeout(command_timeout, "command_timeout")
        kwargs.setdefault("split", "test")
        super().__init__(**kwargs)

    # ------------------------------------------------------------------ actions

    def act(self, world: SWEWorld, action: str) -> str:
        if world.patch is not None:
            raise InvalidAction("the fix was submitted; the episode is over")
        name, arguments = self._call(action)
        try:
            output = getattr(self, f"_tool_{name}")(world, **arguments)
        except ResourceLimitError as killed:
            # The agent's own commands outgrew the sandbox: its doing, so the episode ends
            # with nothing submitted (a 0), not as an infrastructure error.
            world.patch = ""
            world.verdict = Verdict(0.0, False, dict(ZERO_COMPONENTS), f"not resolved: {killed}")
            output = f"The sandbox was killed ({killed}); the episode is over."
        world.last = _cut(output)
        return world.last

    def _call(self, action: str) -> tuple[str, dict[str, Any]]:
        try:
            name, arguments = self.parse_tool_call(action)
        except InvalidAction:
            block = _bash_block(action)
            if block is not None:
                return "bash", {"command": block}
            if action.strip().lower() in ("submit", "submit()"):
                return "submit", {}
            raise
        return name, arguments

    def _tool_bash(self, world: SWEWorld, command: str) -> str:
        if not command.strip():
            raise InvalidAction("the command is empty")
        result = world.shell.run(command, timeout=self.command_timeout)
        parts = [result.stdout.rstrip("\n")]
        if result.stderr.strip():
            parts.append(f"[stderr]\n{result.stderr.rstrip()}")
        if result.timed_out:
            parts.append(f"[timed out after {self.command_timeout:g} s: the command was killed]")
        parts.append(f"[exit code {result.exit_code}]")
        if world.shell.ended():  # exit: a new shell, started in /testbed again
            world.shell.run(f"cd {REPO_DIR}")
            parts.append("[the shell exited; a new one was started in /testbed]")
        return "\n".join(p for p in parts if p)

    def _tool_view(
        self,
        world: SWEWorld,
        path: str,
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> str:
        target = _path(path)
        kind = world.box.exec(["/bin/sh", "-c", 'test -d "$1" && echo dir', "view", target])
        if kind.stdout.strip() == "dir":
            listing = world.box.exec(
                ["/usr/bin/find", target, "-maxdepth", "2", "-not", "-path", "*/.git*"]
            )
            lines = sorted(listing.stdout.splitlines())
            return _cut("\n".join(lines[:1000]))
        lines = _file(world, target).splitlines()
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or (first + VIEW_LINES - 1))
        if first > max(1, len(lines)):
            raise InvalidAction(f"{path} has {len(lines)} lines; start_line {first} is past it")
        shown = [f"{n:6}\t{lines[n - 1]}" for n in range(first, last + 1)]
        more = f"\n[lines {last + 1}-{len(lines)} not shown]" if last < len(lines) else ""
        return "\n".join(shown) + more

    def _tool_str_replace(self, world: SWEWorld, path: str, old_str: str, new_str: str) -> str:
        target = _path(path)
        text = _file(world, target)
        count = text.count(old_str) if old_str else 0
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise InvalidAction(
                f"old_str {where} in {path}; it must occur exactly once (copy it from view, "
                f"with enough surrounding lines to be unique)"
            )
        _write(world, target, text.replace(old_str, new_str, 1))
        line = text[: text.index(old_str)].count("\n") + 1
        return f"Edited {path}: replaced 1 occurrence at line {line}."

    def _tool_insert(self, world: SWEWorld, path: str, insert_line: int, text: str) -> str:
        target = _path(path)
        lines = _file(world, target).splitlines(keepends=True)
        if not 0 <= insert_line <= len(lines):
            raise InvalidAction(f"insert_line must be between 0 and {len(lines)} for {path}")
        if lines and not lines[-1].endswith("\n") and insert_line == len(lines):
            lines[-1] += "\n"
        new = text if text.endswith("\n") else text + "\n"
        _write(world, target, "".join(lines[:insert_line]) + new + "".join(lines[insert_line:]))
        return f"Inserted {new.count(chr(10))} line(s) after line {insert_line} of {path}."

    def _tool_create(self, world: SWEWorld, path: str, file_text: str) -> str:
        _write(world, _path(path), file_text)
        return f"Wrote {path} ({file_text.count(chr(10)) + 1} lines)."

    def _tool_search(self, world: SWEWorld, pattern: str, path: str = ".") -> str:
        if not pattern:
            raise InvalidAction("the pattern is empty")
        argv = ["/usr/bin/grep", "-rnIE", "--exclude-dir=.git", "--", pattern, _path(path)]
        result = world.box.exec(argv, cwd=REPO_DIR, timeout=60)
        if result.exit_code == 2:
            raise InvalidAction(f"grep could not search: {result.stderr.strip()[:500]}")
        lines = [line.removeprefix(f"{REPO_DIR}/") for line in result.stdout.splitlines()]
        if not lines:
            return f"No matches for {pattern!r}."
        more = f"\n[{len(lines) - SEARCH_LINES} more matches]" if len(lines) > SEARCH_LINES else ""
        return "\n".join(line[:300] for line in lines[:SEARCH_LINES]) + more

    def _tool_run_tests(self, world: SWEWorld, tests: list[str] | None = None) -> str:
        selected = list(tests) if tests else list(world.instance.fail_to_pass)
        if not all(isinstance(t, str) and t.strip() for t in selected):
            raise InvalidAction("tests must be a list of pytest node ids or paths")
        timeout = min(600.0, 60.0 + 2.0 * len(selected))
        report = run_tests(world.box, world.prepared.spec, selected, timeout=timeout)
        lines = []
        for nodeid, outcome in sorted(report.outcomes.items()):
            detail = f": {outcome.message[:300]}" if outcome.outcome != "passed" else ""
            lines.append(f"{outcome.outcome.upper()} {nodeid}{detail}")
        counts = {k: 0 for k in ("passed", "failed", "error", "skipped")}
        for outcome in report.outcomes.values():
            counts[outcome.outcome] += 1
        summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "no test ran"
        if report.timed_out:
            summary += f" (timed out after {timeout:g} s)"
        if not report.outcomes:  # why pytest ran nothing, without its timing (replays agree)
            lines.append(_TIMING.sub("", report.output[-3000:]))
        return "\n".join([*lines, summary])

    def _tool_submit(self, world: SWEWorld) -> str:
        try:
            submitted = read_working_copy(world.box, world.prepared, world.start)
        except WorkingCopyError as error:  # the agent's files: a 0 with the reason
            world.patch = ""
            world.verdict = Verdict(0.0, False, dict(ZERO_COMPONENTS), f"not resolved: {error}")
            return f"Submitted. {world.verdict.details}."
        world.patch = submitted.patch
        verdict = grade(world.prepared, world.instance, world.patch, backend=world.backend).verdict
        if submitted.left_out:
            verdict = replace(verdict, details=f"{verdict.details}; {submitted.note()}")
        world.verdict = verdict
        return f"Submitted. {world.verdict.details}."

    # ------------------------------------------------------------------ TaskEnv hooks

    def observe(self, world: SWEWorld) -> str:
        if world.patch is not None:
            return "The episode is over."
        return "Call a tool (bash, view, str_replace, insert, create, search, run_tests, submit)."

    def state_key(self, world: SWEWorld) -> str:
        if world.patch is not None:
            tree = _digest(world.patch)
        else:
            assert world.tree_key is not None, "set by setup"
            tree = _digest(world.tree_key())
        return json.dumps([world.instance.instance_id, tree, _digest(world.last)])

    def is_over(self, world: SWEWorld) -> bool:
        return world.patch is not None

    def action_syntax(self) -> str:
        return (
            "Work with the tools below: call one per reply, as a JSON object "
            '{"name": ..., "arguments": {...}} or a native tool call; a ```bash block runs '
            "in the shell. Inspect the code, reproduce the failure with run_tests, fix the "
            "package (not the tests), check, then call submit.\n\n"
            # Rendered from the schemas that judge the calls: never a second, drifting copy.
            f"Tools:\n{describe_tools(self.tools)}"
        )


def _path(path: str) -> str:
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        raise InvalidAction("give a path (relative to /testbed, or absolute)")
    return posixpath.normpath(posixpath.join(REPO_DIR, path))


def _file(world: SWEWorld, target: str) -> str:
    try:
        data = world.box.get_file(target)
    except SandboxFileNotFoundError:
        raise InvalidAction(f"{target} does not exist") from None
    except OSError as error:
        raise InvalidAction(f"cannot read {target}: {error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidAction(f"{target} is not a UTF-8 text file") from None


def _write(world: SWEWorld, target: str, text: str) -> None:
    try:
        write_files(world.box, {target.removeprefix(f"{REPO_DIR}/"): text})
    except OSError as error:
        raise InvalidAction(f"cannot write {target}: {error}") from None


_TIMING = re.compile(r" in [0-9.]+s\b")
_BASH = re.compile(r"```(?:bash|sh|shell)\n(.*?)```", re.DOTALL)


def _bash_block(text: str) -> str | None:
    blocks = _BASH.findall(text)
    return blocks[-1] if blocks else None


def _cut(text: str, limit: int = OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
