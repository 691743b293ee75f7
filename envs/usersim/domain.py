"""What a simulated-user domain is made of: a database, tools, a policy, and task templates.

A **domain** (retail, airline, telecom) is data and functions, no conversation logic:

* a **database**: JSON-able tables, ``{table: {key: record}}``, generated from a seed by
  :meth:`Domain.build_db` (deterministic, nothing downloaded). Every episode gets a fresh copy;
  the reward compares the final database with the gold one by hash (:func:`db_hash`) and
  shows what differs (:func:`db_diff`);
* a **policy** (markdown) that the agent gets in its instructions;
* **agent tools** (:class:`Tool`, JSON-schema functions) that read and write the database;
  writes need an authenticated user and the user's explicit confirmation (the env enforces
  both, the same way for every domain);
* for dual control (tau2-style), **user tools** that only the user can call (their phone's
  settings), and named **checks** on the user's own state (``"mobile_data_works"``);
* **task templates** (:class:`TaskTemplate`): each draws entities from the database and
  returns a :class:`TaskDraft` — the user's :class:`Scenario`, the oracle's script
  (:class:`Move` list: what it says, which tools it calls) and the outputs the agent must
  tell the user.

The gold database is the fresh database after replaying the script's tool calls (and, for
dual control, the user tool calls each message asks for) in order, the way tau-bench replays
its gold actions. The conversation itself is the env's (:mod:`agentgym.envs.usersim.env`),
and the scripted user's (:mod:`agentgym.envs.usersim.scripted`).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from agentgym.spaces import tool

__all__ = [
    "DB",
    "Domain",
    "Fact",
    "Move",
    "Request",
    "Scenario",
    "TaskDraft",
    "TaskTemplate",
    "Tool",
    "ToolError",
    "as_compared",
    "db_diff",
    "db_hash",
    "gold_db",
    "normalize",
    "run_tool",
    "run_user_tool",
]

DB = dict[str, dict[str, dict[str, Any]]]
"""A domain's database: ``{table: {key: record}}``, JSON values only."""


class ToolError(Exception):
    """A tool call the database refuses (an unknown order, a flight that is full).

    The message goes back to the agent as the tool's answer, as a real API's error would:
    say what was wrong and, where it helps, what would work.
    """


@dataclass(frozen=True)
class Tool:
    """A function the agent (or, for dual control, the user) can call.

    Attributes:
        name: the tool's name, as the caller writes it.
        description: one or two sentences the caller reads.
        parameters: JSON-schema ``properties`` by argument name (``{"order_id": {"type":
            "string", "description": ...}}``); every one is required unless listed in
            ``optional``.
        function: ``function(db, **arguments)`` -> a JSON-able result; raises
            :class:`ToolError` for a call the database refuses. It may change ``db`` only
            when ``writes`` is true. A *user* tool (dual control) is called as
            ``function(db, context, **arguments)``, with the scenario's ``context`` (which
            phone is the user's own). Functions are module-level, so that an episode's
            snapshot can be pickled.
        writes: whether the tool changes the database (then the agent needs an
            authenticated user and the user's explicit confirmation first).
        optional: the arguments that may be left out.
        triggers: user tools only: when the agent's message contains every phrase of one of
            these tuples (lowercase), the scripted user calls the tool (``(("airplane mode",
            "off"),)``). The arguments come from ``trigger_arguments``.
        trigger_arguments: the arguments the scripted user passes when a trigger fires.
        proposed_as: agent writes only: how a proposal names the action; the proposal (the
            agent's message the user said yes to) must contain every phrase of one of these
            tuples (lowercase: ``(("cancel",),)``).
        named_arguments: agent writes only: the arguments whose values the proposal must
            name too (each as :meth:`Domain.names` spells it: an order id, a phone number).
    """

    name: str
    description: str
    parameters: Mapping[str, Mapping[str, Any]]
    function: Callable[..., Any]
    writes: bool = False
    optional: tuple[str, ...] = ()
    triggers: tuple[tuple[str, ...], ...] = ()
    trigger_arguments: Mapping[str, Any] = field(default_factory=dict)
    proposed_as: tuple[tuple[str, ...], ...] = ()
    named_arguments: tuple[str, ...] = ()

    def schema(self) -> dict[str, Any]:
        """The tool as a JSON-schema function declaration (OpenAI's format), declared the one
        way the project declares a tool (:func:`agentgym.tool`)."""
        return tool(self.name, self.description, self.parameters, optional=self.optional)

    def triggered_by(self, message: str) -> bool:
        """Whether the agent's (normalized) message asks the user to use this tool."""
        return any(all(phrase in message for phrase in trigger) for trigger in self.triggers)

    def names_action(self, proposal: str) -> bool:
        """Whether the (normalized) proposal names this write's action."""
        return any(all(phrase in proposal for phrase in words) for words in self.proposed_as)


