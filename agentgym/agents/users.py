"""Agents that play the *user*: any agent spec as a :class:`~agentgym.UserModel`.

Conversation envs (``usersim/*``) speak to their user synchronously, from the thread their
``reset``/``step`` runs in; agents are async. :class:`AgentUser` bridges the two: each
:meth:`~AgentUser.reply` submits the agent's ``act`` to an event loop and waits for it.

* Under the evaluator (``agentgym eval --user SPEC``) that loop is the evaluator's own, so
  the user's model calls are batched with every other episode's, agent and user alike (with
  ``--user`` the same LLM spec as ``--agent``, both share one loaded model).
* Standalone (:func:`user_model`), the loop runs in a daemon thread of its own.

Every turn is kept (:attr:`AgentUser.turns`: text, exact tokens and logprobs, usage), and the
evaluator writes them to the episode's record as ``user_turns``, apart from the agent's steps,
so a trainer never mistakes the user's tokens for the policy's.

:class:`RecordedUser` plays back the user turns of a record: the leaderboard's re-scoring
replays an episode whose user was a model without running that model again.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from agentgym.agents.base import Agent, AgentFactory, AgentReply, EpisodeContext
from agentgym.agents.specs import resolve_agent
from agentgym.core import UserModel
from agentgym.errors import InfrastructureError, UsageError
from agentgym.ledger import UserTurnRecord
from agentgym.task_env import clean_text

__all__ = ["AgentUser", "RecordedUser", "user_model"]


class AgentUser(UserModel):
    """An :class:`Agent` playing the user; see the module docstring.

    Args:
        agent: the agent (one per conversation).
        loop: the event loop its ``act`` runs on (the caller's thread must not be that
            loop's own thread).
        env_id, task_id: for the agent's :class:`EpisodeContext`.
        sampling: the sampling settings of the user's model.
        timeout: seconds a reply may take (``None``: no limit).
    """

    def __init__(
        self,
        agent: Agent,
        loop: asyncio.AbstractEventLoop,
        *,
        env_id: str = "",
        task_id: str = "",
        sampling: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.agent, self.loop, self.timeout = agent, loop, timeout
        self.env_id, self.task_id = env_id, task_id
        self.sampling = dict(sampling or {})
        self.turns: list[UserTurnRecord] = []
        self.steps = 0  # the agent's steps so far: where the evaluator is in the episode

    def start(self, instructions: str, *, seed: int | None) -> None:
        self.turns.clear()
        self.agent.reset(
            EpisodeContext(
                env_id=self.env_id,
                task_id=self.task_id,
                seed=seed,
                instructions=instructions,
                info={},
                sampling=self.sampling,
                action_style="raw",
            )
        )

    def reply(self, message: str) -> str:
        future = asyncio.run_coroutine_threadsafe(self.agent.act(message, {}), self.loop)
        try:
            reply = future.result(self.timeout)
        except FutureTimeout:
            future.cancel()
            raise InfrastructureError(
                f"the model playing the user took over {self.timeout} s to reply"
            ) from None
        if not isinstance(reply, AgentReply):
            reply = AgentReply(action=reply)
        raw = reply.text if reply.text is not None else reply.action
        text = clean_text(raw if isinstance(raw, str) else str(raw))
        self.turns.append(UserTurnRecord(self.steps, text, reply.tokens, dict(reply.usage)))
        return text

    def close(self) -> None:
        self.agent.close()


class RecordedUser(UserModel):
    """Plays back the texts of recorded user turns, in order (a replay of an episode)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        self.played = 0

    def start(self, instructions: str, *, seed: int | None) -> None:
        self.played = 0

    def reply(self, message: str) -> str:
        if self.played >= len(self.texts):
            # The record's user said no more: the replay asked for a turn the run never had.
            raise UsageError(
                f"the replay asked the user for turn {self.played + 1}, but the record holds "
                f"{len(self.texts)} user turns"
            )
        self.played += 1
        return self.texts[self.played - 1]


class _LoopThread:
    """One event loop in a daemon thread, shared by the standalone users of a process."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="agentgym-user-loop", daemon=True
                ).start()
                cls._loop = loop
            return cls._loop


def user_model(
    spec: Any = None,
    options: dict[str, Any] | None = None,
    *,
    factory: AgentFactory | None = None,
    sampling: dict[str, Any] | None = None,
) -> AgentUser:
    """A :class:`~agentgym.UserModel` from an agent spec, for use outside the evaluator:
    ``agentgym.make("usersim/Retail-v2", user=user_model("smollm2"))``.

    Its agent's calls run on an event loop in a daemon thread; call the env from any thread
    but that one.
    """
    if factory is None:
        factory, _ = resolve_agent(spec, options)
    return AgentUser(factory(), _LoopThread.get(), sampling=sampling)
