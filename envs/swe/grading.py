"""Grading a patch: SWE-bench's semantics, with the known ways around it closed.

SWE-bench applies the model's patch, then the test patch, runs the FAIL_TO_PASS and
PASS_TO_PASS tests and calls the instance resolved when all of them pass. We do the same in
a fresh sandbox from the prepared repository, and hold the grader to what only the code
under repair may change:

* **Only the package's own files count.** The patch is split per file and only changes to
  files of the package are applied: a change to a test file, a ``conftest.py``, a pytest or
  tox configuration, ``setup.py``/``pyproject.toml``, a ``sitecustomize``/``usercustomize``
  module or a ``.pth`` file is dropped, and so is a new file outside the package's existing
  directories (a top-level ``pytest.py`` would shadow pytest itself). The tests and their
  configuration are therefore the originals; the dropped paths are in the verdict.
* **The run is ours.** A fresh sandbox (no state from the episode: no environment
  variables, no background process, no files outside the working copy); pytest with the
  repository's ``addopts`` replaced, no cache provider, our plugin and no other from the
  environment (``PYTEST_PLUGINS``/``PYTEST_ADDOPTS`` are not set); tests selected by node id.
* **Results come from JUnit XML**, read per test id; a test missing from it did not pass.
* **Canaries.** Two tests of ours run with the selected ones: one must pass and one must
  fail. A run that reports the failing canary as passed has had its reporting tampered
  with (a patch that makes every test "pass"): it scores 0.
* **A harness screen.** Code under test runs in pytest's process and could patch pytest
  itself. A patch that adds, to a package file, a reference the file did not have to the
  test machinery or the interpreter's internals (``pytest``, ``_pytest``, ``unittest``,
  ``sys.modules``, ``sys.settrace``, ``sys._getframe``, ``atexit``, ``os._exit``,
  ``builtins``, ``gc``, ``inspect``, ``ctypes``, ``importlib``, ``__import__``, ``junit``,
  ``signal``, ``faulthandler``) scores 0: a bug fix needs none of them. This is a screen,
  not a proof; ``docs/envs/swe.md`` says what it does not cover.
* **Infrastructure failure is not a 0.** A run that reports no test at all is followed by a
  control run of the canaries on the pristine repository; if that fails too, the grader
  raises :class:`~agentgym.errors.VerifierError` and the episode is errored, not scored.

Score: 1 when resolved (every FAIL_TO_PASS and PASS_TO_PASS test passes), else 0, as
SWE-bench; the fractions of each set that pass are the verdict's components (partial
credit for analysis, not reward).
"""

from __future__ import annotations

import io
import re
import secrets
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from agentgym.core import Verdict
from agentgym.envs.swe.instances import SWEInstance
from agentgym.envs.swe.patches import PatchError, apply_patch, split_patch
from agentgym.envs.swe.prepare import PreparedRepo
from agentgym.envs.swe.testrun import TestReport, run_tests
from agentgym.envs.swe.workspace import open_workspace
from agentgym.errors import InfrastructureError, VerifierError

__all__ = ["Grade", "grade", "harness_references", "starting_files", "writable_path"]

PROTECTED_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "setup.cfg",
        "setup.py",
        "pyproject.toml",
        "noxfile.py",
        "sitecustomize.py",
        "usercustomize.py",
        "MANIFEST.in",
    }
)
HARNESS_NAMES = (
    "pytest",
    "_pytest",
    "unittest",
    "sys.modules",
    "settrace",
    "setprofile",
    "_getframe",
    "atexit",
    "_exit",
    "builtins",
    "__builtins__",
    "gc",
    "inspect",
    "ctypes",
    "importlib",
    "__import__",
    "junit",
    "signal",
    "faulthandler",
)
CANARY_DIR = "agentgym_canary"
BASE_TIMEOUT = 60.0
SECONDS_PER_TEST = 2.0
MAX_TIMEOUT = 900.0


@dataclass(frozen=True)
class Grade:
    """A graded patch: the verdict and what the run saw (for people and tests)."""

    verdict: Verdict
    report: TestReport | None
    dropped: tuple[str, ...]


