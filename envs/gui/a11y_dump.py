"""Print a desktop's accessibility tree as one JSON object (read by :mod:`.a11y`).

Not imported by the product: :func:`agentgym.envs.gui.a11y.snapshot` runs this file's text
with the **system** python (``/usr/bin/python3 -I -c SOURCE LIMITS``), which has Debian's
``python3-gi`` and ``gir1.2-atspi-2.0`` (the project's virtualenv has neither), as the
desktop's uid, in its namespaces, with ``AT_SPI_BUS_ADDRESS`` naming the desktop's bus.

It walks AT-SPI's desktop: each application, then each element that is ``SHOWING`` (on
screen), skipping hidden subtrees (closed menus, other tabs). Every D-Bus call has a
timeout, and an application that fails one is cut short and marked, so a hung application
costs one timeout, not one per element; the walk also stops at a node budget and a deadline
(``LIMITS``, JSON; with ``ready_within`` it only waits that many seconds for the registry and
prints ``{"ready": bool}``). Output: ``{"apps": [node, ...], "truncated": bool}`` or ``{"error":
"..."}``, where a node is ``{"role", "name", "states", "bounds": [x, y, w, h], "text"?,
"value"?, "children": [...]}`` (bounds in screen pixels; ``"error"`` on an application that
stopped answering).
"""

import json
import sys
import time
from collections.abc import Iterator
from typing import Any

Node = dict[str, Any]


class NoAnswer(Exception):
    """A call timed out where AT-SPI gives no error (``get_state_set`` then returns no state)."""


STATES = ("focused", "selected", "checked", "pressed", "expanded", "editable", "active")
"""The states worth an agent's attention (``SHOWING`` is implied: nothing else is dumped)."""


CONTROLS = frozenset(
    {"combo box", "spin button", "slider", "check box", "radio button", "toggle button"}
)
"""Roles whose unnamed elements are named after the label they are labelled by."""


class Walk:
    """One dump: the AT-SPI module, the limits, and how much is spent."""

    def __init__(self, atspi: Any, error: type[Exception], limits: dict[str, Any]) -> None:
        self.atspi, self.error = atspi, error
        self.nodes_left = int(limits["nodes"])
        self.children_max = int(limits["children"])
        self.text_max = int(limits["text"])
        self.deadline = time.monotonic() + float(limits["seconds"])
        self.call_seconds = int(limits["call_ms"]) / 1000
        self.truncated = False
        self.wanted = {getattr(atspi.StateType, s.upper()): s for s in STATES}

    def spent(self) -> bool:
        """Whether the node budget or the deadline is used up (the dump is then cut)."""
        if self.nodes_left <= 0 or time.monotonic() > self.deadline:
            self.truncated = True
            return True
        return False

    def app(self, accessible: Any) -> Node:
        """An application and its showing windows; a failed call ends it with ``error``."""
        node: Node = {"role": "application", "name": "", "children": []}
        try:
            windows = list(self.children(accessible))  # the first call: may find it hung
            node["name"] = accessible.get_name() or ""
            for child in windows:
                shown = self.element(child)
                if shown is not None:
                    node["children"].append(shown)
        except self.error as failure:
            node["error"] = str(getattr(failure, "message", failure))
        except NoAnswer:
            node["error"] = f"no answer in {self.call_seconds:g} s"
            node["name"] = node["name"] or command_of(accessible)
        return node

    def element(self, accessible: Any) -> Node | None:
        """One showing element and its showing descendants, or None if it is not shown."""
        if self.spent():
            return None
        started = time.monotonic()
        states = accessible.get_state_set()
        if not states.get_states() and time.monotonic() - started >= 0.9 * self.call_seconds:
            raise NoAnswer
        if not states.contains(self.atspi.StateType.SHOWING):
            return None
        self.nodes_left -= 1
        node: Node = {
            "role": accessible.get_role_name(),
            "name": (accessible.get_name() or "")[: self.text_max],
            "states": [name for state, name in self.wanted.items() if states.contains(state)],
        }
        if not states.contains(self.atspi.StateType.SENSITIVE):
            node["states"].append("disabled")
        if not node["name"] and ("editable" in node["states"] or node["role"] in CONTROLS):
            node["name"] = self.label_of(accessible)
        interfaces = set(accessible.get_interfaces())
        if "Component" in interfaces:
            box = self.atspi.Component.get_extents(accessible, self.atspi.CoordType.SCREEN)
            node["bounds"] = [box.x, box.y, box.width, box.height]
        if "Text" in interfaces and (not node["name"] or "editable" in node["states"]):
            count = self.atspi.Text.get_character_count(accessible)
            text = self.atspi.Text.get_text(accessible, 0, min(count, self.text_max))
            if text and text != node["name"]:
                node["text"] = text + ("\u2026" if count > self.text_max else "")
        if "Value" in interfaces:
            node["value"] = self.atspi.Value.get_current_value(accessible)
        node["children"] = [c for c in map(self.element, self.children(accessible)) if c]
        return node

    def label_of(self, accessible: Any) -> str:
        """The name of the label an unnamed control is labelled by (GTK's "Name:" beside the
        file chooser's name field), or ''."""
        for relation in accessible.get_relation_set():
            if relation.get_relation_type() == self.atspi.RelationType.LABELLED_BY:
                for index in range(relation.get_n_targets()):
                    name = relation.get_target(index).get_name()
                    if name:
                        return str(name)
        return ""

    def children(self, accessible: Any) -> Iterator[Any]:
        """The first children of ``accessible`` (up to the limit); NoAnswer if it is hung."""
        count = accessible.get_child_count()
        if count < 0:  # AT-SPI's answer to a call that timed out
            raise NoAnswer
        if count > self.children_max:
            self.truncated = True
        for index in range(min(count, self.children_max)):
            child = accessible.get_child_at_index(index)
            if child is not None:
                yield child


def command_of(accessible: Any) -> str:
    """The command name of an application's process (the bus knows its pid), or ''."""
    try:
        with open(f"/proc/{accessible.get_process_id()}/comm") as comm:
            return comm.read().strip()
    except Exception:  # any failure: the name is only a courtesy
        return ""


def main() -> None:
    limits = json.loads(sys.argv[1])
    try:
        import gi

        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi, GLib
    except (ImportError, ValueError) as failure:
        print(json.dumps({"error": f"{sys.executable} has no AT-SPI binding: {failure}"}))
        return
    call_ms = int(limits["call_ms"])
    Atspi.set_timeout(call_ms, call_ms)
    if "ready_within" in limits:
        print(json.dumps({"ready": registry_ready(Atspi, float(limits["ready_within"]))}))
        return
    walk = Walk(Atspi, GLib.Error, limits)
    try:
        desktop = Atspi.get_desktop(0)
        apps = [walk.app(app) for app in walk.children(desktop)]
    except (GLib.Error, NoAnswer) as failure:
        why = getattr(failure, "message", "no answer")
        print(json.dumps({"error": f"the accessibility registry does not answer: {why}"}))
        return
    print(json.dumps({"apps": apps, "truncated": walk.truncated}))


def registry_ready(atspi: Any, seconds: float) -> bool:
    """Whether AT-SPI's registry answers on the bus within ``seconds`` (it lists the
    applications: one started before it would not be listed)."""
    deadline = time.monotonic() + seconds
    while atspi.get_desktop(0).get_child_count() < 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


if __name__ == "__main__":
    main()
