"""Grading a patch: SWE-bench's semantics, with the known ways around it closed.

SWE-bench applies the model's patch, then the test patch, runs the FAIL_TO_PASS and
PASS_TO_PASS tests and calls the instance resolved when all of them pass. :func:`grade` does
the same in a fresh sandbox from the prepared repository, and holds the result to what only
the code under repair may change, in this order:

1. **Only the package's own files count.** The patch is split per file and only changes to
   files of the package are applied (:func:`writable_path`): a change to a test file, a
   ``conftest.py``, a pytest or tox configuration, ``setup.py``/``pyproject.toml``, a
   ``sitecustomize``/``usercustomize`` module or a ``.pth`` file is dropped, and so is a new
   file outside the package's existing directories (a top-level ``pytest.py`` would shadow
   pytest itself). The tests and their configuration are therefore the originals; the
   dropped paths are in the verdict. A patch that makes a symlink or a submodule, copies,
   renames or carries binary data scores 0 (``git apply`` would make the link, and reading
   it would read the grader's own files).
2. **A harness screen.** Code under test runs in pytest's process and could patch pytest
   itself. A patch that adds to a package file a reference, beyond what the file held at the
   start and in the pristine repository, to the test machinery (:data:`HARNESS_NAMES`) or to
   what reaches into the interpreter, runs a string as code or outlives the tests
   (:data:`CAPABILITY_NAMES`, :data:`CAPABILITY_PARTS`, :data:`IMPORTED_NAMES`) scores 0
   without a run: a bug fix needs none of them. This is a screen, not a proof (a string can
   be run as code in more ways than it names); ``docs/envs/swe.md`` says what it does not
   cover.
3. **The run is ours.** A fresh sandbox (no state from the episode: no environment
   variables, no background process, no files outside the working copy); pytest with the
   repository's ``addopts`` replaced, no cache provider, our plugins and no other (the
   agent's ``PYTEST_PLUGINS``/``PYTEST_ADDOPTS`` do not reach it); the tests selected by node
   id, and beside them two canary tests of ours under a random name, one that must pass and
   one that must fail. Only this run loads the guard, ``pytest_plugin/agentgym_swe_guard.py``
   (its docstring says what each defence closes; the agent's ``run_tests`` and the factory
   run without it). Before pytest imports any conftest or test module, the guard installs
   an audit hook that lets no code be compiled from the sandbox's writable places but the
   source the working copy held at the start. It keeps its own record of each test's
   outcome. When the session ends it leaves no process, finalizer or handler to rewrite the
   report, checks that no test file (nor a canary) changed, and ends the process at once,
   with 3 when it cannot vouch for the run.
4. **The report is read only when the run ended as it must** (:func:`_untrusted`). Results
   come from the JUnit XML, per test id; a test missing from it did not pass. The run scores
   0 when the guard speaks, when the failing canary is reported passed (the reporting was
   tampered with: a patch that makes every test "pass"), when pytest did not exit with 1 (as
   it does when a test fails, and the failing canary does), when either canary is missing or
   ended otherwise, or when the JUnit report disagrees with the guard's record.
5. **Infrastructure failure is not a 0.** A run that reports no test at all is followed by a
   control run of the canaries on the pristine repository; if that fails too, the grader
   raises :class:`~agentgym.errors.VerifierError` and the episode is errored, not scored. A
   sandbox killed for going over its memory limit is the code's doing: a 0, not an error.

Score: 1 when resolved (every FAIL_TO_PASS and PASS_TO_PASS test passes), else 0, as
SWE-bench; the fractions of each set that pass are the verdict's components (partial
credit for analysis, not reward).
"""

from __future__ import annotations

import ast
import functools
import io
import re
import secrets
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from agentgym.core import Verdict
from agentgym.envs.swe.instances import SWEInstance
from agentgym.envs.swe.patches import FilePatch, PatchError, apply_patch, split_patch
from agentgym.envs.swe.prepare import PreparedRepo
from agentgym.envs.swe.testrun import Guard, TestReport, run_tests
from agentgym.envs.swe.workspace import open_workspace
from agentgym.errors import InfrastructureError, SandboxFileNotFoundError, VerifierError
from agentgym.sandbox.base import ResourceLimitError

