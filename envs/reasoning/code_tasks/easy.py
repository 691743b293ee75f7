"""Easy problems: one loop or one comprehension, a parameter or two in the statement."""

from __future__ import annotations

from agentgym.envs.reasoning.code_tasks.base import Params, Problem, Rng, integers, pick, some, text

__all__ = ["PROBLEMS"]

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MIXED = LETTERS + LETTERS.upper() + "   ,.!?-'0123456789"


def _palindromish(rng: Rng, params: Params) -> tuple[str]:
    core = text(rng, "abcab", 0, 6)
    word = core + pick(rng, ["", "x", "b"]) + core[::-1] if rng.random() < 0.6 else core + "ab"
    styled = "".join(ch.upper() if rng.random() < 0.3 else ch for ch in word)
    noisy = "".join(
        ch + (pick(rng, [" ", ",", "!", ""]) if rng.random() < 0.3 else "") for ch in styled
    )
    return (noisy,)


def _words(rng: Rng, params: Params) -> tuple[str]:
    vocab = ["the", "cat", "The", "HAT", "sat", "on", "mat", "cat's"]
    separators = [" ", ", ", "! ", " - ", "  ", "\n"]
    words = [pick(rng, vocab) for _ in range(int(rng.integers(0, 10)))]
    return ("".join(w + pick(rng, separators) for w in words),)


