"""Rollouts from an in-process vLLM engine (``--rollout-backend vllm``), on a CPU.

vLLM is not installable on these machines (ENVIRONMENT.md), so the engine here is a test
double, and says so: :class:`EngineDouble` has the surface of vLLM's ``AsyncLLM`` that
:class:`~agentgym.backends.vllm.VLLMBackend` uses (``generate`` as an async generator of
outputs, ``collective_rpc`` calling a method of each worker, ``reset_prefix_cache``,
``shutdown``; ``SamplingParams`` as a record of its fields) and, like ``AsyncLLM``, it
refuses to run on a second event loop. It samples with the real ``hf`` backend, and its
workers, with the product's ``WeightLoader`` mixed in, load weights through a model's
``load_weights(name, tensor pairs)``, as vLLM's models do. What the tests measure is the
product's part: the trainer's weights reach the engine's workers through the saved
directory, the prefix cache goes after each load, one loop serves every collection, the
recorded logprobs are the trained policy's, and a CPU machine gets a clear error.
"""

from __future__ import annotations

import asyncio
import csv
import sys
import types
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from test_endpoint import TOLERANCE, _gap, _tensors  # noqa: E402
from training import fast_args  # noqa: E402

from agentgym.agents.prompting import PromptConfig  # noqa: E402
from agentgym.backends import vllm as vllm_module  # noqa: E402
from agentgym.backends.hf import HFBackend  # noqa: E402
from agentgym.backends.sampling import SamplingParams  # noqa: E402
from agentgym.backends.vllm import VLLMBackend  # noqa: E402
from agentgym.baselines import grpo  # noqa: E402
from agentgym.baselines.policy import load_policy  # noqa: E402
from agentgym.baselines.rollouts import VLLMRollouts  # noqa: E402
from agentgym.errors import MissingExtraError, UsageError  # noqa: E402


class ModelDouble:
    """What a vLLM worker's model offers a weight update: ``load_weights(pairs)``."""

    def __init__(self, model) -> None:
        self.model = model
        self.loads = 0

    def load_weights(self, pairs) -> None:
        state = dict(pairs)
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        assert not unexpected, unexpected
        assert set(missing) <= {"lm_head.weight"}, missing  # tied to the embedding
        self.loads += 1


class EngineDouble:
    """A stand-in for vLLM's ``AsyncLLM`` on the CPU (see the module docstring)."""

    def __init__(self, path, **options) -> None:
        self.path = path
        self.options = options
        self.hf = HFBackend.load(path, device="cpu")
        self.model = ModelDouble(self.hf.model)
        self.calls: list[str] = []
        self.loop = None
        # what VLLMBackend.load's worker_extension_cls makes of vLLM's worker class
        self.worker_class = type("Worker", (vllm_module.WeightLoader,), {})

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if self.loop is None:
            self.loop = loop
        assert loop is self.loop, "vLLM's engine runs on the event loop it started on"

    async def generate(self, prompt, sampling, request_id):
        self._bind()
        params = SamplingParams(
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            max_tokens=sampling.max_tokens,
        )
        out = await self.hf.generate(prompt["prompt_token_ids"], params, sampling.seed)
        logprobs = [
            {token: SimpleNamespace(logprob=value)}
            for token, value in zip(out.completion_ids, out.logprobs, strict=True)
        ]
        completion = SimpleNamespace(token_ids=out.completion_ids, logprobs=logprobs)
        yield SimpleNamespace(outputs=[completion])

    async def collective_rpc(self, method, args=()):
        self._bind()
        self.calls.append("collective_rpc")
        worker = self.worker_class()  # a worker with the extension mixed in, as vLLM does
        worker.model_runner = SimpleNamespace(model=self.model)
        getattr(worker, method)(*args)

    async def reset_prefix_cache(self):
        self._bind()
        self.calls.append("reset_prefix_cache")
        self.hf.prefixes.clear()

    def shutdown(self):
        self.calls.append("shutdown")


