"""The ``hf`` backend's KV cache of slots: allocated once, so no token or admission copies
the whole cache; on CUDA, one decode step captured per bucket of batch sizes.

Eager PyTorch spends ~20-30 ms per token of a 135M model launching kernels, whatever the GPU
(``docs/performance.md``, "On a GPU"); a decode step captured in CUDA graphs
(``torch.compile``, mode ``reduce-overhead``) replays them in ~3 ms. Graphs need tensors
whose shapes and addresses never change, which the dynamic cache of
:class:`~agentgym.backends.hf_decode.RunningBatch` (it grows by a column per token and
merges rows) cannot give. :class:`StaticBatch` keeps the same contract (rows admitted and
retired between tokens, each row's own seeded generator and logprobs) over fixed buffers:

* every layer's keys and values are ``[slots, heads, length, dim]`` tensors allocated once
  (eager: ``length`` starts at :attr:`StaticBatch.initial_capacity` columns, doubles when a
  prompt or a reply needs more and goes back when the batch is empty); the live rows fill
  slots ``0..n-1`` (a retired row's slot takes the last row's, its own columns copied);
* all rows write their next token at one shared column ``c``; row ``r`` owns the columns
  ``[start_r, c)``, so a newcomer's prompt (prefilled eagerly, with its cached prefix, as in
  the dynamic path) is copied into columns ``[c - P, c)`` of its slot; when ``c`` reaches
  the end, every row moves left by the first column any row uses (a request is admitted only
  if its prompt plus ``max_tokens`` fits in the length, so this always frees a column);
* the attention mask (additive, ``[rows, 1, 1, length]``) opens ``[start_r, c]`` of each
  row and the position ids count each row's own tokens, so a row attends to exactly its own
  tokens at their own positions, as alone;
* compiled, the step runs on the smallest bucket of rows (1, 4, 16, 64, ... up to the slots)
  holding the live ones, over the whole length: one graph per bucket, compiled and captured
  on first use. Eager, it runs on the live rows over the columns they use
  (``[min start_r, c]``), so nothing is computed for padding rows or empty columns.

**Newcomers join inside the decode step** (eager only): when requests arrive while rows
decode, one forward pass feeds the rows their last tokens and the newcomers their prompts
(after any cached prefix), packed into one sequence of tokens: each token's keys and values
are written at its own slot and column, and attention runs per row over its own columns
(:func:`packed_attention`, which stands in transformers' table for ``sdpa`` and acts only
in the thread running a packed pass; models on another attention are not packed). On a
2-core CPU a forward pass of SmolLM2 costs ~30 ms whatever it computes (two thirds of it
the matrix products reading the weights, at ~25 GB/s), which an admission of its own paid
again for every newcomer. A model whose layers do not look their attention up in that table
is noticed on the first such pass (the function did not run for every layer, or the pass
failed), and admissions go back to passes of their own.

The model sees the cache through :class:`SlotCache`, which has only what transformers'
attention calls (``update``: write at column ``c``, return the buffers, or eagerly the
columns in use). On the first
compiled step of each bucket the compiled logits are checked against an eager forward of
the same inputs; a compile error or a mismatch logs a warning and the batch goes on eagerly
over the same static cache (exact, only slower). On the CPU the backend runs this eagerly
by default: transformers' dynamic cache concatenates every layer's whole cache at each
token (a third of a 16-row step of SmolLM2 there) and at each admission, which this does
not (``docs/performance.md``, issue 34).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from agentgym.backends.hf_decode import (
    CachedPrefix,
    DecodeRequest,
    DecodeResult,
    DecodeTiming,
    RowBatch,
    RunningBatch,
    _prefill,
    _prompt_states,
    _Row,
    take_tokens,
)

__all__ = ["SlotCache", "SplitBatch", "StaticBatch", "bucket", "packed_attention"]

log = logging.getLogger(__name__)


def bucket(rows: int, slots: int) -> int:
    """The smallest power of four holding ``rows``, at most ``slots``: few graphs to compile
    (each takes seconds), and on a GPU a step of 16 rows costs about what one of 4 does."""
    size = 1
    while size < rows:
        size *= 4
    return min(size, slots)


@dataclass
class Piece:
    """Some of a packed step's query tokens and the keys they attend to: the decoding rows
    (one token each, ``each_row``) or one newcomer's prompt tokens."""

    tokens: slice  # positions in the packed sequence
    rows: slice  # their slots
    columns: slice  # the cache columns they attend to
    mask: torch.Tensor  # additive: [rows, 1, queries per row, columns]
    each_row: bool


