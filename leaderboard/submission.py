"""What a submitter says about a submission (the bundle's ``submission.json``): who ran which
agent on which model, how, and what the model is (organisation, open weights, size, link,
price). Shown on the board, never trusted for a number: the ranking is the replay's."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from agentgym.errors import UsageError

__all__ = ["METHODS", "Method", "SubmissionInfo", "format_parameters", "parse_parameters"]

Method = Literal["standard", "custom"]
"""``standard``: the benchmark's prompts, tools and one attempt per episode, as
``agentgym eval`` runs them; ``custom``: anything else (say what in ``notes``)."""
METHODS: tuple[Method, ...] = ("standard", "custom")

MAX_TEXT = 2_000
"""The longest text field a submission may carry (notes included)."""
_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_LINK = re.compile(r"^https?://[^\s/]+\S*$")
_SIZES = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
_PARAMETERS = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMBT]?)$", re.IGNORECASE)
TEXT_FIELDS = (
    "agent", "model", "model_revision", "method", "code_hash", "contact", "notes",
    "organisation", "link",
)  # fmt: skip
"""The fields that hold text (the others are numbers or a yes/no)."""
MAX_PRICE = 10_000.0
"""The highest price per million tokens taken (US dollars): above it, a typo."""


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
        organisation: who made the model (``HuggingFace``, ``Mistral AI``...).
        open_weights: whether the model's weights can be downloaded (None: not said).
        parameters: the model's parameter count (None: not said).
        link: a page about the model or the agent (``http(s)://`` only).
        price_prompt: US dollars per million prompt tokens (None: not said), for the
            board's cost column.
        price_completion: US dollars per million completion tokens (None: not said).
    """

    agent: str
    model: str = ""
    model_revision: str = ""
    method: Method = "standard"
    code_hash: str = ""
    contact: str = ""
    notes: str = ""
    organisation: str = ""
    open_weights: bool | None = None
    parameters: int | None = None
    link: str = ""
    price_prompt: float | None = None
    price_completion: float | None = None

    def __post_init__(self) -> None:
        for name in TEXT_FIELDS:
            _check_text(name, getattr(self, name))
        if not self.agent.strip():
            raise UsageError("a submission needs an agent name (--agent-name)")
        if self.method not in METHODS:
            raise UsageError(f"submission method must be one of {METHODS}, got {self.method!r}")
        if self.code_hash and not _SHA.match(self.code_hash):
            raise UsageError(
                f"submission code_hash {self.code_hash!r} is not a hex digest (a git commit?)"
            )
        if self.link and not _LINK.match(self.link):
            raise UsageError(f"submission link {self.link[:80]!r} is not an http(s):// address")
        if self.open_weights is not None and not isinstance(self.open_weights, bool):
            raise UsageError(
                f"submission open_weights must be true or false, got {self.open_weights!r}"
            )
        self._check_numbers()

    def _check_numbers(self) -> None:
        count = self.parameters
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise UsageError(f"submission parameters must be a whole number, got {count!r}")
        if count is not None and not 0 < count < 10**16:
            raise UsageError(f"submission parameters {count!r} is not a model's size")
        for name in ("price_prompt", "price_completion"):
            price = getattr(self, name)
            if price is None:
                continue
            if isinstance(price, bool) or not isinstance(price, int | float):
                raise UsageError(f"submission {name} must be a number, got {price!r}")
            if not (math.isfinite(price) and 0 <= price <= MAX_PRICE):
                raise UsageError(
                    f"submission {name} {price!r} is not a price per million tokens "
                    f"(0 to {MAX_PRICE:,.0f} US dollars)"
                )

    @property
    def priced(self) -> bool:
        """Whether both prices are known (what a cost needs)."""
        return self.price_prompt is not None and self.price_completion is not None

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float | None:
        """US dollars for these tokens at the given prices (None: a price is unknown)."""
        if self.price_prompt is None or self.price_completion is None:
            return None
        return (prompt_tokens * self.price_prompt + completion_tokens * self.price_completion) / 1e6

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


def _check_text(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise UsageError(f"submission {name} must be text, got {type(value).__name__}")
    limit = MAX_TEXT if name == "notes" else 200
    if len(value) > limit:
        raise UsageError(f"submission {name} is {len(value)} characters long; at most {limit}")
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        raise UsageError(f"submission {name} holds control characters")


def parse_parameters(text: str) -> int:
    """A parameter count from ``135M``, ``7B``, ``1.5T``, ``70000000`` (K, M, B, T: thousand,
    million, billion, trillion)."""
    found = _PARAMETERS.match(text.strip())
    if found is None:
        raise UsageError(
            f"--parameters {text!r} is not a parameter count (write it as 135M, 7B or 1.5T)"
        )
    number, unit = found.groups()
    return round(float(number) * _SIZES[unit.upper()])


def format_parameters(count: int | None) -> str:
    """``135M``, ``7B``, ``1.5T``; empty when unknown."""
    if count is None:
        return ""
    for unit in ("T", "B", "M", "K"):
        if count >= _SIZES[unit]:
            return f"{count / _SIZES[unit]:.3g}{unit}"
    return str(count)
