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
   itself. Each changed Python file of the package is read as Python reads it (its syntax
   tree, identifiers NFKC-normalised; a coding declaration other than UTF-8, or a file that
   does not parse, scores 0) and every use of a capability a bug fix does not need is
   found: the test machinery (:data:`HARNESS_WORDS`), importing a module that reaches into
   the interpreter, runs strings as code or outlives the tests (:data:`MODULES`), ``sys``
   beyond a few facts (:data:`SYS_ATTRIBUTES`), reflection (dunders outside
   :data:`DUNDERS`), frames and code objects (:data:`ATTRIBUTES`), ``exec``, ``eval``,
   ``compile`` and their kin (:data:`NAMES`), ``getattr``/``setattr``/``delattr`` with a
   computed name, and assigning to what another package's import bound. Each use counts
   with the statement that holds it, compared as syntax; a patch that holds one in a
   statement that neither the task's starting file nor the pristine one holds scores 0
   without a run. The pristine code is never judged, and may move. This is a screen, not a
   proof: ``docs/envs/swe.md`` says what it does not cover.
3. **The run is ours.** A fresh sandbox (no state from the episode: no environment
   variables, no background process, no files outside the working copy); pytest with the
   repository's ``addopts`` replaced, no cache provider, our plugins and no other (the
   agent's ``PYTEST_PLUGINS``/``PYTEST_ADDOPTS`` do not reach it); the tests selected by node
   id, and among them canary tests of ours, one that must pass and one that must fail in
   each test file that holds a selected test, placed beside one of them and named as its
   neighbours are, anew at each grading (:func:`_canaries`): code cannot tell them from
   the repository's tests, so what makes some tests pass regardless makes them pass too.
   Only this run loads the guard, ``pytest_plugin/agentgym_swe_guard.py`` (its docstring
   says what each defence closes; the agent's ``run_tests`` and the factory run without
   it). Before pytest imports any conftest or test module, the guard installs
   an audit hook that lets no code be compiled from the sandbox's writable places but the
   source the working copy held at the start. It keeps its own record of each test's
   outcome. When the session ends it leaves no process, finalizer or handler to rewrite the
   report, checks that no test file (nor a canary) changed, and ends the process at once,
   with 3 when it cannot vouch for the run.
4. **The report is read only when the run ended as it must** (:func:`_untrusted`). Results
   come from the JUnit XML, per test id; a test missing from it did not pass. The run scores
   0 when the guard speaks, when a failing canary is reported passed (the reporting was
   tampered with: a patch that makes every test "pass"), when pytest did not exit with 1 (as
   it does when a test fails, and a failing canary does), when a canary is missing or
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
import codecs
import functools
import hashlib
import posixpath
import re
import secrets
import tokenize
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType

from agentgym.core import Verdict
from agentgym.envs.swe.instances import SWEInstance
from agentgym.envs.swe.patches import FilePatch, PatchError, apply_patch, split_patch
from agentgym.envs.swe.repos import PreparedRepo
from agentgym.envs.swe.testrun import Guard, TestReport, run_tests
from agentgym.envs.swe.workspace import open_workspace
from agentgym.errors import InfrastructureError, SandboxFileNotFoundError, VerifierError
from agentgym.sandbox.base import ResourceLimitError