@dataclass
class PackedStep:
    """One packed forward pass: its tokens (ids, positions, and the slot and column each
    one's keys and values go to), the pieces :func:`packed_attention` runs, the tokens whose
    logits are kept, and how many layers the attention ran for."""

    ids: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)  # one per row: its last token's logits
    calls: int = 0

    def add(
        self,
        ids: list[int],
        positions: list[int],
        columns: list[int],
        *,
        rows: slice,
        attended: slice,
        mask: torch.Tensor,
    ) -> None:
        """The tokens of ``rows``: one per row (several rows), or a prompt's (one row)."""
        begin = len(self.ids)
        each_row = len(ids) == rows.stop - rows.start  # else one row's several tokens
        self.ids += ids
        self.positions += positions
        self.columns += columns
        self.slots += list(range(rows.start, rows.stop)) if each_row else [rows.start] * len(ids)
        self.pieces.append(Piece(slice(begin, len(self.ids)), rows, attended, mask, each_row))
        self.kept += range(begin, len(self.ids)) if each_row else [len(self.ids) - 1]


_packing = threading.local()  # .step: the PackedStep this thread's forward pass runs
_SDPA: list[Callable[..., tuple[torch.Tensor, Any]]] = []  # what packed_attention stands in for


def packed_attention(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Any,
    *args: Any,
    **kwargs: Any,
) -> tuple[torch.Tensor, Any]:
    """transformers' ``sdpa`` attention, except in a packed pass of this thread: there the
    tokens ``query`` ``[1, heads, tokens, dim]`` attend each over its own row's columns of
    the slot buffers ``key``/``value``, one sdpa call per piece with the layer's other
    arguments, and the output is ``[1, tokens, heads, dim]``. It stands in transformers'
    table of attention functions under ``sdpa`` (see :func:`_install_packed_attention`)."""
    step: PackedStep | None = getattr(_packing, "step", None)
    if step is None:
        return _SDPA[0](module, query, key, value, attention_mask, *args, **kwargs)
    step.calls += 1
    outputs = []
    for piece in step.pieces:
        queries = query[:, :, piece.tokens]
        if piece.each_row:  # [1, heads, rows, dim] -> [rows, heads, 1, dim]
            queries = queries[0].transpose(0, 1).unsqueeze(2)
        keys, values = key[piece.rows, :, piece.columns], value[piece.rows, :, piece.columns]
        out, _ = _SDPA[0](module, queries, keys, values, piece.mask, *args, **kwargs)
        outputs.append(out.reshape(1, -1, *out.shape[2:]))
    return torch.cat(outputs, dim=1), None


def _install_packed_attention() -> None:
    """Put :func:`packed_attention` in transformers' table under ``sdpa``, delegating to the
    function it replaces outside packed passes. Switching a model's attention by its config
    for one pass would switch it for every thread using that model (transformers builds no
    mask at all for a name it does not know); this way only the packing thread sees it."""
    from transformers import AttentionInterface
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    current = ALL_ATTENTION_FUNCTIONS["sdpa"]
    if current is not packed_attention:
        _SDPA[:] = [current]
        AttentionInterface.register("sdpa", packed_attention)


