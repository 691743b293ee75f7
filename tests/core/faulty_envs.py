"""Test doubles for the evaluator's fault handling: Tower of Hanoi with injected failures.

They measure the evaluator (retries, timeouts, errored records), not the game, so each is the
real Hanoi env with one fault added. A class-level registry of attempts makes "flaky" fail
only the first time a task is reset, across env instances (the retry makes a new env).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from agentgym.envs.games.puzzles.hanoi import TowerOfHanoiEnv

_attempts: dict[str, int] = {}
_lock = threading.Lock()


class FaultyHanoi(TowerOfHanoiEnv):
    """``fault``: raise_on_step, hang_on_step, flaky_reset, slow_step (``delay`` seconds)."""

    def __init__(self, fault: str = "none", delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fault, self.delay = fault, delay

    def reset(self, *, seed=None, options=None):
        task_id = (options or {}).get("task_id", "")
        if self.fault == "flaky_reset":
            with _lock:
                _attempts[task_id] = _attempts.get(task_id, 0) + 1
                first = _attempts[task_id] == 1
            if first:
                raise ConnectionError(f"simulated infrastructure failure on {task_id}")
        return super().reset(seed=seed, options=options)

    def step(self, action):
        if self.fault == "raise_on_step":
            raise RuntimeError("simulated env crash")
        if self.fault == "hang_on_step":
            time.sleep(3600)
        if self.fault == "slow_step":
            time.sleep(self.delay)
        return super().step(action)
