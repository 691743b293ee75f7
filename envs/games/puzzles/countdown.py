"""Game of 24 and Countdown: combine numbers with ``+ - * /`` until you make the target.

Two envs share one world. **Game24** (``games/Game24-v0``) gives four numbers from 1 to 13 and
the target 24; every number must be used exactly once. **Countdown** (``games/Countdown-v0``)
gives four to six numbers in the style of the TV game (small numbers 1-10, large numbers 25, 50,
75, 100) and a target drawn from the seed; any subset of the numbers may be used.

**What the agent sees.** The numbers still available, the target and the steps taken so far::

    Numbers: 4 7 8 8
    Target: 24 (use every number exactly once)
    Steps so far: none

Fractions are written ``8/3`` and negative numbers ``-5`` (Game24 only).

**What it may do.** One step combines two available numbers; the result replaces them:

* ``8 * 3`` with ``+``, ``-``, ``*``, ``/`` (also ``8 x 3``, ``8 times 3``, ``8 divided by 3``
  and the Unicode times, divide and minus signs);
  a fraction or negative operand goes in brackets: ``(8/3) * 3``, ``4 - (-2)``. An optional
  ``= RESULT`` is checked: a wrong result is an invalid action.
* ``combine A B OP`` computes ``A OP B``: ``combine 8 3 -`` is ``8 - 3``; here fractions need
  no brackets (``combine 8/3 3 *``).
* ``undo`` takes back the last step.

A number that is not available (or used twice), division by zero, and — in Countdown — a result
that is not a positive whole number (``3 - 8``, ``7 / 2``) are invalid actions: the observation
says why and nothing changes. Game24 allows fractions and negative numbers as intermediate
results (``8 / 3``, then ``(8/3) * 9``). ``info["admissible_actions"]`` lists every possible step.

**Scoring.** Reward 1 when the goal is reached (the episode terminates), else 0. Game24: the
single number left is 24, all four numbers used. Countdown: some available number equals the
target (the numbers you do not need may stay unused). An episode is never lost: a dead end (one
number left that is not the target, or no way to the target from the numbers left) can be undone,
and the step limit (Game24 20 steps, Countdown 30) ends the episode.

**Levels.** The generator keeps only solvable instances, checked by the solver.

* Game24, by solver-measured difficulty: the number of solutions (sequences of steps, counted
  on the graph of distinct number multisets, so ``8 * 3`` and ``3 * 8`` are one) and whether one
  of them keeps every intermediate a non-negative whole number. easy: at least 12 solutions;
  medium: 6 to 11; hard: at most 5, or none without fractions or negative numbers (``1 5 5 5``:
  ``5 * (5 - 1/5)``). Of uniformly drawn solvable instances about 35%, 34% and 31% fall in each.
* Countdown: easy — 4 small numbers, a target of 10-99 that needs at least 3 of them (2 or more
  steps); medium — 1 large and 4 small numbers, a target of 100-499 that needs at least 4;
  hard — 1-2 large and 4-5 small numbers, a target of 100-999 that needs at least 5.
  Small numbers are drawn from two cards of each of 1-10, large ones from 25, 50, 75, 100 (no
  repeats). The target is drawn uniformly from the values in range that the numbers can make
  and no fewer of them can.

**Oracle.** An exhaustive solver with memoisation: the values reachable from every subset of the
numbers (``2**n`` subsets), then a goal-directed reconstruction of one expression over the
fewest numbers, played as steps. From a dead end it plays ``undo`` until the target is
reachable again.

**Version history.** v0: first release.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

Step = tuple[Fraction, str, Fraction, Fraction]  # a OP b = result

OPS = "+-*/"
LARGE = (25, 50, 75, 100)
SMALL = tuple(range(1, 11))
_MAX_DIGITS = 30

_OPERAND = r"(\(\s*-?\s*\d+\s*(?:/\s*\d+\s*)?\)|-?\s*\d+)"
_RESULT = r"(\(?\s*-?\s*\d+\s*(?:/\s*\d+\s*)?\)?)"
_INFIX = re.compile(rf"^{_OPERAND}\s*([-+*/])\s*{_OPERAND}\s*(?:=\s*{_RESULT})?$")
_NUMBER = re.compile(r"^\(?\s*(-?)\s*(\d+)\s*(?:/\s*(\d+)\s*)?\)?$")
_WORDS = (
    (re.compile(r"\bmultiplied\s+by\b|\btimes\b"), " * "),
    (re.compile(r"\bdivided\s+by\b|\bover\b"), " / "),
    (re.compile(r"\bplus\b"), " + "),
    (re.compile(r"\bminus\b"), " - "),
)
_SYMBOLS = str.maketrans(
    {
        "\u00d7": "*",  # multiplication sign
        "\u00b7": "*",  # middle dot
        "\u00f7": "/",  # division sign
        "\u2044": "/",  # fraction slash
        "\u2212": "-",  # minus sign
        "\u2013": "-",  # en dash
        "\u2014": "-",  # em dash
    }
)


def fmt(value: Fraction) -> str:
    """A number as the agent reads it: ``8``, ``-5``, ``8/3``."""
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def operand(value: Fraction) -> str:
    """A number as an operand of an infix action: brackets around fractions and negatives."""
    text = fmt(value)
    return text if value >= 0 and value.denominator == 1 else f"({text})"


def compute(a: Fraction, op: str, b: Fraction) -> Fraction | None:
    """``a op b``, or ``None`` for division by zero."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return None if b == 0 else a / b


