"""The desktop's accessibility tree as text with element ids, and element actions as pixels.

A text-only agent cannot read a screenshot; GTK applications describe their windows through
AT-SPI (buttons, menus, text areas, with names, states and screen positions). This module
shows that description as indented lines, one element each::

    [e1] application "mousepad"
      [e2] frame "Untitled 1 - Mousepad" (active)
        [e3] menu bar
          [e4] menu "File"
          ...
            [e11] text (focused, editable): "Dear Sam,\\nthe garden..."

and turns an action on an element id (``click_element("e4")``, ``type_into("e11", "hi")``)
into the pixel actions of :mod:`~agentgym.envs.gui.pixel_actions` at the element's centre, so
the desktop is driven through XTEST either way and the verdict never depends on the view.

**The bus.** A desktop made with ``Desktop(accessible=True)`` runs a D-Bus daemon of its own
as its uid (:func:`bus_command`; the socket lies in its private runtime directory) and AT-SPI's
registry on it (:func:`registry_command`, waited for by :func:`wait_for_registry`), and gives
its applications ``AT_SPI_BUS_ADDRESS`` (:func:`bus_env`): GTK's accessibility bridge joins
that bus directly, with no session bus. The daemon takes anonymous clients: the sandbox uids
have no ``/etc/passwd`` entry, and dbus-daemon refuses a uid it cannot look up.

**The dump.** :func:`snapshot` runs ``a11y_dump.py`` with the system python (its ``gi`` and
Atspi bindings are Debian's, not the virtualenv's) as the desktop's uid in its namespaces
(:meth:`Desktop.run`), and parses the JSON it prints. Every D-Bus call of the dump has a
timeout, an application that misses one is shown as not answering, and the walk stops at a
node budget and a deadline: a busy or hung application costs the agent part of the view,
never the episode.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS, format_pixel
from agentgym.envs.gui.x11 import DesktopCrashedError
from agentgym.envs.web import actions as web_actions
from agentgym.envs.web.actions import Action, Param
from agentgym.errors import SandboxUnavailableError, UsageError
from agentgym.task_env import InvalidAction

__all__ = [
    "A11Y_ACTIONS",
    "A11Y_TOOLS",
    "A11yTree",
    "Element",
    "a11y_problem",
    "action_syntax",
    "bus_command",
    "bus_env",
    "click_element",
    "snapshot",
    "to_pixel",
    "translate",
    "type_into",
]

SYSTEM_PYTHON = "/usr/bin/python3"
"""The interpreter with Debian's AT-SPI bindings (``python3-gi``, ``gir1.2-atspi-2.0``)."""

REGISTRY_PATHS = ("/usr/libexec/at-spi2-registryd", "/usr/lib/at-spi2-core/at-spi2-registryd")
"""Where distributions put AT-SPI's registry daemon (Debian: the first)."""

DUMP_TIMEOUT = 5.0
"""Seconds a dump may take before it is killed (it stops itself at :data:`LIMITS`' seconds)."""

LIMITS = {"nodes": 2000, "children": 400, "text": 2000, "seconds": 3.0, "call_ms": 500}
"""The dump's budget: elements in all, children read per element, characters of an
element's text and name, seconds for the walk, milliseconds for one D-Bus call."""

OUTPUT_LIMIT = 8 << 20
"""Bytes of JSON a dump may print (2000 elements of 2000 characters fit)."""

TEXT_SHOWN = 1000
"""Characters of an element's text the view shows (the rest is cut with an ellipsis)."""

STRUCTURAL = frozenset(
    {
        "filler",
        "panel",
        "scroll pane",
        "viewport",
        "split pane",
        "layered pane",
        "page tab",
        "section",
        "unknown",
        "redundant object",
    }
)
"""Roles that only lay others out: without a name, text or value they are not shown, and
their children are shown in their place."""

EMPTY_LEAVES = frozenset({"table cell", "label", "icon", "image", "separator"})
"""Roles not shown when they have neither a name, text, value nor children: nothing to read,
nothing that a click on them does which a named element next to them does not."""

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>accessibility</type>
  <listen>unix:path={socket}</listen>
  <auth>ANONYMOUS</auth>
  <allow_anonymous/>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
"""The accessibility bus: at-spi2-core's own policy (anyone may own and send anything: the
socket is reachable by the desktop's uid alone), with anonymous authentication."""


# ------------------------------------------------------------------ the bus


