"""Composing verdicts: weighted sum, gate, product, and process rewards beside the outcome.

Every part is first scaled to ``[0, 1]`` (its score over its ``max_score``), so parts with
different scales compose; the result's components keep each part's scaled score under its
name (and the parts' own components as ``name.component``), so a report can still say where
the score came from.

* :func:`weighted_sum` — partial credit from several criteria (passes when every part does);
* :func:`gate` — a format or safety check that zeroes the score when it fails
  ("a well-formed answer, then its correctness");
* :func:`product` — every part must hold; any zero makes zero;
* :func:`with_process` — per-step (process) rewards recorded next to the outcome, and mixed
  into the score only with an explicit weight: trainers that want step-level credit (PRMs,
  GiGPO-style) read the components, outcome-only scoring stays the default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentgym.core import Verdict
from agentgym.errors import UsageError

__all__ = ["gate", "product", "weighted_sum", "with_process"]


def _scaled(verdict: Verdict) -> float:
    return verdict.score / verdict.max_score if verdict.max_score else 0.0


def _components(parts: Mapping[str, Verdict]) -> dict[str, float]:
    found: dict[str, float] = {}
    for name, verdict in parts.items():
        found[name] = _scaled(verdict)
        found.update({f"{name}.{k}": float(v) for k, v in verdict.components.items()})
    return found


def weighted_sum(parts: Mapping[str, tuple[Verdict, float]]) -> Verdict:
    """Score = the weight-averaged scaled scores; pass = every part passed."""
    if not parts or any(weight < 0 for _, weight in parts.values()):
        raise UsageError("weighted_sum needs parts with non-negative weights")
    total = sum(weight for _, weight in parts.values())
    if total <= 0:
        raise UsageError("weighted_sum needs a positive total weight")
    score = sum(_scaled(v) * w for v, w in parts.values()) / total
    verdicts = {name: verdict for name, (verdict, _) in parts.items()}
    return Verdict(
        min(score, 1.0),
        all(v.passed for v in verdicts.values()),
        _components(verdicts),
        "; ".join(f"{name}: {v.details}" for name, v in verdicts.items()),
    )


def gate(condition: Verdict, then: Verdict, *, name: str = "gate") -> Verdict:
    """``then``'s verdict when ``condition`` passed; else 0 with the condition's reason."""
    parts = {name: condition, "score": then}
    if not condition.passed:
        return Verdict(0.0, False, _components(parts), f"{name} failed: {condition.details}")
    return Verdict(_scaled(then), then.passed, _components(parts), then.details)


def product(parts: Mapping[str, Verdict]) -> Verdict:
    """Score = the product of the scaled scores; pass = every part passed."""
    if not parts:
        raise UsageError("product needs at least one part")
    score = 1.0
    for verdict in parts.values():
        score *= _scaled(verdict)
    return Verdict(
        score,
        all(v.passed for v in parts.values()),
        _components(parts),
        "; ".join(f"{name}: {v.details}" for name, v in parts.items()),
    )


def with_process(
    outcome: Verdict, step_scores: Sequence[float], *, process_weight: float = 0.0
) -> Verdict:
    """The outcome with per-step rewards beside it (``process.mean``, ``process.min``,
    ``process.step_i``); ``process_weight`` > 0 mixes their mean into the score."""
    if not 0.0 <= process_weight <= 1.0:
        raise UsageError(f"process_weight must be in [0, 1], got {process_weight!r}")
    if any(not 0.0 <= s <= 1.0 for s in step_scores):
        raise UsageError(f"step scores must be in [0, 1], got {list(step_scores)!r}")
    mean = sum(step_scores) / len(step_scores) if step_scores else 0.0
    components = {"outcome": _scaled(outcome), **dict(outcome.components)}
    components |= {f"process.step_{i}": float(s) for i, s in enumerate(step_scores)}
    components |= {"process.mean": mean, "process.min": min(step_scores, default=0.0)}
    score = (1 - process_weight) * _scaled(outcome) + process_weight * mean
    return Verdict(score, outcome.passed, components, outcome.details)
