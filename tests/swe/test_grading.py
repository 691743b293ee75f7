"""The grader's parts, one rule at a time: which paths a patch may change, what the harness
screen counts, how the guard is loaded, when a test run's report is trusted, and when the
grader errors instead of scoring (the attacks themselves are in ``test_attacks.py``)."""

from __future__ import annotations

import ast
import dataclasses
import shutil

import pytest

from agentgym.envs.swe import grading
from agentgym.envs.swe.grading import grade, harness_references, starting_files, writable_path
from agentgym.envs.swe.patches import apply_patch, make_patch
from agentgym.envs.swe.repos import PreparedRepo
from agentgym.envs.swe.testrun import Guard, TestOutcome, TestReport, pytest_argv, run_tests
from agentgym.envs.swe.workspace import open_workspace
from agentgym.errors import VerifierError

F2P = ("tests/test_numbers.py::test_mean", "tests/test_numbers.py::test_mean_of_one")
CANARIES = grading.Canaries(
    {}, ("tests/test_numbers.py::test_of_mean",), ("tests/test_numbers.py::test_one_nothing",)
)


def run_report(exit_code: int = 1, output: str = "", **outcomes: str) -> TestReport:
    """A report whose tests (``name=outcome``; ``f2p0``, ``p2p0``, ``canary_pass`` and
    ``canary_fail`` stand for the ids) ended so."""
    ids = {"f2p0": F2P[0], "canary_pass": CANARIES.passing[0], "canary_fail": CANARIES.failing[0]}
    found = {ids[name]: TestOutcome(ids[name], outcome) for name, outcome in outcomes.items()}
    return TestReport(found, exit_code, False, 1.0, True, output)


HONEST = {"f2p0": "passed", "canary_pass": "passed", "canary_fail": "failed"}
RECORD = {F2P[0]: "passed", CANARIES.passing[0]: "passed", CANARIES.failing[0]: "failed"}


# ------------------------------------------------------------------------ writable_path


def test_a_module_of_the_package_is_writable(tinylib):
    assert writable_path(tinylib, "tinylib/numbers.py", exists=True)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_numbers.py",
        "tests/__init__.py",
        "tests/helpers.py",
        "conftest.py",
        "tinylib/conftest.py",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "setup.py",
        "pyproject.toml",
        "sitecustomize.py",
        "tinylib/usercustomize.py",
        "tinylib/hook.pth",
        "tinylib/test_numbers.py",
        "tinylib/numbers_test.py",
        "tinylib/testing/tools.py",
    ],
)
def test_tests_configuration_and_interpreter_hooks_are_not_writable(tinylib, path):
    assert not writable_path(tinylib, path, exists=True)
    assert not writable_path(tinylib, path, exists=False)


@pytest.mark.parametrize(
    ("path", "writable"),
    [
        ("tinylib/strings.py", True),
        ("pytest.py", False),
        ("_pytest/__init__.py", False),
        ("tinylib/sub/__init__.py", False),
        ("agentgym_canary/test_x.py", False),
    ],
)
def test_a_new_file_is_writable_only_beside_the_package_modules(tinylib, path, writable):
    assert writable_path(tinylib, path, exists=False) is writable


# ------------------------------------------------------------------- harness_references


def test_harness_names_count_where_they_name_something_not_in_comments_or_strings():
    assert harness_references('m = __import__("pytest")  # like pytest\n') == {"__import__": 1}
    assert harness_references("import pytest\n") == {"harness name pytest": 1}
    assert harness_references("from _pytest import python\n") == {"harness name _pytest": 1}


def test_a_harness_name_counts_as_part_of_an_identifier_in_any_case():
    assert harness_references("mark = HookimplMarker('x')\n") == {"harness name HookimplMarker": 1}

    source = "def pytest_runtest_makereport(item):\n    return item.agentgym_canary\n"
    assert harness_references(source) == {
        "harness name pytest_runtest_makereport": 1,
        "harness name agentgym_canary": 1,
    }


