"""Wordle: find the secret five-letter word in six guesses, from letter-by-letter feedback.

**What the agent sees.** Every guess so far with its feedback, a legend, what is known of the
letters, and the guesses left::

    Guess 1/6: CRANE -> . Y . . G
    Guess 2/6: HORSE -> . . G . G
    Legend: G = right letter, right spot; Y = in the word, wrong spot; . = not in the word
    (or no further copy of it)
    Letters not in the word: A C H N O S
    Letters in the word: E R
    Guesses left: 4

Feedback follows Wordle exactly, duplicate letters included: greens are marked first, then
yellows from left to right while the secret still has unmatched copies of that letter, so the
secret ``abbey`` and the guess ``babes`` give ``Y Y G G .``. A letter is listed as not in the word
only when no guess found a copy of it.

**What it may do.** ``guess WORD`` (or just ``WORD``), five letters, in either case. A guess must be
in the allowed word list (about 11,400 words); anything else, a word already guessed, or a word of
another length is an invalid action: the observation says why and it does not cost a guess. There
are too many guesses to list, so ``info`` has no ``admissible_actions``.

**Scoring.** Reward 1 when a guess is the secret (the episode terminates). Six wrong guesses lose
the episode (it terminates with reward 0).

**Levels.** By how common the secret is: easy draws it from the 408 most common answers (SCOWL
size 10: the most frequent English words), medium from the next 447 (size 20), hard from 1,087
less common ones (size 35, e.g. ``abbey``, ``knoll``). Feedback is judged against the whole answer
list of 1,942 words, so the level is not a hint.

**Word lists.** Shipped in ``agentgym/envs/games/data``: ``wordle_answers.txt`` (the secrets,
with their level) and ``wordle_guesses.txt`` (the allowed guesses). Both come from SCOWL
2020.12.07 as packaged by Debian (``scowl``, ``wamerican-huge``); the files name their sources
and carry SCOWL's copyright notice. Nothing is downloaded at run time.

**Oracle.** A real solver that plays fair: it keeps the answers consistent with all feedback so
far and guesses, from among them, the word that splits them into the most distinct feedback
patterns (ties: the smallest largest group, then alphabetical); the first guess is fixed to
``crate``, which is the best such split of the whole answer list. Only on the sixth and last guess
with more than one candidate left does it use its privileged knowledge of the secret, so it
always wins. From the start it needs 3.46 guesses on average; the fallback decides 7 of the
1,942 answers (families such as ``_atch`` and ``_ight``).

**Version history.** v0: first release.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

WORD_LENGTH = 5
MAX_GUESSES = 6
OPENER = "crate"
LEVELS = ("easy", "medium", "hard")
LEGEND = (
    "Legend: G = right letter, right spot; Y = in the word, wrong spot; . = not in the word "
    "(or no further copy of it)"
)
_MARKS = ".YG"


@functools.cache
def answers() -> dict[str, str]:
    """The secret words and their level, from ``data/wordle_answers.txt``."""
    words = {}
    for line in _lines("wordle_answers.txt"):
        word, level = line.split()
        words[word] = level
    return words


@functools.cache
def allowed() -> frozenset[str]:
    """Every word accepted as a guess (the answers included)."""
    return frozenset(_lines("wordle_guesses.txt")) | frozenset(answers())


@functools.cache
def answers_at(level: str) -> tuple[str, ...]:
    """The answers of one level, sorted."""
    return tuple(sorted(w for w, lvl in answers().items() if lvl == level))


def _lines(name: str) -> list[str]:
    text = (importlib.resources.files("agentgym.envs.games") / "data" / name).read_text("utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def feedback(guess: str, secret: str) -> tuple[int, ...]:
    """Per letter: 2 green, 1 yellow, 0 gray; greens first, then yellows left to right."""
    marks = [0] * WORD_LENGTH
    unmatched: dict[str, int] = {}
    for i, (g, s) in enumerate(zip(guess, secret, strict=True)):
        if g == s:
            marks[i] = 2
        else:
            unmatched[s] = unmatched.get(s, 0) + 1
    for i, g in enumerate(guess):
        if marks[i] == 0 and unmatched.get(g, 0) > 0:
            marks[i] = 1
            unmatched[g] -= 1
    return tuple(marks)


def pattern(marks: Iterable[int]) -> str:
    """Feedback as text: ``G Y . . G``."""
    return " ".join(_MARKS[m] for m in marks)


class WordleWorld(PuzzleWorld):
    """The secret and the guesses so far with their feedback."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.guesses: list[tuple[str, tuple[int, ...]]] = []

    def apply(self, action: str) -> str:
        if self.lost() or self.solved():
            raise InvalidAction("the game is over; no more guesses")
        word = _parse(action)
        if word in (g for g, _ in self.guesses):
            raise InvalidAction(
                f"{word.upper()} was already guessed; it would tell you nothing new. Try another "
                f"word"
            )
        if word not in allowed():
            raise InvalidAction(
                f"{word.upper()} is not in the word list; guess a common English five-letter "
                f"word (e.g. 'guess crane'). This did not cost a guess"
            )
        marks = feedback(word, self.secret)
        self.guesses.append((word, marks))
        line = f"{word.upper()} -> {pattern(marks)}"
        if self.solved():
            return f"{line}. Solved in {len(self.guesses)}!"
        if self.lost():
            return f"{line}. Out of guesses: the word was {self.secret.upper()}."
        left = MAX_GUESSES - len(self.guesses)
        return f"{line}. {left} guess{'es' if left != 1 else ''} left."

    def render(self) -> str:
        rows = [
            f"Guess {i}/{MAX_GUESSES}: {word.upper()} -> {pattern(marks)}"
            for i, (word, marks) in enumerate(self.guesses, 1)
        ]
        absent, present = self.letters()
        rows += [
            LEGEND,
            f"Letters not in the word: {' '.join(sorted(absent)).upper() or '(none yet)'}",
            f"Letters in the word: {' '.join(sorted(present)).upper() or '(none yet)'}",
            f"Guesses left: {MAX_GUESSES - len(self.guesses)}",
        ]
        if not self.guesses:
            rows.insert(0, "No guesses yet.")
        return "\n".join(rows)

    def letters(self) -> tuple[set[str], set[str]]:
        """Letters known absent (gray and never green or yellow) and letters known present."""
        present = {w[i] for w, m in self.guesses for i in range(WORD_LENGTH) if m[i]}
        grays = {w[i] for w, m in self.guesses for i in range(WORD_LENGTH) if not m[i]}
        return grays - present, present

    def key(self) -> str:
        if not self.guesses:
            return "no guesses"
        return " ".join(f"{w}:{''.join(map(str, m))}" for w, m in self.guesses)

    def solved(self) -> bool:
        return bool(self.guesses) and self.guesses[-1][0] == self.secret

    def lost(self) -> bool:
        return len(self.guesses) >= MAX_GUESSES and not self.solved()

    def status(self) -> str:
        if self.solved():
            return f"solved in {len(self.guesses)} guesses"
        if self.lost():
            return f"lost: {MAX_GUESSES} guesses used; the word was {self.secret}"
        return f"not solved yet: {len(self.guesses)} of {MAX_GUESSES} guesses used"


