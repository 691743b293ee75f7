"""Sampling settings every LLM backend reads the same way, and the seed of each turn.

``EpisodeContext.sampling`` (from a benchmark's ``sampling:`` block) is a plain dict; each
backend parses it with :meth:`SamplingParams.from_dict`, so a key no backend understands is
an error before the first token rather than a setting silently ignored.

:func:`turn_seed` gives each model call of an episode its own seed, derived from the episode
seed and the turn: an episode's samples then do not depend on which other episodes shared a
batch or a server, and a rerun with the same seeds samples the same tokens wherever the
backend honours seeds (``hf`` always; ``vllm`` and most servers do).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym.errors import UsageError
from agentgym.seeding import derive

__all__ = ["SAMPLING_KEYS", "SamplingParams", "turn_seed"]

SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens")


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings of one request. ``temperature == 0`` means greedy."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0: no top-k cut
    max_tokens: int = 256

    @classmethod
    def from_dict(cls, sampling: dict[str, Any]) -> SamplingParams:
        """Parse ``EpisodeContext.sampling``; a key no backend can honour is an error."""
        unknown = sorted(set(sampling) - set(SAMPLING_KEYS))
        if unknown:
            raise UsageError(
                f"unsupported sampling parameter(s) {unknown}; supported: {list(SAMPLING_KEYS)}"
            )
        params = cls(**{k: sampling[k] for k in SAMPLING_KEYS if sampling.get(k) is not None})
        if not isinstance(params.temperature, (int, float)) or params.temperature < 0:
            raise UsageError(f"temperature must be a number >= 0, got {params.temperature!r}")
        if not isinstance(params.top_p, (int, float)) or not 0 < params.top_p <= 1:
            raise UsageError(f"top_p must be in (0, 1], got {params.top_p!r}")
        if not isinstance(params.top_k, int) or params.top_k < 0:
            raise UsageError(f"top_k must be an int >= 0, got {params.top_k!r}")
        if not isinstance(params.max_tokens, int) or params.max_tokens < 1:
            raise UsageError(f"max_tokens must be a positive int, got {params.max_tokens!r}")
        return params


def turn_seed(episode_seed: int, turn: int) -> int:
    """The seed of an episode's ``turn``-th model call (a 32-bit int: servers accept it)."""
    return derive(episode_seed, "turn", turn, bits=32)
