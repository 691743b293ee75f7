"""A small, robust client of a UCI chess engine (Stockfish), over python-chess's ``chess.engine``.

Why a wrapper at all: python-chess speaks UCI and is maintained, but three things a gym needs
are the project's to decide.

* **Where the engine is.** Debian installs Stockfish as ``/usr/games/stockfish``, off some
  shells' ``PATH``: ``engines.find_engine`` looks there too, and names the package when it is
  absent.
* **Reproducible moves.** Each search starts with ``ucinewgame`` (hash and history tables
  cleared) on one thread with a node limit, so a move is a function of the game's move history
  alone, whatever searches came before or which process runs it. Stockfish always runs at
  full strength here: below its skill level 20 it picks among its best moves with a
  generator seeded from the clock, which no seed can replay, so the weaker players apply
  that rule themselves to :meth:`UciEngine.candidates` with a seeded generator
  (``envs/multiagent/chess.py``, :class:`StockfishPlayer`).
* **No leaked processes, typed failures.** ``close`` is idempotent and also runs when the
  client is garbage-collected, and at interpreter exit for a client still open (before
  Python joins python-chess's non-daemon I/O thread, which would otherwise wait forever on
  the live engine); an engine that dies or stalls is an
  :class:`~agentgym.errors.EnvCrashedError` (infrastructure, never the agent's loss).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import weakref

import chess
import chess.engine

from agentgym.envs.multiagent.engines import find_engine
from agentgym.errors import EnvCrashedError

__all__ = ["UciEngine"]

QUIT_SECONDS = 5.0
"""How long ``close`` waits for the engine process to be gone."""

SEARCH_SECONDS_CAP = 5.0
"""A stall guard on every search: node-limited searches end long before it (milliseconds)."""


class UciEngine:
    """One Stockfish process at full strength; started at the first search."""

    def __init__(self, nodes: int = 5_000) -> None:
        if nodes < 1:
            raise ValueError(f"a search needs at least 1 node, got {nodes}")
        self.nodes = nodes
        self._engine: chess.engine.SimpleEngine | None = None
        self._finalizer: weakref.finalize[[chess.engine.SimpleEngine], UciEngine] | None = None

    def best_move(self, board: chess.Board) -> chess.Move:
        """The engine's move in ``board`` (which must have a legal move)."""
        engine = self._started()
        limit = chess.engine.Limit(nodes=self.nodes, time=SEARCH_SECONDS_CAP)
        try:
            result = engine.play(board, limit, game=object())  # a new game: ucinewgame
        except (chess.engine.EngineError, concurrent.futures.TimeoutError, OSError) as error:
            self.close()
            raise EnvCrashedError(
                f"Stockfish failed to move in {board.fen()!r}: {error}"
            ) from error
        return self._legal(board, result.move)

    def candidates(
        self, board: chess.Board, depth: int, count: int
    ) -> list[tuple[chess.Move, int]]:
        """The engine's ``count`` best moves in ``board`` at search depth ``depth`` (within the
        node limit), best first, each with its score in centipawns for the side to move
        (a mate counts as 100,000 less its distance)."""
        engine = self._started()
        limit = chess.engine.Limit(depth=depth, nodes=self.nodes, time=SEARCH_SECONDS_CAP)
        try:
            lines = engine.analyse(board, limit, multipv=count, game=object())
        except (chess.engine.EngineError, concurrent.futures.TimeoutError, OSError) as error:
            self.close()
            raise EnvCrashedError(f"Stockfish failed to search {board.fen()!r}: {error}") from error
        found = []
        for line in lines:
            if "pv" in line and line["pv"] and "score" in line:
                score = line["score"].relative.score(mate_score=100_000)
                found.append((self._legal(board, line["pv"][0]), int(score or 0)))
        if not found:
            self.close()
            raise EnvCrashedError(f"Stockfish gave no move in {board.fen()!r}")
        return found

    def _legal(self, board: chess.Board, move: chess.Move | None) -> chess.Move:
        if move is None or move not in board.legal_moves:
            self.close()
            raise EnvCrashedError(f"Stockfish answered {move} in {board.fen()!r}, not a legal move")
        return move

    def _started(self) -> chess.engine.SimpleEngine:
        if self._engine is not None:
            return self._engine
        path = find_engine("stockfish", "stockfish")
        try:
            engine = chess.engine.SimpleEngine.popen_uci(path, timeout=10.0)
        except (chess.engine.EngineError, concurrent.futures.TimeoutError, OSError) as error:
            raise EnvCrashedError(f"Stockfish ({path}) did not start: {error}") from error
        self._engine = engine
        self._finalizer = weakref.finalize(self, _quit, engine)
        _OPEN.add(self)
        try:
            engine.configure({"Threads": 1, "Hash": 1})
        except (chess.engine.EngineError, concurrent.futures.TimeoutError, OSError) as error:
            self.close()
            raise EnvCrashedError(f"Stockfish ({path}) refused its options: {error}") from error
        return engine

    @property
    def running(self) -> bool:
        """Whether an engine process is held now."""
        return self._engine is not None

    def close(self) -> None:
        """Stop the engine process; idempotent."""
        if self._finalizer is not None:
            self._finalizer()  # runs _quit once, then detaches
        self._engine = self._finalizer = None
        _OPEN.discard(self)


def _quit(engine: chess.engine.SimpleEngine) -> None:
    """Ask the engine to quit, kill it if it will not, and wait until it is reaped: a process
    still exiting after ``close`` would be a child left behind."""
    try:
        engine.quit()
    except (chess.engine.EngineError, concurrent.futures.TimeoutError, OSError):
        pass  # dead or stalled: close() below kills it
    finally:
        engine.close()
    with contextlib.suppress(concurrent.futures.TimeoutError):
        engine.returncode.result(timeout=QUIT_SECONDS)


_OPEN: weakref.WeakSet[UciEngine] = weakref.WeakSet()
"""The clients holding an engine now."""


def _close_all() -> None:
    for client in list(_OPEN):
        client.close()


# Runs before the interpreter joins non-daemon threads, as concurrent.futures' own hook does;
# an atexit hook would run after that join, which a live engine's I/O thread never ends.
threading._register_atexit(_close_all)  # type: ignore[attr-defined]  # private, not in typeshed
