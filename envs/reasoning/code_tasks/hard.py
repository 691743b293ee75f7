"""Hard problems: dynamic programming, graph search, parsing; costs and rules from the seed."""

from __future__ import annotations

from collections.abc import Callable

from agentgym.envs.reasoning.code_tasks.base import (
    Params,
    Problem,
    Rng,
    grid,
    integers,
    pick,
    some,
    text,
)

__all__ = ["PROBLEMS"]

FOUR = [(1, 0), (-1, 0), (0, 1), (0, -1)]
EIGHT = [*FOUR, (1, 1), (1, -1), (-1, 1), (-1, -1)]
NEIGHBOURS = [
    {"n": "four", "what": "up, down, left and right", "moves": repr(FOUR)},
    {"n": "eight", "what": "diagonals included", "moves": repr(EIGHT)},
]
CHORES = ["bake", "cool", "dice", "eat", "fry", "grill", "heat", "ice", "jar"]
TRUNCATE = "abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)"


def _divide(a: int, b: int, floor: bool) -> int:
    return a // b if floor else abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)


def _rpn(rng: Rng, params: Params) -> tuple[list[str]]:
    """A random valid expression in reverse Polish notation (no division by zero)."""

    def build(depth: int) -> tuple[list[str], int]:
        if depth >= 3 or rng.random() < 0.3:
            value = int(rng.integers(-9, 21))
            return [str(value)], value
        (left, a), (right, b) = build(depth + 1), build(depth + 1)
        op = pick(rng, "+-*/")
        if op == "/" and b == 0:
            op = "-"
        results = {"+": a + b, "-": a - b, "*": a * b}
        value = results[op] if op in results else _divide(a, b, params["floor"])
        return [*left, *right, op], value

    return (build(0)[0],)


def _chores(rng: Rng, params: Params) -> tuple[dict[str, list[str]]]:
    """Prerequisites of a few chores: a random DAG, or (sometimes) one with a cycle."""
    names = some(rng, CHORES, 0, 7)
    order = [names[int(i)] for i in rng.permutation(len(names))]
    needs: dict[str, list[str]] = {name: [] for name in names}
    for i, name in enumerate(order):
        needs[name] = [earlier for earlier in order[:i] if rng.random() < 0.3]
    if len(order) >= 2 and rng.random() < 0.3:
        needs[order[0]].append(order[-1])
        needs[order[-1]].append(order[0])
    return (needs,)


def _strings(alphabet: str, longest: int) -> Callable[[Rng, Params], tuple[str, str]]:
    return lambda rng, p: (text(rng, alphabet, 0, longest), text(rng, alphabet, 0, longest))


COMMON_DP = (
    "prev = [0] * (len(b) + 1)\n"
    "$track"
    "for x in a:\n"
    "    cur = [0]\n"
    "    for j, y in enumerate(b):\n"
    "        cur.append($cell)\n"
    "$keep"
    "    prev = cur\n"
    "return $answer"
)

