"""Minesweeper: reveal every cell that is not a mine, without ever revealing a mine.

**What the agent sees.** The board with numbered axes, a legend and a count of what is left::

    Minesweeper 6x6 with 5 mines. Flags placed: 0. Safe cells left to reveal: 16.
        1 2 3 4 5 6
     1  # # # # 1 .
     2  # # # 1 1 .
     3  # # # 1 . .
     4  # # # 2 1 .
     5  # # # # 1 .
     6  # # # # 1 .
    Legend: # hidden, F flagged, . revealed with no mine around it, 1-8 revealed with that
    many mines among its 8 neighbours. Rows and columns are numbered from 1.

Rows are numbered from 1 at the top, columns from 1 at the left. At the start, one connected
region around a cell with no mine nearby (a ``0``) is already revealed, so the first move never
needs a guess. Every board is also **solvable by logic alone**: the generator keeps only boards
that a deduction solver (single-cell counts, the subset rule between pairs of numbers and the
total mine count) clears from the starting position without guessing.

**What it may do.**

* ``reveal R C`` (also ``open``, ``click``, ``dig``) reveals row ``R``, column ``C``. A
  revealed ``0`` opens its neighbours, and theirs, as in the classic game; a flag in the way of
  such an opening is removed (that cell was safe).
* ``flag R C`` (also ``mark``) puts a flag on a hidden cell; ``unflag R C`` (also ``unmark``)
  removes it. Flags are notes for the agent: they do not count toward the goal, and a flagged
  cell cannot be revealed until it is unflagged.

Coordinates may be written ``3 4``, ``3,4``, ``(3, 4)``, ``row 3 col 4`` or ``r3c4``.
Coordinates off the board, revealing a cell already revealed or flagged, flagging a revealed
or flagged cell, unflagging a cell with no flag and unreadable text are invalid actions: the
observation says why and nothing changes.

``info["admissible_actions"]`` lists every legal action: ``reveal`` and ``flag`` for each
hidden cell without a flag, ``unflag`` for each flag.

**Scoring.** Reward 1 when every safe cell is revealed (the episode terminates), else 0.
Revealing a mine loses: the episode terminates with reward 0 and the board shows every mine
(``*``, the one revealed as ``X``).

**Levels.** easy: 6x6 with 5 mines; medium: 8x8 with 10 mines; hard: 10x10 with 18 mines.
The pre-revealed opening never shows more than half of the safe cells.

**Oracle.** Privileged: it reads the hidden mine layout and reveals, in reading order, every
safe cell still hidden (unflagging a wrongly flagged safe cell first). It never reveals a mine.

**Version history.** v0: first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

__all__ = ["MinesweeperEnv", "MinesweeperWorld"]

_COMMANDS = {
    "reveal": "reveal",
    "open": "reveal",
    "click": "reveal",
    "dig": "reveal",
    "flag": "flag",
    "mark": "flag",
    "unflag": "unflag",
    "unmark": "unflag",
}
_COMMAND = re.compile(r"\b(" + "|".join(_COMMANDS) + r")\b")
_NUMBER = re.compile(r"-?[0-9]+")
_EXAMPLE = "reveal 3 4"
LEGEND = (
    "Legend: # hidden, F flagged, . revealed with no mine around it, 1-8 revealed with that\n"
    "many mines among its 8 neighbours. Rows and columns are numbered from 1."
)


class MinesweeperWorld(PuzzleWorld):
    """Cells are flat indices ``row * cols + col`` (0-based inside, 1-based for the agent)."""

    def __init__(self, rows: int, cols: int, mines: frozenset[int]) -> None:
        self.rows = rows
        self.cols = cols
        self.mines = frozenset(mines)
        self.neighbours = _neighbours(rows, cols)
        self.numbers = tuple(
            sum(n in self.mines for n in self.neighbours[cell]) for cell in range(rows * cols)
        )
        self.revealed: set[int] = set()
        self.flags: set[int] = set()
        self.exploded: int | None = None

    # ------------------------------------------------------------------ moves

    def apply(self, action: str) -> str:
        if self.exploded is not None:
            raise InvalidAction("the game is over: a mine was revealed")
        command, cell = self._parse(action)
        where = _name(cell, self.cols)
        if command == "reveal":
            if cell in self.revealed:
                shown = self.numbers[cell]
                raise InvalidAction(f"{where} is already revealed (it shows {shown or '.'})")
            if cell in self.flags:
                raise InvalidAction(
                    f"{where} is flagged; 'unflag {_coords(cell, self.cols)}' first"
                )
            if cell in self.mines:
                self.exploded = cell
                return f"BOOM: {where} was a mine. You lost."
            opened = self.reveal(cell)
            if self.numbers[cell] == 0:
                return f"Revealed {where}: no mine around it, which opened {opened} cell(s)."
            return f"Revealed {where}: {self.numbers[cell]} mine(s) around it."
        if command == "flag":
            if cell in self.revealed:
                raise InvalidAction(f"{where} is revealed; only hidden cells can be flagged")
            if cell in self.flags:
                raise InvalidAction(f"{where} is already flagged")
            self.flags.add(cell)
            return f"Flagged {where}."
        if cell not in self.flags:
            raise InvalidAction(f"{where} has no flag to remove")
        self.flags.remove(cell)
        return f"Removed the flag from {where}."

    def reveal(self, cell: int) -> int:
        """Reveal a safe cell, opening the neighbours of zeros; returns how many were revealed."""
        todo = [cell]
        self.revealed.add(cell)
        self.flags.discard(cell)
        count = 1
        while todo:
            current = todo.pop()
            if self.numbers[current]:
                continue
            for n in self.neighbours[current]:
                if n not in self.revealed:
                    self.revealed.add(n)
                    self.flags.discard(n)
                    count += 1
                    todo.append(n)
        return count

    def _parse(self, action: str) -> tuple[str, int]:
        line = last_line(action)
        found = list(_COMMAND.finditer(line))
        if not found:
            raise InvalidAction(
                f"could not read {action.strip()[:80]!r}: write 'reveal R C', 'flag R C' or "
                f"'unflag R C' with R the row (1-{self.rows}) and C the column (1-{self.cols}), "
                f"e.g. '{_EXAMPLE}'"
            )
        match = found[-1]
        command = _COMMANDS[match.group(1)]
        numbers = _NUMBER.findall(line[match.end() :])
        if len(numbers) != 2:
            raise InvalidAction(
                f"'{command}' needs a row and a column, got {len(numbers)} number(s) in "
                f"{line[:80]!r}; e.g. '{command} 3 4'"
            )
        row, col = (_to_int(n) for n in numbers)
        if not 1 <= row <= self.rows:
            raise InvalidAction(f"row {numbers[0][:12]} is off the board: rows run 1-{self.rows}")
        if not 1 <= col <= self.cols:
            raise InvalidAction(
                f"column {numbers[1][:12]} is off the board: columns run 1-{self.cols}"
            )
        return command, (row - 1) * self.cols + (col - 1)

    def legal_actions(self) -> list[str]:
        if self.exploded is not None:
            return []
        actions = []
        for cell in range(self.rows * self.cols):
            if cell in self.flags:
                actions.append(f"unflag {_coords(cell, self.cols)}")
            elif cell not in self.revealed:
                actions.append(f"reveal {_coords(cell, self.cols)}")
                actions.append(f"flag {_coords(cell, self.cols)}")
        return actions

    # ------------------------------------------------------------------ state

    def _symbol(self, cell: int) -> str:
        if self.exploded is not None and cell in self.mines:
            return "X" if cell == self.exploded else "*"
        if cell in self.flags:
            return "F"
        if cell not in self.revealed:
            return "#"
        return str(self.numbers[cell]) if self.numbers[cell] else "."

    def render(self) -> str:
        width = len(str(max(self.rows, self.cols))) + 1
        label = len(str(self.rows)) + 2
        header = " " * label + "".join(f"{c:>{width}}" for c in range(1, self.cols + 1))
        lines = [self._summary(), header]
        for r in range(self.rows):
            cells = "".join(f"{self._symbol(r * self.cols + c):>{width}}" for c in range(self.cols))
            lines.append(f"{r + 1:>{label - 1}} {cells}")
        lines.append(LEGEND)
        if self.exploded is not None:
            lines.append("You revealed a mine (X); * marks the other mines. The game is over.")
        return "\n".join(lines)

    def _summary(self) -> str:
        return (
            f"Minesweeper {self.rows}x{self.cols} with {len(self.mines)} mines. Flags placed: "
            f"{len(self.flags)}. Safe cells left to reveal: {self.safe_left()}."
        )

    def safe_left(self) -> int:
        return self.rows * self.cols - len(self.mines) - len(self.revealed)

    def key(self) -> str:
        board = "/".join(
            "".join(self._symbol(r * self.cols + c) for c in range(self.cols))
            for r in range(self.rows)
        )
        return board if self.exploded is None else f"{board}!"

    def solved(self) -> bool:
        return self.exploded is None and self.safe_left() == 0

    def lost(self) -> bool:
        return self.exploded is not None

    def status(self) -> str:
        if self.lost():
            return f"lost: {_name(self.exploded or 0, self.cols)} was a mine"
        if self.solved():
            return "solved: every safe cell is revealed"
        return f"{self.safe_left()} safe cell(s) left to reveal"

    def copy(self) -> MinesweeperWorld:
        clone = object.__new__(MinesweeperWorld)
        clone.__dict__.update(self.__dict__)
        clone.revealed = set(self.revealed)
        clone.flags = set(self.flags)
        return clone


def _to_int(text: str) -> int:
    # Longer than any board coordinate: keep it out of range without converting huge strings.
    return int(text) if len(text) <= 6 else -1


def _coords(cell: int, cols: int) -> str:
    return f"{cell // cols + 1} {cell % cols + 1}"


def _name(cell: int, cols: int) -> str:
    return f"row {cell // cols + 1}, column {cell % cols + 1}"


def _neighbours(rows: int, cols: int) -> tuple[tuple[int, ...], ...]:
    result = []
    for r in range(rows):
        for c in range(cols):
            result.append(
                tuple(
                    rr * cols + cc
                    for rr in range(max(r - 1, 0), min(r + 2, rows))
                    for cc in range(max(c - 1, 0), min(c + 2, cols))
                    if (rr, cc) != (r, c)
                )
            )
    return tuple(result)


def _solvable_by_logic(world: MinesweeperWorld) -> bool:
    """Whether deductions alone reveal every safe cell from the current position.

    Rules: a number whose unknown neighbours must all be mines (or all safe); the subset rule
    between two numbers (if A's unknowns are inside B's, B's others hold the difference); and the
    total mine count.
    """
    sim = world.copy()
    mines: set[int] = set()
    total = len(world.mines)
    while not sim.solved():
        known = len(mines)
        safe: set[int] = set()
        constraints: set[tuple[frozenset[int], int]] = set()
        for cell in sim.revealed:
            number = sim.numbers[cell]
            if not number:
                continue
            unknown = [n for n in sim.neighbours[cell] if n not in sim.revealed and n not in mines]
            if not unknown:
                continue
            need = number - sum(n in mines for n in sim.neighbours[cell])
            if need == 0:
                safe.update(unknown)
            elif need == len(unknown):
                mines.update(unknown)
            else:
                constraints.add((frozenset(unknown), need))
        if not safe and len(mines) == known:
            for small, k in constraints:
                for big, m in constraints:
                    if len(small) < len(big) and small < big:
                        rest = big - small
                        if m == k:
                            safe.update(rest)
                        elif m - k == len(rest):
                            mines.update(rest)
        if not safe and len(mines) == known:
            unknown = [c for c in range(sim.rows * sim.cols) if c not in sim.revealed | mines]
            if len(mines) == total:
                safe.update(unknown)
            elif total - len(mines) == len(unknown):
                mines.update(unknown)
        safe -= sim.revealed
        if not safe and len(mines) == known:
            return False  # stuck: the next move would be a guess
        if safe & world.mines:  # cannot happen: the rules are sound; kept as a guard
            return False
        for cell in safe:
            if cell not in sim.revealed:
                sim.reveal(cell)
    return True


class MinesweeperEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "minesweeper"
    levels = {
        "easy": {"rows": 6, "cols": 6, "mines": 5},
        "medium": {"rows": 8, "cols": 8, "mines": 10},
        "hard": {"rows": 10, "cols": 10, "mines": 18},
    }
    syntax = (
        "Actions: 'reveal R C' reveals row R, column C (both numbered from 1 at the top left); "
        "'flag R C' and 'unflag R C' put and remove a flag (a note for you; flags do not score)."
    )

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> MinesweeperWorld:
        rows, cols, n_mines = int(level["rows"]), int(level["cols"]), int(level["mines"])
        size = rows * cols
        neighbours = _neighbours(rows, cols)
        attempt = 0
        while True:
            attempt += 1
            start = int(rng.integers(size))
            keep_clear = {start, *neighbours[start]}
            candidates = [c for c in range(size) if c not in keep_clear]
            picks = rng.permutation(len(candidates))[:n_mines]
            world = MinesweeperWorld(rows, cols, frozenset(candidates[int(i)] for i in picks))
            world.reveal(start)
            if world.safe_left() * 2 < size - n_mines:  # the opening showed over half
                continue
            # Insist on no-guess boards; after many misses accept any (never seen in tests).
            if attempt > 500 or _solvable_by_logic(world):
                return world

    @staticmethod
    def solve(world: PuzzleWorld) -> list[str]:
        assert isinstance(world, MinesweeperWorld)
        if world.lost():
            return []
        walker = world.copy()
        plan = []
        for cell in range(walker.rows * walker.cols):
            if cell in walker.mines or cell in walker.revealed:
                continue
            if cell in walker.flags:
                plan.append(f"unflag {_coords(cell, walker.cols)}")
                walker.flags.discard(cell)
            plan.append(f"reveal {_coords(cell, walker.cols)}")
            walker.reveal(cell)
        return plan

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, MinesweeperWorld)
        return (
            f"Minesweeper: reveal every cell of the {world.rows}x{world.cols} board that is not "
            f"one of its {len(world.mines)} mines. A revealed number counts the mines among its "
            f"8 neighbours; revealing a mine loses the game. Part of the board is already "
            f"revealed, and the board can be cleared by logic alone, without guessing."
        )
