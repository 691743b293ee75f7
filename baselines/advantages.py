"""Advantage estimators: how much better than expected each episode, or each step, went.

Pure functions over numpy arrays, shared by the algorithm files (each file says which it
uses). Returns are the env's rewards, optionally less a penalty per invalid action
(:func:`shaped_rewards`). ``groups`` label the episodes that share a start (task and reset
seed); a group-relative estimator compares an episode only with its own group.

=====================  =====================================================================
estimator              advantage of episode ``i`` with return ``R_i`` in group ``g``
=====================  =====================================================================
group_normalized       ``(R_i - mean_g) / (std_g + eps)`` (GRPO), ``std_g`` the sample
                       standard deviation (Bessel-corrected, ``torch.std``, as TRL and
                       verl); ``std=False``: ``R_i - mean_g`` (Dr.GRPO, no difficulty bias)
leave_one_out          ``R_i - mean of the other episodes of g`` (RLOO)
token_whitened         ``(x_i - mean) / std`` over every completion token of the batch, each
                       sample's value counted once per token it wrote (REINFORCE++ and PPO,
                       as verl's ``masked_whiten``; REINFORCE++-baseline first subtracts
                       the group mean)
step_group_normalized  GiGPO's step level: discounted step returns compared within the
                       steps of a group whose states are equal (same ``state_key``)
turn_gae               PPO's generalized advantage estimation over an episode's turns
role_conditioned       SPIRAL's RAE for self-play: ``R_i - b_role``, ``b_role`` an
                       exponential moving average of the role's returns across iterations
=====================  =====================================================================

:func:`episode_weights` is not an estimator but a correction applied with one: it weighs
every episode equally in the loss however many turns it took (see its docstring).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeAlias

import numpy as np

from agentgym.ledger import EpisodeRecord

__all__ = [
    "discounted_returns",
    "episode_returns",
    "episode_weights",
    "group_normalized",
    "leave_one_out",
    "role_conditioned",
    "shaped_rewards",
    "step_group_normalized",
    "token_whitened",
    "turn_gae",
]

EPS = 1e-6
"""Added to a group's standard deviation before dividing (verl's ``epsilon``; TRL's is 1e-4)."""

WHITEN_EPS = 1e-8
"""Added to the variance in :func:`token_whitened` (verl's ``masked_whiten``)."""

Floats: TypeAlias = Sequence[float] | np.ndarray
"""Numbers in order: a list, or the array another estimator returned."""


def shaped_rewards(record: EpisodeRecord, invalid_penalty: float) -> list[float]:
    """The env's reward of each step of an episode record, less ``invalid_penalty`` for each
    step whose action the env rejected (``info["invalid_action"]``).

    The penalty (verl-agent's invalid-action penalty) keeps a gradient alive when every
    episode of a batch fails: the ones that wasted fewer moves on unparseable replies are
    still better. Without it a policy that drifts into replies the env cannot read gets
    zero advantage everywhere and never recovers.
    """
    return [
        step.reward - (invalid_penalty if step.info.get("invalid_action") else 0.0)
        for step in record.steps
    ]


def episode_returns(records: Sequence[EpisodeRecord], invalid_penalty: float) -> np.ndarray:
    """Each record's return with :func:`shaped_rewards`."""
    return np.array([sum(shaped_rewards(r, invalid_penalty)) for r in records], dtype=float)


