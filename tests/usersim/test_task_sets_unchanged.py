"""Every usersim task stays byte-identical: ids, scenarios, scripts, gold databases, and
what the env shows (instructions, policy, tool schemas, the initial database).

A refactor of the domains (issue 28 made each one a package) must not change a single task:
a task id names the same conversation forever (``docs/envs/usersim.md``). This test pins
each task set by SHA-256 digests stored in ``task_set_digests.json`` beside it:

* per id, a digest of what the env shows: the instructions (role, policy, tool signatures),
  the agent's and the user's tool schemas, the domain's constants the env enforces, and the
  initial database;
* per (id, split), a digest of every task in order (its id, seed, template, the user's
  scenario, the oracle's script, the required outputs and calls, the gold database's hash;
  for Diagnosis the patient and the goal): the whole dev and test splits, and a fixed sample
  of :data:`TRAIN_SAMPLE` train tasks;
* per (id, split), the digests of a fixed sample of :data:`SAMPLE` tasks, so that a change
  names a task.

The suite checks the small samples of the dev and test splits; ``make check``
(``AGENTGYM_FULL_CONFORMANCE=1``, ``tests/sampling.py``) checks the per-split digests.
Drawing a task costs a fresh database (~60 ms for airline) and its gold replay as much again:
the 6,000 train tasks of a domain take 5 to 10 CPU-minutes, more than ``make check`` should
spend here and more than this machine could give when the digests were written, so train
is pinned by its sample (which draws every template of every domain).

The digests were written from the code before the refactor (the tree of commit ca651d3, the
one the digest test was added on), by::

    PYTHONPATH=tests .venv/bin/python tests/usersim/test_task_sets_unchanged.py --write
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sampling import FULL

import agentgym
from agentgym.core import Env
from agentgym.envs.usersim.domain import db_hash

IDS = ("usersim/Retail-v2", "usersim/Airline-v2", "usersim/Telecom-v2", "usersim/Diagnosis-v0")
PINNED_AS = {f"usersim/{d}-v2": f"usersim/{d}-v1" for d in ("Retail", "Airline", "Telecom")}
"""The id whose stored digests (and sample draws) pin a current id: v2 reads one more kind of
action as invalid (a Python-style call of an unknown tool) and changes no task, so its tasks
are v1's, byte for byte."""
SPLITS = ("train", "dev", "test")
SAMPLE = 4
"""Tasks per (id, split) whose own digests are stored (and checked in the suite)."""
TRAIN_SAMPLE = 150
"""Train tasks per id in its per-split digest (dev and test are digested whole)."""
DIGESTS = Path(__file__).with_name("task_set_digests.json")


def canonical(value: Any) -> str:
    """``value`` as canonical JSON: sorted keys, dataclasses as dicts, sets sorted."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return json.dumps(value, sort_keys=True, default=_json_default, ensure_ascii=False)


def _json_default(value: Any) -> Any:
    """Sets as sorted lists (their iteration order changes with the hash seed), anything
    else that is not JSON by its ``repr``."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


@functools.cache
def _env(env_id: str) -> Env[Any, Any]:
    env = agentgym.make(env_id).unwrapped
    assert isinstance(env, Env)
    return env


def shown(env_id: str) -> dict[str, Any]:
    """What the env shows of itself, whatever the task: instructions, tools, database."""
    env: Any = _env(env_id)
    domain = getattr(env, "domain", None)
    view: dict[str, Any] = {"instructions": env.instructions("")}
    if domain is not None:
        view |= {
            "tools": env.tools,
            "user_tools": [tool.schema() for tool in domain.user_tools()],
            "triggers": [
                [t.name, t.triggers, t.trigger_arguments, t.proposed_as, t.named_arguments]
                for t in [*domain.agent_tools(), *domain.user_tools()]
            ],
            "writes": [t.name for t in domain.agent_tools() if t.writes],
            "constants": [
                domain.name,
                domain.title,
                sorted(domain.auth_tools),
                sorted(domain.end_tools),
                domain.db_seed,
                domain.vocabularies,
            ],
            "checks": sorted(domain.checks()),
            "db": db_hash(domain.db()),
        }
    return view


