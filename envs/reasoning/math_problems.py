"""Math word problems the project generates, each with an answer computed exactly.

Every problem comes from a template and a seed: the numbers are drawn so that the answer is
what the template says (an integer where the story needs one: no 3.5 children), and the
answer is computed with :class:`fractions.Fraction`, never read from a model or a dataset.
Each problem also carries the Python expression that computes it (the tool env's oracle runs
it in the sandbox) and a worked solution (the single-turn oracle's reply).

Levels: ``easy`` (one or two operations), ``medium`` (three or four, or an unknown to solve
for), ``hard`` (chained percentages, rates and fractions; answers may be fractions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["LEVELS", "Problem", "format_number", "generate"]


@dataclass(frozen=True)
class Problem:
    """One word problem: the question, the exact answer, how to compute and explain it."""

    question: str
    answer: str
    expression: str  # Python that prints nothing, evaluates to the answer
    solution: str


def format_number(value: Fraction) -> str:
    """An exact answer as text: ``12``, ``12.5`` (terminating decimals) or ``7/3``."""
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator == 1:  # a terminating decimal
        return f"{float(value):.10f}".rstrip("0").rstrip(".")
    return f"{value.numerator}/{value.denominator}"


NAMES = ("Ava", "Ben", "Chloe", "Diego", "Elif", "Farah", "Goran", "Hana", "Ivo", "Jun")


def _shopping(rng: np.random.Generator) -> Problem:
    name = str(rng.choice(NAMES))
    a, b = int(rng.integers(2, 20)), int(rng.integers(1, 10))
    x, y = int(rng.integers(2, 9)), int(rng.integers(2, 9))
    total = Fraction(a * x + b * y)
    return Problem(
        f"A notebook costs ${a} and a pen costs ${b}. {name} buys {x} notebooks and {y} pens. "
        f"How many dollars does {name} spend?",
        format_number(total),
        f"{a} * {x} + {b} * {y}",
        f"{x} notebooks cost {a * x} and {y} pens cost {b * y}, so {a * x} + {b * y} = {total}.",
    )


def _sharing(rng: np.random.Generator) -> Problem:
    children, each = int(rng.integers(2, 9)), int(rng.integers(2, 12))
    eaten = int(rng.integers(1, 10))
    apples = children * each + eaten
    return Problem(
        f"There are {apples} apples in a basket. {eaten} are eaten, and the rest are shared "
        f"equally among {children} children. How many apples does each child get?",
        str(each),
        f"({apples} - {eaten}) // {children}",
        f"{apples} - {eaten} = {apples - eaten} apples, and {apples - eaten} / {children} = "
        f"{each}.",
    )


def _journey(rng: np.random.Generator) -> Problem:
    v, t = int(rng.integers(30, 120)), int(rng.integers(1, 5))
    w, s = int(rng.integers(20, 90)), int(rng.integers(1, 4))
    distance = v * t + w * s
    return Problem(
        f"A train travels at {v} km/h for {t} hours, then at {w} km/h for {s} hours. "
        f"How many kilometres does it travel in all?",
        str(distance),
        f"{v} * {t} + {w} * {s}",
        f"{v} * {t} = {v * t} km, {w} * {s} = {w * s} km; together {distance} km.",
    )


def _ages(rng: np.random.Generator) -> Problem:
    younger, gap, years = (
        int(rng.integers(3, 40)),
        int(rng.integers(1, 15)),
        int(rng.integers(1, 10)),
    )
    total = 2 * younger + gap + 2 * years
    first, second = rng.choice(NAMES, size=2, replace=False)
    return Problem(
        f"{first} is {gap} years older than {second}. In {years} years, the sum of their ages "
        f"will be {total}. How old is {second} now?",
        str(younger),
        f"({total} - 2 * {years} - {gap}) // 2",
        f"Now the sum is {total} - 2 * {years} = {total - 2 * years}; taking away the gap "
        f"{gap} leaves twice {second}'s age: {(total - 2 * years - gap)} / 2 = {younger}.",
    )


def _bakery(rng: np.random.Generator) -> Problem:
    batches, per_batch = int(rng.integers(3, 12)), int(rng.choice([10, 12, 20, 24, 25]))
    made = batches * per_batch
    percent = int(rng.choice([10, 20, 25, 40, 50, 60, 75]))
    sold = made * percent // 100
    while made * percent % 100:  # keep the sold count whole
        batches += 1
        made = batches * per_batch
        sold = made * percent // 100
    given = int(rng.integers(1, max(2, (made - sold) // 2)))
    left = made - sold - given
    return Problem(
        f"A baker makes {batches} batches of {per_batch} cookies. She sells {percent}% of them "
        f"and gives away {given}. How many cookies are left?",
        str(left),
        f"{batches} * {per_batch} - {batches} * {per_batch} * {percent} // 100 - {given}",
        f"{batches} * {per_batch} = {made} cookies; {percent}% of them is {sold}; "
        f"{made} - {sold} - {given} = {left}.",
    )


def _discounts(rng: np.random.Generator) -> Problem:
    price = int(rng.integers(20, 400))
    first, second = int(rng.choice([10, 15, 20, 25, 30])), int(rng.choice([5, 10, 20, 50]))
    final = Fraction(price) * (100 - first) / 100 * (100 - second) / 100
    return Problem(
        f"A jacket costs ${price}. It is discounted by {first}%, and the discounted price is "
        f"then reduced by a further {second}%. What is the final price in dollars?",
        format_number(final),
        f"Fraction({price}) * (100 - {first}) / 100 * (100 - {second}) / 100",
        f"{price} * {(100 - first) / 100:g} * {(100 - second) / 100:g} = {format_number(final)}.",
    )


def _pipes(rng: np.random.Generator) -> Problem:
    a, b = (int(v) for v in rng.choice(np.arange(2, 13), size=2, replace=False))
    together = Fraction(a * b, a + b)
    return Problem(
        f"Pipe A alone fills a tank in {a} hours; pipe B alone fills it in {b} hours. "
        f"Working together, how many hours do they take to fill it?",
        format_number(together),
        f"Fraction({a} * {b}, {a} + {b})",
        f"Together they fill 1/{a} + 1/{b} = {Fraction(1, a) + Fraction(1, b)} of the tank "
        f"per hour, so they need {format_number(together)} hours.",
    )


def _fraction_of(rng: np.random.Generator) -> Problem:
    numerator, denominator = int(rng.integers(1, 6)), int(rng.integers(2, 9))
    while numerator >= denominator:
        numerator = int(rng.integers(1, denominator))
    spent = Fraction(numerator, denominator)
    money = int(rng.integers(2, 20)) * denominator * 2
    rest_share = Fraction(1, 2)
    left = money * (1 - spent) * (1 - rest_share)
    name = str(rng.choice(NAMES))
    return Problem(
        f"{name} has ${money}. {name} spends {numerator}/{denominator} of it on books and then "
        f"half of what remains on a concert ticket. How many dollars are left?",
        format_number(left),
        f"Fraction({money}) * (1 - Fraction({numerator}, {denominator})) / 2",
        f"After the books {money} * (1 - {spent}) = {format_number(money * (1 - spent))}; "
        f"half of that is {format_number(left)}.",
    )


LEVELS: dict[str, tuple[Callable[[np.random.Generator], Problem], ...]] = {
    "easy": (_shopping, _sharing),
    "medium": (_journey, _ages, _bakery),
    "hard": (_discounts, _pipes, _fraction_of),
}


def generate(difficulty: str, seed: int) -> Problem:
    """The problem of a task: its level picks the templates, its seed picks one and fills it."""
    rng = np.random.default_rng(seed)
    templates = LEVELS[difficulty]
    return templates[int(rng.integers(len(templates)))](rng)
