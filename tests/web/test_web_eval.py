"""Web envs under the evaluator: a browser or renderer killed mid-episode errors that episode
only (or, with retries, the episode is played again).

The testbed env (tests/web/testbed.py, a test double of a site) is registered for these tests
only, under an id the conformance suite does not see.
"""

import contextlib
import os
import signal

import gymnasium
import pytest

import agentgym
from agentgym import registry
from agentgym.agents import Agent
from agentgym.eval import EngineLimits, evaluate
from agentgym.eval.plan import Benchmark

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


def saboteur(kill):
    """An agent that plays the oracle, but on its first episode's second turn kills the pool's
    processes that ``kill`` lists: ``browser_pids`` (the whole browser) or ``renderer_pids``
    (the processes that run the pages: the browser lives on, the page crashes)."""

    class Saboteur(Agent):
        sabotaged = False
        episodes = 0  # episodes begun, retries included

        def reset(self, context):
            self.env, self.turn = context.env.unwrapped, 0
            Saboteur.episodes += 1

        def act_sync(self, observation, info):
            self.turn += 1
            if self.turn == 2 and not Saboteur.sabotaged:
                Saboteur.sabotaged = True
                pids = getattr(self.env._pool, kill)()
                assert pids
                for pid in pids:  # a renderer may go with the browser killed before it
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            return self.env.oracle_action() or "noop()"

    return Saboteur


@pytest.mark.parametrize("kill", ["browser_pids", "renderer_pids"], ids=["browser", "renderer"])
def test_a_browser_killed_mid_episode_errors_that_episode_and_the_run_goes_on(tmp_path, kill):
    result = evaluate(
        benchmark(3), saboteur(kill), tmp_path / "run", num_envs=1, limits=EngineLimits(retries=0)
    )
    statuses = [r.status for r in result.records]
    assert statuses.count("errored") == 1 and statuses.count("ok") == 2, statuses
    errored = next(r for r in result.records if r.status == "errored")
    assert "BrowserCrashedError" in errored.error
    overall = result.summary["overall"]
    assert overall["errored"] == 1 and overall["success"] == 1.0


def test_a_killed_episode_is_retried_not_scored(tmp_path):
    agent = saboteur("renderer_pids")
    result = evaluate(benchmark(2), agent, tmp_path / "run", num_envs=1)
    assert agent.sabotaged and agent.episodes == 3  # two episodes, one of them played twice
    assert [r.status for r in result.records] == ["ok", "ok"]
    assert result.summary["overall"]["success"] == 1.0


def test_the_oracle_scores_max_through_the_evaluator_with_concurrent_contexts(tmp_path):
    result = evaluate(benchmark(4), "oracle", tmp_path / "run", num_envs=4)
    assert result.summary["overall"]["success"] == 1.0
    assert result.summary["overall"]["errored"] == 0
