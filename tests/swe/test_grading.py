"""The grader's parts, one rule at a time: which paths a patch may change, what the harness
screen counts, how the guard is loaded, when a test run's report is trusted, and when the
grader errors instead of scoring (the attacks themselves are in ``test_attacks.py``)."""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

import pytest

from agentgym.envs.swe import grading
from agentgym.envs.swe.grading import grade, harness_references, starting_files, writable_path
from agentgym.envs.swe.patches import apply_patch, make_patch
from agentgym.envs.swe.prepare import PreparedRepo
from agentgym.envs.swe.testrun import Guard, TestOutcome, TestReport, pytest_argv, run_tests
from agentgym.envs.swe.workspace import open_workspace
from agentgym.errors import VerifierError

F2P = ("tests/test_numbers.py::test_mean", "tests/test_numbers.py::test_mean_of_one")
CANARIES = ("agentgym_canary/test_c.py::test_passes_c", "agentgym_canary/test_c.py::test_fails_c")


def run_report(exit_code: int = 1, output: str = "", **outcomes: str) -> TestReport:
    """A report whose tests (``name=outcome``; ``f2p0``, ``p2p0``, ``canary_pass`` and
    ``canary_fail`` stand for the ids) ended so."""
    ids = {"f2p0": F2P[0], "canary_pass": CANARIES[0], "canary_fail": CANARIES[1]}
    found = {ids[name]: TestOutcome(ids[name], outcome) for name, outcome in outcomes.items()}
    return TestReport(found, exit_code, False, 1.0, True, output)


HONEST = {"f2p0": "passed", "canary_pass": "passed", "canary_fail": "failed"}
RECORD = {F2P[0]: "passed", CANARIES[0]: "passed", CANARIES[1]: "failed"}


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


def test_harness_names_count_in_code_comments_and_strings():
    source = 'm = __import__("pytest")  # like pytest\n'
    assert harness_references(source) == {"pytest": 2, "__import__": 1}


def test_a_harness_name_counts_as_part_of_a_snake_case_word():
    source = 'def pytest_runtest_makereport(item):\n    path = "/testbed/agentgym_canary"\n'
    assert harness_references(source) == {"pytest": 1, "agentgym": 1}


def test_capability_names_count_only_in_code():
    assert harness_references('"fork"  # os.fork\n') == {}
    assert harness_references("import os\nos.fork()\n") == {"fork": 1}


def test_compile_and_the_like_count_only_called_bare():
    assert harness_references("import re\nPATTERN = re.compile('x')\n") == {}
    assert harness_references("code = compile(text, 'f', 'exec')\n") == {"compile": 1}


def test_getattr_counts_only_with_a_computed_attribute_name():
    assert harness_references("size = getattr(obj, 'size', 0)\n") == {}
    assert harness_references("found = getattr(sys, 'mod' + 'ules')\n") == {"getattr": 1}


def test_a_dotted_name_counts_however_it_is_spaced_and_wherever_it_is():
    assert harness_references("import sys\nsys . modules['x']\n") == {"sys.modules": 1}
    assert harness_references("name = 'sys.path'\n") == {"sys.path": 1}
    assert harness_references("sys.pathology = 1\n") == {}


def test_modules_named_by_common_words_count_only_where_imported():
    assert harness_references("code = 3\nreturn code\n") == {}
    assert harness_references("import code\ncode.interact()\n") == {"code": 1}
    assert harness_references("from os import path, code\n") == {"code": 1}


def test_names_that_start_threads_or_processes_count_by_their_parts():
    source = "pool = ThreadPoolExecutor()\nloop.run_in_executor(None, work)\n"
    assert harness_references(source) == {"thread": 1, "executor": 2}


def test_source_that_does_not_tokenize_is_screened_word_by_word():
    assert harness_references('"""unterminated\nimport pluggy\n') == {"pluggy": 1}


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
    assert grading._screen(repo, {"pkg/mod.py": buggy}, {"pkg/mod.py": more}) == "inspect"


def test_a_patch_adding_a_harness_reference_scores_0_without_a_run(tinylib, mean_task):
    start = starting_files(tinylib, mean_task)["tinylib/numbers.py"]
    fixed = apply_patch({"tinylib/numbers.py": start}, mean_task.patch)
    patch = make_patch({"tinylib/numbers.py": (start, "import gc\n" + fixed["tinylib/numbers.py"])})
    result = grade(tinylib, mean_task, patch)
    assert result.verdict.score == 0.0 and result.verdict.components["tampering"] == 1.0
    assert result.report is None and "(gc)" in result.verdict.details


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


def test_the_guard_runs_in_the_repositorys_environment_so_imports_only_stdlib_and_pytest():
    guard = Path(grading.__file__).parent / "pytest_plugin" / "agentgym_swe_guard.py"
    modules = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(guard.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])
    }
    assert modules - sys.stdlib_module_names == {"pytest"}


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
    """A patch that makes every test pass, canaries included (the screen off, so that it
    runs): the canary catches it."""
    monkeypatch.setattr(grading, "_screen", lambda *args: "")
    code = "import _pytest.python as module\nmodule.Function.runtest = lambda self: None\n"
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
    with pytest.raises(VerifierError, match="control run of two canary tests"):
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