class SlotCache:
    """Per-layer static keys and values ``[slots, heads, length, dim]``; the model writes each
    step's keys and values at column :attr:`column` of the first rows (as many as the step
    has) and attends over the whole length (the mask hides what a row does not own)."""

    is_compileable = True

    def __init__(self, keys: list[torch.Tensor], values: list[torch.Tensor]) -> None:
        self.keys, self.values = keys, values
        self.column = torch.zeros(1, dtype=torch.long, device=keys[0].device)
        for tensor in (*keys, *values, self.column):
            torch._dynamo.mark_static_address(tensor)

        self.span: tuple[int, int] | None = None  # eager steps: the columns attended to
        # packed steps: each token's slot and column (the whole buffers are returned)
        self.scatter: tuple[torch.Tensor, torch.Tensor] | None = None

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *_: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.scatter is not None:  # [1, heads, tokens, dim]: token t to its slot, column
            slots, columns = self.scatter
            keys, values = self.keys[layer_idx], self.values[layer_idx]
            keys[slots, :, columns] = key_states[0].transpose(0, 1)
            values[slots, :, columns] = value_states[0].transpose(0, 1)
            return keys, values
        rows = key_states.shape[0]
        keys, values = self.keys[layer_idx][:rows], self.values[layer_idx][:rows]
        keys.index_copy_(2, self.column, key_states)
        values.index_copy_(2, self.column, value_states)
        if self.span is not None:
            first, end = self.span
            return keys[:, :, first:end], values[:, :, first:end]
        return keys, values

    def get_seq_length(self, *_: Any) -> int:
        return 0  # position ids are always given: nothing derives them from the cache


