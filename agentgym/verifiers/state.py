"""State verifiers: named predicates over an env's final state (a database, a page, a repo).

Families with state (web apps, SWE repositories, simulated users) judge what the world looks
like at the end, not what the agent said: "the order exists and is paid", "the test file is
unchanged". A :class:`StateCheck` names one predicate and its weight; :func:`verify_state`
runs them all and reports each as a component, so a report can say which part failed.

A predicate that **raises** (the state lacks a field the check reads, a query fails) is not a
failed check: the verifier cannot judge, and :class:`~agentgym.errors.VerifierError` says
which check broke. Return False for "checked, and not so".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentgym.core import Verdict
from agentgym.errors import UsageError, VerifierError

__all__ = ["StateCheck", "verify_state"]


@dataclass(frozen=True)
class StateCheck:
    """One named predicate over the final state, with its weight in the score."""

    name: str
    predicate: Callable[[Any], bool]
    weight: float = 1.0
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name or self.weight <= 0:
            raise UsageError(f"a StateCheck needs a name and a positive weight: {self!r}")


def verify_state(state: Any, checks: Sequence[StateCheck]) -> Verdict:
    """Score = the weighted share of checks that hold; pass = all hold."""
    if not checks:
        raise UsageError("verify_state needs at least one check")
    if len({c.name for c in checks}) != len(checks):
        raise UsageError(f"check names must be unique: {[c.name for c in checks]}")
    results: dict[str, float] = {}
    for check in checks:
        try:
            results[check.name] = float(bool(check.predicate(state)))
        except Exception as error:
            raise VerifierError(
                f"state check {check.name!r} could not be evaluated: "
                f"{type(error).__name__}: {error}"
            ) from error
    total = sum(c.weight for c in checks)
    score = sum(c.weight * results[c.name] for c in checks) / total
    failed = [c.description or c.name for c in checks if not results[c.name]]
    return Verdict(
        min(score, 1.0),
        not failed,
        results,
        "all checks hold" if not failed else "failed: " + "; ".join(failed),
    )
