"""Chess for two text agents (PettingZoo AEC), over python-chess, with Stockfish as opponent.

**What each agent sees.** The board as a diagram (White at the bottom, upper case White,
``.`` an empty square) and as FEN, its colour, whose turn it is, the last move, and every
legal move in SAN::

      a b c d e f g h
    8 r n b q k b n r 8
    ...
    FEN: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1
    You are Black (player_1). Your turn.
    Last move: e4 (White). Ply 1 of at most 200.
    Legal moves (20): Nh6 Nf6 Nc6 Na6 h6 g6 ...

**What it may do.** One move, in SAN (``Nf3``, ``exd5``, ``O-O``, ``e8=Q``; check marks,
``!``/``?`` annotations, ``0-0`` and a move number are read too) or UCI (``g1f3``,
``e7e8q``). The last line of the text counts, and in it the one move its words name: "I play
Nf3." is read; a line that names two different legal moves is not. Unreadable text or an
illegal move is an invalid action: the same agent moves again, told why, with the legal moves
listed; three mistakes forfeit the game.

**Scoring.** Checkmate wins (+1 / -1, ``verdict.score`` 1 and 0); stalemate, insufficient
material, the 75-move rule, fivefold repetition and the ply cap (``max_plies`` moves played
in the episode, 200 by default) are draws (0 each, ``verdict.score`` 0.5).

**Tasks.** Start positions: the standard one (``standard``, in every split) and named
openings (``opening``: the Italian, the Najdorf, the Queen's Gambit Declined...), a disjoint
set per split. player_0 is always White; after an opening of odd length Black moves first.

**Oracle and reference players.** The oracle is Stockfish at skill level 20 searching
:data:`ORACLE_NODES` nodes a move. ``reference_players()``: ``random`` (a seeded random legal
move) and ``stockfish-skill-N`` for N in :data:`SKILLS` (Stockfish's ``Skill Level`` rule,
:data:`PLAYER_NODES` nodes a move at most, replayable: :class:`StockfishPlayer`). Stockfish is
Debian's ``stockfish`` (``/usr/games``).

**Version history.** v0: first release.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import chess
import numpy as np

from agentgym.core import DataTaskSet, Task, Verdict
from agentgym.envs.multiagent.uci import UciEngine
from agentgym.multiagent import ReferencePlayer, TurnBasedEnv
from agentgym.task_env import InvalidAction

__all__ = ["ChessEnv", "ChessTask", "StockfishPlayer", "parse_move"]

PLAYERS = ("player_0", "player_1")
COLOURS = {"player_0": chess.WHITE, "player_1": chess.BLACK}
SKILLS = (0, 5, 10, 20)
"""The Stockfish skill levels offered as reference players."""
ORACLE_NODES = 5_000
"""Nodes a move for the oracle: ~10 ms, and far above any random or blind player."""
PLAYER_NODES = 20_000
"""Nodes a move for the ``stockfish-skill-N`` players (~40 ms on one core)."""
SKILL_CANDIDATES = 4
"""Moves a weakened player chooses among (Stockfish's MultiPV under a skill level)."""
SKILL_DELTA_CAP = 126 * 100 / 361
"""Stockfish 15.1's cap on the random term, a middlegame pawn (``PawnValueMg`` 126) in its
internal units, in the reported centipawns (``NormalizeToPawnValue`` 361 units a pawn)."""
MAX_PLIES = 200
"""Moves played in an episode before the game is called a draw."""

OPENINGS: dict[str, dict[str, str]] = {
    "train": {
        "italian": "e4 e5 Nf3 Nc6 Bc4",
        "ruy-lopez": "e4 e5 Nf3 Nc6 Bb5",
        "sicilian-najdorf": "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6",
        "french": "e4 e6 d4 d5",
        "queens-gambit-declined": "d4 d5 c4 e6",
        "kings-indian": "d4 Nf6 c4 g6 Nc3 Bg7 e4 d6",
        "english": "c4 e5",
        "scandinavian": "e4 d5 exd5 Qxd5",
    },
    "dev": {
        "caro-kann": "e4 c6 d4 d5",
        "london": "d4 d5 Bf4 Nf6 e3",
        "pirc": "e4 d6 d4 Nf6 Nc3 g6",
    },
    "test": {
        "slav": "d4 d5 c4 c6",
        "scotch": "e4 e5 Nf3 Nc6 d4 exd4 Nxd4",
        "nimzo-indian": "d4 Nf6 c4 e6 Nc3 Bb4",
        "dutch": "d4 f5",
    },
}
"""Named openings by split, as SAN from the standard position (disjoint across splits)."""


class ChessTask(Task[chess.Board]):
    """A start position: ``moves`` (SAN, space-separated) played from ``fen``."""

    def __init__(
        self, id: str, split: str, difficulty: str, moves: str = "", fen: str = chess.STARTING_FEN
    ) -> None:
        super().__init__(id, split, difficulty, seed=0)
        self.moves, self.fen = moves, fen

    def setup(self, rng: np.random.Generator) -> tuple[chess.Board, str]:
        board = chess.Board(self.fen)
        for san in self.moves.split():
            board.push_san(san)
        return board, "Checkmate the other player's king."

    def validate(self, world: chess.Board) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see ChessEnv")

    def solve(self, world: chess.Board) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


def start_positions() -> DataTaskSet:
    """The standard position in every split, then that split's openings."""
    return DataTaskSet(
        {
            split: [ChessTask(f"{split}/standard", split, "standard")]
            + [
                ChessTask(f"{split}/{name}", split, "opening", moves)
                for name, moves in openings.items()
            ]
            for split, openings in OPENINGS.items()
        }
    )


class Game:
    """The mutable game: the board (with its history) and the plies played in this episode."""

    def __init__(self, board: chess.Board) -> None:
        self.board = board
        self.start_ply = len(board.move_stack)

    @property
    def plies(self) -> int:
        return len(self.board.move_stack) - self.start_ply


class ChessEnv(TurnBasedEnv[Game]):
    __doc__ = __doc__
    metadata = {**TurnBasedEnv.metadata, "name": "chess_v0"}
    possible_agents = list(PLAYERS)

    def __init__(self, *, max_plies: int = MAX_PLIES, **kwargs: Any) -> None:
        self.tasks = start_positions()
        self.max_plies = max_plies
        self._oracle = UciEngine(nodes=ORACLE_NODES)
        super().__init__(**kwargs)

    def new_world(self, task: Any, rng: np.random.Generator) -> Game:
        return Game(task.setup(rng)[0])

    def to_move(self, world: Game) -> str:
        return PLAYERS[0] if world.board.turn == chess.WHITE else PLAYERS[1]

    def describe(self, world: Game, agent: str) -> str:
        board = world.board
        lines = [diagram(board), f"FEN: {board.fen()}"]
        colour = "White" if COLOURS[agent] == chess.WHITE else "Black"
        over = self.ending(world)
        if over:
            lines.append(f"You are {colour} ({agent}). The game is over: {over}.")
        else:
            mine = self.to_move(world) == agent
            turn = "Your turn." if mine else "The other player's turn."
            check = " You are in check." if mine and board.is_check() else ""
            lines.append(f"You are {colour} ({agent}). {turn}{check}")
        lines.append(
            f"Last move: {last_move(board)}. Ply {world.plies} of at most {self.max_plies}."
        )
        if not over:
            lines.append(legal_list(board))
        return "\n".join(lines)

    def act(self, world: Game, agent: str, action: str) -> str:
        move = parse_move(world.board, action)
        san = world.board.san(move)
        world.board.push(move)
        return f"You played {san}."

    def state_key(self, world: Game) -> str:
        return world.board.fen()

    def ending(self, world: Game) -> str | None:
        """Why the game is over, in words, or ``None`` while it goes on."""
        result = world.board.outcome()
        if result is not None:
            how = result.termination.name.lower().replace("_", " ")
            winner = {chess.WHITE: "White wins", chess.BLACK: "Black wins", None: "a draw"}
            return f"{how}, {winner[result.winner]}"
        if world.plies >= self.max_plies:
            return f"the {self.max_plies}-ply limit, a draw"
        return None

    def outcome(self, world: Game) -> dict[str, float] | None:
        result = world.board.outcome()
        if result is None:
            return dict.fromkeys(PLAYERS, 0.5) if world.plies >= self.max_plies else None
        if result.winner is None:
            return dict.fromkeys(PLAYERS, 0.5)
        return {a: float(COLOURS[a] == result.winner) for a in PLAYERS}

    def rules(self) -> str:
        return (
            "Chess, standard rules. player_0 plays White, player_1 Black; the players move in "
            "turn. Checkmate wins; stalemate, insufficient material, the 75-move rule, "
            f"fivefold repetition and {self.max_plies} moves played in this game are draws.\n"
            "Actions: one move, in SAN (e.g. 'Nf3', 'exd5', 'O-O', 'e8=Q') or UCI (e.g. "
            "'g1f3', 'e7e8q'); the legal moves are listed in every observation. An illegal or "
            f"unreadable move costs a mistake; {self.max_invalid_actions} forfeit the game."
        )

    def legal_actions(self, world: Game, agent: str) -> list[str]:
        """The agent's legal moves in SAN, in python-chess's order; none off its turn."""
        if self.to_move(world) != agent or self.outcome(world) is not None:
            return []
        return [world.board.san(move) for move in world.board.legal_moves]

    def oracle_action(self, agent: str) -> str | None:
        if self.world is None or self.outcome(self.world) is not None:
            return None
        if self.to_move(self.world) != agent:
            return None
        board = self.world.board
        return board.san(self._oracle.best_move(board))

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        players = super().reference_players()  # "random"
        for skill in SKILLS:
            players[f"stockfish-skill-{skill}"] = _stockfish(skill)
        return players

    def close(self) -> None:
        """Stop the oracle's engine (if it started) and drop the game; idempotent."""
        self._oracle.close()
        super().close()


class StockfishPlayer:
    """Stockfish at a set skill level, :data:`PLAYER_NODES` nodes a move; its own process,
    started at its first move and stopped by :meth:`close`.

    Below level 20 it plays Stockfish's own skill rule (``Skill::pick_best`` in Stockfish
    15.1's ``search.cpp``): search to depth ``1 + level``, take the best
    :data:`SKILL_CANDIDATES` moves, add to each score a push of
    ``(weakness * (top - score) + delta * r) / 128`` with ``weakness = 120 - 2 * level``,
    ``delta = min(top - worst, a pawn)`` and ``r`` uniform in ``[0, weakness)``, and play the
    highest. Stockfish draws ``r`` from a generator seeded by the clock; this player draws it
    from the game's reset seed, the level and the ply, so a seeded game replays move for move.
    Scores are the reported centipawns (the rule's comparisons do not depend on the unit,
    save the pawn cap, converted: :data:`SKILL_DELTA_CAP`).
    """

    def __init__(self, skill: int, nodes: int = PLAYER_NODES) -> None:
        if not 0 <= skill <= 20:
            raise ValueError(f"Stockfish's skill level runs from 0 to 20, got {skill}")
        self.name = f"stockfish-skill-{skill}"
        self.skill = skill
        self._engine = UciEngine(nodes=nodes)

    def act(self, env: Any, agent: str) -> str:
        game = env.unwrapped
        board = game.world.board
        if self.skill == 20:
            return str(board.san(self._engine.best_move(board)))
        lines = self._engine.candidates(board, depth=1 + self.skill, count=SKILL_CANDIDATES)
        draw = np.random.default_rng([self.skill, game.episode_seed or 0, board.ply()])
        return str(board.san(pick_weakened(lines, self.skill, draw)))

    def close(self) -> None:
        self._engine.close()


def pick_weakened(
    lines: Sequence[tuple[chess.Move, int]], skill: int, draw: np.random.Generator
) -> chess.Move:
    """Stockfish's skill rule over its best moves ``lines`` (best first, centipawns)."""
    top, worst = lines[0][1], lines[-1][1]
    delta = min(top - worst, SKILL_DELTA_CAP)
    weakness = 120 - 2 * skill
    best, best_score = lines[0][0], -math.inf
    for move, score in lines:
        push = (weakness * (top - score) + delta * int(draw.integers(weakness))) / 128
        if score + push >= best_score:
            best, best_score = move, score + push
    return best


def _stockfish(skill: int) -> Callable[[], ReferencePlayer]:
    return lambda: StockfishPlayer(skill)


def diagram(board: chess.Board) -> str:
    """The board with file letters and rank numbers, White at the bottom."""
    files = "  a b c d e f g h"
    rows = [f"{8 - i} {row} {8 - i}" for i, row in enumerate(str(board).splitlines())]
    return "\n".join([files, *rows, files])


def last_move(board: chess.Board) -> str:
    if not board.move_stack:
        return "none"
    move = board.pop()
    try:
        san = board.san(move)
        colour = "White" if board.turn == chess.WHITE else "Black"
    finally:
        board.push(move)
    return f"{san} ({colour})"


def legal_list(board: chess.Board) -> str:
    sans = [board.san(move) for move in board.legal_moves]
    return f"Legal moves ({len(sans)}): {' '.join(sans)}"


# ---------------------------------------------------------------------------- move parsing

_SEPARATORS = re.compile(r"[\s,;:()\[\]{}\"'`*]+")
_MOVE_NUMBER = re.compile(r"^\d*\.+")
_ANNOTATION = re.compile(r"(e\.p\.|[!?.]+)$")
_UCI = re.compile(r"^[a-h][1-8][a-h][1-8][qrbn]?$")


def parse_move(board: chess.Board, text: str) -> chess.Move:
    """The one legal move that the last line of ``text`` names, in SAN or UCI.

    Raises :class:`InvalidAction` saying why (nothing readable, an illegal or ambiguous move,
    several moves named); the env's feedback adds the legal moves.
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    found: dict[chess.Move, None] = {}
    illegal: list[str] = []
    for token in _tokens(line):
        try:
            move = _read(board, token)
        except chess.IllegalMoveError:
            illegal.append(f"{token} is not a legal move here")
            continue
        except chess.AmbiguousMoveError:
            illegal.append(f"{token} is ambiguous (add the piece's file or rank)")
            continue
        except chess.InvalidMoveError:
            continue
        found[move] = None
    if len(found) == 1:
        return next(iter(found))
    if found:
        named = ", ".join(board.san(move) for move in found)
        raise InvalidAction(f"{line.strip()[:80]!r} names several moves ({named}); write one")
    if illegal:
        raise InvalidAction(illegal[-1])
    raise InvalidAction(
        f"could not read a move from {line.strip()[:80]!r}: write one move in SAN (e.g. 'Nf3', "
        "'O-O', 'e8=Q') or UCI (e.g. 'g1f3')"
    )


def _tokens(line: str) -> Sequence[str]:
    """Words that may be moves: no move numbers, annotations or surrounding punctuation."""
    tokens = []
    for word in _SEPARATORS.split(line):
        word = _ANNOTATION.sub("", _MOVE_NUMBER.sub("", word))
        if word:
            tokens.append(word)
    return tokens


def _read(board: chess.Board, token: str) -> chess.Move:
    """A legal move from one token, or python-chess's Invalid/Illegal/AmbiguousMoveError."""
    if _UCI.match(token):
        return board.parse_uci(token)
    if token.lower().replace("0", "o").rstrip("+#") in ("o-o", "o-o-o"):
        token = token.upper().replace("0", "O")
    elif token[0] in "kqrn":  # a lower-case piece letter ('b' is also a file: left alone)
        token = token[0].upper() + token[1:]
    return board.parse_san(token)
