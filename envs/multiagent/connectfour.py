"""Connect four for two text agents (PettingZoo AEC), on OpenSpiel's ``connect_four`` rules.

**What each agent sees.** The 6x7 board with column numbers, its mark, whose turn it is and
the columns it may play::

     1 2 3 4 5 6 7
     . . . . . . .
     . . . . . . .
     . . . . . . .
     . . . . . . .
     . . . O . . .
     . . . X . . .
    You are X (player_0). Your turn. Legal columns: 1 2 3 4 5 6 7.

**What it may do.** Drop a stone by column number, 1 (left) to 7: ``4``, ``column 4`` and
``drop in 4`` are read (the last line of the text must hold exactly one number). A full
column or unreadable text is an invalid action: the same agent moves again, told why and
given the legal columns (also in ``info["legal_actions"]`` every turn); three mistakes
forfeit.

**Scoring.** Four in a row (across, up or diagonal) wins: +1 to the winner, -1 to the loser,
0 each for a full board (``verdict.score`` 1, 0, 0.5).

**Tasks.** ``empty`` starts from an empty board; ``opening`` and ``midgame`` from 2 and 8
random moves drawn from the task seed, none of them winning (player_0 is X and moves first).

**Oracle and reference players.** The ``solver`` (``connectfour_solver.py``) follows Pascal
Pons' design and is a perfect player from the empty board in either seat: an opening book of
every position of up to 7 stones either seat meets (proved with no budget), then weak proofs
(won, drawn or lost) in C within 50,000,000 positions, keeping the position's value; past the
budget, which along the book's lines was never reached (``tests/perf/bench_multiagent.py``),
a 6-ply search. From positions off the book's lines (the ``opening`` tasks' random stones)
early proofs may not fit. Without a C compiler a warning says so and the Python search stands
in (exact from about ply 24). ``oracle_action`` is the same solver with budgets of 200,000
positions in C or 5,000 in Python. ``reference_players()``: ``random``, ``solver``, and
``solver-depth-N`` (N = 2, 4, 6: a search N plies deep, for graded strengths).

**Version history.** v0: first release. Still v0: the ``solver`` player gained the C search
and the book, then weak proofs and the second player's book (its moves changed; rules, tasks,
verdicts did not).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyspiel

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.multiagent.connectfour_solver import (
    CENTRE_FIRST,
    Position,
    best_move,
    searched_best,
)
from agentgym.envs.multiagent.players import PolicyPlayer
from agentgym.multiagent import ReferencePlayer, TurnBasedEnv
from agentgym.task_env import InvalidAction

PLAYERS = ("player_0", "player_1")
MARKS = {"player_0": "X", "player_1": "O"}
COLUMNS = 7
DEPTHS = (2, 4, 6)
ORACLE_BUDGET, ORACLE_NATIVE_BUDGET = 5_000, 200_000
"""The oracle's proof budgets in Python and in C (positions; about 0.1 s each): far below the
solver's, since the conformance check plays whole oracle games."""


class OpeningTask(Task[list[int]]):
    """A starting position: ``premoves`` random non-winning moves from an empty board."""

    PREMOVES: Mapping[str, int] = {"empty": 0, "opening": 2, "midgame": 8}

    def setup(self, rng: np.random.Generator) -> tuple[list[int], str]:
        draw = np.random.default_rng(self.seed)
        position, columns = Position(), list[int]()
        for _ in range(self.PREMOVES[self.difficulty]):
            quiet = [
                c
                for c in range(COLUMNS)
                if position.can_play(c) and not position.is_winning_move(c)
            ]
            column = quiet[int(draw.integers(len(quiet)))]
            position, columns = position.play(column), [*columns, column]
        return columns, "Get four of your stones in a row: across, up or diagonally."

    def validate(self, world: list[int]) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see ConnectFourEnv")

    def solve(self, world: list[int]) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


class Game:
    """OpenSpiel's state and the columns played so far (0-6), which the solver reads."""

    def __init__(self, premoves: list[int]) -> None:
        self.state = pyspiel.load_game("connect_four").new_initial_state()
        self.columns: list[int] = []
        for column in premoves:
            self.drop(column)

    def drop(self, column: int) -> None:
        self.state.apply_action(column)
        self.columns.append(column)

    def legal(self) -> list[int]:
        return [] if self.state.is_terminal() else list(self.state.legal_actions())

    def rows(self) -> list[str]:
        """The board top row first, ``X``/``O``/``.`` per cell."""
        lines = str(self.state).strip().splitlines()
        return [line.strip().upper() for line in lines]


