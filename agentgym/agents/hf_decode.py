"""One batched decode: many prompts, left-padded, one forward pass per generated token.

This is the synchronous core of the ``hf`` backend (:mod:`agentgym.agents.hf` runs it in a
thread and feeds it whatever requests are pending). It is a plain decode loop over a KV
cache rather than ``model.generate`` because each row needs its own sampling settings and
its own seeded random generator (so an episode's samples do not depend on which other
episodes shared its batch), and because the ledger needs the logprob of every sampled token.

Left padding: prompts are right-aligned, padding is masked out of attention and position ids
count real tokens only, so a row's result is the one it gets alone (up to floating-point
rounding; the tests check greedy decoding gives the same tokens batched and alone). Rows that
finish are dropped from the cache, so a long reply does not make the short ones pay.

Logprobs are ``log_softmax(logits / T)`` of each sampled token (``T = 1`` for greedy), before
top-p/top-k truncation: the policy a trainer recomputes from the same logits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from agentgym.agents.sampling import SamplingParams

__all__ = ["DecodeRequest", "DecodeResult", "DecodeTiming", "decode_batch"]


@dataclass
class DecodeRequest:
    """One prompt to continue."""

    prompt_ids: list[int]
    params: SamplingParams
    seed: int


@dataclass
class DecodeResult:
    """What the model wrote for one request."""

    completion_ids: list[int]
    logprobs: list[float]
    finish_reason: str  # "stop" (an end-of-sequence token, kept in completion_ids) or "length"


@dataclass
class DecodeTiming:
    """Where a batch's time went: prefill (compute-bound: batching saves nothing) and decode
    (bound by reading the weights: a batch of rows costs little more than one)."""

    forward_passes: int = 0
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0


@torch.inference_mode()
def decode_batch(
    model: Any, requests: list[DecodeRequest], *, eos_ids: set[int], pad_id: int
) -> tuple[list[DecodeResult], DecodeTiming]:
    """Generate for every request at once; returns the results and the time spent."""
    started = time.perf_counter()
    device = model.device
    prompts = [r.prompt_ids for r in requests]
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        input_ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    input_ids, mask = input_ids.to(device), mask.to(device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    out = model(
        input_ids=input_ids,
        attention_mask=mask,
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,
    )
    timing = DecodeTiming(forward_passes=1)
    cache = out.past_key_values
    generators = [torch.Generator().manual_seed(r.seed) for r in requests]
    completions: list[list[int]] = [[] for _ in requests]
    logprobs: list[list[float]] = [[] for _ in requests]
    finish = ["length"] * len(requests)
    active = list(range(len(requests)))  # request index of each row still in the cache
    logits = out.logits[:, -1, :]
    timing.prefill_seconds = time.perf_counter() - started
    while True:
        tokens, token_logprobs = _choose(
            logits.float().cpu(), [requests[i] for i in active], [generators[i] for i in active]
        )
        keep: list[int] = []
        for row, index in enumerate(active):
            completions[index].append(tokens[row])
            logprobs[index].append(token_logprobs[row])
            if tokens[row] in eos_ids:
                finish[index] = "stop"
            elif len(completions[index]) < requests[index].params.max_tokens:
                keep.append(row)
        if not keep:
            break
        if len(keep) < len(active):
            rows = torch.tensor(keep, device=device)
            cache.batch_select_indices(rows)
            mask = mask[rows]
        active = [active[row] for row in keep]
        next_ids = torch.tensor([[completions[i][-1]] for i in active], device=device)
        positions = mask.sum(-1, keepdim=True)
        mask = torch.cat([mask, torch.ones_like(next_ids)], dim=-1)
        out = model(
            input_ids=next_ids,
            attention_mask=mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
        )
        timing.forward_passes += 1
        cache = out.past_key_values
        logits = out.logits[:, -1, :]
    results = [
        DecodeResult(completion_ids=c, logprobs=lp, finish_reason=f)
        for c, lp, f in zip(completions, logprobs, finish, strict=True)
    ]
    timing.decode_seconds = time.perf_counter() - started - timing.prefill_seconds
    return results, timing


def _choose(
    logits: torch.Tensor, requests: list[DecodeRequest], generators: list[torch.Generator]
) -> tuple[list[int], list[float]]:
    """The next token of each row and its logprob under the (temperature-scaled) policy."""
    tokens: list[int] = []
    chosen: list[float] = []
    for row, request in enumerate(requests):
        params = request.params
        scaled = logits[row] / (params.temperature if params.temperature > 0 else 1.0)
        logp = torch.log_softmax(scaled, dim=-1)
        if params.temperature == 0:
            token = int(torch.argmax(scaled))
        else:
            token = _sample(logp, params, generators[row])
        tokens.append(token)
        chosen.append(float(logp[token]))
    return tokens, chosen


def _sample(logp: torch.Tensor, params: SamplingParams, generator: torch.Generator) -> int:
    probs = logp.exp()
    if params.top_k and params.top_k < probs.numel():
        cutoff = torch.topk(probs, params.top_k).values[-1]
        probs = torch.where(probs >= cutoff, probs, torch.zeros_like(probs))
    if params.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        # Keep the smallest prefix whose mass reaches top_p (always at least one token).
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        sorted_probs = torch.where(before < params.top_p * sorted_probs.sum(), sorted_probs, 0.0)
        probs = torch.zeros_like(probs).scatter(0, order, sorted_probs)
    return int(torch.multinomial(probs, 1, generator=generator))
