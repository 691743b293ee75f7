"""``human``: you play, in the terminal. For trying a task before giving it to a model.

The instructions are shown at the start of each episode, then every observation (and the
admissible actions when the env lists them); the line you type is the action. For tool-call
envs type the call as JSON (``{"name": "add", "arguments": {"a": 1}}``). An end of input
(Ctrl-D) ends the run as a usage error, which stops the evaluator rather than recording the
episode as lost. Episodes running at once take turns at the terminal (one prompt at a time),
but ``--num-envs 1`` is the natural way to play.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from agentgym.agents.base import Agent, EpisodeContext
from agentgym.agents.prompting import format_observation
from agentgym.errors import UsageError

__all__ = ["HumanAgent"]

_TERMINAL = threading.Lock()  # one prompt at a time, whichever episode asks


class HumanAgent(Agent):
    """Reads each action from a line of input (stdin by default)."""

    name = "human"

    def __init__(
        self, read_line: Callable[[], str] | None = None, output: TextIO | None = None
    ) -> None:
        self._read_line = read_line or sys.stdin.readline
        self._output = output

    def reset(self, context: EpisodeContext) -> None:
        self.context = context
        self._shown_instructions = False

    async def act(self, observation: Any, info: dict[str, Any]) -> Any:
        return await asyncio.to_thread(self._ask, observation, info)

    def _ask(self, observation: Any, info: dict[str, Any]) -> Any:
        out = self._output or sys.stdout
        with _TERMINAL:
            if not self._shown_instructions:
                out.write(f"\n=== {self.context.env_id} task {self.context.task_id} ===\n")
                out.write(self.context.instructions.strip() + "\n")
                self._shown_instructions = True
            out.write("\n" + format_observation(observation) + "\n")
            if info.get("admissible_actions"):
                out.write(f"(actions: {', '.join(map(str, info['admissible_actions']))})\n")
            out.write("> ")
            out.flush()
            line = self._read_line()
        if not line:
            raise UsageError("no more input: the human agent stopped the run")
        text = line.rstrip("\n")
        if self.context.tools:
            try:
                return json.loads(text)
            except ValueError:
                return text  # the env explains what a tool call looks like
        return text
