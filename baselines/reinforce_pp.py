"""REINFORCE++: REINFORCE with PPO's clipping and advantages whitened over the whole batch.

REINFORCE++ (Hu 2025) keeps PPO's tricks and drops its critic: the advantage of an episode
is its return, less ``kl_coef`` times the KL of the policy to the initial one summed over
the episode's tokens (a penalty in the reward, not in the loss), **normalized over the
whole batch** rather than within a group, which the paper finds more stable than GRPO's
per-prompt normalization. As in verl (``compute_reinforce_plus_plus_outcome_advantage``)
and OpenRLHF, the batch is one of tokens: every completion token carries its episode's
value, and the mean and variance are taken over tokens (``advantages.token_whitened``).
``baseline=True`` is REINFORCE++-baseline: the group's mean return is subtracted first,
then the batch whitening. The loss is the clipped surrogate, token-mean.

One departure: verl adds the KL as a per-token reward and sums it to go, so a token is
charged the KL of its own reply from itself on; here every token of an episode is charged
the KL of the whole episode (an episode-level return, like the env's reward).

Run: ``agentgym train reinforce_pp --env games/FrozenLake-v0 --model tiny --iterations 30``.
"""

from __future__ import annotations

import dataclasses
import time

import torch

from agentgym.baselines.advantages import episode_returns, group_normalized, token_whitened
from agentgym.baselines.common import Run
from agentgym.baselines.losses import kl_penalty
from agentgym.baselines.session import setup
from agentgym.baselines.tensors import completion_logprobs, step_samples, to_batch
from agentgym.baselines.update import PolicyGradientArgs, clipped_update


@dataclasses.dataclass
class Args(PolicyGradientArgs):
    baseline: bool = False
    """Subtract the group's mean return before whitening (REINFORCE++-baseline)."""
    kl_coef: float = 0.0
    """Weight of the KL to the initial policy, charged in the episode's return (0: off)."""


def train(args: Args) -> Run:
    session = setup(args, "reinforce_pp")
    policy = session.policy
    reference = policy.frozen_copy() if args.kl_coef > 0 else None

    for iteration in range(session.start, args.iterations):
        began = time.monotonic()

        # 1. Play groups of episodes with the current policy.
        rollouts = session.collect(iteration)

        # 2. Returns, less the KL charge; the group mean off (baseline); whitened over the
        #    batch's tokens (each step sample stands for its completion tokens).
        samples = step_samples(rollouts.records, rollouts.groups, policy.eos_ids)
        returns = episode_returns(rollouts.records, args.invalid_penalty)
        if reference is not None and samples:
            batch = to_batch(samples, policy.pad_id).to(policy.device)
            with torch.no_grad():
                reference_logprobs, _ = completion_logprobs(reference, batch, args.temperature)
            charge = (kl_penalty(batch.old_logprobs, reference_logprobs) * batch.mask).sum(-1)
            for sample, kl in zip(samples, charge.tolist(), strict=True):
                returns[sample.episode] -= args.kl_coef * kl
        if args.baseline:
            returns = group_normalized(returns, rollouts.groups, std=False)
        advantages = token_whitened(
            [returns[s.episode] for s in samples], [sum(s.loss_mask) for s in samples]
        )
        for sample, advantage in zip(samples, advantages, strict=True):
            sample.advantage = float(advantage)

        # 3. Clipped policy-gradient steps on exactly the sampled tokens.
        metrics = clipped_update(
            policy,
            session.optimizer,
            samples,
            args,
            iteration=iteration,
            progress=session.progress,
        )

        # 4. Log and checkpoint.
        session.finish(iteration, began, rollouts, metrics)
    return session.run
