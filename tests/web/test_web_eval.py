"""Web envs under the evaluator: a browser killed mid-episode errors that episode only.

The testbed env (tests/web/testbed.py, a test double of a site) is registered for these tests
only, under an id the conformance suite does not see.
"""

import os
import signal

import gymnasium
import pytest

import agentgym
from agentgym import registry
from agentgym.agents import Agent
from agentgym.benchmarks import Benchmark
from agentgym.eval import EngineLimits, evaluate

TESTBED = "webtest/Testbed-v0"


@pytest.fixture(scope="module", autouse=True)
def testbed_id():
    agentgym.register(TESTBED, entry_point="testbed:TestbedEnv", max_episode_steps=20)
    yield
    registry._registry.pop(TESTBED, None)
    gymnasium.registry.pop(TESTBED, None)


def benchmark(tasks):
    return Benchmark.from_dict(
        {"name": "web-faults", "envs": [{"id": TESTBED, "split": "test", "tasks": tasks}]}
    )


class Saboteur(Agent):
    """Plays the oracle, but on its first episode's second turn kills every Chromium process."""

    sabotaged = False

    def reset(self, context):
        self.env, self.turn = context.env.unwrapped, 0

    def act_sync(self, observation, info):
        self.turn += 1
        if self.turn == 2 and not Saboteur.sabotaged:
            Saboteur.sabotaged = True
            for pid in self.env._pool.browser_pids():
                os.kill(pid, signal.SIGKILL)
        return self.env.oracle_action() or "noop()"


def test_a_browser_killed_mid_episode_errors_that_episode_and_the_run_goes_on(tmp_path):
    result = evaluate(
        benchmark(3), Saboteur, tmp_path / "run", num_envs=1, limits=EngineLimits(retries=0)
    )
    statuses = [r.status for r in result.records]
    assert statuses.count("errored") == 1 and statuses.count("ok") == 2, statuses
    errored = next(r for r in result.records if r.status == "errored")
    assert "BrowserCrashedError" in errored.error
    overall = result.summary["overall"]
    assert overall["errored"] == 1 and overall["success"] == 1.0


def test_the_oracle_scores_max_through_the_evaluator_with_concurrent_contexts(tmp_path):
    result = evaluate(benchmark(4), "oracle", tmp_path / "run", num_envs=4)
    assert result.summary["overall"]["success"] == 1.0
    assert result.summary["overall"]["errored"] == 0
