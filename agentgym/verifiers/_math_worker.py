"""The math verifier's worker: parses and compares answers with math-verify, in its own process.

:mod:`agentgym.verifiers.math` starts this file as a long-lived child process (``python -c``
running it by path, so it imports neither ``agentgym`` nor anything beside it) and talks to it
over its standard streams, one JSON object a line:

* request ``{"op": "gold", "gold": G}``: reply ``{"ok": true}`` when math-verify reads ``G``;
* request ``{"op": "equal", "answer": A, "gold": G}``: reply ``{"equal": bool}``, with
  ``"why"`` when the answer was not judged on its merits (refused as too large, or an
  exception).

math-verify parses without evaluating (``9^{9^{9}}`` stays a power), and SymPy evaluates when
they are compared. Before that, :func:`_digits` bounds from the parsed tree how many digits
the exact numbers of the answer could have, and how many terms its sums and products with
numbers as bounds add up; an answer past :data:`MAX_DIGITS` (or twice the gold's own bound,
for a gold that is itself huge) or :data:`MAX_TERMS` is refused at once, so a power tower
costs milliseconds and no deadline. Anything else the answer causes here (an exception of any kind,
a runaway SymPy computation, a recursion or memory blow-up that kills this process) is the
answer's failure too; the parent holds the deadline and kills this process when it passes.
This file has no deadline of its own, so math-verify's ``SIGALRM`` timers are off.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
from typing import Any

_LOGIC = re.compile(
    r"\\(?:lor|land|vee|wedge|lnot|neg|implies|impliedby|iff"
    r"|Rightarrow|Leftrightarrow|Longrightarrow)(?![A-Za-z])"
)


MAX_DIGITS = 10_000
"""The most digits an answer's exact numbers may reach before it is refused unevaluated
(``2^{33000}``, ``3000!``: milliseconds for SymPy; ``9^{9^{9}}``: minutes and gigabytes)."""

_BIG = 1e300  # past this a bound is infinite for our purpose (float overflow stays away)
_LOG10_2 = math.log10(2)
_FACTORIAL_LIKE = frozenset(
    {"factorial", "factorial2", "subfactorial", "gamma", "RisingFactorial", "FallingFactorial"}
    | {"binomial", "fibonacci", "lucas", "catalan", "bell", "primorial"}
)
_EXPONENTIAL = frozenset({"exp", "sinh", "cosh"})


MAX_TERMS = 10_000
"""The most terms a sum or product with numbers as bounds may have (SymPy adds them one by
one: ``\\sum_{i=1}^{10^{7}} i`` would take minutes)."""


class _TooLarge(Exception):
    """An answer whose exact evaluation would pass the digits or terms allowed."""


def _at_most(log10_bound: float) -> float:
    """``10 ** log10_bound``, saturating at :data:`_BIG` instead of overflowing."""
    return _BIG if log10_bound > 300 else 10.0**log10_bound


def _too_many_digits(size: float, limit: float) -> str:
    written = f"{size:.3g}" if size < _BIG else "unboundedly many"
    return f"its exact value would have {written} digits, over the {limit:.0f} allowed"


def _digits(
    expression: object, limit: float, ranges: dict[Any, Any] | None = None
) -> tuple[float, float]:
    """Upper bounds, from the unevaluated tree, on log10 of ``expression``'s absolute value and
    on the digits of its exact value (numerator or denominator); raises :class:`_TooLarge`
    when a part of it passes ``limit`` digits. Symbols and constants count as a number near 3
    (``(x+1)^{10^6}`` expands to a million terms), the index of a sum as its largest value
    (``ranges``); a root is as small as its exponent says (``\\sqrt[10^9]{2}`` is no large
    number)."""
    from sympy import Add, Basic, Float, Function, Mul, Pow, Product, Rational, Sum

    ranges = ranges or {}
    if not isinstance(expression, Basic):
        return 0.0, 0.0
    if isinstance(expression, Rational):
        p, q = abs(expression.p), expression.q
        return (math.log10(p) - math.log10(q) if p else 0.0), math.log10(max(p, q))
    if isinstance(expression, Float):
        value = abs(float(expression))
        magnitude = math.log10(value) if 0 < value < math.inf else (0.0 if value == 0 else _BIG)
        return magnitude, abs(magnitude)
    if not expression.args:  # a symbol, pi, E, I, oo
        return (ranges[expression],) * 2 if expression in ranges else (0.5, 0.5)
    if isinstance(expression, Sum | Product):
        return _series_digits(expression, limit, ranges)
    bounds = [_digits(argument, limit, ranges) for argument in expression.args]
    magnitudes = [magnitude for magnitude, _ in bounds]
    digits = [size for _, size in bounds]
    name = type(expression).__name__ if isinstance(expression, Function) else ""
    if isinstance(expression, Mul):
        magnitude, size = sum(magnitudes), sum(digits)
    elif isinstance(expression, Add):
        magnitude, size = max(magnitudes) + math.log10(len(bounds)), sum(digits)
    elif isinstance(expression, Pow):
        (base_magnitude, base_digits), (exponent_magnitude, _) = bounds
        scale = max(base_digits, abs(base_magnitude)) if base_digits else 0.0  # 0, 1, -1
        magnitude = size = _at_most(exponent_magnitude) * scale if scale else 0.0
    elif name in _FACTORIAL_LIKE:
        n = _at_most(max(magnitudes))
        magnitude = size = n * math.log10(max(n, 2.0))  # n! <= n^n, C(n, k) <= 2^n
    elif name in _EXPONENTIAL:
        magnitude = size = _at_most(max(magnitudes)) * math.log10(math.e)
    else:  # sets, tuples, relations, other functions: as large as their largest part
        magnitude, size = max(magnitudes), max(digits)
    if size > limit:
        raise _TooLarge(_too_many_digits(size, limit))
    return magnitude, size


def _series_digits(series: Any, limit: float, ranges: dict[Any, Any]) -> tuple[float, float]:
    """:func:`_digits` of a sum or product: with numbers as bounds, it has at most
    :data:`MAX_TERMS` terms, each bounded with its index at the largest bound; with other
    bounds (``n``, ``\\infty``) SymPy finds a closed form or gives up, under the deadline."""
    from sympy import Product, oo, zoo

    term, *limits = series.args
    count, inner = 1.0, dict(ranges)
    for index, low, high in limits:
        if any(bound.free_symbols or bound.has(oo, -oo, zoo) for bound in (low, high)):
            return _digits(term, limit, inner)
        largest = max(_digits(low, limit, ranges)[0], _digits(high, limit, ranges)[0])
        count *= _at_most(_digits(low, limit, ranges)[0]) + _at_most(largest) + 1
        inner[index] = largest
    if count > MAX_TERMS:
        raise _TooLarge(f"it has up to {count:.3g} terms, over the {MAX_TERMS} allowed")
    magnitude, size = _digits(term, limit, inner)
    if isinstance(series, Product):
        magnitude, size = count * magnitude, count * size
    else:
        magnitude, size = magnitude + math.log10(count), count * size
    if size > limit:
        raise _TooLarge(_too_many_digits(size, limit))
    return magnitude, size


def _refusal(answer: list[Any], gold: list[Any]) -> str | None:
    """Why the parsed ``answer`` is too large to evaluate against the parsed ``gold``, or None."""
    gold_size = max((_digits(item, math.inf)[1] for item in gold), default=0.0)
    limit = max(MAX_DIGITS, 2 * gold_size)
    try:
        for item in answer:
            _digits(item, limit)
    except _TooLarge as error:
        return f"not evaluated: {error}"
    return None


def _read(text: str) -> list[Any]:
    """math-verify's reading of ``text``: LaTeX first (wrapped in ``$`` when bare), then plain."""
    from math_verify import parse

    stripped = text.strip()
    marked = any(mark in stripped for mark in ("$", "\\boxed", "\\(", "\\["))
    parsed = parse(stripped if marked else f"${stripped}$", parsing_timeout=None)
    if not any(not isinstance(item, str) for item in parsed):
        parsed = parse(stripped, parsing_timeout=None) or parsed
    return list(parsed)


