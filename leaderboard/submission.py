"""What a submitter says about a submission (the bundle's ``submission.json``): who ran which
agent on which model, how. Shown on the board, never trusted for a number."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from agentgym.errors import UsageError

__all__ = ["METHODS", "Method", "SubmissionInfo"]

Method = Literal["standard", "custom"]
"""``standard``: the benchmark's prompts, tools and one attempt per episode, as
``agentgym eval`` runs them; ``custom``: anything else (say what in ``notes``)."""
METHODS: tuple[Method, ...] = ("standard", "custom")

MAX_TEXT = 2_000
"""The longest text field a submission may carry (notes included)."""
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


@dataclass(frozen=True)
class SubmissionInfo:
    """The submitter's own description of a run.

    Attributes:
        agent: the agent's name on the board.
        model: the model's id (``HuggingFaceTB/SmolLM2-135M-Instruct``, ``gpt-4o``...).
        model_revision: the pinned revision (a commit sha, a dated snapshot name).
        method: ``standard`` or ``custom`` (:data:`Method`).
        code_hash: a hash of the agent's code (a git commit), so a rerun can find it.
        contact: an address for the maintainers (not shown on the pages).
        notes: what a reader should know about the method.
    """

    agent: str
    model: str = ""
    model_revision: str = ""
    method: Method = "standard"
    code_hash: str = ""
    contact: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, str):
                raise UsageError(f"submission {f.name} must be text, got {type(value).__name__}")
            limit = MAX_TEXT if f.name == "notes" else 200
            if len(value) > limit:
                raise UsageError(
                    f"submission {f.name} is {len(value)} characters long; at most {limit}"
                )
            if any(ord(c) < 32 and c not in "\n\t" for c in value):
                raise UsageError(f"submission {f.name} holds control characters")
        if not self.agent.strip():
            raise UsageError("a submission needs an agent name (--agent-name)")
        if self.method not in METHODS:
            raise UsageError(f"submission method must be one of {METHODS}, got {self.method!r}")
        if self.code_hash and not _SHA.match(self.code_hash):
            raise UsageError(
                f"submission code_hash {self.code_hash!r} is not a hex digest (a git commit?)"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> SubmissionInfo:
        """Parse ``submission.json``; unknown keys are errors (a typo must not vanish)."""
        if not isinstance(data, dict):
            raise UsageError(f"submission.json holds {type(data).__name__}, not an object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"submission.json has unknown keys {unknown}; known: {sorted(known)}")
        return cls(**data)
