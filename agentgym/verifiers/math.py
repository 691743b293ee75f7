"""Math verifiers: find the final answer in a reply, and decide if it equals the gold one.

**Extraction** (:func:`extract_answer`), in order of trust: the last ``\\boxed{...}`` (braces
nested), GSM8K's ``#### 42``, "the answer is ...", "answer: ...", and last, the last number
in the text. Models are told to box their answer; the fallbacks keep a correct but unboxed
answer from scoring 0.

**Equivalence** (:func:`math_equal`): HuggingFace's ``math-verify`` parses both sides (LaTeX or
plain: fractions, ``\\frac12``, percentages, units stripped, sets and intervals, equations)
into SymPy and compares them symbolically and numerically, so ``1/2``, ``0.5`` and
``\\frac{1}{2}`` agree and ``0.51`` does not. Before it, a plain numeric comparison with a
relative tolerance handles the common case (``1,000`` vs ``1000.0``) without SymPy.

math-verify bounds its own time with ``SIGALRM``, which only the main thread may use; the
evaluator runs env steps on worker threads, so there the bound is ours: a reply longer than
``MAX_ANSWER_CHARS`` is not parsed (it is not an answer), and SymPy gets no alarm.

A reply with no readable answer scores 0 (the agent's mistake); a gold answer that cannot be
parsed raises :class:`~agentgym.errors.VerifierError` (the task's fault: it cannot be judged).
"""

from __future__ import annotations

import logging
import math
import re
import threading

from agentgym.core import Verdict
from agentgym.errors import MissingExtraError, VerifierError

__all__ = ["MAX_ANSWER_CHARS", "extract_answer", "math_equal", "stated_answer", "verify_math"]

MAX_ANSWER_CHARS = 400

_ANSWER_IS = re.compile(
    r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*:?\s*\$*([^\n$]+?)\$*\s*(?:\.\s*)?$",
    re.IGNORECASE | re.MULTILINE,
)
_HASHES = re.compile(r"####\s*([^\n]+)")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")


def _last_boxed(text: str) -> str | None:
    """The contents of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced."""
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    opening = text.find("{", start)
    if opening < 0:
        return None
    depth = 0
    for index in range(opening, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[opening + 1 : index].strip()
    return None  # unclosed: cut by the token limit


def stated_answer(text: str) -> str | None:
    """The answer ``text`` marks as final (boxed, ``####``, "the answer is"), or None."""
    boxed = _last_boxed(text)
    if boxed:
        return boxed
    for pattern in (_HASHES, _ANSWER_IS):
        hits = [h.strip() for h in pattern.findall(text) if h.strip()]
        if hits:
            return hits[-1]
    return None


def extract_answer(text: str) -> str | None:
    """The final answer stated in ``text``, else its last number (see the module docstring)."""
    stated = stated_answer(text)
    if stated is not None:
        return stated
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else None


_UNIT = re.compile(r"^(\S+)\s+(?:[A-Za-z]{2,}\s*)+$")  # "12 dollars", "3.5 km" (not "2x")


def _as_number(text: str) -> float | None:
    with_unit = _UNIT.match(text.strip())
    text = with_unit.group(1) if with_unit else text
    cleaned = re.sub(r"[\s,$%]|\\[$%]|\\!|\\,", "", text).rstrip(".")
    cleaned = re.sub(r"^\\?\(|\\?\)$", "", cleaned)
    try:
        if re.fullmatch(r"-?\d+/\d+", cleaned):
            numerator, denominator = cleaned.split("/")
            return int(numerator) / int(denominator)
        return float(cleaned)
    except (ValueError, ZeroDivisionError):
        return None


def math_equal(prediction: str, gold: str, *, tolerance: float = 1e-6) -> bool:
    """Whether two answers are mathematically equal (numerically within a relative
    ``tolerance``, else symbolically by math-verify)."""
    if len(prediction) > MAX_ANSWER_CHARS:
        return False
    a, b = _as_number(prediction), _as_number(gold)
    if a is not None and b is not None:
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    try:
        from math_verify import parse, verify
    except ImportError as error:
        raise MissingExtraError(
            "the math verifier needs math-verify: pip install 'agentgym[reasoning]'"
        ) from error
    main = threading.current_thread() is threading.main_thread()
    seconds = 5 if main else None  # SIGALRM only works on the main thread
    # Without the alarm math-verify warns that the caller must bound the time: we do (above).
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    parsed_gold = parse(_math_mode(gold), parsing_timeout=seconds)
    if not any(not isinstance(item, str) for item in parsed_gold):  # only the raw-text fallback
        raise VerifierError(f"the gold answer {gold!r} cannot be parsed as math")
    parsed = parse(_math_mode(prediction), parsing_timeout=seconds)
    if not parsed:
        return False
    return bool(verify(parsed_gold, parsed, timeout_seconds=seconds))


def _math_mode(answer: str) -> str:
    """Wrap a bare answer in ``$...$`` so math-verify reads it as LaTeX (intervals, fracs)."""
    stripped = answer.strip()
    return stripped if "$" in stripped or "\\boxed" in stripped else f"${stripped}$"


def verify_math(response: str, gold: str, *, tolerance: float = 1e-6) -> Verdict:
    """Extract the answer from ``response`` and compare it with ``gold``."""
    answer = extract_answer(response)
    if answer is None:
        return Verdict(0.0, False, {"extracted": 0.0, "correct": 0.0}, "no answer found")
    right = math_equal(answer, gold, tolerance=tolerance)
    return Verdict(
        float(right),
        right,
        {"extracted": 1.0, "correct": float(right)},
        f"answer {answer!r} {'equals' if right else 'does not equal'} {gold!r}",
    )
