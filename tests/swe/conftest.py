"""SWE fixtures: a small real library (``tinylib``, beside this file) prepared once, and tasks
the factory made from it, validated for real.

Preparing tinylib (its test environment and its suite, twice) takes seconds and is cached
under ``$AGENTGYM_CACHE/swe`` like any repository, keyed by a digest of its files; the
factory's tasks are made once per test session. The catalogue's repositories are used
only by the tests that say so (``more_itertools``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

TINYLIB = Path(__file__).parent / "tinylib"
collect_ignore = ["tinylib"]  # its own suite runs in the sandbox, not in ours


@pytest.fixture(scope="session")
def tinylib():
    """The prepared tinylib, with its baseline."""
    from agentgym.envs.swe.prepare import prepare, spec_for_local

    return prepare(spec_for_local(TINYLIB, "tinylib"), source=TINYLIB, baseline=True)


@pytest.fixture(scope="session")
def tiny_tasks(tinylib, tmp_path_factory):
    """A JSON Lines file of tinylib tasks (two easy, one medium) and the instances."""
    from agentgym.envs.swe.factory import make_tasks
    from agentgym.envs.swe.instances import save_instances

    tasks, _ = make_tasks(tinylib, {"easy": 2, "medium": 1})
    path = tmp_path_factory.mktemp("swe") / "tiny.jsonl"
    save_instances(tasks, path)
    return path, tasks


@pytest.fixture
def tiny_env(tiny_tasks):
    import agentgym

    env = agentgym.make("swe/Repair-v0", tasks=str(tiny_tasks[0]))
    yield env
    env.close()