@pytest.fixture
def engine_double(monkeypatch):
    """Routes ``VLLMBackend.load`` to :class:`EngineDouble`; yields the engines made."""
    made: list[EngineDouble] = []

    def load(path, **options):
        engine = EngineDouble(path, **options)
        made.append(engine)
        return VLLMBackend(engine, engine.hf.tokenizer)

    vllm = types.ModuleType("vllm")  # what the backend imports from vLLM per request
    vllm.SamplingParams = lambda **fields: SimpleNamespace(**fields)
    monkeypatch.setitem(sys.modules, "vllm", vllm)
    monkeypatch.setattr(vllm_module, "require_vllm", lambda: None)
    monkeypatch.setattr(VLLMBackend, "load", staticmethod(load))
    return made


def test_the_engines_weights_follow_the_trainers(engine_double, tmp_path):
    policy = load_policy("tiny", device="cpu", seed=1)
    rollouts = VLLMRollouts(
        policy,
        PromptConfig(history_window=1),
        sync_dir=tmp_path / "served-policy",
        engine_options={"gpu_memory_utilization": 0.3},
        sampling={"temperature": 1.0, "max_tokens": 6},
        num_envs=8,
    )
    (engine,) = engine_double
    assert engine.options["gpu_memory_utilization"] == 0.3
    assert _gap(policy, _tensors(policy, rollouts, 0)) < TOLERANCE
    with torch.no_grad():  # an "update": every weight moves
        for parameter in policy.model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.05)
    assert _gap(policy, _tensors(policy, rollouts, 1)) > 100 * TOLERANCE  # stale engine
    rollouts.weights_changed()
    assert engine.calls == ["collective_rpc", "reset_prefix_cache"]
    assert engine.model.loads == 1
    assert _gap(policy, _tensors(policy, rollouts, 2)) < TOLERANCE
    rollouts.close()
    rollouts.close()  # idempotent
    assert engine.calls[-1] == "shutdown" and engine.calls.count("shutdown") == 1


def test_grpo_trains_with_vllm_rollouts(engine_double, warm_policy, tmp_path):
    # Two groups of 8: the contract is the same at any batch size (and half the episodes).
    small = {"iterations": 2, "groups": 2, "group_size": 8}
    args = fast_args(
        "grpo", tmp_path / "run", model=str(warm_policy), rollout_backend="vllm", **small
    )
    run = grpo.train(args)
    with open(run.dir / "metrics.csv") as metrics:
        rows = [{k: float(v) for k, v in row.items() if v} for row in csv.DictReader(metrics)]
    assert [r["iteration"] for r in rows] == [0, 1]
    assert all(r["rollout/episodes"] == 16 and r["rollout/dropped_episodes"] == 0 for r in rows)
    (engine,) = engine_double
    assert engine.options["gpu_memory_utilization"] == args.vllm_gpu_memory
    assert engine.model.loads == 2 and engine.calls[-1] == "shutdown"
    trained = load_policy(str(run.latest_checkpoint() / "policy"), device="cpu")
    served = engine.hf.model.state_dict()
    for name, tensor in trained.model.state_dict().items():
        assert torch.equal(served[name], tensor), name


def test_a_bad_weight_directory_is_a_usage_error(engine_double, tmp_path):
    policy = load_policy("tiny", device="cpu", seed=1)
    rollouts = VLLMRollouts(
        policy, PromptConfig(), sync_dir=tmp_path / "served", sampling={"max_tokens": 4}
    )
    with pytest.raises(UsageError, match=r"holds no \.safetensors"):
        rollouts.loop.run_until_complete(rollouts.backend.load_weights(tmp_path / "empty"))
    rollouts.close()


@pytest.mark.skipif(
    vllm_module.importlib.util.find_spec("vllm") is not None, reason="vLLM is installed"
)
def test_vllm_rollouts_without_vllm_say_what_is_missing(tmp_path):
    args = fast_args("grpo", tmp_path, model="tiny", rollout_backend="vllm")
    with pytest.raises(MissingExtraError, match="runs on GPU machines"):
        grpo.train(args)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"rollout_backend": "sglang"}, "use 'hf' or 'vllm'"),
        ({"rollout_backend": "vllm", "rollout_workers": 2}, "cannot be combined"),
        ({"rollout_backend": "vllm", "vllm_gpu_memory": 1.5}, "between 0 and 1"),
    ],
)
def test_vllm_rollout_arguments_are_checked_up_front(engine_double, tmp_path, overrides, words):
    with pytest.raises(UsageError, match=words):
        grpo.train(fast_args("grpo", tmp_path, model="tiny", **overrides))
    assert not (tmp_path / "metrics.csv").exists()
