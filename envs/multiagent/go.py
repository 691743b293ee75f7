"""Go on a 9x9 board for two text agents (PettingZoo AEC), on OpenSpiel's ``go`` rules.

**What each agent sees.** The board with coordinates (columns ``A``-``J`` without ``I``, as go
writes them; rows 1-9 from the bottom), its colour, the move number against the cap, and the
moves it may make, compactly: every empty point except the illegal ones (suicide, ko)::

      A B C D E F G H J
    9 . . . . . . . . . 9
    ...
    5 . . . . X O . . . 5
    ...
      A B C D E F G H J
    You are X, black (player_0). Move 3 of at most 162; white has komi 7.5. Your turn.
    Legal: any empty point, or pass, or resign.

**What it may do.** A point such as ``D4`` (lower case too), ``pass`` or ``resign``; the last
line of the text must name exactly one. An occupied or illegal point or unreadable text is an
invalid action: the same agent moves again, told why; three mistakes forfeit.

**Scoring.** The game ends after two passes in a row, a resignation, or ``max_moves`` moves
(passes count; default 162, OpenSpiel's for 9x9); it is then scored as OpenSpiel scores it:
area (Chinese) scoring, stones plus surrounded empty points, with komi 7.5 to white and no
removal of dead stones, so play it out. +1 to the winner, -1 to the loser (``verdict.score`` 1
and 0; komi 7.5 leaves no draws).

**Tasks.** ``empty`` starts from an empty board; ``opening`` from 4 random legal moves drawn
from the task seed (player_0 is black and moves first).

**Oracle and reference players.** ``random`` (a random legal point, never filling its own
one-point eye, passing only when nothing else is left) and ``gnugo-level-N`` (N = 1, 5, 10:
GNU Go over GTP, ``gtp.py``; Debian's ``gnugo`` package, run with ``--capture-all-dead`` since
dead stones count under this scoring). Measured on a 2-core machine: about 20 ms a move at
level 1, 0.25 s at level 5, 1-2 s at level 10; level 1 beats random once the cap leaves it
time to capture random's stones (100 moves). ``oracle_action`` is GNU Go at level 1, the
cheapest (it starts an engine process; ``close()`` stops it).

**Version history.** v0: first release.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyspiel

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.multiagent.gtp import GnuGo
from agentgym.multiagent import RandomPlayer, ReferencePlayer, TurnBasedEnv
from agentgym.task_env import InvalidAction

SIZE, KOMI = 9, 7.5
PASS = SIZE * SIZE  # OpenSpiel's pass action
LETTERS = "ABCDEFGHJ"
PLAYERS = ("player_0", "player_1")
COLOURS = {"player_0": "B", "player_1": "W"}
MARKS = {"player_0": "X, black", "player_1": "O, white"}
LEVELS = (1, 5, 10)
MOVE = re.compile(r"\b(pass|resign|[a-hj][1-9])\b", re.IGNORECASE)


@functools.cache
def _game(max_moves: int) -> Any:
    return pyspiel.load_game("go", {"board_size": SIZE, "komi": KOMI, "max_game_length": max_moves})


def point_name(action: int) -> str:
    """``D4`` for a point, ``pass`` for OpenSpiel's pass action."""
    return "pass" if action == PASS else f"{LETTERS[action % SIZE]}{action // SIZE + 1}"


def point_action(name: str) -> int:
    """OpenSpiel's action for ``D4``/``d4``/``pass``."""
    if name.lower() == "pass":
        return PASS
    return (int(name[1:]) - 1) * SIZE + LETTERS.index(name[0].upper())


class OpeningTask(Task[list[int]]):
    """A starting position: ``premoves`` random legal moves (no passes) from an empty board."""

    PREMOVES: Mapping[str, int] = {"empty": 0, "opening": 4}

    def setup(self, rng: np.random.Generator) -> tuple[list[int], str]:
        draw = np.random.default_rng(self.seed)
        state = _game(1000).new_initial_state()
        for _ in range(self.PREMOVES[self.difficulty]):
            points = [a for a in state.legal_actions() if a != PASS]
            state.apply_action(points[int(draw.integers(len(points)))])
        return list(state.history()), "Surround more of the board than your opponent."

    def validate(self, world: list[int]) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see GoEnv")

    def solve(self, world: list[int]) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


