"""``human``: you play, in the terminal. For trying a task before giving it to a model.

The instructions are shown at the start of each episode, then every observation (and the
admissible actions when the env lists them); the line you type is the action. For tool-call
envs type the call as JSON (``{"name": "add", "arguments": {"a": 1}}``). An end of input
(Ctrl-D) ends the run as a usage error, which stops the evaluator rather than recording the
episode as lost. Episodes running at once take turns at the terminal (one prompt at a time),
but ``--num-envs 1`` is the natural way to play.

:class:`HumanUser` seats a person on the other side, as the *user* of a conversation env (the
customer of ``usersim/*``, the patient of ``usersim/Diagnosis-v0``): ``agentgym play ID
--user`` has them type the user's turns while an agent (``--agent``, the oracle by default)
serves them.
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
from agentgym.core import UserModel
from agentgym.errors import UsageError
from agentgym.task_env import looks_like_tool_call

__all__ = ["HumanAgent", "HumanUser", "NoMoreInput"]

_TERMINAL = threading.Lock()  # one prompt at a time, whichever episode asks


class NoMoreInput(UsageError):
    """The person's input ended (Ctrl-D, the end of a script): they left the episode."""


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
            raise NoMoreInput("no more input: the human agent stopped the run")
        text = line.rstrip("\n")
        if self.context.tools:
            try:
                return json.loads(text)
            except ValueError:
                return text  # the env explains what a tool call looks like
        return text


class HumanUser(UserModel):
    """A person plays the user of a conversation env, a line of input per turn.

    At the start they see their brief (the instructions a model playing the user would get:
    who they are, what they want, what they know, how to end); then each message the env
    passes them, the agent's (or, after they called one of their own tools, as a JSON tool
    call, the tool's result), and they type their answer. An empty line asks again; the end
    of input raises :class:`NoMoreInput`.

    Args:
        read_line: returns the next line, ``""`` at the end of input (default: stdin's).
        output: where the conversation is written (default: stdout).
    """

    def __init__(
        self, read_line: Callable[[], str] | None = None, output: TextIO | None = None
    ) -> None:
        self._read_line = read_line or sys.stdin.readline
        self._output = output
        self._called_tool = False

    def start(self, instructions: str, *, seed: int | None) -> None:
        self._called_tool = False
        self._write("\n=== You play the user. Your brief (the agent does not see it) ===\n")
        self._write(instructions.strip() + "\n")

    def reply(self, message: str) -> str:
        who = "your tool" if self._called_tool else "agent"
        self._write(f"\n{who}: {message}\n")
        while True:
            self._write("you> ")
            line = self._read_line()
            if not line:
                raise NoMoreInput("no more input: the person playing the user left")
            text = line.strip()
            if text:
                self._called_tool = looks_like_tool_call(text)
                return text

    def _write(self, text: str) -> None:
        out = self._output or sys.stdout
        out.write(text)
        out.flush()
