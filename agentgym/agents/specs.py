"""Turning an agent spec (``agentgym eval --agent``'s argument, or any Python object) into a
factory of one agent per episode; the spec forms are tabled in :mod:`agentgym.agents`.

Its own module, below the agents that use a spec themselves (a user or a judge played by an
agent), so that none of them has to import the package's face.
"""

from __future__ import annotations

import copy
import inspect
import os
from collections.abc import Callable
from functools import partial
from typing import Any

from agentgym.agents.base import Agent, AgentFactory, FunctionAgent
from agentgym.agents.builtin import OracleAgent, RandomAgent
from agentgym.agents.human import HumanAgent
from agentgym.agents.prompting import PromptConfig
from agentgym.backends.sampling import SAMPLING_KEYS
from agentgym.errors import UsageError

__all__ = ["BUILTIN_AGENTS", "PROMPT_KEYS", "resolve_agent", "resolve_agent_object"]

BUILTIN_AGENTS: dict[str, Callable[[], Agent]] = {
    "oracle": OracleAgent,
    "random": RandomAgent,
    "human": HumanAgent,
}


def resolve_agent(spec: Any, options: dict[str, Any] | None = None) -> tuple[AgentFactory, str]:
    """``(factory, name)`` for an agent spec (see the module docstring).

    ``options`` configure the LLM agents (``smollm2``, ``hf:``, ``openai:``, ``vllm:``): the
    prompt keys (``format_hint``, ``history_window``, ``action_style``,
    ``answer_extraction``) and the backend's own
    keyword arguments (e.g. ``max_concurrency`` of an endpoint, ``device`` of a model).
    """
    options = dict(options or {})
    if isinstance(spec, str):
        llm = _llm_factory(spec)
        if llm is not None:
            sampling = sorted(set(options) & set(SAMPLING_KEYS))
            if sampling:
                raise UsageError(
                    f"agent {spec!r}: {', '.join(sampling)} is a sampling setting, which the "
                    f"benchmark pins (its 'sampling:'; with --env: --sampling "
                    f"{sampling[0]}=VALUE), not an agent option"
                )
            prompt_keys = {k: options.pop(k) for k in PROMPT_KEYS if k in options}
            accepted = _backend_options(llm)
            unknown = sorted(set(options) - set(accepted)) if accepted is not None else []
            if unknown:
                raise UsageError(
                    f"agent {spec!r} has no option {', '.join(map(repr, unknown))}; its options: "
                    f"{', '.join([*PROMPT_KEYS, *(accepted or [])])}"
                )
            prompt = PromptConfig(**prompt_keys) if prompt_keys else None
            try:
                return llm(prompt, **options), spec
            except UsageError:  # a TypeError too, but already the caller's clear message
                raise
            except TypeError as error:  # an option the backend does not take
                raise UsageError(
                    f"agent {spec!r}: bad option(s) {sorted(options)}: {error}"
                ) from None
        if options:
            raise UsageError(
                f"agent {spec!r} takes no options (got {sorted(options)}); "
                f"options configure LLM agents (smollm2, hf:, openai:, vllm:)"
            )
        if spec in BUILTIN_AGENTS:
            return BUILTIN_AGENTS[spec], spec
        if ":" in spec:
            return resolve_agent_object(_import(spec), spec)
        raise UsageError(
            f"unknown agent spec {spec!r}; use one of {sorted(BUILTIN_AGENTS)}, 'smollm2', "
            f"'hf:PATH', 'openai:MODEL@URL', 'vllm:PATH', or "
            f"'package.module:AgentClass' (an Agent subclass, a factory, or f(obs, info))"
        )
    if options:
        raise UsageError(f"agent options {sorted(options)} apply to LLM agent specs only")
    return resolve_agent_object(spec, None)


PROMPT_KEYS = (
    "format_hint",
    "history_window",
    "action_style",
    "answer_extraction",
    "default_sampling",
)


