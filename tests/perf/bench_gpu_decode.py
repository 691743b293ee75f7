"""Benchmark for issue 34: the ``hf`` backend's compiled decoding and continuous batching
against its eager window-batching path and one-at-a-time ``generate``, in one process (ratios
measured in the same run).

Not a test: the device check (``tests/perf/gpu_check.py``) runs it on a GPU machine with
SmolLM2-135M's shape and random weights; ``--quick`` runs it small on a CPU (a dry run of the
code, the static cache run eagerly: the CPU figures mean nothing for the GPU). The prompts
are ``bench_hf.py``'s (the quickstart games' first turns, 146-248 tokens); every variant
decodes greedily with the same ``max_tokens``, so tokens/s ratios are time ratios. Steps,
each printed under its own name:

1. ``today``: the backend's eager path (dynamic cache, window batching: ``static_cache=False,
   continuous=False``), one request at a time on the first ``--single`` prompts, then all
   ``--requests`` sent together.
2. ``eager``: one-at-a-time ``model.generate`` (dynamic cache, eager PyTorch) on the first
   ``--reference`` prompts: the reference tokens and the baseline of the 64-request goal.
3. ``backend``: the backend as it now is on CUDA (static slot cache, decode step compiled
   per bucket of rows, continuous batching): the compile and capture of every bucket timed
   apart, then one request at a time on the reference prompts (goal: >= 5x ``today``), then
   all ``--requests`` together (goal: >= 10x ``eager``); its greedy tokens compared with
   ``eager``'s (bf16 may flip near-ties) and whether the compiled step stayed on.
4. ``staggered``: ``bench_hf.py``'s staggered arrivals (``--requests`` episodes, heavy-tailed
   env steps and reply lengths) through window batching and continuous batching, both on the
   compiled backend, so only the scheduling differs (goal: >= 1.5x).
5. with ``--transformers``: transformers' own paths measured on 2026-11-27
   (``generate_batch``'s continuous batching, ``generate`` with a compiled ``StaticCache``).
6. ``vllm``: whether vLLM imports (else why not).

    python tests/perf/bench_gpu_decode.py --model DIR [--requests 64] [--max-tokens 64]
        [--single 4] [--reference 8] [--transformers] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_hf import alone, first_turns, schedule, staggered_run, together


def synced(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(device: torch.device, work: Callable[[], Any]) -> tuple[Any, float]:
    """``work()``'s result and its wall seconds, the device drained before and after."""
    synced(device)
    started = time.perf_counter()
    result = work()
    synced(device)
    return result, time.perf_counter() - started


def rate(tokens: int, seconds: float) -> str:
    return f"{tokens} tokens in {seconds:.2f} s = {tokens / seconds:.1f} tokens/s"


def step(name: str, body: Callable[[], Any]) -> Any:
    """Run one named step; a failure is printed (its last lines) and the next step runs."""
    print(f"\n### {name}", flush=True)
    try:
        return body()
    except Exception as error:  # the report must say what failed and go on
        lines = traceback.format_exc().strip().splitlines()
        print("\n".join(lines[-12:]))
        print(f"[{name} FAILED: {type(error).__name__}: {str(error)[:300]}]", flush=True)
        return None


def eos_ids(model: Any) -> set[int]:
    eos = model.generation_config.eos_token_id
    return set(eos if isinstance(eos, list) else [] if eos is None else [eos])


def strip_eos(tokens: list[int], eos: set[int]) -> list[int]:
    return tokens[:-1] if tokens and tokens[-1] in eos else tokens


def compare(reference: list[list[int]], other: list[list[int]], eos: set[int]) -> str:
    """How many outputs differ from the reference, and where the first difference is."""
    differ, first = 0, []
    for ref, out in zip(reference, other, strict=True):
        ref, out = strip_eos(ref, eos), strip_eos(out, eos)
        if ref != out:
            differ += 1
            first.append(
                next((i for i, (a, b) in enumerate(zip(ref, out, strict=False)) if a != b), None)
            )
    where = f" (first differing token at {sorted(first)[:8]})" if differ else ""
    return f"{differ} of {len(reference)} differ from one-at-a-time eager generate{where}"