@functools.cache
def a11y_problem() -> str | None:
    """Why no accessibility view can work here (a missing program or binding), or None."""
    if shutil.which("dbus-daemon") is None or _registry() is None:
        return "the accessibility view needs dbus-daemon and at-spi2-core: apt-get install them"
    probe = "import gi; gi.require_version('Atspi', '2.0'); from gi.repository import Atspi"
    try:
        subprocess.run(
            [SYSTEM_PYTHON, "-I", "-c", probe], check=True, capture_output=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return (
            f"the accessibility view needs {SYSTEM_PYTHON} with Debian's python3-gi and "
            f"gir1.2-atspi-2.0"
        )
    return None


def _registry() -> str | None:
    return next((p for p in REGISTRY_PATHS if Path(p).is_file()), None)


def bus_socket(runtime: Path) -> Path:
    """The bus's socket, in the desktop's runtime directory (mode 700, the uid's)."""
    return runtime / "at-spi-bus"


def bus_command(root: Path, runtime: Path) -> tuple[tuple[str, ...], str]:
    """Write the bus's configuration under ``root`` (the desktop's, readable by its uid) and
    return the daemon's command line and the bus's address; SandboxUnavailableError where
    :func:`a11y_problem` finds one."""
    problem = a11y_problem()
    if problem:
        raise SandboxUnavailableError(problem)
    config = root / "a11y-bus.conf"
    config.write_text(BUS_CONFIG.format(socket=bus_socket(runtime)))
    config.chmod(0o644)
    argv = ("dbus-daemon", "--nofork", "--nopidfile", f"--config-file={config}")
    return argv, f"unix:path={bus_socket(runtime)}"


def registry_command() -> tuple[str, ...]:
    """AT-SPI's registry daemon, which lists the applications on the bus. The desktop starts
    it as one of its own processes rather than letting the bus start it on demand: a child
    of the bus that :meth:`Desktop.reset` killed would be reaped late by the host's init
    (reset took 1.8 s instead of 0.2)."""
    registry = _registry()
    if registry is None:
        raise SandboxUnavailableError(a11y_problem() or "at-spi2-registryd is missing")
    return (registry,)


def wait_for_registry(desktop: AccessibleDesktop, timeout: float) -> None:
    """Wait until the registry answers on the bus, so the applications launched next are
    listed (one started before it never is); DesktopCrashedError after ``timeout``."""
    argv = (SYSTEM_PYTHON, "-I", "-c", _dumper(), json.dumps(LIMITS | {"ready_within": timeout}))
    status, output = desktop.run(argv, timeout=timeout + DUMP_TIMEOUT)
    try:
        ready = status == 0 and json.loads(output).get("ready") is True
    except ValueError:
        ready = False
    if not ready:
        raise DesktopCrashedError(
            f"the accessibility registry of display :{desktop.number} did not answer in "
            f"{timeout:.0f} s (its errors are in the desktop's log)"
        )


def bus_env(address: str) -> dict[str, str]:
    """The applications' environment for the bus: GTK 3's built-in bridge and GTK 2's
    modules (pcmanfm) join it."""
    return {"AT_SPI_BUS_ADDRESS": address, "GTK_MODULES": "gail:atk-bridge"}


# ------------------------------------------------------------------ the tree


@dataclass(frozen=True)
class Element:
    """One element of the view: its id (``e12``), what AT-SPI says of it, its depth in the
    view, and its screen bounds ``(x, y, width, height)`` (None: AT-SPI gave none)."""

    id: str
    role: str
    name: str
    states: tuple[str, ...]
    bounds: tuple[int, int, int, int] | None
    text: str | None
    value: float | None
    depth: int

    def line(self) -> str:
        """The element as the view shows it: ``[e12] push button "Save" (focused)``."""
        parts = [f"[{self.id}] {self.role}"]
        if self.name:
            parts.append(_quote(self.name))
        if self.states:
            parts.append(f"({', '.join(self.states)})")
        line = " ".join(parts)
        if self.text is not None:
            line += f": {_quote(_cut(self.text, TEXT_SHOWN))}"
        if self.value is not None:
            line += f" = {self.value:g}"
        return "  " * self.depth + line


@dataclass(frozen=True)
class A11yTree:
    """One snapshot of the desktop's accessibility tree: the shown elements in order (ids
    ``e1``, ``e2``... in that order, fixed for the snapshot), the screen's size, whether the
    dump hit its budget, and the applications that did not answer."""

    elements: tuple[Element, ...]
    width: int
    height: int
    truncated: bool = False
    silent: tuple[str, ...] = ()

    @classmethod
    def from_dump(cls, dump: Mapping[str, Any], width: int, height: int) -> A11yTree:
        """The view of ``a11y_dump.py``'s output (its ``apps``)."""
        elements: list[Element] = []
        silent = []
        for app in dump.get("apps", ()):
            if app.get("error"):
                silent.append(f"{app.get('name') or 'an application'} ({app['error']})")
            if app.get("children"):
                _add(app, 0, "", elements)
        return cls(tuple(elements), width, height, bool(dump.get("truncated")), tuple(silent))

    def text(self) -> str:
        """The view: one line per element, indented by depth."""
        lines = [e.line() for e in self.elements] or ["(no application shows an element)"]
        if self.truncated:
            lines.append("(the view is cut short: the desktop shows more than it can list)")
        lines += [f"(not answering: {who})" for who in self.silent]
        return "\n".join(lines)

    def element(self, id: str) -> Element:
        """The element ``id`` (``e12``; ``12`` and ``[e12]`` are read as ``e12``); an
        InvalidAction naming it if the snapshot has none."""
        key = str(id).strip().strip("[]").lower()
        key = key if key.startswith("e") else f"e{key}"
        for element in self.elements:
            if element.id == key:
                return element
        last = f"e1 to e{len(self.elements)}" if self.elements else "none"
        raise InvalidAction(f"no element {id!r} in the view (its ids: {last})")

    def find(self, role: str | None = None, name: str | None = None) -> list[Element]:
        """The elements with ``role`` and ``name`` (either may be left out), in order."""
        return [
            e
            for e in self.elements
            if (role is None or e.role == role) and (name is None or e.name == name)
        ]

    def centre(self, id: str) -> tuple[int, int]:
        """The centre of the part of element ``id`` that lies on the screen; an
        InvalidAction if none does."""
        element = self.element(id)
        if element.bounds is not None:
            x, y, w, h = element.bounds
            left, right = max(x, 0), min(x + w, self.width)
            top, bottom = max(y, 0), min(y + h, self.height)
            if left < right and top < bottom:
                return (left + right - 1) // 2, (top + bottom - 1) // 2
        raise InvalidAction(
            f"element {element.id} ({element.role}) has no place on the screen to click; "
            f"act on another element or use the keyboard"
        )


def _add(node: Mapping[str, Any], depth: int, parent: str, out: list[Element]) -> None:
    """Append ``node`` (unless :func:`_hidden`) and its descendants."""
    name = " ".join(str(node.get("name") or "").split())  # menu items pad theirs
    role = str(node.get("role") or "unknown")
    text, value = node.get("text"), node.get("value")
    states = tuple(str(s) for s in node.get("states", ()))
    if not name and text is not None and "editable" not in states:
        name, text = " ".join(str(text).split()), None  # an icon's text names it
    hidden = _hidden(role, name, text is not None or value is not None, node, parent)
    if not hidden:
        bounds = node.get("bounds")
        x, y, w, h = (int(b) for b in bounds) if bounds else (0, 0, 0, 0)
        out.append(
            Element(
                id=f"e{len(out) + 1}",
                role=role,
                name=name,
                states=states,
                bounds=(x, y, w, h) if bounds else None,
                text=None if text is None else str(text),
                value=None if value is None else float(value),
                depth=depth,
            )
        )
    for child in node.get("children", ()):
        _add(child, depth if hidden else depth + 1, parent if hidden else name, out)


def _hidden(role: str, name: str, content: bool, node: Mapping[str, Any], parent: str) -> bool:
    """Whether the view leaves an element out (its children still shown): an unnamed
    layout container, an unnamed empty leaf, or a label repeating its parent's name."""
    if name or content:
        return role == "label" and name == parent and not content
    return role in STRUCTURAL or (role in EMPTY_LEAVES and not node.get("children"))


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\u2026"


# ------------------------------------------------------------------ the dump


class AccessibleDesktop(Protocol):
    """What :func:`snapshot` needs of a :class:`~agentgym.envs.gui.desktop.Desktop`."""

    number: int | None
    width: int
    height: int
    a11y_bus: str | None

    def run(
        self, argv: Sequence[str], timeout: float = ..., limit: int = ...
    ) -> tuple[int | None, bytes]: ...

    def check(self) -> None: ...


@functools.cache
def _dumper() -> str:
    return Path(__file__).with_name("a11y_dump.py").read_text()


def snapshot(desktop: AccessibleDesktop, timeout: float = DUMP_TIMEOUT) -> A11yTree:
    """The desktop's accessibility tree now.

    UsageError for a desktop made without ``accessible=True``; DesktopCrashedError (an
    infrastructure error) if the dump fails, or prints no whole dump (killed at ``timeout``
    or at :data:`OUTPUT_LIMIT` bytes).
    """
    if desktop.a11y_bus is None:
        raise UsageError(
            f"desktop :{desktop.number} has no accessibility bus: make it with "
            f"Desktop(accessible=True)"
        )
    argv = (SYSTEM_PYTHON, "-I", "-c", _dumper(), json.dumps(LIMITS))
    status, output = desktop.run(argv, timeout=timeout, limit=OUTPUT_LIMIT)
    try:
        dump = json.loads(output) if status is not None else {"error": "no whole dump"}
    except ValueError:
        dump = {"error": f"the dump exited with status {status} and printed {output[:200]!r}"}
    if "error" in dump:
        desktop.check()  # a dead bus or registry names itself
        raise DesktopCrashedError(
            f"the accessibility tree of display :{desktop.number}: {dump['error']} (the "
            f"desktop's log has the details)"
        )
    return A11yTree.from_dump(dump, desktop.width, desktop.height)


# ------------------------------------------------------------------ element actions

_ID = Param("id", "string", "the element's id, as in the view's [brackets]: 'e12'")

A11Y_ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        Action("click_element", (_ID,), "left-click the middle of an element"),
        Action("double_click_element", (_ID,), "double-click an element (open a file)"),
        Action("right_click_element", (_ID,), "right-click an element (its context menu)"),
        Action(
            "type_into",
            (_ID, Param("text", "string", "the text")),
            "click an element (a text field) and type text there, after what it holds",
        ),
        PIXEL_ACTIONS["type"],
        PIXEL_ACTIONS["key"],
        PIXEL_ACTIONS["wait"],
    )
}
"""The actions on the accessibility view: on an element by id, and the keyboard."""