def _backend_options(make: Callable[..., AgentFactory]) -> list[str] | None:
    """The keyword options an LLM factory takes besides the prompt (None: any, ``**kwargs``,
    as vllm's engine arguments)."""
    parameters = inspect.signature(make).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]


def _llm_factory(spec: str) -> Callable[..., AgentFactory] | None:
    """``make(prompt, **options)`` for an LLM agent spec; None for other specs. The backends
    are imported here, so torch, transformers and vllm load only when asked for."""
    if spec == "smollm2":
        from agentgym.agents.models import smollm2_factory

        return smollm2_factory
    if spec.startswith("hf:"):
        from agentgym.agents.models import hf_path_factory

        return partial(hf_path_factory, spec[3:])
    if spec.startswith("openai:"):
        from agentgym.agents.openai_chat import openai_factory

        return partial(openai_factory, spec[7:])
    if spec.startswith("vllm:"):
        from agentgym.agents.models import vllm_path_factory

        return partial(vllm_path_factory, spec[5:])
    return None


def resolve_user(
    user: Any,
    user_options: dict[str, Any] | None,
    agent: Any,
    agent_options: dict[str, Any] | None,
    agent_factory: AgentFactory,
    agent_name: str,
) -> tuple[AgentFactory | None, str | None]:
    """The factory and name of the model playing the user (None, None: the env's own
    scripted user). The same LLM spec and options as the agent's share the agent's
    ``agent_factory``, so one model is loaded for both sides."""
    if user is None:
        return None, None
    same = user == agent and dict(user_options or {}) == dict(agent_options or {})
    from agentgym.agents.chat import SharedBackendFactory

    if same and isinstance(agent_factory, SharedBackendFactory):
        return agent_factory, agent_name
    return resolve_agent(user, user_options)


def resolve_agent_object(obj: Any, name: str | None) -> tuple[AgentFactory, str]:
    """The factory for a Python object given as an agent."""
    if inspect.isclass(obj) and issubclass(obj, Agent):
        return obj, str(name or getattr(obj, "name", obj.__name__))
    if isinstance(obj, Agent):
        return (lambda: copy.deepcopy(obj)), name or obj.name
    if callable(obj):
        try:
            arity = len(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            arity = 0
        label = str(name or getattr(obj, "__name__", type(obj).__name__))
        if arity == 0:  # a factory

            def checked() -> Agent:
                agent = obj()
                if not isinstance(agent, Agent):
                    raise UsageError(f"agent factory {label} returned {agent!r}, not an Agent")
                return agent

            return checked, label
        return (lambda: FunctionAgent(obj, label)), label
    raise UsageError(f"cannot use {obj!r} as an agent: give an Agent, a callable or a spec string")


def _import(spec: str) -> Any:
    """The object a ``module:name`` spec names. The module is found as ``python -m`` finds it
    (:func:`agentgym.registry.import_here`: on ``sys.path``, else in the current directory)."""
    from agentgym.registry import import_here

    module_name, _, attribute = spec.partition(":")
    try:
        module = import_here(module_name)
    except ModuleNotFoundError as error:
        if error.name is None or not f"{module_name}.".startswith(f"{error.name}."):
            # the module is there, one of its own imports is not
            raise UsageError(f"agent spec {spec!r}: importing {module_name}: {error}") from error
        top = module_name.split(".")[0]
        raise UsageError(
            f"agent spec {spec!r}: no module {error.name!r} on sys.path or in the current "
            f"directory ({os.getcwd()}); run from the folder that holds {top}/ or {top}.py, "
            f"or add that folder to PYTHONPATH"
        ) from error
    except ImportError as error:
        raise UsageError(f"agent spec {spec!r}: cannot import {module_name!r} ({error})") from error
    try:
        return getattr(module, attribute)
    except AttributeError as error:
        raise UsageError(f"agent spec {spec!r}: {module_name} has no {attribute!r}") from error
