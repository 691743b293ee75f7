"""What happened in one episode, for a reader: an :class:`~agentgym.ledger.EpisodeRecord` as a
list of display items, and two renderers of them (HTML and plain text).

The HTML report, the leaderboard's episode viewer and ``agentgym report --episode`` show
episodes through this module, so they show the same things:

* the **instructions** the env gave (once, when the record has them: schema 1.3);
* the **initial observation**, then per step the **model's raw text** beside the **action
  that was extracted** from it (a reader must see that the model wrote "The answer is 11." when
  flexible extraction sent ``<answer>11</answer>``), the **observation** and the **reward**;
* a **tool call** as a call: its name and pretty-printed JSON arguments, a unified-diff
  argument as a diff (added and removed lines marked), ``old_str``/``new_str`` as the diff
  between them, and code or multi-line text (a shell command, a file's content) as code;
* the **user's turns** when a model played the user (usersim ``--user``), where they came;
* the **outcome**: status, verdict (passed, score, details) or the error;
* **frames** (a GUI env's screenshots, stored beside the ledger: :mod:`agentgym.frames`)
  where the observation had them, in order; the text shown beside a step's frame is the
  observation's text (an accessibility tree), else the env's feedback (``info["feedback"]``).
  :func:`render_html` shows each through a ``frame_html`` function the page gives (the
  report: a thumbnail linking the PNG), else as a line naming the file.

Everything the agent, the user or the env wrote is untrusted: :func:`render_html` escapes
every text (tests feed it script and attribute break-outs), and :func:`render_text` shows
terminal control characters as escapes, so a reply cannot restyle a terminal.

API (small on purpose)::

    items = transcript(record)             # list[Item]; long texts cut at `limit` characters
    fragment = render_html(items)          # an escaped HTML fragment (frame_html= draws frames)
    TRANSCRIPT_CSS                         # (classes start with "tx-")
    print(render_text(items, color=True))  # the terminal's view; ANSI colours for diffs
"""

from __future__ import annotations

import difflib
import html
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from agentgym.frames import is_frame_ref, split_frames, text_beside
from agentgym.ledger import EpisodeRecord

__all__ = [
    "TRANSCRIPT_CSS",
    "Block",
    "FrameHtml",
    "FrameRef",
    "Instructions",
    "Item",
    "Observation",
    "Outcome",
    "Step",
    "TextAction",
    "ToolCallAction",
    "UserTurn",
    "frame_line",
    "render_html",
    "render_text",
    "transcript",
]

SHOWN_CHARS = 4_000
"""The default cut of one text (an observation, a reply, an argument) in a transcript."""

CODE_ARGUMENTS = frozenset({"command", "code", "script", "file_text", "text", "content"})
"""Tool arguments shown as code whatever their length (a one-line ``bash`` command too)."""

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Block:
    """One tool argument shown on its own: ``kind`` ``"diff"`` (lines marked ``+``/``-``/``@@``)
    or ``"code"``; ``label`` names the argument (``"old_str → new_str"`` for a replacement)."""

    label: str
    kind: Literal["diff", "code"]
    text: str


@dataclass(frozen=True)
class ToolCallAction:
    """An action that is a tool call: ``arguments`` is the pretty JSON of the arguments not
    shown as a :class:`Block` (``""`` when none is left)."""

    name: str
    arguments: str
    blocks: tuple[Block, ...] = ()


@dataclass(frozen=True)
class TextAction:
    """Any other action, as text (a non-string action as pretty JSON)."""

    text: str


@dataclass(frozen=True)
class FrameRef:
    """A frame the record references: ``path`` is relative to the run directory."""

    sha256: str
    path: str
    width: int
    height: int

    @property
    def label(self) -> str:
        """``"frame 800 x 600"``: what an image's alt text or a text line says of it."""
        return f"frame {self.width} x {self.height}"


Frames = tuple[FrameRef, ...]


@dataclass(frozen=True)
class Instructions:
    """The instructions the env gave the agent at reset (its system prompt's core)."""

    text: str


@dataclass(frozen=True)
class Observation:
    """The initial observation (what the agent saw before its first step)."""

    text: str
    frames: Frames = ()


@dataclass(frozen=True)
class Step:
    """One step. ``model_text`` is the agent's raw reply (``None`` when the agent gave none:
    a scripted agent, a native tool call); ``model_text_is_action`` is true when the action
    is that text unchanged, so a renderer shows it once."""

    number: int
    model_text: str | None
    action: ToolCallAction | TextAction
    model_text_is_action: bool
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    frames: Frames = ()


@dataclass(frozen=True)
class UserTurn:
    """A message of the model that played the user, after ``after_step`` agent steps."""

    after_step: int
    text: str