def test_capability_names_count_only_in_code():
    assert harness_references('"fork"  # os.fork\n') == {}
    assert harness_references("import os\nos.fork()\n") == {".fork": 1}


def test_compile_and_the_like_count_only_named_bare():
    assert harness_references("import re\nPATTERN = re.compile('x')\n") == {}
    assert harness_references("code = compile(text, 'f', 'exec')\n") == {"compile": 1}
    assert harness_references("run = exec\n") == {"exec": 1}


def test_getattr_counts_only_with_a_computed_attribute_name():
    assert harness_references("size = getattr(obj, 'size', 0)\n") == {}
    found = harness_references("found = getattr(obj, 'mod' + 'ules')\n")
    assert found == {"getattr with a computed name": 1}
    assert harness_references("get = getattr\n") == {"getattr with a computed name": 1}


def test_a_literal_attribute_name_is_judged_as_the_attribute_it_names():
    assert harness_references("f = getattr(g, '__globals__')\n") == {".__globals__": 1}
    assert harness_references("import sys\nm = getattr(sys, 'modules')\n") == {"sys.modules": 1}


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys . modules['x']\n",
        "import sys as _s\n_s.modules['x']\n",
        "from sys import modules\n",
        "from sys import modules as found\n",
    ],
    ids=["spaced", "an alias", "from sys", "from sys as"],
)
def test_sys_modules_counts_however_sys_is_named(source):
    assert harness_references(source) == {"sys.modules": 1}


def test_sys_is_read_only_for_the_facts_a_fix_may_need():
    assert harness_references("import sys\nif sys.version_info < (3, 12):\n    pass\n") == {}
    assert harness_references("import sys\nsys.stdout.write('x')\n") == {}
    assert "sys.pathology" in harness_references("import sys\nsys.pathology = 1\n")
    assert "sys.stdout" in harness_references("import sys\nsys.stdout = None\n")
    assert harness_references("import sys\nfind(sys)\n") == {"sys as a value": 1}


def test_a_module_reached_as_an_attribute_of_another_counts():
    assert harness_references("import os\nm = os.sys.modules\n") == {".sys": 1}
    assert harness_references("from os import sys\n") == {".sys": 1}
    source = "import os\nmatch os:\n    case object(sys=found):\n        pass\n"
    assert harness_references(source) == {".sys": 1}


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import importlib\n", "import importlib"),
        ("from importlib import import_module\n", "import importlib"),
        ("import gc\n", "import gc"),
        ("from inspect import currentframe\n", "import inspect"),
        ("import ctypes.util\n", "import ctypes.util"),
        ("from logging import config\n", "import logging.config"),
        ("import builtins\n", "import builtins"),
        ("from os import *\n", "from os import *"),
        ("from tests.helpers import make\n", "import tests.helpers"),
    ],
)
def test_modules_that_reach_into_the_interpreter_count_where_imported(source, found):
    assert found in harness_references(source)


def test_modules_named_by_common_words_count_only_where_imported():
    assert harness_references("code = 3\nreturn code\n") == {}
    assert harness_references("import code\ncode.interact()\n") == {"import code": 1}
    assert harness_references("from os import path, code\n") == {".code": 1}


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("d = obj.__dict__\n", ".__dict__"),
        ("subs = object.__subclasses__()\n", ".__subclasses__"),
        ("g = f.__globals__\n", ".__globals__"),
        ("c = f.__code__.co_consts\n", ".__code__"),
        ("c = code.co_consts\n", ".co_consts"),
        ("b = __builtins__\n", "__builtins__"),
        ("frame = error.__traceback__.tb_frame\n", ".__traceback__"),
        ("up = frame.f_back.f_globals\n", ".f_back"),
        ("x = object.__getattribute__(o, name)\n", ".__getattribute__"),
        ("class A:\n    def __del__(self):\n        pass\n", "__del__"),
    ],
)
def test_reflection_frames_and_code_objects_count(source, found):
    assert found in harness_references(source)


