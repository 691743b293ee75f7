"""The grader's guard: a pytest plugin loaded (``-p agentgym_swe_guard``) into the SWE
family's grading runs only; the agent's ``run_tests`` tool and the task factory run without it.

The code under test runs in pytest's process. Besides failing a test, it can act on the run
itself: leave a process, a ``__del__``, a suspended generator or an ``atexit`` handler that
rewrites the JUnit report after pytest has written it; patch a standard-library module that
pytest writes the report with; write a module at run time and import it. Each defence
below closes one of these routes (``tests/swe/test_attacks.py`` tries each):

* **Its own record of the outcomes.** Each test's outcome as pytest reported it (the worst
  of setup, call and teardown) is written to ``--agentgym-guard-record`` as a dict's
  ``repr``. Only builtins write it, and the code under test cannot patch those as it can a
  module of the standard library. The grader trusts the JUnit report only where the record
  agrees with it.
* **Only the source the working copy held at the start is compiled.** An audit hook, which
  cannot be removed, watches the places the code under test can write: the working copy,
  ``/tmp``, ``/work``, ``/dev/shm`` and ``/var/tmp``. From there it refuses to compile any
  source that is not the text of a file the working copy held when the guard was armed, or
  a part of one (a traceback parses one line to show it). It also refuses to write or load
  bytecode or an extension module there, and to open a process's memory
  (``/proc/self/mem``, or a link to it), through which code could rewrite any object. A
  module written during the run, for example from an encoded string, would otherwise run
  code that the grader's screen of the patch never saw.
* **Nothing runs after the report.** When the session finishes, before pytest's JUnit
  plugin writes the report, the guard does four things. It runs the pending finalizers and
  stops the garbage collector, so no ``__del__`` or generator ``finally`` can run later.
  It kills every other process of the sandbox's user, so no child is left to rewrite the
  report. It deletes anything already at the report's or the record's path, because a
  forged read-only file would otherwise stay. And it checks that no watched file changed
  and that no ``.py`` file was added under the watched paths (``--agentgym-guard-watch``:
  the tests, the canaries, the root ``conftest.py``). Once pytest is done, after every
  plugin's ``pytest_unconfigure``, the guard ends the process at once with ``os._exit``.
  It does so even when an earlier ``pytest_unconfigure`` raised; without the guard, pytest
  would then end as Python does and run finalizers and ``atexit`` handlers. The exit status
  is pytest's. It is 3 instead, with a line ``agentgym guard: <why>`` on standard error,
  when the session did not finish, the record was not written, a ``pytest_unconfigure``
  failed or a check failed.
* **pytest is as it was, and its plugins are its own.** When the guard is armed it notes
  every function and class of pytest's and pluggy's modules, and every function and
  descriptor of their classes, by where each is bound. When the session finishes, any of
  them replaced, removed or added (``Function.runtest``, ``TestReport.from_item_and_call``)
  is a problem, except the few that pytest sets itself once it runs
  (:data:`PYTESTS_OWN`). So is a hook implementation whose code is in the working copy but
  not in a ``conftest.py`` (a plugin the code under test registered), or whose code it
  cannot find. The grader's canaries catch a patch of pytest that spares no test; this
  catches one aimed at a few (the task's failing tests) that leaves its patch in place. A
  patch undone before the session ends is not seen here; it is the screen's to refuse.
* **Its tools are its own.** The functions it relies on (``os._exit``, ``os.kill``,
  ``open``, ``gc.collect``...) are bound when it is imported, before any code under test
  runs. Replacing them in their modules later does not reach the guard.

**When it is armed.** pytest imports ``-p`` plugins first, then the entry-point plugins of
the test environment (installed, read-only code), and then parses the options of them all.
``pytest_load_initial_conftests`` is the first hook after that parse, and the guard is armed
there, ``tryfirst``: it takes its snapshots and installs the audit hook before pytest
imports any conftest or test module, so before any code of the working copy runs. Its
options, which ``testrun.pytest_argv`` writes from a ``testrun.Guard``, are
``--agentgym-guard-record=PATH`` and ``--agentgym-guard-watch=PATH`` (repeated, relative to
the working copy, which is pytest's ``--rootdir``). A run without a record path is a usage
error.

The guard runs inside the sandbox, in the repository's own test environment, so it imports
only the standard library and pytest.
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
import types
from collections.abc import Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:  # names for the type checker only: nothing more is imported in the sandbox
    from typing import TypedDict, TypeGuard

    import pluggy

    class _State(TypedDict):
        record: str
        root: str
        watched: tuple[str, ...]
        before: dict[str, str]
        machinery: dict[tuple[str, str], object]
        session: pytest.Session | None
        written: bool
        problem: str


_T = TypeVar("_T")

ELSEWHERE_WRITABLE = ("/tmp/", "/work/", "/dev/shm/", "/var/tmp/")
"""The sandbox's writable places besides the working copy."""
RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
COMPILED = (".pyc", ".pyo", ".so", ".pyd")
WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
SKIPPED = ("__pycache__", ".hypothesis", ".pytest_cache")
UNTRUSTED = 3
"""The exit status of a run the guard does not vouch for."""

