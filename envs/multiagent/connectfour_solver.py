"""A connect-four solver in the manner of Pascal Pons' (http://blog.gamesolver.org).

The position is two bitboards (the player to move's stones and all stones), one 7-bit lane per
column, six cells plus a sentinel, so a column's next free cell is ``mask + bottom`` and the
cells that complete four are found by a dozen shifts (``winning_cells``). The search is a
negamax with alpha-beta on Pons' score (winning with your ``N``-th stone scores ``22 - N``, a
draw 0, a loss the negative), pruned by the moves that do not lose at once,
ordered by how many threats a move creates (centre first on ties), with a transposition table
of upper and lower bounds, and driven by null-window probes (``solve``).

:func:`best_move` asks, in turn: the opening book (``data/connectfour_book.json``); a move that
wins at once; the same search in C (``connectfour_native.py``, about 50 times faster) within
``NATIVE_BUDGET`` positions; and, where no C compiler is available, this module's Python
:class:`Solver` within ``BUDGET`` positions. A proof past its budget falls back to a
depth-limited search, so the player is exact wherever :func:`decide` says ``exact``.

**Weak proofs.** Play proves only whether the position is won, drawn or lost (a null window
around 0, many times faster than the exact score: a two-stone position in under a minute
instead of many) and keeps that value: the first column, centre first, that keeps a win a win
or a draw a draw; in a lost position every column loses, and the depth-limited search picks
the defence. So a won game is always won (in a finite game, keeping the win ends in one), but
not always by the shortest road.

**The book** holds, for either seat, every position of up to ``BOOK_PLIES`` stones that a book
player meets from the empty board against any replies (mirror images looked up): where proofs
take minutes. ``python -m agentgym.envs.multiagent.connectfour_solver --book`` writes it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import json
import multiprocessing
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentgym.envs.multiagent.connectfour_native import native

__all__ = [
    "CENTRE_FIRST",
    "Decision",
    "Position",
    "SearchBudgetExceeded",
    "Solver",
    "best_move",
    "decide",
    "searched_best",
]

WIDTH, HEIGHT = 7, 6
LANE = HEIGHT + 1
CELLS = WIDTH * HEIGHT
BOTTOM = sum(1 << (c * LANE) for c in range(WIDTH))
BOARD = BOTTOM * ((1 << HEIGHT) - 1)
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)
BUDGET = 25_000  # positions: about half a second of Python
NATIVE_BUDGET = 50_000_000  # positions: at most about 6 s of C on an idle core
EARLY_NATIVE_BUDGET = 2_000_000
"""A position within the book's depth but off its lines (an ``opening`` task's random stones)
gets only this quick try (about 0.3 s): its proof may take billions of positions."""
BOOK_TABLE_SIZE = 67_108_879  # the book writer's table: a prime near 2^26
LOST_BY_THEORY = frozenset({"4"})
"""Positions known lost for the mover, so not proved again for the book: after X's centre
opening every reply loses (Allis 1988; the proof is as long as solving the whole game)."""
BOOK_FILE = Path(__file__).with_name("data") / "connectfour_book.json"
BOOK_PLIES = 7
"""The book's depth: past it, a weak proof along a book game fits ``NATIVE_BUDGET``."""


def column_bits(column: int) -> int:
    return ((1 << HEIGHT) - 1) << (column * LANE)


def winning_cells(stones: int, mask: int) -> int:
    """The empty cells that would complete four for the owner of ``stones``."""
    cells = (stones << 1) & (stones << 2) & (stones << 3)  # vertical
    for step in (LANE, LANE - 1, LANE + 1):  # horizontal and both diagonals
        pair = (stones << step) & (stones << 2 * step)
        cells |= pair & (stones << 3 * step)
        cells |= pair & (stones >> step)
        pair = (stones >> step) & (stones >> 2 * step)
        cells |= pair & (stones << step)
        cells |= pair & (stones >> 3 * step)
    return cells & (BOARD ^ mask)


