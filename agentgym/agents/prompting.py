"""Prompting shared by every LLM agent: system message, chat history, action extraction.

One :class:`Conversation` per episode:

* the env's task **instructions** become the system message (plus an optional format hint
  such as "reply with the action only"). For an env whose actions are tool calls, the tools'
  schemas follow the instructions as text (each tool, each argument's name, type, whether it
  is required, what it means: :func:`tool_section`), unless the instructions already name
  every tool and argument; a local model reads no native tool declarations, and without
  them it would have to guess that an edit takes ``old_str`` and ``new_str``;
* each **observation** is appended as a ``user`` message and each raw model reply as an
  ``assistant`` message. The history is **append-only**: an earlier turn is never rewritten,
  so turn ``t+1``'s prompt starts with turn ``t``'s prompt plus its reply, which is what a
  prefix cache (vLLM, llama.cpp, an OpenAI-compatible server) can reuse;
* an observation that holds **frames** (a GUI env's screenshots, :mod:`agentgym.frames`)
  reaches a text model as its text alone (:func:`observation_text`: the accessibility tree
  beside the screenshot, else the env's feedback line), never as numbers; an agent over a
  vision endpoint adds the frames as image parts (PNG data URLs, OpenAI's format), and the
  conversation's **image limit** keeps only the last ``N`` of them in a request (older
  ones become a short text part), so a long episode's request stays bounded;
* an optional **history window** keeps the system message and the last ``N`` turns (a turn
  is an observation and the reply to it; the pending observation is the last turn). Small
  models with short contexts need it; it trades the prefix cache away, so it is off by default.

Chat templates come from the tokenizer (``tokenizer.apply_chat_template``) in
:func:`~agentgym.backends.render_prompt`, never hand-rolled per model.

**Action extraction** (:func:`extract_action`) turns the model's free text into what goes to
the env. The env parses the action itself and answers a bad one with feedback, so extraction
only cuts away the chatter around an answer; when it finds nothing it hands the raw reply
over, and the env says what was wrong. Styles:

==========  ===========================================================================
``auto``    the last ``<action>...</action>``, else the reply from its last ``<answer>`` on
            (envs that read ``<answer>`` tags, e.g. reasoning-gym's, parse them; a
            multi-line answer stays whole), else the last fenced code block, else the last
            non-empty line (the default: works for models that follow a format hint and for
            those that just answer)
``tags``    the last ``<action>...</action>`` (an unclosed ``<action>`` at the end, cut by
            the token limit, counts up to the end)
``fenced``  the contents of the last fenced code block
``line``    the last non-empty line
``raw``     the whole reply, stripped
==========  ===========================================================================

An env that parses whole replies itself (a fenced program with a command line before it, a
boxed answer anywhere in a solution, a JSON tool call) declares ``metadata["action_style"]``
(``"raw"``); an agent whose :class:`PromptConfig` leaves ``action_style`` unset follows it.

**Answer extraction** (``PromptConfig.answer_extraction``) matters for envs that read a final
answer in a fixed format and declare it as ``metadata["answer_format"]`` (reasoning-gym's
``<answer>{answer}</answer>``, the math envs' ``\\boxed{{answer}}``). ``strict`` (the
default) sends what the style above extracted, so a reply without the format is the agent's
mistake. ``flexible`` is lm-evaluation-harness's "flexible-extract": a reply that does not use
the format at all has its final answer read (a stated one, as the math verifier finds it:
"the answer is ...", ``#### 42``, a boxed one; else the reply's last number) and written in
the env's format; a reply that uses the format is sent as it is. Small models
that answer right but cannot follow a format (SmolLM2-135M writes "4 + 3 = 7", not
``<answer>7</answer>``) score what they know instead of 0; the env and its scoring are the
same, only the agent reads its own reply more leniently, so compare agents under one setting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentgym.errors import UsageError
from agentgym.frames import replace_frames, split_frames, text_beside
from agentgym.spaces import describe_tools

__all__ = [
    "ACTION_STYLES",
    "ANSWER_EXTRACTIONS",
    "Conversation",
    "PromptConfig",
    "extract_action",
    "flexible_answer",
    "format_observation",
    "observation_text",
    "tool_section",
]

ActionStyle = Literal["auto", "tags", "fenced", "line", "raw"]
ACTION_STYLES: tuple[str, ...] = ("auto", "tags", "fenced", "line", "raw")
AnswerExtraction = Literal["strict", "flexible"]
ANSWER_EXTRACTIONS: tuple[str, ...] = ("strict", "flexible")
ANSWER_SLOT = "{answer}"  # where the answer goes in an env's metadata["answer_format"]

_TAG = re.compile(r"<action>(.*?)(?:</action>|\Z)", re.DOTALL | re.IGNORECASE)
_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")  # 7, -2, 1,024, 3.5 (flexible-extract's reading)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class PromptConfig:
    """How an LLM agent builds prompts and reads actions.

    Attributes:
        format_hint: appended to the instructions in the system message (``None``: nothing).
        history_window: keep only the last ``N`` turns (``None``: the whole episode).
        action_style: how :func:`extract_action` reads the reply (see the module docstring);
            ``None``: the style the env declares, else ``auto``.
        answer_extraction: ``strict`` or ``flexible``: whether a reply that ignores the env's
            answer format has its final answer read and put in that format (see the module
            docstring).
        default_sampling: sampling settings for the keys a benchmark leaves unset (a trained
            policy's: it is evaluated as it was trained unless the benchmark says otherwise).
    """

    format_hint: str | None = None
    history_window: int | None = None
    action_style: ActionStyle | None = None
    answer_extraction: AnswerExtraction = "strict"
    default_sampling: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.history_window is not None and (
            not isinstance(self.history_window, int) or self.history_window < 1
        ):
            raise UsageError(
                f"history_window must be a positive int or None, got {self.history_window!r}"
            )
        if self.action_style is not None:
            check_action_style(self.action_style)
        if self.default_sampling is not None:
            from agentgym.backends.sampling import SamplingParams

            if not isinstance(self.default_sampling, dict):
                raise UsageError(
                    f"default_sampling must be a mapping, got {self.default_sampling!r}"
                )
            SamplingParams.from_dict(self.default_sampling)  # a bad key or value fails now
        if self.answer_extraction not in ANSWER_EXTRACTIONS:
            raise UsageError(
                f"unknown answer_extraction {self.answer_extraction!r}; use one of "
                f"{list(ANSWER_EXTRACTIONS)}"
            )

    def style_for(self, declared: str | None) -> ActionStyle:
        """The style to read replies with: the configured one, else the env's, else auto."""
        style = self.action_style or declared or "auto"
        check_action_style(style)
        return style  # type: ignore[return-value]


def check_action_style(style: Any) -> None:
    """Raise :class:`UsageError` unless ``style`` is one of :data:`ACTION_STYLES`."""
    if style not in ACTION_STYLES:
        raise UsageError(f"unknown action_style {style!r}; use one of {list(ACTION_STYLES)}")


@dataclass
class Conversation:
    """One episode's chat: a system message and an append-only list of turns.

    A turn opens with the env's observation: a ``user`` message, or a ``tool`` message when
    the model's previous reply was a native tool call (OpenAI format: the assistant message
    carries ``tool_calls`` and the observation answers its ``tool_call_id``).
    """

    system: str
    history_window: int | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)  # without the system one
    max_images: int | None = None  # image parts kept in a request, the latest ones

    @classmethod
    def start(
        cls,
        instructions: str,
        config: PromptConfig,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> Conversation:
        """The conversation for an episode with these task instructions; with the env's
        ``tools`` (its :class:`~agentgym.spaces.ToolCall` space's declarations), their
        schemas as text unless the instructions already describe them (:func:`tool_section`)."""
        parts = (instructions.strip(), tool_section(instructions, tools), config.format_hint)
        system = "\n\n".join(part for part in parts if part)
        return cls(system=system, history_window=config.history_window)

    def add_observation(
        self, observation: Any, tool_call_id: str | None = None, images: Sequence[str] = ()
    ) -> None:
        """Append the env's observation: a user message, or the result of tool call
        ``tool_call_id`` (which must be the call in the last reply); ``images`` (image URLs,
        e.g. PNG data URLs) go beside its text as image parts. A tool message holds text
        only (OpenAI's rule), so a tool result's images follow it in a user message of
        the same turn."""
        if self.messages and self.messages[-1]["role"] in _TURN_OPENERS:
            raise UsageError("two observations in a row: add the model's reply first")
        content = format_observation(observation)
        parts = [{"type": "image_url", "image_url": {"url": url}} for url in images]
        if tool_call_id is None:
            text = [{"type": "text", "text": content}]
            self.messages.append({"role": "user", "content": text + parts if parts else content})
            return
        calls = self.messages[-1].get("tool_calls", []) if self.messages else []
        if tool_call_id not in [c["id"] for c in calls]:
            raise UsageError(f"tool result for {tool_call_id!r}, which the last reply did not call")
        self.messages.append({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        if parts:
            self.messages.append({"role": "user", "content": parts})

    def add_reply(self, text: str, tool_call: dict[str, Any] | None = None) -> None:
        """Append the model's raw reply (not the extracted action: the model sees what it said),
        with the native tool call it made, if any (``{"id", "name", "arguments": str}``)."""
        if not self.messages or self.messages[-1]["role"] not in _TURN_OPENERS:
            raise UsageError("a reply needs an observation before it")
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool_call is not None:
            message["tool_calls"] = [
                {
                    "id": tool_call["id"],
                    "type": "function",
                    "function": {"name": tool_call["name"], "arguments": tool_call["arguments"]},
                }
            ]
        self.messages.append(message)

    def prompt_messages(self) -> list[dict[str, Any]]:
        """The messages to send: the system message and the turns inside the window, with
        only the last ``max_images`` image parts (the others a text part saying so)."""
        kept = self.messages
        if self.history_window is not None:
            # Turns start at observations; keep the last `history_window` of them. A tool
            # result keeps the assistant message whose call it answers.
            starts = [i for i, m in enumerate(self.messages) if self._opens_turn(i)]
            if len(starts) > self.history_window:
                first = starts[-self.history_window]
                if self.messages[first]["role"] == "tool":
                    first -= 1
                kept = self.messages[first:]
        if self.max_images is not None:
            kept = _latest_images(kept, self.max_images)
        system = [{"role": "system", "content": self.system}] if self.system else []
        return system + list(kept)

    def _opens_turn(self, index: int) -> bool:
        """Whether message ``index`` starts a turn: an observation, but not the images that
        follow a tool result in a user message of their own."""
        role = self.messages[index]["role"]
        follows_tool = index > 0 and self.messages[index - 1]["role"] == "tool"
        return role == "tool" or (role == "user" and not follows_tool)


_TURN_OPENERS = ("user", "tool")
DROPPED_IMAGE = "(an earlier screenshot, left out of this request)"


def _latest_images(messages: Sequence[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """``messages`` with image parts beyond the last ``limit`` replaced by a text part
    (:data:`DROPPED_IMAGE`); the stored messages are left as they are."""
    seen, out = 0, []
    for message in reversed(messages):
        content = message["content"]
        if isinstance(content, list):
            parts = []
            for part in reversed(content):
                if part.get("type") == "image_url":
                    seen += 1
                    if seen > limit:
                        part = {"type": "text", "text": DROPPED_IMAGE}
                parts.append(part)
            message = {**message, "content": parts[::-1]}
        out.append(message)
    return out[::-1]


def tool_section(instructions: str, tools: Sequence[Mapping[str, Any]] | None) -> str:
    """The env's tools as a section of the system message: how to call them and each one's
    arguments (:func:`~agentgym.spaces.describe_tools`), so a model that reads no native
    tool declarations (an in-process one) need not guess an argument's name. Empty when
    there are no tools, or when the instructions already name every tool and every argument
    (the env lists them itself, as every shipped env with tools does): no second copy."""
    if not tools or _names_every_argument(instructions, tools):
        return ""
    return (
        'Tools: call one per reply, as a JSON object {"name": ..., "arguments": {...}}.\n'
        + describe_tools(tools)
    )


def _names_every_argument(text: str, tools: Sequence[Mapping[str, Any]]) -> bool:
    words = {word.lower() for word in _WORD.findall(text)}
    return all(
        str(declared["name"]).lower() in words
        and all(
            str(name).lower() in words
            for name in (declared.get("parameters") or {}).get("properties") or {}
        )
        for declared in tools
    )


_WORD = re.compile(r"[A-Za-z0-9_]+")


def observation_text(observation: Any, info: Mapping[str, Any]) -> str:
    """What a model reads of an observation. One without frames: :func:`format_observation`.
    One with frames (a GUI env's screenshot, alone or in a dict beside the page's
    accessibility tree): the text beside them, else the env's feedback
    (``info["feedback"]``: a screenshot cannot say "Invalid action"), else a note of the
    screenshot's size; the pixels are an agent's to send as images, never as text."""
    rest, frames = split_frames(observation)
    if not frames:
        return format_observation(observation)
    text = text_beside(rest)
    if text is None:
        text = format_observation(rest)
    return text or str(info.get("feedback") or "") or _frame_note(frames[0])


def format_observation(observation: Any) -> str:
    """An observation as message text: strings as they are, anything else as JSON (a frame
    in it as a short note of its size, not its pixels)."""
    if isinstance(observation, str):
        return observation
    from agentgym.ledger import jsonable

    observation = replace_frames(observation, _frame_note)
    return json.dumps(jsonable(observation), ensure_ascii=False)


def _frame_note(frame: Any) -> str:
    height, width = frame.shape[:2]
    return f"(a screenshot, {width} x {height})"


def extract_action(text: str, style: ActionStyle = "auto") -> str:
    """The action in a model's reply (see the module docstring); the raw reply if none."""
    check_action_style(style)
    found: str | None = None
    if style in ("auto", "tags"):
        found = _last(_TAG.findall(text))
    if found is None and style == "auto":
        openings = list(_ANSWER_OPEN.finditer(text))
        if openings:
            found = text[openings[-1].start() :].strip()
    if found is None and style in ("auto", "fenced"):
        found = _last(_FENCE.findall(text))
    if found is None and style in ("auto", "line"):
        found = _last(text.splitlines())
    return found if found is not None else text.strip()


def flexible_answer(text: str, answer_format: str) -> str | None:
    """``text``'s final answer written in ``answer_format`` (a template with ``{answer}``,
    e.g. ``<answer>{answer}</answer>``), when ``text`` does not use that format itself;
    None when it does, or when it states no answer and holds no number."""
    if ANSWER_SLOT not in answer_format:
        raise UsageError(f"an answer format needs an {ANSWER_SLOT} slot, got {answer_format!r}")
    opening = answer_format.split(ANSWER_SLOT, 1)[0].strip()
    if opening and opening.lower() in text.lower():
        return None
    from agentgym.verifiers.math import stated_answer

    answer = stated_answer(text)
    if answer is None:  # no stated answer: the last number, as flexible-extract reads one
        numbers = _NUMBER.findall(text)
        answer = numbers[-1] if numbers else None
    return None if answer is None else answer_format.replace(ANSWER_SLOT, answer.strip())


def _last(candidates: list[str]) -> str | None:
    for candidate in reversed(candidates):
        if candidate.strip():
            return candidate.strip()
    return None
