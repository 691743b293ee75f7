"""swe-v0: its shape (at least 100 test tasks over six repositories, three levels, splits
disjoint by repository and by function), and the oracle resolves a sample of it.

Every task of the file was validated when it was made (the factory ran its tests for real)
and again before it was shipped (the gold patch resolves it and the bug is caught, under the
test environments ``make swe-repos`` builds); the suite plays the oracle on one task of each
test repository, through the evaluator.
"""

from collections import Counter

from agentgym.envs.swe.env import DEFAULT_TASKS
from agentgym.envs.swe.instances import load_instances
from agentgym.envs.swe.repos import CATALOGUE
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark, load_benchmark


def test_swe_v0_has_a_hundred_test_tasks_over_six_repositories_and_three_levels():
    tasks = load_instances(DEFAULT_TASKS)
    test = [t for t in tasks if t.split == "test"]
    assert len(test) >= 100
    assert len({t.repo for t in test}) >= 6
    assert Counter(t.difficulty for t in test).keys() == {"easy", "medium", "hard"}
    assert {t.split for t in tasks} == {"train", "dev", "test"}


def test_splits_are_disjoint_by_repository_and_by_function():
    tasks = load_instances(DEFAULT_TASKS)
    splits = {spec.name: spec.split for spec in CATALOGUE}
    assert all(splits[t.repo] == t.split for t in tasks)
    functions: dict[tuple[str, str, str], str] = {}
    for task in tasks:
        for mutation in task.mutations:
            key = (task.repo, mutation["path"], mutation["function"])
            assert functions.setdefault(key, task.split) == task.split


def test_every_task_names_failing_tests_apart_from_passing_ones_and_a_gold_patch():
    for task in load_instances(DEFAULT_TASKS):
        assert task.fail_to_pass and task.patch and task.bug_patch
        assert not set(task.fail_to_pass) & set(task.pass_to_pass)
        assert all(nodeid in task.problem_statement for nodeid in task.fail_to_pass[:20])


def test_the_benchmark_file_runs_every_test_task():
    benchmark = load_benchmark("swe-v0")
    (entry,) = benchmark.envs
    assert entry.id == "swe/Repair-v1" and entry.split == "test"
    assert len(entry.task_ids()) == sum(
        1 for t in load_instances(DEFAULT_TASKS) if t.split == "test"
    )


def test_the_oracle_resolves_a_task_of_every_test_repository(tmp_path):
    tasks = [t for t in load_instances(DEFAULT_TASKS) if t.split == "test"]
    levels = ("easy", "medium", "hard")
    chosen = []
    for index, repo in enumerate(sorted({t.repo for t in tasks})):
        level = levels[index % 3]
        chosen.append(
            next(t.instance_id for t in tasks if t.repo == repo and t.difficulty == level)
        )
    benchmark = Benchmark.from_dict(
        {
            "name": "swe-v0-sample",
            "seed": 0,
            "envs": [{"id": "swe/Repair-v1", "split": "test", "tasks": chosen, "max_steps": 5}],
        }
    )
    result = evaluate(benchmark, "oracle", tmp_path / "run", num_envs=2)
    overall = result.summary["overall"]
    assert overall["errored"] == 0, [r.error for r in result.records if r.error]
    assert overall["success"] == 1.0 and len(result.records) == len(chosen)