class Position:
    """An immutable position: the mover's stones, all stones, and the number of moves."""

    __slots__ = ("current", "mask", "moves")

    def __init__(self, current: int = 0, mask: int = 0, moves: int = 0) -> None:
        self.current, self.mask, self.moves = current, mask, moves

    @classmethod
    def from_columns(cls, columns: Iterable[int]) -> Position:
        """The position after dropping stones in ``columns`` (0-6), alternately."""
        position = cls()
        for column in columns:
            if not position.can_play(column) or position.is_winning_move(column):
                raise ValueError(f"column {column} cannot be played in {position}")
            position = position.play(column)
        return position

    def can_play(self, column: int) -> bool:
        return 0 <= column < WIDTH and not self.mask & (1 << (HEIGHT - 1 + column * LANE))

    def move_bit(self, column: int) -> int:
        return (self.mask + (1 << column * LANE)) & column_bits(column)

    def play(self, column: int) -> Position:
        return self.play_bit(self.move_bit(column))

    def play_bit(self, bit: int) -> Position:
        return Position(self.current ^ self.mask, self.mask | bit, self.moves + 1)

    def is_winning_move(self, column: int) -> bool:
        return bool(winning_cells(self.current, self.mask) & self.move_bit(column))

    def possible(self) -> int:
        return (self.mask + BOTTOM) & BOARD

    def can_win_next(self) -> bool:
        return bool(winning_cells(self.current, self.mask) & self.possible())

    def non_losing_moves(self) -> int:
        """Moves that do not hand the opponent a win next turn (0 if every move does).

        Assumes the mover cannot win at once."""
        possible = self.possible()
        threats = winning_cells(self.current ^ self.mask, self.mask)
        forced = possible & threats
        if forced:
            if forced & (forced - 1):
                return 0  # two threats to block: lost
            possible = forced
        return possible & ~(threats >> 1)

    def threat_count(self, bit: int) -> int:
        """How many winning cells the mover has after playing ``bit``: the ordering key."""
        return winning_cells(self.current | bit, self.mask).bit_count()

    def key(self) -> int:
        return self.current + self.mask

    def __repr__(self) -> str:
        return f"Position(moves={self.moves}, key={self.key():#x})"


class SearchBudgetExceeded(Exception):
    """The proof needs more positions than the solver's budget."""


