"""The in-process transformers backend: batching, left padding, logprobs, errors, the ledger.

Every test runs the real backend on a tiny randomly initialised Llama (see conftest.py).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json

import pytest

from agentgym.agents import EpisodeContext, resolve_agent
from agentgym.agents.prompting import PromptConfig
from agentgym.errors import MissingExtraError, ModelError, UsageError
from agentgym.eval.plan import Benchmark

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agentgym.agents.chat import SharedBackendFactory, TokenAgent  # noqa: E402
from agentgym.backends.hf import HFBackend  # noqa: E402
from agentgym.backends.sampling import SamplingParams  # noqa: E402

GREEDY = SamplingParams(temperature=0.0, max_tokens=12)
PROMPTS = [
    "up",
    "Walk to the exit at row 9, column 13.",
    "#####\n#@..E#\n#####",
    "move A C",
    "guess crane: G . Y . .",
    "a much longer observation, with many more tokens than the others in its batch",
]


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    return HFBackend.load(tiny_model_dir, device="cpu", max_batch=16)


def prompt_ids(backend, text):
    return backend.encode(
        [{"role": "system", "content": "Play."}, {"role": "user", "content": text}]
    )


def count_forwards(model):
    """A forward hook (torch's own mechanism) counting the model's forward passes."""
    calls = []
    handle = model.register_forward_hook(lambda *args: calls.append(1))
    return calls, handle


async def together(backend, prompts, params=GREEDY, seeds=None):
    seeds = seeds or [0] * len(prompts)
    return await asyncio.gather(
        *(backend.generate(p, params, s) for p, s in zip(prompts, seeds, strict=True))
    )


async def one_by_one(backend, prompts, params=GREEDY, seeds=None):
    seeds = seeds or [0] * len(prompts)
    return [await backend.generate(p, params, s) for p, s in zip(prompts, seeds, strict=True)]


def test_concurrent_requests_share_forward_passes_and_match_one_at_a_time(backend):
    prompts = [prompt_ids(backend, text) for text in PROMPTS]
    assert len({len(p) for p in prompts}) > 1  # different lengths: left padding is exercised
    calls, handle = count_forwards(backend.model)
    try:
        alone = asyncio.run(one_by_one(backend, prompts))
        forwards_alone = len(calls)
        calls.clear()
        batches_before = backend.stats.batches
        batched = asyncio.run(together(backend, prompts))
        forwards_batched = len(calls)
    finally:
        handle.remove()
    assert backend.stats.batches - batches_before == 1  # all six in one batch
    assert forwards_batched < len(prompts) * GREEDY.max_tokens
    assert forwards_batched * 3 < forwards_alone
    for one, many in zip(alone, batched, strict=True):
        assert many.completion_ids == one.completion_ids
        assert many.logprobs == pytest.approx(one.logprobs, abs=1e-4)


def test_greedy_decoding_matches_transformers_generate(backend):
    prompt = prompt_ids(backend, PROMPTS[1])
    (ours,) = asyncio.run(together(backend, [prompt]))
    reference = backend.model.generate(
        torch.tensor([prompt]), max_new_tokens=GREEDY.max_tokens, do_sample=False
    )[0, len(prompt) :].tolist()
    assert ours.completion_ids == reference[: len(ours.completion_ids)]


def test_rows_of_different_lengths_finish_apart(backend):
    """Rows that reach their max_tokens leave the batch; the others go on unchanged."""
    prompts = [prompt_ids(backend, text) for text in PROMPTS[:3]]
    limits = [SamplingParams(temperature=0, max_tokens=n) for n in (2, 5, 9)]

    async def mixed():
        return await asyncio.gather(
            *(backend.generate(p, lim, 0) for p, lim in zip(prompts, limits, strict=True))
        )

    results = asyncio.run(mixed())
    full = asyncio.run(one_by_one(backend, prompts, SamplingParams(temperature=0, max_tokens=9)))
    for result, limit, reference in zip(results, limits, full, strict=True):
        assert len(result.completion_ids) <= limit.max_tokens
        assert result.completion_ids == reference.completion_ids[: len(result.completion_ids)]


def test_sampling_is_seeded_per_request_whatever_shares_the_batch(backend):
    prompts = [prompt_ids(backend, text) for text in PROMPTS]
    params = SamplingParams(temperature=1.0, top_p=0.9, max_tokens=10)
    seeds = list(range(100, 100 + len(prompts)))
    alone = asyncio.run(one_by_one(backend, prompts, params, seeds))
    batched = asyncio.run(together(backend, prompts, params, seeds))
    assert [r.completion_ids for r in batched] == [r.completion_ids for r in alone]
    other = asyncio.run(together(backend, prompts, params, [s + 1 for s in seeds]))
    assert [r.completion_ids for r in other] != [r.completion_ids for r in alone]


def test_a_tiny_top_p_is_greedy(backend):
    prompt = prompt_ids(backend, PROMPTS[2])
    (greedy,) = asyncio.run(together(backend, [prompt]))
    nucleus = SamplingParams(temperature=1.0, top_p=1e-6, max_tokens=GREEDY.max_tokens)
    (sampled,) = asyncio.run(together(backend, [prompt], nucleus, [7]))
    assert sampled.completion_ids == greedy.completion_ids


def context(sampling, seed=3):
    return EpisodeContext(
        env_id="games/Maze-v0",
        task_id="t",
        seed=seed,
        instructions="Walk to the exit.",
        info={},
        sampling=sampling,
    )


def test_agents_reply_with_tokens_logprobs_and_usage(tiny_model_dir):
    factory, name = resolve_agent(f"hf:{tiny_model_dir}")
    assert name == f"hf:{tiny_model_dir}"
    agents = [factory() for _ in range(4)]
    assert len({id(agent.backend) for agent in agents}) == 1  # one shared backend
    for seed, agent in enumerate(agents):
        agent.reset(context({"temperature": 0.7, "top_p": 0.95, "max_tokens": 8}, seed))

    async def turn(observation):
        return await asyncio.gather(*(a.act(observation, {}) for a in agents))

    first = asyncio.run(turn("#@.E#"))
    second = asyncio.run(turn("You moved right."))
    for reply in first + second:
        tokens = reply.tokens
        assert tokens is not None and tokens.prompt_ids and tokens.completion_ids
        assert len(tokens.logprobs) == len(tokens.completion_ids) <= 8
        assert all(lp <= 0.0 for lp in tokens.logprobs)
        assert reply.usage == {
            "prompt_tokens": len(tokens.prompt_ids),
            "completion_tokens": len(tokens.completion_ids),
        }
        assert reply.text == agents[0].backend.decode(tokens.completion_ids)
    # The second prompt extends the first with the raw reply (append-only history).
    for one, two in zip(first, second, strict=True):
        assert two.tokens.prompt_ids[: len(one.tokens.prompt_ids)] == one.tokens.prompt_ids
    assert factory.backend.stats.batches < factory.backend.stats.requests


def test_bad_specs_and_parameters_are_clear_errors(tiny_model_dir, tmp_path):
    with pytest.raises(UsageError, match="not a directory"):
        resolve_agent(f"hf:{tmp_path / 'missing'}")
    with pytest.raises(UsageError, match=r"config\.json"):
        resolve_agent(f"hf:{tmp_path}")
    factory, _ = resolve_agent(f"hf:{tiny_model_dir}")
    with pytest.raises(UsageError, match="stop"):
        factory().reset(context({"stop": ["\n"]}))
    with pytest.raises(UsageError, match="top_p"):
        factory().reset(context({"top_p": 0}))


def test_missing_torch_names_the_hf_extra(monkeypatch):
    """A stand-in ``find_spec`` plays a machine without torch (the test is about the message)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    with pytest.raises(MissingExtraError, match=r"agentgym\[hf\]"):
        resolve_agent("hf:/anywhere")
    with pytest.raises(MissingExtraError, match=r"agentgym\[hf\]"):
        resolve_agent("smollm2")


def test_a_model_failure_raises_instead_of_returning_an_empty_action(backend):
    vocab = backend.model.config.vocab_size
    with pytest.raises(ModelError, match="generation failed"):
        asyncio.run(together(backend, [[1, vocab + 5, 2]]))  # an id the model has no row for
    too_long = [5] * (backend.max_length - 3)
    with pytest.raises(ModelError, match="context"):
        asyncio.run(together(backend, [too_long]))
    # The backend goes on serving after a failed batch.
    (ok,) = asyncio.run(together(backend, [prompt_ids(backend, "up")]))
    assert ok.completion_ids


def tiny_benchmark(sampling):
    return Benchmark.from_dict(
        {
            "name": "tiny-hf",
            "seed": 0,
            "episodes_per_task": 2,
            "sampling": sampling,
            "envs": [
                {"id": "games/Maze-v0", "split": "test", "difficulty": "easy", "tasks": 2},
            ],
        }
    )


def test_evaluate_records_tokens_and_logprobs_in_the_ledger(tiny_model_dir, tmp_path):
    from agentgym.eval import evaluate

    factory = SharedBackendFactory(
        lambda: HFBackend.load(tiny_model_dir, device="cpu"),
        "tiny",
        PromptConfig(history_window=2),
    )
    benchmark = tiny_benchmark({"temperature": 0.7, "max_tokens": 6})
    benchmark = Benchmark.from_dict(
        {**benchmark.to_dict(), "envs": [{**benchmark.to_dict()["envs"][0], "max_steps": 3}]}
    )
    result = evaluate(benchmark, factory, tmp_path / "run", num_envs=4)
    assert [r.status for r in result.records] == ["truncated"] * 4, result.records[0].error
    lines = (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
    for line in lines:
        for step in json.loads(line)["steps"]:
            tokens = step["tokens"]
            assert tokens["prompt_ids"] and tokens["completion_ids"]
            assert len(tokens["logprobs"]) == len(tokens["completion_ids"])
            assert step["info"]["usage"]["completion_tokens"] == len(tokens["completion_ids"])
    assert factory.backend.stats.batches < factory.backend.stats.requests


def test_a_failing_model_errors_the_episode(tiny_model_dir, tmp_path):
    """A model that cannot serve the prompt makes the episode errored, not an empty action."""
    from agentgym.eval import evaluate

    factory = SharedBackendFactory(
        lambda: HFBackend.load(tiny_model_dir, device="cpu"), "tiny", PromptConfig()
    )
    # max_tokens beyond the tiny model's context: every request is refused.
    benchmark = tiny_benchmark({"temperature": 0.0, "max_tokens": 5000})
    result = evaluate(benchmark, factory, tmp_path / "run", num_envs=4)
    assert {r.status for r in result.records} == {"errored"}
    assert "ContextLengthError" in result.records[0].error  # a ModelError


def test_agent_is_a_real_agent(tiny_model_dir):
    factory, _ = resolve_agent(f"hf:{tiny_model_dir}")
    agent = factory()
    assert isinstance(agent, TokenAgent)
    assert agent.name == f"hf:{tiny_model_dir}"


def test_reused_prefixes_give_the_tokens_of_a_fresh_prefill(backend):
    """First turns sent together share their system message within the batch; then prompts
    that extend earlier ones (the next turn of a chat) or share only the system message reuse
    the stored keys/values, mixed in one batch with a prompt that shares nothing. Every row
    decodes what a backend without the store decodes."""
    fresh = HFBackend(backend.model, backend.tokenizer, prefix_cache_mb=0)
    cached = HFBackend(backend.model, backend.tokenizer)
    system = {"role": "system", "content": "You play a maze. Reply with one move."}
    first_turns = [[system, {"role": "user", "content": text}] for text in PROMPTS[:3]]
    openings = [cached.encode(m) for m in first_turns]
    for ours, theirs in zip(
        asyncio.run(together(cached, openings)),
        asyncio.run(one_by_one(fresh, openings)),
        strict=True,
    ):
        assert ours.completion_ids == theirs.completion_ids
    shared_in_batch = cached.stats.reused_tokens
    assert shared_in_batch > 3 * len(system["content"])  # byte tokens: the system message
    follow_ups = [
        first_turns[0]
        + [{"role": "assistant", "content": "left"}, {"role": "user", "content": "ok"}],
        [system, {"role": "user", "content": "a new observation"}],
        [{"role": "system", "content": "Something else entirely."}, first_turns[1][1]],
        first_turns[2],  # the very same prompt: all but its last token reused
    ]
    prompts = [cached.encode(m) for m in follow_ups]
    reference = asyncio.run(one_by_one(fresh, prompts))
    results = asyncio.run(together(cached, prompts))
    assert cached.stats.reused_tokens - shared_in_batch > len(openings[0])
    assert fresh.stats.reused_tokens == 0
    for ours, theirs in zip(results, reference, strict=True):
        assert ours.completion_ids == theirs.completion_ids
        assert ours.logprobs == pytest.approx(theirs.logprobs, abs=1e-4)


def test_the_prefix_store_is_bounded_and_forgets_the_oldest():
    from agentgym.backends.hf import PrefixStore
    from agentgym.backends.hf_decode import CachedPrefix

    def states(length):
        return CachedPrefix(length, [torch.zeros(2, length, 4)], [torch.zeros(2, length, 4)])

    per_token = states(1).nbytes
    store = PrefixStore(max_bytes=100 * per_token, min_tokens=4)
    store.add(list(range(60)), states(60))
    assert store.lookup([*range(30), 999]).length == 30
    assert store.lookup([5, 6, 7, 8, 9]) is None  # nothing shared from the start
    assert store.lookup([*range(3), 999]) is None  # shorter than min_tokens
    store.add(list(range(100, 160)), states(60))  # over the cap: the first one goes
    assert store.lookup([*range(30), 999]) is None
    assert store.lookup(list(range(100, 160))).length == 59  # one token is left to compute


def test_an_entry_that_extends_another_replaces_it():
    from agentgym.backends.hf import PrefixStore
    from agentgym.backends.hf_decode import CachedPrefix

    def states(length):
        return CachedPrefix(length, [torch.zeros(2, length, 4)], [torch.zeros(2, length, 4)])

    store = PrefixStore(max_bytes=10**6, min_tokens=4)
    store.add(list(range(40)), states(40))  # a prompt
    store.add(list(range(100, 130)), states(30))  # another
    store.add(list(range(60)), states(60))  # the first prompt and its reply
    assert store.lookup([*range(50), 999]).length == 50
    assert len(store._entries) == 2
    assert store._bytes == states(60).nbytes + states(30).nbytes


def test_the_dtype_and_prefix_store_options_reach_the_backend(tiny_model_dir):
    """``dtype`` and ``prefix_cache_mb`` (docs/evaluation.md's options) are taken, and a
    dtype the backend does not know is refused with its value."""
    factory, _ = resolve_agent(
        f"hf:{tiny_model_dir}", {"dtype": "bfloat16", "prefix_cache_mb": 1, "device": "cpu"}
    )
    backend = factory.backend
    assert backend.model.dtype == torch.bfloat16
    assert backend.prefixes.max_bytes == 2**20
    with pytest.raises(UsageError, match="'float8'"):
        HFBackend.load(tiny_model_dir, device="cpu", dtype="float8")
