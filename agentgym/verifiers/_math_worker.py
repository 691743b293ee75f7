"""The math verifier's worker: parses and compares answers with math-verify, in its own process.

:mod:`agentgym.verifiers.math` starts this file as a long-lived child process (``python -c``
running it by path, so it imports neither ``agentgym`` nor anything beside it) and talks to it
over its standard streams, one JSON object a line:

* request ``{"op": "gold", "gold": G}``: reply ``{"ok": true}`` when math-verify reads ``G``;
* request ``{"op": "equal", "answer": A, "gold": G}``: reply ``{"equal": bool}``.

Anything the answer causes here (an exception of any kind, a runaway SymPy computation, a
recursion or memory blow-up that kills this process) is the answer's failure; the parent holds
the deadline and kills this process when it passes. This file has no deadline of its own, so
math-verify's ``SIGALRM`` timers are off.
"""

from __future__ import annotations

import json
import logging
import re
import sys

_LOGIC = re.compile(
    r"\\(?:lor|land|vee|wedge|lnot|neg|implies|impliedby|iff"
    r"|Rightarrow|Leftrightarrow|Longrightarrow)(?![A-Za-z])"
)


def _read(text: str) -> list:
    """math-verify's reading of ``text``: LaTeX first (wrapped in ``$`` when bare), then plain."""
    from math_verify import parse

    stripped = text.strip()
    marked = any(mark in stripped for mark in ("$", "\\boxed", "\\(", "\\["))
    parsed = parse(stripped if marked else f"${stripped}$", parsing_timeout=None)
    if not any(not isinstance(item, str) for item in parsed):
        parsed = parse(stripped, parsing_timeout=None) or parsed
    return parsed


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


def _equal(answer: str, gold: str) -> bool:
    from math_verify import verify

    if _LOGIC.search(answer) and not _LOGIC.search(gold):
        return False  # "5 \lor 6" is not a value, whatever math-verify reads from it
    gold_parsed, parsed = _read(gold), _read(answer)
    values = [item for item in parsed if not isinstance(item, str)]
    gold_states = any(_statement(item) for item in gold_parsed if not isinstance(item, str))
    if not gold_states and any(_statement(item) and not _assignment(item) for item in values):
        return False  # against a value, "7 = 5" or "1 = 1" is not judged by one side
    return bool(verify(gold_parsed, parsed, timeout_seconds=None))


def _answer(request: dict) -> dict:
    if request["op"] == "gold":
        parsed = _read(request["gold"])
        return {"ok": any(not isinstance(item, str) for item in parsed)}
    try:
        return {"equal": _equal(request["answer"], request["gold"])}
    except BaseException as error:  # anything the answer causes fails it
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        return {"equal": False, "error": f"{type(error).__name__}: {error}"[:200]}


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
