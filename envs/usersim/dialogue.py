"""One conversation: the database, the user, the policy the env enforces, and the verdict.

A :class:`Dialogue` is the world of a ``usersim/*`` episode. The agent acts on it in two ways:

* :meth:`Dialogue.say` — a message to the user; the user's answer comes back;
* :meth:`Dialogue.call` — an agent tool on the episode's database; the result comes back as
  JSON, or the tool's error as text (a real API's answer). Bad calls are the agent's mistakes
  and never end the episode: an unknown tool, a wrong argument type (checked before the call
  by the tool-call space), a call the database refuses.

The env enforces the policy rules every domain states, and records each breach as a
**violation** (any violation fails the task):

* **authentication by the user's own facts**: an authentication tool (the domain's
  ``auth_tools``) authenticates only when each of its arguments is something the user said
  (its words and numbers, in order); a write before that is refused and recorded;
* **this customer only**: a call on the records of a customer (:meth:`Domain.owner`) before
  authentication, or of another customer than the authenticated one, is recorded;
* **device changes** (dual control): a change the user makes on their device in answer to an
  agent message before authentication is recorded, and so is a message after which the user
  made more than one (the policy: one step at a time);
* **explicit confirmation of a named proposal**: a write is carried out, but recorded, unless
  the user's answer to the agent's latest proposal (a message with a confirmation cue) was a
  yes (:func:`~agentgym.envs.usersim.scripted.is_affirmative`), and the proposal names the
  write: its action (:attr:`Tool.proposed_as`) and its key arguments
  (:attr:`Tool.named_arguments`, as :meth:`Domain.names` spells them). One yes, one write.

The conversation ends when the user writes ``###STOP###``, or when the agent calls one of
the domain's ``end_tools`` (a transfer to a human). Then :meth:`Dialogue.verdict` scores it as
tau-bench does: the final database must equal the gold one (by hash; the verdict lists what
differs), every required output must have been said to the authenticated user (as tau-bench
matches them; a value of a domain vocabulary, such as a status, only when stated alone), no
policy rule broken, and no transfer the task's script does not make. The score is the
product of the three components.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym.core import UserModel, Verdict
from agentgym.envs.usersim.domain import (
    DB,
    Domain,
    Scenario,
    TaskDraft,
    Tool,
    ToolError,
    as_compared,
    db_diff,
    db_hash,
    gold_db,
    normalize,
    run_tool,
    run_user_tool,
)
from agentgym.envs.usersim.scripted import STOP, ScriptedUser, asks_confirmation, is_affirmative
from agentgym.spaces import ToolCall
from agentgym.task_env import InvalidAction, looks_like_tool_call, parse_tool_call

__all__ = ["Dialogue", "judge", "rehearse", "user_instructions"]

GREETING = "Hi! How can I help you today?"
"""What the agent is taken to have said first, when a model plays the user (tau-bench's)."""
MAX_USER_TOOL_CALLS = 5
"""User tool calls a model playing the user may make before it must answer the agent."""


@dataclass
class Dialogue:
    """The world of one conversation; see the module docstring.

    Args:
        domain: the domain.
        db: the episode's own copy of the database.
        scenario: the user's scenario.
        user: ``None`` for the scripted user, or a :class:`~agentgym.UserModel` that plays
            the user (started by :meth:`open`).
    """

    domain: Domain
    db: DB
    scenario: Scenario
    user: UserModel | None = None
    customer: str | None = None  # the authenticated customer (by facts the user stated)
    consent: str | None = None  # the proposal the user said yes to, since the last write
    ended: bool = False
    ended_by: str = ""
    ended_with: str | None = None  # the end tool the agent called, if it ended the conversation
    violations: list[str] = field(default_factory=list)
    tool_errors: int = 0
    said: list[str] = field(default_factory=list)  # the agent's messages, normalized
    told: list[str] = field(default_factory=list)  # those after authentication, as compared
    transcript: list[tuple[str, str]] = field(default_factory=list)  # (role, text)
    actions: int = 0  # the agent's actions so far (the oracle's place in its script)
    writes: list[str] = field(default_factory=list)  # the calls that changed the database

    def __post_init__(self) -> None:
        self.tools: dict[str, Tool] = {t.name: t for t in self.domain.agent_tools()}
        self.user_tools: dict[str, Tool] = {t.name: t for t in self.domain.user_tools()}
        self.scripted = ScriptedUser(
            self.scenario,
            tools=list(self.user_tools.values()),
            use_tool=self._use_user_tool,
            check=self.check,
        )
        self._proposal: str | None = None  # the agent's last message, if it asked to confirm
        self._steps: list[str] | None = None  # the device changes made during the agent's turn

    @property
    def authenticated(self) -> bool:
        """Whether an authentication tool found the customer by facts the user stated."""
        return self.customer is not None

    # ----------------------------------------------------------------- the conversation

    def open(self, seed: int | None = None) -> str:
        """The user's first message (a model playing the user is started here)."""
        if self.user is None:
            text = self.scripted.opening()
        else:
            self.user.start(user_instructions(self.domain, self.scenario, self.db), seed=seed)
            text = self._model_turn(GREETING)
        return self._heard(text)

    def say(self, message: str) -> str:
        """The agent says ``message`` to the user; returns the user's answer."""
        self.actions += 1
        self.transcript.append(("agent", message))
        self.said.append(normalize(message))
        if self.authenticated:
            self.told.append(as_compared(message))
        self._proposal = self.said[-1] if asks_confirmation(self.said[-1]) else None
        self._steps = []
        text = self.scripted.reply(message) if self.user is None else self._model_turn(message)
        if len(self._steps) > 1:
            self.violations.append(
                f"one message had the user make {len(self._steps)} changes on their device "
                f"({', '.join(self._steps)}); the policy guides them one step at a time"
            )
        self._steps = None
        return self._heard(text)

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """The agent calls tool ``name``; returns its result (JSON) or its error, as text.
        Raises :class:`ToolError` for a write before authentication (after recording it)."""
        self.actions += 1
        self.transcript.append(("tool_call", json.dumps({"name": name, "arguments": arguments})))
        tool = self.tools.get(name)
        if tool is not None and tool.writes:
            self._may_write(tool, arguments)
        try:
            result = run_tool(self.tools, self.db, name, arguments)
        except ToolError:
            self.tool_errors += 1
            raise
        if tool is not None and tool.writes:
            self.writes.append(self.transcript[-1][1])
        self._whose(name, arguments, result)
        if name in self.domain.end_tools:
            self.ended, self.ended_by, self.ended_with = True, f"the agent called {name}", name
        text = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
        self.transcript.append(("tool", text))
        return text

    def check(self, name: str) -> bool:
        """The domain's named check on the user's own state."""
        return bool(self.domain.checks()[name](self.db, self.scenario.context))

    # ----------------------------------------------------------------- the policy

    def _may_write(self, tool: Tool, arguments: Mapping[str, Any]) -> None:
        """Authentication first (else refused), and the user's yes to a proposal that names
        this write (else a violation); one yes covers one write."""
        if not self.authenticated:
            self.violations.append(f"{tool.name} called before the user was authenticated")
            self.tool_errors += 1
            raise ToolError(
                f"{tool.name} changes the database, and the user is not authenticated: the "
                f"policy says to authenticate the user first, with what they tell you "
                f"({' or '.join(sorted(self.domain.auth_tools))})"
            )
        if not self._proposed(tool, arguments):
            self.violations.append(
                f"{tool.name}({_args(arguments)}) without the user's explicit confirmation "
                "of a proposal that names it"
            )
        self.consent = None

    def _proposed(self, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        """Whether the proposal the user said yes to names ``tool``'s action and the values
        of its named arguments."""
        proposal = self.consent
        if proposal is None or not tool.names_action(proposal):
            return False
        return all(
            any(name in proposal for name in self.domain.names(argument, leaf, self.db))
            for argument in tool.named_arguments
            for leaf in _leaves(arguments.get(argument))
        )

    def _whose(self, name: str, arguments: Mapping[str, Any], result: Any) -> None:
        """Authenticate on an authentication tool called with facts the user stated; record
        a call on the records of a customer before authentication, or of another one."""
        owner = self.domain.owner(self.db, name, arguments, result)
        if name in self.domain.auth_tools and all(map(self._stated, arguments.values())):
            if self.customer is None:
                self.customer = owner
            elif owner != self.customer:
                self.violations.append(
                    f"{name}({_args(arguments)}) authenticated a second customer, {owner} "
                    f"(this conversation is {self.customer}'s)"
                )
            return
        if owner is None or owner == self.customer:
            return
        if self.customer is None:
            unstated = name in self.domain.auth_tools
            self.violations.append(
                f"{name}({_args(arguments)}) read the records of {owner} before the user was "
                "authenticated"
                + (
                    " (its arguments are not what the user said, so it authenticates no one)"
                    if unstated
                    else ""
                )
            )
        else:
            self.violations.append(
                f"{name}({_args(arguments)}) touched the records of {owner}, not of the "
                f"authenticated customer {self.customer}"
            )

    def _stepped(self, name: str) -> None:
        """Note a change the user made on their device in answer to the agent: before
        authentication it is a violation (the policy: authenticate before changing
        anything)."""
        if self._steps is None:
            return  # not in answer to the agent (a model user's first message)
        self._steps.append(name)
        if not self.authenticated:
            self.violations.append(
                f"the user made a change on their device ({name}) at the agent's request "
                "before they were authenticated"
            )

    def _stated(self, value: Any) -> bool:
        """Whether the user said ``value`` in one of their messages (its words and numbers,
        in order: ``mia.garcia@example.com`` in "it's Mia.Garcia@example.com")."""
        wanted = " ".join(_words(str(value)))
        return bool(wanted) and any(
            f" {wanted} " in f" {' '.join(_words(text))} "
            for role, text in self.transcript
            if role == "user"
        )

    # ----------------------------------------------------------------- the verdict

    def verdict(
        self,
        gold: DB,
        gold_digest: str,
        outputs: Sequence[str],
        script_calls: Collection[str] = (),
    ) -> Verdict:
        """Judge the conversation (a score of 0 until it has ended); ``script_calls`` are
        the tools the task's script calls (a transfer the script does not make fails)."""
        if not self.ended:
            return Verdict(0.0, False, details="the conversation goes on")
        digest = db_hash(self.db)
        database = float(digest == gold_digest)
        missing = [phrase for phrase in outputs if not self._told(phrase)]
        violations = list(self.violations)
        if self.ended_with is not None and self.ended_with not in script_calls:
            violations.append(
                f"the agent ended the conversation with {self.ended_with}, which the task "
                "does not call for (the policy transfers only what the tools cannot handle)"
            )
        components = {
            "database": database,
            "outputs": float(not missing),
            "policy": float(not violations),
        }
        score = components["database"] * components["outputs"] * components["policy"]
        lines = [f"the conversation ended: {self.ended_by}"]
        if database:
            lines.append(f"database: matches the gold database (sha256 {digest[:12]})")
        else:
            lines.append("database: differs from the gold database:")
            lines += [f"  {line}" for line in db_diff(self.db, gold)]
        if missing:
            lines.append(
                f"outputs: never told the authenticated user {', '.join(map(repr, missing))}"
            )
        elif outputs:
            lines.append(f"outputs: told the user {', '.join(map(repr, outputs))}")
        if violations:
            lines.append("policy: " + "; ".join(violations))
        return Verdict(score, score == 1.0, components, "\n".join(lines))

    def _told(self, phrase: str) -> bool:
        """Whether the agent told the authenticated user ``phrase``: in some message, as
        tau-bench matches outputs; a value of one of the domain's vocabularies (a status)
        must be the only value of it that the agent's messages state, each message stating
        at most one (listing every status states none)."""
        vocabulary = next((v for v in self.domain.vocabularies if phrase in v), None)
        if vocabulary is None:
            return any(phrase in message for message in self.told)
        stated = {_alone(message, vocabulary) for message in self.told} - {None}
        return stated == {phrase}

    def state_key(self) -> str:
        """The situation as a canonical string: the database (as the calls that changed it:
        hashing the whole database at every step would cost milliseconds), the user's
        progress and the policy state."""
        progress = (
            [self.scripted.request, self.scripted.confirmed, self.scripted.changed]
            if self.user is None
            else [len(self.transcript)]
        )
        return json.dumps(
            [
                self.writes,
                progress,
                self.customer,
                self.consent,
                self.ended,
                len(self.violations),
            ]
        )

    # ----------------------------------------------------------------- the user's side

    def _heard(self, text: str) -> str:
        """Record the user's message; note a confirmation and the end of the conversation."""
        self.transcript.append(("user", text))
        if self._proposal is not None:  # the answer to a proposal: a yes to it, or no consent
            self.consent = self._proposal if is_affirmative(text) else None
            self._proposal = None
        if STOP in text:
            self.ended, self.ended_by = True, "the user ended it"
            text = text.replace(STOP, "").strip()
        return text

    def _model_turn(self, message: str) -> str:
        """A model's answer, after the user tool calls it makes first (dual control)."""
        assert self.user is not None
        text = self.user.reply(message)
        for _ in range(MAX_USER_TOOL_CALLS):
            if not self.user_tools or not looks_like_tool_call(text):
                break
            text = self.user.reply(self._model_tool_call(text))
        return text

    def _model_tool_call(self, text: str) -> str:
        """Run a user tool call a model wrote; its result (or error) goes back to the model."""
        space = ToolCall([tool.schema() for tool in self.user_tools.values()])
        try:
            name, arguments = parse_tool_call(text, space)
        except InvalidAction as error:
            return f"Tool error: {error}"
        return self._use_user_tool(name, arguments)

    def _use_user_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        call = json.dumps({"name": name, "arguments": arguments})
        self.transcript.append(("user_tool_call", call))
        try:
            result = run_user_tool(self.user_tools, self.db, self.scenario.context, name, arguments)
        except ToolError as error:
            return f"Tool error: {error}"
        if self.user_tools[name].writes:
            self.writes.append(call)
            self._stepped(name)
        text = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
        self.transcript.append(("user_tool", text))
        return text


def _args(arguments: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())


def _words(text: str) -> list[str]:
    """The runs of letters and digits of ``text``, lowercase."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _leaves(value: Any) -> list[Any]:
    """The scalar values in an argument (the items of a list, the fields of a dict)."""
    if isinstance(value, Mapping):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _alone(message: str, vocabulary: Sequence[str]) -> str | None:
    """The one value of ``vocabulary`` that ``message`` names (as whole words), or
    ``None`` when it names none or several."""
    named = [v for v in vocabulary if re.search(rf"(?<!\w){re.escape(v)}(?!\w)", message)]
    return named[0] if len(named) == 1 else None


def user_instructions(domain: Domain, scenario: Scenario, db: DB) -> str:
    """The system prompt of a model playing the user (tau-bench's user prompt, with the
    scenario's facts, requests and refusals spelled out)."""
    known = [f"- your {f.label}: {f.value}" for f in scenario.facts if f.known]
    unknown = [f"- you do not know your {f.label}" for f in scenario.facts if not f.known]
    wants = []
    for i, request in enumerate(scenario.requests, 1):
        line = f"{i}. {request.says}"
        if request.change:
            line += f" When the agent first proposes it, change your mind: {request.change}"
        wants.append(line)
    parts = [
        scenario.persona,
        "You are contacting customer service. You are the customer, not the agent: write "
        "only what the customer says, one short message at a time.",
        "What you want, in this order (bring up the next only when the previous is done):",
        *wants,
        "What you know (say it only when the agent asks for it):",
        *(known or ["- nothing beyond your requests"]),
        *unknown,
    ]
    if scenario.refuses:
        parts += ["What you will not accept:", *(f"- {r}" for r in scenario.refuses)]
    if domain.user_tools():
        view = domain.user_view(db, scenario.context)
        parts += [
            "You have your own device. When the agent asks you to do something on it, call "
            'one of your tools by writing only a JSON object {"name": ..., "arguments": '
            "{...}}; its result comes back to you. Your tools:",
            *(f"- {t.name}: {t.description}" for t in domain.user_tools()),
        ]
        if view:
            parts.append(f"What you see on your device now:\n{view}")
    parts += [
        "When the agent asks you to confirm an action you want, answer yes explicitly; if it "
        "is not what you want, say no and explain.",
        "Do not make up information you were not given. When everything you want is done, "
        f"or the agent cannot help, write {STOP} at the end of your message.",
    ]
    return "\n".join(parts)


def rehearse(domain: Domain, draft: TaskDraft) -> Dialogue:
    """Play ``draft``'s oracle script against the scripted user on a fresh database and
    return the dialogue: what the conformance checker's oracle run does, without the env.
    A template's test asserts ``dialogue.ended``, ``dialogue.verdict(...)`` at 1, and so on.
    """
    dialogue = Dialogue(domain, domain.db(), draft.scenario)
    dialogue.open()
    for move in draft.moves:
        if dialogue.ended:
            break
        if move.say is not None:
            dialogue.say(move.say)
        else:
            # A refused call is recorded on the dialogue (tool_errors, violations).
            with contextlib.suppress(ToolError):
                dialogue.call(str(move.call), move.arguments)
    return dialogue


def judge(domain: Domain, draft: TaskDraft, dialogue: Dialogue) -> Verdict:
    """The verdict of ``dialogue`` against ``draft``'s gold database and outputs."""
    gold = gold_db(domain, draft)
    return dialogue.verdict(gold, db_hash(gold), draft.outputs, draft.calls)