def task_record(env_id: str, task_id: str) -> dict[str, Any]:
    """One task as the env holds it, JSON-able."""
    task: Any = _env(env_id).tasks.get(task_id)
    record = {"id": task.id, "split": task.split, "difficulty": task.difficulty, "seed": task.seed}
    if hasattr(task, "draft"):  # a customer-service conversation
        draft = task.draft
        return record | {
            "template": task.template,
            "draft": dataclasses.asdict(draft),
            "outputs": draft.outputs,
            "calls": sorted(draft.calls),
            "gold": task.gold[1],
        }
    _, goal = task.setup(np.random.default_rng(0))  # Diagnosis: the patient and the goal
    return record | {"patient": dataclasses.asdict(task.patient), "goal": goal}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pinned(env_id: str) -> str:
    """The id ``env_id``'s digests are stored under (:data:`PINNED_AS`)."""
    return PINNED_AS.get(env_id, env_id)


def sample_ids(env_id: str, split: str) -> list[str]:
    """The fixed sample of a split whose tasks have their own digests."""
    draw = random.Random(f"{pinned(env_id)}/{split}")
    return draw.sample(list(_env(env_id).tasks.ids(split)), SAMPLE)


def digested_ids(env_id: str, split: str) -> list[str]:
    """The tasks of a split's digest, in id order: all of them, or train's fixed sample."""
    ids = list(_env(env_id).tasks.ids(split))
    if split == "train":
        ids = sorted(random.Random(f"{pinned(env_id)}/train/digest").sample(ids, TRAIN_SAMPLE))
    return ids


def split_digest(env_id: str, split: str) -> str:
    """The digest of a split's tasks (:func:`digested_ids`), in order."""
    h = hashlib.sha256()
    for task_id in digested_ids(env_id, split):
        h.update(canonical(task_record(env_id, task_id)).encode() + b"\n")
    return h.hexdigest()


def write() -> None:
    """Store the digests of the current code: what the envs show first (which imports every
    module), then each split, rewriting the file after each."""
    out: dict[str, Any] = {
        pinned(env_id): {"shown": digest(canonical(shown(env_id)))} for env_id in IDS
    }
    for split in ("dev", "test", "train"):
        for env_id in IDS:
            tasks = {
                t: digest(canonical(task_record(env_id, t))) for t in sample_ids(env_id, split)
            }
            out[pinned(env_id)][split] = {"all": split_digest(env_id, split), "sample": tasks}
            DIGESTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
            print(env_id, split, out[env_id][split]["all"][:12], file=sys.stderr, flush=True)


def _stored(env_id: str) -> dict[str, Any]:
    """The digests stored for ``env_id`` (under its :func:`pinned` id)."""
    stored: dict[str, Any] = json.loads(DIGESTS.read_text())[pinned(env_id)]
    return stored


@pytest.mark.parametrize("env_id", IDS)
def test_what_the_env_shows_is_unchanged(env_id: str) -> None:
    assert digest(canonical(shown(env_id))) == _stored(env_id)["shown"], (
        f"{env_id} shows something else than before (instructions, policy, tool schemas or "
        f"initial database): see the docstring of {Path(__file__).name}"
    )


@pytest.mark.parametrize("split", ("dev", "test"))
@pytest.mark.parametrize("env_id", IDS)
def test_sampled_tasks_are_unchanged(env_id: str, split: str) -> None:
    stored = _stored(env_id)[split]["sample"]
    assert sorted(sample_ids(env_id, split)) == sorted(stored), f"{env_id} {split}: other task ids"
    changed = [t for t in stored if digest(canonical(task_record(env_id, t))) != stored[t]]
    assert not changed, f"{env_id}: these tasks changed: {changed}"


@pytest.mark.sampled
@pytest.mark.skipif(not FULL, reason="every dev and test task, 150 of train: make check only")
@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("env_id", IDS)
def test_splits_are_unchanged(env_id: str, split: str) -> None:
    assert split_digest(env_id, split) == _stored(env_id)[split]["all"], (
        f"{env_id}: a task of the {split} split changed"
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write  (stores the digests of the current code)")
    write()
