"""WebArena's evaluator kinds, over an episode of the web family.

WebArena (Zhou et al., 2023) judges a task in one of three ways, and so do we:

* **string match** on the agent's answer (:class:`StringMatch`): exact after SQuAD's
  normalisation, a list of phrases the answer must include, or a number (``"12"``,
  ``"12 comments"``, ``"twelve"`` is *not* read: numbers are digits);
* **URL match** on the page the agent ends on (:class:`UrlMatch`): path and query
  parameters compared canonically (order, blanks and parameters left at their default do not
  matter);
* **programs over the final state** (:class:`ProgramCheck`): a function of a read-only
  SQLite connection to the episode's database that returns a :class:`~agentgym.core.Verdict`.
  WebArena's ``program_html`` reads the page; reading the database is stricter (a page can
  look right while the write failed) and needs no browser.

And its convention for tasks that cannot be done: such a task scores 1 only when the agent
says so with ``report_infeasible(...)`` (:class:`Infeasible`); for every other task a
``report_infeasible`` scores 0, because the evaluators below require an answer, a page or a
state that the agent did not produce.

Every evaluator is a callable ``evaluator(world) -> Verdict`` over a world with ``answer``,
``infeasible``, ``path`` and ``db(site)`` (:class:`agentgym.envs.web.base.WebWorld`). When
the evaluator cannot judge — the episode's database is gone, a query fails — it raises
:class:`~agentgym.errors.VerifierError`: the episode is errored, never scored 0.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from agentgym.core import Verdict
from agentgym.errors import InfrastructureError, UsageError, VerifierError
from agentgym.verifiers.text import normalize_answer

__all__ = [
    "Evaluator",
    "Infeasible",
    "Program",
    "ProgramCheck",
    "StringMatch",
    "UrlMatch",
    "all_of",
    "canonical_url",
    "numbers_in",
]


class Evaluator(Protocol):
    """Judges an episode of the web family from its world."""

    def __call__(self, world: Any) -> Verdict: ...


def _fail(details: str, **components: float) -> Verdict:
    return Verdict(0.0, False, components, details)


def _gave_up(world: Any) -> Verdict | None:
    """The verdict when the agent called a feasible task infeasible (WebArena scores it 0)."""
    if getattr(world, "infeasible", None) is not None:
        return _fail(f"the task is feasible, but the agent reported: {world.infeasible!r}")
    return None


# ---------------------------------------------------------------------------- string match

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def numbers_in(text: str) -> list[float]:
    """The numbers written in digits in ``text`` (``"1,240 posts, 3.5 stars"`` -> 1240, 3.5)."""
    return [float(n.replace(",", "")) for n in _NUMBER.findall(text)]


@dataclass(frozen=True)
class StringMatch:
    """The agent's ``answer(...)`` compared with the gold, WebArena's ``string_match``.

    Exactly one of the three ways is given:

    Args:
        exact: the normalised answer must equal this (or one of these) normalised gold(s).
        must_include: every phrase must appear in the normalised answer (as whole words).
        number: the answer must contain exactly one number, equal to this within
            ``tolerance`` ("12", "12 comments" and "There are 12." all match 12).
        tolerance: absolute tolerance for ``number``.
    """

    exact: str | Sequence[str] | None = None
    must_include: Sequence[str] = ()
    number: float | None = None
    tolerance: float = 1e-9

    def __post_init__(self) -> None:
        ways = sum([self.exact is not None, bool(self.must_include), self.number is not None])
        if ways != 1:
            raise UsageError(
                f"StringMatch takes exactly one of exact=, must_include= or number=, got "
                f"exact={self.exact!r}, must_include={self.must_include!r}, number={self.number!r}"
            )
        golds = [self.exact] if isinstance(self.exact, str) else list(self.exact or [])
        if self.exact is not None and not (golds and all(map(normalize_answer, golds))):
            raise UsageError(f"exact= needs non-empty gold answers, got {self.exact!r}")
        if any(not normalize_answer(p) for p in self.must_include):
            raise UsageError(f"must_include= phrases must have words: {self.must_include!r}")

    def __call__(self, world: Any) -> Verdict:
        refused = _gave_up(world)
        if refused is not None:
            return refused
        answer = getattr(world, "answer", None)
        if answer is None:
            return _fail("the agent gave no answer", answered=0.0)
        return self.judge(answer)

    def judge(self, answer: str) -> Verdict:
        """Judge an answer text on its own."""
        if self.number is not None:
            found = numbers_in(answer)
            right = len(found) == 1 and abs(found[0] - self.number) <= self.tolerance
            gold = f"{self.number:g}"
            why = (
                f"answered {found[0]:g}, expected {gold}"
                if len(found) == 1
                else f"the answer must hold one number ({gold}); it holds {len(found)}: "
                f"{answer!r:.80}"
            )
            return Verdict(float(right), right, {"number": float(right)}, why)
        guess = normalize_answer(answer)
        if self.exact is not None:
            golds = [self.exact] if isinstance(self.exact, str) else list(self.exact)
            right = any(guess == normalize_answer(g) for g in golds)
            shown = golds[0] if len(golds) == 1 else golds
            why = f"{answer!r:.80} {'matches' if right else 'does not match'} {shown!r}"
            return Verdict(float(right), right, {"exact_match": float(right)}, why)
        padded = f" {guess} "
        missing = [p for p in self.must_include if f" {normalize_answer(p)} " not in padded]
        share = 1 - len(missing) / len(self.must_include)
        right = not missing
        why = "includes every required phrase" if right else f"lacks {missing!r}"
        # Partial credit would reward listing every candidate: WebArena scores all-or-nothing.
        return Verdict(float(right), right, {"included": share}, f"{answer!r:.80} {why}")


# ---------------------------------------------------------------------------- URL match


Params = tuple[tuple[str, tuple[str, ...]], ...]
"""A URL's query as :func:`canonical_url` gives it: sorted ``(name, sorted values)``."""