A11Y_TOOLS = web_actions.tools_of(A11Y_ACTIONS)
"""The same actions as JSON-schema tools, for function-calling agents."""

_LANGUAGE: dict[str, Action] = {**PIXEL_ACTIONS, **A11Y_ACTIONS}
"""Every action :func:`translate` can read."""

_CLICKS = {
    "click_element": "click",
    "double_click_element": "double_click",
    "right_click_element": "right_click",
    "type_into": "click",
}
"""The pixel click each element action starts with."""


def to_pixel(tree: A11yTree, name: str, args: Mapping[str, Any]) -> list[str]:
    """The pixel actions that carry out element action ``name`` with ``args`` (as
    :func:`agentgym.envs.web.actions.parse` binds them) on ``tree``; InvalidAction for an
    id the snapshot lacks or an element off the screen."""
    if name in _CLICKS:
        x, y = tree.centre(args["id"])
        click = format_pixel(_CLICKS[name], x, y)
        return [click, format_pixel("type", args["text"])] if name == "type_into" else [click]
    if name in PIXEL_ACTIONS:
        values = (int(v) if isinstance(v, float) and v.is_integer() else v for v in args.values())
        return [format_pixel(name, *values)]
    raise UsageError(f"unknown element action {name!r}: use one of {', '.join(A11Y_ACTIONS)}")


