"""Small, fast training setups shared by the baseline tests.

Every run is real: the product's trainers, the ``tiny`` policy (a randomly initialized
two-layer Llama with SmolLM2's tokenizer), the games family's FrozenLake through the
evaluator's engine. What makes them fast is size: one easy task, 4 groups of 8 episodes of
at most 10 steps, replies of at most 4 tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentgym.baselines.common import QUICK

FAST = {**QUICK, "checkpoint_every": 1000}


def fast_args(algorithm: str, output_dir: Path, **overrides: Any) -> Any:
    """The algorithm's ``Args`` with the fast settings (and ``overrides``)."""
    from agentgym.baselines.cli import load_algorithm

    values = {**FAST, "output_dir": str(output_dir), **overrides}
    return load_algorithm(algorithm).Args(**values)
