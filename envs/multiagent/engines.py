"""Finding the game engines the reference players run: Stockfish (``uci.py``), GNU Go (``gtp.py``).

Debian installs its engines under ``/usr/games``, which is not on every shell's ``PATH``, so
:func:`find_engine` looks there and in the other usual folders after ``PATH``, and raises
:class:`~agentgym.errors.MissingExtraError` naming the package when the engine is absent.
"""

from __future__ import annotations

import os
import shutil

from agentgym.errors import MissingExtraError

__all__ = ["ENGINE_DIRS", "find_engine"]

ENGINE_DIRS = ("/usr/games", "/usr/local/games", "/usr/bin", "/usr/local/bin")
"""Where Debian and local installs put engines, searched after ``PATH``."""


def find_engine(binary: str, package: str) -> str:
    """The path of ``binary``, or a :class:`MissingExtraError` saying to install ``package``."""
    path = os.pathsep.join([os.environ.get("PATH", ""), *ENGINE_DIRS])
    found = shutil.which(binary, path=path)
    if found is None:
        raise MissingExtraError(
            f"the engine {binary!r} is not installed: not on PATH nor in "
            f"{', '.join(ENGINE_DIRS)}. Install Debian's package: apt-get install {package}"
        )
    return found
