"""What every LLM agent shares: the episode's chat, its sampling settings, a seed per turn,
and one backend shared by all episodes of a run.

* :class:`ChatAgent` — the per-episode part: ``reset`` starts the :class:`Conversation` from
  the task instructions, parses the sampling settings and fixes the episode's seed.
* :class:`TokenAgent` — a chat agent over a **token backend**
  (:class:`~agentgym.backends.TokenBackend`: the in-process ``hf`` and ``vllm`` engines): it
  renders the prompt with the tokenizer's chat template, so the ledger gets the exact prompt
  and completion token ids and logprobs.
* :class:`SharedBackendFactory` — makes one agent per episode, all holding one backend
  (a model, a server client), loaded on first use so a run that fails earlier does not pay.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from agentgym.agents.base import Agent, AgentReply, EpisodeContext
from agentgym.agents.prompting import (
    Conversation,
    PromptConfig,
    extract_action,
    flexible_answer,
    observation_text,
)
from agentgym.backends.base import TokenBackend
from agentgym.backends.sampling import SamplingParams, turn_seed
from agentgym.ledger import TokenRecord

__all__ = ["ChatAgent", "SharedBackendFactory", "TokenAgent"]


class ChatAgent(Agent):
    """One episode of an LLM agent: its conversation, sampling settings and turn seeds."""

    def __init__(self, prompt: PromptConfig, name: str) -> None:
        self.prompt = prompt
        self.name = name

    def reset(self, context: EpisodeContext) -> None:
        self.context = context
        self.params = SamplingParams.from_dict(
            {**(self.prompt.default_sampling or {}), **context.sampling}
        )
        self.conversation = Conversation.start(
            context.instructions, self.prompt, self.tools_as_text(context)
        )
        self.action_style = self.prompt.style_for(context.action_style)
        flexible = self.prompt.answer_extraction == "flexible"
        self.answer_format = context.answer_format if flexible else None
        self.turn = 0
        self._episode_seed = context.seed if context.seed is not None else random.getrandbits(63)

    def tools_as_text(self, context: EpisodeContext) -> Sequence[Mapping[str, Any]] | None:
        """The env's tools to describe in the system prompt: all of them, for a model that
        reads them nowhere else (an agent that sends them natively returns ``None``)."""
        return context.tools

    def read_action(self, text: str) -> str:
        """The action in the model's reply: its action style's extraction, or, with flexible
        answer extraction, its final answer in the env's answer format (see
        :mod:`agentgym.agents.prompting`)."""
        if self.answer_format is not None:
            answer = flexible_answer(text, self.answer_format)
            if answer is not None:
                return answer
        return extract_action(text, self.action_style)

    def next_seed(self) -> int:
        """The seed of this turn's model call (then the turn counter moves on)."""
        seed = turn_seed(self._episode_seed, self.turn)
        self.turn += 1
        return seed


class TokenAgent(ChatAgent):
    """A chat agent over a :class:`TokenBackend`; every reply carries its exact tokens."""

    def __init__(self, backend: TokenBackend, prompt: PromptConfig, name: str) -> None:
        super().__init__(prompt, name)
        self.backend = backend

    async def act(self, observation: Any, info: dict[str, Any]) -> AgentReply:
        # A text model: a screenshot's text view (observation_text), never its pixels.
        self.conversation.add_observation(observation_text(observation, info))
        prompt_ids = self.backend.encode(self.conversation.prompt_messages())
        result = await self.backend.generate(prompt_ids, self.params, self.next_seed())
        text = self.backend.decode(result.completion_ids)
        self.conversation.add_reply(text)
        return AgentReply(
            action=self.read_action(text),
            text=text,
            tokens=TokenRecord(
                prompt_ids=prompt_ids,
                completion_ids=list(result.completion_ids),
                logprobs=list(result.logprobs),
            ),
            usage={
                "prompt_tokens": len(prompt_ids),
                "completion_tokens": len(result.completion_ids),
            },
        )


B = TypeVar("B")


class SharedBackendFactory(Generic[B]):
    """Makes one agent per episode (``make_agent(backend, prompt, name)``), all sharing one
    backend built by ``load()`` on first use."""

    def __init__(
        self,
        load: Callable[[], B],
        name: str,
        prompt: PromptConfig | None = None,
        make_agent: Callable[[B, PromptConfig, str], Agent] = TokenAgent,  # type: ignore[assignment]
    ) -> None:
        self._load = load
        self._backend: B | None = None
        self._lock = threading.Lock()
        self._make_agent = make_agent
        self.name = self.__name__ = name  # __name__: what the evaluator calls a factory
        self.prompt = prompt or PromptConfig()

    @property
    def backend(self) -> B:
        """The shared backend (loaded now if it was not yet)."""
        with self._lock:
            if self._backend is None:
                self._backend = self._load()
            return self._backend

    def __call__(self) -> Agent:
        return self._make_agent(self.backend, self.prompt, self.name)
