"""Code verification: hidden unit tests run against an agent's program, in a sandbox.

:func:`verify_code` takes the program an agent wrote and a :class:`CodeTests` (the hidden
tests) and returns a :class:`~agentgym.core.Verdict`: ``score`` is the fraction of hidden
tests passed, ``passed`` that all of them passed, ``components`` ``{"passed_tests",
"total_tests"}``, ``details`` a sentence (the first failing test, a timeout, a syntax error).
What the program does (crash, hang, fail, cheat) is a **score**; only a failure of the
machinery (no sandbox, the sandbox died, a broken test suite) raises
:class:`~agentgym.errors.VerifierError`.

>>> tests = CodeTests(cases=[("add(2, 3)", 5), ("add(-1, 1)", 0)], entry_point="add")
>>> verify_code("def add(a, b):\\n    return a + b\\n", tests).details
'all 2 hidden tests passed'

**Tests.** Four kinds, mixed freely; each item is one test:

* ``cases`` — ``(call expression, expected value)``: the expression's value must equal the
  expected plain data (floats within ``float_tolerance``). The expected values never enter the
  sandbox: the values come out and are compared here.
* ``asserts`` — blocks of statements (``assert add(2, 3) == 5``): pass when they raise
  nothing.
* ``test_source`` — a pytest/unittest-style module: each top-level ``test_*`` function (no
  arguments) and each ``test*`` method of a ``unittest.TestCase`` class is one test.
* ``io_cases`` — ``(stdin, expected stdout)`` for programs that read input and print: the
  program runs as a script, must exit 0, and its stdout must match (trailing whitespace aside).

``setup`` (imports, helpers) runs once before the tests, in their namespace; there the
program's functions are bound by name, ``candidate`` names ``entry_point`` (HumanEval's
convention), and ``import solution`` gives the program as a module.

**Why this design** (SWE-bench-style log hardening, and then some). Graders that run the
tests in the program's process and read its output can be fooled: the program prints
``PASSED``, exits 0 before the tests run, rewrites the test file, patches the runner,
returns an object whose ``__eq__`` is always true, or reads the expected values from the test
code around it. Here the **tests never run in the program's process**:

1. Every verification takes a **fresh sandbox** (a new one, or a fresh one from a
   :class:`~agentgym.sandbox.SandboxPool`, which never hands a sandbox out twice): nothing a
   previous program left behind — a daemon, a planted file — can be there. Limits: wall clock
   (``timeout`` in all, ``case_timeout`` per test), CPU seconds, memory, processes, disk and
   output (:func:`code_sandbox_spec`), so an infinite loop or a fork bomb scores 0 and the
   host does not notice.
2. A trusted **judge** process (:data:`HARNESS`, run as ``python -I``) gets the tests and a
   per-run random **nonce** on stdin: they are never written to a file. It first makes itself
   undumpable (``PR_SET_DUMPABLE``), so no process of its uid can ptrace it or open its
   memory, environment or file descriptors under ``/proc``.
3. The program runs in a separate **worker** process. The tests run in the judge, where the
   program's functions are proxies: a call sends its arguments to the worker as plain data
   (numbers, strings, lists, tuples, dicts, sets, bytes, None) and gets plain data back, so
   the program never sees a test's code or expected value and cannot hand back an object
   that lies. If the worker dies, hangs, or writes anything but an answer, that test fails
   (and the worker is killed with every process it left, then restarted for the next test).
4. The judge writes its outcome as one nonce-tagged JSON line on its own stdout, which no
   other process holds. The verifier accepts it only if the ``started`` line, the ``result``
   line, the judge's exit code (0, not timed out) and the number of outcomes (one per test
   sent) all agree. A program that kills or stops the judge gets 0; it cannot make the
   verification *error* (which would exclude the episode instead of failing it).
5. Call cases and input/output cases are compared here, on the host, with the expected values
   the sandbox never saw.

What it cannot do: tests must talk to the program through plain data (a test that passes a
callback, mutates an argument in place, or receives an instance of the program's own class
fails with a message saying so); the program can see the hidden tests' *inputs* (the
arguments it is called with). Threat model of the sandbox itself: ``docs/sandbox.md``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import reprlib
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym.core import Verdict
from agentgym.errors import SandboxError, UsageError, VerifierError
from agentgym.sandbox import ExecResult, Limits, Sandbox, SandboxPool, SandboxSpec, create
from agentgym.sandbox.base import check_timeout
from agentgym.task_env import clean_text

# The host reads the judge's values with the harness's own codec, so the two cannot drift
# (importing it runs nothing: the judge starts only as __main__).
from agentgym.verifiers import code_harness as _CODEC

__all__ = [
    "HARNESS",
    "CodeTestReport",
    "CodeTests",
    "TestOutcome",
    "code_sandbox_spec",
    "is_plain",
    "judge_argv",
    "judge_input",
    "read_judge",
    "run_code_tests",
    "same_value",
    "verify_code",
]

MiB = 1 << 20
MAX_PROGRAM_BYTES = 1 * MiB
HARNESS_MARGIN = 3.0
"""Seconds the judge gets beyond ``timeout`` to start and report before the run is cut."""


@dataclass(frozen=True)
class CodeTests:
    """Hidden tests of one programming task (see the module docstring for the kinds).

    Attributes:
        cases: ``(call expression, expected value)`` pairs, e.g. ``("add(2, 3)", 5)``.
        asserts: statement blocks, each one test, e.g. ``"assert add(2, 3) == 5"``.
        test_source: a module of ``test_*`` functions and/or ``unittest.TestCase`` classes.
        io_cases: ``(stdin, expected stdout)`` pairs; the program runs as a script.
        setup: code run once, before the tests, in their namespace (imports, helpers).
        entry_point: the function under test; the tests may also call it ``candidate``.
        case_timeout: wall-clock seconds each test may take.
        float_tolerance: relative and absolute tolerance for floats in ``cases``.
    """

    cases: Sequence[tuple[str, Any]] = ()
    asserts: Sequence[str] = ()
    test_source: str = ""
    io_cases: Sequence[tuple[str, str]] = ()
    setup: str = ""
    entry_point: str | None = None
    case_timeout: float = 3.0
    float_tolerance: float = 1e-6
    _plan: tuple[_Planned, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("cases", "asserts", "io_cases"):
            value = getattr(self, name)
            if isinstance(value, str | bytes) or not isinstance(value, Sequence):
                raise UsageError(f"CodeTests.{name} must be a list, got {type(value).__name__}")
            object.__setattr__(self, name, tuple(value))
        for name in ("test_source", "setup"):
            if not isinstance(getattr(self, name), str):
                raise UsageError(f"CodeTests.{name} must be a str of Python source")
        if self.entry_point is not None and not (
            isinstance(self.entry_point, str) and self.entry_point.isidentifier()
        ):
            raise UsageError(f"CodeTests.entry_point must be a name, got {self.entry_point!r}")
        check_timeout(self.case_timeout, "CodeTests.case_timeout")
        if not isinstance(self.float_tolerance, int | float) or self.float_tolerance < 0:
            raise UsageError(
                f"CodeTests.float_tolerance must be >= 0, got {self.float_tolerance!r}"
            )
        _parse(self.setup, "exec", "CodeTests.setup")
        plan = [*self._plan_cases(), *self._plan_asserts(), *self._plan_source()]
        plan += self._plan_io()
        if not plan:
            raise UsageError("CodeTests has no tests: give cases, asserts, test_source or io_cases")
        object.__setattr__(self, "_plan", tuple(plan))

    def __len__(self) -> int:
        """How many hidden tests there are."""
        return len(self._plan)

    def _plan_cases(self) -> Iterator[_Planned]:
        for index, case in enumerate(self.cases):
            if not (isinstance(case, tuple | list) and len(case) == 2):
                raise UsageError(
                    f"CodeTests.cases[{index}] must be a (call expression, expected) pair, got "
                    f"{case!r:.100}"
                )
            call, expected = case
            _parse(call, "eval", f"CodeTests.cases[{index}][0]")
            try:
                _CODEC.encode(expected)
            except (TypeError, ValueError, RecursionError) as error:
                raise UsageError(
                    f"CodeTests.cases[{index}]: the expected value {expected!r:.80} is not plain "
                    f"data ({error}); use numbers, strings, lists, tuples, dicts, sets, bytes, "
                    f"None"
                ) from None
            yield _Planned("call", _shorten(call), {"code": call}, expected)

    def _plan_asserts(self) -> Iterator[_Planned]:
        for index, block in enumerate(self.asserts):
            _parse(block, "exec", f"CodeTests.asserts[{index}]")
            first = next((line.strip() for line in block.splitlines() if line.strip()), "")
            yield _Planned("assert", _shorten(first), {"code": block})

    def _plan_source(self) -> Iterator[_Planned]:
        if not self.test_source.strip():
            return
        module = _parse(self.test_source, "exec", "CodeTests.test_source")
        assert isinstance(module, ast.Module)  # what ast.parse gives in "exec" mode
        found = 0
        for node in module.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test"
            ):
                if node.args.args or node.args.posonlyargs or node.args.kwonlyargs:
                    raise UsageError(
                        f"CodeTests.test_source: {node.name}() takes arguments (pytest "
                        f"fixtures are not supported); write test functions without arguments"
                    )
                found += 1
                yield _Planned("function", node.name, {"name": node.name})
            elif isinstance(node, ast.ClassDef) and any(
                _name_of(base).endswith("TestCase") for base in node.bases
            ):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                        found += 1
                        label = f"{node.name}.{item.name}"
                        yield _Planned("method", label, {"cls": node.name, "name": item.name})
        if not found:
            raise UsageError(
                "CodeTests.test_source defines no tests: write top-level test_* functions or "
                "unittest.TestCase classes with test* methods"
            )

    def _plan_io(self) -> Iterator[_Planned]:
        for index, case in enumerate(self.io_cases):
            if not (
                isinstance(case, tuple | list)
                and len(case) == 2
                and all(isinstance(part, str) for part in case)
            ):
                raise UsageError(
                    f"CodeTests.io_cases[{index}] must be a (stdin, expected stdout) pair of "
                    f"str, got {case!r:.100}"
                )
            yield _Planned("io", f"input {_shorten(case[0], 60)!r}", {"stdin": case[0]}, case[1])


@dataclass(frozen=True)
class _Planned:
    """One hidden test as the verifier keeps it: what to send, what to expect."""

    kind: str
    label: str
    sent: dict[str, Any]
    expected: Any = None


@dataclass(frozen=True)
class TestOutcome:
    """How one test went: ``problem`` says what was wrong (empty when it passed)."""

    __test__ = False  # a result, not a pytest test class

    label: str
    passed: bool
    problem: str = ""

    def __post_init__(self) -> None:
        # The problem quotes what the program raised or printed: it reaches the agent and the
        # ledger, so it must hold only text they can encode (no lone surrogate, no NUL).
        object.__setattr__(self, "problem", clean_text(self.problem))

    @property
    def message(self) -> str:
        """The test and its problem, as a sentence: ``add(2, 3) returned 6, expected 5``."""
        joint = " " if self.problem.startswith("returned") else ": "
        return f"{self.label}{joint}{self.problem}" if self.problem else f"{self.label}: passed"


@dataclass(frozen=True)
class CodeTestReport:
    """Every test's outcome, and the verdict they make."""

    outcomes: tuple[TestOutcome, ...]
    problem: str = ""  # why no test could run (a syntax error, a program too large), if so

    @property
    def passed_tests(self) -> int:
        return sum(outcome.passed for outcome in self.outcomes)

    def verdict(self) -> Verdict:
        """Score = fraction passed; details = the first failure (or the problem)."""
        total, passed = len(self.outcomes), self.passed_tests
        components = {"passed_tests": float(passed), "total_tests": float(total)}
        problems = {outcome.problem for outcome in self.outcomes}
        if self.problem or (not passed and len(problems) == 1):  # one cause failed them all
            details = f"0 of {total} hidden tests passed: {self.problem or problems.pop()}"
        elif passed == total:
            details = f"all {total} hidden tests passed"
        else:
            first = next(outcome for outcome in self.outcomes if not outcome.passed)
            details = f"{passed} of {total} hidden tests passed; first failure: {first.message}"
        return Verdict(passed / total, passed == total, components, details)


