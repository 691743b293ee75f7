"""PPO for multi-turn agents: a value head, GAE over turns, the clipped surrogate.

The critic is a linear head on the policy's last hidden state at the final token of each
turn's prompt: ``V(s_t)``, the value of the state the turn starts in. Rewards are the env's
per-step rewards; generalized advantage estimation runs over an episode's **turns**
(``gamma``, ``lam``), not its tokens, and every token of turn ``t`` gets that turn's
advantage (turn-level credit, as AgentGym-RL and verl-agent's PPO do for agents). The
critic learns the GAE returns with a squared error (``value_coef``); policy and critic
share the transformer and one optimizer. The advantages are whitened over the batch's
completion tokens, as verl whitens GAE's (``masked_whiten``).

``critic=False`` is the critic-free variant: the advantage of turn ``t`` is its discounted
return-to-go, whitened the same way (no learned baseline), with the same clipped loss.

Run: ``agentgym train ppo --env games/FrozenLake-v0 --model tiny --iterations 30``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from agentgym.baselines.advantages import (
    discounted_returns,
    shaped_rewards,
    token_whitened,
    turn_gae,
)
from agentgym.baselines.common import Run
from agentgym.baselines.session import setup
from agentgym.baselines.tensors import step_samples
from agentgym.baselines.update import PolicyGradientArgs, clipped_update, critic_values


@dataclasses.dataclass
class Args(PolicyGradientArgs):
    critic: bool = True
    """Learn a value head and use GAE (False: whitened Monte-Carlo returns, no critic)."""
    gamma: float = 0.95
    """Discount per turn."""
    lam: float = 0.95
    """GAE's lambda."""
    value_coef: float = 0.5
    """Weight of the critic's loss."""
    update_epochs: int = 2
    """Passes over each iteration's samples."""


def train(args: Args) -> Run:
    session = setup(args, "ppo", critic=args.critic)
    policy = session.policy

    for iteration in range(session.start, args.iterations):
        began = time.monotonic()

        # 1. Play episodes with the current policy.
        rollouts = session.collect(iteration)

        # 2. Turn-level advantages: GAE on the critic's values, or whitened returns-to-go.
        samples = step_samples(rollouts.records, rollouts.groups, policy.eos_ids)
        advantages = np.zeros(len(samples))
        targets = np.zeros(len(samples))
        values = (
            critic_values(policy, session.critic, samples, args.minibatch_size)
            if session.critic is not None and samples
            else np.zeros(len(samples))
        )
        by_episode: dict[int, list[int]] = {}
        for index, sample in enumerate(samples):
            by_episode.setdefault(sample.episode, []).append(index)
        for episode, rows in by_episode.items():
            rewards = shaped_rewards(rollouts.records[episode], args.invalid_penalty)
            if session.critic is not None:
                advantages[rows], targets[rows] = turn_gae(
                    rewards, values[rows], args.gamma, args.lam
                )
            else:
                advantages[rows] = discounted_returns(rewards, args.gamma)
        # Whitened over the batch's tokens, as verl whitens GAE (masked_whiten).
        advantages = token_whitened(advantages, [sum(s.loss_mask) for s in samples])
        for sample, advantage in zip(samples, advantages, strict=True):
            sample.advantage = float(advantage)

        # 3. Clipped policy-gradient steps (and the critic's regression) on the sampled tokens.
        metrics = clipped_update(
            policy,
            session.optimizer,
            samples,
            args,
            iteration=iteration,
            progress=session.progress,
            critic=session.critic,
            returns=targets.tolist(),
            value_coef=args.value_coef,
        )

        # 4. Log and checkpoint.
        session.finish(iteration, began, rollouts, metrics)
    return session.run
