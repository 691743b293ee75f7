"""Reward verifiers as a library: every env, the evaluator and the leaderboard's re-scorer
judge with the same code.

A verifier takes what the agent produced (and the gold, or the state) and returns a
:class:`~agentgym.core.Verdict`: a score, whether it passed, named components and a sentence
saying why. When it **cannot** judge (the sandbox is gone, the judge endpoint is down, its
output cannot be parsed) it raises :class:`~agentgym.errors.VerifierError`, an infrastructure
error: the evaluator records the episode as errored, never as a reward of 0.

==============================  ===========================================================
:mod:`~agentgym.verifiers.text`   exact match, SQuAD-style F1, multiple choice, regex, length
:mod:`~agentgym.verifiers.math`   answer extraction and equivalence (math-verify), tolerance
:mod:`~agentgym.verifiers.code`   hidden unit tests in a sandbox, with log hardening
:mod:`~agentgym.verifiers.state`  predicates over an env's final state
:mod:`~agentgym.verifiers.judge`  an LLM judge with a rubric, and its agreement statistics
:mod:`~agentgym.verifiers.compose`  weighted sum, gate, product, process rewards
==============================  ===========================================================

See ``docs/verifiers.md``.
"""

from agentgym.core import Verdict
from agentgym.errors import VerifierError
from agentgym.verifiers.code import CodeTests, verify_code
from agentgym.verifiers.compose import gate, product, weighted_sum, with_process
from agentgym.verifiers.judge import (
    Judge,
    JudgeCall,
    JudgeModel,
    LabelledExample,
    cohens_kappa,
    judge_agreement,
)
from agentgym.verifiers.math import extract_answer, math_equal, verify_math
from agentgym.verifiers.state import StateCheck, verify_state
from agentgym.verifiers.text import (
    em_score,
    exact_match,
    f1_score,
    length_within,
    multiple_choice,
    normalize_answer,
    regex_match,
    token_f1,
)

__all__ = [
    "CodeTests",
    "Judge",
    "JudgeCall",
    "JudgeModel",
    "LabelledExample",
    "StateCheck",
    "Verdict",
    "VerifierError",
    "cohens_kappa",
    "em_score",
    "exact_match",
    "extract_answer",
    "f1_score",
    "gate",
    "judge_agreement",
    "length_within",
    "math_equal",
    "multiple_choice",
    "normalize_answer",
    "product",
    "regex_match",
    "token_f1",
    "verify_code",
    "verify_math",
    "verify_state",
    "weighted_sum",
    "with_process",
]