@dataclass(frozen=True)
class Fact:
    """Something the user knows and says only when asked.

    Attributes:
        label: what it is, as the user says it: ``"email address"`` ("My email address is
            ...").
        value: the fact itself.
        asked_by: lowercase phrases; an agent message containing any of them asks for it.
        known: ``False`` for something the agent may ask for that the user does not know
            (their user id): they say so, and the agent must find another way.
    """

    label: str
    value: str
    asked_by: tuple[str, ...]
    known: bool = True

    def statement(self) -> str:
        """How the scripted user answers when asked."""
        if not self.known:
            return f"Sorry, I don't know my {self.label}."
        return f"My {self.label} is {self.value}."


@dataclass(frozen=True)
class Request:
    """One thing the user wants, in the order they bring it up.

    Attributes:
        says: how the user asks for it (their words to the agent).
        writes: how many writes the request needs, each confirmed by the user first.
        confirm: lowercase phrases that the agent's proposal of a write must all contain for
            the user to say yes (an order id, the new item's colour); a proposal without them
            gets a no and the request again.
        expects: what the agent must tell the user (lowercase phrases: an amount, a status)
            before the user moves on; these are the task's required outputs.
        change: a change of mind: the first proposal that matches ``confirm`` gets this reply
            instead of a yes (``"Actually, make it the blue one."``), and from then on
            proposals must match ``then_confirm``.
        then_confirm: the phrases of the changed request's proposals.
        done_when: dual control: the name of a domain check on the user's own state that
            must hold before the user is satisfied (their phone shows mobile data).
    """

    says: str
    writes: int = 0
    confirm: tuple[str, ...] = ()
    expects: tuple[str, ...] = ()
    change: str | None = None
    then_confirm: tuple[str, ...] = ()
    done_when: str | None = None


@dataclass(frozen=True)
class Scenario:
    """The simulated user: who they are, what they know, what they want.

    Attributes:
        persona: who the user is and how they talk, in the second person ("You are Ava
            Chen, ..."): the LLM user's prompt starts with it.
        opening: the user's first message.
        facts: what the user knows (and what they are asked but do not know).
        requests: what they want, in order.
        refuses: what they will not accept, for the LLM user's prompt ("You do not want store
            credit."); the scripted user refuses by ``Request.confirm``.
        context: dual control: what makes the user's own things theirs
            (``{"phone_number": "415-555-0123"}``), handed to the user's tools, the domain's
            checks and its :meth:`Domain.user_view`. Nothing the agent sees.
    """

    persona: str
    opening: str
    facts: tuple[Fact, ...]
    requests: tuple[Request, ...]
    refuses: tuple[str, ...] = ()
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Move:
    """One step of the oracle's script: a message to the user, or a tool call.

    Attributes:
        say: a message to the user (``None`` for a tool call).
        call: the tool's name (``None`` for a message).
        arguments: the tool call's arguments.
        user_calls: dual control: the user tool calls this message asks the user to make,
            ``((name, arguments), ...)``, in order (the gold replay applies them).
    """

    say: str | None = None
    call: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    user_calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    def __post_init__(self) -> None:
        if (self.say is None) == (self.call is None):
            raise ValueError(f"a Move says something or calls a tool, not both or neither: {self}")

    def action(self) -> str | dict[str, Any]:
        """The move as the agent's action: the message's text, or a tool call."""
        if self.say is not None:
            return self.say
        return {"name": self.call, "arguments": dict(self.arguments)}


@dataclass(frozen=True)
class TaskDraft:
    """What a template draws: the user, the oracle's script and the required outputs."""

    scenario: Scenario
    moves: tuple[Move, ...]

    @property
    def calls(self) -> frozenset[str]:
        """The agent tools the script calls."""
        return frozenset(str(move.call) for move in self.moves if move.call is not None)

    @property
    def outputs(self) -> tuple[str, ...]:
        """What the agent must tell the user: every request's ``expects``."""
        return tuple(phrase for request in self.scenario.requests for phrase in request.expects)


