"""An LLM judge through any agent backend, and how far to trust it.

:class:`Judge` asks a model (any agent spec: ``smollm2``, ``hf:PATH``, ``openai:MODEL@URL``,
``vllm:PATH``, or an agent object) to grade a response against a rubric, and reads the grade
from a ``Score: N`` line on the rubric's scale. The judge's raw reply is kept in the
verdict's details. A reply without a readable score in range, or a model that fails, raises
:class:`~agentgym.errors.VerifierError`: an unparseable judgement is not a 0.

A judge is a model with its own errors, so before trusting its scores, measure it:
:func:`judge_agreement` grades labelled examples (a person's pass/fail) and reports the
accuracy and **Cohen's kappa** (agreement beyond chance: 1 is perfect, 0 is what guessing
gives; above about 0.6 is usually called substantial).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym.core import Verdict
from agentgym.errors import UsageError, VerifierError

__all__ = ["Agreement", "Judge", "LabelledExample", "cohens_kappa", "judge_agreement"]

_SCORE = re.compile(r"score\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


@dataclass
class Judge:
    """Grades responses with a model and a rubric.

    Args:
        agent: an agent spec or object (see :func:`agentgym.agents.resolve_agent`).
        rubric: what a good response is; it becomes the judge's instructions.
        scale: the lowest and highest grade.
        pass_score: the lowest grade that passes (default: the highest).
        sampling: the judge's sampling settings (default: greedy, 256 tokens).
    """

    agent: Any
    rubric: str
    scale: tuple[int, int] = (1, 10)
    pass_score: float | None = None
    sampling: dict[str, Any] = field(
        default_factory=lambda: {"temperature": 0.0, "max_tokens": 256}
    )

    def __post_init__(self) -> None:
        from agentgym.agents import resolve_agent

        low, high = self.scale
        if not low < high:
            raise UsageError(f"scale must be (low, high) with low < high, got {self.scale!r}")
        self.pass_score = high if self.pass_score is None else self.pass_score
        if not low <= self.pass_score <= high:
            raise UsageError(f"pass_score {self.pass_score!r} is outside the scale {self.scale}")
        self._factory, self.name = resolve_agent(self.agent)

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
        from agentgym.agents import AgentReply, EpisodeContext

        agent = self._factory()
        agent.reset(
            EpisodeContext(
                env_id="judge",
                task_id="judge",
                seed=seed,
                instructions=self.instructions(),
                info={},
                sampling=dict(self.sampling),
            )
        )
        try:
            reply = await agent.act(self.prompt(question, response, reference), {})
        except UsageError:
            raise
        except Exception as error:
            raise VerifierError(f"the judge {self.name} failed: {error}") from error
        finally:
            agent.close()
        text = reply.text if isinstance(reply, AgentReply) and reply.text else None
        if text is None:
            text = str(reply.action if isinstance(reply, AgentReply) else reply)
        return self.read(text)

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
