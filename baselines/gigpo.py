"""GiGPO: GRPO's episode-level advantage plus step-level advantages from anchor states.

GiGPO (Feng et al. 2025, "Group-in-Group Policy Optimization for LLM Agent Training") keeps
GRPO's critic-free group and adds credit for single steps. Within a group (episodes from the
same start), the steps taken **from the same state** — equal ``state_key``, GiGPO's "anchor
states" — form a step group; each step's discounted return
``G_t = sum_k gamma^k r_{t+k}`` is compared with the others of its step group (Eq. 7). A
step that reached the goal sooner from the same square than its siblings did gets a
positive step advantage even in an episode that, as a whole, was average. The advantage of
a step's tokens is ``A_episode + step_weight * A_step`` (Eq. 8).

The envs give the anchor: every step's ``info["state_key"]`` is a canonical string of the
state (no history), so grouping is exact equality — no text hashing or similarity needed.

Run: ``agentgym train gigpo --env games/FrozenLake-v0 --model tiny --iterations 30``.
"""

from __future__ import annotations

import dataclasses
import time

from agentgym.baselines.advantages import (
    discounted_returns,
    episode_returns,
    group_normalized,
    shaped_rewards,
    step_group_normalized,
)
from agentgym.baselines.common import Run
from agentgym.baselines.session import setup
from agentgym.baselines.tensors import step_samples
from agentgym.baselines.update import PolicyGradientArgs, clipped_update


@dataclasses.dataclass
class Args(PolicyGradientArgs):
    gamma: float = 0.95
    """Discount of the step returns compared within anchor-state groups."""
    step_weight: float = 1.0
    """Weight of the step-level advantage (omega in the paper)."""
    std_normalize: bool = True
    """Divide by the group's sample standard deviation (both levels; verl-agent's
    mean_std_norm; False: its mean_norm)."""
    episode_stats_over_steps: bool = False
    """Take a group's episode-level mean and spread over its steps, each episode's return
    counted once per turn (verl-agent's code, compute_mean_std_cross_steps), instead of once
    per episode (the paper's Eq. 3): long episodes then weigh more in the baseline."""


def train(args: Args) -> Run:
    session = setup(args, "gigpo")
    policy = session.policy

    for iteration in range(session.start, args.iterations):
        began = time.monotonic()

        # 1. Play groups of episodes (each group from one start) with the current policy.
        rollouts = session.collect(iteration)

        # 2a. Episode level: each return against its group's (as GRPO).
        samples = step_samples(rollouts.records, rollouts.groups, policy.eos_ids)
        returns = episode_returns(rollouts.records, args.invalid_penalty)
        episodes = [sample.episode for sample in samples]
        if args.episode_stats_over_steps:  # one value per step sample, not per episode
            episode_advantages = group_normalized(
                returns[episodes], [s.group for s in samples], std=args.std_normalize
            )
        else:
            per_episode = group_normalized(returns, rollouts.groups, std=args.std_normalize)
            episode_advantages = per_episode[episodes]

        # 2b. Step level: discounted step returns against those of the same anchor state.
        step_returns = {
            episode: discounted_returns(shaped_rewards(record, args.invalid_penalty), args.gamma)
            for episode, record in enumerate(rollouts.records)
        }
        anchors = [(sample.group, sample.state_key) for sample in samples]
        step_advantages = step_group_normalized(
            [step_returns[s.episode][s.step] for s in samples], anchors, std=args.std_normalize
        )
        for sample, episode_advantage, step_advantage in zip(
            samples, episode_advantages, step_advantages, strict=True
        ):
            sample.advantage = float(episode_advantage + args.step_weight * step_advantage)

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
