"""Benchmark: the SWE family's costs, as ratios against references measured in the same run.

Not a test (these machines are noisy). Each figure is a median over ``--rounds`` rounds in
which a variant and its reference alternate:

* **a bash step**: ``echo`` through the env's ``bash`` tool in a warm session (the step's
  state key included: read on the host from the working copy's overlay, with bwrap) vs a
  raw ``subprocess.run`` of the same command on the host (goal: <= 2x), and the command
  alone in the session;
* **a working copy** of the largest prepared repository (most files): a sandbox with the
  copy-on-write overlay vs one with a full copy of the tree (``put_dir``), the design the
  overlay replaces; and ``env.reset`` on it (the bug written, a fresh git repository, the
  shells), absolute;
* **grading** a task's gold patch (``grade``: a fresh sandbox, the patch filtered and
  applied, the canaries, the tests by id, JUnit) vs running the same tests directly in an
  open sandbox that already holds the fixed tree (goal: <= 1.3x), over the first task of
  each repository in the task file;
* **the factory**: validated tasks per minute on one repository (``--factory-repo``).

    python tests/perf/bench_swe.py [--rounds N] [--tasks FILE] [--factory-repo toolz]

The repositories of the task file are prepared first where they are not (as ``agentgym swe
prepare`` does: a download per repository, once per machine), and the factory's repository
with its baseline (its suite run twice, offline; a minute or so, once).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import subprocess
import time
from collections.abc import Callable

import agentgym
from agentgym.envs.swe import grading
from agentgym.envs.swe.env import DEFAULT_TASKS
from agentgym.envs.swe.factory import make_tasks
from agentgym.envs.swe.grading import grade, harness_references, starting_files
from agentgym.envs.swe.instances import load_instances
from agentgym.envs.swe.patches import apply_patch, split_patch
from agentgym.envs.swe.prepare import find_spec, prepare, prepared_repo
from agentgym.envs.swe.testrun import run_tests
from agentgym.envs.swe.workspace import open_workspace, workspace_spec
from agentgym.sandbox import create


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def alternate(rounds: int, variant: Callable[[], object], reference: Callable[[], object]):
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(timed(variant))
        theirs.append(timed(reference))
    return statistics.median(ours), statistics.median(theirs)


def report(name: str, ours: float, theirs: float, unit: str = "ms") -> None:
    scale = 1000 if unit == "ms" else 1
    print(
        f"{name:58} {ours * scale:9.1f} {unit} vs {theirs * scale:9.1f} {unit}  "
        f"ratio {ours / theirs:6.2f}x"
    )


def bench_bash(env, task_id: str, rounds: int) -> None:
    env.reset(seed=0, options={"task_id": task_id})
    step = {"name": "bash", "arguments": {"command": "echo hi"}}
    raw = ["/bin/sh", "-c", "echo hi"]
    ours, theirs = alternate(
        rounds * 10,
        lambda: env.step(step),
        lambda: subprocess.run(raw, capture_output=True, check=True),
    )
    report("bash step (with its state key) vs raw subprocess (goal <= 2x)", ours, theirs)
    shell = env.unwrapped._world.shell
    ours, theirs = alternate(
        rounds * 10,
        lambda: shell.run("echo hi"),
        lambda: subprocess.run(raw, capture_output=True, check=True),
    )
    report("the command alone in the warm session vs raw subprocess", ours, theirs)


def bench_reset(tasks, rounds: int) -> None:
    largest = max(
        {t.repo: t for t in tasks}.values(),
        key=lambda t: sum(1 for _ in prepared_repo(find_spec(t.repo)).tree.rglob("*")),
    )
    prepared = prepared_repo(find_spec(largest.repo))
    files = sum(1 for p in prepared.tree.rglob("*") if p.is_file())

    def overlay() -> None:
        with create(workspace_spec(prepared)) as box:
            box.exec("true")

    def copy() -> None:
        plain = dataclasses.replace(workspace_spec(prepared), overlays=())
        with create(plain) as box:
            box.put_dir(str(prepared.tree), "/work/copy")

    ours, theirs = alternate(rounds, overlay, copy)
    report(
        f"a working copy of {prepared.spec.key} ({files} files): overlay vs full copy", ours, theirs
    )
    env = agentgym.make("swe/Repair-v1", tasks=str(_tasks_path))
    try:
        resets = [
            timed(lambda: env.reset(seed=0, options={"task_id": largest.instance_id}))
            for _ in range(rounds)
        ]
    finally:
        env.close()
    print(
        f"{'env.reset on it (the bug written, git init, a shell): median':58} "
        f"{statistics.median(resets) * 1000:9.1f} ms"
    )


def bench_grading(tasks, rounds: int) -> None:
    firsts = list({t.repo: t for t in tasks}.values())
    ratios = []
    for task in firsts:
        prepared = prepared_repo(find_spec(task.repo))
        start = starting_files(prepared, task)
        fixed = dict(start)
        originals = {
            p.path: start.get(p.path) or prepared.read(p.path) for p in split_patch(task.patch)
        }
        fixed.update(apply_patch(originals, task.patch))
        selected = [*task.fail_to_pass, *task.pass_to_pass]
        with open_workspace(prepared, fixed) as box:
            ours_runs, theirs_runs = [], []
            for _ in range(rounds):
                # As when a task is graded again: its starting and pristine files were screened
                # before (remembered), the submitted patch is new (screened now).
                grading._references.cache_clear()
                for path, text in originals.items():
                    harness_references(text)
                    harness_references(prepared.read(path))
                ours_runs.append(timed(lambda: grade(prepared, task, task.patch)))  # noqa: B023
                theirs_runs.append(
                    timed(lambda: run_tests(box, prepared.spec, selected, timeout=600))  # noqa: B023
                )
            ours, theirs = statistics.median(ours_runs), statistics.median(theirs_runs)
        ratios.append(ours / theirs)
        report(
            f"grading {task.repo} ({len(selected)} tests) vs the tests alone",
            ours,
            theirs,
            unit="s",
        )
    print(
        f"{'grading vs the tests alone, median over repositories':58} "
        f"ratio {statistics.median(ratios):6.2f}x (goal <= 1.3x)"
    )


def prepare_repos(tasks, factory_repo: str) -> None:
    """Every repository the benchmark uses, ready (quick where they already are)."""
    for name in sorted({t.repo for t in tasks} | {factory_repo}):
        prepare(find_spec(name), baseline=name == factory_repo, log=print)


def bench_factory(name: str) -> None:
    prepared = prepared_repo(find_spec(name), baseline=True)
    _tasks, stats = make_tasks(prepared, {"easy": 6, "medium": 2, "hard": 2}, seed=1)
    print(
        f"factory on {prepared.spec.key}: {stats.kept} tasks from {stats.candidates} "
        f"candidates in {stats.seconds:.0f} s = {stats.per_minute:.1f} validated tasks per "
        f"minute (rejected: {stats.rejected})"
    )


_tasks_path = DEFAULT_TASKS


def main() -> None:
    global _tasks_path
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", default=str(DEFAULT_TASKS))
    parser.add_argument("--factory-repo", default="toolz")
    args = parser.parse_args()
    _tasks_path = args.tasks
    tasks = load_instances(args.tasks)
    prepare_repos(tasks, args.factory_repo)
    env = agentgym.make("swe/Repair-v1", tasks=args.tasks)
    try:
        bench_bash(env, tasks[0].instance_id, args.rounds)
    finally:
        env.close()
    bench_reset(tasks, args.rounds)
    bench_grading(tasks, args.rounds)
    bench_factory(args.factory_repo)


if __name__ == "__main__":
    main()
