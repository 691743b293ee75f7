"""Connect four's solver in C (``data/connectfour_solver.c``), compiled once and called by ctypes.

The Python search (``connectfour_solver.py``) visits 40,000-100,000 positions a second; the same
algorithm in C visits about 3 million on the loaded development machine and about 8 million on
an idle core, which moves the ply from which every move is proved within a second from about
24 to about 12 (``tests/perf/bench_multiagent.py``).

The source is compiled with the machine's C compiler (``cc`` or ``gcc``; the Makefile installs
Debian's ``build-essential``) into ``$AGENTGYM_CACHE/connectfour/``, under the cache's lock, the
library's name carrying a hash of the source so an edited solver is rebuilt. Where no compiler
or no build works, :func:`native` returns ``None`` once a warning has said why, and the
callers fall back to the Python search: slower, so exact from later in the game, never
wrong.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from agentgym.cache import cache_dir, exclusive

__all__ = ["NativeSolver", "native"]

SOURCE = Path(__file__).with_name("data") / "connectfour_solver.c"
ILLEGAL, OVER_BUDGET = -100, -101  # the C functions' C4_ILLEGAL and C4_BUDGET
_log = logging.getLogger(__name__)


class NativeSolver:
    """The compiled solver: exact scores and best moves within a budget of positions.

    The C code keeps one table in globals and ctypes releases the GIL during a call, so calls
    are serialised by a lock (matches played at once in threads share this solver)."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._lib = library
        self._lock = threading.Lock()
        self.visited = 0
        """Positions the last call searched."""

    def solve(self, columns: list[int] | tuple[int, ...], budget: int = 0) -> int | None:
        """The exact score (Pons' convention) for the player to move after ``columns``, or
        ``None`` past ``budget`` positions (0: no budget)."""
        visited = ctypes.c_longlong()
        with self._lock:
            score = int(self._lib.c4_solve(*_moves(columns), budget, ctypes.byref(visited)))
            self.visited = visited.value
        return self._checked(score, columns)

    def best_move(
        self, columns: list[int] | tuple[int, ...], budget: int = 0, *, weak: bool = False
    ) -> tuple[int, int] | None:
        """A best column (the first, centre first, keeping the position's score) and that
        score, or ``None`` past ``budget`` positions (0: no budget).

        ``weak`` proves only the score's sign (1 win, 0 draw, -1 loss), many times faster:
        the column keeps a win a win and a draw a draw; in a lost position it is merely the
        first legal column, since every column loses."""
        value, visited = ctypes.c_int(), ctypes.c_longlong()
        with self._lock:
            column = int(
                self._lib.c4_best_move(
                    *_moves(columns),
                    budget,
                    int(weak),
                    ctypes.byref(value),
                    ctypes.byref(visited),
                )
            )
            self.visited = visited.value
        return None if self._checked(column, columns) is None else (column, value.value)

    @staticmethod
    def _checked(result: int, columns: list[int] | tuple[int, ...]) -> int | None:
        if result == ILLEGAL:
            moves = "".join(str(c + 1) for c in columns)
            raise ValueError(f"the moves {moves!r} are not a connect-four game in progress")
        return None if result == OVER_BUDGET else result


def _moves(columns: list[int] | tuple[int, ...]) -> tuple[ctypes.Array[ctypes.c_int8], int]:
    return (ctypes.c_int8 * max(len(columns), 1))(*columns), len(columns)


@functools.cache
def native(table_size: int | None = None) -> NativeSolver | None:
    """The compiled solver, built on first use; ``None`` (with a warning) where it cannot be.

    ``table_size`` (a prime above 2^17) replaces the transposition table's 8,388,593 entries
    (7 bytes each): the book writer's long proofs run about a third faster with 2^26."""
    try:
        library = ctypes.CDLL(str(_built(table_size)))
    except (OSError, subprocess.SubprocessError) as error:
        _log.warning(
            "connect four: the C solver is unavailable (%s); the Python search stands in, "
            "exact only from about ply 24",
            error,
        )
        return None
    library.c4_solve.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p]
    library.c4_best_move.argtypes = [
        *library.c4_solve.argtypes[:3],
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    if library.c4_init() != 0:
        _log.warning("connect four: the C solver could not allocate its table; Python stands in")
        return None
    return NativeSolver(library)


def _built(table_size: int | None = None) -> Path:
    """The compiled library in the cache, compiling it first if absent."""
    source = SOURCE.read_bytes()
    folder = cache_dir() / "connectfour"
    defines = [] if table_size is None else [f"-DTABLE_SIZE={table_size}u"]
    digest = hashlib.sha256(source + " ".join(defines).encode()).hexdigest()[:16]
    target = folder / f"solver-{digest}.so"
    if target.exists():
        return target
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise OSError("no C compiler ('cc' or 'gcc') on PATH; apt-get install build-essential")
    folder.mkdir(parents=True, exist_ok=True)
    with exclusive(folder / ".lock"):
        if not target.exists():
            with tempfile.TemporaryDirectory(dir=folder) as scratch:
                built = Path(scratch) / target.name
                command = [
                    compiler,
                    "-O3",
                    "-shared",
                    "-fPIC",
                    *defines,
                    "-o",
                    str(built),
                    str(SOURCE),
                ]
                done = subprocess.run(command, capture_output=True, text=True, timeout=120)
                if done.returncode != 0:
                    raise OSError(f"{compiler} failed: {done.stderr.strip()[:300]}")
                os.replace(built, target)
    return target
