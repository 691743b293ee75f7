"""A connect-four solver in the manner of Pascal Pons' (http://blog.gamesolver.org).

The position is two bitboards (the player to move's stones and all stones), one 7-bit lane per
column, six cells plus a sentinel, so a column's next free cell is ``mask + bottom`` and the
cells that complete four are found by a dozen shifts (``winning_cells``). The search is a
negamax with alpha-beta on Pons' score (winning with your ``N``-th stone scores ``22 - N``, a
draw 0, a loss the negative), pruned by the moves that do not lose at once,
ordered by how many threats a move creates (centre first on ties), with a transposition table
of upper and lower bounds, and driven by null-window probes (``solve``).

Python visits 40,000-100,000 positions a second, so positions late enough are solved in a
fraction of a second while the first plies would take hours: this is not a perfect player from
the empty board. :class:`Solver` takes a node budget and raises :class:`SearchBudgetExceeded`
past it; :func:`best_move` then falls back to a depth-limited search, and its one book entry
is the known first move (the centre column is the only winning one, Allis 1988).
``tests/perf/bench_connectfour_go.py`` measures where the default budget (25,000 positions,
about half a second) proves the position along real games: all positions from ply 24 on, 89%
at plies 18-23, 22% at plies 12-17, almost none before.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

__all__ = [
    "CENTRE_FIRST",
    "Position",
    "SearchBudgetExceeded",
    "Solver",
    "best_move",
    "searched_best",
]

WIDTH, HEIGHT = 7, 6
LANE = HEIGHT + 1
CELLS = WIDTH * HEIGHT
BOTTOM = sum(1 << (c * LANE) for c in range(WIDTH))
BOARD = BOTTOM * ((1 << HEIGHT) - 1)
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)
BUDGET = 25_000  # positions: about half a second of Python
OPENING_BOOK = {"": 3}  # the centre is the one winning first move (Allis 1988)


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

    def solve(self, position: Position) -> int:
        """The exact score for the player to move; raises SearchBudgetExceeded."""
        if position.can_win_next():
            return (CELLS + 1 - position.moves) // 2
        low, high = -((CELLS - position.moves) // 2), (CELLS + 1 - position.moves) // 2
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
        return low

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


def best_move(columns: Sequence[int], *, budget: int = BUDGET, fallback_depth: int = 6) -> int:
    """A best column (0-6) after the moves ``columns``: exact when the proof fits ``budget``
    positions (or the book knows the position), else the depth-limited search's choice.

    Deterministic, so remembered: games replayed from a seed (the conformance check's, the
    arena's seat swaps) ask again for the positions they have already seen."""
    return _best_move(tuple(columns), budget, fallback_depth)


@functools.lru_cache(maxsize=100_000)
def _best_move(columns: tuple[int, ...], budget: int, fallback_depth: int) -> int:
    book = OPENING_BOOK.get("".join(str(c + 1) for c in columns))
    if book is not None:
        return book
    position = Position.from_columns(columns)
    playable = [c for c in CENTRE_FIRST if position.can_play(c)]
    for column in playable:
        if position.is_winning_move(column):
            return column
    try:
        return _proven_best(position, playable, Solver(budget))
    except SearchBudgetExceeded:
        return searched_best(position, playable, fallback_depth)


def _proven_best(position: Position, playable: list[int], solver: Solver) -> int:
    """The first column (centre first) whose child's exact score equals the position's."""
    value = solver.solve(position)
    for column in playable:
        child = position.play(column)
        # the child's mover scores at most -value iff this move keeps our value
        if child.can_win_next():
            continue
        if solver.negamax(child, -value, -value + 1) <= -value:
            return column
    return playable[0]  # every move loses at once


def searched_best(position: Position, playable: list[int], depth: int) -> int:
    """The column with the best depth-limited score (centre first on ties)."""
    scored = []
    for column in playable:
        if position.is_winning_move(column):
            return column
        scored.append((-depth_limited(position.play(column), depth - 1, -CELLS, CELLS), column))
    best = max(score for score, _ in scored)
    return next(column for score, column in scored if score == best)