def code_sandbox_spec(timeout: float = 10.0, *, memory: int = 1024 * MiB) -> SandboxSpec:
    """The sandbox a verification runs in: limits sized for one program and its tests.

    Build a pool with it for throughput: ``SandboxPool(code_sandbox_spec(), size=4)``.
    """
    return SandboxSpec(
        limits=Limits(
            timeout=timeout + HARNESS_MARGIN,
            memory=memory,
            cpu_seconds=math.ceil(timeout) + 5,
            processes=64,
            file_size=16 * MiB,
            open_files=256,
            disk=128 * MiB,
            output=64 * MiB,
        )
    )


def verify_code(
    program: str,
    tests: CodeTests,
    *,
    sandbox: SandboxPool | SandboxSpec | None = None,
    timeout: float = 10.0,
    backend: str = "auto",
) -> Verdict:
    """Run the hidden ``tests`` against ``program`` in a fresh sandbox; see the module docstring.

    Args:
        program: the agent's Python source.
        tests: the hidden tests.
        sandbox: where to run: ``None`` (a new sandbox from :func:`code_sandbox_spec`), a
            :class:`~agentgym.sandbox.SandboxSpec` (a new sandbox from it), or a
            :class:`~agentgym.sandbox.SandboxPool` (a fresh sandbox from the pool).
        timeout: wall-clock seconds for the whole test run.
        backend: the sandbox backend when ``sandbox`` is not a pool.

    Raises:
        VerifierError: the tests could not be run or judged (never for what the program does).
    """
    return run_code_tests(
        program, tests, sandbox=sandbox, timeout=timeout, backend=backend
    ).verdict()


