"""What the two conformance checkers share (:mod:`agentgym.checker` for Gymnasium envs,
:mod:`agentgym.multiagent_checker` for PettingZoo ones): an env made for one check and always
closed, and the tasks a check runs on, drawn from every split and difficulty."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = ["drawn_tasks", "made", "more_tasks"]


class _Closable(Protocol):
    def close(self) -> None: ...


EnvT = TypeVar("EnvT", bound=_Closable)


@contextlib.contextmanager
def made(factory: Callable[[], EnvT]) -> Iterator[EnvT]:
    """A fresh env from ``factory``, closed when the check is done with it, pass or fail."""
    env = factory()
    try:
        yield env
    finally:
        env.close()


def drawn_tasks(tasks: Any, seed: int, per_split: int) -> list[str]:
    """Up to ``per_split`` task ids of each split and difficulty of a task set, drawn with
    ``seed`` (a check samples every cell, not the first ids of one)."""
    rng = np.random.default_rng(seed)
    chosen = []
    for split in tasks.splits:
        for difficulty in tasks.difficulties:
            ids = tasks.ids(split, difficulty)
            for index in rng.choice(len(ids), size=min(per_split, len(ids)), replace=False):
                chosen.append(ids[int(index)])
    return chosen


def more_tasks(env: Any, tasks: Sequence[str], seed: int, count: int) -> list[str]:
    """``tasks``, then other tasks of ``env`` (an agentgym env, maybe wrapped) of every split
    and difficulty, drawn with ``seed``, until there are ``count`` of them, or as many as the
    env has."""
    chosen = list(dict.fromkeys(tasks))
    task_set = env.unwrapped.tasks
    cells = len(task_set.splits) * len(task_set.difficulties)
    per_split = -(-count // cells)
    for draw in itertools.count(1):
        if len(chosen) >= count:
            break
        before = len(chosen)
        chosen.extend(t for t in drawn_tasks(task_set, seed + draw, per_split) if t not in chosen)
        if len(chosen) == before and draw > 3:  # the env has no more tasks
            break
    return chosen
