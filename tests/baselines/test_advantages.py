"""The advantage estimators against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from agentgym.baselines.advantages import (
    discounted_returns,
    episode_weights,
    group_normalized,
    leave_one_out,
    step_group_normalized,
    token_whitened,
    turn_gae,
)


def test_grpo_normalizes_within_each_group_only():
    returns = [1.0, 0.0, 0.0, 0.0, 5.0, 5.0]
    groups = ["a", "a", "a", "a", "b", "b"]
    out = group_normalized(returns, groups)
    # group a: mean 0.25, sample std sqrt((0.75^2 + 3 * 0.25^2) / 3) = 0.5
    assert out[:4] == pytest.approx([0.75 / 0.5, -0.25 / 0.5, -0.25 / 0.5, -0.25 / 0.5], rel=1e-5)
    assert out[4:] == pytest.approx([0.0, 0.0])  # a uniform group teaches nothing


def test_dr_grpo_only_centres():
    out = group_normalized([1.0, 0.0, 0.0, 0.0], ["a"] * 4, std=False)
    assert out == pytest.approx([0.75, -0.25, -0.25, -0.25])


def test_rloo_uses_the_mean_of_the_others():
    out = leave_one_out([1.0, 0.0, 0.0, 3.0], ["g"] * 4)
    assert out == pytest.approx([1 - 1.0, 0 - 4 / 3, 0 - 4 / 3, 3 - 1 / 3])
    assert leave_one_out([2.0], ["alone"]) == pytest.approx([0.0])


def test_episode_weights_make_every_episode_weigh_the_same():
    # one group: a success in 2 turns, two failures that ran to the 6-turn limit
    episodes = [0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]
    advantages = leave_one_out([1.0, 0.0, 0.0], ["g"] * 3)
    per_turn = advantages[episodes]
    assert per_turn.sum() < -1  # broadcast over turns, the failures outweigh the success
    weights = episode_weights(episodes)
    assert weights.mean() == pytest.approx(1.0)
    assert weights[:2].sum() == pytest.approx(weights[2:8].sum()) == weights[8:].sum()
    assert (per_turn * weights).sum() == pytest.approx(0.0, abs=1e-12)  # as over episodes


def test_token_whitening_counts_each_sample_once_per_token():
    out = token_whitened([1.0, 2.0, 3.0], [1, 1, 1])
    assert out.mean() == pytest.approx(0.0, abs=1e-9)
    assert out.std(ddof=1) == pytest.approx(1.0, rel=1e-6)
    # the same as whitening the tokens themselves: 1 once, 3 three times
    out = token_whitened([1.0, 3.0], [1, 3])
    tokens = np.array([1.0, 3.0, 3.0, 3.0])
    assert out == pytest.approx((np.array([1.0, 3.0]) - tokens.mean()) / tokens.std(ddof=1))
    assert token_whitened([5.0], [1]) == pytest.approx([0.0])  # one token: no spread


def test_discounted_returns():
    assert discounted_returns([0.0, 0.0, 1.0], 0.5) == pytest.approx([0.25, 0.5, 1.0])


def test_gigpo_step_groups_compare_steps_from_the_same_state():
    # Two episodes pass through state "s1"; from there one reaches the goal in 1 step
    # (return 1) and the other in 3 (return gamma^2): the first gets the positive advantage.
    step_returns = [0.81, 1.0, 0.9, 0.81, 0.5]
    anchors = [("g", "s0"), ("g", "s1"), ("g", "s2"), ("g", "s1"), ("g", "s9")]
    out = step_group_normalized(step_returns, anchors, std=False)
    assert out[1] == pytest.approx((1.0 - 0.81) / 2)
    assert out[3] == pytest.approx(-(1.0 - 0.81) / 2)
    assert out[[0, 2, 4]] == pytest.approx([0.0, 0.0, 0.0])  # states met once: no comparison


def test_gigpo_does_not_group_across_groups():
    out = step_group_normalized([1.0, 0.0], [("g1", "s"), ("g2", "s")])
    assert out == pytest.approx([0.0, 0.0])


def test_turn_gae_matches_the_recursion():
    rewards, values = [0.0, 0.0, 1.0], [0.5, 0.6, 0.7]
    gamma, lam = 0.9, 0.8
    advantages, returns = turn_gae(rewards, values, gamma, lam)
    d2 = 1.0 - 0.7
    d1 = 0.0 + gamma * 0.7 - 0.6
    d0 = 0.0 + gamma * 0.6 - 0.5
    a2, a1 = d2, d1 + gamma * lam * d2
    a0 = d0 + gamma * lam * a1
    assert advantages == pytest.approx([a0, a1, a2])
    assert returns == pytest.approx(np.array([a0, a1, a2]) + values)


def test_invalid_actions_cost_the_penalty():
    from agentgym.baselines.advantages import episode_returns, shaped_rewards
    from agentgym.ledger import EpisodeRecord, EpisodeSpec, StepRecord

    steps = [
        StepRecord("xyz", "o", 0.0, False, False, {"invalid_action": True}),
        StepRecord("up", "o", 0.0, False, False, {"invalid_action": False}),
        StepRecord("up", "o", 1.0, True, False, {"invalid_action": False}),
    ]
    record = EpisodeRecord(EpisodeSpec("games/FrozenLake-v0", "t", 0, "a"), "o", steps=steps)
    assert shaped_rewards(record, 0.1) == pytest.approx([-0.1, 0.0, 1.0])
    assert episode_returns([record], 0.0) == pytest.approx([1.0])
