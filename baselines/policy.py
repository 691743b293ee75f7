"""The policy a trainer learns: a transformers causal LM, its tokenizer, optionally LoRA.

``load_policy(spec)`` takes

* ``"smollm2"`` — the embedded SmolLM2-135M-Instruct (the default; converted once, offline);
* ``"tiny"`` — a randomly initialized two-layer Llama with SmolLM2's tokenizer and chat
  template: it knows nothing, trains in seconds on a CPU and is what the fastest tests use
  (after a format warm start it acts like the random agent, the "near chance" start);
* a local directory written by ``save_pretrained`` (any causal LM with a chat template),
  which includes a trainer's checkpoint (``RUN/checkpoints/iter-N/policy``).

The model is kept in float32 (on a CPU bfloat16 is slow; on a GPU float32 master weights
keep AdamW exact) and in eval mode: dropout would make the logprobs a trainer recomputes
differ from the ones the rollout sampled with the same weights.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.errors import UsageError

__all__ = ["Policy", "load_policy", "tiny_model"]


@dataclass
class Policy:
    """A model and its tokenizer, as trained and as sampled from (the same object)."""

    model: Any
    tokenizer: Any
    spec: str
    lora: bool = False

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.eos_token_id)

    @property
    def eos_ids(self) -> set[int]:
        """The tokens that end a reply (what the ``hf`` backend stops at)."""
        from agentgym.backends import eos_ids

        ids: set[int] = eos_ids(self.model, self.tokenizer)  # the lazy face's names are Any
        return ids

    def trainable(self) -> list[Any]:
        """The parameters the optimizer updates (only the adapters under LoRA)."""
        return [p for p in self.model.parameters() if p.requires_grad]

    def frozen_copy(self) -> Any:
        """A copy of the current model that no optimizer touches (the KL reference)."""
        reference = copy.deepcopy(self.model)
        for parameter in reference.parameters():
            parameter.requires_grad_(False)
        return reference.eval()

    def save(self, directory: str | Path) -> Path:
        """Write a plain transformers directory (LoRA merged in) that ``hf:DIR`` can load."""
        directory = Path(directory)
        model = self.model
        if self.lora:
            model = copy.deepcopy(model).merge_and_unload()
        model.save_pretrained(directory, safe_serialization=True)
        self.tokenizer.save_pretrained(directory)
        return directory


def load_policy(
    spec: str,
    *,
    device: str | None = None,
    seed: int = 0,
    lora_rank: int = 0,
    lora_alpha: int = 32,
) -> Policy:
    """The policy named by ``spec`` (see the module docstring), on ``device``.

    ``lora_rank > 0`` wraps the model in ``peft`` LoRA adapters on every linear layer: only
    they train, and checkpoints merge them into plain weights.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentgym.backends import require_hf

    require_hf()
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if spec in ("smollm2", "tiny"):
        from agentgym.backends import smollm2_model_dir as model_dir

        source = model_dir()
        tokenizer = AutoTokenizer.from_pretrained(str(source))
        if spec == "tiny":
            model = tiny_model(tokenizer, seed=seed)
        else:
            model = AutoModelForCausalLM.from_pretrained(str(source), dtype=torch.float32)
    else:
        path = Path(spec).expanduser()
        if not (path / "config.json").is_file():
            raise UsageError(
                f"--model {spec!r}: use 'smollm2', 'tiny' or a local transformers model "
                f"directory (one with a config.json, e.g. a checkpoint's policy/ folder)"
            )
        tokenizer = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32)
    if not getattr(tokenizer, "chat_template", None):
        raise UsageError(f"--model {spec!r}: the tokenizer has no chat template")
    model.to(device).eval()
    policy = Policy(model, tokenizer, spec)
    if lora_rank > 0:
        policy = _with_lora(policy, lora_rank, lora_alpha)
    return policy


def tiny_model(tokenizer: Any, *, seed: int = 0, hidden: int = 64, layers: int = 2) -> Any:
    """A randomly initialized Llama for ``tokenizer``: two layers of width 64 (3.3M weights,
    nearly all the embedding table), seeded, so every test starts from the same weights."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=4 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


def _with_lora(policy: Policy, rank: int, alpha: int) -> Policy:
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as error:
        raise UsageError("LoRA needs peft: pip install 'agentgym[train]'") from error
    config = LoraConfig(r=rank, lora_alpha=alpha, target_modules="all-linear", lora_dropout=0.0)
    model = get_peft_model(policy.model, config)
    model.eval()
    return Policy(model, policy.tokenizer, policy.spec, lora=True)
