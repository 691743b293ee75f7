"""Fixtures of the baseline tests; the fast settings are in ``training.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parent))

from training import fast_args


@pytest.fixture(scope="session")
def warm_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny policy after the format warm start: SFT on the random agent's episodes, so it
    replies with a direction and picks it about as the random agent does (near chance)."""
    from agentgym.baselines import expert_iteration

    out = tmp_path_factory.mktemp("warm-start")
    args = fast_args(
        "expert_iteration",
        out,
        model="tiny",
        demos="random",
        keep="all",
        iterations=6,
        learning_rate=3e-3,
    )
    run = expert_iteration.train(args)
    checkpoint = run.latest_checkpoint()
    assert checkpoint is not None
    return checkpoint / "policy"
