"""An agent as an LLM judge's model: :func:`judge_model` turns an agent spec into the
:data:`~agentgym.verifiers.judge.JudgeModel` that :class:`~agentgym.verifiers.Judge` calls.

The judge lives with the verifiers, which stand below the agents and know no agent spec; this
adapter is the one place the two meet, from above. Each call is a one-turn episode: a fresh
agent, reset with the judge's instructions, asked once, closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentgym.agents.base import AgentFactory, AgentReply, EpisodeContext
from agentgym.agents.specs import resolve_agent

if TYPE_CHECKING:  # only a type here: importing the verifiers would load the sandbox
    from agentgym.verifiers.judge import JudgeCall

__all__ = ["AgentJudgeModel", "judge_model"]


@dataclass
class AgentJudgeModel:
    """A judge's model played by an agent: one fresh agent per judgement."""

    factory: AgentFactory
    name: str

    async def __call__(self, call: JudgeCall) -> str:
        """The agent's reply to the judge's prompt: its raw text, else its action."""
        agent = self.factory()
        agent.reset(
            EpisodeContext(
                env_id="judge",
                task_id="judge",
                seed=call.seed,
                instructions=call.instructions,
                info={},
                sampling=dict(call.sampling),
            )
        )
        try:
            reply = await agent.act(call.prompt, {})
        finally:
            agent.close()
        if isinstance(reply, AgentReply):
            return reply.text or str(reply.action)
        return str(reply)


def judge_model(agent: Any, options: dict[str, Any] | None = None) -> AgentJudgeModel:
    """A judge's model from an agent spec or object (``smollm2``, ``hf:PATH``,
    ``openai:MODEL@URL``, ``vllm:PATH``, an Agent, ``f(observation, info)``; see
    :func:`~agentgym.agents.resolve_agent`, which also reads ``options``)::

        Judge(judge_model("openai:my-model@http://127.0.0.1:8000/v1"), rubric="Correct.")
    """
    factory, name = resolve_agent(agent, options)
    return AgentJudgeModel(factory, name)
