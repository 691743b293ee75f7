"""Pixel web: every web id as a screen, a mouse and a keyboard (``gui/<family>_<name>-vN``).

A pixel twin is its web env with another view and another hand: the same task, reset,
verifier and browser (the class is the web env's own class with :class:`PixelWebEnv` in front
of it), observed as a screenshot ``Box(H, W, 3, uint8)`` and acted on with
:mod:`~agentgym.envs.gui.pixel_actions` through Playwright's mouse and keyboard. The oracle is
the web task's, translated: the element its action names becomes the centre of the element's
box on the screen, a ``fill`` a click, ``Control+a`` and the typing, and so on
(:func:`pixel_plan`), so it acts through pixel actions only.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from agentgym.envs.gui.pixel_actions import (
    BROWSER_ACTIONS,
    PIXEL_ACTIONS,
    POINTER_ACTIONS,
    TABLE,
    format_pixel,
)
from agentgym.envs.web import actions as web_actions
from agentgym.envs.web.base import (
    FRAMES_JS,
    SCROLL_POSITIONS_JS,
    SCROLL_SETTLE_JS,
    WebEnv,
    WebWorld,
)
from agentgym.errors import UsageError
from agentgym.registry import spec
from agentgym.spaces import Text
from agentgym.task_env import InvalidAction

__all__ = ["DRAG_STEPS", "PixelWebEnv", "pixel_plan"]

DRAG_STEPS = 12
"""Intermediate mouse moves of a drag: drag-and-drop libraries (jQuery UI) start a drag only
after the pointer has moved with the button down, and follow it move by move."""


class PixelWebEnv(WebEnv):
    """The pixel twin of the web env ``web_id`` (see the module docstring and
    ``docs/envs/gui.md``).

    Args:
        web_id: the web or MiniWoB++ id this env is the twin of.
        page: instead of ``web_id``, a MiniWoB++ page that only a pointer can play
            (:data:`~agentgym.envs.gui.pixel_ids.POINTER_PAGES`; no web id is its text twin).
        with_text: observe a dict of the ``screenshot`` and the page's accessibility-tree
            ``text`` (ids in [brackets] to read, not to act on) instead of the screenshot alone.
        **kwargs: the web env's (``viewport``, ``set_of_marks``, ``split``, ...).
    """

    metadata: dict[str, Any] = {
        **WebEnv.metadata,
        "task_kwargs": ("web_id", "page"),
        "replay": "verdict",
        "multimodal": True,
    }

    def __new__(cls, *, web_id: str = "", page: str = "", **kwargs: Any) -> PixelWebEnv:
        # The twin is the web class with this one in front of it: every hook this class
        # leaves alone (tasks, start, is_over, the verifier) is the web env's own.
        if cls is PixelWebEnv:
            cls = _twin_class(_web_of(web_id, page)[0])
        return super().__new__(cls)

    def __init__(
        self, *, web_id: str = "", page: str = "", with_text: bool = False, **kwargs: Any
    ) -> None:
        web_class, web_kwargs = _web_of(web_id, page)
        self.web_id = web_id
        self.with_text = with_text
        super().__init__(**{**web_kwargs, **kwargs})
        allowed = self.action_names or tuple(web_actions.ACTIONS)
        self.pixel_names = (*PIXEL_ACTIONS, *(n for n in BROWSER_ACTIONS if n in allowed))
        self.tools = [t for t in web_actions.tools_of(TABLE) if t["name"] in self.pixel_names]
        from gymnasium import spaces

        from agentgym.spaces import ToolCall

        self.action_space = ToolCall(self.tools)
        width, height = self.viewport
        screen = spaces.Box(0, 255, (height, width, 3), np.uint8)
        observed: spaces.Space[Any] = (
            spaces.Dict({"screenshot": screen, "text": Text(self.max_observation_length)})
            if with_text
            else screen
        )
        self.observation_space = observed  # an image, where TaskEnv's is text
        web_metadata = getattr(web_class, "metadata", {})
        self.metadata = {**web_metadata, **self.metadata, **PixelWebEnv.metadata}
        self._mouse = (0.0, 0.0)
        self._plan: list[str] = []
        self._planned: str | None = None
        self._feedback = ""

    # ------------------------------------------------------------------ acting

    def act(self, world: WebWorld, action: str) -> str:
        # A screenshot cannot carry the step's feedback: it is kept for info["feedback"].
        self._feedback = ""
        try:
            name, arguments = web_actions.parse(action, self.pixel_names, TABLE)
            if name in POINTER_ACTIONS:
                self._check_points(name, arguments)
            feedback = world.perform(name, arguments, functools.partial(self._do, world))
        except InvalidAction as mistake:
            self._feedback = f"Invalid action: {mistake}"  # as TaskEnv.step words it
            raise
        # The history is the web task's to read (an oracle counts its own key presses in
        # it): an action that has a web form is written in it.
        web_form = _WEB_FORMS.get(name)
        world.history.append(
            web_actions.format_action(web_form, *arguments.values())
            if web_form
            else format_pixel(name, *arguments.values())
        )
        self._feedback = feedback
        return feedback

    def _check_points(self, name: str, arguments: dict[str, Any]) -> None:
        width, height = self.viewport
        points = [("x", "y")] if "x" in arguments else [("x1", "y1"), ("x2", "y2")]
        for x, y in points:
            if not (0 <= arguments[x] < width and 0 <= arguments[y] < height):
                raise InvalidAction(
                    f"{name}: ({arguments[x]:g}, {arguments[y]:g}) is outside the screen; "
                    f"x runs 0..{width - 1} and y 0..{height - 1}"
                )

    async def _do(self, world: WebWorld, name: str, args: dict[str, Any]) -> str:
        """Carry a pixel action out with Playwright's mouse and keyboard (a browser action
        goes to the web world's own hand)."""
        if name in BROWSER_ACTIONS:
            return await world._do(name, args)
        mouse, keyboard = world.page.mouse, world.page.keyboard
        if name in ("click", "move", "double_click", "right_click", "scroll"):
            await self._point(world, args["x"], args["y"])
        if name == "click":
            await mouse.down()
            await mouse.up()
        elif name == "double_click":
            await mouse.dblclick(args["x"], args["y"])
        elif name == "right_click":
            await mouse.click(args["x"], args["y"], button="right")
        elif name == "drag":
            await self._point(world, args["x1"], args["y1"])
            await mouse.down()
            await mouse.move(args["x2"], args["y2"], steps=DRAG_STEPS)
            await world._wait_in_page(FRAMES_JS)
            await mouse.up()
            self._mouse = (args["x2"], args["y2"])
        elif name == "scroll":
            before = await world._wait_in_page(SCROLL_POSITIONS_JS)
            await mouse.wheel(args["dx"], args["dy"])
            await world._wait_in_page(SCROLL_SETTLE_JS, before)
        elif name == "type":
            await keyboard.type(args["text"])
        elif name == "key":
            await keyboard.press(args["combo"])
        if name not in ("move", "scroll", "wait"):
            await _let_navigation_start(world)
        return f"{name}: done."

    async def _point(self, world: WebWorld, x: float, y: float) -> None:
        """Move the pointer to ``(x, y)`` and let the page react to the hover (styles, an
        image swapped in) before a button goes down, as the web family's ``mouse_click``."""
        await world.page.mouse.move(x, y)
        self._mouse = (x, y)
        await world._wait_in_page(FRAMES_JS)
        await world._settle()
        await world._wait_in_page(FRAMES_JS)

    def action_syntax(self) -> str:
        width, height = self.viewport
        return (
            f"The screen is {width} x {height} pixels; (0, 0) is its top left corner. Act with "
            f"one call per turn:\n"
            + web_actions.describe_actions(self.pixel_names, TABLE)
            + "\nExample: click(120, 45). Arguments are literals: strings in quotes, numbers."
        )

    # ------------------------------------------------------------------ observing

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._mouse, self._plan, self._planned = (0.0, 0.0), [], None
        return super().reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        if action != self._planned:  # the oracle's plan holds only while it is followed
            self._plan = []
        self._planned, self._feedback = None, ""
        observation, reward, terminated, truncated, info = super().step(action)
        info["feedback"] = self._feedback
        return observation, reward, terminated, truncated, info

    def _observation_of(self, text: str) -> Any:
        screenshot = self._screenshot_array(marks=self.set_of_marks)
        return {"screenshot": screenshot, "text": text} if self.with_text else screenshot

    # ------------------------------------------------------------------ oracle

    def oracle_action(self) -> Any:
        """The web task's oracle, in pixel actions: its next web action becomes a short plan
        (:func:`pixel_plan`), played one action a step."""
        if not self._plan:
            web_action = super().oracle_action()
            if web_action is None:
                return None
            assert self._world is not None
            self._plan = pixel_plan(self._world, web_action, self.viewport, self._mouse)
        self._planned = self._plan.pop(0)
        return self._planned