__all__ = [
    "CAPABILITY_NAMES",
    "CAPABILITY_PARTS",
    "HARNESS_NAMES",
    "IMPORTED_NAMES",
    "Grade",
    "grade",
    "harness_references",
    "starting_files",
    "writable_path",
]

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
UNSAFE_HEADERS = re.compile(
    r"^(?:(?:new file |deleted file |old |new )?mode (?!100644|100755)\d+"
    r"|index \S+ (?!100644|100755)\d+"
    r"|rename |copy |similarity index|dissimilarity index|GIT binary patch|Binary files )",
    re.MULTILINE,
)
CANARY_DIR = "agentgym_canary"
GUARD_RECORD = "/tmp/.agentgym-guard-record"
"""Where the guard writes each test's outcome as pytest reported it."""
TESTS_FAILED = 1
"""pytest's exit status when a test failed: a run with the failing canary always ends so."""
BASE_TIMEOUT = 60.0
SECONDS_PER_TEST = 2.0
MAX_TIMEOUT = 900.0


@dataclass(frozen=True)
class Grade:
    """A graded patch: the verdict and what the run saw (for people and tests)."""

    verdict: Verdict
    report: TestReport | None
    dropped: tuple[str, ...]


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
    unsafe = [part.path for part in parts if _unsafe(part)]
    if unsafe:
        return _zero(
            f"the patch makes a symlink or a submodule, copies, renames or carries binary "
            f"data ({', '.join(unsafe)}); a fix is a change of text files"
        )
    kept = "".join(part.text for part in parts if _counts(prepared, part, start))
    dropped = tuple(part.path for part in parts if not _counts(prepared, part, start))
    try:
        changed = _patched(prepared, kept, start)
    except (PatchError, UnicodeDecodeError) as error:
        return _zero(str(error), dropped=dropped)
    tampering = _screen(prepared, start, changed)
    if tampering:
        return _zero(
            f"the patch adds references to the test harness or interpreter internals "
            f"({tampering}); a fix of the package needs none of them",
            dropped=dropped,
            tampering=True,
        )
    files = {**start, **changed}
    files.update(_patched(prepared, instance.test_patch, files))
    canary_file, canaries = _canaries()
    selected = [*instance.fail_to_pass, *instance.pass_to_pass]
    report, record = _run(prepared, {**files, **canary_file}, [*selected, *canaries], backend)
    if not report.outcomes:
        _control_run(prepared, backend)
    why = _untrusted(report, record, selected, canaries)
    if why:
        return _zero(why, report=report, dropped=dropped, tampering=True)
    return Grade(_verdict(instance, report, dropped), report, dropped)


# ------------------------------------------------------------------- which changes count


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
    return _patched(prepared, instance.bug_patch, {})


def _unsafe(part: FilePatch) -> bool:
    """Whether a file's part of a patch does more than change, add or delete a text file."""
    header = "".join(
        line
        for line in part.text.splitlines(keepends=True)
        if not line.startswith(("+", "-", " ", "@", "\\"))
    )
    return UNSAFE_HEADERS.search(header) is not None


def _counts(prepared: PreparedRepo, part: FilePatch, start: Mapping[str, str | None]) -> bool:
    exists = part.path in start or (prepared.tree / part.path).is_file()
    return writable_path(prepared, part.path, exists=exists)


def _patched(
    prepared: PreparedRepo, patch: str, files: Mapping[str, str | None]
) -> dict[str, str | None]:
    """The files ``patch`` touches as it leaves them (``None``: deleted), applied to
    ``files`` over the pristine tree."""
    if not patch:
        return {}
    found: dict[str, str] = {}
    for part in split_patch(patch):
        if part.path in files:
            text = files[part.path]
            if text is not None:
                found[part.path] = text
        elif (prepared.tree / part.path).is_file():
            found[part.path] = prepared.read(part.path)
    return apply_patch(found, patch)


