"""Sudoku: fill the 9x9 grid so that every row, column and 3x3 box holds the digits 1-9 once.

**What the agent sees.** The grid with numbered rows and columns (``.`` is an empty cell), the
list of the cells it has filled itself, and a legend::

    Sudoku: 49 empty cells left.
          1 2 3   4 5 6   7 8 9
        +-------+-------+-------+
      1 | 5 3 4 | . 7 . | . . . |
      2 | 6 7 . | 1 9 5 | . . . |
      3 | . 9 8 | . . . | . 6 . |
        +-------+-------+-------+
      4 | 8 . . | . 6 . | . . 3 |
      5 | 4 . . | 8 . 3 | . . 1 |
      6 | 7 . . | . 2 . | . . 6 |
        +-------+-------+-------+
      7 | . 6 . | . . . | 2 8 . |
      8 | . . . | 4 1 9 | . . 5 |
      9 | . . . | . 8 . | . 7 9 |
        +-------+-------+-------+
    Your entries: r1c3=4, r2c2=7
    Legend: . empty. Rows are numbered 1-9 from the top, columns 1-9 from the left; the digits
    not listed as your entries are givens and cannot be changed.

Every puzzle has exactly one solution.

**What it may do.**

* ``put R C V`` (also ``set``, ``place``, ``write``, ``fill``) writes digit ``V`` in row ``R``,
  column ``C``; on a cell the agent filled before, it replaces the digit. ``put 3 4 5``,
  ``put 3,4,5``, ``put (3, 4) 5``, ``put r3c4 5``, ``put 345`` and, with the digit first,
  ``put 5 at 3 4`` or ``put 5 in r3c4`` all mean the same.
* ``clear R C`` (also ``erase``, ``remove``, ``delete``) empties a cell the agent filled.

Invalid actions, which change nothing and say why: changing a given, a row, column or digit
outside 1-9, clearing an empty cell, writing the digit a cell already holds, unreadable text,
and a **conflicting placement**: a digit already present in the same row, column or box is
rejected, naming the cell that holds it (``5 is already in row 3, at row 3, column 7``). The
grid therefore never contains a conflict, but it can contain digits that are wrong for the
solution; the agent finds out when it gets stuck and must clear them.

``info["admissible_actions"]`` lists every legal action: each non-conflicting ``put`` (into
empty cells and over the agent's own digits) and each ``clear``.

**Scoring.** Reward 1 when the grid is full (and therefore valid; the episode terminates),
else 0.

**Levels.** The number of givens: easy 40, medium 32, hard 26. A full grid is drawn by
randomised backtracking, then givens are removed in a random order, each removal kept only if a
solver counting solutions (up to 2) still finds exactly one. If a grid cannot get down to the
target while staying unique, the puzzle keeps the fewest givens reached (about 1 hard puzzle in
40 keeps 27). Generation takes about 20 ms on hard.

**Oracle.** A constraint solver (backtracking on bitmask candidates with naked- and
hidden-single propagation, branching on the cell with the fewest candidates) run from the
current grid. If the agent's digits make the grid unsolvable, the oracle solves from the givens
and first clears every digit of the agent's that differs from the solution, then fills the
rest, so it can take over from any state.

**Version history.** v0: first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

__all__ = ["SudokuEnv", "SudokuWorld", "count_solutions", "solve_grid"]

ROW = tuple(i // 9 for i in range(81))
COL = tuple(i % 9 for i in range(81))
BOX = tuple((i // 27) * 3 + (i % 9) // 3 for i in range(81))
UNITS = (
    tuple(tuple(r * 9 + c for c in range(9)) for r in range(9))
    + tuple(tuple(r * 9 + c for r in range(9)) for c in range(9))
    + tuple(
        tuple((br * 3 + r) * 9 + bc * 3 + c for r in range(3) for c in range(3))
        for br in range(3)
        for bc in range(3)
    )
)
ALL = 0b1111111110  # bits 1..9
_PUTS = tuple(tuple(f"put {i // 9 + 1} {i % 9 + 1} {v}" for v in range(10)) for i in range(81))
_CLEARS = tuple(f"clear {i // 9 + 1} {i % 9 + 1}" for i in range(81))

_COMMANDS = {
    "put": "put",
    "set": "put",
    "place": "put",
    "write": "put",
    "fill": "put",
    "clear": "clear",
    "erase": "clear",
    "remove": "clear",
    "delete": "clear",
}
_COMMAND = re.compile(r"\b(" + "|".join(_COMMANDS) + r")\b")
_NUMBER = re.compile(r"-?[0-9]+")
_VALUE_FIRST = re.compile(r"\s*(-?[0-9]+)\s+(?:at|in|into|on)\b(.*)")
LEGEND = (
    "Legend: . empty. Rows are numbered 1-9 from the top, columns 1-9 from the left; the digits\n"
    "not listed as your entries are givens and cannot be changed."
)


# ---------------------------------------------------------------------- the solver


def _search(
    grid: list[int],
    rows: list[int],
    cols: list[int],
    boxes: list[int],
    empties: list[int],
    limit: int,
    found: list[list[int]],
    order: list[list[int]] | None,
) -> None:
    """Depth-first search with propagation; appends solutions to ``found`` up to ``limit``."""
    while True:
        progress = False
        remaining = []
        best, best_count, best_cand = -1, 10, 0
        for i in empties:
            cand = ALL & ~(rows[ROW[i]] | cols[COL[i]] | boxes[BOX[i]])
            if not cand:
                return  # a cell with no candidate: dead end
            if not cand & (cand - 1):  # naked single
                _place(grid, rows, cols, boxes, i, cand.bit_length() - 1)
                progress = True
                continue
            remaining.append(i)
            count = cand.bit_count()
            if count < best_count:
                best, best_count, best_cand = i, count, cand
        empties = remaining
        if not empties:
            found.append(grid[:])
            return
        if progress:
            continue
        # Hidden singles: a digit that fits only one cell of a unit.
        for unit in UNITS:
            seen_once = seen_twice = 0
            for i in unit:
                if grid[i]:
                    continue
                cand = ALL & ~(rows[ROW[i]] | cols[COL[i]] | boxes[BOX[i]])
                seen_twice |= seen_once & cand
                seen_once |= cand
            used = 0
            for i in unit:
                used |= 1 << grid[i]
            if (seen_once | used) & ALL != ALL:
                return  # some digit has no place left in this unit
            singles = seen_once & ~seen_twice & ~used
            if singles:
                for i in unit:
                    if grid[i]:
                        continue
                    cand = ALL & ~(rows[ROW[i]] | cols[COL[i]] | boxes[BOX[i]]) & singles
                    if cand:
                        if cand & (cand - 1):
                            return  # two digits need this same cell
                        _place(grid, rows, cols, boxes, i, cand.bit_length() - 1)
                        progress = True
        if progress:
            empties = [i for i in empties if not grid[i]]
            continue
        break
    values = order[best] if order is not None else range(1, 10)
    rest = [i for i in empties if i != best]
    for value in values:
        if not best_cand >> value & 1:
            continue
        g, r, c, b = grid[:], rows[:], cols[:], boxes[:]
        _place(g, r, c, b, best, value)
        _search(g, r, c, b, rest, limit, found, order)
        if len(found) >= limit:
            return


def _place(
    grid: list[int], rows: list[int], cols: list[int], boxes: list[int], i: int, v: int
) -> None:
    bit = 1 << v
    grid[i] = v
    rows[ROW[i]] |= bit
    cols[COL[i]] |= bit
    boxes[BOX[i]] |= bit


def _solutions(
    grid: list[int] | tuple[int, ...], limit: int, order: list[list[int]] | None = None
) -> list[list[int]]:
    rows, cols, boxes = [0] * 9, [0] * 9, [0] * 9
    for i, v in enumerate(grid):
        if v:
            bit = 1 << v
            if rows[ROW[i]] & bit or cols[COL[i]] & bit or boxes[BOX[i]] & bit:
                return []  # the clues themselves conflict
            rows[ROW[i]] |= bit
            cols[COL[i]] |= bit
            boxes[BOX[i]] |= bit
    found: list[list[int]] = []
    empties = [i for i in range(81) if not grid[i]]
    _search(list(grid), rows, cols, boxes, empties, limit, found, order)
    return found


def count_solutions(grid: list[int] | tuple[int, ...], limit: int = 2) -> int:
    """How many solutions the grid (81 digits, 0 for empty) has, counting up to ``limit``."""
    return len(_solutions(grid, limit))


def solve_grid(grid: list[int] | tuple[int, ...]) -> list[int] | None:
    """A solution of the grid (81 digits, 0 for empty), or None if it has none."""
    found = _solutions(grid, 1)
    return found[0] if found else None


# ---------------------------------------------------------------------- the world


class SudokuWorld(PuzzleWorld):
    """``givens`` and ``grid`` are 81 digits in reading order, 0 for an empty cell."""

    def __init__(self, givens: tuple[int, ...]) -> None:
        self.givens = tuple(givens)
        self.grid = list(givens)

    def apply(self, action: str) -> str:
        command, numbers = self._parse(action)
        row, col = numbers[0], numbers[1]
        cell = (row - 1) * 9 + (col - 1)
        where = f"row {row}, column {col}"
        if self.givens[cell]:
            raise InvalidAction(
                f"{where} is a given ({self.givens[cell]}) and cannot be changed; you may only "
                f"change cells that were empty at the start"
            )
        if command == "clear":
            if not self.grid[cell]:
                raise InvalidAction(f"{where} is already empty")
            old = self.grid[cell]
            self.grid[cell] = 0
            return f"Cleared {where} (it held {old}). {self._left()}"
        value = numbers[2]
        if self.grid[cell] == value:
            raise InvalidAction(f"{where} already holds {value}")
        clash = self.conflict(cell, value)
        if clash is not None:
            raise InvalidAction(clash)
        old = self.grid[cell]
        self.grid[cell] = value
        replaced = f" (replacing {old})" if old else ""
        return f"Put {value} at {where}{replaced}. {self._left()}"

    def conflict(self, cell: int, value: int) -> str | None:
        """Why ``value`` cannot go in ``cell`` (a row, column or box already holds it), or None."""
        kinds = ((ROW, f"row {ROW[cell] + 1}"), (COL, f"column {COL[cell] + 1}"), (BOX, "its box"))
        for index, unit_name in kinds:
            for other in range(81):
                if other != cell and index[other] == index[cell] and self.grid[other] == value:
                    return (
                        f"{value} is already in {unit_name}, at row {other // 9 + 1}, column "
                        f"{other % 9 + 1}"
                    )
        return None

    def _parse(self, action: str) -> tuple[str, list[int]]:
        line = last_line(action)
        found = list(_COMMAND.finditer(line))
        if not found:
            raise InvalidAction(
                f"could not read {action.strip()[:80]!r}: write 'put R C V' to write digit V in "
                f"row R, column C (all 1-9), or 'clear R C' to empty a cell you filled; e.g. "
                f"'put 3 4 5'"
            )
        match = found[-1]
        command = _COMMANDS[match.group(1)]
        rest = line[match.end() :]
        texts = _NUMBER.findall(rest)
        if command == "put" and len(texts) == 1 and len(texts[0]) == 3 and "-" not in texts[0]:
            texts = list(texts[0])  # 'put 345'
        value_first = _VALUE_FIRST.match(rest) if command == "put" else None
        if value_first:  # 'put 5 at 3 4', 'put 5 in r3c4'
            texts = [*_NUMBER.findall(value_first.group(2)), value_first.group(1)]
        want = 3 if command == "put" else 2
        if len(texts) != want:
            example = "'put 3 4 5' (row 3, column 4, digit 5)" if want == 3 else "'clear 3 4'"
            raise InvalidAction(
                f"'{command}' takes {want} numbers, got {len(texts)} in {line[:80]!r}; e.g. "
                f"{example}"
            )
        numbers = [int(t) if len(t) <= 6 else 10**6 for t in texts]
        for number, text, what in zip(numbers, texts, ("row", "column", "digit"), strict=False):
            if not 1 <= number <= 9:
                hint = (
                    "; to empty a cell use 'clear R C'" if what == "digit" and number == 0 else ""
                )
                raise InvalidAction(f"the {what} must be 1-9, got {text[:12]}{hint}")
        return command, numbers

    def _left(self) -> str:
        return f"{self.grid.count(0)} empty cell(s) left."

    def legal_actions(self) -> list[str]:
        rows, cols, boxes = [0] * 9, [0] * 9, [0] * 9
        grid = self.grid
        for i, v in enumerate(grid):
            if v:
                rows[ROW[i]] |= 1 << v
                cols[COL[i]] |= 1 << v
                boxes[BOX[i]] |= 1 << v
        actions: list[str] = []
        for cell in range(81):
            if self.givens[cell]:
                continue
            # The grid never holds a conflict, so the cell's own digit is nowhere else in its units.
            free = ALL & ~(rows[ROW[cell]] | cols[COL[cell]] | boxes[BOX[cell]])
            puts = _PUTS[cell]
            actions.extend(puts[v] for v in range(1, 10) if free >> v & 1)
            if grid[cell]:
                actions.append(_CLEARS[cell])
        return actions

    def render(self) -> str:
        border = "    +-------+-------+-------+"
        lines = [f"Sudoku: {self.grid.count(0)} empty cells left.", "      1 2 3   4 5 6   7 8 9"]
        for r in range(9):
            if r % 3 == 0:
                lines.append(border)
            parts = []
            for b in range(3):
                parts.append(
                    " ".join(
                        str(v) if v else "." for v in self.grid[r * 9 + 3 * b : r * 9 + 3 * b + 3]
                    )
                )
            lines.append(f"  {r + 1} | " + " | ".join(parts) + " |")
        lines.append(border)
        entries = [
            f"r{i // 9 + 1}c{i % 9 + 1}={v}"
            for i, v in enumerate(self.grid)
            if v and not self.givens[i]
        ]
        lines.append("Your entries: " + (", ".join(entries) if entries else "none"))
        lines.append(LEGEND)
        return "\n".join(lines)

    def key(self) -> str:
        givens = "".join(str(v) if v else "." for v in self.givens)
        entries = "".join(
            str(v) if v and not self.givens[i] else "." for i, v in enumerate(self.grid)
        )
        return f"{givens}|{entries}"

    def solved(self) -> bool:
        if 0 in self.grid:
            return False
        return all(len({self.grid[i] for i in unit}) == 9 for unit in UNITS)

    def status(self) -> str:
        if self.solved():
            return "solved: every row, column and box holds 1-9"
        return f"{self.grid.count(0)} empty cell(s) left"

    def copy(self) -> SudokuWorld:
        clone = object.__new__(SudokuWorld)
        clone.givens = self.givens
        clone.grid = list(self.grid)
        return clone


class SudokuEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "sudoku"
    levels = {"easy": {"clues": 40}, "medium": {"clues": 32}, "hard": {"clues": 26}}
    syntax = (
        "Actions: 'put R C V' writes digit V in row R, column C (rows and columns 1-9, from the "
        "top left); 'clear R C' empties a cell you filled. Givens cannot be changed, and a digit "
        "already in the same row, column or 3x3 box is rejected."
    )

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> SudokuWorld:
        target = int(level["clues"])
        # A random full grid: the solver on an empty grid, trying digits in a random order.
        order = [[int(v) for v in rng.permutation(9) + 1] for _ in range(81)]
        grid = _solutions([0] * 81, 1, order)[0]
        clues = 81
        for cell in (int(i) for i in rng.permutation(81)):
            if clues <= target:
                break
            value, grid[cell] = grid[cell], 0
            if count_solutions(grid, 2) == 1:
                clues -= 1
            else:
                grid[cell] = value
        return SudokuWorld(tuple(grid))

    @staticmethod
    def solve(world: PuzzleWorld) -> list[str]:
        assert isinstance(world, SudokuWorld)
        solution = solve_grid(world.grid) or solve_grid(world.givens)
        if solution is None:
            return []
        plan = [
            f"clear {i // 9 + 1} {i % 9 + 1}"
            for i, v in enumerate(world.grid)
            if v and v != solution[i]
        ]
        plan += [
            f"put {i // 9 + 1} {i % 9 + 1} {solution[i]}"
            for i, v in enumerate(world.grid)
            if v != solution[i]
        ]
        return plan

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, SudokuWorld)
        return (
            f"Sudoku: fill the {world.grid.count(0)} empty cells of the 9x9 grid so that every "
            f"row, every column and every 3x3 box holds each digit 1-9 exactly once. The puzzle "
            f"has exactly one solution."
        )