def run_code_tests(
    program: str,
    tests: CodeTests,
    *,
    sandbox: SandboxPool | SandboxSpec | None = None,
    timeout: float = 10.0,
    backend: str = "auto",
) -> CodeTestReport:
    """:func:`verify_code`, with every test's outcome (for feedback on visible examples)."""
    if not isinstance(program, str):
        raise UsageError(
            f"the program must be a str of Python source, got {type(program).__name__}"
        )
    if not isinstance(tests, CodeTests):
        raise UsageError(f"tests must be a CodeTests, got {type(tests).__name__}")
    check_timeout(timeout)
    plan = tests._plan
    problem = _unrunnable(program)
    if problem:
        return CodeTestReport(tuple(TestOutcome(t.label, False, problem) for t in plan), problem)
    nonce = secrets.token_hex(16)
    with _fresh_sandbox(sandbox, timeout, backend) as box:
        run = judge_input(
            program, tests, nonce, timeout, purge=box.own_user, output=box.spec.limits.output
        )
        try:
            result = box.exec(judge_argv(), stdin=run, timeout=timeout + HARNESS_MARGIN)
        except SandboxError as error:
            raise VerifierError(f"the sandbox failed while the tests ran: {error}") from error
    return read_judge(tests, result, nonce, timeout)


