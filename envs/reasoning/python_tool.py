"""The Python tool the reasoning envs share: code runs in the episode's own sandbox.

The sandbox (:mod:`agentgym.sandbox`: no network, its own PID namespace and user, 1 GiB of
memory, 64 processes, 60 s of CPU, the host's Python read-only) is made on the first run and
closed with the episode, so an episode that never runs code costs nothing. Each run writes
the program to ``main.py`` and runs ``python3 main.py`` with a wall-clock limit. A sandbox
that cannot be made raises :class:`~agentgym.errors.SandboxError`, an infrastructure error:
the evaluator errors the episode rather than scoring it. Files a program writes stay for the
episode's next runs; they are state no snapshot can copy, so envs with this tool declare
``supports_state_snapshot: False``.

:func:`python_blocks` finds the programs in a reply: fenced blocks labelled ``python`` (or
``py``, ``python3``, or not labelled at all); a ```` ```bash ```` block is not Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentgym.sandbox import ExecResult, Limits, Sandbox, SandboxSpec, create
from agentgym.sandbox.base import check_timeout

__all__ = ["PythonTool", "python_blocks"]

_BLOCK = re.compile(r"```[ \t]*([\w+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = ("python", "python3", "py", "")


def python_blocks(reply: str) -> Iterator[tuple[int, str]]:
    """``(start, code)`` of every fenced block of ``reply`` labelled Python (or unlabelled)."""
    for match in _BLOCK.finditer(reply):
        if match.group(1).lower() in _PYTHON_TAGS:
            yield match.start(), match.group(2)


class PythonTool:
    """Runs Python programs for one episode; :meth:`close` with the episode."""

    def __init__(self, timeout: float = 10.0, max_output: int = 2_000) -> None:
        self.timeout, self.max_output = check_timeout(timeout), max_output
        self._sandbox: Sandbox | None = None

    def execute(self, code: str, timeout: float | None = None) -> ExecResult:
        """Run ``code`` as ``main.py`` (``timeout``: wall-clock seconds, default the tool's)."""
        if self._sandbox is None:
            self._sandbox = create(
                SandboxSpec(
                    env={"PYTHONHASHSEED": "0"},
                    limits=Limits(
                        timeout=self.timeout, memory=1 << 30, cpu_seconds=60, processes=64
                    ),
                )
            )
        return self._sandbox.exec(
            ["/bin/sh", "-c", "cat > main.py && exec python3 main.py"],
            stdin=code,
            timeout=timeout,
        )

    def run(self, code: str, timeout: float | None = None) -> tuple[str, str]:
        """``(status, output)`` of a run: stdout then stderr, cut to the tool's limit."""
        result = self.execute(code, timeout)
        return self.status(result, timeout), self.cut((result.stdout + result.stderr).strip())

    def status(self, result: ExecResult, timeout: float | None = None) -> str:
        """``exit code N``, or ``timed out after S s``."""
        if result.timed_out:
            return f"timed out after {timeout or self.timeout:g} s"
        return f"exit code {result.exit_code}"

    def cut(self, text: str) -> str:
        """``text`` cut to the tool's output limit, saying so."""
        if len(text) > self.max_output:
            return text[: self.max_output] + "\n[... cut ...]"
        return text

    def close(self) -> None:
        """Stop the sandbox and everything in it (idempotent)."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