def writable_path(prepared: PreparedRepo, path: str, *, exists: bool) -> bool:
    """Whether a patch may change ``path``: a file of the package, not a test, a test or
    build configuration or an interpreter hook; a new file only beside existing package
    modules (a directory with an ``__init__.py``)."""
    pure = PurePosixPath(path)
    spec = prepared.spec
    tests = [PurePosixPath(t) for t in spec.tests]
    if any(pure == t or t in pure.parents for t in tests):
        return False
    if pure.name in PROTECTED_NAMES or pure.suffix == ".pth":
        return False
    if pure.name.startswith("test_") or pure.name.endswith("_test.py"):
        return False
    if {"tests", "test", "testing"} & set(pure.parts[:-1]):
        return False
    if not exists:
        return (prepared.tree / pure.parent / "__init__.py").is_file()
    return True


def starting_files(prepared: PreparedRepo, instance: SWEInstance) -> dict[str, str | None]:
    """The files a task's starting tree has in place of the pristine ones (its bug)."""
    if not instance.bug_patch:
        return {}
    return apply_patch(_originals(prepared, instance.bug_patch, {}), instance.bug_patch)


def grade(
    prepared: PreparedRepo,
    instance: SWEInstance,
    patch: str,
    *,
    backend: str = "bwrap",
) -> Grade:
    """Grade ``patch`` (a diff of the task's starting tree) on ``instance``; see the module
    docstring. Raises VerifierError only when the grader itself cannot run."""
    start = starting_files(prepared, instance)
    try:
        parts = split_patch(patch)
    except PatchError as error:
        return _zero(f"the patch cannot be read: {error}")
    kept, dropped = [], []
    for part in parts:
        exists = part.path in start or (prepared.tree / part.path).is_file()
        (kept if writable_path(prepared, part.path, exists=exists) else dropped).append(part)
    changed: dict[str, str | None] = {}
    if kept:
        try:
            changed = apply_patch(
                _originals(prepared, "".join(p.text for p in kept), start),
                "".join(p.text for p in kept),
            )
        except PatchError as error:
            return _zero(str(error), dropped=[p.path for p in dropped])
    tampering = _screen(prepared, start, changed)
    dropped_paths = tuple(p.path for p in dropped)
    if tampering:
        return _zero(
            f"the patch adds references to the test harness or interpreter internals "
            f"({tampering}); a fix of the package needs none of them",
            dropped=dropped_paths,
            tampering=True,
        )
    files: dict[str, str | None] = {**start, **changed}
    if instance.test_patch:
        tests = apply_patch(_originals(prepared, instance.test_patch, files), instance.test_patch)
        files.update(tests)
    nonce = secrets.token_hex(6)
    files.update(_canaries(nonce))
    selected = [*instance.fail_to_pass, *instance.pass_to_pass]
    canary_pass, canary_fail = _canary_ids(nonce)
    report = _run(prepared, files, [*selected, canary_pass, canary_fail], backend)
    if not report.outcomes:
        _control_run(prepared, backend)
    if report.outcomes.get(canary_fail, None) is not None and report.passed(canary_fail):
        return _zero(
            "the test report was tampered with: a test that must fail was reported passed",
            report=report,
            dropped=dropped_paths,
            tampering=True,
        )
    return Grade(_verdict(instance, report, dropped_paths), report, dropped_paths)


def _originals(
    prepared: PreparedRepo, patch: str, start: Mapping[str, str | None]
) -> dict[str, str]:
    """The current text of every file ``patch`` touches that exists (for ``apply_patch``)."""
    found: dict[str, str] = {}
    for part in split_patch(patch):
        if part.path in start:
            text = start[part.path]
            if text is not None:
                found[part.path] = text
        elif (prepared.tree / part.path).is_file():
            found[part.path] = prepared.read(part.path)
    return found


