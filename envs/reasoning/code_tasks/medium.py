"""Medium problems: a data structure or a small algorithm, with a twist drawn from the seed."""

from __future__ import annotations

from typing import Any

from agentgym.envs.reasoning.code_tasks.base import Params, Problem, Rng, integers, pick, some

__all__ = ["PROBLEMS"]

BRACKETS = ("()", "[]", "{}", "<>")
ANAGRAMS = (
    ("listen", "silent", "enlist"),
    ("dusty", "study"),
    ("night", "thing"),
    ("act", "cat", "tac"),
    ("evil", "vile", "live", "veil"),
    ("apple",),
    ("zebra",),
)
DIGITS = "0123456789abcdef"


def _runs(rng: Rng, params: Params) -> tuple[str]:
    return (
        "".join(
            pick(rng, "aabc") * int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 7)))
        ),
    )


def _intervals(rng: Rng, params: Params) -> tuple[list[list[int]]]:
    pairs: list[list[int]] = []
    for _ in range(int(rng.integers(0, 8))):
        start = int(rng.integers(0, 31))
        pairs.append([start, start + int(rng.integers(0, 9))])
    return (pairs,)


def _brackets(rng: Rng, params: Params) -> tuple[str]:
    pairs = params["chosen"]

    def balanced(depth: int) -> str:
        out = ""
        for _ in range(int(rng.integers(0, 3))):
            pair = pick(rng, pairs)
            inner = balanced(depth + 1) if depth < 3 else ""
            out += pair[0] + inner + pick(rng, ["", "x", "7"]) + pair[1]
        return out

    sample = balanced(0)
    if rng.random() < 0.5 and sample:  # break it: drop, add or swap a bracket
        at = int(rng.integers(len(sample)))
        sample = (
            sample[:at]
            + pick(rng, [ch for pair in BRACKETS for ch in pair] + [""])
            + sample[at + 1 :]
        )
    if rng.random() < 0.3:  # brackets of other kinds are ignored
        sample += pick(rng, ["()", "]", "{", "<>", ">"])
    return (sample,)


def _nested(rng: Rng, params: Params) -> tuple[list[Any]]:
    def items(depth: int) -> list[Any]:
        out: list[Any] = []
        for _ in range(int(rng.integers(0, 4))):
            if depth < 4 and rng.random() < 0.35:
                out.append(items(depth + 1))
            else:
                out.append(int(rng.integers(-9, 10)))
        return out

    return (items(0),)


def _in_base(n: int, base: int) -> str:
    digits = ""
    while True:
        n, d = divmod(n, base)
        digits = DIGITS[d] + digits
        if not n:
            return digits