def generate_one(model: Any, prompt: list[int], max_tokens: int, cache: Any = None) -> list[int]:
    """Greedy ``model.generate`` for one prompt (``cache``: a static cache to reuse)."""
    ids = torch.tensor([prompt], device=model.device)
    extra = {} if cache is None else {"past_key_values": cache}
    if cache is not None:
        cache.reset()
    out = model.generate(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=max_tokens,
        do_sample=False,
        **extra,
    )
    return [int(t) for t in out[0, len(prompt) :]]


def today(backend: Any, prompts: list[list[int]], single: int, max_tokens: int) -> float:
    """The backend's eager path one at a time and together; its one-at-a-time tokens/s."""
    from agentgym.backends.sampling import SamplingParams

    params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    device = backend.model.device
    asyncio.run(together(backend, prompts[:2], SamplingParams(temperature=0.0, max_tokens=2)))
    backend.prefixes.clear()
    outs, seconds = timed(device, lambda: asyncio.run(alone(backend, prompts[:single], params)))
    one = sum(map(len, outs)) / seconds
    print(f"hf backend, one at a time ({single} prompts): {rate(sum(map(len, outs)), seconds)}")
    backend.prefixes.clear()
    outs, seconds = timed(device, lambda: asyncio.run(together(backend, prompts, params)))
    print(f"hf backend, {len(prompts)} requests together: {rate(sum(map(len, outs)), seconds)}")
    print(f"  = {sum(map(len, outs)) / seconds / one:.2f}x its one-at-a-time rate")
    return one


def eager(model: Any, prompts: list[list[int]], max_tokens: int) -> tuple[list[list[int]], float]:
    """One-at-a-time eager ``generate`` on every prompt: the reference tokens and tokens/s."""
    generate_one(model, prompts[0], 2)  # warm-up: kernels and handles
    outs, seconds = timed(
        model.device, lambda: [generate_one(model, p, max_tokens) for p in prompts]
    )
    tokens = sum(map(len, outs))
    print(f"eager generate, one at a time ({len(prompts)} prompts): {rate(tokens, seconds)}")
    print(f"  {seconds / tokens * 1000:.1f} ms per token")
    return outs, tokens / seconds