# --------------------------------------------------------------------- the harness screen

HARNESS_NAMES = (
    "pytest",
    "_pytest",
    "pluggy",
    "unittest",
    "junit",
    "conftest",
    "agentgym",
)
"""The test machinery: counted in code, comments and strings (``__import__("pytest")``
hides a name in a string), a name without underscores also as a part of a ``snake_case``
word (``pytest_runtest_makereport``, ``agentgym_canary``)."""
CAPABILITY_NAMES = (
    # loaded modules, imports by name or from anywhere, import hooks
    "sys.modules",
    "sys.path",
    "addsitedir",
    "builtins",
    "__builtins__",
    "__import__",
    "importlib",
    "pkgutil",
    "runpy",
    "zipimport",
    "pydoc",
    "meta_path",
    "path_hooks",
    "path_importer_cache",
    # the interpreter's insides: tracing, frames, code objects, every object
    "settrace",
    "setprofile",
    "_getframe",
    "addaudithook",
    "gc",
    "inspect",
    "ctypes",
    "cffi",
    "__traceback__",
    "tb_frame",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "__globals__",
    "__code__",
    "__closure__",
    "__dict__",
    "__subclasses__",
    "__bases__",
    "__base__",
    "__mro__",
    "__getattribute__",
    "attrgetter",
    "methodcaller",
    "get_field",
    "CodeType",
    "FunctionType",
    # strings run as code, objects found by name
    "timeit",
    "pdb",
    "bdb",
    "cProfile",
    "doctest",
    "codeop",
    "imp",
    "breakpoint",
    "get_type_hints",
    "ForwardRef",
    "__annotations__",
    "exec",
    "eval",
    "compile",
    "vars",
    "globals",
    "locals",
    "getattr",
    "setattr",
    "delattr",
    "pickle",
    "marshal",
    "copyreg",
    "shelve",
    "dill",
    # code that runs after the tests or beside them
    "atexit",
    "weakref",
    "__del__",
    "_exit",
    "signal",
    "faulthandler",
    "threading",
    "_thread",
    "multiprocessing",
    "concurrent",
    "subprocess",
    "pty",
    "fork",
    "forkpty",
    "system",
    "popen",
    "posix_spawn",
    "posix_spawnp",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
    "spawnv",
    "spawnve",
    "spawnvp",
    "spawnvpe",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "kill",
    "killpg",
    "QueueListener",
)
"""What reaches into the interpreter, runs a string as code or outlives the tests, counted
as names in code (a dotted name also in strings): ``compile``, ``eval``, ``exec``,
``vars``, ``globals`` and ``locals`` only when called bare
(``re.compile`` is not the builtin), ``getattr``, ``setattr`` and ``delattr`` only with an
attribute name that is not a string literal (``getattr(sys, "mod" + "ules")``); and any
name in code holding one of :data:`CAPABILITY_PARTS`."""
IMPORTED_NAMES = ("code", "profile", "trace", "site")
"""Modules that run strings as code and whose names are common words: counted only where
they are imported."""
CAPABILITY_PARTS = ("thread", "subprocess", "executor", "spawn")
"""Parts of names in code (any case) that start threads or processes: ``ThreadPoolExecutor``,
``to_thread``, ``run_in_executor``, ``create_subprocess_exec``."""
BARE_BUILTINS = frozenset({"compile", "eval", "exec", "vars", "globals", "locals"})
DYNAMIC_ATTRIBUTES = frozenset({"getattr", "setattr", "delattr"})


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = {
    name: re.compile(r"\b" + r"\s*\.\s*".join(name.split(".")) + r"\b")
    for name in CAPABILITY_NAMES
    if "." in name
}


