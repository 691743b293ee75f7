"""The accessibility view: AT-SPI's tree as text with element ids, element actions as pixel
actions at the element's centre, and a dump that neither hangs nor outlives its desktop."""

import os
import signal
import subprocess
import time

import pytest

pytest.importorskip("Xlib", reason="the desktop needs python-xlib (the gui extra)")

from agentgym.checker import check_leaks
from agentgym.envs.gui import a11y
from agentgym.envs.gui.a11y import (
    A11Y_ACTIONS,
    A11yTree,
    action_syntax,
    click_element,
    snapshot,
    translate,
    type_into,
)
from agentgym.envs.gui.desktop import Desktop, desktop_problem
from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS
from agentgym.envs.gui.x11 import DesktopCrashedError
from agentgym.envs.web import actions as web_actions
from agentgym.errors import UsageError
from agentgym.sandbox.uids import left_behind, processes_of
from agentgym.task_env import InvalidAction

DEADLINE = 10.0

no_desktop = pytest.mark.skipif(
    desktop_problem() is not None or a11y.a11y_problem() is not None,
    reason=f"no accessible desktop here: {desktop_problem() or a11y.a11y_problem()}",
)


def node(role, name="", children=(), **fields):
    return {"role": role, "name": name, "states": [], "children": list(children), **fields}


DUMP = {
    "apps": [
        node(
            "application",
            "editor",
            [
                node(
                    "frame",
                    "notes.txt - Editor",
                    [
                        node(
                            "filler",
                            "",
                            [
                                node("menu", "File", bounds=[10, 20, 40, 20]),
                                node("push button", 'Say "hi"', bounds=[60, 20, 30, 20]),
                            ],
                            bounds=[0, 0, 800, 40],
                        ),
                        node(
                            "text",
                            "",
                            states=["focused", "editable"],
                            text="line one\nline two",
                            bounds=[0, 40, 800, 560],
                        ),
                        node("icon", "", text="notes.txt", bounds=[900, 500, 300, 300]),
                        node("table cell", "", bounds=[0, 0, 5, 5]),
                        node("status bar", "2 items", [node("label", "2 items")]),
                        node("scroll bar", "", value=40.0, bounds=[-50, -50, 20, 20]),
                    ],
                    states=["active"],
                    bounds=[0, 0, 800, 600],
                )
            ],
        ),
        node("application", "hung", error="no answer in 0.5 s"),
    ],
    "truncated": False,
}

VIEW = """\
[e1] application "editor"
  [e2] frame "notes.txt - Editor" (active)
    [e3] menu "File"
    [e4] push button "Say \\"hi\\""
    [e5] text (focused, editable): "line one\\nline two"
    [e6] icon "notes.txt"
    [e7] status bar "2 items"
    [e8] scroll bar = 40
(not answering: hung (no answer in 0.5 s))"""


# ------------------------------------------------------------------ the view, pure


def test_the_view_lists_shown_elements_with_ids_indented_by_depth():
    tree = A11yTree.from_dump(DUMP, 1024, 768)
    assert tree.text() == VIEW
    # Layout fillers, empty cells and a label repeating its parent are left out; ids count
    # the shown elements only, and the elements keep their bounds.
    assert [e.id for e in tree.elements] == [f"e{i}" for i in range(1, 9)]
    assert tree.element("e3").bounds == (10, 20, 40, 20)
    assert tree.find(role="text")[0].text == "line one\nline two"