class Board:
    """OpenSpiel's state, with the player who resigned (OpenSpiel's go has no resignation)."""

    def __init__(self, premoves: list[int], max_moves: int) -> None:
        self.state = _game(max_moves).new_initial_state()
        self.resigned: str | None = None
        for action in premoves:
            self.state.apply_action(action)

    def history(self) -> list[int]:
        return [int(a) for a in self.state.history()]

    def over(self) -> bool:
        return self.resigned is not None or bool(self.state.is_terminal())

    def legal(self) -> list[int]:
        return [] if self.over() else [int(a) for a in self.state.legal_actions()]

    def rows(self) -> list[str]:
        """The board top row (9) first: ``X`` black, ``O`` white, ``.`` empty."""
        lines = [line.strip() for line in str(self.state).splitlines()]
        board = [line.split()[1] for line in lines if line[:1].isdigit()]
        return [row.replace("+", ".") for row in board]

    def points(self, mark: str) -> list[int]:
        """The actions of the points holding ``mark``."""
        rows = self.rows()
        return [
            (SIZE - 1 - r) * SIZE + c
            for r in range(SIZE)
            for c in range(SIZE)
            if rows[r][c] == mark
        ]


class GoEnv(TurnBasedEnv[Board]):
    __doc__ = __doc__
    metadata = {**TurnBasedEnv.metadata, "name": "go9x9_v0"}
    possible_agents = list(PLAYERS)

    def __init__(self, *, max_moves: int = 2 * SIZE * SIZE, **kwargs: Any) -> None:
        self.max_moves = max_moves
        self.tasks = GeneratedTaskSet(
            "go9x9",
            OpeningTask,
            tuple(OpeningTask.PREMOVES),
            sizes={"train": 10_000, "dev": 500, "test": 500},
        )
        self._oracle: GnuGoPlayer | None = None
        super().__init__(**kwargs)

    def new_world(self, task: Any, rng: np.random.Generator) -> Board:
        return Board(task.setup(rng)[0], self.max_moves)

    def to_move(self, world: Board) -> str:
        return PLAYERS[len(world.history()) % 2]

    def describe(self, world: Board, agent: str) -> str:
        header = "  " + " ".join(LETTERS)
        board = [header]
        board += [f"{SIZE - r} {' '.join(row)} {SIZE - r}" for r, row in enumerate(world.rows())]
        board.append(header)
        played = len(world.history())
        facts = f"Move {played + 1} of at most {self.max_moves}; white has komi {KOMI}."
        if world.over():
            facts, turn = f"{played} moves played.", "The game is over."
        elif self.to_move(world) == agent:
            turn = f"Your turn.\nLegal: {_compact_legal(world)}"
        else:
            turn = "The other player's turn."
        return "\n".join(board) + f"\nYou are {MARKS[agent]} ({agent}). {facts} {turn}"

    def act(self, world: Board, agent: str, action: str) -> str:
        move = _parse_move(action)
        if move == "resign":
            world.resigned = agent
            return "You resigned."
        point = point_action(move)
        if point not in world.legal():
            taken = point in world.points("X") + world.points("O")
            why = "is occupied" if taken else "is illegal here (suicide or ko)"
            raise InvalidAction(f"{point_name(point)} {why}")
        world.state.apply_action(point)
        return f"You played {point_name(point)}."

    def legal_actions(self, world: Board, agent: str) -> list[str]:
        if self.to_move(world) != agent:
            return []
        return [point_name(a) for a in world.legal()]

    def state_key(self, world: Board) -> str:
        return "/".join(world.rows()) + f" {self.to_move(world)} {world.resigned or ''}"

    def outcome(self, world: Board) -> dict[str, float] | None:
        if world.resigned is not None:
            return {a: float(a != world.resigned) for a in PLAYERS}
        if not world.state.is_terminal():
            return None
        returns = world.state.returns()
        return {a: (float(returns[i]) + 1.0) / 2.0 for i, a in enumerate(PLAYERS)}

    def rules(self) -> str:
        return (
            f"Go on a {SIZE}x{SIZE} board. Black (X) moves first; players take turns placing a "
            "stone on an empty point or passing. A group with no empty neighbouring point is "
            "captured; suicide and repeating a position (ko) are illegal. The game ends after "
            f"two passes in a row, a resignation, or {self.max_moves} moves; then area scoring: "
            f"your stones plus the empty points only you surround, white adding komi {KOMI}. "
            "Dead stones are not removed: capture them before the end.\n"
            "Actions: a point such as 'D4' (columns A-J without I, rows 1-9), 'pass' or "
            "'resign'."
        )

    def oracle_action(self, agent: str) -> str | None:
        if self.world is None or self.world.over() or self.to_move(self.world) != agent:
            return None
        if self._oracle is None:
            self._oracle = GnuGoPlayer(LEVELS[0])
        return self._oracle.act(self, agent)

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        players: dict[str, Callable[[], ReferencePlayer]] = {
            "random": lambda: RandomPlayer(_random_candidates)
        }
        for level in LEVELS:
            players[f"gnugo-level-{level}"] = functools.partial(GnuGoPlayer, level)
        return players

    def close(self) -> None:
        """Drop the game and stop the oracle's engine; idempotent."""
        if self._oracle is not None:
            self._oracle.close()
            self._oracle = None
        super().close()