def harness_references(source: str) -> dict[str, int]:
    """How often ``source`` refers to each of :data:`HARNESS_NAMES` (in code, comments and
    strings), :data:`CAPABILITY_NAMES`, :data:`CAPABILITY_PARTS` and
    :data:`IMPORTED_NAMES` (in code); see there for the rules. Only names that occur are
    in the result."""
    return dict(_references(source))


@functools.lru_cache(maxsize=256)
def _references(source: str) -> tuple[tuple[str, int], ...]:
    """:func:`harness_references`, remembered: a task's starting and pristine files are
    screened again at every grading, and a large module takes a tenth of a second."""
    names = (*HARNESS_NAMES, *CAPABILITY_NAMES, *IMPORTED_NAMES, *CAPABILITY_PARTS)
    counts = dict.fromkeys(names, 0)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        tokens = [
            tokenize.TokenInfo(tokenize.NAME, w, (0, 0), (0, 0), "") for w in _WORD.findall(source)
        ]
    previous, statement = "", ""
    for token in tokens:
        for word in _WORD.findall(token.string):
            parts = word.lower().split("_")
            for name in HARNESS_NAMES:
                if word.lower() == name or name in parts:
                    counts[name] += 1
        if token.type == tokenize.NAME:
            name = token.string
            statement = statement or name
            dynamic = name in BARE_BUILTINS or name in DYNAMIC_ATTRIBUTES
            if name in CAPABILITY_NAMES and (previous != "." or not dynamic):
                counts[name] += 1
            if name in IMPORTED_NAMES and statement in ("import", "from"):
                counts[name] += 1
            for part in CAPABILITY_PARTS:
                if part in name.lower():
                    counts[part] += 1
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            statement = ""
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = token.string
    for name, pattern in _DOTTED.items():
        counts[name] = len(pattern.findall(source))
    for name, literal in _literal_attribute_calls(source).items():
        counts[name] -= literal
    return tuple((name, count) for name, count in counts.items() if count > 0)


def _literal_attribute_calls(source: str) -> dict[str, int]:
    """How many calls ``getattr(obj, "literal", ...)`` (and ``setattr``, ``delattr``)
    ``source`` makes: attribute access spelled out, which the screen does not count."""
    found = dict.fromkeys(DYNAMIC_ATTRIBUTES, 0)
    if not any(name in source for name in DYNAMIC_ATTRIBUTES):
        return found
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return found
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in found
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found[node.func.id] += 1
    return found


def _screen(
    prepared: PreparedRepo, start: Mapping[str, str | None], changed: Mapping[str, str | None]
) -> str:
    """The harness names the changed files reference more often than they did, at the start
    and in the pristine repository ("" if none)."""
    added: set[str] = set()
    for path, text in changed.items():
        if text is None or not path.endswith(".py"):
            continue
        pristine = prepared.read(path) if (prepared.tree / path).is_file() else ""
        before = harness_references(pristine)
        for name, count in harness_references(start.get(path) or "").items():
            before[name] = max(count, before.get(name, 0))
        after = harness_references(text)
        added |= {name for name, count in after.items() if count > before.get(name, 0)}
    return ", ".join(sorted(added))


# --------------------------------------------------------------------------------- the run


def _canaries() -> tuple[dict[str, str | None], tuple[str, str]]:
    """Two tests of ours under a random name: their file, and the ids of the one that must
    pass and the one that must fail."""
    nonce = secrets.token_hex(6)
    path = f"{CANARY_DIR}/test_canary_{nonce}.py"
    body = (
        "# Written by the agentgym grader: one test must pass, one must fail.\n"
        f"def test_passes_{nonce}():\n    assert True\n\n\n"
        f"def test_fails_{nonce}():\n    assert False, 'the canary fails'\n"
    )
    return {path: body}, (f"{path}::test_passes_{nonce}", f"{path}::test_fails_{nonce}")