__all__ = [
    "ATTRIBUTES",
    "DUNDERS",
    "HARNESS_WORDS",
    "MODULES",
    "NAMES",
    "SYS_ATTRIBUTES",
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
    selected = [*instance.fail_to_pass, *instance.pass_to_pass]
    canaries = _canaries(prepared, files, selected)
    tests = [*selected, *canaries.tests]
    report, record = _run(prepared, {**files, **canaries.files}, tests, backend, canaries)
    if not report.outcomes:
        _control_run(prepared, instance, backend)
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
    """The files a task's starting tree has in place of the pristine ones (its bug): worked
    out once per task and prepared tree (a ``git apply`` per reset otherwise)."""
    tree = prepared.tree
    return dict(_starting_files(prepared, str(tree), tree.stat().st_mtime_ns, instance.bug_patch))


@functools.lru_cache(maxsize=1024)
def _starting_files(
    prepared: PreparedRepo, tree: str, mtime_ns: int, bug_patch: str
) -> Mapping[str, str | None]:
    del tree, mtime_ns  # the cache key, with the patch: a tree prepared again is read again
    return MappingProxyType(_patched(prepared, bug_patch, {}))


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

HARNESS_WORDS = (
    *("pytest", "pluggy", "unittest", "junit"),
    *("conftest", "agentgym", "runtest", "hookimpl"),
)
"""The test machinery: an identifier that holds one of these, in any case (``_pytest``,
``pytest_runtest_makereport``, ``HookimplMarker``), is refused wherever it names something:
a variable, an attribute, a function, a module."""
MODULES = frozenset(
    {
        # loaded modules, imports by name, import hooks
        "builtins",
        "__builtin__",
        "importlib",
        "importlib_metadata",
        "pkg_resources",
        "pkgutil",
        "runpy",
        "zipimport",
        "pydoc",
        "site",
        "imp",
        "logging.config",
        # the interpreter's insides: frames, code objects, every object
        "gc",
        "inspect",
        "ctypes",
        "_ctypes",
        "cffi",
        "tracemalloc",
        "faulthandler",
        "dis",
        # strings run as code, objects found by name
        "code",
        "codeop",
        "timeit",
        "pdb",
        "bdb",
        "trace",
        "profile",
        "cProfile",
        "doctest",
        "pickle",
        "_pickle",
        "marshal",
        "copyreg",
        "shelve",
        "dill",
        "cloudpickle",
        # code that runs after the tests or beside them
        "atexit",
        "weakref",
        "signal",
        "threading",
        "_thread",
        "multiprocessing",
        "concurrent",
        "subprocess",
        "pty",
        "asyncio",
    }
)
"""Modules added code may not import (nor a module under them, nor reach as an attribute,
as ``os.sys`` is ``sys``). ``sys`` itself may be imported, and read only as ``sys.<name>``
for a name in :data:`SYS_ATTRIBUTES`."""
SYS_ATTRIBUTES = frozenset(
    {
        "version_info",
        "version",
        "hexversion",
        "implementation",
        "platform",
        "byteorder",
        "maxsize",
        "maxunicode",
        "float_info",
        "int_info",
        "hash_info",
        "float_repr_style",
        "flags",
        "getdefaultencoding",
        "getfilesystemencoding",
        "getrecursionlimit",
        "getsizeof",
        "intern",
        "exc_info",
        "exception",
        "stdin",
        "stdout",
        "stderr",
        "argv",
        "executable",
        "exit",
    }
)
"""What added code may read of ``sys`` (only read: assigning to ``sys.stdout`` is refused)."""
DUNDERS = frozenset(
    {
        *("__name__", "__qualname__", "__module__", "__doc__", "__file__", "__package__"),
        *("__all__", "__version__", "__author__", "__slots__", "__debug__", "__class__"),
        *("__wrapped__", "__match_args__", "__post_init__", "__set_name__", "__missing__"),
        *("__init__", "__new__", "__init_subclass__", "__class_getitem__", "__call__"),
        *("__repr__", "__str__", "__format__", "__bytes__", "__hash__", "__bool__"),
        *("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"),
        *("__len__", "__length_hint__", "__iter__", "__next__", "__reversed__"),
        *("__contains__", "__getitem__", "__setitem__", "__delitem__", "__getattr__"),
        *("__get__", "__set__", "__delete__", "__enter__", "__exit__", "__fspath__"),
        *("__aenter__", "__aexit__", "__aiter__", "__anext__", "__await__"),
        *("__copy__", "__deepcopy__", "__sizeof__", "__index__", "__int__", "__float__"),
        *("__complex__", "__round__", "__trunc__", "__floor__", "__ceil__", "__abs__"),
        *("__neg__", "__pos__", "__invert__", "__add__", "__sub__", "__mul__"),
        *("__matmul__", "__truediv__", "__floordiv__", "__mod__", "__divmod__", "__pow__"),
        *("__lshift__", "__rshift__", "__and__", "__or__", "__xor__"),
        *("__radd__", "__rsub__", "__rmul__", "__rmatmul__", "__rtruediv__"),
        *("__rfloordiv__", "__rmod__", "__rdivmod__", "__rpow__", "__rlshift__"),
        *("__rrshift__", "__rand__", "__ror__", "__rxor__", "__iadd__", "__isub__"),
        *("__imul__", "__imatmul__", "__itruediv__", "__ifloordiv__", "__imod__"),
        *("__ipow__", "__ilshift__", "__irshift__", "__iand__", "__ior__", "__ixor__"),
    }
)
"""The dunder names added code may use: the data model's operators and protocols, and a
name's plain facts. Any other (``__dict__``, ``__globals__``, ``__code__``,
``__subclasses__``, ``__mro__``, ``__bases__``, ``__getattribute__``, ``__self__``,
``__builtins__``, ``__import__``, ``__loader__``, ``__spec__``, ``__del__``...) is refused:
each reaches objects by reflection or runs code when the interpreter decides."""
ATTRIBUTES = frozenset(
    {
        # frames, tracebacks and code objects (and every attribute starting ``co_``)
        *("f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace"),
        *("tb_frame", "tb_next", "gi_frame", "gi_code", "gi_yieldfrom"),
        *("cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code"),
        *("_getframe", "_current_frames", "currentframe", "walk_stack", "walk_tb"),
        *("get_stack", "settrace", "setprofile", "addaudithook", "CodeType", "FunctionType"),
        *("FrameType", "TracebackType", "meta_path", "path_hooks", "path_importer_cache"),
        # objects found by name, strings run as code
        *("attrgetter", "methodcaller", "get_field", "get_type_hints", "ForwardRef"),
        *("import_module", "resolve_name", "locate", "find_spec", "exec_module"),
        *("load_module", "dictConfig", "fileConfig"),
        # processes and what ends the interpreter early
        *("system", "popen", "fork", "forkpty", "register_at_fork", "_exit", "kill"),
        *("killpg", "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp"),
        *("execvpe", "posix_spawn", "posix_spawnp", "startfile", "QueueListener"),
    }
)
"""Attribute names added code may not use (nor import from a module, nor pass to
``getattr`` as a literal)."""
NAMES = frozenset({"exec", "eval", "compile", "vars", "globals", "locals", "breakpoint"})
"""Builtins added code may not name: they run strings as code or hand out namespaces."""
DYNAMIC_ATTRIBUTES = frozenset({"getattr", "setattr", "delattr"})
"""Named only when called with an attribute name that is a string literal (which is then
judged as an attribute: ``getattr(sys, "modules")`` is ``sys.modules``)."""
NAME_PARTS = ("thread", "subprocess", "executor", "spawn")
"""Parts of identifiers (any case) that start threads or processes: ``ThreadPoolExecutor``,
``to_thread``, ``run_in_executor``, ``create_subprocess_exec``."""
TEST_MODULE_PARTS = frozenset({"tests", "test", "testing", "conftest"})
UTF8 = frozenset({"utf-8", "utf-8-sig"})
UNREADABLE = "code the grader cannot parse"
BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


@dataclass(frozen=True)
class _Imports:
    """What a module's imports bind, anywhere in it: the names of ``sys``, and the names
    of what comes from another package (whose attributes added code may not assign); and
    the names already judged as part of a larger node (``sys`` in ``sys.version_info``,
    ``getattr`` in ``getattr(x, "name")``), by their ids."""

    sys: frozenset[str]
    foreign: frozenset[str]
    judged: set[int] = field(default_factory=set)


def harness_references(source: str, own: frozenset[str] = frozenset()) -> dict[str, int]:
    """What in ``source`` reaches the test harness or the interpreter's insides, runs a
    string as code or outlives the tests, by kind (``"sys.modules"``, ``"exec"``,
    ``"import inspect"``, ``".__dict__"``...), with how often; ``own`` names the
    repository's top-level packages (assigning to their attributes is a fix's business)."""
    counts: dict[str, int] = {}
    for (kind, _), count in _references(source, own):
        counts[kind] = counts.get(kind, 0) + count
    return counts


@functools.lru_cache(maxsize=256)
def _references(source: str, own: frozenset[str]) -> tuple[tuple[tuple[str, str], int], ...]:
    """Each capability of ``source`` with the unit of code that holds it (see
    :func:`_screen`), counted; remembered, as a task's starting and pristine files are
    screened again at every grading."""
    cookie = _coding(source)
    if cookie:
        return (((cookie, ""), 1),)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return (((UNREADABLE, ""), 1),)
    imports = _imports(tree, own)
    found: Counter[tuple[str, str]] = Counter()
    for statement, parts in _statements(tree):
        nodes = [statement, *(node for part in parts for node in ast.walk(part))]
        kinds = [kind for node in nodes for kind in _capabilities(node, imports)]
        if kinds:
            found.update((kind, _digest(statement, parts)) for kind in kinds)
    return tuple(found.items())


def _statements(node: ast.AST) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
    """Each statement under ``node`` (an ``except`` clause and a ``case`` are statements
    here), with its own parts: what it holds but other statements (of a ``def``, its
    decorators, arguments and annotations, not its body)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, BLOCKS):
            yield (
                child,
                [part for part in ast.iter_child_nodes(child) if not isinstance(part, BLOCKS)],
            )
            yield from _statements(child)


def _digest(statement: ast.AST, parts: Sequence[ast.AST]) -> str:
    """A statement's own parts as syntax (not text: formatting and comments aside)."""
    plain = [repr(v) for _, v in ast.iter_fields(statement) if isinstance(v, str | int | None)]
    text = "|".join([type(statement).__name__, *plain, *map(ast.dump, parts)])
    return hashlib.sha256(text.encode()).hexdigest()


def _coding(source: str) -> str:
    """The finding for a coding declaration other than UTF-8 ("" if none): Python would
    decode the file otherwise than the grader reads it (``# coding: utf-7`` turns a comment
    into code)."""
    lines = iter(source.encode("utf-8", "surrogatepass").splitlines(keepends=True))
    try:
        encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    except SyntaxError as error:
        return f"coding declaration ({error})"
    return "" if codecs.lookup(encoding).name in UTF8 else f"coding declaration {encoding}"


def _imports(tree: ast.Module, own: frozenset[str]) -> _Imports:
    sys_names, foreign = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if alias.name == "sys":
                    sys_names.add(bound)
                if alias.name.split(".")[0] not in own:
                    foreign.add(bound)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name == "sys":
                    sys_names.add(alias.asname or alias.name)
                if node.module.split(".")[0] not in own:
                    foreign.add(alias.asname or alias.name)
    return _Imports(frozenset(sys_names), frozenset(foreign))


def _capabilities(node: ast.AST, imports: _Imports) -> Iterator[str]:
    """The capabilities one node of the syntax tree uses (see the constants above)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield from _module(alias.name)
            yield from _identifier(alias.asname)
    elif isinstance(node, ast.ImportFrom):
        module = node.module or ""
        yield from _module(module)
        for alias in node.names:
            if alias.name == "*" and node.level == 0:
                yield f"from {module} import *"
            elif module == "sys" and node.level == 0 and alias.name not in SYS_ATTRIBUTES:
                yield f"sys.{alias.name}"
            else:
                if _refused_module(f"{module}.{alias.name}"):  # from logging import config
                    yield f"import {module}.{alias.name}"
                yield from _attribute(alias.name)
            yield from _identifier(alias.asname)
    elif isinstance(node, ast.Name):
        yield from _name(node, imports)
    elif isinstance(node, ast.Attribute):
        yield from _attribute(node.attr)
        yield from _on_module(node.value, node.attr, node.ctx, imports)
    elif isinstance(node, ast.Call):
        yield from _dynamic_attribute(node, imports)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield from _identifier(node.name)
        if _reflective(node.name):
            yield node.name
    elif isinstance(node, ast.MatchClass):
        for attribute in node.kwd_attrs:  # case object(modules=found): an attribute read
            yield from _attribute(attribute)


def _module(name: str) -> Iterator[str]:
    """Findings for importing module ``name``: one of :data:`MODULES` or under one, the
    test machinery, or a test module of the repository."""
    if _refused_module(name):
        yield f"import {name}"
    for part in name.split("."):
        yield from _identifier(part)


def _refused_module(name: str) -> bool:
    parts = name.split(".")
    refused = any(".".join(parts[: i + 1]) in MODULES for i in range(len(parts)))
    return refused or any(part in TEST_MODULE_PARTS or part.startswith("test_") for part in parts)


def _identifier(name: str | None) -> Iterator[str]:
    """Findings for any identifier: a harness word, a part that starts threads or processes."""
    if not name:
        return
    lowered = name.lower()
    if any(word in lowered for word in HARNESS_WORDS):
        yield f"harness name {name}"
    yield from (f"{name} ({part})" for part in NAME_PARTS if part in lowered)


def _attribute(name: str) -> Iterator[str]:
    """Findings for reading or writing attribute ``name`` of anything."""
    reached = name in MODULES or name == "sys"  # os.sys: a module reached through another
    if _reflective(name) or name in ATTRIBUTES or name.startswith("co_") or reached:
        yield f".{name}"
    yield from _identifier(name)


def _reflective(name: str) -> bool:
    """Whether ``name`` is a dunder name outside :data:`DUNDERS`."""
    return name.startswith("__") and name.endswith("__") and name not in DUNDERS


def _name(node: ast.Name, imports: _Imports) -> Iterator[str]:
    name = node.id
    if _reflective(name) or name in NAMES:
        yield name
    elif name in DYNAMIC_ATTRIBUTES and id(node) not in imports.judged:
        yield f"{name} with a computed name"
    elif name in imports.sys and id(node) not in imports.judged:
        yield "sys as a value"
    yield from _identifier(name)


def _on_module(
    value: ast.expr, attribute: str, ctx: ast.expr_context, imports: _Imports
) -> Iterator[str]:
    """Findings for attribute ``attribute`` of ``value``: of ``sys``, only a read of
    :data:`SYS_ATTRIBUTES`; of what another package's import bound, no assignment."""
    if isinstance(value, ast.Name) and value.id in imports.sys:
        imports.judged.add(id(value))
        if attribute not in SYS_ATTRIBUTES or not isinstance(ctx, ast.Load):
            yield f"sys.{attribute}"
    if not isinstance(ctx, ast.Load):
        root = value
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if isinstance(root, ast.Name) and root.id in imports.foreign:
            yield f"an assignment to {root.id}'s .{attribute}"


def _dynamic_attribute(node: ast.Call, imports: _Imports) -> Iterator[str]:
    """``getattr(obj, "name")`` (and ``setattr``, ``delattr``) with a literal name: judged
    as the attribute it names."""
    func, args = node.func, node.args
    if not (isinstance(func, ast.Name) and func.id in DYNAMIC_ATTRIBUTES and len(args) >= 2):
        return
    literal = args[1]
    if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
        imports.judged.add(id(func))
        name = unicodedata.normalize("NFKC", literal.value)
        ctx = ast.Load() if func.id == "getattr" else ast.Store()
        yield from _attribute(name)
        yield from _on_module(args[0], name, ctx, imports)


def _screen(
    prepared: PreparedRepo, start: Mapping[str, str | None], changed: Mapping[str, str | None]
) -> str:
    """The capabilities the changed Python files hold in more units of code than they did at
    the start and in the pristine repository ("" if none).

    A capability is counted with the unit of code that holds it (a statement of the
    module, a method, a class's header), compared as its syntax tree, so code that holds
    one may move, and the pristine code is never judged, but not change: a new use, or an
    old one in a unit that changed, counts. A file Python would decode otherwise than as
    UTF-8, or that does not parse, is refused whatever it held before.
    """
    own = _packages(prepared)
    added: set[str] = set()
    for path, text in changed.items():
        if text is None or not path.endswith(".py"):
            continue
        after = _references(text, own)
        if len(after) == 1 and not after[0][0][1]:  # no syntax tree: nothing to compare
            added.add(f"{after[0][0][0]} in {path}")
            continue
        pristine = prepared.read(path) if (prepared.tree / path).is_file() else ""
        before = dict(_references(pristine, own))
        for key, count in _references(start.get(path) or "", own):
            before[key] = max(count, before.get(key, 0))
        added |= {kind for (kind, unit), count in after if count > before.get((kind, unit), 0)}
    return ", ".join(sorted(added))


def _packages(prepared: PreparedRepo) -> frozenset[str]:
    """The repository's top-level packages and modules (at its root or under ``src``)."""
    found = set()
    for root in (prepared.tree, prepared.tree / "src"):
        if root.is_dir():
            for entry in root.iterdir():
                if (entry / "__init__.py").is_file() or entry.suffix == ".py":
                    found.add(entry.stem)
    return frozenset(found)


# --------------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Canaries:
    """Tests of ours among the repository's: the test files that hold them, and the ids of
    those that must pass and of those that must fail."""

    files: dict[str, str]
    passing: tuple[str, ...]
    failing: tuple[str, ...]

    @property
    def tests(self) -> tuple[str, ...]:
        return (*self.passing, *self.failing)


def _canaries(
    prepared: PreparedRepo, files: Mapping[str, str | None], selected: Sequence[str]
) -> Canaries:
    """A pair of canaries, one test that must pass and one that must fail, in every test
    file that holds a selected test: right after one of its selected tests (drawn anew at
    each grading), in the same class if it is a method, named as its neighbours are, so
    that code under test cannot tell them from the repository's tests by place or name,
    and whatever spares some tests spares them with the rest. A file where no selected test
    is a plain function or method (none but parametrised or nested ones) gets none; where
    no file does, a new test file beside the first selected test's holds the pair."""
    draw = secrets.SystemRandom()
    by_file: dict[str, list[str]] = {}
    for nodeid in selected:
        path, _, name = nodeid.partition("::")
        if name and "[" not in name and path.endswith(".py"):
            by_file.setdefault(path, []).append(name)
    texts, passing, failing = {}, [], []
    for path, names in by_file.items():
        text = files[path] if path in files else _pristine(prepared, path)
        placed = _place_canaries(text or "", names, draw)
        if placed:
            texts[path], scope, (good, bad) = placed
            passing.append(f"{path}::{scope}{good}")
            failing.append(f"{path}::{scope}{bad}")
    if texts:
        return Canaries(texts, tuple(passing), tuple(failing))
    first = next((t.partition("::")[0] for t in selected), "")
    folder = posixpath.dirname(first) or (prepared.spec.tests or ("tests",))[0]
    module, good, bad = _canary_names(CANARY_WORDS, "test_", set(), draw, count=3)
    path = f"{folder}/{module}.py"
    body = f"def {good}():\n    assert True\n\n\ndef {bad}():\n    assert False\n"
    return Canaries({path: body}, (f"{path}::{good}",), (f"{path}::{bad}",))


CANARY_WORDS = ("value", "empty", "result", "items", "default", "order", "single", "key")
"""Words for canaries' names where a test file offers too few of its own."""


def _pristine(prepared: PreparedRepo, path: str) -> str | None:
    return prepared.read(path) if (prepared.tree / path).is_file() else None


def _place_canaries(
    text: str, names: Sequence[str], draw: secrets.SystemRandom
) -> tuple[str, str, tuple[str, str]] | None:
    """``text`` with a pair of canaries after one of the tests ``names`` (``func`` or
    ``Class::method``), the scope they are in (``""`` or ``"Class::"``) and their names;
    ``None`` when none of ``names`` is a plain function or method of ``text``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    top = {node.name: node for node in tree.body if isinstance(node, (ast.ClassDef, *_FUNCTION))}
    anchors: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for name in names:
        owner, _, method = name.rpartition("::")
        function = top.get(name)
        if not owner and isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            anchors.append(("", function))
        elif isinstance(top.get(owner), ast.ClassDef) and not top[owner].decorator_list:
            found = [n for n in top[owner].body if isinstance(n, _FUNCTION) and n.name == method]
            anchors += [(f"{owner}::", node) for node in found]
    if not anchors:
        return None
    scope, anchor = draw.choice(anchors)
    taken = {node.name for node in ast.walk(tree) if isinstance(node, _FUNCTION)}
    words = sorted({w for n in taken if n.startswith("test") for w in n.split("_")[1:] if w})
    prefix = "test_" if anchor.name.startswith("test_") else re.sub(r"[^a-z].*", "", anchor.name)
    good, bad = _canary_names(words if len(words) >= 4 else CANARY_WORDS, prefix, taken, draw)
    lines = text.splitlines(keepends=True)
    indent = _indent(lines[anchor.lineno - 1])
    inner = anchor.body[0].lineno > anchor.lineno
    body = _indent(lines[anchor.body[0].lineno - 1]) if inner else ""
    body = body if len(body) > len(indent) else indent + "    "
    this = "self" if scope else ""
    pair = (
        f"\n\n{indent}def {good}({this}):\n{body}assert True\n"
        f"\n\n{indent}def {bad}({this}):\n{body}assert False\n"
    )
    end = anchor.end_lineno or anchor.lineno
    before = "".join(lines[:end])
    before += "" if before.endswith(("\n", "\r")) else "\n"
    return before + pair + "".join(lines[end:]), scope, (good, bad)


_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _canary_names(
    words: Sequence[str],
    prefix: str,
    taken: set[str],
    draw: secrets.SystemRandom,
    count: int = 2,
) -> list[str]:
    """``count`` new test names of ``prefix`` and two or three of ``words`` each."""
    found: list[str] = []
    while len(found) < count:
        chosen = draw.sample(list(words), min(len(words), draw.randint(2, 3)))
        name = (
            prefix + "_".join(chosen)
            if prefix.endswith("_")
            else prefix + "".join(word.capitalize() for word in chosen)
        )
        if name not in taken and name not in found:
            found.append(name)
    return found


def _run(
    prepared: PreparedRepo,
    files: Mapping[str, str | None],
    tests: Sequence[str],
    backend: str,
    canaries: Canaries,
) -> tuple[TestReport, dict[str, str] | None]:
    """Run ``tests`` with the guard in a fresh sandbox holding ``files``: the report, and the
    guard's record of each test's outcome (``None`` without one; a sandbox killed for its
    memory gives a report without outcomes)."""
    timeout = min(MAX_TIMEOUT, BASE_TIMEOUT + SECONDS_PER_TEST * len(tests))
    watched = (*prepared.spec.tests, *canaries.files, "conftest.py")
    guard = Guard(GUARD_RECORD, watched=tuple(dict.fromkeys(watched)))
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


def _control_run(prepared: PreparedRepo, instance: SWEInstance, backend: str) -> None:
    """Raise VerifierError when the canaries do not run on the pristine repository either
    (placed as they are in a grading run, in the task's test files)."""
    selected = [*instance.fail_to_pass, *instance.pass_to_pass]
    canaries = _canaries(prepared, _patched(prepared, instance.test_patch, {}), selected)
    report, _ = _run(prepared, canaries.files, canaries.tests, backend, canaries)
    if not (
        all(report.passed(t) for t in canaries.passing)
        and not any(report.passed(t) for t in canaries.failing)
    ):
        raise VerifierError(
            f"the SWE grader cannot run pytest in {prepared.spec.key}'s test environment "
            f"(a control run of canary tests on the pristine repository gave "
            f"{sorted((n, o.outcome) for n, o in report.outcomes.items())}, exit code "
            f"{report.exit_code}): {report.output[-1500:]}"
        )


# --------------------------------------------------------------- trusting the run's report


def _untrusted(
    report: TestReport,
    record: Mapping[str, str] | None,
    selected: Sequence[str],
    canaries: Canaries,
) -> str:
    """Why a run's report is not the run's ("" when it is, or when the run reported nothing
    and the guard did not speak): the guard's word, a failing canary passed, an exit status
    other than pytest's for failed tests, a canary missing or with the wrong outcome, a test
    whose outcome in the JUnit report is not the one pytest reported to the guard."""
    said = re.findall(r"agentgym guard: (.*)", report.output)
    failed = [report.outcomes.get(t) for t in canaries.failing]
    behaved = all(report.passed(t) for t in canaries.passing) and all(
        outcome is not None and outcome.outcome == "failed" for outcome in failed
    )
    tests = (*selected, *canaries.tests)
    differ = [t for t in tests if report.passed(t) != _passed(record, t)]
    if said:
        why = said[-1].strip()
    elif not report.outcomes:
        return ""
    elif any(report.passed(t) for t in canaries.failing):
        return "the test report was tampered with: a test that must fail was reported passed"
    elif report.exit_code != TESTS_FAILED:
        why = (
            f"pytest exited with {report.exit_code}, not {TESTS_FAILED} (a failing test, as "
            f"a failing canary is, ends a run with {TESTS_FAILED})"
        )
    elif not behaved:
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
