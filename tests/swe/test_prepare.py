"""Preparing a repository, and running its tests in a sandbox with results from JUnit XML."""

import json
import stat
from pathlib import Path

import pytest

from agentgym.envs.swe.prepare import find_spec, prepared_repo
from agentgym.envs.swe.testrun import parse_junit, run_tests
from agentgym.envs.swe.workspace import open_workspace

TINYLIB_TESTS = 17
TINYLIB_DIR = Path(__file__).parent / "tinylib"


def test_a_prepared_repository_has_its_tree_commit_venv_and_baseline(tinylib):
    assert (tinylib.tree / "tinylib" / "numbers.py").is_file()
    assert len(tinylib.base_commit) == 40
    assert (tinylib.venv / "bin" / "python").exists()
    baseline = tinylib.baseline
    assert len(baseline["passing"]) == TINYLIB_TESTS == len(baseline["outcomes"])
    assert "tests/test_numbers.py::test_mean" in tinylib.passing


def test_the_tree_is_writable_by_others_so_a_sandbox_user_can_edit_its_copy(tinylib):
    mode = (tinylib.tree / "tinylib" / "numbers.py").stat().st_mode
    assert mode & stat.S_IWOTH and mode & stat.S_IROTH


def test_the_call_map_names_the_tests_that_call_each_function(tinylib):
    callers = tinylib.callers
    assert set(callers[("tinylib/numbers.py", "mean")]) == {
        "tests/test_numbers.py::test_mean",
        "tests/test_numbers.py::test_mean_of_one",
        "tests/test_numbers.py::test_mean_of_nothing_is_an_error",
    }
    assert not any(path.startswith("tests/") for path, _ in callers)  # tests are not targets


def test_a_local_repository_is_found_by_name_once_prepared(tinylib):
    assert find_spec("tinylib") == tinylib.spec
    assert prepared_repo(tinylib.spec).root == tinylib.root


def test_preparing_again_reuses_the_finished_work(tinylib):
    from agentgym.envs.swe.prepare import prepare

    before = (tinylib.root / "manifest.json").stat().st_mtime_ns
    again = prepare(tinylib.spec, baseline=True)
    assert (again.root / "manifest.json").stat().st_mtime_ns == before
    assert json.loads((again.root / "manifest.json").read_text())["spec"]["name"] == "tinylib"


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_tests_run_in_the_sandbox_and_results_come_from_junit(tinylib, backend, request):
    if backend == "docker":
        request.getfixturevalue("docker_daemon")  # one test environment serves both backends
    with open_workspace(tinylib, backend=backend, git=True) as box:
        probe = box.exec(
            "python -c 'import sys; print(sys.prefix)'; ls /usr/lib/python3/dist-packages"
        )
        assert probe.stdout == "/opt/agentgym/swe/venv\n"  # the venv; the system's packages hidden
        assert box.exec("cd /testbed && git log --oneline | wc -l").stdout == "1\n"
        report = run_tests(box, tinylib.spec, ["tests/test_numbers.py"], timeout=120)
    assert report.junit_found and report.exit_code == 0
    assert len(report.outcomes) == 9
    assert all(o.outcome == "passed" for o in report.outcomes.values())


def test_the_hosts_python_packages_are_hidden_in_the_workspace(tinylib):
    with open_workspace(tinylib) as box:
        found = box.exec("python -c 'import hypothesis' 2>&1; ls /usr/lib/python3/dist-packages")
    assert "No module named 'hypothesis'" in found.stdout  # installed on the host, not here
    assert found.stdout.strip().endswith("'hypothesis'")  # and the dist-packages dir is empty


def test_a_failing_test_has_its_message_and_text():
    xml = b"""<testsuites><testsuite><testcase classname="t" name="a" time="0.5">
    <properties><property name="nodeid" value="t.py::a"/></properties>
    <failure message="assert 1 == 2">t.py:3: in a\nE   assert 1 == 2</failure></testcase>
    <testcase classname="t" name="b"><properties><property name="nodeid" value="t.py::b"/>
    </properties></testcase>
    <testcase classname="t" name="b"><properties><property name="nodeid" value="t.py::b"/>
    </properties><error message="teardown"/></testcase></testsuite></testsuites>"""
    outcomes = parse_junit(xml)
    assert outcomes["t.py::a"].outcome == "failed"
    assert outcomes["t.py::a"].message == "assert 1 == 2" and outcomes["t.py::a"].seconds == 0.5
    assert outcomes["t.py::b"].outcome == "error"  # a teardown error after a pass: the worst


def test_a_broken_or_hostile_report_gives_no_outcomes():
    assert parse_junit(b"<testsuite><testcase") == {}
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
        + b"".join(
            b'<!ENTITY %s "%s">' % (bytes([98 + i]), (b"&" + bytes([97 + i]) + b";") * 10)
            for i in range(8)
        )
        + b']><testsuite><testcase name="&i;"/></testsuite>'
    )
    assert parse_junit(bomb) == {}  # expat refuses the entity expansion; no id anyway
    assert parse_junit(b"<testsuite><testcase name='x'/></testsuite>") == {}  # no nodeid


@pytest.mark.parametrize("plugin", ["agentgym_swe_plugin", "agentgym_swe_guard"])
def test_the_plugins_run_in_the_repositorys_environment_so_import_only_stdlib_and_pytest(plugin):
    import ast
    import sys
    from pathlib import Path

    source = Path(__file__).parents[2] / f"envs/swe/pytest_plugin/{plugin}.py"
    tree = ast.parse(source.read_text())
    for node in ast.walk(tree):  # what only the type checker imports does not run
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            node.body = []
    modules = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])
    }
    assert modules - sys.stdlib_module_names == {"pytest"}


def test_prepare_ends_with_a_total(tinylib, capsys):
    from agentgym.cli import main

    assert main(["swe", "prepare", "--repo", str(TINYLIB_DIR), "--name", "tinylib"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("total: 1 repository ready (0 prepared now, 1 already) in ")
    assert f" MiB on disk in {tinylib.root.parent}; swe-v0 tasks they run: none" in last


def test_the_total_counts_disk_once_per_file_and_the_shipped_tasks_by_split(tmp_path):
    from agentgym.envs.swe.prepare import disk_usage, total_line
    from agentgym.envs.swe.repos import PreparedRepo, repo_spec

    toolz, marshmallow = tmp_path / "toolz-1.2.0", tmp_path / "marshmallow-x"
    (toolz / "tree").mkdir(parents=True)
    marshmallow.mkdir()
    (toolz / "tree" / "big").write_bytes(b"x" * 2**20)
    (toolz / "link").hardlink_to(toolz / "tree" / "big")  # the same file: counted once
    (marshmallow / "outside").symlink_to(toolz / "tree" / "big")  # not followed
    assert 2**20 <= disk_usage(tmp_path) < 2**20 + 64 * 1024
    repos = [
        PreparedRepo(repo_spec("toolz"), toolz),
        PreparedRepo(repo_spec("marshmallow"), marshmallow),
    ]
    line = total_line(repos, 1, 75.0)
    assert line == (
        f"total: 2 repositories ready (1 prepared now, 1 already) in 1 min 15 s; 1.0 MiB on "
        f"disk in {tmp_path}; swe-v0 tasks they run: 10 dev, 18 test"
    )