def _complete(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def judge_argv(python: str = "python3") -> list[str]:
    """The judge's command line: ``python -I`` (no environment, no script directory on
    ``sys.path``, so nothing the program writes can be imported by the judge)."""
    return [python, "-I", "-c", HARNESS, "judge"]


def judge_input(
    program: str,
    tests: CodeTests,
    nonce: str,
    timeout: float,
    purge: bool,
    output: int = 64 * MiB,
) -> str:
    """What the judge reads on stdin: the nonce, the program, the tests and the limits.

    ``purge`` lets the judge kill every process of its uid but itself between tests: only in
    a sandbox whose uid is its own. ``output`` is the bytes of stdout the sandbox keeps: the
    judge keeps its record of values and outputs within half of it, so the result line is
    never cut.
    """
    return json.dumps(
        {
            "nonce": nonce,
            "harness": HARNESS,
            "program": program,
            "tests": [{"kind": t.kind, **t.sent} for t in tests._plan],
            "setup": f"{tests.setup}\n{tests.test_source}",
            "entry_point": tests.entry_point,
            "timeout": float(timeout),
            "case_timeout": float(min(tests.case_timeout, timeout)),
            "purge": purge,
            "record_budget": output // 2,
        }
    )


# --------------------------------------------------------------------------- reading the judge


def read_judge(tests: CodeTests, result: ExecResult, nonce: str, timeout: float) -> CodeTestReport:
    """Cross-check the judge's lines, exit code and outcome count; compare values."""
    plan = tests._plan
    lines: dict[str, str] = {}
    for line in result.stdout.splitlines():
        tag, _, rest = line.partition(" ")
        if tag == nonce:
            kind, _, body = rest.partition(" ")
            lines.setdefault(kind, body)
    if "crash" in lines:
        raise VerifierError(f"the code-test harness crashed: {lines['crash'][-2000:]}")
    if "started" not in lines:
        raise VerifierError(
            f"the code-test harness did not start in the sandbox (exit code {result.exit_code}"
            f"{', timed out' if result.timed_out else ''}): {result.stderr.strip()[-500:]!r}"
        )
    if "result" not in lines or (result.truncated and not _complete(lines["result"])):
        if result.truncated:
            return _all_failed(
                plan, "the program's values or output overflowed what the sandbox keeps"
            )
        why = (
            f"the tests did not finish within {timeout:g} s"
            if result.timed_out
            else f"the test harness was killed (exit code {result.exit_code})"
        )
        return _all_failed(plan, f"{why}: the program stopped or killed the tests")
    try:
        record = json.loads(lines["result"])
        outcomes = record["results"]
        if len(outcomes) != len(plan) or not all(isinstance(o, dict) for o in outcomes):
            raise ValueError("one outcome per test")
    except RecursionError:  # the program's values, nested as deep as the judge allows
        return _all_failed(plan, "the program's values nest too deeply to be read")
    except (ValueError, KeyError, TypeError):
        raise VerifierError(
            f"the code-test harness reported an unreadable result for {len(plan)} tests: "
            f"{lines['result'][:300]!r}"
        ) from None
    if result.exit_code != 0 or result.timed_out:
        return _all_failed(
            plan, f"the test harness exited with code {result.exit_code} after reporting"
        )
    setup_error = record.get("setup_error")
    if setup_error and not setup_error.get("program_called"):
        raise VerifierError(
            f"the hidden tests' setup raised {setup_error.get('error')} before calling the "
            f"program: the tests are broken"
        )
    judged = [_judged(t, o, tests.float_tolerance) for t, o in zip(plan, outcomes, strict=True)]
    if setup_error:
        reason = f"the tests' setup failed calling the program: {setup_error.get('error')}"
        return CodeTestReport(tuple(TestOutcome(t.label, False, reason) for t in plan))
    return CodeTestReport(tuple(judged))


def _judged(test: _Planned, outcome: dict[str, Any], tolerance: float) -> TestOutcome:
    """One test's outcome. Whatever the program's values make the comparison or the message
    raise here, on the host, fails that test: the program can lose, never error the run."""
    try:
        return _judge_one(test, outcome, tolerance)
    except Exception as error:  # the program's values reach no further
        why = f"{type(error).__name__}: {_shorten(_safe_str(error))}"
        return TestOutcome(test.label, False, f"its result could not be judged ({why})")


def _judge_one(test: _Planned, outcome: dict[str, Any], tolerance: float) -> TestOutcome:
    status, error = outcome.get("status"), outcome.get("error") or ""
    label = test.label
    if test.kind == "call" and status == "value":
        try:
            actual = _CODEC.decode(outcome.get("value"))
        except (ValueError, TypeError, RecursionError):
            return TestOutcome(label, False, "returned a value that could not be read")
        if same_value(actual, test.expected, tolerance):
            return TestOutcome(label, True)
        got, wanted = _shorten(_show(actual)), _shorten(_show(test.expected))
        return TestOutcome(label, False, f"returned {got}, expected {wanted}")
    if test.kind == "io" and status == "output":
        stdout, code = str(outcome.get("stdout", "")), outcome.get("exit_code")
        if code != 0:
            said = _shorten(outcome.get("stderr") or "")
            return TestOutcome(label, False, f"exit code {code}: {said}")
        if _lines(stdout) == _lines(test.expected):
            return TestOutcome(label, True)
        printed, wanted = _shorten(stdout), _shorten(test.expected)
        return TestOutcome(label, False, f"printed {printed!r}, expected {wanted!r}")
    if status == "passed" and test.kind not in ("call", "io"):
        return TestOutcome(label, True)
    if status == "not_run":
        return TestOutcome(label, False, f"not run: {error}")
    if status == "failed":
        return TestOutcome(label, False, f"failed ({error})")
    return TestOutcome(label, False, error or f"unexpected outcome {status!r}")


def is_plain(value: Any) -> bool:
    """Whether ``value`` is plain data the tests can pass to a program and compare."""
    try:
        _CODEC.encode(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def same_value(actual: Any, expected: Any, tolerance: float = 1e-6) -> bool:
    """Python's ``==`` on plain data, but floats agree within ``tolerance`` (an int too large
    for a float, ``10**400``, agrees with no float)."""
    numbers = (int, float)
    if isinstance(expected, float) or isinstance(actual, float):
        if not (isinstance(actual, numbers) and isinstance(expected, numbers)):
            return False
        if isinstance(actual, bool) or isinstance(expected, bool):
            return actual == expected
        try:
            actual, expected = float(actual), float(expected)
        except OverflowError:
            return False
        if math.isnan(actual) or math.isnan(expected):
            return math.isnan(actual) and math.isnan(expected)
        return math.isclose(actual, expected, rel_tol=tolerance, abs_tol=tolerance)
    if type(expected) in (list, tuple):
        return (
            type(actual) is type(expected)
            and len(actual) == len(expected)
            and all(same_value(a, e, tolerance) for a, e in zip(actual, expected, strict=True))
        )
    if type(expected) is dict:
        return (
            type(actual) is dict
            and actual.keys() == expected.keys()
            and all(same_value(actual[k], expected[k], tolerance) for k in expected)
        )
    return bool(actual == expected)


# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def _fresh_sandbox(
    sandbox: SandboxPool | SandboxSpec | None, timeout: float, backend: str
) -> Iterator[Sandbox]:
    """A sandbox no other program has run in, closed afterwards."""
    if isinstance(sandbox, Sandbox):
        raise UsageError(
            "verify_code() takes a SandboxPool, a SandboxSpec or None, not a live Sandbox: a "
            "sandbox that already ran code may hold processes that tamper with the tests"
        )
    if sandbox is not None and not isinstance(sandbox, SandboxPool | SandboxSpec):
        raise UsageError(
            f"sandbox must be a SandboxPool, a SandboxSpec or None, got {type(sandbox).__name__}"
        )
    try:
        if isinstance(sandbox, SandboxPool):
            box = sandbox.acquire()
        else:
            box = create(sandbox or code_sandbox_spec(timeout), backend=backend)
    except SandboxError as error:
        raise VerifierError(f"could not get a sandbox to run the tests in: {error}") from error
    try:
        yield box
    finally:
        if isinstance(sandbox, SandboxPool):
            sandbox.release(box)  # which closes it: a pool never hands a sandbox out twice
        else:
            box.close()


def _unrunnable(program: str) -> str:
    """Why the program cannot be run at all (checked on the host: parsing runs nothing)."""
    size = len(program.encode("utf-8", "surrogatepass"))
    if size > MAX_PROGRAM_BYTES:
        return f"the program is {size} bytes long; the limit is {MAX_PROGRAM_BYTES}"
    try:
        ast.parse(program)
    except SyntaxError as error:
        return f"the program has a syntax error (line {error.lineno}: {error.msg})"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"the program cannot be parsed ({type(error).__name__}: {error})"
    return ""


def _parse(source: Any, mode: str, what: str) -> ast.AST:
    if not isinstance(source, str):
        raise UsageError(f"{what} must be a str of Python source, got {type(source).__name__}")
    try:
        return ast.parse(source, mode=mode)
    except SyntaxError as error:
        kind = "a valid expression" if mode == "eval" else "valid Python statements"
        raise UsageError(
            f"{what} is not {kind}: {error.msg} (line {error.lineno}) in {source!r:.120}"
        ) from None


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _all_failed(plan: Sequence[_Planned], reason: str) -> CodeTestReport:
    return CodeTestReport(tuple(TestOutcome(t.label, False, reason) for t in plan), reason)


def _lines(text: str) -> list[str]:
    """Output compared line by line, trailing whitespace and trailing blank lines aside."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


class _Shown(reprlib.Repr):
    """``repr`` for values ``repr`` refuses: an int over ``str()``'s 4,300 digits."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 14_000:
            return f"<an int of about {int(x.bit_length() * math.log10(2)) + 1} digits>"
        return super().repr_int(x, level)


_SHOWN = _Shown()
_SHOWN.maxlevel, _SHOWN.maxother = 8, 120


def _show(value: Any) -> str:
    """``repr(value)`` for a message; a short stand-in where ``repr`` raises."""
    try:
        return repr(value)
    except (ValueError, RecursionError):
        return _SHOWN.repr(value)


def _safe_str(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # its args may be a program's 5,000-digit int
        return "(no message)"


def _shorten(text: str, limit: int = 120) -> str:
    text = " ".join(str(text).split()) if "\n" in str(text) else str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- the harness

HARNESS = Path(_CODEC.__file__).read_text(encoding="utf-8")
"""The judge and worker that run inside the sandbox (``python -I -c HARNESS judge``)."""