class CountdownWorld(PuzzleWorld):
    """The numbers left (in play order), the target and the undo history.

    Args:
        numbers: the starting numbers.
        target: the number to make.
        use_all: Game24 rules (solved only when the single number left is the target) instead of
            Countdown rules (solved when any number left is the target).
        integers_only: Countdown rules: every result must be a positive whole number.
    """

    def __init__(
        self, numbers: Sequence[int], target: int, *, use_all: bool, integers_only: bool
    ) -> None:
        self.start = tuple(Fraction(n) for n in numbers)
        self.numbers: list[Fraction] = list(self.start)
        self.target = Fraction(target)
        self.use_all = use_all
        self.integers_only = integers_only
        self.history: list[tuple[list[Fraction], Step]] = []

    # ----------------------------------------------------------------- moves

    def apply(self, action: str) -> str:
        parsed = parse_action(action)
        if parsed is None:
            return self._undo()
        a, op, b, claimed = parsed
        self._check_available(a, b)
        result = compute(a, op, b)
        if result is None:
            raise InvalidAction(f"{fmt(a)} / {fmt(b)} divides by zero")
        if self.integers_only and (result.denominator != 1 or result <= 0):
            what = "is not a whole number" if result.denominator != 1 else "is not positive"
            raise InvalidAction(
                f"{fmt(a)} {op} {fmt(b)} = {fmt(result)} {what}; in Countdown every result "
                f"must be a positive whole number"
            )
        if claimed is not None and claimed != result:
            raise InvalidAction(
                f"{fmt(a)} {op} {fmt(b)} is {fmt(result)}, not {fmt(claimed)}; nothing was changed"
            )
        before = list(self.numbers)
        self.numbers.remove(a)
        self.numbers.remove(b)
        self.numbers.append(result)
        self.history.append((before, (a, op, b, result)))
        feedback = f"{fmt(a)} {op} {fmt(b)} = {fmt(result)}. Numbers left: {self._numbers()}."
        if self.solved():
            return feedback + f" You made {fmt(self.target)}!"
        if len(self.numbers) == 1:
            feedback += (
                f" Every number is used and {fmt(result)} is not {fmt(self.target)}: 'undo' to "
                f"take a step back."
            )
        return feedback

    def _undo(self) -> str:
        """Take back the last step (the action ``undo``)."""
        if not self.history:
            raise InvalidAction("there is no step to undo yet")
        self.numbers, (a, op, b, result) = self.history.pop()
        return f"Undid {fmt(a)} {op} {fmt(b)} = {fmt(result)}. Numbers: {self._numbers()}."

    def _check_available(self, a: Fraction, b: Fraction) -> None:
        for value in (a, b):
            if value not in self.numbers:
                raise InvalidAction(
                    f"{fmt(value)} is not one of the numbers left ({self._numbers()}); combine "
                    f"two of them, e.g. '{self._example()}'"
                )
        if a == b and self.numbers.count(a) < 2:
            raise InvalidAction(
                f"{fmt(a)} is there only once, so it cannot be combined with itself; numbers "
                f"left: {self._numbers()}"
            )

    # ----------------------------------------------------------------- views

    def render(self) -> str:
        rule = "use every number exactly once" if self.use_all else "use any of the numbers"
        steps = "; ".join(f"{fmt(a)} {op} {fmt(b)} = {fmt(r)}" for _, (a, op, b, r) in self.history)
        return (
            f"Numbers: {self._numbers()}\n"
            f"Target: {fmt(self.target)} ({rule})\n"
            f"Steps so far: {steps or 'none'}"
        )

    def key(self) -> str:
        numbers = " ".join(fmt(n) for n in sorted(self.numbers))
        return f"{numbers} -> {fmt(self.target)}"

    def solved(self) -> bool:
        if self.use_all:
            return len(self.numbers) == 1 and self.numbers[0] == self.target
        return self.target in self.numbers

    def status(self) -> str:
        if self.solved():
            return f"solved: made {fmt(self.target)}"
        return f"not solved yet: numbers {self._numbers()}, target {fmt(self.target)}"

    def legal_actions(self) -> list[str]:
        actions = [f"{operand(a)} {op} {operand(b)}" for a, op, b in self._moves()]
        if self.history:
            actions.append("undo")
        return actions

    def _moves(self) -> Iterator[tuple[Fraction, str, Fraction]]:
        """Every valid combination, once per pair of values (both orders for - and /)."""
        values = self.numbers
        seen: set[tuple[Fraction, str, Fraction]] = set()
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                a, b = max(values[i], values[j]), min(values[i], values[j])
                for move in (
                    (a, "+", b),
                    (a, "-", b),
                    (b, "-", a),
                    (a, "*", b),
                    (a, "/", b),
                    (b, "/", a),
                ):
                    if move in seen:
                        continue
                    seen.add(move)
                    result = compute(*move)
                    if result is None:
                        continue
                    if self.integers_only and (result.denominator != 1 or result <= 0):
                        continue
                    yield move

    def _numbers(self) -> str:
        return " ".join(fmt(n) for n in self.numbers)

    def _example(self) -> str:
        if len(self.numbers) >= 2:
            return f"{operand(self.numbers[0])} + {operand(self.numbers[1])}"
        return "undo"


