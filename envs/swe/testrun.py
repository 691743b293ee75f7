"""Running a repository's tests in a sandbox and reading the results from JUnit XML.

One function runs pytest everywhere the family needs it — preparing a repository, the task
factory, the agent's ``run_tests`` tool and the grader — so every caller runs the same
command with the same isolation: the repository's test environment, its ``addopts``
replaced by the options its :class:`~agentgym.envs.swe.repos.RepoSpec` names, no cache
provider, a fixed hash seed, and our plugin (``pytest_plugin/agentgym_swe_plugin.py``),
which puts each test's node id into its JUnit record. The grader's runs alone also load its
guard (``pytest_plugin/agentgym_swe_guard.py``, configured by a :class:`Guard`).

Results come from the JUnit XML file pytest writes, never from its console output: a
program under test can print ``5 passed`` but has to get past pytest to change a report.
A test missing from the report did not pass.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentgym.errors import SandboxFileNotFoundError

if TYPE_CHECKING:
    from agentgym.envs.swe.repos import RepoSpec
    from agentgym.sandbox import Sandbox

__all__ = ["Guard", "TestOutcome", "TestReport", "parse_junit", "pytest_argv", "run_tests"]

REPO_DIR = "/testbed"
"""Where a repository's working copy is inside a sandbox (SWE-bench's name for it)."""
PLUGIN = "agentgym_swe_plugin"
GUARD_PLUGIN = "agentgym_swe_guard"
RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
"""When one id appears more than once (a teardown error after a passing call), the worst
outcome is the test's."""
TEXT_LIMIT = 4_000


@dataclass(frozen=True)
class Guard:
    """The grader's guard in a run (see ``pytest_plugin/agentgym_swe_guard.py``)."""

    record: str
    """Where the guard writes each test's outcome as pytest reported it (a dict's repr)."""
    watched: tuple[str, ...]
    """Files and folders, relative to the working copy, whose files must not change."""


@dataclass(frozen=True)
class TestOutcome:
    """One test's result: ``passed``, ``failed``, ``error`` or ``skipped``."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str
    outcome: str
    message: str = ""
    text: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class TestReport:
    """What a pytest run gave: each test's outcome (from the JUnit XML), how it ended."""

    __test__ = False

    outcomes: Mapping[str, TestOutcome]
    exit_code: int
    timed_out: bool
    duration: float
    junit_found: bool
    output: str = field(default="", repr=False)
    """The end of pytest's console output: for people and the agent, never for scoring."""

    def passed(self, nodeid: str) -> bool:
        outcome = self.outcomes.get(nodeid)
        return outcome is not None and outcome.outcome == "passed"

    def failing(self) -> list[str]:
        return sorted(n for n, o in self.outcomes.items() if o.outcome in ("failed", "error"))


def parse_junit(xml: bytes) -> dict[str, TestOutcome]:
    """Outcomes by node id from pytest's JUnit XML (with our plugin's ``nodeid`` property).

    Malformed XML gives no outcomes: whoever broke the report gets no passing tests.
    """
    try:
        root = ElementTree.fromstring(xml)
    except (ElementTree.ParseError, ValueError, RecursionError):
        return {}
    outcomes: dict[str, TestOutcome] = {}
    for case in root.iter("testcase"):
        nodeid = _nodeid(case)
        if not nodeid:
            continue
        outcome, message, text = "passed", "", ""
        for kind in ("error", "failure", "skipped"):
            found = case.find(kind)
            if found is not None:
                outcome = {"failure": "failed"}.get(kind, kind)
                message = (found.get("message") or "")[:TEXT_LIMIT]
                text = (found.text or "")[:TEXT_LIMIT]
                break
        try:
            seconds = float(case.get("time") or 0.0)
        except ValueError:
            seconds = 0.0
        new = TestOutcome(nodeid, outcome, message, text, seconds)
        old = outcomes.get(nodeid)
        if old is None or RANK[new.outcome] > RANK[old.outcome]:
            outcomes[nodeid] = new
    return outcomes


def _nodeid(case: ElementTree.Element) -> str:
    for prop in case.iter("property"):
        if prop.get("name") == "nodeid":
            return prop.get("value") or ""
    return ""


def pytest_argv(
    repo: RepoSpec,
    junit: str,
    *,
    callmap: str | None = None,
    guard: Guard | None = None,
    args_file: str | None = None,
) -> list[str]:
    """The pytest command line of every run (targets come from ``args_file``, one per line,
    which pytest reads with its ``@file`` syntax, so thousands of ids fit; ``guard`` only
    in the grader's runs)."""
    argv = ["python", "-m", "pytest"]
    if guard:  # the first plugin pytest imports: armed before any code of the working copy
        argv += ["-p", GUARD_PLUGIN, f"--agentgym-guard-record={guard.record}"]
        argv += [f"--agentgym-guard-watch={path}" for path in guard.watched]
    argv += ["-p", PLUGIN, "-p", "no:cacheprovider"]
    argv += ["-o", "addopts=", "-o", "junit_family=xunit2", "--rootdir", REPO_DIR]
    argv += ["-q", "--tb=short", "-rN", "--color=no", f"--junitxml={junit}"]
    argv += list(repo.pytest_args)
    for nodeid in repo.deselect:
        argv += ["--deselect", nodeid]
    if callmap:
        argv += [f"--agentgym-callmap={callmap}", f"--agentgym-root={REPO_DIR}"]
    if args_file:
        argv.append(f"@{args_file}")
    return argv


def run_tests(
    box: Sandbox,
    repo: RepoSpec,
    targets: Sequence[str] = (),
    *,
    timeout: float,
    callmap: str | None = None,
    guard: Guard | None = None,
) -> TestReport:
    """Run pytest on ``targets`` (paths or node ids; default: the repository's test paths)
    in ``box``, whose ``/testbed`` holds the working copy, and read the JUnit report.

    What the code under test does (crash, hang, fork, delete the report) is in the report:
    missing outcomes, ``timed_out``; only a sandbox that fails raises.
    """
    run_dir = "/tmp/.agentgym-pytest"
    junit, args_file = f"{run_dir}/junit.xml", f"{run_dir}/targets"
    listing = "\n".join(targets or repo.tests) + "\n"
    argv = pytest_argv(repo, junit, callmap=callmap, guard=guard, args_file=args_file)
    log = f"{run_dir}/output"
    # One process tree for all of it (each costs milliseconds): the targets come on stdin.
    command = (
        f"rm -rf {run_dir} && mkdir -p {run_dir} && cat >{args_file} && "
        f"cd {REPO_DIR} && {shlex.join(argv)} >{log} 2>&1 </dev/null; "
        f"code=$?; tail -c 20000 {log} 2>/dev/null; exit $code"
    )
    result = box.exec(["/bin/sh", "-c", command], timeout=timeout, stdin=listing)
    try:
        xml = box.get_file(junit)
        found = True
    except (SandboxFileNotFoundError, OSError):
        xml, found = b"", False
    return TestReport(
        outcomes=parse_junit(xml) if found else {},
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        duration=result.duration,
        junit_found=found,
        output=result.stdout,
    )