class ConnectFourEnv(TurnBasedEnv[Game]):
    __doc__ = __doc__
    metadata = {**TurnBasedEnv.metadata, "name": "connectfour_v0"}
    possible_agents = list(PLAYERS)

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet(
            "connectfour",
            OpeningTask,
            tuple(OpeningTask.PREMOVES),
            sizes={"train": 10_000, "dev": 500, "test": 500},
        )
        super().__init__(**kwargs)

    def new_world(self, task: Any, rng: np.random.Generator) -> Game:
        return Game(task.setup(rng)[0])

    def to_move(self, world: Game) -> str:
        return PLAYERS[len(world.columns) % 2]

    def describe(self, world: Game, agent: str) -> str:
        board = [" " + " ".join(str(c + 1) for c in range(COLUMNS))]
        board += [" " + " ".join(row) for row in world.rows()]
        if world.state.is_terminal():
            turn = "The game is over."
        elif self.to_move(world) == agent:
            turn = f"Your turn. Legal columns: {_names(world.legal())}."
        else:
            turn = "The other player's turn."
        return "\n".join(board) + f"\nYou are {MARKS[agent]} ({agent}). {turn}"

    def act(self, world: Game, agent: str, action: str) -> str:
        column = _parse_column(action)
        if column not in world.legal():
            raise InvalidAction(f"column {column + 1} is full")
        world.drop(column)
        return f"You dropped {MARKS[agent]} in column {column + 1}."

    def legal_actions(self, world: Game, agent: str) -> list[str]:
        if self.to_move(world) != agent:
            return []
        return [f"column {c + 1}" for c in world.legal()]

    def state_key(self, world: Game) -> str:
        return "/".join(world.rows())

    def outcome(self, world: Game) -> dict[str, float] | None:
        if not world.state.is_terminal():
            return None
        returns = world.state.returns()
        return {a: (float(returns[i]) + 1.0) / 2.0 for i, a in enumerate(PLAYERS)}

    def rules(self) -> str:
        return (
            "Connect four on a board of 6 rows and 7 columns. Players take turns dropping a "
            "stone into a column (X moves first); it falls to the lowest free cell. Four in a "
            "row across, up or diagonally wins; a full board is a draw.\n"
            "Actions: a column number from 1 (left) to 7, e.g. 'column 4'."
        )

    def oracle_action(self, agent: str) -> str | None:
        if self.world is None or self.world.state.is_terminal():
            return None
        if self.to_move(self.world) != agent:
            return None
        column = best_move(
            self.world.columns, budget=ORACLE_BUDGET, native_budget=ORACLE_NATIVE_BUDGET
        )
        return f"column {column + 1}"

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        players: dict[str, Callable[[], ReferencePlayer]] = {
            **super().reference_players(),
            "solver": lambda: PolicyPlayer("solver", _solver),
        }
        for depth in DEPTHS:
            players[f"solver-depth-{depth}"] = _depth_player(depth)
        return players


def _solver(env: ConnectFourEnv, agent: str) -> str:
    assert env.world is not None
    return f"column {best_move(env.world.columns) + 1}"


def _depth_player(depth: int) -> Callable[[], ReferencePlayer]:
    def policy(env: ConnectFourEnv, agent: str) -> str:
        assert env.world is not None
        position = Position.from_columns(env.world.columns)
        playable = [c for c in CENTRE_FIRST if position.can_play(c)]
        return f"column {searched_best(position, playable, depth) + 1}"

    return lambda: PolicyPlayer(f"solver-depth-{depth}", policy)


def _names(columns: list[int]) -> str:
    return " ".join(str(c + 1) for c in columns)


def _parse_column(action: str) -> int:
    text = action.strip()
    numbers = [int(n) for n in re.findall(r"\d+", text.splitlines()[-1] if text else "")]
    if len(numbers) == 1 and 1 <= numbers[0] <= COLUMNS:
        return numbers[0] - 1
    raise InvalidAction(
        f"could not read a column from {text[:60]!r}: write one column number from 1 to "
        f"{COLUMNS}, e.g. 'column 4'"
    )
