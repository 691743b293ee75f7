"""Agents: the protocol, the reference agents, and turning an agent spec into a factory.

An agent spec is what ``agentgym eval --agent`` takes, or any Python object:

===================  ==========================================================================
``"oracle"``         the task's solver (the ceiling)
``"random"``         a random valid action (the floor)
``"human"``          you, typing actions in the terminal (use ``--num-envs 1``)
``"smollm2"``        SmolLM2-135M-Instruct in process (the embedded default; ``hf`` extra)
``"hf:PATH"``        a local transformers model directory in process (``hf`` extra)
``"openai:M@URL"``   model ``M`` on an OpenAI-compatible endpoint (``URL`` ends in ``/v1``)
``"vllm:PATH"``      a local model in an in-process vLLM engine (GPU machines, ``vllm``)
``"pkg.mod:name"``   an :class:`Agent` subclass, a zero-argument factory, or ``f(obs, info)``
an Agent subclass    one instance per episode
an Agent instance    copied per episode (``copy.deepcopy``), so episodes share no state
a callable           ``f(observation, info) -> action`` (sync or async), or a factory
===================  ==========================================================================

An agent spec can also play the other roles a model plays in an episode: the simulated user
(:func:`user_model`) and an LLM judge's model (:func:`judge_model`, for
:class:`agentgym.verifiers.Judge`, which as a verifier stands below the agents).
"""

from __future__ import annotations

from agentgym.agents.base import Agent, AgentFactory, AgentReply, EpisodeContext, FunctionAgent
from agentgym.agents.builtin import OracleAgent, RandomAgent
from agentgym.agents.chat import ChatAgent, SharedBackendFactory, TokenAgent
from agentgym.agents.human import HumanAgent
from agentgym.agents.judging import AgentJudgeModel, judge_model
from agentgym.agents.models import TRAINED_PROMPT_FILE
from agentgym.agents.openai_chat import OpenAIAgent
from agentgym.agents.prompting import Conversation, PromptConfig, extract_action
from agentgym.agents.specs import BUILTIN_AGENTS, resolve_agent, resolve_user
from agentgym.agents.users import AgentUser, RecordedUser, user_model

__all__ = [
    "BUILTIN_AGENTS",
    "TRAINED_PROMPT_FILE",
    "Agent",
    "AgentFactory",
    "AgentJudgeModel",
    "AgentReply",
    "AgentUser",
    "ChatAgent",
    "Conversation",
    "EpisodeContext",
    "FunctionAgent",
    "HumanAgent",
    "OpenAIAgent",
    "OracleAgent",
    "PromptConfig",
    "RandomAgent",
    "RecordedUser",
    "SharedBackendFactory",
    "TokenAgent",
    "extract_action",
    "judge_model",
    "resolve_agent",
    "resolve_user",
    "user_model",
]
