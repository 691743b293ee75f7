"""The hf backend's continuous batching: requests join and leave the running decode between
tokens, and each still gets what it would get alone.

Requests are sent the way an evaluator sends them: a few "lanes" (episodes), each sending its
next request when its last reply came back, with different ``max_tokens``, so lanes finish at
different tokens and every later request joins a batch that is already decoding. Every test
runs the real backend on the tiny random Llama of conftest.py.
"""

from __future__ import annotations

import asyncio
import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agentgym.backends.hf import HFBackend  # noqa: E402
from agentgym.backends.sampling import SamplingParams  # noqa: E402

WORDS = ("up", "down", "left", "right", "move", "take", "guess", "crane", "slate", "north")


@pytest.fixture(scope="module", params=[True, False], ids=["slots", "dynamic"])
def backend(tiny_model_dir, request):
    """The backend over its slot cache (the default) and over transformers' dynamic cache."""
    return HFBackend.load(tiny_model_dir, device="cpu", max_batch=16, static_cache=request.param)


def prompts(backend, count, seed=0):
    """``count`` chat prompts of different lengths."""
    rng = random.Random(seed)
    texts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 12))) for _ in range(count)]
    return [
        backend.encode([{"role": "system", "content": "Play."}, {"role": "user", "content": t}])
        for t in texts
    ]


async def lanes(backend, requests, count):
    """Send ``requests`` (prompt, params, seed) over ``count`` lanes, each lane one request
    at a time; the results in the order of ``requests``."""
    results = [None] * len(requests)

    async def lane(first):
        for index in range(first, len(requests), count):
            results[index] = await backend.generate(*requests[index])

    await asyncio.gather(*(lane(i) for i in range(count)))
    return results


def assert_as_generate(backend, prompts, limits, results):
    """Each greedy result is one-at-a-time ``generate``'s tokens, with the logprobs of a
    teacher-forced pass."""
    for prompt, limit, result in zip(prompts, limits, results, strict=True):
        reference = backend.model.generate(
            torch.tensor([prompt]), max_new_tokens=limit, do_sample=False
        )[0, len(prompt) :].tolist()
        assert result.completion_ids == reference[: len(result.completion_ids)]
        expected = teacher_logprobs(backend.model, prompt, result.completion_ids)
        assert result.logprobs == pytest.approx(expected, abs=1e-4)


def teacher_logprobs(model, prompt, completion):
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1]
    return torch.log_softmax(logits, -1).gather(1, ids[0, len(prompt) :, None])[:, 0].tolist()


def test_greedy_with_staggered_arrivals_matches_one_at_a_time_generate(backend):
    """64 prompts, 8 lanes, max_tokens from 2 to 12: most requests join a running batch, and
    every completion is ``model.generate``'s alone, with the logprobs of a teacher-forced pass."""
    batch = prompts(backend, 64)
    limits = [2 + (i * 7) % 11 for i in range(len(batch))]
    requests = [
        (p, SamplingParams(temperature=0, max_tokens=n), 0)
        for p, n in zip(batch, limits, strict=True)
    ]
    joined = backend.stats.joined
    results = asyncio.run(lanes(backend, requests, 8))
    assert backend.stats.joined - joined > len(batch) // 2
    assert_as_generate(backend, batch, limits, results)


def test_sampling_is_unchanged_by_who_shares_the_batch(backend):
    """Each request's seeded samples are the same alone, over 4 lanes, and shuffled over 7
    lanes (other batch-mates, other join times)."""
    batch = prompts(backend, 24, seed=1)
    params = [SamplingParams(temperature=1.0, top_p=0.95, max_tokens=3 + i % 6) for i in range(24)]
    requests = [(p, q, 500 + i) for i, (p, q) in enumerate(zip(batch, params, strict=True))]

    async def alone():
        return [await backend.generate(*r) for r in requests]

    reference = [r.completion_ids for r in asyncio.run(alone())]
    assert [r.completion_ids for r in asyncio.run(lanes(backend, requests, 4))] == reference
    order = list(range(len(requests)))
    random.Random(2).shuffle(order)
    shuffled = asyncio.run(lanes(backend, [requests[i] for i in order], 7))
    assert [shuffled[order.index(i)].completion_ids for i in range(24)] == reference


