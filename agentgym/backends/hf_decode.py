"""One batched decode: many prompts, left-padded, one forward pass per generated token.

This is the synchronous core of the ``hf`` backend (:mod:`agentgym.backends.hf` runs it in a
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

**Prefix reuse.** A request may come with a :class:`CachedPrefix`: the keys and values of its
prompt's first tokens, kept from an earlier prefill (the system message every turn of an
episode repeats, or the whole previous turn when the history is kept). Only the rest of the
prompt is computed. In the batch, row ``i``'s cache holds its prefix right-aligned in the
first ``P`` slots and its remaining tokens follow, left-padded, in the next ``S``; the mask
hides both paddings and the position ids continue from the prefix, so the row attends to
exactly its own tokens at their own positions, as it would alone. Each row's prompt keys and
values come back (``keep_prompts=True``) for the caller to store; the slot cache also hands
over a retired row's prompt and reply (:meth:`RowBatch.take_replies`), which the chat's next
turn starts with.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch

from agentgym.backends.sampling import SamplingParams

__all__ = [
    "CachedPrefix",
    "DecodeRequest",
    "DecodeResult",
    "DecodeTiming",
    "RowBatch",
    "RunningBatch",
    "decode_batch",
    "prefill",
    "take_tokens",
]


@dataclass
class CachedPrefix:
    """Keys and values of a prompt's first ``length`` tokens: per layer ``[heads, length, dim]``."""

    length: int
    keys: list[torch.Tensor]
    values: list[torch.Tensor]

    def head(self, length: int) -> CachedPrefix:
        """The first ``length`` tokens of this prefix (views, no copy)."""
        return CachedPrefix(
            length, [k[:, :length] for k in self.keys], [v[:, :length] for v in self.values]
        )

    @property
    def nbytes(self) -> int:
        """Memory held."""
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))


@dataclass
class DecodeRequest:
    """One prompt to continue, and the cached keys/values of its first tokens if any."""

    prompt_ids: list[int]
    params: SamplingParams
    seed: int
    prefix: CachedPrefix | None = None


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
    reused_tokens: int = 0  # prompt tokens whose keys/values came from a cached prefix


@dataclass
class _Row:
    """One request in the running batch: what it has written so far."""

    request: DecodeRequest
    generator: torch.Generator
    completion: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    def result(self, finish_reason: str) -> DecodeResult:
        return DecodeResult(self.completion, self.logprobs, finish_reason)


def take_tokens(
    rows: list[_Row], logits: torch.Tensor, eos_ids: set[int]
) -> tuple[list[tuple[DecodeRequest, DecodeResult]], list[int]]:
    """Give every row its next token from ``logits`` (one row of logits each, sampled by the
    row's own generator): the rows that finished (an end-of-sequence token or
    ``max_tokens``) with their results, and the indices of the rows that go on."""
    tokens, logprobs = _choose(
        logits.float().cpu(), [row.request for row in rows], [row.generator for row in rows]
    )
    done: list[tuple[DecodeRequest, DecodeResult]] = []
    keep: list[int] = []
    for index, (row, token, logprob) in enumerate(zip(rows, tokens, logprobs, strict=True)):
        row.completion.append(token)
        row.logprobs.append(logprob)
        if token in eos_ids:
            done.append((row.request, row.result("stop")))
        elif len(row.completion) >= row.request.params.max_tokens:
            done.append((row.request, row.result("length")))
        else:
            keep.append(index)
    return done, keep


class RowBatch:
    """What every batch of rows does alike: a step samples each row's token and runs one
    forward pass for the rows that go on; a discard drops rows. A batch keeps its rows, its
    last logits and its timing, and says how to select rows and to run the forward pass."""

    rows: list[_Row]
    eos_ids: set[int]
    timing: DecodeTiming
    _logits: torch.Tensor

    def admit(
        self, requests: list[DecodeRequest], *, keep_prompts: bool = False
    ) -> list[CachedPrefix] | None:
        raise NotImplementedError

    def _select(self, keep: list[int]) -> None:
        raise NotImplementedError

    def _feed_last_tokens(self) -> None:
        raise NotImplementedError

    def take_replies(self) -> list[tuple[list[int], CachedPrefix]]:
        """The rows retired since the last call, as the token ids their cache holds (the
        prompt and the reply but its last token) with those keys and values: for the prefix
        store, since a chat's next prompt starts with them. Only the slot cache keeps them
        (:class:`~agentgym.backends.hf_static.StaticBatch`); this batch keeps none."""
        return []

    def advance(
        self, newcomers: list[DecodeRequest], *, keep_prompts: bool = False
    ) -> tuple[list[tuple[DecodeRequest, DecodeResult]], list[CachedPrefix] | None]:
        """Admit ``newcomers`` (one forward pass), then :meth:`step`: the rows that finished,
        and (``keep_prompts``) the newcomers' prompt keys and values."""
        prompts = self.admit(newcomers, keep_prompts=keep_prompts) if newcomers else None
        return (self.step() if self.rows else []), prompts

    @torch.inference_mode()
    def step(self) -> list[tuple[DecodeRequest, DecodeResult]]:
        """Give every row its next token; the rows that finished, with their results."""
        started = time.perf_counter()
        done, keep = take_tokens(self.rows, self._logits, self.eos_ids)
        self._select(keep)
        if self.rows:
            self._feed_last_tokens()
        self.timing.decode_seconds += time.perf_counter() - started
        return done

    @torch.inference_mode()
    def discard(self, requests: list[DecodeRequest]) -> None:
        """Drop the rows of ``requests`` (their callers stopped waiting)."""
        gone = {id(r) for r in requests}
        self._select([i for i, row in enumerate(self.rows) if id(row.request) not in gone])


