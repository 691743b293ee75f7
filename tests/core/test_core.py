"""Verdict and the generated task set."""

import numpy as np
import pytest

from agentgym.core import GeneratedTaskSet, Verdict
from agentgym.errors import TaskError


def make_set():
    return GeneratedTaskSet(
        "demo", lambda *args: args, ("easy", "hard"), sizes={"train": 4, "dev": 2, "test": 2}
    )


def test_verdict_round_trips_through_a_dict():
    verdict = Verdict(0.5, False, {"a": 0.5}, "half", max_score=1.0)
    assert Verdict.from_dict(verdict.to_dict()) == verdict


def test_verdict_rejects_a_score_out_of_range():
    with pytest.raises(ValueError, match=r"score 1.5 is outside \[0, 1.0\]"):
        Verdict(1.5, True)


def test_generated_ids_are_stable_and_split_disjoint():
    tasks = make_set()
    assert list(tasks.ids("dev")) == ["dev/easy/0", "dev/easy/1", "dev/hard/0", "dev/hard/1"]
    assert tasks.count("train") == 8 and tasks.count("train", "hard") == 4
    seeds = {split: {tasks.seed_of(i) for i in tasks.ids(split)} for split in tasks.splits}
    assert not (seeds["train"] & seeds["test"]) and not (seeds["dev"] & seeds["test"])
    assert tasks.seed_of("dev/easy/0") == make_set().seed_of("dev/easy/0")


def test_get_passes_id_split_difficulty_and_seed():
    tasks = make_set()
    assert tasks.get("test/hard/1") == ("test/hard/1", "test", "hard", tasks.seed_of("test/hard/1"))


@pytest.mark.parametrize("bad", ["test/hard/2", "test/medium/0", "nope", "train/easy/-1", 7])
def test_unknown_task_ids_name_the_format(bad):
    with pytest.raises(TaskError, match="ids look like 'SPLIT/DIFFICULTY/INDEX'"):
        make_set().get(bad)


def test_sampling_is_seeded_and_respects_split_and_difficulty():
    tasks = make_set()
    first = [tasks.sample(np.random.default_rng(1), "dev", "hard")[0] for _ in range(3)]
    again = [tasks.sample(np.random.default_rng(1), "dev", "hard")[0] for _ in range(3)]
    assert first == again and all(t.startswith("dev/hard/") for t in first)


def test_unknown_split_and_difficulty_are_task_errors():
    with pytest.raises(TaskError, match=r"unknown split 'val'; this env has splits \['train'"):
        make_set().ids("val")
    with pytest.raises(TaskError, match=r"unknown difficulty 'medium'"):
        make_set().count("dev", "medium")