def translate(
    tree: A11yTree, action: str, allowed: Sequence[str] = tuple(A11Y_ACTIONS)
) -> list[str]:
    """An agent's action text (``click_element("e4")``, a JSON tool call, or a reply ending
    in one) as pixel actions; InvalidAction, with the right form, for a bad one.

    ``allowed`` names the actions accepted, of :data:`A11Y_ACTIONS` and the pixel language
    (which passes through as it is: an env may accept a template's ``click(x, y)`` oracle).
    """
    name, args = web_actions.parse(action, tuple(allowed), _LANGUAGE)
    return to_pixel(tree, name, args)


def action_syntax() -> str:
    """How the view's actions are written, for a prompt."""
    return (
        "The view lists the elements on the screen, one a line, each with an id in brackets "
        "([e4]). Act with one call per turn:\n"
        + web_actions.describe_actions(tuple(A11Y_ACTIONS), A11Y_ACTIONS)
        + '\nExample: click_element("e4"), type_into("e11", "hello"), key("Control+s").'
    )


def click_element(tree: A11yTree, id: str) -> list[str]:
    """``click(x, y)`` at the centre of element ``id``."""
    return to_pixel(tree, "click_element", {"id": id})


def type_into(tree: A11yTree, id: str, text: str) -> list[str]:
    """A click at the centre of element ``id``, then ``type(text)``."""
    return to_pixel(tree, "type_into", {"id": id, "text": text})
