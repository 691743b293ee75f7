"""The task factory: injected bugs, kept only when the real tests catch them."""

from agentgym.envs.swe.factory import make_tasks, problem_statement, source_files
from agentgym.envs.swe.grading import grade, starting_files
from agentgym.envs.swe.patches import split_patch
from agentgym.envs.swe.testrun import TestOutcome, TestReport


def test_the_package_files_are_the_sources_and_the_tests_are_not(tinylib):
    assert source_files(tinylib) == [
        "tinylib/__init__.py",
        "tinylib/numbers.py",
        "tinylib/sequences.py",
    ]


def test_every_task_breaks_its_fail_to_pass_tests_and_its_gold_patch_resolves_it(
    tinylib, tiny_tasks
):
    tasks = tiny_tasks[2]
    assert [t.difficulty for t in tasks] == ["easy", "easy", "medium"]
    for task in tasks:
        assert task.fail_to_pass and not set(task.fail_to_pass) & set(task.pass_to_pass)
        assert set(task.fail_to_pass) <= tinylib.passing  # they passed before the bug
        assert grade(tinylib, task, "").verdict.score == 0.0  # the bug is real
        assert grade(tinylib, task, task.patch).verdict.score == 1.0  # and the gold fixes it


def test_a_medium_task_has_two_changes_in_one_file(tiny_tasks):
    medium = next(t for t in tiny_tasks[2] if t.difficulty == "medium")
    assert len(medium.mutations) == 2
    assert len({m["path"] for m in medium.mutations}) == 1
    assert [p.path for p in split_patch(medium.bug_patch)] == [medium.mutations[0]["path"]]


def test_the_factory_is_deterministic_for_a_seed(tinylib, tiny_tasks):
    again, _ = make_tasks(tinylib, {"easy": 2, "medium": 1})
    assert [t.instance_id for t in again] == [t.instance_id for t in tiny_tasks[2]]


def test_the_problem_statement_names_the_failing_tests_but_not_the_change(tinylib, tiny_tasks):
    for task in tiny_tasks[2]:
        statement = task.problem_statement
        assert all(nodeid in statement for nodeid in task.fail_to_pass)
        fixed = starting_files(tinylib, task)
        for path in fixed:
            assert path not in statement  # the package's frames are left out
        removed = [
            line[1:].strip()
            for line in task.patch.splitlines()
            if line.startswith("-") and not line.startswith("---") and line[1:].strip()
        ]
        lines = {line.strip() for line in statement.splitlines()}
        assert not any(line in lines for line in removed)  # no line of the change is quoted


def test_the_statement_keeps_test_frames_and_error_lines_and_drops_package_frames():
    text = (
        "tests/test_x.py:10: in test_it\n    assert f(2) == 3\n"
        "pkg/mod.py:5: in f\n    return g(x) - 1\nE   AssertionError: assert 2 == 3"
    )
    report = TestReport(
        {
            "tests/test_x.py::test_it": TestOutcome(
                "tests/test_x.py::test_it", "failed", "assert 2 == 3", text
            )
        },
        1,
        False,
        1.0,
        True,
    )
    statement = problem_statement("pkg", ["tests/test_x.py::test_it"], report)
    assert "assert f(2) == 3" in statement and "E   AssertionError" in statement
    assert "pkg/mod.py" not in statement and "return g(x) - 1" not in statement