def canonical_url(url: str, defaults: Mapping[str, str] | None = None) -> tuple[str, Params]:
    """``(path, params)`` of a URL or path, for comparison.

    The path loses a trailing slash and percent-encoding; query parameters become a sorted
    tuple of ``(name, sorted values)``, dropping blank values (as ``parse_qs`` does, and as a
    GET form with an empty field sends them) and parameters equal to their ``defaults``
    (``?state=opened`` is the page that ``?`` shows). Scheme, host and fragment are ignored.
    """
    parts = urlsplit(url)
    path = unquote(parts.path).rstrip("/") or "/"
    params = parse_qs(parts.query, keep_blank_values=False)
    defaults = dict(defaults or {})
    canonical = tuple(
        sorted(
            (name, tuple(sorted(values)))
            for name, values in params.items()
            if not (name in defaults and values == [defaults[name]])
        )
    )
    return path, canonical


@dataclass(frozen=True)
class UrlMatch:
    """The page the agent ends on is ``target``, WebArena's ``url_match``.

    Args:
        target: the path and query of the right page, e.g.
            ``"/tracker/p/atlas/issues?state=closed&label=ui"``.
        defaults: parameter values the page assumes when they are absent (``{"page": "1"}``).
        ignore: parameters that never matter (a tracking or ordering parameter).
    """

    target: str
    defaults: Mapping[str, str] = field(default_factory=dict)
    ignore: Sequence[str] = ()

    def _canonical(self, url: str) -> tuple[str, Params]:
        path, params = canonical_url(url, self.defaults)
        return path, tuple(p for p in params if p[0] not in self.ignore)

    def __call__(self, world: Any) -> Verdict:
        refused = _gave_up(world)
        if refused is not None:
            return refused
        return self.judge(world.path)

    def judge(self, path: str) -> Verdict:
        """Judge a path (with its query) on its own."""
        got_path, got_params = self._canonical(path)
        want_path, want_params = self._canonical(self.target)
        path_ok, params_ok = got_path == want_path, got_params == want_params
        right = path_ok and params_ok
        why = (
            f"on {path!r}, the target page"
            if right
            else f"on {path!r}; the target is {self.target!r}"
            f"{'' if path_ok else ' (different page)'}"
            f"{'' if params_ok else ' (different filters: ' + _show(got_params) + ')'}"
        )
        return Verdict(
            float(right), right, {"path": float(path_ok), "query": float(params_ok)}, why
        )


