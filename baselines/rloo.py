"""RLOO: REINFORCE with a leave-one-out baseline from the other episodes of the group.

Each iteration plays ``groups`` tasks ``group_size`` times from the same start. An
episode's advantage is its return minus the mean return of the *other* episodes of its
group (Kool et al. 2019; Ahmadian et al. 2024): an unbiased baseline that needs no critic
and, unlike GRPO, no division by the group's spread. Every token the policy wrote in the
episode gets that advantage. With one update epoch the clipped ratio is 1 and the loss is
plain REINFORCE; more epochs make it PPO-clipped.

Every episode weighs the same in the loss, however many turns it took
(``episode_weighting``, on here and off by default elsewhere). Measured on the CPU
demonstration: turn-weighted, the long failing episodes outweigh the short successes, the
update lowers the end-of-turn token everywhere and at seed 1 the policy spent six iterations
writing run-on replies the env rejected (success 0.00); RLOO's unnormalized advantages make
the invalid-action penalty that would pull it back small. Episode-weighted, seeds 1 to 4
learn (docs/baselines.md).

Run: ``agentgym train rloo --env games/FrozenLake-v0 --model tiny --iterations 30``.
"""

from __future__ import annotations

import dataclasses
import time

from agentgym.baselines.advantages import episode_returns, leave_one_out
from agentgym.baselines.common import Run
from agentgym.baselines.session import setup
from agentgym.baselines.tensors import step_samples
from agentgym.baselines.update import PolicyGradientArgs, clipped_update


@dataclasses.dataclass
class Args(PolicyGradientArgs):
    episode_weighting: bool = True
    """Weigh every episode equally in the loss, not every turn (see the module docstring)."""


def train(args: Args) -> Run:
    session = setup(args, "rloo")
    policy = session.policy

    for iteration in range(session.start, args.iterations):
        began = time.monotonic()

        # 1. Play groups of episodes (each group from one start) with the current policy.
        rollouts = session.collect(iteration)

        # 2. Each return against the mean of the other returns of its group.
        samples = step_samples(rollouts.records, rollouts.groups, policy.eos_ids)
        returns = episode_returns(rollouts.records, args.invalid_penalty)
        advantages = leave_one_out(returns, rollouts.groups)
        for sample in samples:
            sample.advantage = float(advantages[sample.episode])

        # 3. Policy-gradient steps on exactly the sampled tokens.
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