class StaticBatch(RowBatch):
    """The rows being decoded over a :class:`SlotCache` (see the module docstring); the
    interface of :class:`~agentgym.backends.hf_decode.RunningBatch`."""

    initial_capacity = 256  # eager buffers' first length in columns (they double as needed)

    def __init__(
        self,
        model: Any,
        *,
        eos_ids: set[int],
        pad_id: int,
        slots: int,
        length: int,
        compile: bool = True,
        join_in_step: bool = True,
        keep_replies: bool = False,
    ) -> None:
        self.model, self.eos_ids, self.pad_id = model, eos_ids, pad_id
        self.join_in_step = join_in_step
        self.keep_replies = keep_replies  # retired rows' keys and values, for take_replies
        self._replies: list[tuple[list[int], CachedPrefix]] = []
        self.slots, self.length = slots, length
        self.rows: list[_Row] = []
        self.timing = DecodeTiming()
        config = model.config
        heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        self._shape = (slots, heads, dim, config.num_hidden_layers)
        # compiled: the whole length at once (a graph's buffers never move); eager: the
        # columns in use, grown by doubling (a CPU holds 16 slots of 2048 tokens in 1.5 GB)
        self.capacity = length if compile else min(length, self.initial_capacity)
        self.cache = self._buffers(self.capacity)
        self.column = 0  # where the next token of every row is written
        device = model.device
        self.starts = torch.full((slots,), length + 1, dtype=torch.long, device=device)
        self._logits = torch.zeros((0, config.vocab_size), device=device)
        self._columns = torch.arange(self.capacity, device=device)
        self._masked = torch.finfo(model.dtype).min
        self._compiled: Any = (
            torch.compile(self._forward, mode="reduce-overhead", dynamic=False) if compile else None
        )
        self._checked: set[int] = set()

    def __len__(self) -> int:
        return len(self.rows)

    def _buffers(self, capacity: int) -> SlotCache:
        slots, heads, dim, layers = self._shape
        shape, device, dtype = (slots, heads, capacity, dim), self.model.device, self.model.dtype
        return SlotCache(
            [torch.zeros(shape, device=device, dtype=dtype) for _ in range(layers)],
            [torch.zeros(shape, device=device, dtype=dtype) for _ in range(layers)],
        )

    def _reserve(self, columns: int) -> None:
        """Room for ``columns`` columns (at most :attr:`length`): eager buffers double, their
        used columns copied over; compiled ones always hold the whole length."""
        if columns <= self.capacity:
            return
        used = slice(0, min(self.column, self.capacity))
        self.capacity = min(self.length, max(columns, 2 * self.capacity))
        cache = self._buffers(self.capacity)
        rows = len(self.rows)
        ours, theirs = (*cache.keys, *cache.values), (*self.cache.keys, *self.cache.values)
        for new, old in zip(ours, theirs, strict=True):
            new[:rows, :, used] = old[:rows, :, used]
        self.cache = cache
        self._columns = torch.arange(self.capacity, device=self.model.device)

    @property
    def compiled(self) -> bool:
        """Whether decode steps run compiled (False: never asked, or given up)."""
        return self._compiled is not None

    def fits(self, request: DecodeRequest) -> bool:
        """Whether the request's prompt and reply fit in a slot, and a slot is free."""
        return len(request.prompt_ids) + request.params.max_tokens <= self.length

    @torch.inference_mode()
    def admit(
        self, requests: list[DecodeRequest], *, keep_prompts: bool = False
    ) -> list[CachedPrefix] | None:
        """Prefill ``requests`` eagerly and copy their keys and values into free slots."""
        if len(self.rows) + len(requests) > self.slots:
            raise ValueError(f"{len(self.rows)} + {len(requests)} rows over {self.slots} slots")
        started = time.perf_counter()
        prefixes = [r.prefix for r in requests]
        out, mask = _prefill(self.model, [r.prompt_ids for r in requests], prefixes, self.pad_id)
        prompts = _prompt_states(out.past_key_values, mask)
        longest = max(p.length for p in prompts)
        if not self.rows:
            self._reserve(longest)
            self.column = longest
        elif longest > self.column:
            self._shift(longest - self.column)
        for request, prompt in zip(requests, prompts, strict=True):
            slot, begin = len(self.rows), self.column - prompt.length
            for layer, (keys, values) in enumerate(zip(prompt.keys, prompt.values, strict=True)):
                self.cache.keys[layer][slot, :, begin : self.column] = keys
                self.cache.values[layer][slot, :, begin : self.column] = values
            self.starts[slot] = begin
            self.rows.append(_Row(request, torch.Generator().manual_seed(request.seed)))
        self._logits = torch.cat([self._logits, out.logits[:, -1, :].to(self._logits.dtype)])
        self.timing.forward_passes += 1
        self.timing.reused_tokens += sum(p.length for p in prefixes if p is not None)
        self.timing.prefill_seconds += time.perf_counter() - started
        return prompts if keep_prompts else None

    def _feed_last_tokens(self) -> None:
        """One forward pass (compiled where it can be) feeding each row its last token."""
        self._room_for_a_column()
        # compiled: a bucket of rows over the whole length (fixed shapes for the graph);
        # eager: the live rows over the columns they use, nothing attended to in vain
        eager = self._compiled is None
        rows = len(self.rows) if eager else bucket(len(self.rows), self.slots)
        ids = [row.completion[-1] for row in self.rows] + [self.pad_id] * (rows - len(self.rows))
        input_ids = torch.tensor(ids, device=self.model.device)[:, None]
        starts = self.starts[:rows, None]
        positions = (self.column - starts).clamp(min=0)
        first = int(starts.min()) if eager else 0
        end = self.column + 1 if eager else self.capacity
        self.cache.span = (first, end) if eager else None
        columns = self._columns[first:end]
        opened = (columns >= starts) & (columns <= self.column)
        mask = self._additive(~opened)[:, None, None, :]
        self.cache.column.fill_(self.column)
        logits = self._run(input_ids, positions, mask)
        self.column += 1
        self.timing.forward_passes += 1
        self._logits = logits[: len(self.rows)]

    def advance(
        self, newcomers: list[DecodeRequest], *, keep_prompts: bool = False
    ) -> tuple[list[tuple[DecodeRequest, DecodeResult]], list[CachedPrefix] | None]:
        """Like :meth:`RowBatch.advance`; eagerly, with rows decoding, the newcomers join in
        the same forward pass as the rows' next tokens (their first token is chosen at the
        next step, as every row's is after a forward pass)."""
        if not (newcomers and self.rows and self.packs):
            return super().advance(newcomers, keep_prompts=keep_prompts)
        with torch.inference_mode():
            started = time.perf_counter()
            done, keep = take_tokens(self.rows, self._logits, self.eos_ids)
            self._select(keep)
            if not self.rows:  # nobody left to share the pass with
                self.timing.decode_seconds += time.perf_counter() - started
                return done, self.admit(newcomers, keep_prompts=keep_prompts)
            prompts = self._feed_with_newcomers(newcomers, keep_prompts)
            self.timing.decode_seconds += time.perf_counter() - started
        return done, prompts

    @property
    def packs(self) -> bool:
        """Whether newcomers join inside the decode step: eager steps (a compiled graph has
        fixed shapes) of a model on transformers' sdpa attention (one that needs another, as
        Gemma2's soft-capped eager attention, is computed as it asks), unless turned off."""
        sdpa = getattr(self.model.config, "_attn_implementation", None) == "sdpa"
        return self.join_in_step and self._compiled is None and sdpa

    def _feed_with_newcomers(
        self, newcomers: list[DecodeRequest], keep_prompts: bool
    ) -> list[CachedPrefix] | None:
        """One forward pass: each row's last token at the shared column ``c``, each
        newcomer's prompt (its cached prefix copied first) ending at ``c`` in a free slot."""
        if len(self.rows) + len(newcomers) > self.slots:
            raise ValueError(f"{len(self.rows)} + {len(newcomers)} rows over {self.slots} slots")
        self._room_for_a_column()
        longest = max(len(r.prompt_ids) for r in newcomers)
        if longest - 1 > self.column:
            self._shift(longest - 1 - self.column)
        self._reserve(self.column + 1)
        column, width = self.column, len(self.rows)
        starts = self.starts[:width, None]
        first = int(starts.min())
        columns = self._columns[first : column + 1]
        step = PackedStep()
        step.add(
            [row.completion[-1] for row in self.rows],
            (column - starts[:, 0]).tolist(),
            [column] * width,
            rows=slice(0, width),
            attended=slice(first, column + 1),
            mask=self._additive(~((columns >= starts) & (columns <= column)))[:, None, None, :],
        )
        for slot, request in enumerate(newcomers, start=width):
            self._place(step, slot, request)
        try:
            logits = self._forward_packed(step)
            layers = self.model.config.num_hidden_layers
            why = "" if step.calls == layers else f"packed attention ran {step.calls} of {layers}"
        except Exception as error:  # a model that cannot take a packed pass
            why = f"{type(error).__name__}: {error}"
        if why:  # the model's attention is not transformers' interface: no harm done yet
            log.warning("newcomers join in forward passes of their own: %s", why)
            self.join_in_step = False
            self._feed_last_tokens()  # rewrites what the pass wrote, as admit does
            return self.admit(newcomers, keep_prompts=keep_prompts)
        self.rows += [_Row(r, torch.Generator().manual_seed(r.seed)) for r in newcomers]
        self._logits = logits
        self.column += 1
        self.timing.forward_passes += 1
        self.timing.reused_tokens += sum(r.prefix.length for r in newcomers if r.prefix)
        if not keep_prompts:
            return None
        return [self._states_of(slot) for slot in range(width, len(self.rows))]

    def _place(self, step: PackedStep, slot: int, request: DecodeRequest) -> None:
        """Put ``request``'s prompt in ``slot``, ending at the shared column: its cached
        prefix copied in, the rest of its tokens added to ``step``."""
        prompt, prefix = request.prompt_ids, request.prefix
        length, reused = len(prompt), prefix.length if prefix is not None else 0
        if reused >= length:
            raise ValueError("a cached prefix must leave at least one prompt token to compute")
        start = self.column - length + 1
        if prefix is not None and reused:
            for layer, (keys, values) in enumerate(zip(prefix.keys, prefix.values, strict=True)):
                self.cache.keys[layer][slot, :, start : start + reused] = keys
                self.cache.values[layer][slot, :, start : start + reused] = values
        self.starts[slot] = start
        device = self.model.device
        queries = torch.arange(reused, length, device=device)[:, None]
        later = torch.arange(length, device=device)[None, :] > queries  # causal
        step.add(
            prompt[reused:],
            list(range(reused, length)),
            list(range(start + reused, self.column + 1)),
            rows=slice(slot, slot + 1),
            attended=slice(start, self.column + 1),
            mask=self._additive(later)[None, None],
        )

    def _forward_packed(self, step: PackedStep) -> torch.Tensor:
        """The packed pass's logits of each row's last token (:func:`packed_attention` runs
        its attention, in this thread only)."""
        device = self.model.device
        _install_packed_attention()
        self.cache.scatter = (
            torch.tensor(step.slots, device=device),
            torch.tensor(step.columns, device=device),
        )
        _packing.step = step
        try:
            out = self.model(
                input_ids=torch.tensor([step.ids], device=device),
                position_ids=torch.tensor([step.positions], device=device),
                # a 4-d mask is used as given: packed_attention keeps its own per piece
                attention_mask=torch.zeros((1, 1, 1, 1), dtype=self.model.dtype, device=device),
                past_key_values=self.cache,
                use_cache=True,
                logits_to_keep=torch.tensor(step.kept, device=device),
            )
        finally:
            _packing.step = None
            self.cache.scatter = None
        logits: torch.Tensor = out.logits[0]
        return logits

    def take_replies(self) -> list[tuple[list[int], CachedPrefix]]:
        """See :meth:`RowBatch.take_replies` (kept with ``keep_replies``)."""
        replies, self._replies = self._replies, []
        return replies

    def _states_of(self, slot: int) -> CachedPrefix:
        """A copy of the keys and values ``slot`` holds: its row's prompt and every token of
        its reply but the last (sampled, not yet fed)."""
        used = slice(int(self.starts[slot]), self.column)
        return CachedPrefix(
            used.stop - used.start,
            [keys[slot, :, used].clone() for keys in self.cache.keys],
            [values[slot, :, used].clone() for values in self.cache.values],
        )

    def _additive(self, hidden: torch.Tensor) -> torch.Tensor:
        """An additive attention mask: 0 where attended, the dtype's minimum where ``hidden``."""
        mask = torch.zeros(hidden.shape, dtype=self.model.dtype, device=hidden.device)
        return mask.masked_fill(hidden, self._masked)

    def _room_for_a_column(self) -> None:
        """A free column at :attr:`column`: eager buffers grow; at the full length every row
        moves left by the first column any row uses (one always is free: see the module
        docstring)."""
        if self.column == self.capacity:
            self._reserve(self.column + 1)
        if self.column == self.capacity:
            self._shift(-int(self.starts[: len(self.rows)].min()))

    def _run(self, input_ids: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor) -> Any:
        """The step's logits: compiled, checked against eager on a bucket's first step."""
        rows = input_ids.shape[0]
        if self._compiled is None:
            return self._forward(input_ids, positions, mask)
        try:
            logits = self._compiled(input_ids, positions, mask).clone()
        except Exception as error:  # a compile that fails must not fail the requests
            return self._give_up(f"{type(error).__name__}: {error}", input_ids, positions, mask)
        if rows not in self._checked:
            live = len(self.rows)
            eager = self._forward(input_ids, positions, mask)
            gap = float((eager[:live].float() - logits[:live].float()).abs().max())
            if not gap <= 0.05 * max(1.0, float(eager[:live].float().abs().max())):
                return self._give_up(f"compiled logits differ by {gap:.3g}", eager=eager)
            self._checked.add(rows)
        return logits

    def _give_up(self, why: str, *inputs: torch.Tensor, eager: Any = None) -> Any:
        log.warning("compiled decoding off, decoding eagerly (slower, same tokens): %s", why)
        self._compiled = None
        return eager if eager is not None else self._forward(*inputs)

    def _forward(
        self, input_ids: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        out = self.model(
            input_ids=input_ids,
            position_ids=positions,
            attention_mask=mask,
            past_key_values=self.cache,
            use_cache=True,
        )
        logits: torch.Tensor = out.logits[:, -1, :]
        return logits

    def _select(self, keep: list[int]) -> None:
        """Keep only the rows ``keep`` (indices), moving them into slots ``0..n-1``."""
        if len(keep) == len(self.rows):
            return
        if self.keep_replies:
            kept = set(keep)
            self._replies += [
                (row.request.prompt_ids + row.completion[:-1], self._states_of(slot))
                for slot, row in enumerate(self.rows)
                if slot not in kept and len(row.completion) > 1
            ]
        order = _fill_holes(keep)
        for slot, row in enumerate(order):
            if slot != row:
                used = slice(int(self.starts[row]), self.column)  # a row's own columns only
                for tensor in (*self.cache.keys, *self.cache.values):
                    tensor[slot, :, used] = tensor[row, :, used]
                self.starts[slot] = self.starts[row]
        self.starts[len(order) :] = self.length + 1
        self.rows = [self.rows[i] for i in order]
        self._logits = self._logits[
            torch.tensor(order, dtype=torch.long, device=self._logits.device)
        ]
        if not keep and self._compiled is None and self.capacity > self.initial_capacity:
            # an idle backend (a trainer's, between iterations) does not hold its peak memory
            self.capacity = self.initial_capacity
            self.cache = self._buffers(self.capacity)
            self._columns = torch.arange(self.capacity, device=self.model.device)

    def _shift(self, by: int) -> None:
        """Move every row's columns right (``by > 0``) or left (``by < 0``) by ``|by|``."""
        if by == 0:
            return
        width = len(self.rows)
        self._reserve(self.column + by)
        old = slice(max(0, -by), self.column)
        new = slice(max(0, by), self.column + by)
        for tensor in (*self.cache.keys, *self.cache.values):
            tensor[:width, :, new] = tensor[:width, :, old].clone()
        self.starts[:width] += by
        self.column += by


def _fill_holes(keep: list[int]) -> list[int]:
    """The slot each kept row moves to, as the kept row each slot ``0..n-1`` takes: a row
    already in those slots stays, the rows past them fill the retired rows' slots. Keeping
    the rows' order instead would move every row after a retired one (four rows moved per
    retirement in an evaluation's steady state, each copying its keys and values)."""
    slots = len(keep)
    order = list(range(slots))
    holes = sorted(set(order) - set(keep))
    for hole, row in zip(holes, (row for row in keep if row >= slots), strict=True):
        order[hole] = row
    return order


class SplitBatch:
    """A :class:`StaticBatch` for the requests that fit its slots, and a dynamic
    :class:`~agentgym.backends.hf_decode.RunningBatch` beside it for those that do not (a
    prompt longer than the static length, more rows than slots); each step decodes both."""

    def __init__(self, static: StaticBatch, dynamic: RunningBatch) -> None:
        self.static, self.dynamic = static, dynamic

    def __len__(self) -> int:
        return len(self.static) + len(self.dynamic)

    @property
    def rows(self) -> list[_Row]:
        return self.static.rows + self.dynamic.rows

    @property
    def timing(self) -> DecodeTiming:
        a, b = self.static.timing, self.dynamic.timing
        return DecodeTiming(
            a.forward_passes + b.forward_passes,
            a.prefill_seconds + b.prefill_seconds,
            a.decode_seconds + b.decode_seconds,
            a.reused_tokens + b.reused_tokens,
        )

    def admit(
        self, requests: list[DecodeRequest], *, keep_prompts: bool = False
    ) -> list[CachedPrefix] | None:
        static, dynamic = self._share(requests)
        states: dict[int, CachedPrefix] = {}
        for group, batch in ((static, self.static), (dynamic, self.dynamic)):
            if group:
                prompts = batch.admit(group, keep_prompts=keep_prompts)
                states.update(zip(map(id, group), prompts or [], strict=False))
        return [states[id(r)] for r in requests] if keep_prompts else None

    def step(self) -> list[tuple[DecodeRequest, DecodeResult]]:
        done = self.static.step() if self.static else []
        return done + (self.dynamic.step() if self.dynamic else [])

    def take_replies(self) -> list[tuple[list[int], CachedPrefix]]:
        return self.static.take_replies()

    def advance(
        self, newcomers: list[DecodeRequest], *, keep_prompts: bool = False
    ) -> tuple[list[tuple[DecodeRequest, DecodeResult]], list[CachedPrefix] | None]:
        """Each batch admits its share of ``newcomers`` (see :meth:`admit`) and steps."""
        static, dynamic = self._share(newcomers)
        done: list[tuple[DecodeRequest, DecodeResult]] = []
        states: dict[int, CachedPrefix] = {}
        for group, batch in ((static, self.static), (dynamic, self.dynamic)):
            finished, prompts = batch.advance(group, keep_prompts=keep_prompts)
            done += finished
            states.update(zip(map(id, group), prompts or [], strict=False))
        return done, [states[id(r)] for r in newcomers] if keep_prompts else None

    def _share(
        self, requests: list[DecodeRequest]
    ) -> tuple[list[DecodeRequest], list[DecodeRequest]]:
        """The requests for the slots (those that fit, while slots are free), and the rest."""
        room = self.static.slots - len(self.static)
        static = [r for r in requests if self.static.fits(r)][:room]
        chosen = {id(r) for r in static}
        return static, [r for r in requests if id(r) not in chosen]

    def discard(self, requests: list[DecodeRequest]) -> None:
        self.static.discard(requests)
        self.dynamic.discard(requests)
