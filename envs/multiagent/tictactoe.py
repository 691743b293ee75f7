"""Tic-tac-toe for two text agents (PettingZoo AEC).

**What each agent sees.** The board with row and column numbers, its mark, and whose turn it
is::

      1 2 3
    1 X . .
    2 . O .
    3 . . .
    You are X (player_0). Your turn.

**What it may do.** ``place R C`` marks row ``R``, column ``C`` (1-3); ``R C`` and a cell number
``1``-``9`` (row by row) are read too. An occupied cell or unreadable text is an invalid action:
the same agent moves again, told why and given the free cells (also in
``info["legal_actions"]`` every turn); three mistakes forfeit the game.

**Scoring.** +1 to the winner and -1 to the loser when the game ends, 0 each for a draw
(``verdict.score`` 1, 0 and 0.5).

**Tasks.** ``empty`` starts from an empty board; ``opening`` and ``midgame`` start from 2 and
4 random non-final moves drawn from the task seed (player_0 is always X and X moves first).

**Oracle.** Perfect play by minimax over the whole game tree.

**Version history.** v0: first release; the legal moves listed in ``info["legal_actions"]``
and in invalid-action feedback since issue 30 (before any published v0 score).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.multiagent.players import PolicyPlayer
from agentgym.multiagent import ReferencePlayer, TurnBasedEnv
from agentgym.task_env import InvalidAction

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
PLAYERS = ("player_0", "player_1")
MARKS = {"player_0": "X", "player_1": "O"}


def winner(board: str) -> str | None:
    """``X``, ``O`` or ``None``."""
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board: str) -> str:
    return "X" if board.count("X") == board.count("O") else "O"


@functools.cache
def minimax(board: str) -> tuple[int, int]:
    """(value for the player to move: 1 win, 0 draw, -1 loss; best cell)."""
    if winner(board):
        return -1, -1  # the previous player just won
    empty = [i for i, c in enumerate(board) if c == "."]
    if not empty:
        return 0, -1
    mark = to_move(board)
    best = (-2, -1)
    for cell in empty:
        value = -minimax(board[:cell] + mark + board[cell + 1 :])[0]
        if value > best[0]:
            best = (value, cell)
    return best


class OpeningTask(Task[str]):
    """A starting position: ``premoves`` random moves from an empty board, none ending it."""

    PREMOVES: Mapping[str, int] = {"empty": 0, "opening": 2, "midgame": 4}

    def setup(self, rng: np.random.Generator) -> tuple[str, str]:
        draw = np.random.default_rng(self.seed)
        board = "." * 9
        for _ in range(self.PREMOVES[self.difficulty]):
            empty = [i for i, c in enumerate(board) if c == "."]
            cell = empty[int(draw.integers(len(empty)))]
            board = board[:cell] + to_move(board) + board[cell + 1 :]
            if winner(board):  # keep openings undecided
                board = board[:cell] + "." + board[cell + 1 :]
        return board, "Get three of your marks in a row, column or diagonal."

    def validate(self, world: str) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see TicTacToeEnv")

    def solve(self, world: str) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


class Board:
    """The mutable game: a 9-character string of ``X``, ``O`` and ``.``."""

    def __init__(self, cells: str) -> None:
        self.cells = cells


class TicTacToeEnv(TurnBasedEnv[Board]):
    __doc__ = __doc__
    metadata = {**TurnBasedEnv.metadata, "name": "tictactoe_v0"}
    possible_agents = list(PLAYERS)

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet(
            "tictactoe",
            OpeningTask,
            tuple(OpeningTask.PREMOVES),
            sizes={"train": 10_000, "dev": 500, "test": 500},
        )
        super().__init__(**kwargs)

    def new_world(self, task: Any, rng: np.random.Generator) -> Board:
        return Board(task.setup(rng)[0])

    def to_move(self, world: Board) -> str:
        return PLAYERS[0] if to_move(world.cells) == "X" else PLAYERS[1]

    def describe(self, world: Board, agent: str) -> str:
        rows = ["  1 2 3"] + [
            f"{r + 1} " + " ".join(world.cells[3 * r : 3 * r + 3]) for r in range(3)
        ]
        turn = "Your turn." if self.to_move(world) == agent else "The other player's turn."
        if self.outcome(world) is not None:
            turn = "The game is over."
        return "\n".join(rows) + f"\nYou are {MARKS[agent]} ({agent}). {turn}"

    def act(self, world: Board, agent: str, action: str) -> str:
        cell = _parse_cell(action)
        if world.cells[cell] != ".":
            raise InvalidAction(
                f"row {cell // 3 + 1}, column {cell % 3 + 1} is taken by {world.cells[cell]}"
            )
        world.cells = world.cells[:cell] + MARKS[agent] + world.cells[cell + 1 :]
        return f"You placed {MARKS[agent]} at row {cell // 3 + 1}, column {cell % 3 + 1}."

    def legal_actions(self, world: Board, agent: str) -> list[str]:
        if self.outcome(world) is not None or self.to_move(world) != agent:
            return []
        return [f"place {_name(i)}" for i, c in enumerate(world.cells) if c == "."]

    def state_key(self, world: Board) -> str:
        return world.cells

    def outcome(self, world: Board) -> dict[str, float] | None:
        won = winner(world.cells)
        if won:
            return {a: float(MARKS[a] == won) for a in PLAYERS}
        if "." not in world.cells:
            return dict.fromkeys(PLAYERS, 0.5)
        return None

    def rules(self) -> str:
        return (
            "Tic-tac-toe on a 3x3 grid. Players take turns placing their mark (X moves first); "
            "three in a row, column or diagonal wins; a full grid is a draw.\n"
            "Actions: 'place R C' marks row R, column C (1-3), e.g. 'place 2 2'."
        )

    def oracle_action(self, agent: str) -> str | None:
        if self.world is None or self.outcome(self.world) is not None:
            return None
        if self.to_move(self.world) != agent:
            return None
        return f"place {_name(minimax(self.world.cells)[1])}"

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        return {
            **super().reference_players(),
            "solver": lambda: PolicyPlayer("solver", _perfect_move),
        }


def _perfect_move(env: TicTacToeEnv, agent: str) -> str:
    assert env.world is not None
    return f"place {_name(minimax(env.world.cells)[1])}"


def _name(cell: int) -> str:
    return f"{cell // 3 + 1} {cell % 3 + 1}"


def _parse_cell(action: str) -> int:
    numbers = [
        int(n)
        for n in re.findall(r"\d+", action.strip().splitlines()[-1] if action.strip() else "")
    ]
    if len(numbers) == 2 and all(1 <= n <= 3 for n in numbers):
        return 3 * (numbers[0] - 1) + numbers[1] - 1
    if len(numbers) == 1 and 1 <= numbers[0] <= 9:
        return numbers[0] - 1
    raise InvalidAction(
        f"could not read a cell from {action.strip()[:60]!r}: write 'place R C' with row and "
        f"column from 1 to 3, e.g. 'place 1 3'"
    )
