"""What make and reset remember: a task file per version, a task's starting files."""

import os

from agentgym.envs.swe import grading
from agentgym.envs.swe.grading import starting_files
from agentgym.envs.swe.instances import load_instances, save_instances


def test_a_task_file_is_parsed_once_per_version(tmp_path, mean_task, window_task):
    path = tmp_path / "tasks.jsonl"
    save_instances([mean_task], path)
    first = load_instances(path)
    first.append(window_task)  # the caller's own list
    assert load_instances(path) == [mean_task]
    save_instances([mean_task, window_task], path)
    os.utime(path, ns=(1, 1))  # written again: even dated back, its size tells
    assert load_instances(path) == [mean_task, window_task]


def test_a_tasks_starting_files_are_worked_out_once(tinylib, mean_task, monkeypatch):
    expected = starting_files(tinylib, mean_task)
    applied = []
    monkeypatch.setattr(grading, "apply_patch", lambda *a: applied.append(a))
    again = starting_files(tinylib, mean_task)
    assert again == expected and not applied  # no git apply at a reset
    again["tinylib/numbers.py"] = "changed by a caller"
    assert starting_files(tinylib, mean_task) == expected