@dataclass(frozen=True)
class Outcome:
    """How the episode ended: its status and verdict, or its error."""

    status: str
    passed: bool | None
    score: float | None
    details: str
    error: str | None


Item = Instructions | Observation | Step | UserTurn | Outcome


# ---------------------------------------------------------------------------------------------
# Record -> items


def transcript(record: EpisodeRecord, *, limit: int | None = SHOWN_CHARS) -> list[Item]:
    """The display items of ``record``, in reading order; each text cut at ``limit``
    characters (``None``: whole)."""
    items: list[Item] = []
    if record.instructions:
        items.append(Instructions(_cut(record.instructions, limit)))
    if record.initial_observation is not None:
        text, frames = _observed(record.initial_observation, None)
        items.append(Observation(_cut(text, limit), frames))
    turns = sorted(record.user_turns, key=lambda turn: turn.after_step)
    items += [UserTurn(0, _cut(turn.text, limit)) for turn in turns if turn.after_step <= 0]
    for number, step in enumerate(record.steps, 1):
        raw = step.info.get("agent_text")
        model_text = raw if isinstance(raw, str) else None
        action = _action(step.action, limit)
        observed, frames = _observed(step.observation, step.info.get("feedback"))
        items.append(
            Step(
                number=number,
                model_text=None if model_text is None else _cut(model_text, limit),
                action=action,
                model_text_is_action=isinstance(action, TextAction)
                and model_text is not None
                and model_text.strip() == str(step.action).strip(),
                observation=_cut(observed, limit),
                reward=step.reward,
                terminated=step.terminated,
                truncated=step.truncated,
                frames=frames,
            )
        )
        items += [UserTurn(number, _cut(t.text, limit)) for t in turns if t.after_step == number]
    verdict = record.verdict
    items.append(
        Outcome(
            status=record.status,
            passed=None if verdict is None else verdict.passed,
            score=None if verdict is None else verdict.score,
            details=_cut(_as_text(verdict.details), limit) if verdict and verdict.details else "",
            error=record.error,
        )
    )
    return items


def _observed(observation: Any, feedback: Any) -> tuple[str, Frames]:
    """An observation's text and its frames' references; for one that holds frames, the
    text beside them, else the env's ``feedback``."""
    rest, refs = split_frames(observation, is_frame_ref)
    if not refs:
        return _as_text(observation), ()
    frames = tuple(
        FrameRef(ref["sha256"], ref["path"], *_width_height(ref["shape"])) for ref in refs
    )
    text = text_beside(rest)
    if text is None:
        text = _as_text(rest)
    return text or (feedback if isinstance(feedback, str) else ""), frames


def _width_height(shape: Any) -> tuple[int, int]:
    try:
        return int(shape[1]), int(shape[0])
    except (TypeError, ValueError, IndexError):
        return 0, 0


def _action(action: Any, limit: int | None) -> ToolCallAction | TextAction:
    """A tool call (a ``{"name", "arguments"}`` dict, or such JSON written as text) as a
    call; anything else as text."""
    call = _json_call(action) if isinstance(action, str) else action
    if (
        isinstance(call, dict)
        and isinstance(call.get("name"), str)
        and isinstance(call.get("arguments", {}), dict)
    ):
        return _tool_call(call["name"], call.get("arguments", {}), limit)
    return TextAction(_cut(_as_text(action), limit))


def _json_call(text: str) -> Any:
    """The JSON object ``text`` holds (inside a ``` fence or not); None if it holds none."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0].strip()
    if not body.startswith("{"):
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _tool_call(name: str, arguments: dict[str, Any], limit: int | None) -> ToolCallAction:
    rest = dict(arguments)
    blocks: list[Block] = []
    old, new = rest.get("old_str"), rest.get("new_str")
    if isinstance(old, str) and isinstance(new, str):
        del rest["old_str"], rest["new_str"]
        blocks.append(Block("old_str → new_str", "diff", _cut(_replacement_diff(old, new), limit)))
    for key, value in arguments.items():
        if key not in rest or not isinstance(value, str):
            continue
        if is_patch(value):
            blocks.append(Block(key, "diff", _cut(value, limit)))
        elif key in CODE_ARGUMENTS or "\n" in value:
            blocks.append(Block(key, "code", _cut(value, limit)))
        else:
            continue
        del rest[key]
    shown = json.dumps(rest, indent=2, ensure_ascii=False, default=repr) if rest else ""
    return ToolCallAction(name, _cut(shown, limit), tuple(blocks))


def is_patch(text: str) -> bool:
    """Whether ``text`` is a unified diff (a ``diff --git`` header or an ``@@ -a,b +c,d @@``
    hunk header on a line of its own)."""
    return text.lstrip().startswith("diff --git ") or _HUNK.search(text) is not None


def _replacement_diff(old: str, new: str) -> str:
    """``old`` → ``new`` as diff lines (``-`` removed, ``+`` added, `` `` kept), no headers."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
    return "\n".join(line for line in lines if not line.startswith(("---", "+++")))


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters)"


