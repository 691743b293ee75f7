"""SWE fixtures: a small real library (``tinylib``, beside this file) prepared once, and tasks
the factory made from it, validated for real.

Preparing tinylib (its test environment and its suite, twice) takes seconds and is cached
under ``$AGENTGYM_CACHE/swe`` like any repository, keyed by a digest of its files; the
factory's tasks are made once per test session. The catalogue's repositories are used
only by the tests that say so (``more_itertools``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

TINYLIB = Path(__file__).parent / "tinylib"
collect_ignore = ["tinylib"]  # its own suite runs in the sandbox, not in ours


@pytest.fixture(scope="session")
def tinylib():
    """The prepared tinylib, with its baseline."""
    from agentgym.envs.swe.prepare import prepare, spec_for_local

    return prepare(spec_for_local(TINYLIB, "tinylib"), source=TINYLIB, baseline=True)


def hand_made_task(tinylib, path, old, new, fail_to_pass, pass_to_pass):
    """A task with a bug written by hand (``old`` -> ``new`` in ``path``): tests that attack
    or probe a particular bug name it here rather than hope the factory drew it."""
    from agentgym.envs.swe.instances import SWEInstance
    from agentgym.envs.swe.patches import make_patch

    source = tinylib.read(path)
    assert source.count(old) == 1, f"{old!r} is not once in {path}"
    buggy = source.replace(old, new)
    bug_patch = make_patch({path: (source, buggy)})
    return SWEInstance(
        instance_id=f"tinylib.by-hand-{hashlib.sha256(bug_patch.encode()).hexdigest()[:8]}",
        repo="tinylib",
        version=tinylib.spec.version,
        base_commit=tinylib.base_commit,
        bug_patch=bug_patch,
        patch=make_patch({path: (buggy, source)}),
        problem_statement="These tests fail:\n" + "\n".join(f"- {t}" for t in fail_to_pass),
        fail_to_pass=tuple(fail_to_pass),
        pass_to_pass=tuple(pass_to_pass),
        split="test",
        difficulty="easy",
    )


@pytest.fixture(scope="session")
def mean_task(tinylib):
    """``mean`` stops counting: its two tests of a non-empty sequence fail."""
    numbers = "tests/test_numbers.py::"
    return hand_made_task(
        tinylib,
        "tinylib/numbers.py",
        "count += 1",
        "count += 0",
        [f"{numbers}test_mean", f"{numbers}test_mean_of_one"],
        [f"{numbers}test_mean_of_nothing_is_an_error"],
    )


@pytest.fixture(scope="session")
def window_task(tinylib):
    """``window`` loses its last window: two of its three tests fail."""
    sequences = "tests/test_sequences.py::"
    return hand_made_task(
        tinylib,
        "tinylib/sequences.py",
        "range(len(items) - width + 1)",
        "range(len(items) - width)",
        [f"{sequences}test_window", f"{sequences}test_window_as_wide_as_the_items"],
        [f"{sequences}test_window_wider_than_the_items"],
    )


@pytest.fixture(scope="session")
def tiny_tasks(tinylib, mean_task, window_task, tmp_path_factory):
    """A JSON Lines file of tinylib tasks, the instances, and the factory's alone: the
    factory's (two easy, one medium, in that order), then the two made by hand."""
    from agentgym.envs.swe.factory import make_tasks
    from agentgym.envs.swe.instances import save_instances

    made, _ = make_tasks(tinylib, {"easy": 2, "medium": 1})
    tasks = [*made, mean_task, window_task]
    path = tmp_path_factory.mktemp("swe") / "tiny.jsonl"
    save_instances(tasks, path)
    return path, tasks, made


@pytest.fixture
def tiny_env(tiny_tasks):
    import agentgym

    env = agentgym.make("swe/Repair-v1", tasks=str(tiny_tasks[0]))
    yield env
    env.close()
