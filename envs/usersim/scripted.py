"""The scripted user: a deterministic customer who follows their :class:`Scenario` to the letter.

It reads each agent message as lowercase text with commas dropped
(:func:`~agentgym.envs.usersim.domain.normalize`) and answers by the first rule that applies:

1. **A proposal it agrees to.** The message asks for confirmation (it contains a cue:
   "confirm", "proceed", "shall i", "should i", "would you like me to", "do you want me to",
   "go ahead", "yes/no") while the current request still needs writes, and it contains every
   phrase of the request's ``confirm``: the user says **"Yes, please go ahead."** — unless the
   request has a change of mind not yet spoken, which it says instead (from then on, proposals
   must contain ``then_confirm``).
2. **An instruction to act on its own device** (dual control): for every user tool whose
   trigger phrases the message contains, it calls the tool and reports the result.
3. **Satisfied: move on.** When the current request has had its confirmations, every
   phrase it ``expects`` has been said by the agent (in any message so far) and its
   ``done_when`` check holds, it brings up the next request, or ends the conversation:
   "That's all I needed, thank you! ###STOP###".
4. **A question it can answer.** For every fact whose ``asked_by`` phrase the message
   contains, it states the fact (or says it does not know it).
5. **A proposal it refuses.** A confirmation cue while writes are needed, without the
   request's phrases: "No, that's not what I want." and the request again.
6. **Otherwise** it restates the current request. After :data:`PATIENCE` such answers in a
   row it gives up and ends the conversation.

It never sees the agent's tool calls or the database (except, for dual control, its own
device through its tools and checks), like a person on the phone. Same messages, same answers:
a rerun with a deterministic agent is byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym.envs.usersim.domain import Request, Scenario, Tool, normalize

__all__ = ["CONFIRM_CUES", "PATIENCE", "STOP", "ScriptedUser", "is_affirmative"]

STOP = "###STOP###"
"""What a user writes to end the conversation (tau-bench's token)."""
PATIENCE = 8
"""Restatements in a row after which the scripted user gives up."""
CONFIRM_CUES = (
    "confirm",
    "proceed",
    "shall i",
    "should i",
    "would you like me to",
    "do you want me to",
    "go ahead",
    "yes/no",
)
"""Phrases by which an agent's message asks the user to confirm something."""
YES = "Yes, please go ahead."
_AFFIRMATIVE = re.compile(
    r"\b(yes|yeah|yep|confirm(ed)?|go ahead|proceed|please do|sure|ok(ay)?)\b", re.IGNORECASE
)
_NEGATIVE = re.compile(r"\b(no|not|don't|do not|cancel that|wait)\b", re.IGNORECASE)


def asks_confirmation(message: str) -> bool:
    """Whether a (normalized) agent message asks the user to confirm something."""
    return any(cue in message for cue in CONFIRM_CUES)


def is_affirmative(message: str) -> bool:
    """Whether a user's message says yes (and not no): what counts as explicit confirmation
    of a write, for any user, scripted or not."""
    return bool(_AFFIRMATIVE.search(message)) and not _NEGATIVE.search(message)


@dataclass
class ScriptedUser:
    """A user that follows ``scenario``; see the module docstring.

    Args:
        scenario: who the user is and what they want.
        tools: the user's own tools (dual control).
        use_tool: ``use_tool(name, arguments) -> text``: the env runs a user tool on the
            episode's database and returns its result as text.
        check: ``check(name) -> bool``: the domain's named check on the user's state.
    """

    scenario: Scenario
    tools: Sequence[Tool] = ()
    use_tool: Callable[[str, Mapping[str, Any]], str] | None = None
    check: Callable[[str], bool] | None = None
    request: int = 0
    confirmed: int = 0
    changed: bool = False
    restated: int = 0
    heard: list[str] = field(default_factory=list)

    @property
    def current(self) -> Request | None:
        """The request the user is on (``None`` once all are done)."""
        requests = self.scenario.requests
        return requests[self.request] if self.request < len(requests) else None

    def opening(self) -> str:
        """The user's first message."""
        return self.scenario.opening

    def reply(self, message: str) -> str:
        """The user's answer to the agent's ``message``."""
        text = normalize(message)
        self.heard.append(text)
        answer = self._answer(text)
        self.restated = self.restated + 1 if answer is None else 0
        if answer is not None:
            return answer
        request = self.current
        if request is None or self.restated >= PATIENCE:
            return f"I don't think this is going anywhere. Goodbye. {STOP}"
        return request.says

    def _answer(self, text: str) -> str | None:
        """The reply by rules 1-5, or ``None`` for a restatement (rule 6)."""
        request = self.current
        wants_write = request is not None and self.confirmed < request.writes
        if request is not None and wants_write and asks_confirmation(text):
            phrases = request.then_confirm if self.changed else request.confirm
            if all(phrase in text for phrase in phrases):
                if request.change is not None and not self.changed:
                    self.changed = True
                    return request.change
                self.confirmed += 1
                return YES
        used = [self._use(tool) for tool in self.tools if tool.triggered_by(text)]
        if used:
            return " ".join(used)
        if request is not None and self._satisfied(request):
            self.request, self.confirmed, self.changed = self.request + 1, 0, False
            following = self.current
            return following.says if following else f"That's all I needed, thank you! {STOP}"
        facts = [f.statement() for f in self.scenario.facts if any(p in text for p in f.asked_by)]
        if facts:
            return " ".join(facts)
        if request is not None and wants_write and asks_confirmation(text):
            return f"No, that's not what I want. {request.says}"
        return None

    def _satisfied(self, request: Request) -> bool:
        if self.confirmed < request.writes:
            return False
        said = "\n".join(self.heard)
        if not all(phrase in said for phrase in request.expects):
            return False
        return request.done_when is None or (
            self.check is not None and self.check(request.done_when)
        )

    def _use(self, tool: Tool) -> str:
        if self.use_tool is None:
            return f"I can't do that ({tool.name})."
        return f"I did that ({tool.name}): {self.use_tool(tool.name, tool.trigger_arguments)}"