class RunningBatch(RowBatch):
    """The rows being decoded together, over one KV cache; rows join and leave between tokens.

    :meth:`admit` prefills newcomers (reusing their cached prefixes) and merges their keys and
    values into the running cache; :meth:`step` picks every row's next token, retires the rows
    that are done (an end-of-sequence token or ``max_tokens``) and runs one forward pass for the
    rest. Every row is left-padded to the cache's width and masked, its position ids count its
    own tokens only, so a row decodes what it would alone whichever rows come and go. Leading
    columns no row uses any more are cut, so a long prompt that left does not slow the others.
    """

    def __init__(self, model: Any, *, eos_ids: set[int], pad_id: int) -> None:
        self.model, self.eos_ids, self.pad_id = model, eos_ids, pad_id
        self.rows: list[_Row] = []
        self.timing = DecodeTiming()
        self._cache: Any = None
        self._mask = torch.zeros((0, 0), dtype=torch.long)
        self._logits = torch.zeros((0, 0))

    def __len__(self) -> int:
        return len(self.rows)

    @torch.inference_mode()
    def admit(
        self, requests: list[DecodeRequest], *, keep_prompts: bool = False
    ) -> list[CachedPrefix] | None:
        """Prefill ``requests`` (one forward pass) and add them to the batch; with
        ``keep_prompts``, each prompt's keys and values for the prefix store."""
        started = time.perf_counter()
        prefixes = [r.prefix for r in requests]
        out, mask = _prefill(self.model, [r.prompt_ids for r in requests], prefixes, self.pad_id)
        prompts = _prompt_states(out.past_key_values, mask) if keep_prompts else None
        self._merge(out.past_key_values, mask, out.logits[:, -1, :])
        self.rows += [_Row(r, torch.Generator().manual_seed(r.seed)) for r in requests]
        self.timing.forward_passes += 1
        self.timing.reused_tokens += sum(p.length for p in prefixes if p is not None)
        self.timing.prefill_seconds += time.perf_counter() - started
        return prompts

    def _feed_last_tokens(self) -> None:
        """One forward pass feeding each row its last token."""
        device = self.model.device
        next_ids = torch.tensor([[row.completion[-1]] for row in self.rows], device=device)
        positions = self._mask.sum(-1, keepdim=True)
        self._mask = torch.cat([self._mask, torch.ones_like(next_ids)], dim=-1)
        out = self.model(
            input_ids=next_ids,
            attention_mask=self._mask,
            position_ids=positions,
            past_key_values=self._cache,
            use_cache=True,
        )
        self.timing.forward_passes += 1
        self._cache, self._logits = out.past_key_values, out.logits[:, -1, :]

    def _select(self, keep: list[int]) -> None:
        """Keep only the rows ``keep`` (indices), and cut the columns none of them uses."""
        if len(keep) == len(self.rows):
            return
        self.rows = [self.rows[i] for i in keep]
        if not keep:
            self._cache, self._mask = None, self._mask[:0, :0]
            return
        rows = torch.tensor(keep, device=self._mask.device)
        self._cache.batch_select_indices(rows)
        self._mask, self._logits = self._mask[rows], self._logits[rows]
        unused = int(self._mask.any(0).long().argmax())  # leading columns no row attends to
        if unused:
            self._mask = self._mask[:, unused:]
            for layer in self._cache.layers:
                layer.keys, layer.values = layer.keys[:, :, unused:], layer.values[:, :, unused:]

    def _merge(self, cache: Any, mask: torch.Tensor, logits: torch.Tensor) -> None:
        """Append rows (their cache, mask and next-token logits), left-padding the narrower
        side's columns so both have the same width."""
        if self._cache is None:
            self._cache, self._mask, self._logits = cache, mask, logits
            return
        from transformers import DynamicCache

        width = max(self._mask.shape[1], mask.shape[1])
        layers = [
            tuple(
                torch.cat([_pad_left(ours, width), _pad_left(theirs, width)])
                for ours, theirs in ((old.keys, new.keys), (old.values, new.values))
            )
            for old, new in zip(self._cache.layers, cache.layers, strict=True)
        ]
        self._cache = DynamicCache(layers, config=self.model.config)
        self._mask = torch.cat([_pad_left(self._mask, width), _pad_left(mask, width)])
        self._logits = torch.cat([self._logits, logits])