def test_element_actions_become_pixel_actions_at_the_visible_centre():
    tree = A11yTree.from_dump(DUMP, 1024, 768)
    assert click_element(tree, "e3") == ["click(29, 29)"]
    assert type_into(tree, "e5", 'a "b"') == ["click(399, 319)", 'type("a \\"b\\"")']
    assert click_element(tree, "e6") == ["click(961, 633)"]  # the on-screen part's centre
    assert translate(tree, 'double_click_element("e6")') == ["double_click(961, 633)"]
    assert translate(tree, "right_click_element('e3')") == ["right_click(29, 29)"]
    assert translate(tree, 'I open the menu.\nclick_element("[e3]")') == ["click(29, 29)"]
    assert translate(tree, 'click_element("3")') == ["click(29, 29)"]
    assert translate(tree, 'key("Control+s")') == ['key("Control+s")']
    assert translate(tree, '{"name": "type", "arguments": {"text": "x"}}') == ['type("x")']
    call = '{"name": "click_element", "arguments": {"id": "e3"}}'
    assert translate(tree, call) == ["click(29, 29)"]
    assert [t["name"] for t in a11y.A11Y_TOOLS] == list(A11Y_ACTIONS)
    for pixel in translate(tree, 'type_into("e5", "hi")'):  # the pixel language reads them
        web_actions.parse(pixel, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)
    both = (*A11Y_ACTIONS, "click")  # an env may let a pixel oracle's clicks through
    assert translate(tree, "click(5, 6)", both) == ["click(5, 6)"]
    assert "click_element(id)" in action_syntax() and "type_into(id, text)" in action_syntax()


def test_a_bad_element_action_is_feedback_naming_the_value():
    tree = A11yTree.from_dump(DUMP, 1024, 768)
    with pytest.raises(InvalidAction, match=r"no element 'e99' in the view \(its ids: e1 to e8\)"):
        click_element(tree, "e99")
    with pytest.raises(InvalidAction, match=r"e8 \(scroll bar\) has no place on the screen"):
        click_element(tree, "e8")
    with pytest.raises(InvalidAction, match="unknown action 'click'"):
        translate(tree, "click(10, 20)")
    with pytest.raises(InvalidAction, match="type_into needs its 'text' argument"):
        translate(tree, 'type_into("e5")')
    empty = A11yTree.from_dump({"apps": []}, 1024, 768)
    assert empty.text() == "(no application shows an element)"
    with pytest.raises(InvalidAction, match="its ids: none"):
        click_element(empty, "e1")


# ------------------------------------------------------------------ on a desktop


def wait_for(condition, what, timeout=DEADLINE):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def perform(desktop, pixel_actions):
    """Carry out pixel actions as the desktop env does (click and type through XTEST)."""
    for action in pixel_actions:
        name, args = web_actions.parse(action, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)
        if name == "type":
            desktop.screen.type_text(args["text"])
        else:
            button = "right" if name == "right_click" else "left"
            count = 2 if name == "double_click" else 1
            desktop.screen.click(int(args["x"]), int(args["y"]), button, count)


@pytest.fixture(scope="module")
def desktop():
    if desktop_problem() or a11y.a11y_problem():
        pytest.skip(f"no accessible desktop here: {desktop_problem() or a11y.a11y_problem()}")
    with Desktop(accessible=True, files={"docs/plan.txt": "x"}) as desktop:
        yield desktop


@no_desktop
def test_mousepad_is_read_and_driven_by_element_ids_alone(desktop):
    desktop.reset(["mousepad"])
    tree = snapshot(desktop)
    assert [e.name for e in tree.find(role="menu")][:3] == ["File", "Edit", "Search"]
    area = wait_for(lambda: snapshot(desktop).find(role="text"), "the text area")[0]
    assert "editable" in area.states and area.text is None
    perform(desktop, type_into(tree, area.id, "Hello there"))
    written = wait_for(lambda: snapshot(desktop).find(role="text")[0].text, "the typed text")
    assert written == "Hello there"
    perform(desktop, click_element(tree, tree.find(role="menu", name="File")[0].id))
    items = wait_for(lambda: snapshot(desktop).find(role="menu item"), "the File menu's items")
    assert {"Save As...", "Quit"} <= {item.name for item in items}
    opened = snapshot(desktop)
    save_as = next(i for i in opened.find(role="menu item") if i.name.startswith("Save As"))
    perform(desktop, click_element(opened, save_as.id))
    wait_for(lambda: len(desktop.screen.windows()) == 2, "the Save As dialog")
    chooser = wait_for(lambda: snapshot(desktop).find(name="Save As"), "the dialog's elements")
    assert chooser[0].role == "file chooser"
    tree = snapshot(desktop)  # GTK's name field has the focus; Save waits for a name
    name_field = next(e for e in tree.find(role="text") if "focused" in e.states)
    perform(desktop, type_into(tree, name_field.id, "by-id.txt"))
    wait_for(lambda: "disabled" not in snapshot(desktop).find(name="Save")[0].states, "Save")
    tree = snapshot(desktop)
    perform(desktop, click_element(tree, tree.find(role="push button", name="Save")[0].id))
    saved = desktop.home / "by-id.txt"
    wait_for(lambda: saved.exists() and saved.read_text() == "Hello there", "the saved file")