class Solver:
    """Exact scores of positions (Pons' convention), within a budget of visited positions."""

    def __init__(self, budget: int = 10 * BUDGET) -> None:
        self.budget = budget
        self.nodes = 0
        self._upper: dict[int, int] = {}
        self._lower: dict[int, int] = {}

    def solve(self, position: Position, *, weak: bool = False) -> int:
        """The exact score for the player to move, or with ``weak`` only its sign (1, 0 or
        -1: proved many times faster); raises SearchBudgetExceeded."""
        if position.can_win_next():
            return 1 if weak else (CELLS + 1 - position.moves) // 2
        low, high = -((CELLS - position.moves) // 2), (CELLS + 1 - position.moves) // 2
        if weak:
            low, high = -1, 1
        while low < high:  # null-window probes, bisecting towards 0 first
            middle = low + (high - low) // 2
            if middle <= 0 and int(low / 2) < middle:
                middle = int(low / 2)
            elif middle >= 0 and int(high / 2) > middle:
                middle = int(high / 2)
            score = self.negamax(position, middle, middle + 1)
            if score <= middle:
                high = score
            else:
                low = score
        return (low > 0) - (low < 0) if weak else low

    def negamax(self, position: Position, alpha: int, beta: int) -> int:
        """Alpha-beta for a mover who cannot win at once; fails soft within the window."""
        self.nodes += 1
        if self.nodes > self.budget:
            raise SearchBudgetExceeded(f"more than {self.budget} positions")
        moves = position.non_losing_moves()
        if not moves:
            return -((CELLS - position.moves) // 2)
        if position.moves >= CELLS - 2:
            return 0
        key = position.key()
        alpha = max(alpha, -((CELLS - 2 - position.moves) // 2), self._lower.get(key, -CELLS))
        if alpha >= beta:
            return alpha
        beta = min(beta, (CELLS - 1 - position.moves) // 2, self._upper.get(key, CELLS))
        if alpha >= beta:
            return beta
        for bit in ordered_moves(position, moves):
            score = -self.negamax(position.play_bit(bit), -beta, -alpha)
            if score >= beta:
                self._lower[key] = score
                return score
            alpha = max(alpha, score)
        self._upper[key] = alpha
        return alpha


def ordered_moves(position: Position, moves: int) -> list[int]:
    """The move bits of ``moves``, most threats first, centre first on ties."""
    bits = [moves & column_bits(c) for c in CENTRE_FIRST if moves & column_bits(c)]
    return sorted(bits, key=position.threat_count, reverse=True)  # stable: centre kept first


def depth_limited(position: Position, depth: int, alpha: float, beta: float) -> float:
    """Negamax to ``depth`` plies: exact scores where the game ends inside the horizon, else
    the difference of threat counts scaled into (-1, 1), so any proven result outranks it."""
    if position.can_win_next():
        return (CELLS + 1 - position.moves) // 2
    moves = position.non_losing_moves()
    if not moves:
        return -((CELLS - position.moves) // 2)
    if position.moves >= CELLS - 2:
        return 0
    if depth == 0:
        mine = winning_cells(position.current, position.mask).bit_count()
        theirs = winning_cells(position.current ^ position.mask, position.mask).bit_count()
        return (mine - theirs) / 64
    best = -float(CELLS)
    for bit in ordered_moves(position, moves):
        best = max(best, -depth_limited(position.play_bit(bit), depth - 1, -beta, -alpha))
        alpha = max(alpha, best)
        if alpha >= beta:
            break
    return best


@dataclass(frozen=True)
class Decision:
    """A chosen column (0-6) and how it was chosen: ``book``, ``win`` (at once), ``proof`` (C or
    Python, within budget) or ``search`` (the depth-limited fallback: not proved)."""

    column: int
    how: str

    @property
    def exact(self) -> bool:
        """Whether the column is proved to keep the position's game-theoretic value."""
        return self.how != "search"


def best_move(
    columns: Sequence[int],
    *,
    budget: int = BUDGET,
    native_budget: int = NATIVE_BUDGET,
    fallback_depth: int = 6,
) -> int:
    """A best column (0-6) after the moves ``columns``; see :func:`decide`."""
    return decide(
        columns, budget=budget, native_budget=native_budget, fallback_depth=fallback_depth
    ).column


def decide(
    columns: Sequence[int],
    *,
    budget: int = BUDGET,
    native_budget: int = NATIVE_BUDGET,
    fallback_depth: int = 6,
) -> Decision:
    """A best column after ``columns``: exact when the book knows the position or the proof
    fits its budget (``native_budget`` positions in C, at most ``EARLY_NATIVE_BUDGET``
    within the book's depth; else ``budget`` in Python), else the depth-limited search's
    choice.

    Deterministic (the C solver's table is emptied at every call), so remembered: games
    replayed from a seed (the conformance check's, the arena's seat swaps) ask again for the
    positions they have already seen."""
    return _decide(tuple(columns), budget, native_budget, fallback_depth)


@functools.lru_cache(maxsize=100_000)
def _decide(
    columns: tuple[int, ...], budget: int, native_budget: int, fallback_depth: int
) -> Decision:
    book = book_move(columns)
    if book is not None:
        return Decision(book, "book")
    position = Position.from_columns(columns)
    playable = [c for c in CENTRE_FIRST if position.can_play(c)]
    for column in playable:
        if position.is_winning_move(column):
            return Decision(column, "win")
    solver = native()
    if solver is not None:
        if len(columns) <= BOOK_PLIES:  # off the book's lines, where proofs rarely fit
            native_budget = min(native_budget, EARLY_NATIVE_BUDGET)
        found = solver.best_move(columns, native_budget, weak=True)
        if found is not None:
            column, value = found
            if value < 0:  # every column loses: defend as well as a search can see
                column = searched_best(position, playable, fallback_depth)
            return Decision(column, "proof")
    else:
        try:
            proved = _proven_best(position, playable, Solver(budget), fallback_depth)
            return Decision(proved, "proof")
        except SearchBudgetExceeded:
            pass
    return Decision(searched_best(position, playable, fallback_depth), "search")


@functools.cache
def opening_book() -> dict[str, int]:
    """The book: moves so far (digits 1-7) to the best column (0-6)."""
    return {moves: int(column) for moves, column in json.loads(BOOK_FILE.read_text()).items()}


def book_move(columns: Sequence[int]) -> int | None:
    """The book's column after ``columns``, looked up as played or mirrored."""
    return _lookup(opening_book(), columns)


def _lookup(book: dict[str, int], columns: Sequence[int]) -> int | None:
    column = book.get(_moves(columns))
    if column is not None:
        return column
    mirrored = book.get(_moves([WIDTH - 1 - c for c in columns]))
    return None if mirrored is None else WIDTH - 1 - mirrored


def _proven_best(position: Position, playable: list[int], solver: Solver, depth: int) -> int:
    """The first column (centre first) that keeps the position's value (win, draw or loss):
    in a lost position, where every column loses, the ``depth``-ply search's defence."""
    value = solver.solve(position, weak=True)
    if value < 0:
        return searched_best(position, playable, depth)
    for column in playable:
        child = position.play(column)
        # the child's mover scores at most -value iff this move keeps our value
        if child.can_win_next():
            continue
        if solver.negamax(child, -value, -value + 1) <= -value:
            return column
    raise AssertionError(f"no column keeps the value {value} of {position}")


def searched_best(position: Position, playable: list[int], depth: int) -> int:
    """The column with the best depth-limited score (centre first on ties)."""
    scored = []
    for column in playable:
        if position.is_winning_move(column):
            return column
        scored.append((-depth_limited(position.play(column), depth - 1, -CELLS, CELLS), column))
    best = max(score for score, _ in scored)
    return next(column for score, column in scored if score == best)


def write_book(
    plies: int = BOOK_PLIES, path: Path = BOOK_FILE, workers: int = 1, resume: bool = False
) -> dict[str, int]:
    """Prove, with no budget, every position of up to ``plies`` stones where a book player
    is to move, in either seat, having played the book against any replies (one of each
    mirror pair); rewrite ``path`` after each, so ``resume`` picks up an interrupted run.

    ``workers`` processes prove positions at once, each with its own large table (about 470
    MB); a position's replies are queued as soon as its move is known."""
    book: dict[str, int] = json.loads(path.read_text()) if resume and path.exists() else {}
    book[""] = 3  # the empty board: the centre is the one winning first move (Allis 1988)
    seen: set[tuple[int, ...]] = set()
    running: dict[concurrent.futures.Future[tuple[int, int, float]], tuple[int, ...]] = {}
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=spawn) as pool:

        def queue(columns: tuple[int, ...]) -> None:
            if len(columns) > plies or columns in seen:
                return
            seen.update({columns, tuple(WIDTH - 1 - c for c in columns)})
            if _lookup(book, columns) is None:
                lost = _moves(columns) in LOST_BY_THEORY
                running[pool.submit(_book_entry, columns, lost)] = columns
            else:
                for reply in _replies(columns, book):
                    queue(reply)

        for columns in [(), *((c,) for c in range(WIDTH))]:
            queue(columns)
        while running:
            done, _ = concurrent.futures.wait(running, return_when="FIRST_COMPLETED")
            for future in done:
                columns = running.pop(future)
                column, value, seconds = future.result()
                book[_moves(columns)] = column
                ordered = sorted(book.items(), key=lambda item: (len(item[0]), item[0]))
                path.write_text(json.dumps(dict(ordered)))
                shown = _moves(columns) or "(empty)"
                print(f"{shown}: column {column + 1}, value {value}, {seconds:.0f} s", flush=True)
                for reply in _replies(columns, book):
                    queue(reply)
    return book


def _book_entry(columns: tuple[int, ...], lost: bool = False) -> tuple[int, int, float]:
    """One book position proved (a worker's job): its column, value sign and seconds; a
    position ``lost`` by theory is not proved again, only defended."""
    started = time.perf_counter()
    value = -1
    if not lost:
        solver = native(BOOK_TABLE_SIZE)
        if solver is None:
            raise RuntimeError("the book is written by the C solver, which did not build")
        found = solver.best_move(columns, weak=True)
        assert found is not None, "no budget, so always found"
        column, value = found
    if value < 0:
        position = Position.from_columns(columns)
        playable = [c for c in CENTRE_FIRST if position.can_play(c)]
        column = searched_best(position, playable, 6)
    return column, value, time.perf_counter() - started


def _replies(columns: tuple[int, ...], book: dict[str, int]) -> list[tuple[int, ...]]:
    """The positions after the book's move and each reply that does not win at once."""
    column = _lookup(book, columns)
    assert column is not None
    position = Position.from_columns(columns)
    if position.is_winning_move(column):
        return []
    after = position.play(column)
    return [
        (*columns, column, reply)
        for reply in range(WIDTH)
        if after.can_play(reply) and not after.is_winning_move(reply)
    ]


def _moves(columns: Sequence[int]) -> str:
    return "".join(str(c + 1) for c in columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--book", action="store_true", help="write data/connectfour_book.json")
    parser.add_argument("--plies", type=int, default=BOOK_PLIES)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--resume", action="store_true", help="keep the book's entries")
    args = parser.parse_args()
    if args.book:
        write_book(args.plies, workers=args.workers, resume=args.resume)


if __name__ == "__main__":
    main()