def _members(groups: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    members: dict[Hashable, list[int]] = defaultdict(list)
    for index, group in enumerate(groups):
        members[group].append(index)
    return members


def _centred(values: np.ndarray, std: bool) -> np.ndarray:
    """One group's values less their mean, divided by their sample standard deviation
    (``ddof=1``, as ``torch.std``) when ``std``; a group of one gets 0."""
    if len(values) < 2:
        return np.zeros_like(values)
    centred: np.ndarray = values - values.mean()
    return centred / (float(values.std(ddof=1)) + EPS) if std else centred


def group_normalized(
    returns: Floats, groups: Sequence[Hashable], *, std: bool = True
) -> np.ndarray:
    """GRPO: each return against its group's mean (and, with ``std``, its spread).

    A group whose returns are all equal gets advantage 0 everywhere: it teaches nothing
    (DAPO's dynamic sampling drops such groups before the update). So does a group of one
    episode (``group_size`` 1, or its siblings errored): verl gives it its raw return, TRL
    refuses groups of one; nothing to compare it with is no signal here.
    """
    values = np.asarray(returns, dtype=np.float64)
    out = np.zeros_like(values)
    for index in _members(groups).values():
        out[index] = _centred(values[index], std)
    return out


def leave_one_out(returns: Floats, groups: Sequence[Hashable]) -> np.ndarray:
    """RLOO: each return against the mean of the *other* returns of its group (unbiased)."""
    values = np.asarray(returns, dtype=np.float64)
    out = np.zeros_like(values)
    for index in _members(groups).values():
        chosen = values[index]
        k = len(chosen)
        if k > 1:
            out[index] = chosen - (chosen.sum() - chosen) / (k - 1)
    return out


def episode_weights(episodes: Sequence[Hashable]) -> np.ndarray:
    """A weight per step sample (``episodes[i]``: the episode sample ``i`` belongs to) such
    that every episode's samples weigh the same in total; the mean weight is 1.

    An episode-level advantage is given to each of the episode's turns, so without this an
    episode counts as many times as it has turns. Failures that wander until the step limit
    are the longest episodes, so a group's advantages, which sum to zero over its episodes,
    sum to less than zero over its turns: the update then lowers the probability of whatever
    every reply shares, the end-of-turn token first, and the policy starts writing replies
    the env cannot read. (The multi-turn kin of the length bias Dr.GRPO removes per token.)
    """
    turns = _members(episodes)
    mean = len(episodes) / max(len(turns), 1)
    out = np.zeros(len(episodes))
    for index in turns.values():
        out[index] = mean / len(index)
    return out


def token_whitened(values: Floats, tokens: Sequence[int]) -> np.ndarray:
    """Whitened over the batch's tokens: sample ``i``'s value stands for each of its
    ``tokens[i]`` completion tokens, so the mean and the (Bessel-corrected) variance are
    those of every token, and ``(x - mean) / sqrt(var + 1e-8)`` has mean 0 and standard
    deviation 1 over tokens.

    This is verl's ``masked_whiten`` on a ``[samples, tokens]`` tensor whose every token of
    a row holds the row's value (REINFORCE++, PPO's GAE; OpenRLHF does the same, with the
    biased variance). A long reply weighs more than a short one, as in the token-mean loss.
    """
    array = np.asarray(values, dtype=np.float64)
    counts = np.asarray(tokens, dtype=np.float64)
    total = float(counts.sum())
    if total < 2:
        return np.zeros_like(array)
    mean = float((array * counts).sum()) / total
    variance = float((counts * (array - mean) ** 2).sum()) / (total - 1)
    return (array - mean) / math.sqrt(variance + WHITEN_EPS)


def discounted_returns(rewards: Floats, gamma: float) -> np.ndarray:
    """``G_t = r_t + gamma * G_{t+1}`` for one episode's step rewards."""
    out = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def step_group_normalized(
    step_returns: Floats, anchors: Sequence[Hashable], *, std: bool = True
) -> np.ndarray:
    """GiGPO's step-level advantage (its Eq. 7): steps taken from the same anchor state
    (``anchors``: a group and a ``state_key``) are compared with each other. A state met
    once gets 0: nothing to compare it with."""
    values = np.asarray(step_returns, dtype=np.float64)
    out = np.zeros_like(values)
    for index in _members(anchors).values():
        out[index] = _centred(values[index], std)
    return out


def turn_gae(
    rewards: Floats, values: Floats, gamma: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """Generalized advantage estimation over one episode's turns: ``(advantages, returns)``.

    ``values[t]`` is the critic's estimate before turn ``t``; the episode ends after the last
    reward (a truncated episode is treated as ended: its value is unknown past the cut).
    """
    n = len(rewards)
    advantages = np.zeros(n)
    running = 0.0
    for t in range(n - 1, -1, -1):
        following = values[t + 1] if t + 1 < n else 0.0
        delta = rewards[t] + gamma * following - values[t]
        running = delta + gamma * lam * running
        advantages[t] = running
    return advantages, advantages + np.asarray(values, dtype=np.float64)


RAE_DECAY = 0.95
"""SPIRAL's default decay ``alpha`` of the role baselines (see :func:`role_conditioned`)."""


def role_conditioned(
    returns: Floats,
    roles: Sequence[Hashable],
    baselines: Mapping[Hashable, float],
    *,
    decay: float = RAE_DECAY,
) -> tuple[np.ndarray, dict[Hashable, float]]:
    """SPIRAL's role-conditioned advantage estimation (RAE; Liu et al. 2025, arXiv
    2506.24119, Eq. 2 and Algorithm 1): ``(advantages, baselines after the batch)``.

    In self-play on a zero-sum game the two seats' returns cancel, so a batch mean is about 0
    whatever the policy does, and a seat's edge (the first move, the last word) would be
    credited to the moves. RAE keeps one baseline per role (a game and a seat), starting at
    0 (a role not in ``baselines``), and for each episode ``i`` in order::

        b[role_i] <- decay * b[role_i] + (1 - decay) * R_i
        A_i = R_i - b[role_i]

    (the baseline is updated *before* the advantage is taken, as in the paper's algorithm).
    ``baselines`` is not changed: the trainer keeps the returned dict for its next batch.
    """
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"the RAE decay must be in [0, 1], got {decay!r}")
    values = np.asarray(returns, dtype=np.float64)
    if len(values) != len(roles):
        raise ValueError(f"{len(values)} returns for {len(roles)} roles")
    state = dict(baselines)
    out = np.zeros_like(values)
    for index, (value, role) in enumerate(zip(values, roles, strict=True)):
        state[role] = decay * state.get(role, 0.0) + (1.0 - decay) * float(value)
        out[index] = value - state[role]
    return out, state
