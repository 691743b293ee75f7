"""Fixtures of the baseline tests; the fast settings are in ``training.py``."""

from __future__ import annotations

import os
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
    replies with a direction and picks it about as the random agent does (near chance).

    Trained once per test run: the first pytest-xdist worker to ask trains it under a lock in
    the run's shared temporary directory, the others wait for it and load the same weights.
    """
    from agentgym.baselines import expert_iteration
    from agentgym.cache import exclusive

    base = tmp_path_factory.getbasetemp()  # a worker's is inside the run's
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "warm-start"
    with exclusive(shared / "warm-start.lock"):
        done = out / "policy-path"
        if not done.is_file():
            args = fast_args(
                "expert_iteration",
                out,
                model="tiny",
                demos="random",
                keep="all",
                iterations=6,
                learning_rate=3e-3,
            )
            checkpoint = expert_iteration.train(args).latest_checkpoint()
            assert checkpoint is not None
            done.write_text(str(checkpoint / "policy"))
        return Path(done.read_text())