async def _let_navigation_start(world: WebWorld) -> None:
    """Give a page that a click or a key made navigate (a link, a form sent) the frames to
    start loading, then wait for it: Playwright's element clicks wait for the navigations
    they start, its raw mouse and keyboard do not, and a look at a page whose document is
    being replaced fails ("execution context was destroyed")."""
    await world._wait_in_page(FRAMES_JS)
    await world._settle()


def pixel_plan(
    world: WebWorld, web_action: str, viewport: tuple[int, int], mouse: tuple[float, float]
) -> list[str]:
    """The pixel actions that do what ``web_action`` does on the page the agent sees.

    An element action aims at the centre of the element's box in the latest snapshot; an
    element whose centre is off the screen is first scrolled to (the plan then ends: the
    oracle is asked again on the scrolled page).
    """
    try:
        name, args = web_actions.parse(web_action)
    except InvalidAction:  # an oracle of a pointer page speaks pixel actions already
        web_actions.parse(web_action, None, TABLE)
        return [web_action]
    if name in BROWSER_ACTIONS:
        return [web_action]
    if "id" in args:
        node = world.snapshot.get(args["id"])
        if node is None:
            raise LookupError(f"the web oracle's {web_action} names no element on the page")
        if name == "select" and _is_listbox(world, node.id):
            # A list shown open: its option is clicked where it shows, as an element is.
            options = [n for n in world.snapshot.nodes if n.parent == node.id]
            chosen = [n for n in options if args["option"] in (n.name, n.value)]
            if not chosen:
                raise LookupError(f"the list [{node.id}] shows no option {args['option']!r}")
            name, node = "click", chosen[0]
        x, y, w, h = node.box
        cx, cy = round(x + w / 2), round(y + h / 2)
        width, height = viewport
        if not (0 <= cx < width and 0 <= cy < height):
            return [_scroll_to(world, node.id, (cx, cy), viewport)]
        return _element_plan(world, name, args, node, (cx, cy))
    return [_pointless(name, args, mouse)]


