"""The pixel action language: a mouse and a keyboard, written as the web actions are.

::

    click(312, 88)        double_click(40, 120)      right_click(40, 120)
    move(200, 150)        drag(30, 40, 200, 40)      scroll(512, 400, 0, 600)
    type("red shirt")     key("Control+a")           wait()

Coordinates are CSS pixels of the viewport from its top left corner, as in the screenshot.
The text is read by the web family's parser (:func:`agentgym.envs.web.actions.parse` over
this table), so a mistake is feedback that shows the right form, never a crash. A few
actions have no pixel form in a headless browser, which shows the page and not its window:
``goto``, ``go_back`` and ``go_forward`` stand for the address bar and its arrows, and
``answer`` and ``report_infeasible`` end a task that asks for an answer; a twin offers them
only where its web env does.
"""

from __future__ import annotations

from typing import Any

from agentgym.envs.web import actions as web_actions
from agentgym.envs.web.actions import Action, Param

__all__ = ["BROWSER_ACTIONS", "PIXEL_ACTIONS", "POINTER_ACTIONS", "TABLE", "format_pixel"]

_X = Param("x", "number", "pixels from the left of the viewport")
_Y = Param("y", "number", "pixels from the top of the viewport")

PIXEL_ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        Action("click", (_X, _Y), "left-click at a point"),
        Action("double_click", (_X, _Y), "double-click at a point"),
        Action("right_click", (_X, _Y), "right-click at a point"),
        Action("move", (_X, _Y), "move the mouse to a point (hover)"),
        Action(
            "drag",
            (
                Param("x1", "number", "where the button goes down, from the left"),
                Param("y1", "number", "where the button goes down, from the top"),
                Param("x2", "number", "where it is released, from the left"),
                Param("y2", "number", "where it is released, from the top"),
            ),
            "press the left button at (x1, y1), move to (x2, y2) and release it there",
        ),
        Action(
            "scroll",
            (
                _X,
                _Y,
                Param("dx", "number", "pixels to the right (negative: left)"),
                Param("dy", "number", "pixels down (negative: up)"),
            ),
            "turn the mouse wheel with the pointer at a point",
        ),
        Action("type", (Param("text", "string", "the text"),), "type text with the keyboard"),
        Action(
            "key",
            (Param("combo", "string", "a key or combination: 'Enter', 'Tab', 'Control+a'"),),
            "press a key or a combination",
        ),
        Action("wait", (), "do nothing and look again (for pages that change by themselves)"),
    )
}
"""The mouse and keyboard actions, by name."""

POINTER_ACTIONS = ("click", "double_click", "right_click", "move", "drag", "scroll")
"""The actions that move the mouse (their coordinates must lie in the viewport)."""

BROWSER_ACTIONS = ("goto", "go_back", "go_forward", "answer", "report_infeasible")
"""Web actions without a pixel form, passed through where the web env offers them."""

TABLE: dict[str, Action] = {
    **PIXEL_ACTIONS,
    **{name: web_actions.ACTIONS[name] for name in BROWSER_ACTIONS},
}
"""The whole language a pixel twin reads (it offers a subset: :attr:`PixelWebEnv.pixel_names`)."""


def format_pixel(name: str, *args: Any) -> str:
    """A pixel action as text: ``format_pixel("click", 10, 20)`` -> ``click(10, 20)``."""
    return web_actions.format_action(name, *args, table=TABLE)