def _pad_left(states: torch.Tensor, width: int) -> torch.Tensor:
    """``states`` with zeros before its columns (dim 2 of keys/values, dim 1 of a mask) up to
    ``width``."""
    dim = 2 if states.dim() == 4 else 1
    missing = width - states.shape[dim]
    if not missing:
        return states
    shape = list(states.shape)
    shape[dim] = missing
    return torch.cat([states.new_zeros(shape), states], dim=dim)


def decode_batch(
    model: Any,
    requests: list[DecodeRequest],
    *,
    eos_ids: set[int],
    pad_id: int,
    keep_prompts: bool = False,
) -> tuple[list[DecodeResult], DecodeTiming, list[CachedPrefix] | None]:
    """Generate for every request at once, none joining later; the results, the time spent,
    and (with ``keep_prompts``) each prompt's keys and values."""
    batch = RunningBatch(model, eos_ids=eos_ids, pad_id=pad_id)
    prompts = batch.admit(requests, keep_prompts=keep_prompts)
    results: dict[int, DecodeResult] = {}
    while batch.rows:
        results.update((id(request), result) for request, result in batch.step())
    return [results[id(r)] for r in requests], batch.timing, prompts


@torch.inference_mode()
def prefill(model: Any, prompts: list[list[int]], *, pad_id: int) -> list[CachedPrefix]:
    """The keys and values of each prompt (one batched forward pass, nothing generated)."""
    out, mask = _prefill(model, prompts, [None] * len(prompts), pad_id)
    return _prompt_states(out.past_key_values, mask)


def _prefill(
    model: Any, prompts: list[list[int]], prefixes: list[CachedPrefix | None], pad_id: int
) -> tuple[Any, torch.Tensor]:
    """One forward pass over every prompt's tokens after its cached prefix (if any): the
    model output (its cache holds the whole prompts) and the attention mask of the cache."""
    reused = [p.length if p is not None else 0 for p in prefixes]
    if any(length >= len(p) for length, p in zip(reused, prompts, strict=True)):
        raise ValueError("a cached prefix must leave at least one prompt token to compute")
    suffixes = [p[length:] for length, p in zip(reused, prompts, strict=True)]
    rows, before, width = len(prompts), max(reused), max(len(s) for s in suffixes)
    input_ids = torch.full((rows, width), pad_id, dtype=torch.long)
    mask = torch.zeros((rows, before + width), dtype=torch.long)
    positions = torch.zeros((rows, width), dtype=torch.long)
    for row, (length, suffix) in enumerate(zip(reused, suffixes, strict=True)):
        input_ids[row, width - len(suffix) :] = torch.tensor(suffix, dtype=torch.long)
        mask[row, before - length : before] = 1
        mask[row, before + width - len(suffix) :] = 1
        positions[row, width - len(suffix) :] = torch.arange(length, length + len(suffix))
    device = model.device
    input_ids, mask, positions = input_ids.to(device), mask.to(device), positions.to(device)
    out = model(
        input_ids=input_ids,
        attention_mask=mask,
        position_ids=positions,
        past_key_values=_prefix_cache(model, prefixes, before) if before else None,
        use_cache=True,
        logits_to_keep=1,
    )
    return out, mask


def _prefix_cache(model: Any, prefixes: list[CachedPrefix | None], before: int) -> Any:
    """A cache of ``before`` slots per row holding each row's prefix, right-aligned."""
    from transformers import DynamicCache

    known = [p for p in prefixes if p is not None]
    layers = []
    for layer in range(len(known[0].keys)):
        states = []
        for kind in ("keys", "values"):
            heads, _, dim = getattr(known[0], kind)[layer].shape
            slots = getattr(known[0], kind)[layer].new_zeros((len(prefixes), heads, before, dim))
            for row, prefix in enumerate(prefixes):
                if prefix is not None and prefix.length:
                    slots[row, :, before - prefix.length :] = getattr(prefix, kind)[layer]
            states.append(slots)
        layers.append((states[0], states[1]))
    return DynamicCache(layers, config=model.config)


def _prompt_states(cache: Any, mask: torch.Tensor) -> list[CachedPrefix]:
    """Each row's prompt keys and values (its unmasked slots), copied out of the batch."""
    prompts = []
    for row in range(mask.shape[0]):
        index = mask[row].nonzero().squeeze(-1)
        keys = [layer.keys[row].index_select(1, index) for layer in cache.layers]
        values = [layer.values[row].index_select(1, index) for layer in cache.layers]
        prompts.append(CachedPrefix(int(index.numel()), keys, values))
    return prompts


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
