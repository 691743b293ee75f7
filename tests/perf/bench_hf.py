"""Benchmark: the ``hf`` backend's batched generation with SmolLM2 vs one request at a time.

Not a test (these machines are noisy): it reports a ratio measured in one process. The
prompts are what the quickstart agents see on their first turn (each game's instructions and
first observation, over several tasks). Each round decodes them all twice through the same
backend, greedily, with the same ``max_tokens``: once one request at a time (each awaited
before the next is sent), once all sent together (the backend batches them). Greedy decoding
gives the same tokens both ways (the tests check it), so the tokens/s ratio is a time ratio.
Which variant goes first alternates between rounds, so drift on the machine hits both alike.
The goal is at least 4x with 16 concurrent requests.

Two ratios are reported. End to end: generated tokens per second of wall time, prompts
included. Decode phase: generated tokens per second of time spent after the prefill. On a CPU
the prefill (the prompt's forward pass) is compute-bound, so batching cannot make it cheaper;
each decode step is bound by reading the weights, so a batch of 16 rows costs about as much
as one. With ~250-token prompts and ~20-token replies the prefill dominates the end-to-end
figure. The prefix store is emptied before each variant, so neither reuses the other's work.

Both variants reuse prompt prefixes (the backend's prefix store: one at a time, each prompt
reuses what earlier ones computed; together, prompts that share their instructions compute
them once for the batch). A last measurement switches that off: two turns of the same
episodes, all sent together, with the store on and off.

Last, staggered arrivals (issue 34): ``--episodes`` episodes of ``--turns`` turns each, every
episode sending its next request when its reply is back and its env step is done; env step
times are heavy-tailed (seeded lognormal, median ``--step-seconds``, capped at 10x) and so are
reply lengths (each request's ``max_tokens`` from 1/4 to all of ``--max-tokens``, greedy). The
same schedule runs through four backends, alternated over rounds: ``window``, the window
batching of before issue 34 (``continuous=False, static_cache=False``: a request that arrives
while a batch decodes waits for the whole batch, over transformers' dynamic cache, which
copies the whole cache at every token and admission), ``window-slots`` (window batching over
the slot cache, to tell the cache's gain from the scheduling's), ``joined-apart``
(continuous batching whose newcomers are prefilled in a forward pass of their own,
``join_in_step=False``) and ``continuous``, the default (requests join inside the next
decode step, over the slot cache). The ratio of ``continuous``
to ``window`` tokens/s is the figure (goal >= 1.5x); the outputs are compared (greedy: the
same tokens). In this schedule an episode's turn ``t`` resends episode ``index + t``'s first
prompt, so the prefix store holds nearly all of it; ``--growing`` sends prompts that grow
as a chat's do instead (below). By default all episodes start at once, a short burst whose
start and end are most of the run; ``--episodes 64 --lanes 16`` is an evaluation's steady
state (16 envs at a time, the next episode starting when one ends): issue 34's goal is
measured there, with ``--growing`` (``make perf`` runs it).

Last, prefix reuse across turns under continuous batching (issue 34, item 3; ``--only
reuse``): the same schedule with prompts that grow as a chat's do (the last prompt, its
reply, the end of the turn and a second-turn observation, ~46 tokens), the default backend
with the prefix store on and off.

    python tests/perf/bench_hf.py [--requests 16] [--max-tokens 32] [--rounds 2] [--model DIR]
        [--episodes 16] [--turns 3] [--lanes N] [--step-seconds 0.5] [--only staggered|reuse]
        [--growing]

``--model DIR`` measures another local model directory instead of SmolLM2 (on a GPU machine,
the device check's model: ``tests/perf/gpu_check.py``). Each round also counts the prompts
whose greedy tokens differ between the two variants (on a CPU in float32: none).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import time

import agentgym
from agentgym.agents.models import SMOLLM2_PROMPT
from agentgym.agents.prompting import Conversation
from agentgym.backends.smollm2 import model_dir
from agentgym.eval.plan import load_benchmark

ENVS = ("games/Maze-v0", "games/TowerOfHanoi-v0", "games/Wordle-v0")


def first_turns(count: int) -> tuple[list[list[dict]], list[list[dict]]]:
    """Chat messages of the first and second turns of ``count`` quickstart episodes (cycling
    the games; the second after the oracle's first move, in the smollm2 agent's window)."""
    quickstart = load_benchmark("quickstart")  # its games only: no other family's extra needed
    games = dataclasses.replace(quickstart, envs=tuple(e for e in quickstart.envs if e.id in ENVS))
    plans = games.plan()
    first, second = [], []
    for plan in (plans * count)[:count]:
        env = agentgym.make(plan.env_id)
        observation, info = env.reset(seed=plan.seed, options={"task_id": plan.task_id})
        conversation = Conversation.start(info["instructions"], SMOLLM2_PROMPT)
        conversation.add_observation(observation)
        first.append(conversation.prompt_messages())
        action = env.unwrapped.oracle_action()
        conversation.add_reply(action)
        conversation.add_observation(env.step(action)[0])
        second.append(conversation.prompt_messages())
        env.close()
    return first, second


async def alone(backend, prompts, params) -> list[list[int]]:
    return [(await backend.generate(prompt, params, 0)).completion_ids for prompt in prompts]


async def together(backend, prompts, params) -> list[list[int]]:
    results = await asyncio.gather(*(backend.generate(p, params, 0) for p in prompts))
    return [r.completion_ids for r in results]


def schedule(
    episodes: int, turns: int, step_seconds: float, max_tokens: int, seed: int = 0
) -> list[list[tuple[float, int]]]:
    """Each episode's turns: the env step's seconds before the request, and its max_tokens
    (both heavy-tailed, seeded)."""
    rng = random.Random(seed)
    return [
        [
            (
                min(step_seconds * rng.lognormvariate(0.0, 1.0), 10 * step_seconds),
                max(1, min(max_tokens, int(max_tokens / 4 * rng.paretovariate(1.2)))),
            )
            for _ in range(turns)
        ]
        for _ in range(episodes)
    ]


async def staggered_run(
    backend, prompts, plan, turns=None, lanes=None
) -> tuple[list[list[list[int]]], float]:
    """Play ``plan``: each episode steps its env (a sleep), sends its turn's prompt, waits for
    the reply; every episode's completions and the wall seconds of the whole run. Without
    ``turns`` an episode's turn ``t`` sends the first prompt of episode ``index + t``; with
    ``turns`` (token ids per episode: the end of a reply and the next observation) its
    prompt grows as a chat's does: the last prompt, its reply, then ``turns[index]``. With
    ``lanes``, at most that many episodes run at once, the next starting when one ends (an
    evaluator's ``--num-envs``); else all at once."""
    from agentgym.backends.sampling import SamplingParams

    running = asyncio.Semaphore(lanes or len(plan))

    async def episode(index: int) -> list[list[int]]:
        async with running:
            return await play(index)

    async def play(index: int) -> list[list[int]]:
        replies, prompt = [], prompts[index % len(prompts)]
        for turn, (seconds, tokens) in enumerate(plan[index]):
            await asyncio.sleep(seconds)
            if turns is None:
                prompt = prompts[(index + turn) % len(prompts)]
            elif replies:
                prompt = prompt + replies[-1] + turns[index % len(turns)]
            params = SamplingParams(temperature=0.0, max_tokens=tokens)
            replies.append((await backend.generate(prompt, params, 0)).completion_ids)
        return replies

    started = time.perf_counter()
    outputs = await asyncio.gather(*(episode(i) for i in range(len(plan))))
    return outputs, time.perf_counter() - started


def staggered(backend, prompts, args, turns=None) -> None:
    """Window vs continuous batching on the same staggered schedule, alternated by round
    (``turns``: prompts growing by turn, see :func:`staggered_run`)."""
    from agentgym.backends.hf import HFBackend

    plan = schedule(args.episodes, args.turns, args.step_seconds, args.max_tokens)
    asleep = sum(max(s for s, _ in turn) for turn in zip(*plan, strict=True))
    print(
        f"staggered: {args.episodes} episodes x {args.turns} turns, "
        f"{args.lanes or args.episodes} at once, env steps median "
        f"{args.step_seconds} s (lognormal), max_tokens {args.max_tokens // 4}-{args.max_tokens}"
        f" (Pareto); the slowest env steps alone take {asleep:.1f} s"
    )
    variants = {
        name: HFBackend(
            backend.model,
            backend.tokenizer,
            max_batch=args.lanes or args.episodes,
            continuous=continuous,
            static_cache=slots,
            join_in_step=joined,
        )
        for name, continuous, slots, joined in (
            ("window", False, False, True),
            ("window-slots", False, True, True),
            ("joined-apart", True, True, False),
            ("continuous", True, True, True),
        )
    }
    totals = {name: [0, 0.0] for name in variants}
    outputs = {}
    for round_ in range(args.rounds):
        names = list(variants) if round_ % 2 == 0 else list(reversed(variants))
        for name in names:
            run = staggered_run(variants[name], prompts, plan, turns, args.lanes)
            outputs[name], seconds = asyncio.run(run)
            tokens = sum(len(c) for replies in outputs[name] for c in replies)
            totals[name][0] += tokens
            totals[name][1] += seconds
            stats = variants[name].stats
            print(
                f"round {round_ + 1} {name:<12} {tokens:5d} tokens in {seconds:6.2f} s: "
                f"{tokens / seconds:6.1f} tokens/s ({stats.joined} joined a running batch; "
                f"model busy {stats.busy_seconds:.1f} s)"
            )
            stats.joined, stats.busy_seconds = 0, 0.0
        differ = sum(
            a != b
            for other in ("window-slots", "joined-apart", "continuous")
            for x, y in zip(outputs["window"], outputs[other], strict=True)
            for a, b in zip(x, y, strict=True)
        )
        replies = 3 * args.episodes * args.turns
        print(f"round {round_ + 1}: {differ} of {replies} replies differ from window's")
    rate = {name: tokens / seconds for name, (tokens, seconds) in totals.items()}
    print(
        f"staggered arrivals, continuous vs window batching: {rate['continuous']:.1f} vs "
        f"{rate['window']:.1f} tokens/s = {rate['continuous'] / rate['window']:.2f}x "
        f"(goal >= 1.5x); window over the slot cache {rate['window-slots']:.1f} tokens/s "
        f"(continuous {rate['continuous'] / rate['window-slots']:.2f}x it); newcomers "
        f"admitted in passes of their own {rate['joined-apart']:.1f} tokens/s (joining "
        f"inside the decode step {rate['continuous'] / rate['joined-apart']:.2f}x it)"
    )


def growing_turns(backend, turn_two) -> list[list[int]]:
    """What a chat adds after a reply: the end of the assistant's turn and the second turn's
    observation (the user message of the quickstart episodes' second turn), as token ids."""
    template = backend.tokenizer
    return [
        template.encode(
            f"<|im_end|>\n<|im_start|>user\n{messages[-1]['content']}<|im_end|>\n"
            "<|im_start|>assistant\n",
            add_special_tokens=False,
        )
        for messages in turn_two
    ]


def reuse_across_turns(backend, prompts, turns, args) -> None:
    """Prefix reuse across turns under continuous batching (issue 34, item 3): prompts that
    grow by each reply and observation, the prefix store on and off, alternated by round."""
    from agentgym.backends.hf import HFBackend

    plan = schedule(args.episodes, args.turns, args.step_seconds, args.max_tokens)
    totals = {"on": [0, 0.0], "off": [0, 0.0]}
    for round_ in range(args.rounds):
        for store in ("on", "off") if round_ % 2 == 0 else ("off", "on"):
            variant = HFBackend(
                backend.model,
                backend.tokenizer,
                max_batch=args.episodes,
                prefix_cache_mb=512.0 if store == "on" else 0.0,
            )
            outputs, seconds = asyncio.run(staggered_run(variant, prompts, plan, turns))
            tokens = sum(len(c) for replies in outputs for c in replies)
            totals[store][0] += tokens
            totals[store][1] += seconds
            stats = variant.stats
            print(
                f"round {round_ + 1} growing prompts, prefix store {store:<3} {tokens:5d} tokens "
                f"in {seconds:6.2f} s: {tokens / seconds:6.1f} tokens/s ({stats.reused_tokens} "
                f"of {stats.prompt_tokens} prompt tokens reused, {stats.joined} joined)"
            )
    rate = {name: tokens / seconds for name, (tokens, seconds) in totals.items()}
    print(
        f"continuous batching, prompts growing by turn: prefix reuse on vs off "
        f"{rate['on']:.1f} vs {rate['off']:.1f} tokens/s = {rate['on'] / rate['off']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--model", help="a local model directory (default: SmolLM2-135M)")
    parser.add_argument("--episodes", type=int, default=16, help="staggered: episodes (16)")
    parser.add_argument("--turns", type=int, default=3, help="staggered: turns each (3)")
    parser.add_argument(
        "--lanes", type=int, help="staggered: episodes at once (default: all; an eval's num-envs)"
    )
    parser.add_argument(
        "--step-seconds", type=float, default=0.5, help="staggered: median env step (0.5)"
    )
    parser.add_argument("--only", choices=["staggered", "reuse"], help="run only this measurement")
    parser.add_argument(
        "--growing", action="store_true", help="staggered: prompts grow by turn, as a chat's"
    )
    args = parser.parse_args()

    from agentgym.backends.hf import HFBackend
    from agentgym.backends.sampling import SamplingParams

    started = time.perf_counter()
    directory = args.model or model_dir()  # SmolLM2 converts on the first run ever
    prepared = time.perf_counter() - started
    started = time.perf_counter()
    backend = HFBackend.load(directory, max_batch=args.requests)
    loaded = time.perf_counter() - started
    turn_one, turn_two = first_turns(args.requests)
    prompts = [backend.encode(m) for m in turn_one]
    next_prompts = [backend.encode(m) for m in turn_two]
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens)
    print(
        f"{args.model or 'SmolLM2-135M-Instruct'} on {backend.model.device} "
        f"({backend.model.dtype}): cache ready in {prepared:.1f} s, "
        f"loaded in {loaded:.2f} s; {len(prompts)} prompts of "
        f"{min(map(len, prompts))}-{max(map(len, prompts))} tokens, greedy, "
        f"max_tokens {args.max_tokens}"
    )
    asyncio.run(together(backend, prompts[:2], SamplingParams(temperature=0.0, max_tokens=2)))
    turns = growing_turns(backend, turn_two)
    if args.only == "staggered":
        staggered(backend, prompts, args, turns if args.growing else None)
        return
    if args.only == "reuse":
        reuse_across_turns(backend, prompts, turns, args)
        return
    batched(backend, prompts, next_prompts, params, args)
    staggered(backend, prompts, args)
    reuse_across_turns(backend, prompts, turns, args)