@dataclass(frozen=True)
class TaskTemplate:
    """A kind of task, drawn over the database.

    ``draw(db, rng)`` returns a :class:`TaskDraft`, or ``None`` when the entities it drew do
    not fit (an order that is not pending): the task set then draws again from the same
    generator, so a task id always gives the same draft.
    """

    name: str
    difficulty: str
    draw: Callable[[DB, np.random.Generator], TaskDraft | None]


class Domain(ABC):
    """A customer-service domain; see the module docstring."""

    name: ClassVar[str]
    """Short lowercase name: ``"retail"``."""
    title: ClassVar[str]
    """What the agent is: ``"a customer-service agent of an online shop"``."""
    policy: ClassVar[str]
    """The policy document (markdown) the agent must follow; it is in the instructions."""
    auth_tools: ClassVar[frozenset[str]]
    """Agent tools whose success authenticates the user (before it, writes are refused)."""
    end_tools: ClassVar[frozenset[str]] = frozenset()
    """Agent tools that end the conversation (a transfer to a human agent)."""
    db_seed: ClassVar[int] = 0
    """The seed of the database every task of the domain is drawn over."""
    vocabularies: ClassVar[tuple[tuple[str, ...], ...]] = ()
    """The values of the fields whose value can be a required output (the order statuses):
    such an output counts only when the agent states it alone (see
    :mod:`agentgym.envs.usersim.dialogue`), so that listing every value is no answer."""

    @abstractmethod
    def build_db(self, seed: int) -> DB:
        """The database for ``seed``, generated deterministically."""

    @abstractmethod
    def agent_tools(self) -> list[Tool]:
        """The tools the agent can call."""

    def user_tools(self) -> list[Tool]:
        """The tools only the user can call (dual control); none by default."""
        return []

    def checks(self) -> Mapping[str, Callable[[DB, Mapping[str, Any]], bool]]:
        """Named checks on the user's own state, for :attr:`Request.done_when`:
        ``check(db, context)`` with the scenario's ``context``."""
        return {}

    def user_view(self, db: DB, context: Mapping[str, Any]) -> str:
        """What the user sees of their own state (dual control; empty by default): the LLM
        user's prompt shows it."""
        return ""

    @abstractmethod
    def owner(self, db: DB, name: str, arguments: Mapping[str, Any], result: Any) -> str | None:
        """The customer whose records a successful agent call read or changed (for an
        authentication tool: the customer it found), or ``None`` for data that is no
        customer's (a product, a flight, a plan). The policy's "this customer only" rests
        on it."""

    def names(self, argument: str, value: Any, db: DB) -> tuple[str, ...]:
        """How a proposal may name an argument's value (any of these, lowercase): the value
        itself, with underscores as spaces too (``basic_economy``, ``basic economy``);
        numbers without trailing zeros (``50.0`` -> ``50``). A domain adds the names people
        use (a line by its phone number)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            text = normalize(str(value))
            return (text, text.replace("_", " "))
        return (f"{value:g}",)

    @abstractmethod
    def templates(self) -> list[TaskTemplate]:
        """The task templates (at least 20), each with its difficulty."""

    def db(self) -> DB:
        """A fresh copy of the domain's database (built once per process and cached)."""
        cached = _DB_CACHE.get(type(self))
        if cached is None:
            cached = _DB_CACHE[type(self)] = json.dumps(self.build_db(self.db_seed))
        fresh: DB = json.loads(cached)
        return fresh


_DB_CACHE: dict[type[Domain], str] = {}