def parse_action(text: str) -> tuple[Fraction, str, Fraction, Fraction | None] | None:
    """``(a, op, b, claimed result or None)``, or ``None`` for ``undo``; InvalidAction else."""
    line = _action_line(text)
    if re.fullmatch(r"(?:undo|back|take\s+back)(?:\s+(?:the\s+)?last(?:\s+step)?)?", line):
        return None
    if line.startswith("combine"):
        words = [w for w in line[len("combine") :].split() if w not in ("and", "with", "using")]
        if len(words) != 3 or words[2] not in OPS:
            raise InvalidAction(
                f"could not read {_shown(text)}: write 'combine A B OP' with OP one of + - * / "
                f"(e.g. 'combine 8 3 *' for 8 * 3), or simply '8 * 3'"
            )
        return _number(words[0]), words[2], _number(words[1]), None
    match = _INFIX.match(line)
    if match is None:
        raise InvalidAction(
            f"could not read {_shown(text)}: write a step as 'A OP B' with two of the numbers "
            f"and OP one of + - * / (e.g. '8 * 3'; fractions in brackets: '(8/3) * 3'), "
            f"'combine A B OP', or 'undo'"
        )
    left, op, right, claimed = match.groups()
    return _number(left), op, _number(right), None if claimed is None else _number(claimed)


def _number(token: str) -> Fraction:
    match = _NUMBER.match(token.strip())
    if match is None:
        raise InvalidAction(f"{token!r} is not a number; write whole numbers or fractions like 8/3")
    sign, numerator, denominator = match.groups()
    if len(numerator) > _MAX_DIGITS or (denominator and len(denominator) > _MAX_DIGITS):
        raise InvalidAction(f"{token.strip()[:40]!r} is not one of the numbers")
    if denominator is not None and int(denominator) == 0:
        raise InvalidAction(f"{token.strip()!r} has a zero denominator")
    value = Fraction(int(numerator), int(denominator or 1))
    return -value if sign else value


