"""SWE-bench's format both ways: tinylib's tasks exported (fields, formats, a git mirror with
reproducible commits), imported back from that mirror and played in ``swe/Repair-v1``, a real
SWE-bench record loaded, and bad input refused with messages that name what is wrong."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import pytest

from agentgym.envs.swe.patches import split_patch
from agentgym.envs.swe.swebench import task_test_files

SWEBENCH_FIELDS = {
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
}
# As in the SWE-bench datasets on the Hugging Face hub: every value a string, the test lists
# JSON-encoded, and fields beyond the harness's (here from SWE-bench Verified's annotations).
REAL_RECORD = {
    "repo": "psf/requests",
    "instance_id": "psf__requests-2317",
    "base_commit": "091991be0da19de9108dbe5e3752917fea3d7fdc",
    "patch": "diff --git a/requests/sessions.py b/requests/sessions.py\n"
    "--- a/requests/sessions.py\n+++ b/requests/sessions.py\n"
    "@@ -425,7 +425,7 @@ def request(self, method, url,\n"
    "-        method = builtin_str(method)\n+        method = to_native_string(method)\n",
    "test_patch": "",
    "problem_statement": "method = builtin_str(method) problem\n",
    "hints_text": "Ugh. This should have been caught and replaced with `to_native_str`.",
    "created_at": "2014-11-01T02:20:16Z",
    "version": "2.4",
    "FAIL_TO_PASS": '["test_requests.py::RequestsTestCase::test_HTTP_200_OK_GET_ALTERNATIVE"]',
    "PASS_TO_PASS": '["test_requests.py::RequestsTestCase::test_basic_building", '
    '"test_requests.py::TestMorselToCookieExpires::test_expires_none"]',
    "environment_setup_commit": "091991be0da19de9108dbe5e3752917fea3d7fdc",
    "difficulty": "<15 min fix",
}


def git(repository, *args):
    argv = ["git", "--git-dir", str(repository), *args]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def exported(tiny_tasks, tmp_path_factory):
    """tinylib's tasks exported: the mirror and the SWE-bench JSON Lines file."""
    from agentgym.envs.swe.swebench import export_swebench, save_swebench

    mirror = tmp_path_factory.mktemp("mirror")
    path = mirror.parent / "swebench.jsonl"
    save_swebench(export_swebench(tiny_tasks[1], mirror), path)
    return mirror, path


@pytest.fixture(scope="module")
def imported(exported, tmp_path_factory):
    """The export imported back, the mirror serving as the checkouts: our JSON Lines file
    and the instances."""
    from agentgym.envs.swe.instances import save_instances
    from agentgym.envs.swe.swebench import import_swebench, load_swebench

    mirror, path = exported
    instances = import_swebench(load_swebench(path), mirror)
    ours = tmp_path_factory.mktemp("imported") / "ours.jsonl"
    save_instances(instances, ours)
    return ours, instances


def exported_lines(exported):
    return [json.loads(line) for line in exported[1].read_text().splitlines()]


def test_export_writes_swebench_fields_as_strings(exported, tiny_tasks, tinylib):
    task, line = tiny_tasks[1][0], exported_lines(exported)[0]

    assert set(line) == SWEBENCH_FIELDS
    assert all(isinstance(value, str) for value in line.values())
    assert json.loads(line["FAIL_TO_PASS"]) == list(task.fail_to_pass)
    assert json.loads(line["PASS_TO_PASS"]) == list(task.pass_to_pass)
    assert line["instance_id"] == task.instance_id
    assert line["repo"] == tinylib.spec.url == "local/tinylib"
    assert line["patch"] == task.patch
    assert [p.path for p in split_patch(line["test_patch"])] == task_test_files(task)
    assert line["hints_text"] == ""
    assert line["created_at"] == "2026-01-01T00:00:00Z"
    assert line["version"] == task.version
    assert line["environment_setup_commit"] == line["base_commit"]


def test_export_commits_each_buggy_tree_on_the_prepared_commit(exported, tiny_tasks, tinylib):
    from agentgym.envs.swe.grading import starting_files
    from agentgym.envs.swe.swebench import mirror_path

    repository = mirror_path(exported[0], "local/tinylib")
    for task, line in zip(tiny_tasks[1], exported_lines(exported), strict=True):
        commit = line["base_commit"]
        assert git(repository, "rev-parse", f"{commit}^").strip() == tinylib.base_commit
        assert git(repository, "rev-parse", f"refs/tags/{task.instance_id}").strip() == commit
        for path, text in starting_files(tinylib, task).items():
            assert git(repository, "show", f"{commit}:{path}") == text
        # The task's test files come with its test patch, as in SWE-bench.
        files = git(repository, "ls-tree", "-r", "--name-only", commit).splitlines()
        assert task_test_files(task) and not set(task_test_files(task)) & set(files)
    assert "prepared/" + tinylib.spec.key in git(repository, "tag", "--list")