def _parse(action: str) -> str:
    line = last_line(action)
    words = [w.strip("`'\"*.,!?;:()[]") for w in line.split()]
    words = [w for w in words if w]
    if "guess" in words:
        at = len(words) - 1 - words[::-1].index("guess")
        words = [w for w in words[at + 1 :] if w not in ("is", "the", "word", "will", "be")][:1]
    if len(words) != 1:
        raise InvalidAction(
            f"could not read {action.strip()[:80]!r}: write 'guess WORD' with a five-letter "
            f"word (e.g. 'guess crane')"
        )
    word = words[0]
    if not re.fullmatch(r"[a-z]+", word):
        raise InvalidAction(
            f"{word[:20]!r} is not a word of the letters a-z; write 'guess WORD' (e.g. "
            f"'guess crane')"
        )
    if len(word) != WORD_LENGTH:
        raise InvalidAction(
            f"{word[:20].upper()} has {len(word)} letters; guesses have exactly {WORD_LENGTH}"
        )
    return word


# --------------------------------------------------------------------------- the solver


def candidates(guesses: Iterable[tuple[str, tuple[int, ...]]]) -> list[str]:
    """The answers consistent with every guess and its feedback, sorted."""
    found = sorted(answers())
    for word, marks in guesses:
        found = [c for c in found if feedback(word, c) == marks]
    return found


def best_guess(pool: list[str]) -> str:
    """The word of ``pool`` that splits it into the most feedback patterns."""
    if len(pool) <= 2:
        return pool[0]
    best: tuple[int, int, str] | None = None
    for guess in pool:
        groups: dict[tuple[int, ...], int] = {}
        for secret in pool:
            marks = feedback(guess, secret)
            groups[marks] = groups.get(marks, 0) + 1
        score = (-len(groups), max(groups.values()), guess)
        if best is None or score < best:
            best = score
            if len(groups) == len(pool):
                break  # every candidate told apart: nothing splits better
    assert best is not None
    return best[2]


def solve_world(world: WordleWorld) -> list[str]:
    """Guesses from the current state until solved (the secret only on a last-chance guess)."""
    history = list(world.guesses)
    if history and history[-1][0] == world.secret:
        return []
    pool = candidates(history)
    plan: list[str] = []
    while True:
        if len(history) == MAX_GUESSES - 1 and len(pool) > 1:
            guess = world.secret  # the privileged fallback: last guess, still ambiguous
        elif not history:
            guess = OPENER
        else:
            guess = best_guess(pool)
        plan.append(f"guess {guess}")
        if guess == world.secret or len(history) + 1 >= MAX_GUESSES:
            return plan
        marks = feedback(guess, world.secret)
        history.append((guess, marks))
        pool = [c for c in pool if feedback(guess, c) == marks]


class WordleEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "wordle"
    levels = {level: {"level": level} for level in LEVELS}
    syntax = (
        "Actions: 'guess WORD' (or just the word) guesses a five-letter English word, e.g. "
        "'guess crane'. Feedback per letter: G = right spot, Y = in the word elsewhere, "
        ". = not in the word."
    )

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> WordleWorld:
        pool = answers_at(level["level"])
        return WordleWorld(pool[int(rng.integers(len(pool)))])

    @staticmethod
    def solve(world: PuzzleWorld) -> list[str]:
        assert isinstance(world, WordleWorld)
        return solve_world(world)

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        return (
            f"Wordle: find the secret five-letter English word in {MAX_GUESSES} guesses. After "
            f"each guess every letter is marked G (right letter, right spot), Y (in the word, "
            f"wrong spot) or . (not in the word)."
        )