def _run(
    prepared: PreparedRepo, files: Mapping[str, str | None], tests: Sequence[str], backend: str
) -> tuple[TestReport, dict[str, str] | None]:
    """Run ``tests`` with the guard in a fresh sandbox holding ``files``: the report, and the
    guard's record of each test's outcome (``None`` without one; a sandbox killed for its
    memory gives a report without outcomes)."""
    timeout = min(MAX_TIMEOUT, BASE_TIMEOUT + SECONDS_PER_TEST * len(tests))
    guard = Guard(GUARD_RECORD, watched=(*prepared.spec.tests, CANARY_DIR, "conftest.py"))
    try:
        with open_workspace(prepared, files, backend=backend) as box:
            try:
                report = run_tests(box, prepared.spec, tests, timeout=timeout, guard=guard)
                return report, _guard_record(box.get_file(GUARD_RECORD))
            except SandboxFileNotFoundError:
                return report, None
            except ResourceLimitError as error:
                return TestReport({}, 137, False, 0.0, False, output=f"[{error}]"), None
    except (InfrastructureError, OSError) as error:
        raise VerifierError(f"the SWE grader could not run the tests: {error}") from error


def _guard_record(data: bytes) -> dict[str, str] | None:
    try:
        record = ast.literal_eval(data.decode("utf-8"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        return None
    if isinstance(record, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in record.items()
    ):
        return record
    return None


def _control_run(prepared: PreparedRepo, backend: str) -> None:
    """Raise VerifierError when the canaries do not run on the pristine repository either."""
    canary_file, (canary_pass, canary_fail) = _canaries()
    report, _ = _run(prepared, canary_file, [canary_pass, canary_fail], backend)
    if not (report.passed(canary_pass) and not report.passed(canary_fail)):
        raise VerifierError(
            f"the SWE grader cannot run pytest in {prepared.spec.key}'s test environment "
            f"(a control run of two canary tests on the pristine repository gave "
            f"{sorted((n, o.outcome) for n, o in report.outcomes.items())}, exit code "
            f"{report.exit_code}): {report.output[-1500:]}"
        )


# --------------------------------------------------------------- trusting the run's report


def _untrusted(
    report: TestReport,
    record: Mapping[str, str] | None,
    selected: Sequence[str],
    canaries: tuple[str, str],
) -> str:
    """Why a run's report is not the run's ("" when it is, or when the run reported nothing
    and the guard did not speak): the guard's word, the failing canary passed, an exit status
    other than pytest's for failed tests, a canary missing or with the wrong outcome, a test
    whose outcome in the JUnit report is not the one pytest reported to the guard."""
    said = re.findall(r"agentgym guard: (.*)", report.output)
    canary_pass, canary_fail = canaries
    failing = report.outcomes.get(canary_fail)
    differ = [t for t in (*selected, *canaries) if report.passed(t) != _passed(record, t)]
    if said:
        why = said[-1].strip()
    elif not report.outcomes:
        return ""
    elif report.passed(canary_fail):
        return "the test report was tampered with: a test that must fail was reported passed"
    elif report.exit_code != TESTS_FAILED:
        why = (
            f"pytest exited with {report.exit_code}, not {TESTS_FAILED} (a failing test, as "
            f"the failing canary is, ends a run with {TESTS_FAILED})"
        )
    elif not report.passed(canary_pass) or failing is None or failing.outcome != "failed":
        why = "the canary tests are missing from the report or did not end as they must"
    elif record is None:
        why = "the guard left no record of the run"
    elif differ:
        why = f"the JUnit report disagrees with pytest's own reports on {', '.join(differ[:3])}"
    else:
        return ""
    return f"the test run cannot be trusted: {why}"


def _passed(record: Mapping[str, str] | None, nodeid: str) -> bool:
    return record is not None and record.get(nodeid) == "passed"


# ----------------------------------------------------------------------------- the verdict


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
    elif not report.outcomes:
        details += f"; the run reported no test (exit code {report.exit_code})"
        if report.output.startswith("[") and "killed" in report.output:
            details += f": {report.output[1:-1]}"
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