def compiled(
    model: Any, prompts: list[list[int]], max_tokens: int
) -> tuple[list[list[int]], float]:
    """One-at-a-time ``generate`` with one fixed-length ``StaticCache`` (compiled decode on
    CUDA); the first call (the compile and graph capture) is timed apart."""
    from transformers import StaticCache

    length = -(-(max(map(len, prompts)) + max_tokens) // 64) * 64
    cache = StaticCache(config=model.config, max_cache_len=length)
    _, seconds = timed(model.device, lambda: generate_one(model, prompts[0], max_tokens, cache))
    print(f"static cache of {length} tokens; first call (compile + capture): {seconds:.1f} s")
    generate_one(model, prompts[1 % len(prompts)], max_tokens, cache)  # another length
    outs, seconds = timed(
        model.device, lambda: [generate_one(model, p, max_tokens, cache) for p in prompts]
    )
    tokens = sum(map(len, outs))
    print(f"compiled generate, one at a time ({len(prompts)} prompts): {rate(tokens, seconds)}")
    print(f"  {seconds / tokens * 1000:.2f} ms per token")
    return outs, tokens / seconds


def backend_now(
    backend: Any, prompts: list[list[int]], reference: list[list[int]] | None, max_tokens: int
) -> tuple[float, float]:
    """The backend's CUDA path: the compile per bucket, one request at a time, all together;
    its one-at-a-time and all-together tokens/s."""
    from agentgym.backends.sampling import SamplingParams

    params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    device = backend.model.device
    sizes = sorted({min(n, len(prompts)) for n in (1, 4, 16, 64)})
    for size in sizes:  # every bucket's graph, captured before anything is timed
        _, seconds = timed(
            device,
            lambda size=size: asyncio.run(
                together(backend, prompts[:size], SamplingParams(temperature=0.0, max_tokens=4))
            ),
        )
        print(f"{size} rows: first steps (compile + capture of the bucket) {seconds:.1f} s")
    count = len(reference) if reference else 4
    backend.prefixes.clear()
    outs, seconds = timed(device, lambda: asyncio.run(alone(backend, prompts[:count], params)))
    one = sum(map(len, outs)) / seconds
    print(f"backend, one at a time ({count} prompts): {rate(sum(map(len, outs)), seconds)}")
    print(f"  {seconds / sum(map(len, outs)) * 1000:.2f} ms per token")
    if reference:
        print(f"backend tokens, one at a time: {compare(reference, outs, backend.eos_ids)}")
    backend.prefixes.clear()
    outs, seconds = timed(device, lambda: asyncio.run(together(backend, prompts, params)))
    many = sum(map(len, outs)) / seconds
    print(f"backend, {len(prompts)} requests together: {rate(sum(map(len, outs)), seconds)}")
    if reference:
        print(
            f"backend tokens, {len(prompts)} together: "
            f"{compare(reference, outs[: len(reference)], backend.eos_ids)}"
        )
    static = getattr(backend._batch, "static", None)
    if static is None:
        print("static cache: off (the dynamic path decoded)")
    else:
        state = (
            "on"
            if static.compiled
            else "off (see the warning above)"
            if backend.compile
            else "not asked"
        )
        print(
            f"static cache {static.slots} slots x {static.length} tokens; compiled step {state}; "
            f"buckets checked against eager: {sorted(static._checked)}"
        )
    return one, many


def staggered_pair(backend: Any, prompts: list[list[int]], args: Any) -> float:
    """Window vs continuous batching on one staggered schedule, through the same backend
    (its compiled graphs shared), alternated over two rounds; the ratio of tokens/s."""
    plan = schedule(len(prompts), 3, args.step_seconds, args.max_tokens)
    totals = {"window": [0, 0.0], "continuous": [0, 0.0]}
    for order in (("window", "continuous"), ("continuous", "window")):
        for name in order:
            backend.continuous = name == "continuous"
            joined = backend.stats.joined
            outputs, seconds = asyncio.run(staggered_run(backend, prompts, plan))
            tokens = sum(len(c) for replies in outputs for c in replies)
            totals[name][0] += tokens
            totals[name][1] += seconds
            print(
                f"{name:<10}: {rate(tokens, seconds)} "
                f"({backend.stats.joined - joined} joined a running batch)"
            )
    backend.continuous = True
    rates = {name: tokens / seconds for name, (tokens, seconds) in totals.items()}
    ratio = rates["continuous"] / rates["window"]
    print(f"staggered arrivals, continuous vs window batching: {ratio:.2f}x (goal >= 1.5x)")
    return ratio


def teacher_logprobs(model: Any, prompt: list[int], completion: list[int]) -> list[float]:
    """Each completion token's logprob under one forward pass over prompt + completion."""
    ids = torch.tensor([prompt + completion], device=model.device)
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float()
    picked = torch.log_softmax(logits, dim=-1).gather(1, ids[0, len(prompt) :, None])
    return [float(x) for x in picked[:, 0]]


def continuous(model: Any, prompts: list[list[int]], max_tokens: int) -> tuple[list[Any], float]:
    """``generate_batch`` on every prompt at once, cold then warm; outputs in prompt order."""
    from transformers import GenerationConfig
    from transformers.generation import ContinuousBatchingConfig

    config = GenerationConfig(
        max_new_tokens=max_tokens,
        do_sample=False,
        eos_token_id=model.generation_config.eos_token_id,
        pad_token_id=model.generation_config.pad_token_id,
    )
    outputs: dict[str, Any] = {}
    for label in ("cold (warm-up included)", "warm"):
        # The KV cache may take half the free memory (default 80-90%): the compiled step runs after.
        cb = ContinuousBatchingConfig(return_logprobs=True, max_memory_percent=0.5)
        outputs, seconds = timed(
            model.device,
            lambda cb=cb: model.generate_batch(
                inputs=prompts,
                generation_config=config,
                continuous_batching_config=cb,
                persistent_manager=True,
            ),
        )
        tokens = sum(len(o.generated_tokens) for o in outputs.values())
        print(f"generate_batch, {len(prompts)} requests, {label}: {rate(tokens, seconds)}")
    model.destroy_cached_continuous_batching_manager()
    by_prompt = {tuple(o.prompt_ids): o for o in outputs.values()}
    failed = [o.error for o in outputs.values() if o.error]
    if failed:
        print(f"  {len(failed)} requests failed, first: {failed[0]}")
    return [by_prompt[tuple(p)] for p in prompts], tokens / seconds


def check_outputs(
    model: Any, prompts: list[list[int]], reference: list[list[int]], cb: list[Any]
) -> None:
    """Continuous batching's tokens against eager ``generate``, and its logprobs against a
    teacher-forced forward pass (on up to 8 requests)."""
    tokens = [list(o.generated_tokens) for o in cb]
    print(f"continuous batching tokens: {compare(reference, tokens, eos_ids(model))}")
    counted = sum(len(o.logprobs) == len(o.generated_tokens) for o in cb)
    print(f"per-token logprobs returned for {counted} of {len(cb)} requests")
    gaps = []
    for prompt, output in list(zip(prompts, cb, strict=True))[:8]:
        if output.logprobs and len(output.logprobs) == len(output.generated_tokens):
            expected = teacher_logprobs(model, prompt, list(output.generated_tokens))
            gaps += [abs(a - b) for a, b in zip(output.logprobs, expected, strict=True)]
    if gaps:
        mean = sum(gaps) / len(gaps)
        print(
            f"  logprobs vs a teacher-forced forward: max |diff| {max(gaps):.4f}, mean {mean:.4f}"
        )


def vllm_status() -> str:
    """Whether vLLM is importable here, and if not why (what its release needs)."""
    if importlib.util.find_spec("vllm") is None:
        return (
            "vllm: not installed. vLLM 0.33.0 (PyPI, read 2026-11-27) pins torch==2.13.0 and "
            "transformers<5.20 (this machine has torch " + torch.__version__ + ") and its x86_64 "
            "wheel is 320 MiB plus flashinfer: over the 64 MiB a device call carries, and the "
            "machine has no network, so `vllm:` stays unmeasured"
        )
    import vllm  # type: ignore[import-not-found]  # only where it is installed

    return f"vllm {vllm.__version__} is installed: measure the `vllm:` backend (not in this run)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a local model directory")
    parser.add_argument("--requests", type=int, default=64, help="concurrent requests (64)")
    parser.add_argument("--max-tokens", type=int, default=64, help="new tokens per request (64)")
    parser.add_argument("--single", type=int, default=4, help="prompts for today's path (4)")
    parser.add_argument(
        "--reference", type=int, default=8, help="prompts decoded one at a time by generate (8)"
    )
    parser.add_argument(
        "--step-seconds", type=float, default=0.05, help="staggered: median env step (0.05)"
    )
    parser.add_argument(
        "--transformers", action="store_true", help="also transformers' own paths (slow)"
    )
    parser.add_argument("--quick", action="store_true", help="8 requests, 8 tokens (CPU dry run)")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.max_tokens, args.single, args.reference = 8, 8, 2, 4

    from agentgym.backends.hf import HFBackend

    print(f"\n### vllm\n{vllm_status()}")
    backend = HFBackend.load(args.model, max_batch=args.requests)
    model = backend.model
    # On a CPU (the dry run) the static cache runs eagerly: compiling there is not the point.
    if model.device.type != "cuda":
        backend = HFBackend(
            model, backend.tokenizer, max_batch=args.requests, static_cache=True, compile=False
        )
    eager_path = HFBackend(
        model, backend.tokenizer, max_batch=args.requests, static_cache=False, continuous=False
    )
    prompts = [backend.encode(m) for m in first_turns(args.requests)[0]]
    sizes = f"{min(map(len, prompts))}-{max(map(len, prompts))}"
    print(
        f"{args.model} on {model.device} ({model.dtype}, {model.config._attn_implementation}); "
        f"{len(prompts)} prompts of {sizes} tokens, greedy, max_tokens {args.max_tokens}"
    )
    subset = prompts[: args.reference]
    figures: dict[str, float | None] = {}
    figures["today"] = step(
        "today: the backend's eager path, window batching",
        lambda: today(eager_path, prompts, args.single, args.max_tokens),
    )
    reference, figures["eager"] = step(
        "eager: one-at-a-time generate", lambda: eager(model, subset, args.max_tokens)
    ) or (None, None)
    out = step(
        "backend: static cache, compiled step, continuous batching",
        lambda: backend_now(backend, prompts, reference, args.max_tokens),
    )
    figures["backend, one"], figures["backend, all"] = out or (None, None)
    figures["staggered"] = step(
        "staggered: continuous vs window batching", lambda: staggered_pair(backend, prompts, args)
    )
    if args.transformers:
        theirs(model, args, prompts, subset, reference, figures)
    summary(figures, len(prompts))