def batched(backend, prompts, next_prompts, params, args) -> None:
    """All requests sent together vs one at a time, then prefix reuse on vs off."""
    totals = {v: [0, 0.0, 0.0] for v in ("alone", "together")}  # tokens, wall, decode seconds
    outputs: dict[str, list[list[int]]] = {}
    for round_ in range(args.rounds):
        order = ("alone", "together") if round_ % 2 == 0 else ("together", "alone")
        for variant in order:
            run = alone if variant == "alone" else together
            decoding = backend.stats.decode_seconds
            backend.prefixes.clear()
            started = time.perf_counter()
            outputs[variant] = asyncio.run(run(backend, prompts, params))
            tokens = sum(map(len, outputs[variant]))
            seconds = time.perf_counter() - started
            decoding = backend.stats.decode_seconds - decoding
            for i, value in enumerate((tokens, seconds, decoding)):
                totals[variant][i] += value
            print(
                f"round {round_ + 1} {variant:<9} {tokens:5d} tokens in {seconds:6.2f} s "
                f"({seconds - decoding:5.2f} s prefill+queue): {tokens / seconds:6.1f} tokens/s, "
                f"decode phase {tokens / decoding:6.1f} tokens/s"
            )
        differ = sum(a != b for a, b in zip(outputs["alone"], outputs["together"], strict=True))
        print(f"round {round_ + 1}: {differ} of {len(prompts)} prompts decode differently")
    wall = {k: t / s for k, (t, s, _) in totals.items()}
    decode = {k: t / d for k, (t, _, d) in totals.items()}
    print(
        f"{len(prompts)} concurrent requests vs one at a time: end to end "
        f"{wall['together']:.1f} vs {wall['alone']:.1f} tokens/s = "
        f"{wall['together'] / wall['alone']:.2f}x; decode phase {decode['together']:.1f} vs "
        f"{decode['alone']:.1f} tokens/s = {decode['together'] / decode['alone']:.2f}x (goal >= 4x)"
    )
    # Prefix reuse on vs off: the first turn together, then the second (same episodes, next
    # observation), as a run plays them; only the store's size differs.
    seconds = {"off": 0.0, "on": 0.0}
    size = backend.prefixes.max_bytes
    for round_ in range(args.rounds):
        for variant in ("off", "on") if round_ % 2 == 0 else ("on", "off"):
            backend.prefixes.clear()
            backend.prefixes.max_bytes = size if variant == "on" else 0
            started = time.perf_counter()
            for turn in (prompts, next_prompts):
                asyncio.run(together(backend, turn, params))
            seconds[variant] += time.perf_counter() - started
    backend.prefixes.max_bytes = size
    print(
        f"two turns of {len(prompts)} episodes with prefix reuse on vs off: "
        f"{seconds['on']:.2f} vs {seconds['off']:.2f} s = {seconds['off'] / seconds['on']:.2f}x"
    )


if __name__ == "__main__":
    main()