def _statement(expression: object) -> bool:
    from sympy.core.relational import Relational
    from sympy.logic.boolalg import BooleanAtom, BooleanFunction

    return isinstance(expression, Relational | BooleanFunction | BooleanAtom)


def _assignment(expression: object) -> bool:
    """``x = 5``, ``f(x) = 2x``, ``(x, y) = (1, 2)``: names on the left, a value on the right."""
    from sympy import Eq, Indexed, Symbol, Tuple
    from sympy.core.function import AppliedUndef

    names = Symbol | AppliedUndef | Indexed
    if not isinstance(expression, Eq) or _statement(expression.rhs):
        return False
    left = expression.lhs
    return isinstance(left, names) or (
        isinstance(left, Tuple) and all(isinstance(item, names) for item in left)
    )


def _equal(answer: str, gold: str) -> dict[str, Any]:
    from math_verify import verify

    if _LOGIC.search(answer) and not _LOGIC.search(gold):
        return {"equal": False}  # "5 \lor 6" is not a value, whatever math-verify reads
    gold_parsed, parsed = _read(gold), _read(answer)
    values = [item for item in parsed if not isinstance(item, str)]
    gold_values = [item for item in gold_parsed if not isinstance(item, str)]
    refusal = _refusal(values, gold_values)
    if refusal:
        return {"equal": False, "why": refusal}
    gold_states = any(_statement(item) for item in gold_values)
    if not gold_states and any(_statement(item) and not _assignment(item) for item in values):
        return {"equal": False}  # against a value, "7 = 5" or "1 = 1" is not judged by one side
    return {"equal": bool(verify(gold_parsed, parsed, timeout_seconds=None))}


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    if request["op"] == "gold":
        parsed = _read(request["gold"])
        return {"ok": any(not isinstance(item, str) for item in parsed)}
    try:
        return _equal(request["answer"], request["gold"])
    except BaseException as error:  # anything the answer causes fails it
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        why = f"its comparison raised {type(error).__name__}: {error}"[:200]
        return {"equal": False, "why": why}


def main() -> None:
    protocol = sys.stdout
    sys.stdout = sys.stderr  # nothing else may write on the protocol stream
    logging.disable(logging.CRITICAL)
    sys.setrecursionlimit(10_000)
    try:
        import math_verify  # noqa: F401
    except ImportError as error:
        protocol.write(json.dumps({"ready": False, "missing": str(error)}) + "\n")
        protocol.flush()
        return
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        try:
            reply = _answer(json.loads(line))
        except Exception as error:  # a malformed request is reported
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"[:200]}
        protocol.write(json.dumps(reply) + "\n")
        protocol.flush()


if __name__ == "__main__":
    main()
