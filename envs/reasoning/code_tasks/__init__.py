"""Programming problems for the code envs: the project's own generated set, and dataset files.

A :class:`CodeProblem` is what one task is about: the prompt the agent reads, the function it
must write, the reference solution (the oracle), visible examples and hidden tests, both as
:class:`~agentgym.verifiers.code.CodeTests`.

The built-in set (:func:`generate`) is 37 problem templates (:class:`Problem`) in three
levels (:mod:`.easy`, :mod:`.medium`, :mod:`.hard`). A seed picks a template of its level,
draws the template's parameters (the multiples in a sum, the shift of a cipher, the coins of
a change problem, the direction of a rotation...) and the hidden inputs; the expected outputs
are computed by running the reference solution here, on the host (it is the project's own
code). So every seed is a task with its own statement or its own hidden tests, and the train,
dev and test splits hold as many tasks as there are seeds. Splits share templates, not tasks.

Dataset files (HumanEval and MBPP JSONL) are read by :mod:`.datasets`.
"""

from __future__ import annotations

import numpy as np

from agentgym.envs.reasoning.code_tasks import easy, hard, medium
from agentgym.envs.reasoning.code_tasks.base import CodeProblem, Problem

__all__ = ["LEVELS", "PROBLEMS", "CodeProblem", "Problem", "generate"]

LEVELS = ("easy", "medium", "hard")

PROBLEMS: dict[str, tuple[Problem, ...]] = {
    "easy": easy.PROBLEMS,
    "medium": medium.PROBLEMS,
    "hard": hard.PROBLEMS,
}


def generate(difficulty: str, seed: int) -> CodeProblem:
    """The task of a level and a seed: a template, its parameters and its hidden inputs."""
    if difficulty not in PROBLEMS:
        raise ValueError(f"unknown difficulty {difficulty!r}; levels are {list(LEVELS)}")
    rng = np.random.default_rng(seed)
    templates = PROBLEMS[difficulty]
    return templates[int(rng.integers(len(templates)))].instance(rng)