def _show(params: Params) -> str:
    return "&".join(f"{k}={','.join(v)}" for k, v in params) or "none"


# ---------------------------------------------------------------------------- programs

Program = Callable[[sqlite3.Connection], Verdict]
"""A check over a site's database: read-only connection in, verdict out."""


@dataclass(frozen=True)
class ProgramCheck:
    """A program over the final state of one site's database (WebArena's ``program_html``).

    Args:
        site: whose database (``"forum"``).
        program: ``program(db) -> Verdict``; ``db`` is read-only with ``row_factory=Row``.
            It returns a failing verdict for "checked, and not so" and lets exceptions out
            for "could not check": those become :class:`VerifierError`.
        description: what the program checks, for error messages.
    """

    site: str
    program: Program
    description: str = ""

    def __call__(self, world: Any) -> Verdict:
        refused = _gave_up(world)
        if refused is not None:
            return refused
        what = self.description or getattr(self.program, "__name__", "program")
        try:
            db = world.db(self.site)
        except (InfrastructureError, sqlite3.Error, OSError) as error:
            raise VerifierError(
                f"cannot check {what!r}: the {self.site} database cannot be opened "
                f"({type(error).__name__}: {error})"
            ) from error
        try:
            verdict = self.program(db)
        except VerifierError:
            raise
        except Exception as error:
            raise VerifierError(
                f"the check {what!r} over the {self.site} database failed: "
                f"{type(error).__name__}: {error}"
            ) from error
        finally:
            db.close()
        if not isinstance(verdict, Verdict):
            raise VerifierError(
                f"the check {what!r} returned {type(verdict).__name__}, not a Verdict"
            )
        return verdict


def all_of(
    goals: Iterable[tuple[str, bool]],
    *,
    keep: Iterable[tuple[str, bool]] = (),
    weights: Mapping[str, float] | None = None,
) -> Verdict:
    """A verdict from named facts: the (weighted) share of ``goals`` that hold, passed when all
    do. ``keep`` are invariants ("no stray copies", "the other members are unchanged"): one
    broken scores 0. They gate the score and never add to it, so an agent that does nothing
    (and so breaks nothing) earns nothing."""
    done, kept = list(goals), list(keep)
    if not done:
        raise UsageError("all_of needs at least one named goal")
    weights = dict(weights or {})
    total = sum(weights.get(name, 1.0) for name, _ in done)
    score = sum(weights.get(name, 1.0) for name, held in done if held) / total
    broken = [name for name, held in kept if not held]
    failed = [name for name, held in done if not held] + broken
    return Verdict(
        0.0 if broken else min(score, 1.0),
        not failed,
        {name: float(held) for name, held in done + kept},
        "all checks hold" if not failed else "not done: " + "; ".join(failed),
    )


# ---------------------------------------------------------------------------- infeasible


@dataclass(frozen=True)
class Infeasible:
    """A task that cannot be done: 1 only when the agent calls ``report_infeasible``.

    Args:
        why: why it cannot be done (for the verdict's details).
    """

    why: str

    def __call__(self, world: Any) -> Verdict:
        reported = getattr(world, "infeasible", None)
        if reported is not None:
            return Verdict(
                1.0,
                True,
                {"reported_infeasible": 1.0},
                f"correctly reported infeasible: {self.why}",
            )
        acted = getattr(world, "answer", None)
        why = f"answered {acted!r:.60}" if acted is not None else "did not report it"
        return _fail(
            f"the task is infeasible ({self.why}); the agent {why}", reported_infeasible=0.0
        )