def db_hash(db: DB) -> str:
    """The database's sha256 over its canonical JSON (sorted keys): equal hash, equal data."""
    text = json.dumps(db, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def db_diff(got: DB, want: DB, limit: int = 20) -> list[str]:
    """What differs between two databases, one line per differing value (at most ``limit``
    lines): ``orders/#W1/status: "pending" (want "cancelled")``. Records, and the dicts and
    equal-length lists inside them, are compared key by key, so a line names the innermost
    value that differs (``orders/#W1/items/2/price``); a long value is shown around its first
    difference (:func:`_differing`)."""
    lines: list[str] = []
    for table in sorted(set(got) | set(want)):
        rows, gold = got.get(table, {}), want.get(table, {})
        for key in sorted(set(rows) | set(gold)):
            if key not in rows:
                lines.append(f"{table}/{key}: missing (want a record)")
            elif key not in gold:
                lines.append(f"{table}/{key}: present (want none)")
            else:
                lines += _differences(f"{table}/{key}", rows[key], gold[key])
            if len(lines) >= limit:
                return [*lines[:limit], "..."]
    return lines


def _differences(path: str, got: Any, want: Any) -> list[str]:
    """The lines of :func:`db_diff` for one value: the keys (or items) that differ, inward."""
    if got == want:
        return []
    if isinstance(got, dict) and isinstance(want, dict):
        lines = []
        for key in sorted(set(got) | set(want), key=str):
            if key not in got:
                lines.append(f"{path}/{key}: absent (want {_window(_json(want[key]), 0)})")
            elif key not in want:
                lines.append(f"{path}/{key}: {_window(_json(got[key]), 0)} (want absent)")
            else:
                lines += _differences(f"{path}/{key}", got[key], want[key])
        return lines
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [
            line
            for index, (a, b) in enumerate(zip(got, want, strict=True))
            for line in _differences(f"{path}/{index}", a, b)
        ]
    shown, wanted = _differing(got, want)
    return [f"{path}: {shown} (want {wanted})"]


DIFF_WIDTH = 120
"""The longest value a diff line shows whole; a longer one is cut around the difference."""
DIFF_CONTEXT = 40
"""Characters a cut value keeps before its first difference."""


def _differing(got: Any, want: Any) -> tuple[str, str]:
    """``got`` and ``want`` as JSON, each cut to a window of :data:`DIFF_WIDTH` characters
    around where they first differ (``...`` where text is left out), so that two long values
    that share a long prefix do not print as the same text."""
    a, b = _json(got), _json(want)
    pairs = enumerate(zip(a, b, strict=False))  # the shorter one may end first
    first = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    return _window(a, first), _window(b, first)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _window(text: str, at: int) -> str:
    """``text``, or :data:`DIFF_WIDTH` characters of it from :data:`DIFF_CONTEXT` before
    ``at`` (kept inside the text), marked ``...`` on each side that is cut."""
    if len(text) <= DIFF_WIDTH:
        return text
    begin = max(0, min(at - DIFF_CONTEXT, len(text) - DIFF_WIDTH))
    end = begin + DIFF_WIDTH
    return ("..." if begin else "") + text[begin:end] + ("..." if end < len(text) else "")


def normalize(text: str) -> str:
    """Text as the scripted user and the policy match phrases in it: lowercase, commas
    dropped (``$1,024.50`` matches ``1024.50``), whitespace collapsed."""
    return " ".join(as_compared(text).split())


def as_compared(text: str) -> str:
    """An agent message as required outputs are matched in it, exactly as tau-bench
    compares them: lowercase, commas dropped, whitespace kept."""
    return text.lower().replace(",", "")


def run_tool(tools: Mapping[str, Tool], db: DB, name: str, arguments: Mapping[str, Any]) -> Any:
    """Call tool ``name`` on ``db``; raises :class:`ToolError` for an unknown tool too."""
    tool = tools.get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name!r}; available tools: {', '.join(tools)}")
    return tool.function(db, **arguments)


def run_user_tool(
    tools: Mapping[str, Tool],
    db: DB,
    context: Mapping[str, Any],
    name: str,
    arguments: Mapping[str, Any],
) -> Any:
    """Call the user's tool ``name`` on ``db``, as the user of ``context``."""
    tool = tools.get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name!r}; your tools: {', '.join(tools)}")
    return tool.function(db, context, **arguments)


def gold_db(domain: Domain, draft: TaskDraft) -> DB:
    """The gold database: a fresh one after replaying the script's tool calls and the user
    tool calls its messages ask for, in order (tau-bench's gold replay). A call the database
    refuses is a bug in the template, raised as :class:`ValueError`."""
    db = domain.db()
    agent = {tool.name: tool for tool in domain.agent_tools()}
    user = {tool.name: tool for tool in domain.user_tools()}
    context = draft.scenario.context
    for move in draft.moves:
        calls = [(False, move.call, move.arguments)] if move.call else []
        calls += [(True, name, arguments) for name, arguments in move.user_calls]
        for users, name, arguments in calls:
            try:
                if users:
                    run_user_tool(user, db, context, str(name), arguments)
                else:
                    run_tool(agent, db, str(name), arguments)
            except ToolError as error:
                raise ValueError(
                    f"the gold call {name}({dict(arguments)}) fails: {error}"
                ) from None
    return db
