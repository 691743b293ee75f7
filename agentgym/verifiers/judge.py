"""An LLM judge over any model call, and how far to trust it.

:class:`Judge` asks a model to grade a response against a rubric, and reads the grade from a
``Score: N`` line on the rubric's scale. The model is a :data:`JudgeModel`: any function that
answers a :class:`JudgeCall` (the instructions, the prompt, a seed and the sampling settings)
with text, sync or async. Verifiers stand below the agents, so the judge knows no agent
spec; :func:`agentgym.agents.judge_model` turns one (``smollm2``, ``hf:PATH``,
``openai:MODEL@URL``, ``vllm:PATH``, or an agent object) into a judge model. The judge's raw
reply is kept in the verdict's details. A reply without a readable score in range, or a model
that fails, raises :class:`~agentgym.errors.VerifierError`: an unparseable judgement is not a 0.

A judge is a model with its own errors, so before trusting its scores, measure it:
:func:`judge_agreement` grades labelled examples (a person's pass/fail) and reports the
accuracy and **Cohen's kappa** (agreement beyond chance: 1 is perfect, 0 is what guessing
gives; above about 0.6 is usually called substantial).
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym.core import Verdict
from agentgym.errors import UsageError, VerifierError

__all__ = [
    "Agreement",
    "Judge",
    "JudgeCall",
    "JudgeModel",
    "LabelledExample",
    "cohens_kappa",
    "judge_agreement",
]

_SCORE = re.compile(r"score\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


@dataclass(frozen=True)
class JudgeCall:
    """One question to a judge's model."""

    instructions: str  # the system message: the rubric and the answer format
    prompt: str  # the question, the response to grade, and the reference if any
    seed: int
    sampling: dict[str, Any]


JudgeModel = Callable[[JudgeCall], str | Awaitable[str]]
"""A judge's model: answers a :class:`JudgeCall` with its text (sync or async). An agent spec
becomes one through :func:`agentgym.agents.judge_model`."""


@dataclass
class Judge:
    """Grades responses with a model and a rubric.

    Args:
        model: the model that grades (a :data:`JudgeModel`; its ``name`` attribute, else its
            ``__name__``, names it in verdicts and errors).
        rubric: what a good response is; it becomes the judge's instructions.
        scale: the lowest and highest grade.
        pass_score: the lowest grade that passes (default: the highest).
        sampling: the judge's sampling settings (default: greedy, 256 tokens).
    """

    model: JudgeModel
    rubric: str
    scale: tuple[int, int] = (1, 10)
    pass_score: float | None = None
    sampling: dict[str, Any] = field(
        default_factory=lambda: {"temperature": 0.0, "max_tokens": 256}
    )

    def __post_init__(self) -> None:
        if not callable(self.model):
            raise UsageError(
                f"a judge's model is a function of a JudgeCall, got {self.model!r}; for an "
                f"agent spec, use agentgym.agents.judge_model({self.model!r})"
            )
        low, high = self.scale
        if not low < high:
            raise UsageError(f"scale must be (low, high) with low < high, got {self.scale!r}")
        self.pass_score = high if self.pass_score is None else self.pass_score
        if not low <= self.pass_score <= high:
            raise UsageError(f"pass_score {self.pass_score!r} is outside the scale {self.scale}")
        named = getattr(self.model, "name", None) or getattr(self.model, "__name__", None)
        self.name = str(named or type(self.model).__name__)

    def instructions(self) -> str:
        """The judge's system message: the rubric and the answer format."""
        low, high = self.scale
        return (
            f"You are a strict grader.\n\nRubric:\n{self.rubric.strip()}\n\n"
            f"Think briefly, then end with a line 'Score: N' where N is an integer from "
            f"{low} (worst) to {high} (best)."
        )

    def prompt(self, question: str, response: str, reference: str | None = None) -> str:
        """What the judge is shown for one response."""
        parts = [f"Question:\n{question}", f"Response to grade:\n{response}"]
        if reference is not None:
            parts.insert(1, f"Reference answer:\n{reference}")
        return "\n\n".join(parts)

    async def judge_async(
        self, question: str, response: str, reference: str | None = None, *, seed: int = 0
    ) -> Verdict:
        """Grade one response (see the module docstring for failures)."""
        call = JudgeCall(
            self.instructions(),
            self.prompt(question, response, reference),
            seed,
            dict(self.sampling),
        )
        try:
            text = self.model(call)
            if inspect.isawaitable(text):
                text = await text
        except UsageError:
            raise
        except Exception as error:
            raise VerifierError(f"the judge {self.name} failed: {error}") from error
        return self.read(str(text))

    def judge(self, question: str, response: str, reference: str | None = None) -> Verdict:
        """Synchronous :meth:`judge_async` (not from inside a running event loop)."""
        return asyncio.run(self.judge_async(question, response, reference))

    def read(self, text: str) -> Verdict:
        """The verdict in a judge's reply: its last ``Score: N`` on the scale."""
        low, high = self.scale
        grades = [float(g) for g in _SCORE.findall(text)]
        if not grades or not low <= grades[-1] <= high:
            raise VerifierError(
                f"the judge {self.name} gave no score in [{low}, {high}]: {text[-300:]!r}"
            )
        grade = grades[-1]
        return Verdict(
            (grade - low) / (high - low),
            grade >= (self.pass_score or high),
            {"grade": grade},
            f"judge {self.name}: {text.strip()[-500:]}",
        )


@dataclass(frozen=True)
class LabelledExample:
    """A response a person graded: ``label`` is their pass (True) or fail (False)."""

    question: str
    response: str
    label: bool
    reference: str | None = None


@dataclass
class Agreement:
    """How a judge's pass/fail agrees with people's on labelled examples."""

    n: int
    accuracy: float
    kappa: float
    confusion: dict[str, int]  # "judge_pass/human_pass" style counts


def cohens_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels of the same items: (p_o - p_e) / (1 - p_e).

    When both raters give every item the same one label, agreement is perfect and chance
    agreement is too; kappa is then defined here as 1.0.
    """
    if len(a) != len(b) or not a:
        raise UsageError(f"kappa needs two equally long non-empty label lists ({len(a)}, {len(b)})")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    counts_a, counts_b = Counter(a), Counter(b)
    expected = sum(counts_a[k] * counts_b[k] for k in counts_a) / (n * n)
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1 - expected)


def judge_agreement(
    judge: Judge, examples: Sequence[LabelledExample], *, concurrency: int = 8
) -> Agreement:
    """Grade every example with ``judge`` and compare with the people's labels."""
    if not examples:
        raise UsageError("judge_agreement needs labelled examples")

    async def grade_all() -> list[Verdict]:
        gate = asyncio.Semaphore(concurrency)

        async def one(index: int, example: LabelledExample) -> Verdict:
            async with gate:
                return await judge.judge_async(
                    example.question, example.response, example.reference, seed=index
                )

        return await asyncio.gather(*(one(i, e) for i, e in enumerate(examples)))

    verdicts = asyncio.run(grade_all())
    ours = [v.passed for v in verdicts]
    theirs = [e.label for e in examples]
    confusion = Counter(
        f"judge_{'pass' if j else 'fail'}/human_{'pass' if h else 'fail'}"
        for j, h in zip(ours, theirs, strict=True)
    )
    return Agreement(
        n=len(examples),
        accuracy=sum(j == h for j, h in zip(ours, theirs, strict=True)) / len(examples),
        kappa=cohens_kappa(ours, theirs),
        confusion=dict(confusion),
    )