def _is_listbox(world: WebWorld, node_id: str) -> bool:
    return bool(
        world.evaluate(
            '(id) => { const s = document.querySelector(`[data-agid="${id}"]`);'
            " return !!s && (s.multiple || s.size > 1); }",
            node_id.rsplit(".", 1)[-1],
        )
    )


SCROLLER_JS = """(id) => {
  const e = document.querySelector(`[data-agid="${id}"]`);
  let p = e && e.parentElement;
  const scrolls = (p) => p.scrollHeight > p.clientHeight + 1
    && /(auto|scroll)/.test(getComputedStyle(p).overflowY);
  while (p && p !== document.body && !scrolls(p)) p = p.parentElement;
  if (!p || p === document.body) return null;
  const r = p.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom];
}"""
"""The viewport box of the nearest scrolled box around an element (null: the page scrolls)."""


def _scroll_to(
    world: WebWorld, node_id: str, centre: tuple[int, int], viewport: tuple[int, int]
) -> str:
    """A wheel turn that brings an element's centre into view: over its scrolled box's
    visible middle (or the screen's), by the distance from there to the centre."""
    width, height = viewport
    found = world.evaluate(SCROLLER_JS, node_id.rsplit(".", 1)[-1])
    left, top, right, bottom = found if found else (0, 0, width, height)
    px = (max(left, 0) + min(right, width)) / 2
    py = (max(top, 0) + min(bottom, height)) / 2
    px, py = round(min(max(px, 0), width - 1)), round(min(max(py, 0), height - 1))
    cx, cy = centre
    dx = 0 if 0 <= cx < width else cx - px
    dy = 0 if 0 <= cy < height else cy - py
    return format_pixel("scroll", px, py, dx, dy)


COVERED_JS = """([id, x, y]) => {
  const e = document.querySelector(`[data-agid="${id}"]`);
  const hit = document.elementFromPoint(x, y);
  return !!(e && hit && !e.contains(hit) && !hit.contains(e));
}"""
"""Whether something else (a pop-up, a menu) lies over an element's centre."""


FREE_POINT_JS = """([x, y]) => {
  const cover = document.elementFromPoint(x, y);
  const active = 'a,button,input,select,textarea,label,canvas,svg,[onclick],[tabindex]';
  for (let py = 2; py < innerHeight; py += 8) for (let px = 2; px < innerWidth; px += 8) {
    const hit = document.elementFromPoint(px, py);
    if (hit && !hit.closest(active) && !(cover && cover.parentElement
        && cover.parentElement.contains(hit))) return [px, py];
  }
  return null;
}"""
"""A point of the page where a click does nothing (no control, not beside the element over
``(x, y)``): clicking there closes a pop-up that closes on a click outside it."""