def test_the_data_models_dunders_and_a_names_plain_facts_do_not_count():
    source = (
        "class A:\n    __slots__ = ('x',)\n\n    def __init__(self, x):\n        self.x = x\n\n"
        "    def __repr__(self):\n        return f'{self.__class__.__name__}({self.x!r})'\n\n"
        "    def __eq__(self, other):\n        return self.x == other.x\n"
    )
    assert harness_references(source) == {}


def fullwidth(word: str) -> str:
    """``word`` in fullwidth letters, which Python reads as the word (NFKC)."""
    return "".join(chr(ord(letter) + 0xFEE0) for letter in word)


def test_identifiers_count_as_python_reads_them_after_nfkc():
    assert harness_references(f"{fullwidth('exec')}(b.decode())\n") == {"exec": 1}
    assert harness_references(f"import sys\nsys.{fullwidth('modules')}\n") == {"sys.modules": 1}
    found = harness_references(f"g = getattr(f, '__{fullwidth('globals')}__')\n")
    assert found == {".__globals__": 1}


@pytest.mark.parametrize(
    "cookie", ["# coding: utf-8", "# -*- coding: utf8 -*-", "# vim: set fileencoding=UTF-8 :"]
)
def test_a_utf8_coding_declaration_is_fine(cookie):
    assert harness_references(f"{cookie}\nx = 1\n") == {}


@pytest.mark.parametrize("encoding", ["utf-7", "latin-1", "utf-16", "rot13", "no-such-codec"])
def test_a_coding_declaration_other_than_utf8_counts(encoding):
    found = harness_references(f"#!/usr/bin/env python\n# coding: {encoding}\nx = 1\n")
    assert list(found) and next(iter(found)).startswith("coding declaration")


def test_assigning_to_what_another_package_binds_counts_and_to_the_own_package_does_not():
    assert harness_references("import json\njson.dumps = str\n") == {
        "an assignment to json's .dumps": 1
    }
    source = "import xml.etree.ElementTree as tree\nsetattr(tree, 'tostring', str)\n"
    assert harness_references(source) == {"an assignment to tree's .tostring": 1}
    own = frozenset({"tinylib"})
    assert harness_references("import tinylib.numbers as n\nn.LIMIT = 3\n", own) == {}


def test_names_that_start_threads_or_processes_count_by_their_parts():
    source = "pool = ThreadPoolExecutor()\nloop.run_in_executor(None, work)\n"
    assert harness_references(source) == {
        "ThreadPoolExecutor (thread)": 1,
        "ThreadPoolExecutor (executor)": 1,
        "run_in_executor (executor)": 1,
    }


def test_source_that_does_not_parse_counts_as_unreadable():
    assert harness_references('"""unterminated\nimport pluggy\n') == {grading.UNREADABLE: 1}


def test_a_reference_the_pristine_file_holds_is_not_counted_against_a_fix(tinylib, tmp_path):
    """A bug that dropped a line the fix restores: the fix adds nothing the file did not
    have before the bug (a tree of our own, since tinylib's files reference nothing)."""
    (tmp_path / "tree" / "pkg").mkdir(parents=True)
    pristine = "import inspect\n\n\ndef names(f):\n    return inspect.signature(f)\n"
    (tmp_path / "tree" / "pkg" / "mod.py").write_text(pristine)
    repo = PreparedRepo(tinylib.spec, tmp_path)
    buggy = pristine.replace("inspect.signature(f)", "None")
    assert grading._screen(repo, {"pkg/mod.py": buggy}, {"pkg/mod.py": pristine}) == ""
    more = pristine + "\n\ndef frame():\n    return inspect.currentframe()\n"
    assert grading._screen(repo, {"pkg/mod.py": buggy}, {"pkg/mod.py": more}) == ".currentframe"


