"""TaskEnv's behaviour, shown on the counter test double and Tower of Hanoi."""

import pickle

import pytest
from broken_envs import CounterEnv

import agentgym
from agentgym.errors import ResetNeeded, TaskError, UsageError


def test_reset_gives_instructions_state_key_and_verdict():
    env = CounterEnv()
    obs, info = env.reset(seed=1)
    assert obs.startswith("Count up to the target.")
    assert info["instructions"] == "Count up to the target."
    assert info["state_key"] == f"0/{6 + env.task.seed % 3}"
    assert info["verdict"].score == 0.0


def test_reward_is_the_change_in_score_and_success_terminates():
    env = CounterEnv()
    env.reset(seed=0, options={"task_id": "dev/easy/0"})
    total, terminated = 0.0, False
    while not terminated:
        _, reward, terminated, _, info = env.step(env.oracle_action())
        total += reward
    assert total == 1.0 and info["verdict"].passed


def test_a_bad_action_is_feedback_and_counted():
    env = CounterEnv(max_invalid_actions=2)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("jump")
    assert obs.startswith("Invalid action: type 'inc', 'dec' or 'zero'")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] and info["invalid_actions"] == 1
    _, _, _, truncated, info = env.step("jump")
    assert truncated and info["truncation_reason"] == "invalid_actions"


def test_wrong_types_raise_usage_errors_naming_the_value():
    env = CounterEnv()
    env.reset(seed=0)
    with pytest.raises(UsageError, match=r"takes the agent's action as a str, got int 3"):
        env.step(3)
    with pytest.raises(UsageError, match=r"reset\(seed=...\) takes an int or None, got str"):
        env.reset(seed="1")
    with pytest.raises(UsageError, match=r"unknown reset option\(s\) \['taskid'\]"):
        env.reset(options={"taskid": "x"})
    with pytest.raises(TaskError, match="unknown split 'validation'"):
        env.reset(options={"split": "validation"})


def test_step_before_reset_and_after_the_end_are_reset_needed():
    env = CounterEnv()
    with pytest.raises(ResetNeeded, match=r"call reset\(\) before step\(\)"):
        env.step("inc")
    env.reset(seed=0)
    while (action := env.oracle_action()) is not None:
        env.step(action)
    with pytest.raises(ResetNeeded, match="the episode has ended"):
        env.step("inc")


def test_same_seed_same_task_and_task_id_wins_over_seed():
    env = CounterEnv()
    assert env.reset(seed=5)[1]["task_id"] == env.reset(seed=5)[1]["task_id"]
    assert env.reset(seed=5, options={"task_id": "test/easy/3"})[1]["task_id"] == "test/easy/3"


def test_snapshot_restores_the_episode_and_pickles():
    env = agentgym.make("games/TowerOfHanoi-v0").unwrapped
    env.reset(seed=3)
    snapshot = pickle.loads(pickle.dumps(env.get_state()))
    first = env.step(env.oracle_action())
    env.step(env.oracle_action())
    env.set_state(snapshot)
    assert env.step(env.oracle_action())[0] == first[0]


def test_set_state_rejects_foreign_objects():
    env = CounterEnv()
    env.reset(seed=0)
    with pytest.raises(UsageError, match="takes what get_state\\(\\) returned, got dict"):
        env.set_state({})


def test_constructor_rejects_unknown_split_and_render_mode():
    with pytest.raises(TaskError):
        CounterEnv(split="holdout")
    with pytest.raises(UsageError, match="render_mode='rgb_array' is not supported"):
        CounterEnv(render_mode="rgb_array")


def test_long_observations_are_clipped_with_a_marker():
    class Wordy(CounterEnv):
        max_observation_length = 100

        def observe(self, world):
            return "word " * 1000

    obs, _ = Wordy().reset(seed=0)
    assert len(obs) == 100 and obs.endswith("\n[... observation cut to fit the limit ...]")