MACHINERY = ("pytest", "_pytest", "pluggy")
"""The packages whose functions and classes run a test and report its outcome."""
DESCRIPTORS = (classmethod, staticmethod, property)
PYTESTS_OWN = {
    **dict.fromkeys(
        ("makedir", "fspath", "startdir", "invocation_dir", "rootdir", "inifile"),
        "legacypath.py",
    ),
    "_getini_unknown_type": "legacypath.py",
    "RUNNER_CLASS": "doctest.py",
    "CHECKER_CLASS": "doctest.py",
}
"""What pytest sets on its own modules and classes once it runs (after the guard is armed),
by name, and the file of pytest the new value's code is in."""

_exit, _kill, _write, _getpid, _getuid = os._exit, os.kill, os.write, os.getpid, os.getuid
_modules, _vars, _callable, _isinstance, _type = sys.modules, vars, callable, isinstance, type
_function, _method = types.FunctionType, types.MethodType
_open, _listdir, _scandir, _sha256 = open, os.listdir, os.scandir, hashlib.sha256
_lexists, _unlink, _isdir = os.path.lexists, os.unlink, os.path.isdir
_realpath = os.path.realpath
_streams, _collect, _no_more_collections = (sys.stdout, sys.stderr), gc.collect, gc.disable
_state: _State = {
    "record": "",
    "root": "",
    "watched": (),
    "before": {},
    "machinery": {},
    "session": None,
    "written": False,
    "problem": "",
}
_outcomes: dict[str, str] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentgym")
    group.addoption(
        "--agentgym-guard-record",
        metavar="PATH",
        help="where the guard writes each test's outcome as pytest reported it",
    )
    group.addoption(
        "--agentgym-guard-watch",
        action="append",
        default=[],
        metavar="PATH",
        help="a file or folder (relative to --rootdir) whose files must not change",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    options = early_config.known_args_namespace
    if not options.agentgym_guard_record:
        raise pytest.UsageError("-p agentgym_swe_guard needs --agentgym-guard-record=PATH")
    root = str(early_config.rootpath)
    _state["record"] = options.agentgym_guard_record
    _state["watched"] = tuple(os.path.join(root, path) for path in options.agentgym_guard_watch)
    _state["before"] = _snapshot()
    _state["root"] = os.path.join(root, "")
    _state["machinery"] = _machinery()
    code = _files(root, {}, lambda data: data)
    sys.addaudithook(_audit_hook((os.path.join(root, ""), *ELSEWHERE_WRITABLE), code))


def _digest(data: bytes) -> str:
    return _sha256(data).hexdigest()


def _files(
    path: str, found: dict[str, _T | str], read: Callable[[bytes], _T]
) -> dict[str, _T | str]:
    """What each file under ``path`` holds (``read`` of its bytes, ``"unreadable"`` where
    they cannot be read), caches left out."""
    try:
        entries = list(_scandir(path))
    except NotADirectoryError:
        entries = None
    except FileNotFoundError:
        return found
    if entries is None:
        with _open(path, "rb") as data:
            found[path] = read(data.read())
        return found
    for entry in entries:
        if entry.name in SKIPPED or entry.name.endswith(".pyc"):
            continue
        if entry.is_dir(follow_symlinks=False):
            _files(entry.path, found, read)
        else:
            try:
                with _open(entry.path, "rb") as data:
                    found[entry.path] = read(data.read())
            except OSError:
                found[entry.path] = "unreadable"
    return found


def _snapshot() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in _state["watched"]:
        _files(path, found, _digest)
    return found


def _refuse(why: str) -> None:
    _state["problem"] = _state["problem"] or why
    raise PermissionError("agentgym guard: " + why)


def _audit_hook(
    writable: tuple[str, ...], code: Mapping[str, bytes | str]
) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook: from ``writable`` places, only source that ``code`` (the working
    copy's files as they were) holds is compiled, and no bytecode or extension module is
    written or loaded."""

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "compile" and isinstance(args[1], (str, bytes)):
            path = args[1].decode(errors="replace") if isinstance(args[1], bytes) else args[1]
            if path.startswith(writable):
                source = args[0].encode() if isinstance(args[0], str) else args[0]
                # The whole file, or a part of it (a traceback parses a line to point into it).
                if isinstance(source, bytes):
                    part = source.strip().removeprefix(b"(").removesuffix(b")").strip()
                    known = code.get(path, b"-")  # a str: the file could not be read
                    if not isinstance(known, bytes) or part not in known:
                        _refuse("code that was not in the repository when the run began: " + path)
        elif event in ("open", "os.rename", "os.replace", "os.link", "os.symlink"):
            path = args[1] if event != "open" else args[0]
            path = path.decode(errors="replace") if isinstance(path, bytes) else path
            if event == "open" and isinstance(path, str) and _memory(path):
                _refuse("the interpreter's memory opened: " + path)
            if not isinstance(path, str) or not path.startswith(writable) or path in code:
                return
            writing = event != "open" or "w" in (args[1] or "") or (args[2] or 0) & WRITING
            if path.endswith(COMPILED) and (writing or _lexists(path)):
                _refuse("compiled code written or loaded during the run: " + path)

    return audit


def _memory(path: str) -> bool:
    """Whether ``path`` is, or links to, a process's memory (``/proc/self/mem``): written,
    it changes any object of the interpreter, pytest's included, as ``ctypes`` would."""
    try:
        target = _realpath(path)
    except (OSError, ValueError):
        return False
    return target.startswith("/proc/") and target.endswith("/mem")


def _status(pid: int) -> tuple[int, int, str]:
    fields: dict[str, list[str]] = {}
    with _open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return int(fields["Uid"][0]), int(fields["PPid"][0]), fields["State"][0]


def _kill_the_others() -> None:
    """SIGKILL every process of this user but this one and its ancestors, until none is
    left (a process may fork while the list is read)."""
    keep: set[int] = set()
    pid = _getpid()
    while pid > 1 and pid not in keep:
        keep.add(pid)
        pid = _status(pid)[1]
    uid = _getuid()
    for _ in range(100):
        found = 0
        for name in _listdir("/proc"):
            if not name.isdigit() or int(name) in keep:
                continue
            try:
                owner, _, state = _status(int(name))
                if owner == uid and state != "Z":
                    _kill(int(name), 9)
                    found += 1
            except (OSError, ValueError, KeyError, IndexError):
                continue
        if not found:
            return


def _changed() -> list[str]:
    before, after = _state["before"], _snapshot()
    changed = sorted(p for p in before if after.get(p) != before[p])
    added = sorted(p for p in after if p not in before and p.endswith(".py"))
    return changed + added


def _machinery() -> dict[tuple[str, str], object]:
    """The functions and classes of pytest's and pluggy's modules, and the functions and
    descriptors of those classes, by where they are bound: what a patch of pytest
    replaces (``Function.runtest``, ``TestReport.from_item_and_call``...)."""
    found: dict[tuple[str, str], object] = {}
    for name, module in list(_modules.items()):
        if name.partition(".")[0] not in MACHINERY or module is None:
            continue
        namespace = _vars(module)
        for key, value in list(namespace.items()):
            if not _callable(value):
                continue
            found[(name, key)] = value
            if _isinstance(value, _type) and _vars(value).get("__module__") == name:
                for attribute, member in list(_vars(value).items()):
                    if _callable(member) or _isinstance(member, DESCRIPTORS):
                        found[(f"{name}.{key}", attribute)] = member
    return found


def _patched_machinery() -> list[str]:
    """What of :func:`_machinery` was replaced, removed or added since the guard was armed."""
    before, after = _state["machinery"], _machinery()
    spaces = {space for space, _ in before}
    changed = [key for key, value in before.items() if after.get(key) is not value]
    changed += [key for key in after if key not in before and key[0] in spaces]
    return sorted(".".join(key) for key in changed if not _pytests_own(key, after.get(key)))


def _pytests_own(key: tuple[str, str], value: object) -> bool:
    """Whether pytest itself set ``value`` at ``key`` once it ran: an accessor of its
    ``legacypath`` plugin, a class its doctest plugin makes when first needed."""
    origin = PYTESTS_OWN.get(key[1])
    if _is(value, property):
        value = value.fget
    if _isinstance(value, _type):
        code = [_code_path(v) for v in _vars(value).values() if _type(v) is _function]
    else:
        code = [_code_path(value)]
    if not origin or not code:
        return False
    suffix = os.path.join("_pytest", origin)
    return all(path is not None and path.endswith(suffix) for path in code)


def _hooks_from_the_working_copy(pluginmanager: pytest.PytestPluginManager) -> list[str]:
    """Hook implementations registered with pytest whose code is in the working copy but
    not in a ``conftest.py`` (whose files the guard watches), or whose code it cannot
    find: a plugin that code under test registered."""
    found: list[str] = []
    for caller in list(_vars(pluginmanager.hook).values()):
        for implementation in caller.get_hookimpls():
            path = _code_path(implementation.function)
            inside = path is None or path.startswith(_state["root"])
            if inside and not (path or "").endswith("/conftest.py"):
                found.append(f"{caller.name} of {path or implementation.plugin_name}")
    return found


def _code_path(function: object) -> str | None:
    """The file a function's (or a bound method's) code comes from; ``None`` for anything
    else."""
    if _is(function, _method):
        function = function.__func__
    if not _is(function, _function):
        return None
    return function.__code__.co_filename


def _is(value: object, kind: type[_T]) -> TypeGuard[_T]:
    """``isinstance`` as bound at import (the code under test may replace the builtin),
    in a form the type checker narrows by."""
    return _isinstance(value, kind)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    failed_around = report.when != "call" and report.outcome == "failed"
    outcome = "error" if failed_around else report.outcome
    if RANK[outcome] >= RANK[_outcomes.get(report.nodeid, "passed")]:
        _outcomes[report.nodeid] = outcome


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, pluggy.Result[None], None]:
    _state["session"] = session
    _collect()  # finalizers pending now run now, and none later
    _no_more_collections()
    _kill_the_others()
    changed, patched = _changed(), _patched_machinery()
    hooks = _hooks_from_the_working_copy(session.config.pluginmanager)
    if changed:
        _state["problem"] = f"files changed during the run: {', '.join(changed[:5])}"
    elif patched:
        _state["problem"] = f"pytest was patched during the run: {', '.join(patched[:5])}"
    elif hooks:
        _state["problem"] = f"a plugin of the code under test: {', '.join(hooks[:3])}"
    for path in (session.config.option.xmlpath, _state["record"]):
        if path and _lexists(path) and not _isdir(path):
            _unlink(path)
    outcome = yield
    if outcome.excinfo is None:
        with _open(_state["record"], "w") as record:
            record.write(repr(_outcomes))
        _state["written"] = True


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> Generator[None, pluggy.Result[None], None]:
    outcome = yield
    code = UNTRUSTED
    try:
        session, problem = _state["session"], _state["problem"]
        if session is None:
            problem = problem or "the session did not finish"
        elif not _state["written"]:
            problem = problem or "the report was not written"
        elif outcome.excinfo is not None:
            problem = problem or f"pytest_unconfigure failed: {outcome.excinfo[1]!r}"
        for stream in _streams:
            try:  # noqa: SIM105 (contextlib is a module the code under test could patch)
                stream.flush()
            except Exception:
                pass
        if problem:
            _write(2, f"\nagentgym guard: {problem}\n".encode())
        elif session is not None:  # always, when there is no problem
            code = int(session.exitstatus)
    finally:
        _exit(code)