def _element_plan(
    world: WebWorld, name: str, args: dict[str, Any], node: Any, centre: tuple[int, int]
) -> list[str]:
    cx, cy = centre
    escape = format_pixel("key", "Escape")
    covered = world.evaluate(COVERED_JS, [node.id.rsplit(".", 1)[-1], cx, cy])
    if covered:  # what a person does about a pop-up in the way: close it
        if world.history[-1:] != [web_actions.format_action("press", "Escape")]:
            return [escape]
        free = world.evaluate(FREE_POINT_JS, [cx, cy])
        if free:  # Escape left it open: click beside it
            return [format_pixel("click", *free)]
    if name in ("click", "check", "uncheck"):
        if name != "click" and node.checked == (name == "check"):
            return [format_pixel("wait")]
        return [format_pixel("click", cx, cy)]
    if name == "dblclick":
        return [format_pixel("double_click", cx, cy)]
    if name == "hover":
        return [format_pixel("move", cx, cy)]
    if name == "fill" and _input_type(world, node.id) == "date":
        return _date_plan(node, args["text"])
    if name == "fill":
        clear = format_pixel("key", "Control+a")
        text = args["text"]
        then = format_pixel("type", text) if text else format_pixel("key", "Delete")
        return [format_pixel("click", cx, cy), clear, then]
    if name == "select":
        return [format_pixel("click", cx, cy), *_select_keys(world, node.id, args["option"])]
    raise LookupError(f"the web action {name!r} has no pixel plan")


def _input_type(world: WebWorld, node_id: str) -> str:
    found = world.evaluate(
        "(id) => document.querySelector(`[data-agid=\"${id}\"]`)?.type ?? ''",
        node_id.rsplit(".", 1)[-1],
    )
    return str(found)


def _date_plan(node: Any, value: str) -> list[str]:
    """A date field takes keys segment by segment, in the locale's order (en-US: month, day,
    year), from the segment clicked: the first one, at the field's left edge."""
    year, month, day = value.split("-")
    x, y, w, h = node.box
    first = format_pixel("click", x + min(8, w // 4), round(y + h / 2))
    return [first, format_pixel("type", f"{month}{day}{year}")]


def _select_keys(world: WebWorld, node_id: str, option: str) -> list[str]:
    """The keys that move an open drop-down list from its chosen option to ``option`` (by
    label or value) and take it."""
    found = world.evaluate(
        """([id, option]) => { const s = document.querySelector(`[data-agid="${id}"]`);
          const i = [...s.options].findIndex((o) => o.label === option || o.value === option);
          return [s.selectedIndex, i]; }""",
        [node_id.rsplit(".", 1)[-1], option],
    )
    now, wanted = int(found[0]), int(found[1])
    if wanted < 0:
        raise LookupError(f"the drop-down list [{node_id}] has no option {option!r}")
    arrow = "ArrowDown" if wanted > now else "ArrowUp"
    return [format_pixel("key", arrow)] * abs(wanted - now) + [format_pixel("key", "Enter")]


_WEB_FORMS = {"click": "mouse_click", "key": "press", "type": "type", "wait": "noop"}
"""Pixel actions that are also web actions, by another name."""

_SCROLL = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}


def _pointless(name: str, args: dict[str, Any], mouse: tuple[float, float]) -> str:
    """A web action that names no element, as a pixel action."""
    if name == "press":
        return format_pixel("key", args["key"])
    if name == "type":
        return format_pixel("type", args["text"])
    if name == "noop":
        return format_pixel("wait")
    if name == "mouse_click":
        return format_pixel("click", args["x"], args["y"])
    if name == "scroll":
        dx, dy = _SCROLL[args["direction"]]
        return format_pixel("scroll", mouse[0], mouse[1], dx * args["pixels"], dy * args["pixels"])
    raise LookupError(f"the web action {name!r} has no pixel plan")


_TWINS: dict[type[WebEnv], type[PixelWebEnv]] = {}


def _web_of(web_id: str, page: str) -> tuple[type[WebEnv], dict[str, Any]]:
    """The web env class a twin stands in front of, and its constructor's arguments."""
    if page and isinstance(page, str) and not web_id:
        from agentgym.envs.gui.pixel_pages import PointerPagesEnv

        return PointerPagesEnv, {"task": page}
    if not isinstance(web_id, str) or not web_id or page:
        raise UsageError(
            "a pixel web env needs web_id='<a web or MiniWoB++ id>' or page='<a pointer page>' "
            f"(one of them), got web_id={web_id!r}, page={page!r}"
        )
    found = spec(web_id)
    web_class = found.load()
    if not (isinstance(web_class, type) and issubclass(web_class, WebEnv)):
        raise UsageError(f"{web_id} is not a web env ({web_class!r}); a pixel twin needs one")
    return web_class, dict(found.kwargs)


def _twin_class(web_class: type[WebEnv]) -> type[PixelWebEnv]:
    """``PixelMiniWoBEnv`` and the like: :class:`PixelWebEnv` in front of a web env class (one
    class per web class, made once)."""
    if web_class not in _TWINS:
        name = f"Pixel{web_class.__name__}"
        _TWINS[web_class] = type(name, (PixelWebEnv, web_class), {"__module__": __name__})
    return _TWINS[web_class]
