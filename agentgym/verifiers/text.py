"""Text verifiers: exact match, SQuAD-style F1, multiple choice, regex/format, length.

Answers are compared after SQuAD's normalisation (:func:`normalize_answer`: lower case, no
punctuation, no articles ``a an the``, single spaces), so "The Eiffel Tower." matches
"eiffel tower". Punctuation is SQuAD's ASCII set plus every Unicode punctuation character
(curly quotes, dashes), so ``“Brask”`` matches ``Brask``; digits are kept and separators
dropped, so ``1,240`` matches ``1240`` (and, as in SQuAD, ``1.5`` matches ``15``: use the math
verifier for numbers). Several acceptable answers may be given; the best match counts.
When either side has no tokens, F1 is 1 if both have none, else 0 (SQuAD 2.0's rule).

Each verifier returns a :class:`~agentgym.core.Verdict`; the plain metrics (:func:`em_score`,
:func:`f1_score`) return floats for use inside other verifiers.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence

from agentgym.core import Verdict
from agentgym.errors import UsageError

__all__ = [
    "em_score",
    "exact_match",
    "f1_score",
    "length_within",
    "multiple_choice",
    "normalize_answer",
    "regex_match",
    "token_f1",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, punctuation and articles removed, spaces collapsed."""
    if not isinstance(text, str):
        raise UsageError(f"normalize_answer() takes a str, got {type(text).__name__} {text!r:.40}")
    kept = "".join(ch for ch in text.lower() if not _is_punctuation(ch))
    return " ".join(_ARTICLES.sub(" ", kept).split())


def _is_punctuation(ch: str) -> bool:
    return ch in _ASCII_PUNCTUATION or unicodedata.category(ch).startswith("P")


def _golds(golds: str | Sequence[str]) -> list[str]:
    found = [golds] if isinstance(golds, str) else list(golds)
    if not found or not all(isinstance(g, str) for g in found):
        raise UsageError(f"gold answers must be a string or a non-empty list of strings: {golds!r}")
    return found


def em_score(prediction: str, golds: str | Sequence[str]) -> float:
    """1.0 if the normalised prediction equals a normalised gold answer, else 0.0."""
    guess = normalize_answer(prediction)
    return float(any(guess == normalize_answer(g) for g in _golds(golds)))


def f1_score(prediction: str, golds: str | Sequence[str]) -> float:
    """SQuAD's token-level F1 against the best gold answer (two empty answers score 1)."""
    guess = normalize_answer(prediction).split()
    best = 0.0
    for gold in _golds(golds):
        truth = normalize_answer(gold).split()
        if not guess or not truth:
            best = max(best, float(guess == truth))
            continue
        common = sum((Counter(guess) & Counter(truth)).values())
        if common:
            precision, recall = common / len(guess), common / len(truth)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def exact_match(prediction: str, golds: str | Sequence[str]) -> Verdict:
    """Pass when the normalised prediction equals a normalised gold answer."""
    score = em_score(prediction, golds)
    return Verdict(
        score,
        score == 1.0,
        {"exact_match": score},
        f"{'matches' if score else 'does not match'} {_show(golds)}",
    )


def token_f1(prediction: str, golds: str | Sequence[str]) -> Verdict:
    """Score = token F1 (partial credit); pass = exact match."""
    em, f1 = em_score(prediction, golds), f1_score(prediction, golds)
    return Verdict(
        f1, em == 1.0, {"exact_match": em, "f1": f1}, f"F1 {f1:.2f} against {_show(golds)}"
    )


_CHOICE_PATTERNS = (
    re.compile(r"answer\s*(?:is|:)?\s*\(?([A-Z])\)?(?![A-Za-z])", re.IGNORECASE),
    re.compile(r"^\s*\(?([A-Z])\)?[.:)]?\s*$", re.IGNORECASE),
    re.compile(r"\(([A-Z])\)", re.IGNORECASE),
    re.compile(r"(?<![A-Za-z])([A-Z])[.)](?:\s|$)"),
)


def multiple_choice(prediction: str, correct: str, options: Sequence[str] | None = None) -> Verdict:
    """Pass when the prediction picks the ``correct`` letter (``"B"``).

    The choice is read as "the answer is (B)", a bare "B", "(B)" or "B." (the last one the
    reply states, in that order of preference), or, when ``options`` (the choices' texts in
    letter order) are given, a reply that is exactly one option's text.
    """
    letters = string.ascii_uppercase[: len(options)] if options else string.ascii_uppercase
    if correct.upper() not in letters:
        raise UsageError(f"correct choice {correct!r} is not one of {list(letters)}")
    chosen = None
    for pattern in _CHOICE_PATTERNS:
        hits = [h.upper() for h in pattern.findall(prediction) if h.upper() in letters]
        if hits:
            chosen = hits[-1]
            break
    if chosen is None and options:
        texts = [normalize_answer(o) for o in options]
        reply = normalize_answer(prediction)
        if reply in texts:
            chosen = letters[texts.index(reply)]
    right = chosen == correct.upper()
    return Verdict(
        float(right),
        right,
        {"answered": float(chosen is not None)},
        f"chose {chosen or 'nothing readable'}; correct is {correct.upper()}",
    )


def regex_match(text: str, pattern: str | re.Pattern[str], *, full: bool = False) -> Verdict:
    """Pass when ``pattern`` is found in ``text`` (``full``: matches all of it, stripped)."""
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    found = compiled.fullmatch(text.strip()) if full else compiled.search(text)
    return Verdict(
        float(found is not None),
        found is not None,
        {"format": float(found is not None)},
        f"{'matches' if found else 'does not match'} the format /{compiled.pattern}/",
    )


def length_within(
    text: str,
    *,
    min_words: int | None = None,
    max_words: int | None = None,
    min_chars: int | None = None,
    max_chars: int | None = None,
) -> Verdict:
    """Pass when the text's word and character counts are within the given bounds."""
    if all(b is None for b in (min_words, max_words, min_chars, max_chars)):
        raise UsageError("length_within needs at least one bound")
    words, chars = len(text.split()), len(text)
    problems = [
        message
        for bad, message in (
            (min_words is not None and words < min_words, f"{words} words < {min_words}"),
            (max_words is not None and words > max_words, f"{words} words > {max_words}"),
            (min_chars is not None and chars < min_chars, f"{chars} characters < {min_chars}"),
            (max_chars is not None and chars > max_chars, f"{chars} characters > {max_chars}"),
        )
        if bad
    ]
    return Verdict(
        float(not problems),
        not problems,
        {"length": float(not problems)},
        "; ".join(problems) or f"{words} words, {chars} characters: within bounds",
    )


def _show(golds: str | Sequence[str]) -> str:
    found = _golds(golds)
    return repr(found[0]) if len(found) == 1 else f"one of {found!r}"