@pytest.mark.parametrize("continuous", [True, False])
def test_a_newcomer_does_not_wait_for_a_long_reply(tiny_model_dir, continuous):
    """A long reply is decoding when a short request arrives: with continuous batching the
    short one joins at the next token and is back first; window batching makes it wait."""
    backend = HFBackend.load(tiny_model_dir, device="cpu", continuous=continuous)
    long_prompt, short_prompt, opener = prompts(backend, 3, seed=3)
    eos = set(backend.eos_ids)
    long_params = SamplingParams(temperature=0, max_tokens=300)
    finished: list[str] = []

    async def run():
        async def long():
            result = await backend.generate(long_prompt, long_params, 0)
            finished.append("long")
            return result

        async def short():
            await backend.generate(opener, SamplingParams(temperature=0, max_tokens=1), 0)
            await backend.generate(short_prompt, SamplingParams(temperature=0, max_tokens=2), 0)
            finished.append("short")

        return (await asyncio.gather(long(), short()))[0]

    backend.eos_ids = set()  # the random model must not stop the long reply early
    try:
        result = asyncio.run(run())
    finally:
        backend.eos_ids = eos
    assert len(result.completion_ids) == 300
    assert finished == (["short", "long"] if continuous else ["long", "short"])
    assert backend.stats.joined == (1 if continuous else 0)


def test_a_weight_update_waits_for_the_running_replies(tiny_model_dir, tmp_path):
    """A weight update sent while a reply decodes lets it finish with the old weights and
    holds later requests until the new ones are in: no reply mixes two policies."""
    from .conftest import build_tiny_model

    backend = HFBackend.load(tiny_model_dir, device="cpu")
    other = HFBackend.load(build_tiny_model(tmp_path / "other", seed=1), device="cpu")
    prompt = prompts(backend, 1, seed=4)[0]
    params = SamplingParams(temperature=0, max_tokens=40)
    old = asyncio.run(backend.generate(prompt, params, 0))
    new = asyncio.run(other.generate(prompt, params, 0))
    assert old.completion_ids != new.completion_ids

    async def run():
        first = asyncio.create_task(backend.generate(prompt, params, 0))
        await asyncio.sleep(0)  # queued before the update
        update = asyncio.create_task(backend.load_weights(tmp_path / "other"))
        await asyncio.sleep(0)
        second = asyncio.create_task(backend.generate(prompt, params, 0))
        await update
        return await first, await second

    before, after = asyncio.run(run())
    assert before.completion_ids == old.completion_ids
    assert after.completion_ids == new.completion_ids


def spy(method, seen):
    """``method``, noting the capacity it leaves behind in ``seen``."""

    def wrapper(self, *args):
        method(self, *args)
        seen.append(self.capacity)

    return wrapper


def test_the_static_slot_cache_decodes_what_generate_does(tiny_model_dir, monkeypatch):
    """The slot cache, run eagerly on the CPU: buffers of 8 columns at first (so they grow
    as prompts and replies need), slots of 96 tokens (so rows are moved left and right as
    they come and go), 4 slots for 6 lanes (the rest, and a prompt too long for a slot, go to
    the dynamic batch beside it). Greedy tokens are generate's, logprobs a teacher-forced
    pass's, seeded samples the same as alone."""
    from agentgym.backends.hf_static import StaticBatch

    monkeypatch.setattr(StaticBatch, "initial_capacity", 8)
    backend = HFBackend.load(
        tiny_model_dir,
        device="cpu",
        max_batch=4,
        static_cache=True,
        compile=False,
        static_cache_tokens=96,
    )
    batch = prompts(backend, 30, seed=5)
    batch[7] = batch[7] * 3  # over the slot length: decoded by the dynamic batch
    limits = [2 + (i * 5) % 13 for i in range(len(batch))]
    greedy = [
        (p, SamplingParams(temperature=0, max_tokens=n), 0)
        for p, n in zip(batch, limits, strict=True)
    ]
    grown = []
    monkeypatch.setattr(StaticBatch, "_reserve", spy(StaticBatch._reserve, grown))
    results = asyncio.run(lanes(backend, greedy, 6))
    assert max(grown) == 96  # grown from 8 to the slot length
    assert backend._batch.static.capacity == 8  # and back once idle
    assert_as_generate(backend, batch, limits, results)
    sampled = [
        (p, SamplingParams(temperature=1.0, max_tokens=n), 9 + i)
        for i, (p, n) in enumerate(zip(batch, limits, strict=True))
    ]
    dynamic = HFBackend(backend.model, backend.tokenizer, static_cache=False)

    async def alone():
        return [await dynamic.generate(*r) for r in sampled]

    reference = [r.completion_ids for r in asyncio.run(alone())]
    assert [r.completion_ids for r in asyncio.run(lanes(backend, sampled, 5))] == reference