def theirs(model, args, prompts, subset, reference, figures) -> None:
    """transformers' own paths (measured on 2026-11-27): generate_batch, compiled generate."""
    from transformers import AutoModelForCausalLM

    fresh = AutoModelForCausalLM.from_pretrained(args.model, dtype=model.dtype)
    fresh = fresh.to(model.device).eval()
    out = step("continuous: generate_batch", lambda: continuous(fresh, prompts, args.max_tokens))
    figures["continuous"] = out[1] if out else None
    if out and reference:
        cb = out[0][: len(reference)]
        step(
            "continuous: outputs and logprobs", lambda: check_outputs(fresh, subset, reference, cb)
        )
    out = step(
        "compiled: static cache + torch.compile", lambda: compiled(model, subset, args.max_tokens)
    )
    figures["compiled"] = out[1] if out else None
    if out and reference:
        print(f"compiled tokens: {compare(reference, out[0], eos_ids(model))}")


def summary(figures: dict[str, float | None], requests: int) -> None:
    """The ratios of this run, against the issue's goals."""
    print("\n### summary (tokens/s, this run; staggered: a ratio)")
    for name, value in figures.items():
        print(f"{name:>13}: {'failed' if value is None else f'{value:.2f}'}")
    pairs = (
        ("backend, one", "today", "one request, the backend now vs its eager path (goal >= 5x)"),
        ("backend, one", "eager", "one request, the backend now vs eager generate"),
        (
            "backend, all",
            "eager",
            f"{requests} requests, the backend now vs one-at-a-time generate (goal >= 10x)",
        ),
        ("continuous", "eager", f"{requests} requests, generate_batch vs one-at-a-time generate"),
        ("compiled", "eager", "one request, compiled generate vs eager generate"),
    )
    for top, bottom, label in pairs:
        if figures.get(top) and figures.get(bottom):
            print(f"{label}: {figures[top] / figures[bottom]:.2f}x")
    if figures.get("staggered"):
        print(
            f"staggered arrivals, continuous vs window (goal >= 1.5x): {figures['staggered']:.2f}x"
        )


if __name__ == "__main__":
    main()
