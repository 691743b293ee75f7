"""GRPO: group-relative policy optimization, with DAPO's switches and Dr.GRPO's loss.

Each iteration plays ``groups`` tasks ``group_size`` times each from the same start. An
episode's advantage is its return against its group's (GRPO, Shao et al. 2024):
``A = (R - mean_group) / std_group``, ``std_group`` the sample standard deviation (as TRL
and verl compute it), and every token the policy wrote in that episode, in every turn, gets
it. There is no critic. The loss is PPO's clipped surrogate on the ratio to the logprobs the
rollout recorded, averaged over tokens (``token-mean``, TRL's and verl's default; the
paper's per-sequence mean is ``--aggregation seq-mean-token-mean``), with verl's dual clip.

Switches (off by default; ``--dapo`` turns on DAPO's set, ``--dr-grpo`` Dr.GRPO's):

* ``clip_high`` > ``clip_low`` — DAPO's clip-higher (0.28 vs 0.2).
* ``dynamic_sampling`` — DAPO's: groups whose returns are all equal have zero advantage
  and only dilute the batch; they are dropped (``train/kept_groups`` counts the rest).
  DAPO then samples more groups to refill the batch; here the batch is just smaller.
* ``overlong_buffer`` — DAPO's soft overlong punishment, per turn: a reply within
  ``overlong_buffer`` tokens of ``max_tokens`` loses up to ``overlong_penalty`` linearly,
  and a reply cut off at ``max_tokens`` loses all of it; the penalties of an episode's turns
  are added to its return.
* ``std_normalize=False`` and ``aggregation="seq-mean-token-sum-norm"`` — Dr.GRPO (Liu et
  al. 2025): no division by the group's spread, per-sequence sums over a constant.
* ``kl_coef`` > 0 — a k3 KL penalty to the initial policy (GRPO as published; DAPO and
  Dr.GRPO drop it).

Run: ``agentgym train grpo --env games/FrozenLake-v0 --model tiny --iterations 30``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from agentgym.baselines.advantages import episode_returns, group_normalized
from agentgym.baselines.common import Run
from agentgym.baselines.session import setup
from agentgym.baselines.tensors import step_samples
from agentgym.baselines.update import PolicyGradientArgs, clipped_update


@dataclasses.dataclass
class Args(PolicyGradientArgs):
    std_normalize: bool = True
    """Divide by the group's standard deviation (Dr.GRPO: off)."""
    dynamic_sampling: bool = False
    """Drop groups whose returns are all equal (DAPO)."""
    overlong_buffer: int = 0
    """Replies within this many tokens of max_tokens are penalized (DAPO; 0: off)."""
    overlong_penalty: float = 1.0
    """The most a too-long reply costs the episode's return."""
    kl_coef: float = 0.0
    """Weight of the k3 KL penalty to the initial policy (0: no reference model)."""
    dapo: bool = False
    """DAPO's settings: clip_high 0.28, dynamic sampling, token-mean, overlong buffer."""
    dr_grpo: bool = False
    """Dr.GRPO's settings: no std normalization, seq-mean-token-sum-norm."""

    def __post_init__(self) -> None:
        if self.dapo:
            self.clip_high, self.dynamic_sampling, self.aggregation = 0.28, True, "token-mean"
            self.overlong_buffer = self.overlong_buffer or max(1, self.max_tokens // 4)
        if self.dr_grpo:
            self.std_normalize, self.aggregation = False, "seq-mean-token-sum-norm"


def overlong_penalty(length: int, finished: bool, args: Args) -> float:
    """DAPO's soft punishment of one reply of ``length`` tokens (0 when it is short enough)."""
    if args.overlong_buffer <= 0:
        return 0.0
    if not finished:
        return -args.overlong_penalty
    start = args.max_tokens - args.overlong_buffer
    return -args.overlong_penalty * max(0, length - start) / args.overlong_buffer


def train(args: Args) -> Run:
    session = setup(args, "grpo")
    policy = session.policy
    reference = policy.frozen_copy() if args.kl_coef > 0 else None

    for iteration in range(session.start, args.iterations):
        began = time.monotonic()

        # 1. Play groups of episodes (each group from one start) with the current policy.
        rollouts = session.collect(iteration)

        # 2. Episode returns (less invalid-action and DAPO's overlong penalties) ->
        #    group-relative advantages,
        #    given to every token the policy wrote in the episode.
        samples = step_samples(rollouts.records, rollouts.groups, policy.eos_ids)
        returns = episode_returns(rollouts.records, args.invalid_penalty)
        for sample in samples:
            returns[sample.episode] += overlong_penalty(
                len(sample.completion_ids), sample.finished, args
            )
        advantages = group_normalized(returns, rollouts.groups, std=args.std_normalize)
        groups = np.array(rollouts.groups)
        kept = set(rollouts.groups)
        if args.dynamic_sampling:
            kept = {g for g in kept if np.ptp(returns[groups == g]) > 0}
        samples = [s for s in samples if s.group in kept]
        for sample in samples:
            sample.advantage = float(advantages[sample.episode])

        # 3. Clipped policy-gradient steps on exactly the sampled tokens.
        metrics = clipped_update(
            policy,
            session.optimizer,
            samples,
            args,
            iteration=iteration,
            progress=session.progress,
            reference=reference,
            kl_coef=args.kl_coef,
        )
        metrics["train/kept_groups"] = len(kept)

        # 4. Log and checkpoint.
        session.finish(iteration, began, rollouts, metrics)
    return session.run
