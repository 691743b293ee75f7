"""Our advantages and loss against the reference implementations, on fixed tensors.

Each ``reference_*`` function below is the reference's formula, written out here from its
source (the file and function are named in its comment), kept as close to the original as a
few lines allow. Ours must give the same numbers by default.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agentgym.baselines.advantages import (  # noqa: E402
    group_normalized,
    step_group_normalized,
    token_whitened,
)
from agentgym.baselines.losses import policy_loss  # noqa: E402

SCORES = [1.0, 0.0, 0.0, 1.0, 0.0, -0.3, 0.7, 0.7, 0.2, 0.5, -1.0, 0.0]
INDEX = ["a", "a", "a", "a", "b", "b", "b", "b", "c", "c", "c", "d"]  # "d": a group of one


def reference_grpo(scores, index, epsilon=1e-6, norm_adv_by_std_in_grpo=True):
    # volcengine/verl, verl/trainer/ppo/core_algos.py, compute_grpo_outcome_advantage
    # (one scalar score per response; the token broadcast left out).
    scores = torch.tensor(scores)
    id2score, id2mean, id2std = defaultdict(list), {}, {}
    for i in range(len(scores)):
        id2score[index[i]].append(scores[i])
    for idx in id2score:
        if len(id2score[idx]) == 1:
            id2mean[idx], id2std[idx] = torch.tensor(0.0), torch.tensor(1.0)
        else:
            stacked = torch.stack(id2score[idx])
            id2mean[idx], id2std[idx] = torch.mean(stacked), torch.std(stacked)
    out = scores.clone()
    for i in range(len(scores)):
        if norm_adv_by_std_in_grpo:
            out[i] = (scores[i] - id2mean[index[i]]) / (id2std[index[i]] + epsilon)
        else:
            out[i] = scores[i] - id2mean[index[i]]
    return out.numpy()


def reference_trl_grpo(rewards, num_generations):
    # huggingface/trl, trl/trainer/grpo_trainer.py, _generate_and_score_completions with
    # scale_rewards="group" (nanstd in trl/trainer/utils.py is Bessel-corrected).
    rewards = torch.tensor(rewards)
    mean = rewards.view(-1, num_generations).mean(dim=1).repeat_interleave(num_generations)
    std = rewards.view(-1, num_generations).std(dim=1).repeat_interleave(num_generations)
    return ((rewards - mean) / (std + 1e-4)).numpy()


def reference_masked_whiten(values, mask):
    # volcengine/verl, verl/utils/torch_functional.py, masked_whiten (with masked_mean and
    # masked_var, unbiased=True).
    def masked_mean(v, m):
        return (v * m).sum() / (m.sum() + 1e-8)

    mean = masked_mean(values, mask)
    variance = masked_mean((values - mean) ** 2, mask) * (mask.sum() / (mask.sum() - 1))
    return (values - mean) * torch.rsqrt(variance + 1e-8)


def reference_reinforce_pp(token_level_rewards, response_mask, gamma=1.0):
    # volcengine/verl, verl/trainer/ppo/core_algos.py,
    # compute_reinforce_plus_plus_outcome_advantage.
    returns = torch.zeros_like(token_level_rewards)
    running_return = 0
    for t in reversed(range(token_level_rewards.shape[1])):
        running_return = token_level_rewards[:, t] + gamma * running_return
        returns[:, t] = running_return
        running_return = running_return * response_mask[:, t]  # reset after EOS
    return reference_masked_whiten(returns, response_mask) * response_mask


def reference_reinforce_pp_baseline(token_level_rewards, response_mask, index):
    # volcengine/verl, verl/trainer/ppo/core_algos.py,
    # compute_reinforce_plus_plus_baseline_outcome_advantage.
    scores = token_level_rewards.sum(dim=-1)
    id2score, id2mean = defaultdict(list), {}
    for i in range(len(scores)):
        id2score[index[i]].append(scores[i])
    for idx in id2score:
        stacked = torch.stack(id2score[idx])
        id2mean[idx] = torch.tensor(0.0) if len(stacked) == 1 else torch.mean(stacked)
    for i in range(len(scores)):
        scores[i] = scores[i] - id2mean[index[i]]
    scores = scores.unsqueeze(-1).tile([1, response_mask.shape[-1]]) * response_mask
    return reference_masked_whiten(scores, response_mask) * response_mask


def reference_gigpo_norm(scores, index, epsilon=1e-6, remove_std=False):
    # langfengQ/verl-agent, gigpo/core_gigpo.py, step_norm_reward (mode "mean_std_norm" is
    # remove_std=False); episode_norm_reward computes the same over its groups.
    scores = torch.tensor(scores)
    id2score, id2mean, id2std = defaultdict(list), {}, {}
    for i in range(len(scores)):
        id2score[index[i]].append(scores[i])
    for idx in id2score:
        id2mean[idx] = torch.mean(torch.tensor(id2score[idx]))
        id2std[idx] = (
            torch.tensor(1.0) if len(id2score[idx]) == 1 else torch.std(torch.tensor(id2score[idx]))
        )
    out = scores.clone()
    for i in range(len(scores)):
        out[i] = scores[i] - id2mean[index[i]]
        if not remove_std:
            out[i] = out[i] / (id2std[index[i]] + epsilon)
    return out.numpy()


def reference_ppo_loss(old_log_prob, log_prob, advantages, response_mask, clip_ratio_c=3.0):
    # volcengine/verl, verl/trainer/ppo/core_algos.py, compute_policy_loss_vanilla
    # (clip_ratio 0.2, loss_agg_mode "token-mean").
    negative_approx_kl = torch.clamp(log_prob - old_log_prob, min=-20.0, max=20.0)
    ratio = torch.exp(negative_approx_kl)
    pg_losses1 = -advantages * ratio
    pg_losses2 = -advantages * torch.clamp(ratio, 1 - 0.2, 1 + 0.2)
    clip_pg_losses1 = torch.maximum(pg_losses1, pg_losses2)
    pg_losses3 = -advantages * clip_ratio_c
    clip_pg_losses2 = torch.min(pg_losses3, clip_pg_losses1)
    pg_losses = torch.where(advantages < 0, clip_pg_losses2, clip_pg_losses1)
    return (pg_losses * response_mask).sum() / response_mask.sum()


def test_grpo_is_verls_grpo_with_the_sample_std():
    ours = group_normalized(SCORES, INDEX)
    reference = reference_grpo(SCORES, INDEX)
    # A group of one: verl gives it its raw score; here it gets 0 (nothing to compare with).
    assert ours[:-1] == pytest.approx(reference[:-1], rel=1e-5)
    assert ours[-1] == 0.0


def test_dr_grpo_is_verls_grpo_without_the_std():
    ours = group_normalized(SCORES[:8], INDEX[:8], std=False)
    assert ours == pytest.approx(reference_grpo(SCORES[:8], INDEX[:8], 1e-6, False), abs=1e-6)


def test_grpo_is_trls_grpo_up_to_its_epsilon():
    # TRL adds 1e-4 to the std, verl (and we) 1e-6.
    ours = group_normalized(SCORES[:8], INDEX[:8])
    assert ours == pytest.approx(reference_trl_grpo(SCORES[:8], 4), rel=1e-3)


def _outcome_rewards(scores, lengths, width=6):
    """verl's layout: each response's score on its last token, a mask over its tokens."""
    rewards, mask = torch.zeros(len(scores), width), torch.zeros(len(scores), width)
    for row, (score, length) in enumerate(zip(scores, lengths, strict=True)):
        mask[row, :length] = 1.0
        rewards[row, length - 1] = score
    return rewards, mask


LENGTHS = [1, 4, 2, 6, 3, 3, 5, 1, 2, 6, 4, 2]


def test_reinforce_pp_whitens_over_tokens_as_verl_does():
    rewards, mask = _outcome_rewards(SCORES, LENGTHS)
    reference = reference_reinforce_pp(rewards, mask)
    ours = token_whitened(SCORES, LENGTHS)
    for row, length in enumerate(LENGTHS):
        assert reference[row, :length].numpy() == pytest.approx([ours[row]] * length, rel=1e-5)
    # A per-episode whitening (the old default) gives other numbers when lengths differ.
    per_episode = (np.array(SCORES) - np.mean(SCORES)) / np.std(SCORES, ddof=1)
    assert not np.allclose(per_episode, ours, rtol=1e-2)


def test_reinforce_pp_baseline_is_verls():
    # verl's group of one keeps its score (its mean is taken as 0); ours is centred to 0, so
    # compare on the groups of several only.
    rewards, mask = _outcome_rewards(SCORES[:-1], LENGTHS[:-1])
    reference = reference_reinforce_pp_baseline(rewards, mask, INDEX[:-1])
    ours = token_whitened(group_normalized(SCORES[:-1], INDEX[:-1], std=False), LENGTHS[:-1])
    for row, length in enumerate(LENGTHS[:-1]):
        assert reference[row, :length].numpy() == pytest.approx([ours[row]] * length, rel=1e-5)


def test_gigpo_normalizes_as_verl_agent_with_mean_std_norm():
    step_returns = [0.9, 0.81, 0.9, 1.0, 0.0, 0.5, 0.5, 0.2]
    states = ["s0", "s1", "s0", "s1", "s0", "s0", "s0", "s2"]
    anchors = [("g" if i < 5 else "h", state) for i, state in enumerate(states)]
    labels = [f"{g}/{s}" for g, s in anchors]
    ours = step_group_normalized(step_returns, anchors)
    assert ours == pytest.approx(reference_gigpo_norm(step_returns, labels), abs=1e-6)
    mean_only = step_group_normalized(step_returns, anchors, std=False)
    assert mean_only == pytest.approx(
        reference_gigpo_norm(step_returns, labels, remove_std=True), abs=1e-6
    )


def test_dual_clip_is_verls_vanilla_policy_loss():
    generator = torch.Generator().manual_seed(0)
    old = -torch.rand(5, 7, generator=generator) * 3
    # log-ratios from -2 to +2.5: ratios from 0.14 to 12, past the dual clip's 3
    logp = (old + torch.linspace(-2.0, 2.5, 35).reshape(5, 7)).requires_grad_()
    advantages = torch.tensor([1.5, -1.0, -0.2, 0.7, -2.0])
    mask = (torch.rand(5, 7, generator=generator) > 0.2).float()

    ours, _ = policy_loss(logp, old, advantages, mask, clip_ratio_c=3.0)
    (ours_grad,) = torch.autograd.grad(ours, logp)
    reference = reference_ppo_loss(old, logp, advantages.unsqueeze(-1), mask, 3.0)
    (reference_grad,) = torch.autograd.grad(reference, logp)
    assert float(ours) == pytest.approx(float(reference), rel=1e-6)
    assert torch.allclose(ours_grad, reference_grad)
    # Without the dual clip, the tokens past ratio 3 with a negative advantage count more.
    plain, _ = policy_loss(logp, old, advantages, mask)
    assert float(plain) > float(ours)