def test_code_that_holds_a_capability_may_move_but_not_change(tinylib, tmp_path):
    """Each capability counts with the statement that holds it: a statement moved is the
    same, one changed is new, even when another is deleted to keep the count."""
    (tmp_path / "tree" / "pkg").mkdir(parents=True)
    helper = "def field(obj, name):\n    return getattr(obj, name)\n"
    pristine = f"import os\n\n\n{helper}\n\ndef other():\n    return 1\n"
    (tmp_path / "tree" / "pkg" / "mod.py").write_text(pristine)
    repo = PreparedRepo(tinylib.spec, tmp_path)
    start = {"pkg/mod.py": pristine}
    moved = f"import os\n\n\ndef other():\n    return 2\n\n\n{helper}"
    assert grading._screen(repo, start, {"pkg/mod.py": moved}) == ""
    swapped = pristine.replace("getattr(obj, name)", "getattr(os, 's' + 'ys')")
    assert grading._screen(repo, start, {"pkg/mod.py": swapped}) == "getattr with a computed name"
    unreadable = pristine + "def (:\n"
    assert grading._screen(repo, start, {"pkg/mod.py": unreadable}).startswith(grading.UNREADABLE)


def test_a_patch_adding_a_harness_reference_scores_0_without_a_run(tinylib, mean_task):
    start = starting_files(tinylib, mean_task)["tinylib/numbers.py"]
    fixed = apply_patch({"tinylib/numbers.py": start}, mean_task.patch)
    patch = make_patch({"tinylib/numbers.py": (start, "import gc\n" + fixed["tinylib/numbers.py"])})
    result = grade(tinylib, mean_task, patch)
    assert result.verdict.score == 0.0 and result.verdict.components["tampering"] == 1.0
    assert result.report is None and "(import gc)" in result.verdict.details


@pytest.mark.parametrize(
    "header",
    [
        "new file mode 120000",
        "new file mode 160000",
        "GIT binary patch",
        "rename from tinylib/numbers.py",
        "copy from tinylib/numbers.py",
    ],
)
def test_a_patch_that_is_more_than_text_changes_scores_0_without_a_run(tinylib, mean_task, header):
    patch = f"diff --git a/tinylib/x.py b/tinylib/x.py\n{header}\n--- /dev/null\n+++ b/x\n"
    result = grade(tinylib, mean_task, patch)
    assert result.verdict.score == 0.0 and result.report is None
    assert "symlink or a submodule" in result.verdict.details


# ---------------------------------------------------------------------------- the guard

GUARD = Guard("/tmp/.record", ("tests", "conftest.py"))
WRITE_AND_IMPORT = """
with open("/testbed/tinylib/_written.py", "w") as module:
    module.write("WRITTEN = True\\n")
from tinylib import _written
"""


def test_only_the_graders_runs_load_the_guard_as_the_first_plugin(tinylib):
    plain = pytest_argv(tinylib.spec, "/tmp/junit.xml")
    assert not any("guard" in arg for arg in plain)
    guarded = pytest_argv(tinylib.spec, "/tmp/junit.xml", guard=GUARD)
    assert guarded[:8] == [
        "python",
        "-m",
        "pytest",
        "-p",
        "agentgym_swe_guard",
        "--agentgym-guard-record=/tmp/.record",
        "--agentgym-guard-watch=tests",
        "--agentgym-guard-watch=conftest.py",
    ]
    assert guarded[8:] == plain[3:]


def test_the_guard_is_armed_before_the_first_conftest_is_imported(tinylib):
    """A conftest that writes a module and imports it: it runs without the guard, and with
    it the module is not compiled (the tests of this run are never collected)."""
    tests = ["tests/test_numbers.py"]
    with open_workspace(tinylib, {"conftest.py": WRITE_AND_IMPORT}) as box:
        assert run_tests(box, tinylib.spec, tests, timeout=60).outcomes
    with open_workspace(tinylib, {"conftest.py": WRITE_AND_IMPORT}) as box:
        report = run_tests(box, tinylib.spec, tests, timeout=60, guard=GUARD)
    assert not report.outcomes
    assert "agentgym guard: code that was not in the repository when the run began" in (
        report.output
    )


