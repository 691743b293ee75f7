"""The clipped surrogate and its aggregations, on tensors small enough to check by hand."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from agentgym.baselines.losses import aggregate, kl_penalty, policy_loss  # noqa: E402


def _grad(logp_value: float, advantage: float, **options: float) -> float:
    logp = torch.tensor([[logp_value]], requires_grad=True)
    loss, _ = policy_loss(
        logp, torch.tensor([[0.0]]), torch.tensor([advantage]), torch.ones(1, 1), **options
    )
    loss.backward()
    return float(logp.grad)


def test_on_policy_gradient_is_minus_the_advantage():
    assert _grad(0.0, 2.0) == pytest.approx(-2.0)


def test_a_ratio_past_the_clip_gets_no_gradient():
    # ratio e^0.5 = 1.65 > 1.2 with a positive advantage: clipped, no push further.
    assert _grad(0.5, 1.0) == 0.0
    # the same ratio with a negative advantage is not clipped (pessimistic bound).
    assert _grad(0.5, -1.0) == pytest.approx(math.exp(0.5))


def test_clip_higher_lets_a_rising_token_rise_further():
    ratio = math.log(1.25)  # past 1 + 0.2, inside 1 + 0.28
    assert _grad(ratio, 1.0, clip_high=0.2) == 0.0
    assert _grad(ratio, 1.0, clip_high=0.28) == pytest.approx(-1.25)


def test_dual_clip_stops_a_far_risen_token_with_a_negative_advantage():
    far = math.log(4.0)  # ratio 4, past clip_ratio_c 3
    assert _grad(far, -1.0) == pytest.approx(4.0)  # plain PPO: pushed down harder still
    assert _grad(far, -1.0, clip_ratio_c=3.0) == 0.0  # dual clip: capped at -A * 3
    assert _grad(math.log(2.0), -1.0, clip_ratio_c=3.0) == pytest.approx(2.0)  # below: as PPO
    assert _grad(far, 1.0, clip_ratio_c=3.0) == 0.0  # positive advantages: PPO's clip only
    with pytest.raises(ValueError, match="clip_ratio_c must be > 1"):
        _grad(0.0, 1.0, clip_ratio_c=1.0)


def test_aggregations():
    values = torch.tensor([[1.0, 1.0, 1.0, 1.0], [3.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    assert float(aggregate(values, mask, "token-mean")) == pytest.approx(7 / 5)
    assert float(aggregate(values, mask, "seq-mean-token-mean")) == pytest.approx((1 + 3) / 2)
    assert float(aggregate(values, mask, "seq-mean-token-sum-norm", norm=8)) == pytest.approx(
        (4 / 8 + 3 / 8) / 2
    )
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate(values, mask, "mean")


def test_k3_kl_is_zero_at_equality_and_positive_elsewhere():
    logp = torch.tensor([-1.0, -2.0])
    assert kl_penalty(logp, logp).tolist() == [0.0, 0.0]
    assert (kl_penalty(logp, torch.tensor([-1.5, -0.5])) > 0).all()