@no_desktop
@pytest.mark.parametrize(
    ("app", "expected"),
    [("gnumeric", {("menu", "Data"), ("page tab", "Sheet1"), ("push button", "Sum")}),
     ("pcmanfm", {("menu", "Bookmarks"), ("push button", "Places"), ("icon", "docs")})],
)  # fmt: skip
def test_gnumeric_and_pcmanfm_show_their_trees(desktop, app, expected):
    desktop.reset([app])
    shown = wait_for(
        lambda: expected <= {(e.role, e.name) for e in snapshot(desktop).elements},
        f"{app}'s elements",
    )
    assert shown


@no_desktop
def test_a_hung_application_costs_part_of_the_view_not_the_episode(desktop):
    desktop.reset(["mousepad"])
    wait_for(lambda: snapshot(desktop).find(role="text"), "the text area")
    pid = int(subprocess.check_output(["pgrep", "-u", str(desktop.uid), "-x", "mousepad"]))
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        tree = snapshot(desktop)
        assert time.monotonic() - started < 3 * a11y.LIMITS["call_ms"] / 1000 + 1
        assert tree.elements == () and tree.silent[0].startswith("mousepad (no answer in")
        assert "(not answering: mousepad" in tree.text()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert snapshot(desktop).find(role="text")


@no_desktop
def test_a_desktop_without_the_bus_is_a_clear_error_and_a_dead_bus_a_typed_one():
    with Desktop() as plain:
        plain.reset(["mousepad"])
        with pytest.raises(UsageError, match="has no accessibility bus: make it with"):
            snapshot(plain)
    with Desktop(accessible=True) as desktop:
        assert snapshot(desktop).text() == "(no application shows an element)"
        daemon = next(p for p in desktop._processes if p.app == "dbus-daemon")
        daemon.popen.kill()
        daemon.popen.wait()
        started = time.monotonic()
        with pytest.raises(DesktopCrashedError, match=r"dbus-daemon of display :\d+ was killed"):
            snapshot(desktop)  # the cause, not the dump's failure to connect
        assert time.monotonic() - started < a11y.DUMP_TIMEOUT


@no_desktop
def test_the_bus_and_the_registry_die_with_the_desktop():
    with Desktop(accessible=True) as desktop:
        desktop.reset(["mousepad"])
        wait_for(lambda: snapshot(desktop).find(role="text"), "the text area")
        daemons = [p for p in processes_of(desktop.uid) if command_of(p) != "mousepad"]
        assert sorted(map(command_of, daemons)) == [
            "Xvfb",
            "at-spi2-registr",
            "dbus-daemon",
            "openbox",
        ]
        desktop.reset(["mousepad"])  # reset keeps them: the registry need not start again
        assert set(daemons) < set(processes_of(desktop.uid))
    assert left_behind(desktop.uid) == [] and not desktop.root.exists()
    closed = []

    def touch(desktop, index):  # start, snapshot, close: no thread, descriptor or child left
        closed.append(desktop)
        assert snapshot(desktop).elements == ()

    check_leaks(lambda: Desktop(accessible=True), "accessible", cycles=5, seed=0, touch=touch)
    # (Not the uids' processes: the pool lends a freed uid to the next desktop, another test's.)
    assert [d for d in closed if d.root.exists()] == []


def command_of(pid):
    with open(f"/proc/{pid}/comm") as comm:
        return comm.read().strip()