def _action_line(text: str) -> str:
    line = " ".join(last_line(text).translate(_SYMBOLS).split())
    quoted = re.findall(r"`([^`]+)`", line)
    if quoted:  # "I will do `8 * 3` now."
        line = quoted[-1]
    line = _unwrap(line)
    if ":" in line:  # "Action: 8 * 3", "Step 1: 8 * 3"
        line = _unwrap(line.rsplit(":", 1)[1])
    for pattern, symbol in _WORDS:
        line = pattern.sub(symbol, line)
    line = re.sub(r"(?<=[\d)])\s*x\s*(?=[\d(-])", " * ", line)
    line = re.sub(r"\s*\*\*\s*", " ** ", line)  # keep '**' (a power) from passing as '*'
    return " ".join(line.split())


def _unwrap(line: str) -> str:
    """Strip quotes, backticks, bold markers and trailing punctuation around an action."""
    line = line.strip("`'\"!?;:. ")
    while line.startswith("**") and line.endswith("**") and len(line) > 4:
        line = line[2:-2].strip("`'\"!?;:. ")
    return line


def _shown(text: str) -> str:
    return repr(text.strip()[:80])


# --------------------------------------------------------------------------- the solver


def reachable(numbers: Sequence[Fraction], integers_only: bool) -> list[set[Fraction]]:
    """``values[mask]``: every value an expression over the numbers in ``mask`` can take.

    Countdown rules (``integers_only``) keep positive whole intermediates and skip the useless
    ``x * 1`` and ``x / 1``; Game24 rules keep every rational (division by zero excepted).
    """
    n = len(numbers)
    values: list[set[Any]] = [set() for _ in range(1 << n)]
    for i, x in enumerate(numbers):
        values[1 << i].add(int(x) if integers_only else x)
    for mask in sorted(range(1, 1 << n), key=_popcount):
        if mask & (mask - 1) == 0:
            continue
        out, low = values[mask], mask & -mask
        sub = (mask - 1) & mask
        while sub:
            if sub & low:
                other = mask ^ sub
                if integers_only:
                    _combine_integers(values[sub], values[other], out)
                else:
                    _combine_rationals(values[sub], values[other], out)
            sub = (sub - 1) & mask
    return values