PROBLEMS = (
    Problem(
        name="sum_of_multiples",
        signature="(n: int) -> int",
        doc="Return the sum of all positive integers below n that are multiples of $a or $b.",
        body="return sum(i for i in range(1, n) if i % $a == 0 or i % $b == 0)",
        params=lambda rng: dict(zip("ab", sorted(some(rng, range(2, 10), 2, 2)), strict=True)),
        draw=lambda rng, p: (int(rng.integers(0, 3000)),),
        examples=lambda p: [(10,), (20,)],
        edges=[(0,), (1,), (2,)],
    ),
    Problem(
        name="count_letters",
        signature="(text: str) -> int",
        doc="Return how many characters of text are one of the letters '$letters', ignoring case.",
        body="return sum(1 for ch in text.lower() if ch in '$letters')",
        params=lambda rng: {"letters": "".join(some(rng, LETTERS, 3, 5))},
        draw=lambda rng, p: (text(rng, MIXED, 0, 40),),
        examples=lambda p: [("Hello World",), ("Programming Puzzles",)],
        edges=[("",)],
    ),
    Problem(
        name="clamp_all",
        signature="(values: list[int]) -> list[int]",
        doc=(
            "Return a new list in which every number below $lo is replaced by $lo and every "
            "number above $hi by $hi; the other numbers are kept."
        ),
        body="return [min(max(v, $lo), $hi) for v in values]",
        params=lambda rng: (lambda lo: {"lo": lo, "hi": lo + int(rng.integers(3, 21))})(
            int(rng.integers(-10, 6))
        ),
        draw=lambda rng, p: (integers(rng, -40, 40, 0, 12),),
        examples=lambda p: [([-50, 0, 50],), ([1, 2, 3],)],
        edges=[([],)],
    ),
    Problem(
        name="fizzbuzz",
        signature="(n: int) -> list[str]",
        doc=(
            "Return a list of strings for the numbers 1 to n: '$w1$w2' for multiples of both "
            "$a and $b, '$w1' for other multiples of $a, '$w2' for other multiples of $b, and "
            "the number itself (as a string) for the rest."
        ),
        body=(
            "out = []\n"
            "for i in range(1, n + 1):\n"
            "    word = ('$w1' if i % $a == 0 else '') + ('$w2' if i % $b == 0 else '')\n"
            "    out.append(word or str(i))\n"
            "return out"
        ),
        params=lambda rng: {
            **dict(
                zip("ab", pick(rng, [(2, 3), (2, 5), (3, 4), (3, 5), (3, 7), (4, 5)]), strict=True)
            ),
            **dict(
                zip(
                    ("w1", "w2"),
                    [
                        str(w)
                        for w in rng.permutation(["Fizz", "Buzz", "Bang", "Pop", "Zip", "Boom"])[:2]
                    ],
                    strict=True,
                )
            ),
        },
        draw=lambda rng, p: (int(rng.integers(0, 40)),),
        examples=lambda p: [(5,), (15,)],
        edges=[(0,), (1,)],
    ),
    Problem(
        name="is_palindrome",
        signature="(text: str) -> bool",
        doc=(
            "Return True if text reads the same backwards as forwards once only its letters "
            "and digits are kept and case is ignored, else False."
        ),
        body="kept = [ch.lower() for ch in text if ch.isalnum()]\nreturn kept == kept[::-1]",
        draw=_palindromish,
        examples=lambda p: [("A man, a plan, a canal: Panama",), ("race a car",)],
        edges=[("",), ("!!",), ("ab",)],
    ),
    Problem(
        name="digit_sum",
        signature="(n: int) -> int",
        doc="Return the sum of the digits of the non-negative integer n written in base $base.",
        body=(
            "total = 0\nwhile n:\n    n, digit = divmod(n, $base)\n    total += digit\nreturn total"
        ),
        params=lambda rng: {"base": int(rng.integers(2, 17))},
        draw=lambda rng, p: (int(rng.integers(0, 10**7)),),
        examples=lambda p: [(100,), (255,)],
        edges=[(0,), (1,)],
    ),
    Problem(
        name="rotate",
        signature="(items: list, k: int) -> list",
        doc=(
            "Return a new list: items rotated $direction by k positions. k >= 0 may be larger "
            "than the list; an empty list stays empty."
        ),
        body=(
            "if not items:\n"
            "    return []\n"
            "k %= len(items)\n"
            "cut = $cut\n"
            "return items[cut:] + items[:cut]"
        ),
        params=lambda rng: pick(
            rng,
            [{"direction": "left", "cut": "k"}, {"direction": "right", "cut": "len(items) - k"}],
        ),
        draw=lambda rng, p: (integers(rng, 0, 9, 0, 8), int(rng.integers(0, 21))),
        examples=lambda p: [([1, 2, 3, 4, 5], 2), (["a", "b"], 3)],
        edges=[([], 3), ([1], 0)],
    ),
    Problem(
        name="second_largest",
        signature="(values: list[int]) -> int | None",
        doc=(
            "Return the second largest distinct value in values, or None if values holds fewer "
            "than two distinct values."
        ),
        body=(
            "distinct = sorted(set(values))\nreturn distinct[-2] if len(distinct) >= 2 else None"
        ),
        draw=lambda rng, p: (integers(rng, -5, 15, 0, 10),),
        examples=lambda p: [([3, 1, 4, 1, 5],), ([7, 7],)],
        edges=[([],), ([1],)],
    ),
    Problem(
        name="caesar",
        signature="(text: str) -> str",
        doc=(
            "Return text with every ASCII letter shifted $shift places forward in the alphabet, "
            "wrapping around from z to a and keeping its case; other characters are unchanged."
        ),
        body=(
            "out = []\n"
            "for ch in text:\n"
            "    if 'a' <= ch <= 'z':\n"
            "        out.append(chr((ord(ch) - 97 + $shift) % 26 + 97))\n"
            "    elif 'A' <= ch <= 'Z':\n"
            "        out.append(chr((ord(ch) - 65 + $shift) % 26 + 65))\n"
            "    else:\n"
            "        out.append(ch)\n"
            "return ''.join(out)"
        ),
        params=lambda rng: {"shift": int(rng.integers(1, 26))},
        draw=lambda rng, p: (text(rng, MIXED, 0, 30),),
        examples=lambda p: [("Hello, World!",), ("xyz",)],
        edges=[("",)],
    ),
    Problem(
        name="word_counts",
        signature="(text: str) -> dict[str, int]",
        doc=(
            "Return a dict mapping each word of text to how many times it occurs. Words are "
            "maximal runs of the ASCII letters a-z, compared in lowercase."
        ),
        body=(
            "counts = {}\n"
            "for word in re.findall('[a-z]+', text.lower()):\n"
            "    counts[word] = counts.get(word, 0) + 1\n"
            "return counts"
        ),
        imports="import re",
        draw=_words,
        examples=lambda p: [("the cat and the hat",), ("Go, go, GO!",)],
        edges=[("",)],
    ),
    Problem(
        name="running_mod_sums",
        signature="(values: list[int]) -> list[int]",
        doc=(
            "Return the running totals of values, each taken modulo $m (so every result is in "
            "range($m))."
        ),
        body=(
            "out, total = [], 0\n"
            "for v in values:\n"
            "    total = (total + v) % $m\n"
            "    out.append(total)\n"
            "return out"
        ),
        params=lambda rng: {"m": int(rng.integers(5, 101))},
        draw=lambda rng, p: (integers(rng, -100, 100, 0, 12),),
        examples=lambda p: [([1, 2, 3],), ([50, 60, -70],)],
        edges=[([],)],
    ),
    Problem(
        name="power_sum",
        signature="(n: int) -> int",
        doc="Return 1**$p + 2**$p + ... + n**$p (0 when n is 0).",
        body="return sum(i ** $p for i in range(1, n + 1))",
        params=lambda rng: {"p": int(rng.integers(1, 7))},
        draw=lambda rng, p: (int(rng.integers(0, 301)),),
        examples=lambda p: [(3,), (10,)],
        edges=[(0,), (1,)],
    ),
)