def test_export_gives_the_same_commits_every_time(exported, tiny_tasks, tmp_path):
    from agentgym.envs.swe.swebench import export_swebench

    again = export_swebench(tiny_tasks[1], tmp_path / "mirror")

    assert [r.base_commit for r in again] == [
        line["base_commit"] for line in exported_lines(exported)
    ]


def test_import_makes_tasks_on_the_buggy_trees(imported, exported, tiny_tasks, tinylib):
    from agentgym.envs.swe.grading import starting_files
    from agentgym.envs.swe.prepare import find_spec, prepared_repo

    for task, line, instance in zip(
        tiny_tasks[1], exported_lines(exported), imported[1], strict=True
    ):
        assert instance.repo == f"local__tinylib@{line['base_commit'][:12]}"
        assert (instance.instance_id, instance.bug_patch, instance.split) == (
            task.instance_id,
            "",
            "test",
        )
        assert (instance.patch, instance.fail_to_pass) == (task.patch, task.fail_to_pass)
        prepared = prepared_repo(find_spec(instance.repo))
        for path, text in starting_files(tinylib, task).items():
            assert prepared.read(path) == text


def play(env, task_id, actions):
    env.reset(seed=0, options={"task_id": task_id})
    info = {}
    for action in actions(env):
        _, _, terminated, _, info = env.step(action)
        if terminated:
            break
    return info["verdict"].score


def oracle(env):
    while (action := env.unwrapped.oracle_action()) is not None:
        yield action


def test_the_env_scores_an_imported_task_like_swebench(imported):
    import agentgym

    task_id = imported[1][0].instance_id
    env = agentgym.make("swe/Repair-v1", tasks=str(imported[0]))
    try:
        assert play(env, task_id, oracle) == 1.0
        assert play(env, task_id, lambda _: iter(['{"name": "submit", "arguments": {}}'])) == 0.0
    finally:
        env.close()


def test_a_clone_of_the_mirror_serves_as_a_checkout(exported, imported, tmp_path):
    from agentgym.envs.swe.swebench import import_swebench, load_swebench

    clone = tmp_path / "local__tinylib"
    subprocess.run(
        ["git", "clone", "-q", str(exported[0] / "local__tinylib.git"), str(clone)], check=True
    )

    assert import_swebench(load_swebench(exported[1]), tmp_path) == imported[1]


