"""In-process transformers agents (``hf:PATH``, ``smollm2``): one model, many episodes, batched.

The evaluator runs many episodes at once and each calls its agent's ``act`` whenever its env
step is done. A :class:`~agentgym.agents.chat.TokenAgent` (one per episode, holding that
episode's chat) sends its prompt to an :class:`HFBackend` shared by every agent of the run.
The backend queues the requests and a worker decodes them with **continuous batching**:
one batch over one KV cache of slots allocated once
(:class:`~agentgym.backends.hf_static.StaticBatch`; ``static_cache=False``: transformers'
dynamic cache, :class:`~agentgym.backends.hf_decode.RunningBatch`), one forward pass per
token for all its rows, which requests join and leave between tokens.
Before each token the worker admits every pending request (up to ``max_batch`` rows; when
the batch is idle it first waits ``batch_window`` seconds for stragglers; when decoding
eagerly, the CPU's default, their prompts are computed in the same forward pass as the
running rows' next tokens) and each finished row resolves its request at once, so a request
that arrives while others decode starts at the next token instead of waiting for the whole
batch to finish (what ``continuous=False``, the older window batching, does). The model runs
in a thread of its own, so the event loop stays free for env steps. A forward pass reads the
weights once whatever the batch size, so a step of 16 rows costs far less than 16 steps of
one (on a 2-core CPU about 3x one row's: there the matrix products of 16 rows are already
bound by arithmetic; ``tests/perf/bench_hf.py`` measures batching, and requests arriving at
different times with ``--only staggered``). This is written on transformers' cache classes,
not its ``generate_batch``: that samples every row from one generator, so a request's
samples would depend on its batch-mates.

Each reply goes back as an :class:`~agentgym.agents.AgentReply` with the exact prompt and
completion token ids and the logprob of each sampled token (a
:class:`~agentgym.ledger.TokenRecord`) and the token counts. Sampling comes from
``EpisodeContext.sampling`` (``temperature`` (0: greedy), ``top_p``, ``top_k``,
``max_tokens``); each request has its own random generator seeded from the episode seed and
the turn (:func:`~agentgym.backends.sampling.turn_seed`), so an episode's samples do not depend
on which episodes shared its batch.

A model failure raises (:class:`~agentgym.errors.ModelError`), so the engine records the
episode as errored; an empty action is never returned in its place.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import dataclasses
import importlib.util
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentgym.backends.base import TokenBackend
from agentgym.backends.sampling import SamplingParams
from agentgym.errors import ContextLengthError, MissingExtraError, ModelError, UsageError

if TYPE_CHECKING:
    from agentgym.backends.hf_decode import (
        CachedPrefix,
        DecodeRequest,
        DecodeResult,
        DecodeTiming,
        RunningBatch,
    )
    from agentgym.backends.hf_static import SplitBatch

__all__ = ["BackendStats", "HFBackend", "checkpoint_policy", "eos_ids", "require_hf"]


def require_hf() -> None:
    """Raise :class:`MissingExtraError` naming the ``hf`` extra unless torch and transformers
    are importable (checked without importing them: that takes seconds)."""
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtraError(
            f"the hf agents need {' and '.join(missing)}: pip install 'agentgym[hf]' "
            f"(on a CPU machine add -c constraints.txt for the CPU build of torch)"
        )


@dataclass
class BackendStats:
    """What the backend has done: how well concurrent requests were batched."""

    requests: int = 0
    batches: int = 0  # admissions: groups of requests prefilled together
    joined: int = 0  # requests admitted while other rows were decoding
    forward_passes: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    busy_seconds: float = 0.0
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    reused_tokens: int = 0  # prompt tokens whose keys/values came from the prefix store
    batch_sizes: list[int] = field(default_factory=list)


@dataclass
class _Pending:
    request: DecodeRequest
    future: asyncio.Future[DecodeResult]


@dataclass
class _Load:
    """A weight update, queued between requests: it waits until the running batch is done."""

    path: Path
    future: asyncio.Future[None]


DTYPES = ("float32", "bfloat16", "float16")  # what HFBackend.load takes as dtype


class HFBackend(TokenBackend):
    """A causal LM and its tokenizer, shared by all agents of a run; batches their requests.

    Args:
        model: a transformers causal LM (already on its device, in eval mode).
        tokenizer: its tokenizer, with a chat template.
        max_batch: the most requests decoded together.
        batch_window: seconds the worker waits after the first request of an idle batch for
            more to arrive (episodes finishing their env steps a few ms apart then share a
            prefill).
        continuous: admit requests into the running batch between tokens (True), or only
            once the batch has finished (False: window batching, kept as the benchmark's
            baseline).
        static_cache: decode over a KV cache of slots allocated once
            (:class:`~agentgym.backends.hf_static.StaticBatch`: no copy of the whole cache
            per token or per admission); False: transformers' dynamic cache (the path of
            window batching before issue 34, the CPU benchmark's baseline). Requests that do
            not fit it decode in a dynamic batch beside it.
        compile: with the static cache, capture the decode step (``torch.compile``, mode
            ``reduce-overhead``: CUDA graphs), one graph per bucket of batch sizes; a failed
            or mismatching compile logs a warning and decodes eagerly. None (the default):
            on CUDA only (on a CPU the eager step over the columns in use is the fast one).
        static_cache_tokens: the static cache's length per slot (prompt plus reply).
        join_in_step: eagerly over the static cache, newcomers join the running batch inside
            its next decode step (one forward pass for both); False: a pass of their own
            (the benchmark's comparison).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_batch: int = 16,
        batch_window: float = 0.01,
        prefix_cache_mb: float = 512.0,
        continuous: bool = True,
        static_cache: bool = True,
        compile: bool | None = None,
        static_cache_tokens: int = 2048,
        join_in_step: bool = True,
    ) -> None:
        if not isinstance(max_batch, int) or max_batch < 1:
            raise UsageError(f"max_batch must be a positive int, got {max_batch!r}")
        from agentgym.backends.hf_head import block_output_head

        self.prefixes = PrefixStore(int(prefix_cache_mb * 2**20))
        self.model = model
        block_output_head(model)  # small CPU batches' logits in blocks: the same, faster
        self.tokenizer = tokenizer
        self.max_batch = max_batch
        self.batch_window = batch_window
        self.continuous = continuous
        if compile is None:
            compile = model.device.type == "cuda"
        self.static_cache, self.compile = static_cache, compile
        self.join_in_step = join_in_step
        self.stats = BackendStats()
        self.eos_ids = eos_ids(model, tokenizer)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else min(self.eos_ids))
        self.max_length = int(getattr(model.config, "max_position_embeddings", 0) or 0) or None
        self.static_cache_tokens = min(static_cache_tokens, self.max_length or static_cache_tokens)
        # One thread runs the model: batches are decoded one after the other, never two at once.
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hf-decode")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Pending | _Load] | None = None
        self._held: collections.deque[_Pending | _Load] = collections.deque()
        self._worker: asyncio.Task[None] | None = None
        self._batch: RunningBatch | SplitBatch | None = None

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        device: str | None = None,
        dtype: str | None = None,
        **kwargs: Any,
    ) -> HFBackend:
        """Load a local model directory (config, weights, tokenizer) onto ``device``.

        The default device is CUDA when available, else the CPU. ``dtype`` (``float32``,
        ``bfloat16``, ``float16``) defaults to bfloat16 on CUDA and float32 on the CPU:
        CPUs without bfloat16 instructions run it far slower, but one with them (AMX,
        AVX512-BF16) decodes SmolLM2 ~1.5x and prefills ~2.3x faster in bfloat16
        (``docs/performance.md``), so it is worth asking for there.
        """
        require_hf()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        # it would tear through our progress line (transformers leaves it unannotated)
        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = dtype or ("bfloat16" if device.startswith("cuda") else "float32")
        if dtype not in DTYPES:
            raise UsageError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path))
            model = AutoModelForCausalLM.from_pretrained(str(path), dtype=getattr(torch, dtype))
        except (OSError, ValueError) as error:
            raise UsageError(f"cannot load a causal LM from {str(path)!r}: {error}") from error
        # transformers types .to's wrapper as taking a model, not a device
        model.to(device).eval()  # type: ignore[arg-type]
        return cls(model, tokenizer, **kwargs)

    async def generate(
        self, prompt_ids: list[int], params: SamplingParams, seed: int
    ) -> DecodeResult:
        """Continue ``prompt_ids``; batched with whatever other requests are pending."""
        from agentgym.backends.hf_decode import DecodeRequest

        if not prompt_ids:
            raise UsageError("an empty prompt cannot be continued")
        if self.max_length is not None and len(prompt_ids) + params.max_tokens > self.max_length:
            raise ContextLengthError(
                f"the prompt has {len(prompt_ids)} tokens and max_tokens is {params.max_tokens}: "
                f"over the model's context of {self.max_length} (set a history window)"
            )
        queue = self._ensure_worker()
        future: asyncio.Future[DecodeResult] = asyncio.get_running_loop().create_future()
        await queue.put(_Pending(DecodeRequest(list(prompt_ids), params, seed), future))
        return await future

    async def load_weights(self, path: str | os.PathLike[str]) -> None:
        """Replace the model's weights with those of a ``save_pretrained`` directory (a
        trainer's updated policy). It is queued like a request: the requests sent before it
        finish with the old weights (none is admitted meanwhile), those sent after it start
        with the new ones, so no reply mixes two policies; the prefix store, computed with
        the old weights, is emptied. A directory that does not hold weights of this very
        architecture raises :class:`UsageError` and the old weights stay."""
        queue = self._ensure_worker()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await queue.put(_Load(Path(path), future))
        await future

    def _load_weights(self, path: Path) -> None:
        from transformers import AutoModelForCausalLM

        if not (path / "config.json").is_file():
            raise UsageError(f"{str(path)!r} is not a saved model directory (no config.json)")
        dtype = next(self.model.parameters()).dtype
        try:
            source = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype)
            self.model.load_state_dict(source.state_dict())
        except (OSError, ValueError, RuntimeError) as error:
            raise UsageError(f"cannot load the weights of {str(path)!r}: {error}") from error
        self.prefixes.clear()

    def _ensure_worker(self) -> asyncio.Queue[_Pending | _Load]:
        # The queue and worker belong to the running loop; a new loop (a second asyncio.run,
        # e.g. a second evaluate() with the same factory) gets its own.
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._worker is None or self._worker.done():
            self._loop = loop
            self._queue = asyncio.Queue()
            self._held.clear()
            self._worker = loop.create_task(self._work(self._queue), name="hf-batcher")
        assert self._queue is not None
        return self._queue

    async def _work(self, queue: asyncio.Queue[_Pending | _Load]) -> None:
        """The scheduler (:meth:`_schedule`); should it fail, every caller waiting on it hears
        of it, none waits forever (a later request starts a new worker)."""
        running: dict[int, _Pending] = {}
        try:
            await self._schedule(queue, running)
        except Exception as error:
            failure = ModelError(f"the decode scheduler failed: {type(error).__name__}: {error}")
            failure.__cause__ = error
            waiting = [*running.values(), *self._held]
            while not queue.empty():
                waiting.append(queue.get_nowait())
            self._held.clear()
            self._batch = None
            for pending in waiting:
                if not pending.future.done():
                    pending.future.set_exception(failure)
            raise

    async def _schedule(
        self, queue: asyncio.Queue[_Pending | _Load], running: dict[int, _Pending]
    ) -> None:
        """Between two tokens, admit what waits and resolve what finished; ``running`` holds
        the batch's rows by ``id()`` of their request."""
        loop = asyncio.get_running_loop()
        if self._batch is None:
            self._batch = self._new_batch()
        batch = self._batch  # kept across event loops: its compiled graphs with it
        if batch:  # rows of an earlier event loop's requests, which nobody awaits any more
            batch.discard([row.request for row in batch.rows])
            batch.take_replies()  # not stored: the weights may have changed since
        while True:
            if not batch and not self._held:
                self._held.append(await queue.get())
                if self.batch_window > 0 and queue.qsize() + 1 < self.max_batch:
                    await asyncio.sleep(self.batch_window)
            while not queue.empty():
                self._held.append(queue.get_nowait())
            head = self._held[0] if self._held else None
            if not batch and isinstance(head, _Load):
                self._held.popleft()
                await self._swap_weights(head)
                continue
            newcomers = self._admissible(len(batch))
            running.update((id(p.request), p) for p in newcomers)
            gone = [p.request for p in running.values() if p.future.done()]  # timed out
            for request in gone:
                running.pop(id(request))
            if not batch and not newcomers:
                continue
            started = time.monotonic()
            try:
                done = await loop.run_in_executor(
                    self._executor, self._advance, batch, [p.request for p in newcomers], gone
                )
            except Exception as error:  # every waiter hears of it: none waits forever
                failure = ModelError(f"generation failed: {type(error).__name__}: {error}")
                failure.__cause__ = error
                for pending in running.values():
                    if not pending.future.done():
                        pending.future.set_exception(failure)
                running.clear()
                batch = self._batch = self._new_batch()
                continue
            self.stats.busy_seconds += time.monotonic() - started
            for request, result in done:
                self.stats.completion_tokens += len(result.completion_ids)
                pending = running.pop(id(request))
                if not pending.future.done():
                    pending.future.set_result(result)

    def _new_batch(self) -> RunningBatch | SplitBatch:
        """An empty batch: dynamic, or (``static_cache``) static slots with a dynamic one
        beside them for what does not fit. The compiled graphs live with the batch, which
        the backend keeps across event loops (a failure starts a new one)."""
        from agentgym.backends.hf_decode import RunningBatch
        from agentgym.backends.hf_static import SplitBatch, StaticBatch

        dynamic = RunningBatch(self.model, eos_ids=self.eos_ids, pad_id=self.pad_id)
        if not self.static_cache:
            return dynamic
        static = StaticBatch(
            self.model,
            eos_ids=self.eos_ids,
            pad_id=self.pad_id,
            slots=self.max_batch,
            length=self.static_cache_tokens,
            compile=self.compile,
            join_in_step=self.join_in_step,
            keep_replies=self.prefixes.enabled,
        )
        return SplitBatch(static, dynamic)

    def _admissible(self, rows: int) -> list[_Pending]:
        """The held requests that join the batch now (its ``rows`` running ones): up to
        ``max_batch`` rows, none past a queued weight update, none into a running batch
        when batching by window; requests whose callers stopped waiting are dropped."""
        taken: list[_Pending] = []
        if rows and not self.continuous:
            return taken
        while self._held and rows + len(taken) < self.max_batch:
            head = self._held[0]
            if isinstance(head, _Load):
                break
            self._held.popleft()
            if not head.future.done():
                taken.append(head)
        return taken

    async def _swap_weights(self, load: _Load) -> None:
        """Run a queued weight update (the batch is empty); its caller hears how it went."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._load_weights, load.path)
        except Exception as error:  # the caller's own error, UsageError included
            if not load.future.done():
                load.future.set_exception(error)
            return
        if not load.future.done():
            load.future.set_result(None)

    def _advance(
        self,
        batch: RunningBatch | SplitBatch,
        newcomers: list[DecodeRequest],
        gone: list[DecodeRequest],
    ) -> list[tuple[DecodeRequest, DecodeResult]]:
        """Drop ``gone``, admit ``newcomers`` (storing their prompts' keys and values),
        decode one token; the finished rows. Runs on the one decode thread, the only one
        touching the model and the prefix store."""
        before = dataclasses.replace(batch.timing)
        if gone:
            batch.discard(gone)
        if newcomers:
            self.stats.joined += len(newcomers) if batch else 0
            self._prepare(newcomers)
        done, prompts = batch.advance(newcomers, keep_prompts=self.prefixes.enabled)
        for request, states in zip(newcomers, prompts or [], strict=False):
            self.prefixes.add(request.prompt_ids, states)
        for tokens, states in batch.take_replies():
            self.prefixes.add(tokens, states)
        self._count(before, batch.timing)
        return done

    def _prepare(self, requests: list[DecodeRequest]) -> None:
        """Give ``requests`` their stored prompt prefixes (computing first those they share
        with each other), and count them."""
        keep = self.prefixes.enabled
        if keep and len(requests) > 1:
            self._prefill_shared([r.prompt_ids for r in requests])
        for request in requests:
            request.prefix = self.prefixes.lookup(request.prompt_ids) if keep else None
        stats = self.stats
        stats.requests += len(requests)
        stats.batches += 1
        stats.batch_sizes.append(len(requests))
        stats.prompt_tokens += sum(len(r.prompt_ids) for r in requests)

    def _prefill_shared(self, prompts: list[list[int]]) -> None:
        """Compute once, and store, the prefixes that prompts of this batch share with each
        other and the store does not hold yet (episodes of one task family starting at once
        share their instructions): the batch then reuses them like any stored prefix."""
        from agentgym.backends.hf_decode import prefill

        arrays = [np.asarray(p) for p in prompts]
        shared: set[tuple[int, ...]] = set()
        for i, prompt in enumerate(arrays):
            best = max(common_prefix(prompt, other) for j, other in enumerate(arrays) if j != i)
            best = min(best, len(prompt) - 1)
            stored = self.prefixes.lookup(prompts[i])
            if best >= (stored.length if stored else 0) + self.prefixes.min_tokens:
                shared.add(tuple(prompts[i][:best]))
        if shared:
            heads = sorted(shared)
            states = prefill(self.model, [list(h) for h in heads], pad_id=self.pad_id)
            for head, state in zip(heads, states, strict=True):
                self.prefixes.add(list(head), state)

    def _count(self, before: DecodeTiming, after: DecodeTiming) -> None:
        """Add what the batch did since ``before`` to the backend's stats."""
        stats = self.stats
        stats.forward_passes += after.forward_passes - before.forward_passes
        stats.prefill_seconds += after.prefill_seconds - before.prefill_seconds
        stats.decode_seconds += after.decode_seconds - before.decode_seconds
        stats.reused_tokens += after.reused_tokens - before.reused_tokens


class PrefixStore:
    """Recent prompts' keys and values, to reuse their longest shared prefix (LRU, bounded).

    Every prompt the backend prefills is kept, and over the slot cache every retired row's
    prompt and reply (but the reply's last token, never fed), which replaces the entry of its
    prompt alone; a new prompt reuses the longest common prefix it has with any kept one, if
    that is at least ``min_tokens`` long (shorter is not worth the copy). Multi-turn agents
    repeat themselves: with the history kept, turn ``t + 1`` starts with all of turn ``t``'s
    prompt and reply; with a window, at least the system message and the task instructions.
    Entries are evicted oldest-used first beyond ``max_bytes``.
    """

    def __init__(self, max_bytes: int, min_tokens: int = 16) -> None:
        self.max_bytes, self.min_tokens = max_bytes, min_tokens
        self._entries: OrderedDict[tuple[int, ...], tuple[np.ndarray, CachedPrefix]] = OrderedDict()
        self._bytes = 0

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def lookup(self, prompt: list[int]) -> CachedPrefix | None:
        """The cached keys/values of ``prompt``'s longest known prefix (leaving one token)."""
        tokens = np.asarray(prompt)
        best, best_key = 0, None
        for key, (ids, _) in self._entries.items():
            if min(len(ids), len(tokens) - 1) <= best:
                continue
            shared = min(common_prefix(ids, tokens), len(tokens) - 1)
            if shared > best:
                best, best_key = shared, key
        if best_key is None or best < self.min_tokens:
            return None
        self._entries.move_to_end(best_key)
        return self._entries[best_key][1].head(best)

    def add(self, prompt: list[int], states: CachedPrefix) -> None:
        """Keep ``prompt``'s keys and values, evicting the least recently used beyond the cap."""
        key = tuple(prompt)
        if key in self._entries or states.nbytes > self.max_bytes:
            return
        for shorter in [k for k in self._entries if len(k) < len(key) and key[: len(k)] == k]:
            self._bytes -= self._entries.pop(shorter)[1].nbytes  # the new entry holds it all
        self._entries[key] = (np.asarray(prompt), states)
        self._bytes += states.nbytes
        while self._bytes > self.max_bytes:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._bytes -= evicted.nbytes

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()
        self._bytes = 0


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    same = a[:n] == b[:n]
    return n if same.all() else int(np.argmin(same))


def eos_ids(model: Any, tokenizer: Any) -> set[int]:
    """The token ids that end a reply: the model's generation config's and the tokenizer's."""
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    if not ids:
        raise UsageError("the model and its tokenizer name no end-of-sequence token")
    return ids


def checkpoint_policy(directory: Path) -> Path:
    """The model directory to load for ``directory``: itself, or when it is a trainer's run
    directory its latest checkpoint's policy, or when it is a checkpoint its policy."""
    latest = directory / "checkpoints" / "latest"
    if latest.is_file():
        directory = directory / "checkpoints" / latest.read_text().strip()
    if (directory / "policy" / "config.json").is_file():
        return directory / "policy"
    return directory