def harness_references(source: str) -> dict[str, int]:
    """How often each of :data:`HARNESS_NAMES` occurs in ``source`` as a name or dotted
    name (in code: comments and strings count too, since ``__import__("pytest")`` hides a
    name in a string)."""
    counts: dict[str, int] = {}
    try:
        tokens = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)]
    except (tokenize.TokenError, SyntaxError, ValueError):
        tokens = re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", source)
    words = [w for token in tokens for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", token)]
    text = " ".join(tokens)
    for name in HARNESS_NAMES:
        if "." in name:
            counts[name] = text.count(name)
        else:
            counts[name] = sum(1 for word in words if word == name or word.lower() == name)
    return counts


def _screen(
    prepared: PreparedRepo, start: Mapping[str, str | None], changed: Mapping[str, str | None]
) -> str:
    """The harness names the changed files reference more often than they did ("" if none)."""
    added: set[str] = set()
    for path, text in changed.items():
        if text is None or not path.endswith(".py"):
            continue
        before_text = start.get(path)
        if before_text is None and path not in start and (prepared.tree / path).is_file():
            before_text = prepared.read(path)
        before = harness_references(before_text or "")
        after = harness_references(text)
        added |= {name for name, count in after.items() if count > before.get(name, 0)}
    return ", ".join(sorted(added))


def _canaries(nonce: str) -> dict[str, str | None]:
    body = (
        "# Written by the agentgym grader: one test must pass, one must fail.\n"
        f"def test_passes_{nonce}():\n    assert True\n\n\n"
        f"def test_fails_{nonce}():\n    assert False, 'the canary fails'\n"
    )
    return {f"{CANARY_DIR}/test_canary_{nonce}.py": body}


def _canary_ids(nonce: str) -> tuple[str, str]:
    path = f"{CANARY_DIR}/test_canary_{nonce}.py"
    return f"{path}::test_passes_{nonce}", f"{path}::test_fails_{nonce}"


def _run(
    prepared: PreparedRepo, files: Mapping[str, str | None], tests: Sequence[str], backend: str
) -> TestReport:
    timeout = min(MAX_TIMEOUT, BASE_TIMEOUT + SECONDS_PER_TEST * len(tests))
    try:
        with open_workspace(prepared, files, backend=backend) as box:
            return run_tests(box, prepared.spec, tests, timeout=timeout)
    except (InfrastructureError, OSError) as error:
        raise VerifierError(f"the SWE grader could not run the tests: {error}") from error


def _control_run(prepared: PreparedRepo, backend: str) -> None:
    """Raise VerifierError when the canaries do not run on the pristine repository either."""
    nonce = secrets.token_hex(6)
    canary_pass, canary_fail = _canary_ids(nonce)
    report = _run(prepared, _canaries(nonce), [canary_pass, canary_fail], backend)
    if not (report.passed(canary_pass) and not report.passed(canary_fail)):
        raise VerifierError(
            f"the SWE grader cannot run pytest in {prepared.spec.key}'s test environment "
            f"(a control run of two canary tests on the pristine repository gave "
            f"{sorted((n, o.outcome) for n, o in report.outcomes.items())}, exit code "
            f"{report.exit_code}): {report.output[-1500:]}"
        )


def _verdict(instance: SWEInstance, report: TestReport, dropped: tuple[str, ...]) -> Verdict:
    f2p = [t for t in instance.fail_to_pass if report.passed(t)]
    p2p = [t for t in instance.pass_to_pass if report.passed(t)]
    resolved = len(f2p) == len(instance.fail_to_pass) and len(p2p) == len(instance.pass_to_pass)
    still_failing = [t for t in instance.fail_to_pass if not report.passed(t)]
    broken = [t for t in instance.pass_to_pass if not report.passed(t)]
    details = (
        f"resolved: all {len(f2p)} failing tests now pass and {len(p2p)} other tests still do"
        if resolved
        else f"not resolved: {len(still_failing)} of {len(instance.fail_to_pass)} failing tests "
        f"still fail{_names(still_failing)}; {len(broken)} of {len(instance.pass_to_pass)} "
        f"passing tests broke{_names(broken)}"
    )
    if report.timed_out:
        details += "; the test run timed out"
    if dropped:
        details += f"; changes not counted (tests, configuration, hooks): {', '.join(dropped)}"
    return Verdict(
        1.0 if resolved else 0.0,
        resolved,
        _components(
            len(f2p) / max(1, len(instance.fail_to_pass)),
            len(p2p) / max(1, len(instance.pass_to_pass)) if instance.pass_to_pass else 1.0,
            len(dropped),
            tampering=False,
        ),
        details,
    )


def _names(tests: Sequence[str]) -> str:
    if not tests:
        return ""
    shown = ", ".join(tests[:3])
    return f" ({shown}{', ...' if len(tests) > 3 else ''})"


def _components(f2p: float, p2p: float, dropped: int, *, tampering: bool) -> dict[str, float]:
    return {
        "fail_to_pass": f2p,
        "pass_to_pass": p2p,
        "dropped_files": float(dropped),
        "tampering": 1.0 if tampering else 0.0,
    }


def _zero(
    why: str,
    *,
    report: TestReport | None = None,
    dropped: Sequence[str] = (),
    tampering: bool = False,
) -> Grade:
    verdict = Verdict(0.0, False, _components(0.0, 0.0, len(dropped), tampering=tampering), why)
    return Grade(verdict, report, tuple(dropped))