PROBLEMS = (
    Problem(
        name="edit_distance",
        signature="(a: str, b: str) -> int",
        doc=(
            "Return the minimum total cost of turning a into b, where inserting a character "
            "costs $ins, deleting a character costs $dele and replacing a character by a "
            "different one costs $sub."
        ),
        body=(
            "prev = [j * $ins for j in range(len(b) + 1)]\n"
            "for i in range(1, len(a) + 1):\n"
            "    cur = [i * $dele] + [0] * len(b)\n"
            "    for j in range(1, len(b) + 1):\n"
            "        replace = prev[j - 1] + (0 if a[i - 1] == b[j - 1] else $sub)\n"
            "        cur[j] = min(prev[j] + $dele, cur[j - 1] + $ins, replace)\n"
            "    prev = cur\n"
            "return prev[len(b)]"
        ),
        params=lambda rng: {k: int(rng.integers(1, 4)) for k in ("ins", "dele", "sub")},
        draw=_strings("abc", 8),
        examples=lambda p: [("kitten", "sitting"), ("", "ab")],
        edges=[("", ""), ("abc", "abc")],
    ),
    Problem(
        name="change_ways",
        signature="(amount: int) -> int",
        doc=(
            "Return the number of ways to make amount from coins worth $coins, each usable any "
            "number of times; the order of the coins does not matter, and there is one way to "
            "make 0."
        ),
        body=(
            "ways = [1] + [0] * amount\n"
            "for coin in $coins:\n"
            "    for total in range(coin, amount + 1):\n"
            "        ways[total] += ways[total - coin]\n"
            "return ways[amount]"
        ),
        params=lambda rng: {"coins": some(rng, [1, 2, 3, 5, 7, 10, 20, 25, 50], 2, 4)},
        draw=lambda rng, p: (int(rng.integers(0, 301)),),
        examples=lambda p: [(10,), (0,)],
        edges=[(0,), (1,)],
    ),
    Problem(
        name="fewest_coins",
        signature="(amount: int) -> int",
        doc=(
            "Return the fewest coins worth $coins (each usable any number of times) that add up "
            "to amount, or -1 if amount cannot be made."
        ),
        body=(
            "best = [0] + [-1] * amount\n"
            "for total in range(1, amount + 1):\n"
            "    options = [best[total - c] for c in $coins if c <= total]\n"
            "    options = [count for count in options if count >= 0]\n"
            "    best[total] = min(options) + 1 if options else -1\n"
            "return best[amount]"
        ),
        params=lambda rng: {"coins": some(rng, [2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 15], 2, 3)},
        draw=lambda rng, p: (int(rng.integers(0, 201)),),
        examples=lambda p: [(11,), (1,)],
        edges=[(0,), (1,)],
    ),
    Problem(
        name="common_subsequence",
        signature="(a: str, b: str) -> int",
        doc="Return the length of the longest common subsequence of the strings a and b.",
        body=COMMON_DP.replace("$track", "")
        .replace("$keep", "")
        .replace("$cell", "prev[j] + 1 if x == y else max(prev[j + 1], cur[j])")
        .replace("$answer", "prev[-1]"),
        draw=_strings("abcd", 9),
        examples=lambda p: [("abcde", "ace"), ("abc", "def")],
        edges=[("", "abc"), ("abc", "abc")],
    ),
    Problem(
        name="common_substring",
        signature="(a: str, b: str) -> int",
        doc=(
            "Return the length of the longest common substring (a run of consecutive "
            "characters) of the strings a and b."
        ),
        body=COMMON_DP.replace("$track", "best = 0\n")
        .replace("$keep", "    best = max(best, max(cur))\n")
        .replace("$cell", "prev[j] + 1 if x == y else 0")
        .replace("$answer", "best"),
        draw=_strings("ab", 10),
        examples=lambda p: [("abcde", "xbcdy"), ("abc", "def")],
        edges=[("", "abc"), ("abc", "abc")],
    ),
    Problem(
        name="knapsack",
        signature="(items: list[tuple[int, int]], capacity: int) -> int",
        doc=(
            "items is a list of (weight, value) pairs. Return the largest total value of items "
            "whose total weight is at most capacity, using each item at most once."
        ),
        body=(
            "best = [0] * (capacity + 1)\n"
            "for weight, value in items:\n"
            "    for room in range(capacity, weight - 1, -1):\n"
            "        best[room] = max(best[room], best[room - weight] + value)\n"
            "return best[capacity]"
        ),
        draw=lambda rng, p: (
            [
                (int(rng.integers(1, 16)), int(rng.integers(1, 51)))
                for _ in range(int(rng.integers(0, 9)))
            ],
            int(rng.integers(0, 41)),
        ),
        examples=lambda p: [([(1, 1), (3, 4), (4, 5), (5, 7)], 7), ([], 10)],
        edges=[([], 0), ([(5, 10)], 4)],
    ),
    Problem(
        name="grid_steps",
        signature="(grid: list[str]) -> int",
        doc=(
            "grid is a list of equal-length strings of '.' (open) and '#' (wall). Return the "
            "fewest moves from the top-left cell to the bottom-right cell, each move going to "
            "one of the $n neighbouring open cells ($what), or -1 if there is no way (or a "
            "corner is a wall)."
        ),
        body=(
            "rows, cols = len(grid), len(grid[0]) if grid else 0\n"
            "if not rows or not cols or grid[0][0] == '#' or grid[-1][-1] == '#':\n"
            "    return -1\n"
            "steps = {(0, 0): 0}\n"
            "queue = deque([(0, 0)])\n"
            "while queue:\n"
            "    r, c = queue.popleft()\n"
            "    if (r, c) == (rows - 1, cols - 1):\n"
            "        return steps[r, c]\n"
            "    for dr, dc in $moves:\n"
            "        nr, nc = r + dr, c + dc\n"
            "        if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == '.':\n"
            "            if (nr, nc) not in steps:\n"
            "                steps[nr, nc] = steps[r, c] + 1\n"
            "                queue.append((nr, nc))\n"
            "return -1"
        ),
        imports="from collections import deque",
        params=lambda rng: pick(rng, NEIGHBOURS),
        draw=lambda rng, p: (grid(rng, ".#", 0.3, (1, 6), (1, 6)),),
        examples=lambda p: [([".#.", "...", "#.."],), (["..", "##", ".."],)],
        edges=[(["."],), (["#"],)],
    ),
    Problem(
        name="eval_rpn",
        signature="(tokens: list[str]) -> int",
        doc=(
            "tokens is an expression in reverse Polish notation: integers (maybe negative) and "
            "the operators +, -, * and /. Return its value, where / is integer division that "
            "rounds $rounding. The expression is valid and never divides by zero."
        ),
        body=(
            "stack = []\n"
            "for token in tokens:\n"
            "    if token in ('+', '-', '*', '/'):\n"
            "        b, a = stack.pop(), stack.pop()\n"
            "        if token == '+':\n"
            "            stack.append(a + b)\n"
            "        elif token == '-':\n"
            "            stack.append(a - b)\n"
            "        elif token == '*':\n"
            "            stack.append(a * b)\n"
            "        else:\n"
            "            stack.append($divide)\n"
            "    else:\n"
            "        stack.append(int(token))\n"
            "return stack[-1]"
        ),
        params=lambda rng: pick(
            rng,
            [
                {"rounding": "down (like Python's //)", "divide": "a // b", "floor": True},
                {"rounding": "toward zero (7 / -2 is -3)", "divide": TRUNCATE, "floor": False},
            ],
        ),
        draw=_rpn,
        examples=lambda p: [(["2", "1", "+", "3", "*"],), (["7", "-2", "/"],)],
        edges=[(["42"],), (["-5"],)],
    ),
    Problem(
        name="count_islands",
        signature="(grid: list[str]) -> int",
        doc=(
            "grid is a list of equal-length strings of '#' (land) and '.' (water). Return the "
            "number of islands: groups of land cells joined through their $n neighbours "
            "($what)."
        ),
        body=(
            "seen = set()\n"
            "islands = 0\n"
            "for r, row in enumerate(grid):\n"
            "    for c, cell in enumerate(row):\n"
            "        if cell != '#' or (r, c) in seen:\n"
            "            continue\n"
            "        islands += 1\n"
            "        seen.add((r, c))\n"
            "        stack = [(r, c)]\n"
            "        while stack:\n"
            "            y, x = stack.pop()\n"
            "            for dy, dx in $moves:\n"
            "                ny, nx = y + dy, x + dx\n"
            "                if 0 <= ny < len(grid) and 0 <= nx < len(grid[ny]):\n"
            "                    if grid[ny][nx] == '#' and (ny, nx) not in seen:\n"
            "                        seen.add((ny, nx))\n"
            "                        stack.append((ny, nx))\n"
            "return islands"
        ),
        params=lambda rng: pick(rng, NEIGHBOURS),
        draw=lambda rng, p: (grid(rng, ".#", 0.4, (0, 7), (1, 7)),),
        examples=lambda p: [(["##..", "#..#", "..##"],), (["#.#", ".#.", "#.#"],)],
        edges=[([],), (["."],)],
    ),
    Problem(
        name="next_arrangement",
        signature="(values: list[int]) -> list[int]",
        doc=(
            "Return the arrangement of values that comes next in lexicographic order, or values "
            "sorted in increasing order if values is already the last arrangement."
        ),
        body=(
            "items = list(values)\n"
            "i = len(items) - 2\n"
            "while i >= 0 and items[i] >= items[i + 1]:\n"
            "    i -= 1\n"
            "if i < 0:\n"
            "    return sorted(items)\n"
            "j = len(items) - 1\n"
            "while items[j] <= items[i]:\n"
            "    j -= 1\n"
            "items[i], items[j] = items[j], items[i]\n"
            "items[i + 1:] = reversed(items[i + 1:])\n"
            "return items"
        ),
        draw=lambda rng, p: (integers(rng, 0, 5, 0, 7),),
        examples=lambda p: [([1, 2, 3],), ([3, 2, 1],)],
        edges=[([],), ([1],), ([1, 1],)],
    ),
    Problem(
        name="longest_palindrome",
        signature="(text: str) -> str",
        doc=(
            "Return the longest substring of text that is a palindrome; of several equally "
            "long ones, the one that starts first."
        ),
        body=(
            "best = text[:1]\n"
            "for center in range(2 * len(text) - 1):\n"
            "    lo, hi = center // 2, (center + 1) // 2\n"
            "    while lo >= 0 and hi < len(text) and text[lo] == text[hi]:\n"
            "        lo, hi = lo - 1, hi + 1\n"
            "    if hi - lo - 1 > len(best):\n"
            "        best = text[lo + 1:hi]\n"
            "return best"
        ),
        draw=lambda rng, p: (text(rng, pick(rng, ["ab", "abc"]), 0, 12),),
        examples=lambda p: [("babad",), ("cbbd",)],
        edges=[("",), ("a",), ("ab",)],
    ),
    Problem(
        name="chore_order",
        signature="(needs: dict[str, list[str]]) -> list[str] | None",
        doc=(
            "needs maps every chore to the list of chores that must be done before it (every "
            "chore is a key). Return all the chores in an order that respects needs, taking "
            "the alphabetically smallest chore that can be done at each step, or None if no "
            "order exists (the needs go round in a circle)."
        ),
        body=(
            "waiting = {chore: len(set(before)) for chore, before in needs.items()}\n"
            "unlocks = {chore: [] for chore in needs}\n"
            "for chore, before in needs.items():\n"
            "    for first in set(before):\n"
            "        unlocks[first].append(chore)\n"
            "ready = [chore for chore, count in waiting.items() if count == 0]\n"
            "heapq.heapify(ready)\n"
            "order = []\n"
            "while ready:\n"
            "    chore = heapq.heappop(ready)\n"
            "    order.append(chore)\n"
            "    for later in unlocks[chore]:\n"
            "        waiting[later] -= 1\n"
            "        if waiting[later] == 0:\n"
            "            heapq.heappush(ready, later)\n"
            "return order if len(order) == len(needs) else None"
        ),
        imports="import heapq",
        draw=_chores,
        examples=lambda p: [
            ({"wash": [], "dry": ["wash"], "fold": ["dry"], "iron": ["dry"]},),
            ({"a": ["b"], "b": ["a"]},),
        ],
        edges=[({},)],
    ),
    Problem(
        name="nth_smooth",
        signature="(n: int) -> int",
        doc=(
            "Return the n-th smallest positive integer whose prime factors are all among "
            "$primes (n >= 1; the first one is 1)."
        ),
        body=(
            "seen, heap = {1}, [1]\n"
            "for _ in range(n - 1):\n"
            "    smallest = heapq.heappop(heap)\n"
            "    for p in $primes:\n"
            "        if smallest * p not in seen:\n"
            "            seen.add(smallest * p)\n"
            "            heapq.heappush(heap, smallest * p)\n"
            "return heap[0]"
        ),
        imports="import heapq",
        params=lambda rng: {"primes": some(rng, [2, 3, 5, 7, 11, 13], 2, 3)},
        draw=lambda rng, p: (int(rng.integers(1, 301)),),
        examples=lambda p: [(1,), (10,)],
        edges=[(1,), (2,)],
    ),
)
