"""The Python tool the reasoning envs share: code runs in the episode's own sandbox.

The sandbox (:mod:`agentgym.sandbox`: no network, its own PID namespace and user, time,
memory and process limits, the host's Python read-only) is made on the first run and
closed with the episode, so an episode that never runs code costs nothing. A sandbox that
cannot be made raises :class:`~agentgym.errors.SandboxError`, an infrastructure error: the
evaluator errors the episode rather than scoring it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PythonTool"]


class PythonTool:
    """Runs Python programs for one episode; :meth:`close` with the episode."""

    def __init__(self, timeout: float = 10.0, max_output: int = 2_000) -> None:
        self.timeout, self.max_output = timeout, max_output
        self._sandbox: Any = None

    def run(self, code: str) -> tuple[str, str]:
        """``(status, output)`` of ``python3 -c code``: stdout then stderr, cut to the limit."""
        from agentgym.sandbox import create

        if self._sandbox is None:
            self._sandbox = create(python=True)
        result = self._sandbox.exec(["python3", "-c", code], timeout=self.timeout)
        output = (result.stdout + result.stderr).strip()
        if len(output) > self.max_output:
            output = output[: self.max_output] + "\n[... output cut ...]"
        if result.timed_out:
            return f"timed out after {self.timeout:g} s", output
        return f"exit code {result.exit_code}", output

    def close(self) -> None:
        """Stop the sandbox and everything in it (idempotent)."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def __deepcopy__(self, memo: dict[int, Any]) -> PythonTool:
        # A snapshot of an episode gets a tool of its own, which starts a fresh sandbox.
        return PythonTool(self.timeout, self.max_output)