def test_what_pytest_sets_on_itself_once_it_runs_is_not_a_patch_of_pytest(tinylib):
    """pytest's legacypath plugin sets accessors on its classes, its doctest plugin makes
    its runner class when first needed: both after the guard is armed, neither tampering."""
    spec = dataclasses.replace(tinylib.spec, pytest_args=("--doctest-modules",))
    files = {"tinylib/documented.py": '"""\n>>> 1 + 1\n2\n"""\n'}
    with open_workspace(tinylib, files) as box:
        report = run_tests(box, spec, ["tinylib/documented.py"], timeout=60, guard=GUARD)
    assert report.exit_code == 0 and "agentgym guard" not in report.output, report.output
    assert [o.outcome for o in report.outcomes.values()] == ["passed"]


# ----------------------------------------------------------------------------- canaries


def test_canaries_sit_among_the_tests_of_each_file_named_as_their_neighbours(
    tinylib, mean_task, window_task
):
    selected = [*mean_task.fail_to_pass, *window_task.fail_to_pass, *window_task.pass_to_pass]
    canaries = grading._canaries(tinylib, {}, selected)
    assert set(canaries.files) == {"tests/test_numbers.py", "tests/test_sequences.py"}
    for path, text in canaries.files.items():
        tests = [t for t in canaries.tests if t.startswith(f"{path}::")]
        assert len(tests) == 2
        names = [t.partition("::")[2] for t in tests]
        assert all(name.startswith("test_") and "canary" not in name for name in names)
        pristine = tinylib.read(path)
        assert text.count("\ndef ") == pristine.count("\ndef ") + 2  # nothing else changed
        before = text[: text.index(f"def {names[0]}(")]
        last = before[before.rindex("\ndef ") + 5 :].partition("(")[0]
        assert f"{path}::{last}" in selected  # right after a selected test
    again = grading._canaries(tinylib, {}, selected)
    assert again.tests != canaries.tests  # drawn anew at each grading


def test_a_canary_beside_a_method_is_a_method_of_its_class(tinylib):
    source = (
        "import unittest\n\n\nclass CacheTest(unittest.TestCase):\n"
        "    def test_get_missing_key(self):\n        self.assertEqual(1, 1)\n\n"
        "    def test_set_and_get(self):\n        pass\n"
    )
    files = {"tests/test_cache.py": source}
    canaries = grading._canaries(
        tinylib, files, ["tests/test_cache.py::CacheTest::test_set_and_get"]
    )
    text = canaries.files["tests/test_cache.py"]
    (passing,), (failing,) = canaries.passing, canaries.failing
    assert passing.startswith("tests/test_cache.py::CacheTest::test_")
    tree = ast.parse(text)
    methods = [n.name for n in tree.body[1].body]
    assert methods[2:] == [passing.rpartition("::")[2], failing.rpartition("::")[2]]


def test_without_a_plain_selected_test_the_canaries_get_a_test_file_of_their_own(tinylib):
    canaries = grading._canaries(tinylib, {}, ["tests/test_numbers.py::test_clamp[1-2]"])
    (path,) = canaries.files
    assert path.startswith("tests/test_") and path != "tests/test_numbers.py"


def test_the_graders_run_reports_its_canaries_from_the_task_test_files(tinylib, mean_task):
    result = grade(tinylib, mean_task, mean_task.patch)
    selected = {*mean_task.fail_to_pass, *mean_task.pass_to_pass}
    ours = set(result.report.outcomes) - selected
    assert len(ours) == 2 and all(t.startswith("tests/test_numbers.py::test_") for t in ours)
    assert sorted(result.report.outcomes[t].outcome for t in ours) == ["failed", "passed"]


# ------------------------------------------------------------- trusting a run's report


def test_an_honest_run_is_trusted():
    assert grading._untrusted(run_report(**HONEST), RECORD, F2P[:1], CANARIES) == ""


def test_a_run_that_reported_nothing_is_left_to_the_control_run():
    assert grading._untrusted(run_report(exit_code=2), None, F2P[:1], CANARIES) == ""