@pytest.mark.parametrize("fault", ["raises", "wrong logits"])
def test_a_failing_compile_warns_and_decodes_eagerly(tiny_model_dir, monkeypatch, caplog, fault):
    """The compiled step stands in for the model only after it matched an eager forward: a
    compile that raises, or gives other logits, leaves a warning and the eager tokens."""

    def broken_compile(forward, **options):
        def step(input_ids, positions, mask):
            if fault == "raises":
                raise RuntimeError("no compiler here")
            return torch.zeros_like(forward(input_ids, positions, mask))

        return step

    monkeypatch.setattr(torch, "compile", broken_compile)
    backend = HFBackend.load(tiny_model_dir, device="cpu", static_cache=True, compile=True)
    batch = prompts(backend, 3, seed=6)
    params = SamplingParams(temperature=0, max_tokens=6)
    with caplog.at_level("WARNING", logger="agentgym.backends.hf_static"):
        results = asyncio.run(lanes(backend, [(p, params, 0) for p in batch], 3))
    assert "compiled decoding off" in caplog.text
    for prompt, result in zip(batch, results, strict=True):
        reference = backend.model.generate(
            torch.tensor([prompt]), max_new_tokens=6, do_sample=False
        )[0, len(prompt) :].tolist()
        assert result.completion_ids == reference[: len(result.completion_ids)]


def test_a_failing_scheduler_fails_its_callers_instead_of_hanging(tiny_model_dir, monkeypatch):
    """An error outside the model call (here in admission) reaches every waiting caller as a
    ModelError; the next request gets a new scheduler."""
    from agentgym.errors import ModelError

    backend = HFBackend.load(tiny_model_dir, device="cpu", max_batch=4)
    (prompt,) = prompts(backend, 1)
    params = SamplingParams(max_tokens=3, temperature=0.0)

    def broken(rows):
        raise RuntimeError("admission broke")

    async def both():
        return await asyncio.wait_for(
            asyncio.gather(
                backend.generate(prompt, params, 0),
                backend.generate(prompt, params, 1),
                return_exceptions=True,
            ),
            timeout=30,
        )

    monkeypatch.setattr(backend, "_admissible", broken)
    for outcome in asyncio.run(both()):
        assert isinstance(outcome, ModelError) and "admission broke" in str(outcome)
    monkeypatch.undo()
    assert len(asyncio.run(both())[0].completion_ids) == 3


def chats(backend, count, turns, seed=0):
    """``count`` episodes of ``turns`` prompts each, every prompt the last one plus a reply
    and a new observation (so the prefix store holds all but the new tokens)."""
    rng = random.Random(seed)
    episodes = []
    for first in prompts(backend, count, seed):
        episode = [first]
        for _ in range(turns - 1):
            said = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
            episode.append(episode[-1] + backend.encode([{"role": "user", "content": said}]))
        episodes.append(episode)
    return [p for turn in zip(*episodes, strict=True) for p in turn]


def test_a_chats_next_turn_reuses_its_last_prompt_and_reply(tiny_model_dir):
    """Over the slot cache, a retired row's prompt and reply stay in the prefix store: the
    chat's next turn (the last prompt, the reply, a new observation) computes only the new
    tokens, and decodes what one-at-a-time ``generate`` does."""
    backend = HFBackend.load(tiny_model_dir, device="cpu")
    params = SamplingParams(temperature=0, max_tokens=6)
    first = prompts(backend, 4, seed=5)
    replies = asyncio.run(lanes(backend, [(p, params, 0) for p in first], 4))
    said = backend.encode([{"role": "user", "content": "north"}])
    second = [p + r.completion_ids + said for p, r in zip(first, replies, strict=True)]
    before = backend.stats.reused_tokens
    results = asyncio.run(lanes(backend, [(p, params, 0) for p in second], 4))
    held = [len(p) + len(r.completion_ids) - 1 for p, r in zip(first, replies, strict=True)]
    assert backend.stats.reused_tokens - before == sum(held) > sum(map(len, first))
    assert_as_generate(backend, second, [6] * 4, results)
    assert len(backend.prefixes._entries) == 4  # each episode's longest, not every turn's


