"""Registers the faulty test envs for the evaluator tests only (not seen by conformance).

Module-scoped: a session-scoped registration stayed in the worker after the evaluator tests,
where the checks that count the registered ids (tests/test_wheel.py, tests/core) counted
these too when xdist gave them the same worker."""

import gymnasium
import pytest

import agentgym
from agentgym import registry

FAULTS = ("raise_on_step", "hang_on_step", "flaky_reset", "slow_step")


@pytest.fixture(scope="module", autouse=True)
def faulty_envs():
    ids = []
    for fault in FAULTS:
        env_id = "evaltest/" + "".join(p.title() for p in fault.split("_")) + "-v0"
        agentgym.register(
            env_id,
            entry_point="faulty_envs:FaultyHanoi",
            kwargs={"fault": fault, "delay": 0.05},
            max_episode_steps=50,
        )
        ids.append(env_id)
    yield ids
    for env_id in ids:
        registry._registry.pop(env_id, None)
        gymnasium.registry.pop(env_id, None)