_REMEMBERED: dict[tuple[int, tuple[int, ...]], str] = {}
"""GNU Go's answers by level and move history: with a fixed seed its move is a function of
them, and games replayed from a seed (the conformance check's, the arena's) ask again."""


class GnuGoPlayer:
    """GNU Go at ``level`` for whichever seat asks. Its engine mirrors the game's moves (it is
    told each new one, and its own ``genmove`` is taken back) and starts at the first move
    that is not remembered."""

    def __init__(self, level: int) -> None:
        self.name = f"gnugo-level-{level}"
        self.level = level
        self._engine: GnuGo | None = None
        self._world: Board | None = None
        self._told = 0

    def act(self, env: Any, agent: str) -> str:
        game = getattr(env, "unwrapped", env)
        world: Board = game.world
        key = (self.level, tuple(world.history()))
        move = _REMEMBERED.get(key)
        if move is None:
            engine = self._sync(world)
            move = engine.command(f"genmove {COLOURS[agent]}").lower()
            engine.command("undo")
            if len(_REMEMBERED) >= 100_000:
                _REMEMBERED.clear()
            _REMEMBERED[key] = move
        if move == "resign":
            return "resign"
        if move == "pass" or point_action(move) not in world.legal():
            return "pass"  # (GNU Go's ko rule may allow what OpenSpiel's superko forbids)
        return move.upper()

    def _sync(self, world: Board) -> GnuGo:
        """The engine, told the moves of ``world`` it has not seen (a new game: from scratch)."""
        if self._engine is None:
            self._engine = GnuGo(self.level, SIZE, KOMI)
        if world is not self._world or self._told > len(world.history()):
            self._engine.command("clear_board")
            self._world, self._told = world, 0
        history = world.history()
        for index in range(self._told, len(history)):
            colour = "B" if index % 2 == 0 else "W"
            self._engine.command(f"play {colour} {point_name(history[index])}")
        self._told = len(history)
        return self._engine

    def close(self) -> None:
        """Stop the engine process; idempotent."""
        if self._engine is not None:
            self._engine.close()
            self._engine = None


def _random_candidates(game: GoEnv, agent: str) -> list[str]:
    """Legal points that do not fill the mover's own one-point eye; ``pass`` when none."""
    assert game.world is not None
    own = set(game.world.points("X" if COLOURS[agent] == "B" else "O"))
    points = [a for a in game.world.legal() if a != PASS and not _is_own_eye(a, own)]
    return [point_name(a) for a in points] or ["pass"]


def _is_own_eye(point: int, own: set[int]) -> bool:
    """Whether every on-board neighbour of the empty ``point`` is the mover's stone."""
    row, column = divmod(point, SIZE)
    neighbours = [
        r * SIZE + c
        for r, c in ((row - 1, column), (row + 1, column), (row, column - 1), (row, column + 1))
        if 0 <= r < SIZE and 0 <= c < SIZE
    ]
    return all(n in own for n in neighbours)


def _compact_legal(world: Board) -> str:
    """``any empty point except C3, D4, or pass, or resign``: the list without the bulk."""
    occupied = set(world.points("X") + world.points("O"))
    legal = set(world.legal())
    illegal = [a for a in range(PASS) if a not in occupied and a not in legal]
    if not illegal:
        return "any empty point, or pass, or resign."
    names = ", ".join(point_name(a) for a in illegal)
    return f"any empty point except {names}; or pass, or resign."


def _parse_move(action: str) -> str:
    text = action.strip()
    found = {str(m).lower() for m in MOVE.findall(text.splitlines()[-1] if text else "")}
    if len(found) == 1:
        return found.pop()
    raise InvalidAction(
        f"could not read one move from {text[:60]!r}: write a point such as 'D4' (columns "
        f"A-J without I, rows 1-{SIZE}), 'pass' or 'resign'"
    )
