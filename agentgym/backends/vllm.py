"""In-process vLLM agents (``vllm:PATH``): the ``hf`` agent's interface on vLLM's engine.

GPU machines only: ``vllm`` is not installable on the CPU machines the tests run on, so this
module is deliberately thin. Everything an episode does (the chat, the chat template, the
seeds, the action extraction, the ledger's token record) is :class:`~agentgym.agents.chat.
TokenAgent`'s, shared with ``hf`` and covered by the CPU tests; this module only turns token
ids into token ids through ``AsyncLLMEngine``. vLLM batches concurrent requests itself
(continuous batching with paged attention and prefix caching), so every episode's ``act``
simply submits its prompt.

Sampling follows ``EpisodeContext.sampling`` like ``hf``: each request carries its own seed
(:func:`~agentgym.backends.sampling.turn_seed`), and logprobs are asked for as
``processed_logprobs`` (after temperature, before top-p/top-k), the policy ``hf`` records.

A trainer that samples its rollouts here (``agentgym train ... --rollout-backend vllm``)
replaces the engine's weights after every update with :meth:`VLLMBackend.load_weights`, the
method ``hf`` has too.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.backends.base import TokenBackend
from agentgym.backends.sampling import SamplingParams
from agentgym.errors import MissingExtraError, ModelError, UsageError

__all__ = ["VLLMBackend", "require_vllm"]


@dataclass
class VLLMGeneration:
    """What vLLM wrote for one prompt (the :class:`~agentgym.agents.chat.Generation` shape)."""

    completion_ids: list[int]
    logprobs: list[float]


class VLLMBackend(TokenBackend):
    """A vLLM engine and its tokenizer, shared by all agents of a run."""

    def __init__(self, engine: Any, tokenizer: Any) -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        self._ids = itertools.count()

    @classmethod
    def load(cls, path: str | Path, **engine_options: Any) -> VLLMBackend:
        """Start an engine on a local model directory; ``engine_options`` are
        ``AsyncEngineArgs`` fields (e.g. ``gpu_memory_utilization``, ``max_model_len``)."""
        from transformers import AutoTokenizer
        from vllm import AsyncEngineArgs, AsyncLLMEngine

        fields = {f.name for f in dataclasses.fields(AsyncEngineArgs)}
        unknown = sorted(set(engine_options) - fields)
        if unknown:
            raise UsageError(f"vllm: unknown engine option(s) {unknown}")
        if "logprobs_mode" in fields:  # vLLM >= 0.10.2; older ones return processed logprobs
            engine_options.setdefault("logprobs_mode", "processed_logprobs")
        if "worker_extension_cls" in fields:  # vLLM >= 0.8.5: what load_weights calls
            engine_options.setdefault("worker_extension_cls", f"{__name__}.WeightLoader")
        args = AsyncEngineArgs(model=str(path), **engine_options)
        engine = AsyncLLMEngine.from_engine_args(args)
        return cls(engine, AutoTokenizer.from_pretrained(str(path)))

    async def generate(
        self, prompt_ids: list[int], params: SamplingParams, seed: int
    ) -> VLLMGeneration:
        """Continue ``prompt_ids`` (vLLM batches it with every other request in flight)."""
        from vllm import SamplingParams as VLLMSampling

        sampling = VLLMSampling(
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k,  # 0: no cut, as in ours
            max_tokens=params.max_tokens,
            seed=seed,
            logprobs=0,  # the sampled token's own logprob
        )
        final = None
        try:
            async for output in self.engine.generate(
                {"prompt_token_ids": list(prompt_ids)}, sampling, f"agentgym-{next(self._ids)}"
            ):
                final = output
        except Exception as error:
            raise ModelError(f"vllm generation failed: {type(error).__name__}: {error}") from error
        if final is None or not final.outputs:
            raise ModelError("vllm returned no output")
        completion = final.outputs[0]
        ids = [int(t) for t in completion.token_ids]
        logprobs = [
            float(step[token].logprob) for step, token in zip(completion.logprobs, ids, strict=True)
        ]
        return VLLMGeneration(ids, logprobs)

    async def load_weights(self, path: str | Path) -> None:
        """Replace the engine's weights with the safetensors of a ``save_pretrained``
        directory (a trainer's updated policy) in every vLLM worker, then drop the prefix
        cache, whose keys and values the old weights computed.

        The workers read the files themselves (vLLM runs them in other processes) with
        :class:`WeightLoader`'s method, which :meth:`load` mixes into every worker; requests
        already running finish on whichever weights they meet, so a trainer calls this
        between collections."""
        directory = Path(path)
        if not any(directory.glob("*.safetensors")):
            raise UsageError(f"{str(directory)!r} holds no .safetensors weights to load")
        try:
            await self.engine.collective_rpc("agentgym_load_weights", args=(str(directory),))
            await self.engine.reset_prefix_cache()
        except Exception as error:
            raise ModelError(
                f"vllm could not load the weights of {str(directory)!r}: "
                f"{type(error).__name__}: {error}"
            ) from error

    def close(self) -> None:
        """Stop the engine (its worker processes and their GPU memory)."""
        shutdown = getattr(self.engine, "shutdown", None)
        if shutdown is not None:
            shutdown()


class WeightLoader:
    """Mixed into every vLLM worker (the engine's ``worker_extension_cls``), so that
    ``collective_rpc("agentgym_load_weights", ...)``, a name and not a pickled function,
    reaches each worker wherever vLLM runs it."""

    model_runner: Any  # the worker's

    def agentgym_load_weights(self, directory: str) -> None:
        """Load a ``save_pretrained`` directory's safetensors into this worker's model
        through the model's own ``load_weights``, which maps Hugging Face names onto vLLM's
        fused and sharded layers."""
        from safetensors.torch import load_file

        model = self.model_runner.model
        for shard in sorted(Path(directory).glob("*.safetensors")):
            model.load_weights(load_file(str(shard)).items())


def require_vllm() -> None:
    """A clear error where vLLM is missing (CPU machines cannot install it)."""
    if importlib.util.find_spec("vllm") is None:
        raise MissingExtraError(
            "the vllm agent needs vLLM, which runs on GPU machines: pip install vllm "
            "(on a CPU machine use hf:PATH, the same agent on transformers)"
        )