def test_a_run_that_did_not_exit_as_pytest_does_when_a_test_fails_is_not_trusted():
    reason = grading._untrusted(run_report(0, **HONEST), RECORD, F2P[:1], CANARIES)
    assert reason.startswith("the test run cannot be trusted: pytest exited with 0, not 1")


@pytest.mark.parametrize(
    "canaries",
    [
        {"canary_pass": "passed"},
        {"canary_fail": "failed"},
        {"canary_pass": "failed", "canary_fail": "failed"},
        {"canary_pass": "passed", "canary_fail": "skipped"},
    ],
    ids=["failing one missing", "passing one missing", "both failed", "failing one skipped"],
)
def test_a_run_whose_canaries_are_missing_or_wrong_is_not_trusted(canaries):
    report = run_report(f2p0="passed", **canaries)
    reason = grading._untrusted(report, RECORD, F2P[:1], CANARIES)
    assert "the canary tests are missing" in reason


def test_a_report_that_disagrees_with_the_guards_record_is_not_trusted():
    record = {**RECORD, F2P[0]: "failed"}
    reason = grading._untrusted(run_report(**HONEST), record, F2P[:1], CANARIES)
    assert reason.endswith(f"the JUnit report disagrees with pytest's own reports on {F2P[0]}")
    no_record = grading._untrusted(run_report(**HONEST), None, F2P[:1], CANARIES)
    assert no_record.endswith("the guard left no record of the run")


def test_the_guards_word_is_final():
    report = run_report(output="...\nagentgym guard: files changed during the run: x\n", **HONEST)
    reason = grading._untrusted(report, RECORD, F2P[:1], CANARIES)
    assert reason == "the test run cannot be trusted: files changed during the run: x"


def test_a_run_that_reports_the_failing_canary_passed_is_tampering(tinylib, mean_task, monkeypatch):
    """A patch that makes every test pass, canaries included, and undoes itself before the
    session ends, so that the guard finds pytest as it was (the screen off, so that it
    runs): the canary catches it."""
    monkeypatch.setattr(grading, "_screen", lambda *args: "")
    code = (
        "import _pytest.python as module\n_runtest = module.Function.runtest\n\n\n"
        "def _skip(self):\n    if self is self.session.items[-1]:\n"
        "        module.Function.runtest = _runtest\n\n\nmodule.Function.runtest = _skip\n"
    )
    init = tinylib.read("tinylib/__init__.py")
    result = grade(tinylib, mean_task, make_patch({"tinylib/__init__.py": (init, init + code)}))
    assert result.verdict.score == 0.0 and result.verdict.components["tampering"] == 1.0
    assert "a test that must fail was reported passed" in result.verdict.details


# ----------------------------------------------------------- errors are not scores of 0


def test_a_run_without_results_on_a_working_pytest_is_a_0(tinylib, mean_task):
    init = tinylib.read("tinylib/__init__.py")
    patch = make_patch({"tinylib/__init__.py": (init, init + "raise SystemExit(3)\n")})
    result = grade(tinylib, mean_task, patch)  # the control run passes: no error
    assert result.verdict.score == 0.0 and not result.report.outcomes


def test_a_grader_that_cannot_run_pytest_raises_verifier_error(tinylib, mean_task, tmp_path):
    """A test environment without pytest: the run and the control run both report nothing."""
    shutil.copytree(tinylib.tree, tmp_path / "tree")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    shutil.copy(tinylib.venv / "pyvenv.cfg", tmp_path / "venv")
    broken = PreparedRepo(tinylib.spec, tmp_path)
    with pytest.raises(VerifierError, match="control run of canary tests"):
        grade(broken, mean_task, mean_task.patch)


def test_the_gold_patch_scores_1(tinylib, mean_task):
    result = grade(tinylib, mean_task, mean_task.patch)
    assert result.verdict.score == 1.0 and result.verdict.passed
    assert result.verdict.components == {
        "fail_to_pass": 1.0,
        "pass_to_pass": 1.0,
        "dropped_files": 0.0,
        "tampering": 0.0,
    }