@pytest.fixture(scope="module")
def calc_checkouts(tmp_path_factory):
    """SWE-bench's shape in a small src-layout repository, ``acme/calc``, cloned as
    ``acme__calc``: the base commit has the bug, the test that shows it comes in
    ``test_patch``, the fix in ``patch``. The commit's sha is the same on every run."""
    from agentgym.envs.swe.patches import make_patch
    from agentgym.envs.swe.prepare import GIT_ENV
    from agentgym.envs.swe.swebench import SWEBenchRecord

    checkouts = tmp_path_factory.mktemp("checkouts")
    clone = checkouts / "acme__calc"
    buggy = "def add(a, b):\n    return a - b\n"
    files = {
        "src/calc/__init__.py": buggy,
        "tests/test_calc.py": "from calc import add\n\n\ndef test_zero():\n"
        "    assert add(0, 0) == 0\n",
    }
    for path, text in files.items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
    env = {
        **GIT_ENV,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PATH": "/usr/bin:/bin",
    }
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "calc"]):
        subprocess.run(["git", *argv], cwd=clone, env=env, check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    test = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    record = SWEBenchRecord(
        instance_id="acme__calc-1",
        repo="acme/calc",
        base_commit=commit,
        patch=make_patch({"src/calc/__init__.py": (buggy, buggy.replace("-", "+"))}),
        test_patch=make_patch({"tests/test_add.py": (None, test)}),
        problem_statement="add(2, 3) is -1",
        fail_to_pass=("tests/test_add.py::test_add",),
        pass_to_pass=("tests/test_calc.py::test_zero",),
        version="0.1",
    )
    return checkouts, record


def test_a_swebench_task_with_a_test_patch_runs_from_a_clone(calc_checkouts, tmp_path):
    import agentgym
    from agentgym.envs.swe.instances import save_instances
    from agentgym.envs.swe.prepare import find_spec
    from agentgym.envs.swe.swebench import import_swebench

    checkouts, record = calc_checkouts
    (instance,) = import_swebench([record], checkouts)
    spec = find_spec(instance.repo)
    save_instances([instance], tmp_path / "calc.jsonl")
    env = agentgym.make("swe/Repair-v1", tasks=str(tmp_path / "calc.jsonl"))
    try:
        assert play(env, "acme__calc-1", oracle) == 1.0
        assert (
            play(env, "acme__calc-1", lambda _: iter(['{"name": "submit", "arguments": {}}']))
            == 0.0
        )
    finally:
        env.close()

    assert instance.repo == f"acme__calc@{record.base_commit[:12]}"
    assert (instance.test_patch, instance.difficulty) == (record.test_patch, "easy")
    assert (spec.url, spec.import_roots) == ("acme/calc", ("src",))
    assert spec.tests == ("tests/test_add.py", "tests/test_calc.py")


def test_the_command_line_exports_and_imports(exported, imported, tiny_tasks, tmp_path):
    from agentgym.cli import main

    swebench, ours = tmp_path / "swebench.jsonl", tmp_path / "ours.jsonl"
    mirror = tmp_path / "mirror"

    assert (
        main(["swe", "export", str(tiny_tasks[0]), "--mirror", str(mirror), "--out", str(swebench)])
        == 0
    )
    assert swebench.read_text() == exported[1].read_text()
    assert (
        main(["swe", "import", str(swebench), "--checkouts", str(mirror), "--out", str(ours)]) == 0
    )
    assert ours.read_text() == imported[0].read_text()


def test_a_real_swebench_record_loads(tmp_path):
    from agentgym.envs.swe.swebench import load_swebench

    path = tmp_path / "verified.jsonl"
    listed = {**REAL_RECORD, "FAIL_TO_PASS": json.loads(REAL_RECORD["FAIL_TO_PASS"])}
    path.write_text(json.dumps(REAL_RECORD) + "\n\n" + json.dumps(listed) + "\n")

    strings, lists = load_swebench(path)

    assert strings == lists
    assert strings.fail_to_pass == (
        "test_requests.py::RequestsTestCase::test_HTTP_200_OK_GET_ALTERNATIVE",
    )
    assert len(strings.pass_to_pass) == 2
    assert (strings.repo, strings.version, strings.hints_text) == (
        "psf/requests",
        "2.4",
        REAL_RECORD["hints_text"],
    )
    assert strings.to_json() == {k: v for k, v in REAL_RECORD.items() if k in SWEBENCH_FIELDS}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"base_commit": None}, r"lacks the field 'base_commit'"),
        ({"FAIL_TO_PASS": None}, r"lacks the field 'FAIL_TO_PASS'"),
        ({"FAIL_TO_PASS": "[not json"}, r"field 'FAIL_TO_PASS' is a string but not JSON"),
        ({"PASS_TO_PASS": [1, 2]}, r"field 'PASS_TO_PASS' must be a list of test ids"),
        ({"repo": "requests"}, r"field 'repo' must be 'owner/name'"),
    ],
)
def test_a_bad_record_is_refused_naming_its_line_and_field(tmp_path, change, message):
    from agentgym.envs.swe.swebench import load_swebench
    from agentgym.errors import UsageError

    broken = {k: v for k, v in {**REAL_RECORD, **change}.items() if v is not None}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(REAL_RECORD) + "\n" + json.dumps(broken) + "\n")

    with pytest.raises(UsageError, match=rf"bad\.jsonl:2: not a SWE-bench instance: {message}"):
        load_swebench(path)


def test_a_checkout_without_the_base_commit_is_named(exported, tmp_path):
    from agentgym.envs.swe.swebench import import_swebench, load_swebench
    from agentgym.errors import UsageError

    records = load_swebench(exported[1])
    clone = tmp_path / "local__tinylib"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)

    with pytest.raises(
        UsageError, match=rf"checkout {clone} lacks the base commit {records[0].base_commit}"
    ):
        import_swebench(records[:1], tmp_path)


def test_a_missing_checkout_is_named(exported, tmp_path):
    from agentgym.envs.swe.swebench import import_swebench, load_swebench
    from agentgym.errors import UsageError

    with pytest.raises(UsageError, match=rf"no checkout of local/tinylib in {tmp_path}"):
        import_swebench(load_swebench(exported[1]), tmp_path)


def test_a_gold_patch_that_does_not_apply_to_the_base_commit_is_refused(exported, tiny_tasks):
    import dataclasses

    from agentgym.envs.swe.swebench import import_swebench, load_swebench
    from agentgym.errors import UsageError

    record = load_swebench(exported[1])[0]
    wrong = dataclasses.replace(record, patch=tiny_tasks[1][0].bug_patch)  # made for another tree

    with pytest.raises(UsageError, match=rf"its patch does not apply to {record.base_commit}"):
        import_swebench([wrong], exported[0])


