"""The web action language: a handful of calls with literal arguments, read with ``ast``.

An action is one call, written as the model would write it (in a longer reply, the last line
that is a call by itself counts)::

    click("12")          fill("9", "red shirt")      select("14", "Large")
    press("Enter")       goto("/shop/cart")           answer("42")

The text is parsed with :func:`ast.parse` and only a call of a name in :data:`ACTIONS` with
literal arguments (strings, numbers) is accepted; nothing is ever evaluated, unlike
BrowserGym, which ``exec``\\ s the action as Python. The same actions are offered as JSON-schema
tools (:data:`TOOLS`), so function-calling agents call them natively; a call written as JSON
text (``{"name": "click", "arguments": {"id": "12"}}``) is read too.

Every mistake — syntax, an unknown action, a missing or extra argument, a wrong type — is an
:class:`~agentgym.task_env.InvalidAction` whose message shows the right form.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentgym.spaces import ToolCall, tool
from agentgym.task_env import InvalidAction, clean_action, parse_tool_call

__all__ = [
    "ACTIONS",
    "TOOLS",
    "Action",
    "Param",
    "describe_actions",
    "format_action",
    "parse",
    "tools_of",
]


@dataclass(frozen=True)
class Param:
    """One argument of an action."""

    name: str
    type: str  # JSON type: "string", "integer" or "number"
    doc: str
    default: Any = ...

    @property
    def required(self) -> bool:
        return self.default is ...


@dataclass(frozen=True)
class Action:
    """An action of the language: its name, arguments and what it does."""

    name: str
    params: tuple[Param, ...]
    doc: str

    def signature(self) -> str:
        parts = [p.name if p.required else f"{p.name}={p.default!r}" for p in self.params]
        return f"{self.name}({', '.join(parts)})"


_ID = Param("id", "string", "the element's id, the number in [brackets] in the observation")


def _action(name: str, doc: str, *params: Param) -> Action:
    return Action(name, params, doc)


ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        _action("click", "click an element", _ID),
        _action("dblclick", "double-click an element", _ID),
        _action("hover", "move the mouse over an element", _ID),
        _action(
            "fill",
            "clear a text field and type text into it",
            _ID,
            Param("text", "string", "the text"),
        ),
        _action(
            "select",
            "choose an option of a drop-down list, by its label or value",
            _ID,
            Param("option", "string", "the option's label or value"),
        ),
        _action("check", "tick a checkbox or radio button", _ID),
        _action("uncheck", "untick a checkbox", _ID),
        _action(
            "press",
            "press a key or a combination on the focused element",
            Param("key", "string", "a key name such as 'Enter', 'Tab', 'ArrowDown', 'Control+a'"),
        ),
        _action("type", "type text into the focused element", Param("text", "string", "the text")),
        _action(
            "scroll",
            "scroll the page",
            Param("direction", "string", "'up', 'down', 'left' or 'right'"),
            Param("pixels", "integer", "how far", 400),
        ),
        _action(
            "mouse_click",
            "click at a point of the viewport (CSS pixels from its top left corner)",
            Param("x", "number", "pixels from the left"),
            Param("y", "number", "pixels from the top"),
        ),
        _action(
            "goto",
            "open a URL of the task's sites (a path such as '/shop/cart' is enough)",
            Param("url", "string", "the URL or path"),
        ),
        _action("go_back", "go back one page in this tab's history"),
        _action("go_forward", "go forward one page in this tab's history"),
        _action(
            "new_tab",
            "open a new tab, at a URL of the task's sites if given",
            Param("url", "string", "the URL or path", ""),
        ),
        _action(
            "tab_focus",
            "switch to a tab by its index (0 is the first)",
            Param("index", "integer", "the tab's index"),
        ),
        _action("tab_close", "close the current tab (not the last one)"),
        _action("noop", "do nothing and look again (for pages that change by themselves)"),
        _action(
            "answer",
            "give the final answer to the task and end the episode",
            Param("text", "string", "the answer"),
        ),
        _action(
            "report_infeasible",
            "say that the task cannot be done, and why; ends the episode",
            Param("reason", "string", "why it cannot be done"),
        ),
    )
}
"""Every action, by name."""


def tools_of(table: Mapping[str, Action]) -> list[dict[str, Any]]:
    """The actions of ``table`` as JSON-schema tools (OpenAI's function format), declared the
    project's one way (:func:`agentgym.spaces.tool`): an argument with a default is optional."""
    return [
        tool(
            a.name,
            a.doc,
            {
                p.name: {"type": p.type, "description": p.doc}
                | ({} if p.required else {"default": p.default})
                for p in a.params
            },
            optional=[p.name for p in a.params if not p.required],
        )
        for a in table.values()
    ]


TOOLS: list[dict[str, Any]] = tools_of(ACTIONS)
"""The actions as JSON-schema tools (:func:`tools_of`)."""

_TOOL_SPACE = ToolCall(TOOLS)


def describe_actions(names: Any = None, table: Mapping[str, Action] = ACTIONS) -> str:
    """The action language as a prompt reads it: one line per action (of ``table``, another
    language built of :class:`Action`\\ s, such as the pixel family's)."""
    chosen = [table[n] for n in names] if names is not None else list(table.values())
    width = max(len(a.signature()) for a in chosen)
    return "\n".join(f"  {a.signature():<{width}}  {a.doc}" for a in chosen)


def format_action(name: str, *args: Any, table: Mapping[str, Action] = ACTIONS) -> str:
    """An action as text, quoted correctly: ``format_action("fill", "9", 'say "hi"')``."""
    if name not in table:
        raise ValueError(f"unknown action {name!r}; actions: {', '.join(table)}")
    return f"{name}({', '.join(json.dumps(a) for a in args)})"


def parse(
    text: str, allowed: Any = None, table: Mapping[str, Action] = ACTIONS
) -> tuple[str, dict[str, Any]]:
    """``(name, arguments)`` of one action, checked; :class:`InvalidAction` if it is not one.

    ``allowed`` restricts the language to some action names (an env's subset); ``table`` is
    the language (another one built of :class:`Action`\\ s reads the same way).
    """
    body = _strip(text)
    if body.startswith("{"):
        space = _TOOL_SPACE if table is ACTIONS else ToolCall(tools_of(table))
        name, arguments = parse_tool_call(body, space)
    else:
        try:
            name, arguments = _parse_call(body, table)
        except InvalidAction:
            # A model's reply: reasoning, then the action on a line of its own.
            found = _last_call_in(body, table)
            if found is None:
                raise
            name, arguments = found
    action = table.get(name)
    if action is None or (allowed is not None and name not in allowed):
        names = ", ".join(allowed if allowed is not None else table)
        raise InvalidAction(f"unknown action {name!r}; the actions are: {names}")
    return name, _bind(action, arguments)


def _strip(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return body.strip().strip("`").strip()


@functools.cache
def _call_line(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"^(?:[A-Za-z ]{1,20}:\s*)?\W{0,3}(" + "|".join(names) + r")\(.*\)\W{0,3}$")


def _last_call_in(body: str, table: Mapping[str, Action]) -> tuple[str, dict[str, Any]] | None:
    """The last line of a longer text that is an action call by itself (after a label such as
    ``Action:``, in backticks or not), parsed."""
    call_line = _call_line(tuple(table))
    for line in reversed(body.splitlines()):
        match = call_line.match(line.strip())
        if match:
            start = line.index(match.group(1))
            end = line.rindex(")") + 1
            try:
                return _parse_call(line[start:end], table)
            except InvalidAction:
                continue
    return None


def _parse_call(body: str, table: Mapping[str, Action]) -> tuple[str, dict[str, Any]]:
    example = 'one action such as click("12") or fill("9", "some text")'
    try:
        tree = ast.parse(body, mode="eval")
    except SyntaxError as error:
        raise InvalidAction(f"{body[:80]!r} is not a call ({error.msg}); write {example}") from None
    except (RecursionError, MemoryError, ValueError):  # nested past the parser's stack; NUL
        raise InvalidAction(f"{body[:80]!r} is not a call; write {example}") from None
    node = tree.body
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise InvalidAction(f"{body[:80]!r} is not a call; write {example}")
    name = node.func.id
    if name not in table:
        raise InvalidAction(f"unknown action {name!r}; the actions are: {', '.join(table)}")
    try:
        # Cleaned: a "\ud800" escape in a literal decodes to a lone surrogate.
        args = [clean_action(ast.literal_eval(a)) for a in node.args]
        kwargs = {k.arg: clean_action(ast.literal_eval(k.value)) for k in node.keywords if k.arg}
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):  # {[1]: 2}
        raise InvalidAction(
            f"the arguments of {name} must be literal values (strings, numbers): {body[:80]!r}"
        ) from None
    if any(k.arg is None for k in node.keywords):
        raise InvalidAction(f"{name}: '**' arguments are not allowed")
    params = table[name].params
    if len(args) > len(params):
        raise InvalidAction(
            f"{name} takes {len(params)} argument(s), got {len(args)}: {table[name].signature()}"
        )
    bound = {p.name: value for p, value in zip(params, args, strict=False)}
    for key, value in kwargs.items():
        if key in bound:
            raise InvalidAction(f"{name}: argument {key!r} given twice")
        bound[key] = value
    return name, bound


def _bind(action: Action, arguments: Mapping[str, Any]) -> dict[str, Any]:
    known = {p.name: p for p in action.params}
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise InvalidAction(
            f"{action.name} has no argument {unknown[0]!r}; write {action.signature()}"
        )
    bound: dict[str, Any] = {}
    for param in action.params:
        if param.name not in arguments:
            if param.required:
                raise InvalidAction(
                    f"{action.name} needs its {param.name!r} argument: {action.signature()}"
                )
            bound[param.name] = param.default
            continue
        bound[param.name] = _coerce(action, param, arguments[param.name])
    return bound


def _coerce(action: Action, param: Param, value: Any) -> Any:
    if param.type == "string":
        if param is _ID and isinstance(value, int) and not isinstance(value, bool):
            return str(value)  # click(12) means click("12")
        if isinstance(value, str):
            return value
    elif param.type == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise InvalidAction(
        f"{action.name}: {param.name} must be a {param.type}, got {value!r}; "
        f"write {action.signature()}"
    )