def test_newcomers_join_inside_the_decode_step(tiny_model_dir):
    """Requests arriving while rows decode are prefilled in the rows' next forward pass
    (their stored prefixes copied first): the same greedy tokens as one-at-a-time
    ``generate`` and as admissions in passes of their own, with fewer forward passes."""
    batch = chats(HFBackend.load(tiny_model_dir, device="cpu"), 8, 3, seed=3)
    limits = [2 + (i * 5) % 9 for i in range(len(batch))]
    requests = [
        (p, SamplingParams(temperature=0, max_tokens=n), 0)
        for p, n in zip(batch, limits, strict=True)
    ]
    stats, results = {}, {}
    for joined in (True, False):
        backend = HFBackend.load(tiny_model_dir, device="cpu", join_in_step=joined)
        results[joined] = asyncio.run(lanes(backend, requests, 8))
        stats[joined] = backend.stats
    assert stats[True].reused_tokens == stats[False].reused_tokens > 0
    assert stats[True].joined == stats[False].joined > len(batch) // 2
    assert stats[True].forward_passes < stats[False].forward_passes - len(batch) // 4
    assert [r.completion_ids for r in results[True]] == [r.completion_ids for r in results[False]]
    assert_as_generate(backend, batch, limits, results[True])


def test_a_model_whose_layers_bypass_the_attention_table_admits_apart(
    tiny_model_dir, monkeypatch, caplog
):
    """A test double for a model whose layers do not look their attention up in
    transformers' table (custom modelling code): the table's ``sdpa`` is transformers' own
    and the packed attention is never put there, so the packed pass fails or never calls
    it. A warning, then newcomers are admitted in passes of their own, with the same tokens."""
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from agentgym.backends import hf_static

    monkeypatch.setitem(AttentionInterface._global_mapping, "sdpa", sdpa_attention_forward)
    monkeypatch.setattr(hf_static, "_install_packed_attention", lambda: None)
    backend = HFBackend.load(tiny_model_dir, device="cpu")
    batch = prompts(backend, 12, seed=4)
    limits = [2 + (i * 3) % 7 for i in range(len(batch))]
    requests = [
        (p, SamplingParams(temperature=0, max_tokens=n), 0)
        for p, n in zip(batch, limits, strict=True)
    ]
    with caplog.at_level("WARNING", logger="agentgym.backends.hf_static"):
        results = asyncio.run(lanes(backend, requests, 4))
    assert "newcomers join in forward passes of their own" in caplog.text
    assert backend._batch.static.packs is False
    assert_as_generate(backend, batch, limits, results)


def test_a_model_on_another_attention_is_not_packed(tiny_model_dir):
    """Eager attention (as Gemma2's soft-capped one) is computed as the model asks: no
    packed pass, the tokens of one-at-a-time ``generate``."""
    backend = HFBackend.load(tiny_model_dir, device="cpu")
    backend.model.config._attn_implementation = "eager"
    batch = prompts(backend, 12, seed=6)
    limits = [2 + (i * 3) % 7 for i in range(len(batch))]
    requests = [
        (p, SamplingParams(temperature=0, max_tokens=n), 0)
        for p, n in zip(batch, limits, strict=True)
    ]
    results = asyncio.run(lanes(backend, requests, 4))
    assert backend.stats.joined > 0
    assert backend._batch.static.packs is False
    assert_as_generate(backend, batch, limits, results)


def test_a_packed_pass_changes_attention_in_its_own_thread_only(tiny_model_dir):
    """While a thread runs a packed pass, another thread's forward pass of the same model
    (a padded batch) gets transformers' sdpa attention, to the bit."""
    import concurrent.futures

    from agentgym.backends import hf_static

    model = HFBackend.load(tiny_model_dir, device="cpu").model
    ids = torch.tensor([[5, 6, 7, 8], [0, 0, 9, 10]])
    mask = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1]])

    def forward():
        with torch.no_grad():
            return model(input_ids=ids, attention_mask=mask).logits

    reference = forward()
    hf_static._install_packed_attention()
    hf_static._packing.step = hf_static.PackedStep()  # this thread is packing
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            other = pool.submit(forward).result()
    finally:
        hf_static._packing.step = None
    assert torch.equal(other, reference)


def test_a_retired_rows_slot_is_taken_by_a_row_past_the_live_ones():
    """Retiring a row moves only the rows past the live count into the freed slots (each
    move copies a row's keys and values); the rows in slots below it stay where they are."""
    from agentgym.backends.hf_static import _fill_holes

    assert _fill_holes([1, 2, 3]) == [3, 1, 2]
    assert _fill_holes([0, 2, 4, 5]) == [0, 4, 2, 5]
    assert _fill_holes([0, 1, 2]) == [0, 1, 2]
    assert _fill_holes([5]) == [5]
    assert _fill_holes([]) == []