# ---------------------------------------------------------------------------------------------
# Items -> HTML


TRANSCRIPT_CSS = """
.tx-item { margin: 0.4em 0; }
.tx-label { color: #666; font-size: 0.8em; margin: 0.2em 0; }
.tx pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; padding: 0.3em 0.5em;
  background: #f7f7f7; border-radius: 3px; font-size: 0.85em; }
.tx-pair { display: grid; grid-template-columns: 1fr 1fr; gap: 0.6em; }
.tx-step { border-top: 1px solid #ddd; padding-top: 0.3em; }
.tx-step h4 { margin: 0.2em 0; font-size: 0.9em; }
.tx-instructions pre { background: #eef3fb; }
.tx-user pre { background: #fdf6e3; }
.tx-call-name { font-family: monospace; font-weight: bold; }
.tx-add { color: #116329; background: #dafbe1; display: block; }
.tx-del { color: #82071e; background: #ffebe9; display: block; }
.tx-hunk { color: #0550ae; display: block; }
.tx-passed { color: #116329; font-weight: bold; }
.tx-frames { display: flex; flex-wrap: wrap; gap: 0.4em; margin: 0.2em 0; }
.tx-frames img { max-width: 240px; border: 1px solid #ccc; }
.tx-frame-ref { font-family: monospace; font-size: 0.8em; color: #555; }
.tx-failed { color: #82071e; font-weight: bold; }
"""
"""The styles :func:`render_html`'s classes need (add them to the page's ``<style>``)."""


FrameHtml = Callable[[FrameRef], str]
"""Draws one frame as HTML (the report's: a thumbnail linking the PNG)."""


def render_html(items: Iterable[Item], *, frame_html: FrameHtml | None = None) -> str:
    """The items as one HTML fragment (``<div class="tx">``); every text escaped. Frames
    are drawn by ``frame_html``; without it each is a line naming its file."""
    draw = frame_html or frame_line
    parts = [_html_item(item, draw) for item in items]
    return '<div class="tx">' + "".join(parts) + "</div>"


def frame_line(frame: FrameRef) -> str:
    """A frame as a line of text naming its size and its file (no image: a page that cannot
    reach the run directory, such as the leaderboard's)."""
    return f'<div class="tx-frame-ref">{_esc(frame.label)}: {_esc(frame.path)}</div>'


def _html_frames(frames: Frames, draw: FrameHtml) -> str:
    if not frames:
        return ""
    return '<div class="tx-frames">' + "".join(draw(frame) for frame in frames) + "</div>"


def _html_item(item: Item, draw: FrameHtml) -> str:
    if isinstance(item, Instructions):
        return _box("tx-instructions", "instructions", _pre(item.text))
    if isinstance(item, Observation):
        shown = _html_frames(item.frames, draw) + (_pre(item.text) if item.text else "")
        return _box("tx-observation", "initial observation", shown)
    if isinstance(item, UserTurn):
        return _box("tx-user", f"user (a model), after step {item.after_step}", _pre(item.text))
    if isinstance(item, Step):
        return _html_step(item, draw)
    return _html_outcome(item)


def _html_step(step: Step, draw: FrameHtml) -> str:
    action = _html_action(step.action)
    if step.model_text is None:
        said = _labelled("action", action)
    elif step.model_text_is_action:
        said = _labelled("model wrote (sent as the action)", _pre(step.model_text))
    else:
        said = (
            '<div class="tx-pair">'
            + _labelled("model wrote", _pre(step.model_text))
            + _labelled("action sent to the env", action)
            + "</div>"
        )
    ended = _ended(step)
    head = f"<h4>step {step.number} · reward {step.reward:g}{ended}</h4>"
    seen = _html_frames(step.frames, draw) + _pre(step.observation)
    return f'<div class="tx-item tx-step">{head}{said}{_labelled("observation", seen)}</div>'


def _ended(step: Step) -> str:
    """``", terminated"``, ``", truncated"``, both or neither."""
    flags = (("terminated", step.terminated), ("truncated", step.truncated))
    return "".join(f", {name}" for name, flag in flags if flag)


def _html_action(action: ToolCallAction | TextAction) -> str:
    if isinstance(action, TextAction):
        return _pre(action.text)
    shown = "(…)" if action.arguments or action.blocks else "()"
    parts = [f'<div class="tx-call-name">{_esc(action.name)}{shown}</div>']
    if action.arguments:
        parts.append(f'<pre class="tx-json">{_esc(action.arguments)}</pre>')
    for block in action.blocks:
        body = _diff_html(block.text) if block.kind == "diff" else _esc(block.text)
        parts.append(
            f'<div class="tx-label">{_esc(block.label)}</div>'
            f'<pre class="tx-{block.kind}">{body}</pre>'
        )
    return '<div class="tx-call">' + "".join(parts) + "</div>"


