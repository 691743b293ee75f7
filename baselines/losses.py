"""The policy-gradient loss every algorithm file shares: clipped ratio, aggregation, KL.

``policy_loss`` is PPO's clipped surrogate over completion tokens,
``-min(ratio * A, clip(ratio, 1 - clip_low, 1 + clip_high) * A)``, with the ratio
``exp(logp - old_logp)`` against the logprobs the rollout recorded (the log-ratio clamped
to ±20 first, as verl does, so one wild token cannot overflow). A separate ``clip_high`` is
DAPO's clip-higher (it lets unlikely tokens gain probability faster).

``clip_ratio_c`` is dual-clip PPO (Ye et al. 2020, arXiv 1912.09729; verl's
``compute_policy_loss_vanilla``, on there by default at 3.0): where the advantage is
negative, the loss is also capped at ``-A * clip_ratio_c``. The plain surrogate grows with
the ratio without bound for such a token (``min`` picks the unclipped term), so one token
whose probability rose far above the rollout's could dominate a minibatch's gradient; the
cap gives such tokens no gradient.

How the per-token losses become one number (``aggregation``):

============================  ===============================================================
``token-mean``                mean over every unmasked token of the batch (DAPO: long replies
                              weigh as much per token as short ones)
``seq-mean-token-mean``       mean per sequence, then over sequences (GRPO as published)
``seq-mean-token-sum-norm``   sum per sequence divided by a constant (the longest allowed
                              reply), then mean over sequences (Dr.GRPO: no length bias)
============================  ===============================================================

``kl_penalty`` is the k3 estimator ``exp(ref - logp) - (ref - logp) - 1`` of
KL(policy || reference), non-negative and unbiased, per token.
"""

from __future__ import annotations

import torch

__all__ = ["AGGREGATIONS", "aggregate", "kl_penalty", "policy_loss"]

AGGREGATIONS: tuple[str, ...] = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")


def aggregate(values: torch.Tensor, mask: torch.Tensor, how: str, norm: int = 1) -> torch.Tensor:
    """One number from per-token ``values`` ``[B, C]`` over ``mask`` (see the table)."""
    if how == "token-mean":
        return (values * mask).sum() / mask.sum().clamp(min=1)
    per_row = (values * mask).sum(-1)
    if how == "seq-mean-token-mean":
        return (per_row / mask.sum(-1).clamp(min=1)).mean()
    if how == "seq-mean-token-sum-norm":
        return (per_row / norm).mean()
    raise ValueError(f"unknown aggregation {how!r}; use one of {AGGREGATIONS}")


def policy_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    aggregation: str = "token-mean",
    norm: int = 1,
    clip_ratio_c: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped surrogate loss and its diagnostics (clip fraction, approximate KL to the
    rollout policy). ``advantages`` is ``[B]`` (one per sample) or ``[B, C]`` (per token);
    ``clip_ratio_c`` (> 1, None: off) is the dual clip for negative advantages."""
    if clip_ratio_c is not None and clip_ratio_c <= 1:
        raise ValueError(f"clip_ratio_c must be > 1 (dual-clip PPO), got {clip_ratio_c!r}")
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(-1)
    log_ratio = torch.clamp(logprobs - old_logprobs, -20.0, 20.0)
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high) * advantages
    losses = -torch.minimum(unclipped, clipped)
    if clip_ratio_c is not None:
        capped = torch.minimum(losses, -advantages * clip_ratio_c)
        losses = torch.where(advantages < 0, capped, losses)
    loss = aggregate(losses, mask, aggregation, norm)
    with torch.no_grad():
        total = mask.sum().clamp(min=1)
        stats = {
            "clip_fraction": float(((unclipped != clipped).float() * mask).sum() / total),
            "approx_kl": float((((ratio - 1) - log_ratio) * mask).sum() / total),
        }
    return loss, stats


def kl_penalty(logprobs: torch.Tensor, reference_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(policy || reference)."""
    delta = reference_logprobs - logprobs
    return torch.exp(delta) - delta - 1
