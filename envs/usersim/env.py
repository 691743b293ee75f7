"""``usersim/{Retail,Airline,Telecom}-v2``: help a simulated customer, by policy, with tools.

The agent is a customer-service agent. Its instructions hold the domain's **policy** and its
**tools**; its first observation is the customer's first message. Each action is either

* a **message to the user**, as plain text (or the tool call ``respond(message=...)``): the
  observation is the user's answer, ``User: ...``; or
* **one tool call**, as JSON ``{"name": ..., "arguments": {...}}``, as a Python-style call
  ``get_order_details(order_id="#W1234567")``, or natively (the action space is a
  :class:`~agentgym.spaces.ToolCall` space): the observation is ``Tool NAME returned: ...``
  with the JSON result, or ``Tool NAME failed: ...`` with the database's refusal.

A malformed call (unknown tool, missing or mistyped argument, bad JSON) is an invalid action,
and so is a Python-style call of an unknown tool whatever its arguments
(``find_user_id_by_emial(email=...)``: a snake_case name right before its ``(``, or keyword
arguments; prose such as "Sure (one moment)" stays a message). The observation says what was
wrong (an unknown tool: which tools there are), ``info["invalid_actions"]`` and
``info["tool_errors"]`` count it, and the conversation goes on. The episode ends when the
user writes ``###STOP###`` or the agent transfers the user to a human; it is scored then
(tau-bench's reward, see :mod:`agentgym.envs.usersim.dialogue`): the database must equal the
gold one, the required outputs must have been said, and no policy rule broken.

**The user.** ``user="scripted"`` (the default) is the deterministic scripted user
(:mod:`agentgym.envs.usersim.scripted`): same seed and agent, same episode, byte for byte.
Any :class:`~agentgym.UserModel` plays the user instead (``make(id, user=model)``); the
evaluator builds one from an agent spec (``agentgym eval --user smollm2``), and records its
tokens in the ledger apart from the agent's.

**Tasks.** ``split/difficulty/index`` ids over 20+ templates per domain (``easy``, ``medium``,
``hard``): 2,000 train, 100 dev and 40 test tasks per difficulty (120 test tasks per domain).
A task's template is its index modulo the number of templates of its difficulty, and its
entities (user, order, flight...) are drawn from the domain's database with the task's seed.
The **oracle** plays the template's script: it asks for what it needs, authenticates, looks
things up, asks for confirmation before each write, and tells the user the outputs.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, UserModel, Verdict
from agentgym.envs.usersim.dialogue import Dialogue
from agentgym.envs.usersim.domain import DB, Domain, TaskDraft, ToolError, db_hash, gold_db
from agentgym.envs.usersim.users import ModelUserEnv, model_user
from agentgym.errors import TaskError, UsageError
from agentgym.spaces import tool
from agentgym.task_env import InvalidAction, TaskEnv, looks_like_tool_call

__all__ = ["DOMAINS", "ConversationTask", "ConversationTasks", "UserSimEnv", "load_domain"]

DOMAINS: Mapping[str, str] = {
    "retail": "agentgym.envs.usersim.domains.retail:RetailDomain",
    "airline": "agentgym.envs.usersim.domains.airline:AirlineDomain",
    "telecom": "agentgym.envs.usersim.domains.telecom:TelecomDomain",
}
"""The domains by name: ``module:Class`` of each :class:`~agentgym.envs.usersim.domain.Domain`."""
SPLIT_SIZES = {"train": 2000, "dev": 100, "test": 40}
"""Tasks per difficulty in each split."""
DIFFICULTIES = ("easy", "medium", "hard")
MAX_DRAWS = 50
"""Draws a template may take to find entities that fit before the task set gives up."""
RESPOND = tool(
    "respond",
    "Send a message to the user (the same as replying with plain text).",
    {"message": {"type": "string", "description": "what to tell the user"}},
)
"""The tool form of a message to the user, for agents that only call tools."""

_DOMAINS: dict[str, Domain] = {}


def load_domain(name: str) -> Domain:
    """The domain called ``name`` (one instance per process): one of :data:`DOMAINS`, or any
    importable domain named by its ``module:Class`` (a domain outside this package)."""
    if name not in _DOMAINS:
        path = DOMAINS.get(name, name if ":" in name else None)
        if path is None:
            raise UsageError(
                f"unknown usersim domain {name!r}; domains: {', '.join(DOMAINS)}, or a domain "
                "of your own as 'module:Class'"
            )
        module, _, attribute = path.partition(":")
        domain = getattr(importlib.import_module(module), attribute)()
        if not isinstance(domain, Domain):
            raise UsageError(f"usersim domain {name!r} is a {type(domain).__name__}, not a Domain")
        _DOMAINS[name] = domain
    return _DOMAINS[name]


class ConversationTask(Task[Dialogue]):
    """One task: the template's draft (the user's scenario, the oracle's script) and the gold
    database it implies."""

    def __init__(
        self,
        id: str,
        split: str,
        difficulty: str,
        seed: int,
        domain: Domain,
        template: str,
        draft: TaskDraft,
    ) -> None:
        super().__init__(id, split, difficulty, seed)
        self.domain, self.template, self.draft = domain, template, draft
        self._gold: tuple[DB, str] | None = None

    @property
    def gold(self) -> tuple[DB, str]:
        """The gold database and its hash (replayed once per task object)."""
        if self._gold is None:
            db = gold_db(self.domain, self.draft)
            self._gold = (db, db_hash(db))
        return self._gold

    def setup(self, rng: np.random.Generator) -> tuple[Dialogue, str]:
        return self.begin(rng, None)

    def begin(self, rng: np.random.Generator, user: UserModel | None) -> tuple[Dialogue, str]:
        """A fresh dialogue with ``user`` (``None``: the scripted user) and its first line."""
        dialogue = Dialogue(self.domain, self.domain.db(), self.draft.scenario, user)
        opening = dialogue.open(seed=int(rng.integers(2**63)))
        return dialogue, f"User: {opening}"

    def validate(self, world: Dialogue) -> Verdict:
        if not world.ended:
            return world.verdict({}, "", ())
        gold, digest = self.gold
        return world.verdict(gold, digest, self.draft.outputs, self.draft.calls)

    def solve(self, world: Dialogue) -> Any:
        moves = self.draft.moves
        return moves[world.actions].action() if world.actions < len(moves) else None


class ConversationTasks(GeneratedTaskSet):
    """A domain's tasks: ``split/difficulty/index``, drawn from the domain's templates."""

    def __init__(self, domain: Domain) -> None:
        templates = domain.templates()
        unknown = sorted({t.difficulty for t in templates} - set(DIFFICULTIES))
        if unknown or not templates:
            raise TaskError(
                f"usersim domain {domain.name!r}: every template needs a difficulty of "
                f"{list(DIFFICULTIES)} (got {unknown or 'no templates'})"
            )
        # A domain may leave a difficulty out (a small one); ours have all three.
        levels = tuple(d for d in DIFFICULTIES if any(t.difficulty == d for t in templates))
        self.by_difficulty = {d: [t for t in templates if t.difficulty == d] for d in levels}
        # Drafts are drawn once per task id (a task's gold database is replayed once too).
        draw = functools.lru_cache(maxsize=512)(self._draw)
        super().__init__(f"usersim/{domain.name}", draw, levels, SPLIT_SIZES)
        self.domain = domain

    def _draw(self, task_id: str, split: str, difficulty: str, seed: int) -> ConversationTask:
        templates = self.by_difficulty[difficulty]
        template = templates[int(task_id.rsplit("/", 1)[1]) % len(templates)]
        rng = np.random.default_rng(seed)
        db = self.domain.db()
        for _ in range(MAX_DRAWS):
            draft = template.draw(db, rng)
            if draft is not None:
                break
        else:
            raise TaskError(
                f"template {template.name!r} of usersim/{self.domain.name} found nothing that "
                f"fits in {MAX_DRAWS} draws for task {task_id!r}"
            )
        return ConversationTask(task_id, split, difficulty, seed, self.domain, template.name, draft)


_FENCED = re.compile(r"^```[a-z]*[ \t]*\n(.*?)\n?```$", re.DOTALL)
_PYTHON_CALL = re.compile(r"^([A-Za-z_]\w*)(\s*)\(.*\)$", re.DOTALL)


def python_call_name(text: str, tools: Collection[str]) -> str | None:
    """The name a reply calls when it is written as a Python-style call, ``name(...)`` from
    its first character to its last (maybe in a ```` ``` ```` fence); ``None`` for prose.

    Prose can look like a call — "Sure (one moment)", "Thanks(really)" — so a name that is not
    one of ``tools`` counts only when the reply reads as code: the name is right before its
    ``(`` and is snake_case (holds an underscore, as tool names do), or the reply parses as
    one Python call with keyword arguments (``lookup(order="#W1")``). Such a call of an
    unknown tool is then an invalid action, not a message to the user (usersim v2)."""
    body = text.strip()
    fenced = _FENCED.match(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    match = _PYTHON_CALL.match(body)
    if match is None:
        return None
    name, space = match.group(1), match.group(2)
    if name in tools:
        return name
    if space:
        return None
    return name if "_" in name.strip("_") or _has_keywords(body) else None


def _has_keywords(body: str) -> bool:
    """Whether ``body`` parses as one Python call with keyword arguments."""
    try:
        node = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # NUL, nesting, size
        return False
    return isinstance(node, ast.Call) and bool(node.keywords)


class UserSimEnv(ModelUserEnv, TaskEnv[Dialogue]):
    """A customer-service conversation; see the module docstring.

    Args:
        domain: ``retail``, ``airline`` or ``telecom``, or a domain of your own as
            ``"module:Class"`` (``docs/envs/usersim.md``, "Adding a domain").
        user: ``"scripted"`` (deterministic), or a :class:`~agentgym.UserModel` that plays the
            user (an LLM through the evaluator's ``--user``).
        split, difficulty, max_invalid_actions, render_mode: as for :class:`TaskEnv`.
    """

    # Free text is an action here (a message to the user): the checker's wordless actions
    # are still invalid, while text such as "((((]]]]" is said, and answered.
    metadata = {**TaskEnv.metadata, "action_style": "raw", "free_text_actions": True}
    max_action_length = 8_192
    tools: Sequence[Mapping[str, Any]]  # the domain's agent tools and respond: never None

    def __init__(
        self,
        domain: str = "retail",
        *,
        user: str | UserModel = "scripted",
        split: str = "train",
        difficulty: str | None = None,
        max_invalid_actions: int | Literal["default"] | None = "default",
        render_mode: str | None = None,
    ) -> None:
        self.user = model_user(user)
        self.domain = load_domain(domain)
        # The doc page of this id (``agentgym info``): the domain's, then the family's.
        page = inspect.getdoc(importlib.import_module(type(self.domain).__module__))
        self.__doc__ = f"{page}\n\n{__doc__}"
        self.tasks = _task_set(self.domain)
        self.tools = [*(t.schema() for t in self.domain.agent_tools()), RESPOND]
        super().__init__(
            split=split,
            difficulty=difficulty,
            max_invalid_actions=max_invalid_actions,
            render_mode=render_mode,
        )

    # ----------------------------------------------------------------- TaskEnv hooks

    def start(self, task: Task[Dialogue]) -> tuple[Dialogue, str]:
        assert isinstance(task, ConversationTask)
        return task.begin(self.np_random, self.user)

    def act(self, world: Dialogue, action: str) -> str:
        text = action.strip()
        if not text:
            raise InvalidAction(
                "the reply is empty: write a message to the user, or call one tool as "
                '{"name": ..., "arguments": {...}}'
            )
        called = python_call_name(text, self._tool_names)
        if called is None and not looks_like_tool_call(text):
            if not any(character.isalnum() for character in text):
                raise InvalidAction(
                    f"{text[:40]!r} has no words: write a message to the user, or call a tool"
                )
            return f"User: {world.say(text)}"
        try:
            if called is not None and called not in self._tool_names:
                # Named before its arguments are read: whatever they hold, the tool is unknown.
                tools = ", ".join(t["name"] for t in self.tools)
                raise InvalidAction(f"unknown tool {called!r}; available tools: {tools}")
            name, arguments = self.parse_tool_call(text)
        except InvalidAction:
            world.tool_errors += 1
            raise
        if name == "respond":
            return f"User: {world.say(arguments['message'])}"
        try:
            return f"Tool {name} returned: {world.call(name, arguments)}"
        except ToolError as error:
            return f"Tool {name} failed: {error}"

    def observe(self, world: Dialogue) -> str:
        return ""  # the feedback (the user's answer, a tool's result) is the whole observation

    def state_key(self, world: Dialogue) -> str:
        return world.state_key()

    def is_over(self, world: Dialogue) -> bool:
        return world.ended

    def instructions(self, goal: str) -> str:
        """The system prompt: the role, the policy, the tools and how to write actions (the
        goal — the user's first message — is the first observation instead)."""
        tools = "\n".join(_signature(tool) for tool in self.tools)
        return (
            f"You are {self.domain.title}. Help the user who contacts you, following the "
            f"policy below.\n\n{self.domain.policy.strip()}\n\n"
            "## How to act\n\n"
            "Each of your replies is ONE of:\n"
            "- a message to the user, written as plain text;\n"
            '- one tool call, written as a JSON object {"name": "TOOL", "arguments": {...}} '
            "and nothing else (or as a native function call).\n"
            "The user's answers and the tools' results come back to you. The conversation "
            "ends when the user ends it.\n\n"
            f"## Tools\n\n{tools}"
        )

    def _info(self, verdict: Verdict, invalid: bool) -> dict[str, Any]:
        info = super()._info(verdict, invalid)
        world = self._world
        assert world is not None
        info["tool_errors"] = world.tool_errors
        info["policy_violations"] = len(world.violations)
        info["template"] = getattr(self._task, "template", "")
        return info

    @property
    def _tool_names(self) -> frozenset[str]:
        return frozenset(t["name"] for t in self.tools)


def _signature(tool: Mapping[str, Any]) -> str:
    parameters = tool["parameters"]
    required = set(parameters.get("required", ()))
    arguments = ", ".join(
        f"{name}: {spec.get('type', 'any')}{'' if name in required else ' (optional)'}"
        for name, spec in parameters.get("properties", {}).items()
    )
    return f"- {tool['name']}({arguments}): {tool['description']}"


_TASK_SETS: dict[str, ConversationTasks] = {}


def _task_set(domain: Domain) -> ConversationTasks:
    """The domain's task set, one per process (its drafts are cached)."""
    if domain.name not in _TASK_SETS:
        _TASK_SETS[domain.name] = ConversationTasks(domain)
    return _TASK_SETS[domain.name]