def _diff_html(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        kind = _diff_kind(line)
        escaped = _esc(line) or " "
        lines.append(f'<span class="tx-{kind}">{escaped}</span>' if kind else escaped + "\n")
    return "".join(lines)


def _diff_kind(line: str) -> str:
    if line.startswith(("+++", "---", "diff --git", "@@")):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return ""


def _html_outcome(outcome: Outcome) -> str:
    if outcome.error:
        return _box("tx-outcome", f"{outcome.status}", _pre(outcome.error))
    if outcome.passed is None:
        return _box("tx-outcome", "outcome", _pre(f"{outcome.status}, no verdict"))
    verdict = "passed" if outcome.passed else "not passed"
    css = "tx-passed" if outcome.passed else "tx-failed"
    line = f'<div class="{css}">{verdict}, score {outcome.score:g} ({_esc(outcome.status)})</div>'
    details = _pre(outcome.details) if outcome.details else ""
    return _box("tx-outcome", "verdict", line + details)


def _box(css: str, label: str, body: str) -> str:
    return f'<div class="tx-item {css}">{_labelled(label, body)}</div>'


def _labelled(label: str, body: str) -> str:
    return f'<div><div class="tx-label">{_esc(label)}</div>{body}</div>'


def _pre(text: str) -> str:
    return f"<pre>{_esc(text)}</pre>"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


# ---------------------------------------------------------------------------------------------
# Items -> terminal text


_ANSI = {"add": "\x1b[32m", "del": "\x1b[31m", "hunk": "\x1b[36m", "head": "\x1b[1m"}
_RESET = "\x1b[0m"


def render_text(items: Iterable[Item], *, color: bool = False) -> str:
    """The items as plain text for a terminal (ANSI colours for diffs and headings when
    ``color``); control characters in the texts are shown as escapes."""
    out: list[str] = []

    def head(text: str) -> None:
        out.append(f"{_ANSI['head']}{text}{_RESET}" if color else text)

    def body(text: str, indent: str = "  ") -> None:
        out.extend(indent + line for line in _visible(text).split("\n"))

    for item in items:
        if isinstance(item, Instructions):
            head("== instructions")
            body(item.text)
        elif isinstance(item, Observation):
            head("== initial observation")
            out.extend(_frame_lines(item.frames))
            if item.text or not item.frames:
                body(item.text)
        elif isinstance(item, UserTurn):
            head(f"== user (a model), after step {item.after_step}")
            body(item.text)
        elif isinstance(item, Step):
            _text_step(item, head, body, out, color)
        else:
            head(f"== outcome: {_outcome_line(item)}")
            if item.details:
                body(item.details)
    return "\n".join(out)


def _text_step(step: Step, head: Any, body: Any, out: list[str], color: bool) -> None:
    flags = _ended(step)
    head(f"== step {step.number} (reward {step.reward:g}{flags})")
    if step.model_text is not None:
        out.append(
            "-- model wrote" + (" (sent as the action)" if step.model_text_is_action else "")
        )
        body(step.model_text)
    if not step.model_text_is_action:
        out.append("-- action" + (" (extracted)" if step.model_text is not None else ""))
        action = step.action
        if isinstance(action, TextAction):
            body(action.text)
        else:
            out.append(f"  call {_visible(action.name)}")
            if action.arguments:
                body(action.arguments, "    ")
            for block in action.blocks:
                out.append(f"  {_visible(block.label)}:")
                for line in _visible(block.text).split("\n"):
                    kind = _diff_kind(line) if block.kind == "diff" else ""
                    shown = f"    {line}"
                    out.append(f"{_ANSI[kind]}{shown}{_RESET}" if color and kind else shown)
    out.append("-- observation")
    out.extend(_frame_lines(step.frames))
    body(step.observation)


def _frame_lines(frames: Frames) -> list[str]:
    return [f"  [{frame.label}: {_visible(frame.path)}]" for frame in frames]


def _outcome_line(outcome: Outcome) -> str:
    if outcome.error:
        return f"{outcome.status}: {_visible(outcome.error)}"
    if outcome.passed is None:
        return f"{outcome.status}, no verdict"
    verdict = "passed" if outcome.passed else "not passed"
    return f"{verdict}, score {outcome.score:g} ({outcome.status})"


def _visible(text: str) -> str:
    """``text`` with control characters (an ESC that would restyle the terminal, a carriage
    return that would overwrite a line) written as escapes; newlines and tabs kept."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