PROBLEMS = (
    Problem(
        name="run_length",
        signature="(text: str) -> list[tuple[str, int]]",
        doc=(
            "Return the run-length encoding of text: a list of (character, count) tuples, one "
            "for each maximal run of equal characters, in order."
        ),
        body=(
            "runs = []\n"
            "for ch in text:\n"
            "    if runs and runs[-1][0] == ch:\n"
            "        runs[-1] = (ch, runs[-1][1] + 1)\n"
            "    else:\n"
            "        runs.append((ch, 1))\n"
            "return runs"
        ),
        draw=_runs,
        examples=lambda p: [("aaabccdddd",), ("abc",)],
        edges=[("",), ("zzzz",)],
    ),
    Problem(
        name="merge_intervals",
        signature="(intervals: list[list[int]]) -> list[list[int]]",
        doc=(
            "intervals is a list of [start, end] pairs with start <= end. Return the merged "
            "intervals as a list of [start, end] lists sorted by start, $rule."
        ),
        body=(
            "merged = []\n"
            "for start, end in sorted(intervals):\n"
            "    if merged and start $cmp merged[-1][1]:\n"
            "        merged[-1][1] = max(merged[-1][1], end)\n"
            "    else:\n"
            "        merged.append([start, end])\n"
            "return merged"
        ),
        params=lambda rng: pick(
            rng,
            [
                {
                    "cmp": "<=",
                    "rule": (
                        "merging two intervals when one starts at or before the end of the other"
                    ),
                },
                {
                    "cmp": "<",
                    "rule": (
                        "merging two intervals only when one starts strictly before the end of "
                        "the other (so [1, 2] and [2, 3] stay apart)"
                    ),
                },
            ],
        ),
        draw=_intervals,
        examples=lambda p: [([[1, 3], [2, 6], [8, 10]],), ([[1, 2], [2, 3]],)],
        edges=[([],)],
    ),
    Problem(
        name="balanced",
        signature="(text: str) -> bool",
        doc=(
            "Return True if the brackets $shown in text are balanced and properly nested, else "
            "False. Every other character (brackets of other kinds included) is ignored."
        ),
        body=(
            "closing = $closing\n"
            "opening = set(closing.values())\n"
            "stack = []\n"
            "for ch in text:\n"
            "    if ch in opening:\n"
            "        stack.append(ch)\n"
            "    elif ch in closing:\n"
            "        if not stack or stack.pop() != closing[ch]:\n"
            "            return False\n"
            "return not stack"
        ),
        params=lambda rng: (
            lambda chosen: {
                "chosen": chosen,
                "shown": " and ".join(chosen),
                "closing": repr({pair[1]: pair[0] for pair in chosen}),
            }
        )(some(rng, BRACKETS, 2, 4)),
        draw=_brackets,
        examples=lambda p: [
            (f"{p['chosen'][0][0]}a{p['chosen'][1][0]}b{p['chosen'][1][1]}{p['chosen'][0][1]}",),
            (f"{p['chosen'][0][0]}{p['chosen'][1][1]}",),
        ],
        edges=[("",)],
    ),
    Problem(
        name="top_words",
        signature="(words: list[str]) -> list[str]",
        doc=(
            "words is a list of lowercase words. Return the $k most frequent distinct words "
            "(fewer if there are fewer distinct words), most frequent first; words that occur "
            "equally often come in alphabetical order."
        ),
        body=(
            "counts = {}\n"
            "for w in words:\n"
            "    counts[w] = counts.get(w, 0) + 1\n"
            "return sorted(counts, key=lambda w: (-counts[w], w))[:$k]"
        ),
        params=lambda rng: {"k": int(rng.integers(1, 5))},
        draw=lambda rng, p: (
            [
                pick(rng, ["pear", "fig", "kiwi", "lime", "date", "plum"])
                for _ in range(int(rng.integers(0, 16)))
            ],
        ),
        examples=lambda p: [(["b", "a", "b", "c", "a", "b"],), (["x"],)],
        edges=[([],)],
    ),
    Problem(
        name="spiral",
        signature="(matrix: list[list[int]]) -> list[int]",
        doc=(
            "matrix is a list of rows of equal length. Return its elements in $order spiral "
            "order, starting at the top-left corner and going $first first."
        ),
        body=(
            "rows = [list(row) for row in matrix]\n"
            "${prepare}"
            "result = []\n"
            "while rows:\n"
            "    result.extend(rows.pop(0))\n"
            "    rows = [list(row) for row in zip(*rows)][::-1]\n"
            "return result"
        ),
        params=lambda rng: pick(
            rng,
            [
                {"order": "clockwise", "first": "right", "prepare": ""},
                {
                    "order": "counterclockwise",
                    "first": "down",
                    "prepare": "rows = [list(column) for column in zip(*rows)]\n",
                },
            ],
        ),
        draw=lambda rng, p: (
            (
                lambda cols: [
                    integers(rng, 0, 99, cols, cols) for _ in range(int(rng.integers(0, 6)))
                ]
            )(int(rng.integers(1, 6))),
        ),
        examples=lambda p: [([[1, 2, 3], [4, 5, 6], [7, 8, 9]],), ([[1, 2], [3, 4], [5, 6]],)],
        edges=[([],), ([[7]],)],
    ),
    Problem(
        name="primes_between",
        signature="(lo: int, hi: int) -> list[int]",
        doc="Return the prime numbers p with lo <= p < hi, in increasing order.",
        body=(
            "found = []\n"
            "for n in range(max(lo, 2), hi):\n"
            "    if all(n % d for d in range(2, int(n ** 0.5) + 1)):\n"
            "        found.append(n)\n"
            "return found"
        ),
        draw=lambda rng, p: (lambda lo: (lo, lo + int(rng.integers(0, 200))))(
            int(rng.integers(0, 500))
        ),
        examples=lambda p: [(10, 30), (0, 10)],
        edges=[(0, 0), (5, 3), (2, 3)],
    ),
    Problem(
        name="rotate_matrix",
        signature="(matrix: list[list[int]]) -> list[list[int]]",
        doc=(
            "matrix is a square list of lists. Return a new matrix: matrix rotated 90 degrees "
            "$direction."
        ),
        body="return $rotated",
        params=lambda rng: pick(
            rng,
            [
                {"direction": "clockwise", "rotated": "[list(row) for row in zip(*matrix[::-1])]"},
                {
                    "direction": "counterclockwise",
                    "rotated": "[list(row) for row in zip(*matrix)][::-1]",
                },
            ],
        ),
        draw=lambda rng, p: (
            (lambda n: [integers(rng, 0, 9, n, n) for _ in range(n)])(int(rng.integers(0, 6))),
        ),
        examples=lambda p: [([[1, 2], [3, 4]],), ([[1, 2, 3], [4, 5, 6], [7, 8, 9]],)],
        edges=[([],), ([[5]],)],
    ),
    Problem(
        name="longest_run",
        signature="(values: list[int]) -> int",
        doc=(
            "Return the length of the longest contiguous run of values that is $kind (0 for an "
            "empty list)."
        ),
        body=(
            "best = run = 0\n"
            "for i, v in enumerate(values):\n"
            "    run = run + 1 if i and values[i - 1] $op v else 1\n"
            "    best = max(best, run)\n"
            "return best"
        ),
        params=lambda rng: pick(
            rng,
            [{"kind": "strictly increasing", "op": "<"}, {"kind": "non-decreasing", "op": "<="}],
        ),
        draw=lambda rng, p: (integers(rng, 0, 6, 0, 15),),
        examples=lambda p: [([1, 2, 2, 3, 4, 1],), ([5, 4, 3],)],
        edges=[([],), ([3],)],
    ),
    Problem(
        name="group_anagrams",
        signature="(words: list[str]) -> list[list[str]]",
        doc=(
            "Group the words that are anagrams of each other. Return a list of groups: each "
            "group is a sorted list of words, and the groups are sorted by their first word. "
            "A word that occurs twice is in its group twice."
        ),
        body=(
            "groups = {}\n"
            "for word in words:\n"
            "    groups.setdefault(''.join(sorted(word)), []).append(word)\n"
            "return sorted(sorted(group) for group in groups.values())"
        ),
        draw=lambda rng, p: (
            [pick(rng, pick(rng, ANAGRAMS)) for _ in range(int(rng.integers(0, 9)))],
        ),
        examples=lambda p: [(["eat", "tea", "tan", "ate", "nat", "bat"],)],
        edges=[([],)],
    ),
    Problem(
        name="to_roman",
        signature="(n: int) -> str",
        doc="Return n (1 <= n <= 3999) in Roman numerals, $style.",
        body=(
            "out = []\n"
            "for value, symbol in $table:\n"
            "    while n >= value:\n"
            "        out.append(symbol)\n"
            "        n -= value\n"
            "return ''.join(out)"
        ),
        params=lambda rng: pick(
            rng,
            [
                {
                    "style": "with the subtractive forms IV, IX, XL, XC, CD and CM",
                    "table": repr(
                        [
                            (1000, "M"),
                            (900, "CM"),
                            (500, "D"),
                            (400, "CD"),
                            (100, "C"),
                            (90, "XC"),
                            (50, "L"),
                            (40, "XL"),
                            (10, "X"),
                            (9, "IX"),
                            (5, "V"),
                            (4, "IV"),
                            (1, "I"),
                        ]
                    ),
                },
                {
                    "style": (
                        "without subtractive forms: 4 is IIII, 9 is VIIII, 40 is XXXX, 90 is "
                        "LXXXX, 400 is CCCC and 900 is DCCCC"
                    ),
                    "table": repr(
                        [
                            (1000, "M"),
                            (500, "D"),
                            (100, "C"),
                            (50, "L"),
                            (10, "X"),
                            (5, "V"),
                            (1, "I"),
                        ]
                    ),
                },
            ],
        ),
        draw=lambda rng, p: (int(rng.integers(1, 4000)),),
        examples=lambda p: [(4,), (1994,)],
        edges=[(1,), (3999,)],
    ),
    Problem(
        name="convert_base",
        signature="(digits: str) -> str",
        doc=(
            "digits is a non-negative integer written in base $source (digits 0-9, then "
            "lowercase a-f). Return the same number written in base $target, in the same digit "
            "style and without leading zeros ('0' for zero)."
        ),
        body=(
            "n = int(digits, $source)\n"
            "if n == 0:\n"
            "    return '0'\n"
            "out = []\n"
            "while n:\n"
            "    n, d = divmod(n, $target)\n"
            "    out.append('0123456789abcdef'[d])\n"
            "return ''.join(reversed(out))"
        ),
        params=lambda rng: dict(
            zip(
                ("source", "target"),
                some(rng, range(2, 17), 2, 2)[:: pick(rng, [1, -1])],
                strict=True,
            )
        ),
        draw=lambda rng, p: (
            pick(rng, ["", "", "", "0"]) + _in_base(int(rng.integers(0, 10**9)), p["source"]),
        ),
        examples=lambda p: [(_in_base(255, p["source"]),), ("0",)],
        edges=[("0",), ("1",)],
    ),
    Problem(
        name="flatten",
        signature="(nested: list) -> list[int]",
        doc=(
            "nested is a list whose items are integers or lists of the same kind, nested to any "
            "depth. Return all the integers, in order, as one flat list."
        ),
        body=(
            "flat = []\n"
            "for item in nested:\n"
            "    if isinstance(item, list):\n"
            "        flat.extend(flatten(item))\n"
            "    else:\n"
            "        flat.append(item)\n"
            "return flat"
        ),
        draw=_nested,
        examples=lambda p: [([1, [2, [3, 4]], 5],), ([[], [[6]]],)],
        edges=[([],)],
    ),
)
