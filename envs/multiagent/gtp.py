"""A small client of GNU Go over the Go Text Protocol (GTP), for go's reference players.

What a gym needs beyond the protocol:

* **Where the engine is.** Debian installs GNU Go as ``/usr/games/gnugo``, off some shells'
  ``PATH``: ``engines.find_engine`` looks there too, and names the package when it is absent.
* **Reproducible moves.** GNU Go runs with a fixed ``--seed``, so its move is a function of
  the position and its level.
* **No leaked processes, typed failures.** ``close`` is idempotent and also runs when the
  client is garbage-collected; an engine that dies, stalls past ``REPLY_SECONDS`` or answers
  ``?`` is an :class:`~agentgym.errors.EnvCrashedError` (infrastructure, never the agent's
  loss).
"""

from __future__ import annotations

import os
import select
import subprocess
import time
import weakref

from agentgym.envs.multiagent.engines import find_engine
from agentgym.errors import EnvCrashedError

__all__ = ["GnuGo"]

REPLY_SECONDS = 30.0
"""A stall guard on every command; GNU Go answers a 9x9 move in well under a second."""


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End ``process``: ``quit`` first, then kill; always reaped."""
    if process.poll() is None:
        try:
            assert process.stdin is not None
            process.stdin.write(b"quit\n")
            process.stdin.flush()
            process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


class GnuGo:
    """One GNU Go process at a set level, playing on a ``size`` board with ``komi``."""

    def __init__(self, level: int, size: int = 9, komi: float = 7.5) -> None:
        self.level, self.size, self.komi = level, size, komi
        command = [
            find_engine("gnugo", "gnugo"),
            "--mode",
            "gtp",
            "--level",
            str(level),
            "--seed",
            "1",
        ]
        command += ["--chinese-rules", "--capture-all-dead", "--boardsize", str(size)]
        command += ["--komi", str(komi)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._finalizer = weakref.finalize(self, _stop, self.process)
        self._pending = b""

    def command(self, line: str) -> str:
        """Send one GTP command; its answer without the ``=``, or EnvCrashedError."""
        if self.process.poll() is not None:
            raise EnvCrashedError(f"GNU Go exited with code {self.process.returncode}")
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line.encode() + b"\n")
            self.process.stdin.flush()
        except OSError as error:
            raise EnvCrashedError(f"GNU Go stopped reading commands: {error}") from error
        reply = self._reply(line)
        if not reply.startswith("="):
            raise EnvCrashedError(f"GNU Go refused {line!r}: {reply.strip()}")
        return reply[1:].strip()

    def _reply(self, line: str) -> str:
        """Bytes up to GTP's blank line that ends a reply, within REPLY_SECONDS."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + REPLY_SECONDS
        while b"\n\n" not in self._pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            if not ready:
                raise EnvCrashedError(f"GNU Go did not answer {line!r} in {REPLY_SECONDS} s")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise EnvCrashedError(f"GNU Go exited while answering {line!r}")
            self._pending += chunk.replace(b"\r", b"")
        reply, self._pending = self._pending.split(b"\n\n", 1)
        return reply.decode(errors="replace")

    def close(self) -> None:
        """Stop the process; idempotent."""
        self._finalizer()
