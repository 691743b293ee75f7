"""Model backends: what generates the tokens, for agents and trainers alike.

* :class:`TokenBackend` — the contract of an in-process engine that continues token ids and
  returns each completion's ids and logprobs (:class:`Generation`), with prompts rendered by
  the tokenizer's own chat template (:func:`render_prompt`);
* :class:`HFBackend` — transformers in process, batched KV-cache decoding (the ``hf`` extra);
* :class:`VLLMBackend` — an in-process vLLM engine with in-place weight updates (GPU);
* :class:`EndpointClient` — any OpenAI-compatible HTTP endpoint, shared by a run's agents;
* :class:`SamplingParams` and :func:`turn_seed` — sampling settings every backend reads the
  same way, and the seed of each model call;
* :func:`smollm2_model_dir` — the embedded model's weights, converted once into the cache;
* ``agentgym.backends.server`` — ``agentgym serve``.

The agents over them (one per episode) are in :mod:`agentgym.agents`
(:class:`~agentgym.agents.TokenAgent`, ``hf:``, ``vllm:``, ``openai:``, ``smollm2``); the
trainers use both through these two faces. Names are imported on first use, so importing
this package costs nothing (torch is imported by the backends that need it, when they load).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "SAMPLING_KEYS",
    "BackendStats",
    "EndpointClient",
    "EndpointStats",
    "Generation",
    "HFBackend",
    "SamplingParams",
    "TokenBackend",
    "VLLMBackend",
    "checkpoint_policy",
    "eos_ids",
    "parse_spec",
    "render_prompt",
    "require_hf",
    "require_vllm",
    "smollm2_model_dir",
    "turn_seed",
]

_HOMES = {
    "SAMPLING_KEYS": "sampling",
    "BackendStats": "hf",
    "EndpointClient": "endpoint",
    "EndpointStats": "endpoint",
    "Generation": "base",
    "HFBackend": "hf",
    "SamplingParams": "sampling",
    "TokenBackend": "base",
    "VLLMBackend": "vllm",
    "checkpoint_policy": "hf",
    "eos_ids": "hf",
    "parse_spec": "endpoint",
    "render_prompt": "base",
    "require_hf": "hf",
    "require_vllm": "vllm",
    "smollm2_model_dir": "smollm2:model_dir",
    "turn_seed": "sampling",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentgym.backends' has no attribute {name!r}")
    # Not cached here: the name stays the module's own (a test that patches it is obeyed).
    module, _, attribute = home.partition(":")
    return getattr(importlib.import_module(f"agentgym.backends.{module}"), attribute or name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