def _combine_integers(left: set[int], right: set[int], out: set[int]) -> None:
    add = out.add
    for a in left:
        for b in right:
            add(a + b)
            if a > b:
                add(a - b)
            elif b > a:
                add(b - a)
            if a != 1 and b != 1:
                add(a * b)
                if a % b == 0:
                    add(a // b)
                if b % a == 0:
                    add(b // a)


def _combine_rationals(left: set[Fraction], right: set[Fraction], out: set[Fraction]) -> None:
    add = out.add
    for a in left:
        for b in right:
            add(a + b)
            add(a - b)
            add(b - a)
            add(a * b)
            if b:
                add(a / b)
            if a:
                add(b / a)


def _popcount(mask: int) -> int:
    return bin(mask).count("1")


def plan(
    numbers: Sequence[Fraction], target: Fraction, use_all: bool, integers_only: bool
) -> list[Step] | None:
    """Steps ``(a, op, b, result)`` that make ``target``, or ``None`` if it cannot be made."""
    numbers = list(numbers)
    if not use_all and target in numbers:
        return []
    values = reachable(numbers, integers_only)
    full = (1 << len(numbers)) - 1
    masks = [full] if use_all else sorted(range(1, full + 1), key=_popcount)
    for mask in masks:
        if target in values[mask]:
            return _build(values, mask, target)
    return None


def _build(values: list[set[Any]], mask: int, v: Any) -> list[Step]:
    """Reconstruct one expression over ``mask`` worth ``v`` (known to exist) as steps."""
    if mask & (mask - 1) == 0:
        return []
    sub = (mask - 1) & mask
    while sub:
        other = mask ^ sub
        right = values[other]
        for a in values[sub]:
            for op, b in _partners(a, v, right):
                if b in right and compute(Fraction(a), op, Fraction(b)) == v:
                    return [
                        *_build(values, sub, a),
                        *_build(values, other, b),
                        (Fraction(a), op, Fraction(b), Fraction(v)),
                    ]
        sub = (sub - 1) & mask
    raise AssertionError(f"no expression over mask {mask:b} makes {v}")  # pragma: no cover


def _partners(a: Any, v: Fraction, right: set[Any]) -> Iterator[tuple[str, Any]]:
    """The ``(op, b)`` with ``a op b == v`` worth looking up in ``right``."""
    v = Fraction(v)
    yield "+", v - a
    yield "-", a - v
    if a:
        yield "*", v / a
        if v:
            yield "/", Fraction(a) / v
    elif v == 0:  # 0 * b and 0 / b are 0 for any (nonzero) b
        nonzero = sorted(b for b in right if b)
        if nonzero:
            yield "*", nonzero[0]
            yield "/", nonzero[0]


def solve_world(world: CountdownWorld) -> list[str]:
    """Actions from the current state: ``undo`` out of a dead end, then a plan."""
    numbers, history = list(world.numbers), list(world.history)
    actions: list[str] = []
    while True:
        steps = plan(numbers, world.target, world.use_all, world.integers_only)
        if steps is not None:
            return actions + [f"{operand(a)} {op} {operand(b)}" for a, op, b, _ in steps]
        if not history:
            return actions  # unsolvable from the start (never generated)
        numbers, _ = history.pop()
        actions.append("undo")


def count_solutions(numbers: Sequence[Fraction], target: Fraction) -> tuple[int, int]:
    """Game24: ``(solutions, whole-number solutions)``, as step sequences between distinct states.

    A state is the sorted multiset of numbers; each distinct next state is one branch. A
    whole-number solution keeps every intermediate result a non-negative integer. Numbers are
    kept as reduced ``(numerator, denominator)`` pairs, which is several times faster than
    :class:`~fractions.Fraction` for this search.
    """
    goal = (target.numerator, target.denominator)
    memo: dict[tuple[tuple[int, int], ...], tuple[int, int]] = {}

    def count(state: tuple[tuple[int, int], ...]) -> tuple[int, int]:
        if len(state) == 1:
            return (1, 1) if state[0] == goal else (0, 0)
        if len(state) == 2:  # the one child that can count is the goal itself
            return (1, 1) if _makes(state[0], state[1], goal) else (0, 0)
        if state in memo:
            return memo[state]
        children: dict[tuple[tuple[int, int], ...], bool] = {}
        for i in range(len(state)):
            for j in range(len(state)):
                if i == j:
                    continue
                rest = [x for k, x in enumerate(state) if k != i and k != j]
                for result in _results(state[i], state[j]):
                    child = tuple(sorted((*rest, result)))
                    children[child] = result[1] == 1 and result[0] >= 0
        total = whole_total = 0
        for child, whole in children.items():
            all_ways, whole_ways = count(child)
            total += all_ways
            if whole:
                whole_total += whole_ways
        memo[state] = (total, whole_total)
        return memo[state]

    return count(tuple(sorted((Fraction(n).numerator, Fraction(n).denominator) for n in numbers)))


def _results(x: tuple[int, int], y: tuple[int, int]) -> Iterator[tuple[int, int]]:
    """``x + y``, ``x - y``, ``x * y`` and ``x / y`` (when ``y`` is not 0) as reduced pairs."""
    a, b = x
    c, d = y
    yield _reduced(a * d + c * b, b * d)
    yield _reduced(a * d - c * b, b * d)
    yield _reduced(a * c, b * d)
    if c:
        yield _reduced(a * d, b * c)


def _reduced(numerator: int, denominator: int) -> tuple[int, int]:
    if denominator < 0:
        numerator, denominator = -numerator, -denominator
    g = math.gcd(numerator, denominator)
    return numerator // g, denominator // g


def _makes(x: tuple[int, int], y: tuple[int, int], goal: tuple[int, int]) -> bool:
    """Whether one operation on ``x`` and ``y`` (either order) gives ``goal``; no division."""
    (a, b), (c, d), (p, q) = x, y, goal
    bd = b * d
    return (
        (a * d + c * b) * q == p * bd
        or (a * d - c * b) * q == p * bd
        or (c * b - a * d) * q == p * bd
        or a * c * q == p * bd
        or (c != 0 and a * d * q == p * b * c)
        or (a != 0 and c * b * q == p * a * d)
    )


def game24_level(numbers: Sequence[int]) -> str | None:
    """The Game24 level of four numbers, or ``None`` if 24 cannot be made."""
    return _game24_level(tuple(sorted(int(n) for n in numbers)))


@functools.lru_cache(maxsize=4096)  # 1,820 multisets of four numbers from 1-13
def _game24_level(numbers: tuple[int, ...]) -> str | None:
    total, whole = count_solutions([Fraction(n) for n in numbers], Fraction(24))
    if total == 0:
        return None
    if whole == 0 or total <= 5:
        return "hard"
    return "easy" if total >= 12 else "medium"


# --------------------------------------------------------------------------- the envs


class _CountdownBase(PuzzleEnv):
    syntax = (
        "Actions: 'A OP B' combines two of the numbers with OP one of + - * / and replaces them "
        "with the result (e.g. '8 * 3'; fractions and negative numbers in brackets: "
        "'(8/3) * 3'); 'combine A B OP' does the same (e.g. 'combine 8 3 -' is 8 - 3); 'undo' "
        "takes back the last step."
    )

    @staticmethod
    def solve(world: PuzzleWorld) -> list[str]:
        assert isinstance(world, CountdownWorld)
        return solve_world(world)


class Game24Env(_CountdownBase):
    __doc__ = __doc__
    name = "game24"
    levels = {"easy": {"level": "easy"}, "medium": {"level": "medium"}, "hard": {"level": "hard"}}

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> CountdownWorld:
        wanted = level["level"]
        while True:
            numbers = [int(n) for n in rng.integers(1, 14, size=4)]
            if game24_level(numbers) == wanted:
                return CountdownWorld(numbers, 24, use_all=True, integers_only=False)

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, CountdownWorld)
        return (
            f"Game of 24: combine the numbers {world._numbers()} with + - * / into 24, using "
            f"each number exactly once. Each step combines two numbers into one; fractions and "
            f"negative numbers are allowed along the way."
        )


class CountdownEnv(_CountdownBase):
    __doc__ = __doc__
    name = "countdown"
    levels = {
        "easy": {"large": (0, 0), "count": 4, "targets": (10, 99), "min_used": 3},
        "medium": {"large": (1, 1), "count": 5, "targets": (100, 499), "min_used": 4},
        "hard": {"large": (1, 2), "count": 6, "targets": (100, 999), "min_used": 5},
    }

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> CountdownWorld:
        low, high = level["targets"]
        while True:
            large = int(rng.integers(level["large"][0], level["large"][1] + 1))
            numbers = [int(n) for n in rng.choice(LARGE, size=large, replace=False)]
            small_pool = [n for n in SMALL for _ in range(2)]  # two cards of each, as on TV
            numbers += [
                int(n) for n in rng.choice(small_pool, size=level["count"] - large, replace=False)
            ]
            numbers = [numbers[i] for i in rng.permutation(len(numbers))]
            targets = _targets(numbers, low, high, level["min_used"])
            if targets:
                target = targets[int(rng.integers(len(targets)))]
                return CountdownWorld(numbers, target, use_all=False, integers_only=True)

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, CountdownWorld)
        return (
            f"Countdown: make {fmt(world.target)} from the numbers {world._numbers()} with "
            f"+ - * /. Each step combines two numbers into one; each number can be used at "
            f"most once, not all need be used, and every result must be a positive whole number."
        )


def _targets(numbers: list[int], low: int, high: int, min_used: int) -> list[int]:
    """Values in ``[low, high]`` reachable only with at least ``min_used`` numbers."""
    values = reachable([Fraction(n) for n in numbers], integers_only=True)
    easier: set[Fraction] = set()
    for mask in range(1, len(values)):
        if _popcount(mask) < min_used:
            easier |= values[mask]
    found: set[Fraction] = set()
    for mask in range(1, len(values)):
        if _popcount(mask) >= min_used:
            found |= values[mask]
    return sorted(int(v) for v in found - easier if low <= v <= high and int(v) not in numbers)