def test_tests_pytest_cannot_run_are_refused_or_skipped(tmp_path):
    from agentgym.envs.swe.swebench import SWEBenchRecord, import_swebench
    from agentgym.errors import UsageError

    django = SWEBenchRecord.from_json(
        {**REAL_RECORD, "FAIL_TO_PASS": '["test_basic (model_fields.test_field.Tests)"]'}
    )
    skipped = []

    with pytest.raises(UsageError, match=r"psf__requests-2317 .* is not a pytest node id"):
        import_swebench([django], tmp_path)
    assert import_swebench([django], tmp_path, skip_unsupported=True, log=skipped.append) == []
    assert skipped and "is not a pytest node id" in skipped[0]


def test_difficulty_comes_from_the_size_of_the_gold_patch():
    from agentgym.envs.swe.patches import make_patch
    from agentgym.envs.swe.swebench import patch_difficulty

    def lines(count):
        return "".join(f"line {i}\n" for i in range(count))

    assert patch_difficulty(make_patch({"a.py": ("x = 1\n", "x = 2\n")})) == "easy"
    assert patch_difficulty(make_patch({"a.py": ("", lines(10))})) == "medium"
    two_files = {"a.py": ("x = 1\n", "x = 2\n"), "b.py": ("y = 1\n", "y = 2\n")}
    assert patch_difficulty(make_patch(two_files)) == "medium"
    assert patch_difficulty(make_patch({"a.py": ("", lines(31))})) == "hard"
    three_files = {**two_files, "c.py": ("z = 1\n", "z = 2\n")}
    assert patch_difficulty(make_patch(three_files)) == "hard"


def test_swebench_runs_the_exported_task_as_its_eval_script_does(exported, tmp_path):
    """SWE-bench's eval script: a checkout of base_commit, the model's patch (here the gold
    one), then ``git checkout <base> <files the test patch modifies>`` and ``git apply`` of the
    test patch, which an empty test patch fails (exit 128). Then the task's tests are there,
    as the prepared repository has them."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(exported[0] / "local__tinylib.git"), str(clone)])
    for line in exported_lines(exported):
        base = line["base_commit"]
        run = lambda *argv, stdin=None: subprocess.run(  # noqa: E731
            argv, cwd=clone, input=stdin, text=True, capture_output=True
        )
        assert run("git", "checkout", "-q", "-f", base).returncode == 0
        assert run("git", "clean", "-q", "-fdx").returncode == 0
        assert run("git", "apply", "-v", "-", stdin=line["patch"]).returncode == 0
        modified = [p.path for p in split_patch(line["test_patch"]) if not p.added]
        if modified:
            assert run("git", "checkout", base, "--", *modified).returncode == 0
        applied = run("git", "apply", "-v", "-", stdin=line["test_patch"])
        assert applied.returncode == 0, applied.stderr
        tests = {t.split("::")[0] for t in json.loads(line["FAIL_TO_PASS"])}
        assert all((clone / path).is_file() for path in tests)


def test_exported_test_ids_are_ones_swebench_reads_back_from_a_test_log(tiny_tasks, tmp_path):
    """SWE-bench reads each test's outcome from ``pytest -rA``'s summary lines, ``PASSED
    <id>``, taking the id as the line's second whitespace-separated word: an id with a
    space would come back cut short, its test not run, and the gold patch unresolved. Such
    ids are left out; a task whose failing tests all have one is left out whole."""
    from agentgym.envs.swe.swebench import export_swebench

    task = tiny_tasks[1][0]
    spaced = dataclasses.replace(
        task,
        fail_to_pass=(*task.fail_to_pass, "tests/test_x.py::test_y[a b]"),
        pass_to_pass=(*task.pass_to_pass, "tests/test_x.py::test_z[tab\there]"),
    )
    only_spaced = dataclasses.replace(
        task, instance_id=task.instance_id + "-b", fail_to_pass=("tests/t.py::t[a b]",)
    )
    logged = []
    records = export_swebench([spaced, only_spaced], tmp_path / "mirror", log=logged.append)
    assert [r.instance_id for r in records] == [task.instance_id]
    assert (records[0].fail_to_pass, records[0].pass_to_pass) == (
        task.fail_to_pass,
        task.pass_to_pass,
    )
    log = "\n".join(f"PASSED {test_id}" for test_id in records[0].fail_to_pass)
    assert {line.split()[1] for line in log.splitlines()} == set(records[0].fail_to_pass)
    assert any("left out 2 test ids" in line for line in logged)
    assert any(f"left out {only_spaced.instance_id}" in line for line in logged)
