"""The contract of a token backend: a model that continues token ids, shared by a run.

:class:`TokenBackend` is what the in-process engines (:mod:`~agentgym.backends.hf`,
:mod:`~agentgym.backends.vllm`) implement and what :class:`~agentgym.agents.chat.TokenAgent`
drives: prompts go through the tokenizer's own chat template (:func:`render_prompt`), and each
generation returns the exact completion ids and their logprobs, which the ledger records.
"""

from __future__ import annotations

from typing import Any, Protocol

from agentgym.backends.sampling import SamplingParams
from agentgym.errors import UsageError

__all__ = ["Generation", "TokenBackend", "render_prompt"]


class Generation(Protocol):
    """What a token backend returns for one prompt."""

    completion_ids: list[int]
    logprobs: list[float]


class TokenBackend:
    """A model that continues token ids (``hf``, ``vllm``), shared by a run's agents.

    Prompts go through the tokenizer's own chat template and completions come back to text
    here; subclasses set ``self.tokenizer`` and implement :meth:`generate`.
    """

    tokenizer: Any

    def encode(self, messages: list[dict[str, Any]]) -> list[int]:
        """Prompt token ids for chat ``messages`` (the tokenizer's chat template)."""
        return render_prompt(self.tokenizer, messages)

    def decode(self, ids: list[int]) -> str:
        """Text of completion ids, without special tokens (the end-of-turn marker)."""
        return str(self.tokenizer.decode(ids, skip_special_tokens=True))

    async def generate(self, prompt_ids: list[int], params: SamplingParams, seed: int) -> Any:
        """Continue ``prompt_ids``: a :class:`Generation`."""
        raise NotImplementedError


def render_prompt(tokenizer: Any, messages: list[dict[str, Any]]) -> list[int]:
    """Token ids of ``messages`` through the tokenizer's own chat template, ready to generate.

    The template is rendered to text and then tokenized without extra special tokens: the
    template already writes the BOS and role markers the model was trained with.
    """
    if not getattr(tokenizer, "chat_template", None):
        raise UsageError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', tokenizer)!r} has no chat template; "
            f"an LLM agent needs a chat (instruct) model"
        )
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])
