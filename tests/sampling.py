"""Sampled in the suite, whole under ``make check``.

Some checks are worth running over every task (a task-blind policy on every task of a
split, the oracle on every task of a suite), but not on every suite run: the suite has a
time budget (``docs/testing.md``). Such a test draws its cases with :func:`sample`, which
keeps a fixed sample of ``k`` in the suite and every case when
``AGENTGYM_FULL_CONFORMANCE=1`` is set, as ``make check`` sets it (or reads :data:`FULL`).
Mark such tests ``sampled`` so that ``make check`` finds them.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")

FULL = os.environ.get("AGENTGYM_FULL_CONFORMANCE") == "1"
"""Whether this run checks every case (``make check``) rather than the suite's sample."""


def sample(cases: Iterable[T], k: int, *, seed: int = 0) -> list[T]:
    """``k`` of ``cases`` in a fixed order (the same sample every run), or all of them
    under ``make check``."""
    cases = list(cases)
    if FULL or len(cases) <= k:
        return cases
    return random.Random(seed).sample(cases, k)
