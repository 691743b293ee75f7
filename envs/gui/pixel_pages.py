"""MiniWoB++ pages that only a mouse can play, brought in by the pixel twins.

The web family leaves these pages out (``agentgym.envs.web.miniwob_ids.EXCLUDED``): they
need a drag, which its action language has not. The pixel language has one, so each page
here gets a twin, ``gui/miniwob_<page>-v0``, with an oracle of its own that reads the page
(as the web oracles do) and acts through pixel actions only. The page, its seeding and its
reward are the web family's :class:`~agentgym.envs.web.miniwob.MiniWoBEnv`'s; only the list of
pages and the oracles differ (:class:`PointerPagesEnv`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from agentgym.core import GeneratedTaskSet
from agentgym.envs.gui.pixel_actions import format_pixel
from agentgym.envs.gui.pixel_ids import POINTER_PAGES
from agentgym.envs.web.base import WebWorld
from agentgym.envs.web.miniwob import MiniWoBEnv, MiniWoBTask, MiniWoBWorld

__all__ = ["PAGE_ORACLES", "PointerPageTask", "PointerPagesEnv"]

PageOracle = Callable[[MiniWoBWorld], "str | None"]

PAGE_ORACLES: dict[str, PageOracle] = {}
"""Page name -> its oracle: the next pixel action, decided from the current page."""


def _page_oracle(name: str) -> Callable[[PageOracle], PageOracle]:
    def add(function: PageOracle) -> PageOracle:
        PAGE_ORACLES[name] = function
        return function

    return add


class PointerPageTask(MiniWoBTask):
    """A seeded episode of a pointer page; its oracle is :data:`PAGE_ORACLES`'."""

    def solve(self, world: WebWorld) -> str | None:
        assert isinstance(world, MiniWoBWorld)
        if world.page_reward()[1]:
            return None
        return PAGE_ORACLES[self.name](world)


class PointerPagesEnv(MiniWoBEnv):
    """MiniWoB++ over the pages of :data:`~agentgym.envs.gui.pixel_ids.POINTER_PAGES`: only a
    pixel twin plays it (its oracle speaks pixel actions; no text id is registered)."""

    pages: ClassVar[tuple[str, ...]] = POINTER_PAGES

    def __init__(self, *, task: str = POINTER_PAGES[0], **kwargs: Any) -> None:
        super().__init__(task=task, **kwargs)
        self.tasks = GeneratedTaskSet(
            f"miniwob-{task}",
            lambda id, split, difficulty, seed: PointerPageTask(
                id, split, difficulty, seed, name=task
            ),
            ("default",),
        )
        self.metadata = {**self.metadata, "oracle": task in PAGE_ORACLES}


def _centre(world: MiniWoBWorld, selector: str) -> tuple[int, int]:
    """The centre of an element's box on the screen."""
    x, y = world.evaluate(
        """(s) => { const r = document.querySelector(s).getBoundingClientRect();
          return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)]; }""",
        selector,
    )
    return int(x), int(y)


GRAB_JS = """(s) => { const e = document.querySelector(s), r = e.getBoundingClientRect();
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
  const points = [];
  for (let y = r.top + 1; y < r.bottom; y += 1) for (let x = r.left + 1; x < r.right; x += 1)
    points.push([x, y]);
  points.sort((a, b) => Math.hypot(a[0] - cx, a[1] - cy) - Math.hypot(b[0] - cx, b[1] - cy));
  const free = points.find(([x, y]) => e.contains(document.elementFromPoint(x, y)));
  return (free || [cx, cy]).map(Math.round); }"""
"""The point of an element nearest its centre where a press reaches it (a resize handle is
partly clipped by its wrapper; a box partly covered by another)."""


def _grab(world: MiniWoBWorld, selector: str) -> tuple[int, int]:
    x, y = world.evaluate(GRAB_JS, selector)
    return int(x), int(y)


def _submit(world: MiniWoBWorld, selector: str = "#subbtn") -> str:
    return format_pixel("click", *_centre(world, selector))


def _drag(start: tuple[float, float], by: tuple[float, float]) -> str:
    x, y = start
    return format_pixel("drag", round(x), round(y), round(x + by[0]), round(y + by[1]))


@_page_oracle("drag-box")
def _drag_box(world: MiniWoBWorld) -> str | None:
    if world.evaluate("() => smallBoxContained()"):
        return _submit(world)
    # Grab the small box where the large one (drawn over it) leaves it free, and move its top
    # left corner 15 px inside the large one's (the page wants it strictly inside, 30 px).
    found = world.evaluate(
        """() => { const small = document.getElementById('draggableSmall');
          const large = document.getElementById('draggableLarge');
          const s = small.getBoundingClientRect(), l = large.getBoundingClientRect();
          for (let y = s.top + 2; y < s.bottom - 1; y += 2)
            for (let x = s.left + 2; x < s.right - 1; x += 2)
              if (document.elementFromPoint(x, y) === small)
                return [x, y, l.left + 15 - s.left, l.top + 15 - s.top];
          return [l.left + l.width / 2, l.top + l.height / 2, 0,
            l.top > 60 ? -(l.height + 4) : l.height + 4]; }"""
    )
    x, y, dx, dy = (float(v) for v in found)
    return _drag((x, y), (dx, dy))  # the small box, or else the large one out of its way


_DIRECTION = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


@_page_oracle("drag-single-shape")
def _drag_single_shape(world: MiniWoBWorld) -> str | None:
    wanted = world.utterance.split("Drag the item ")[1].split()[0]
    moved = world.evaluate(
        """() => { const c = d3.select('.black-shape')[0][0]; const now = shapes.gridCoords(c);
          const was = c.getBBox(); return {up: now.y < was.y, down: now.y > was.y,
          left: now.x < was.x, right: now.x > was.x}; }"""
    )
    if moved[wanted]:
        return _submit(world)
    dx, dy = _DIRECTION[wanted]
    return _drag(_centre(world, ".black-shape"), (dx * 12, dy * 12))


@_page_oracle("resize-textarea")
def _resize_textarea(world: MiniWoBWorld) -> str | None:
    if any(action.startswith("drag(") for action in world.history):
        return _submit(world, "#submit")
    dimension = "width" if "the width" in world.utterance else "height"
    sign = 1 if "larger" in world.utterance else -1
    handle = ".ui-resizable-e" if dimension == "width" else ".ui-resizable-s"
    by = (sign * 15, 0) if dimension == "width" else (0, sign * 15)
    return _drag(_grab(world, handle), by)


@_page_oracle("draw-line")
def _draw_line(world: MiniWoBWorld) -> str | None:
    if any(action.startswith("drag(") for action in world.history):
        return _submit(world, "#controls button")
    # Through the dot, 48 px long: the page samples the pointer at each of the drag's moves
    # (4 px apart), and pays in full for a sample within 6 px of the dot.
    x, y = _centre(world, "#circ")
    by = (48, 0) if "horizontal" in world.utterance else (0, 48)
    return _drag((x - by[0] / 2, y - by[1] / 2), by)


SELECTION_JS = """(s) => { const e = document.querySelector(s);
  const strip = (t) => t.replace(/[\\n\\r\\s]/g, '');
  if (strip(window.getSelection().toString()) === strip(e.textContent)) return null;
  const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  const nodes = []; while (walker.nextNode()) nodes.push(walker.currentNode);
  const first = nodes[0], last = nodes[nodes.length - 1];
  const start = first.textContent.search(/\\S/);
  const end = last.textContent.trimEnd().length;
  const box = (n, i) => { const r = document.createRange(); r.setStart(n, i);
    r.setEnd(n, i + 1); return r.getBoundingClientRect(); };
  const a = box(first, start), b = box(last, end - 1);
  return [a.left + 1, a.top + a.height / 2, b.right + 1, b.top + b.height / 2]; }"""
"""The drag that selects an element's text (from the left of its first letter to the right of
its last), or null when the selection already holds that text."""


def _highlight(world: MiniWoBWorld, selector: str) -> str | None:
    found = world.evaluate(SELECTION_JS, selector)
    if found is None:
        return _submit(world)
    x1, y1, x2, y2 = (float(v) for v in found)
    return _drag((x1, y1), (x2 - x1, y2 - y1))


@_page_oracle("highlight-text")
def _highlight_text(world: MiniWoBWorld) -> str | None:
    return _highlight(world, "#randomText")


@_page_oracle("highlight-text-2")
def _highlight_text_2(world: MiniWoBWorld) -> str | None:
    which = ("1st", "2nd", "3rd").index(world.utterance.split("the ")[2].split()[0]) + 1
    return _highlight(world, f"#randomText p:nth-of-type({which})")


ITEMS_JS = """() => [...document.querySelectorAll('#sortable li')].map((li) => {
  const r = li.getBoundingClientRect();
  return [li.textContent.trim(), r.left + r.width / 2, r.top + r.height / 2, r.height]; })"""
"""Each item of the sortable list: its name, the centre of its box and its height."""


_ITEM_ASK = re.compile(
    r"Drag (.+?) (to the top|to the bottom|up by one position|down by one position"
    r"|to the (\d)(?:st|nd|rd|th) position)\."
)


@_page_oracle("drag-items")
def _drag_items(world: MiniWoBWorld) -> str | None:
    found = _ITEM_ASK.fullmatch(world.utterance)
    items = world.evaluate(ITEMS_JS)
    names = [item[0] for item in items]
    if found is None or found.group(1) not in names:
        raise LookupError(f"the drag-items oracle cannot read {world.utterance!r}")
    now, how = names.index(found.group(1)), found.group(2)
    moves = {"to the top": 0, "to the bottom": len(names) - 1}
    moves |= {"up by one position": now - 1, "down by one position": now + 1}
    wanted = moves[how] if how in moves else int(found.group(3)) - 1
    return _move_item(items, now, wanted)


def _move_item(items: list[Any], now: int, wanted: int) -> str:
    """The drag that moves a sortable list's item from place ``now`` to ``wanted``: past the
    middle of the item in the way, so that the list lets the dragged one by."""
    _, x, y, _ = items[now]
    _, _, target_y, height = items[wanted]
    beyond = target_y + (0.4 if wanted > now else -0.4) * height
    return _drag((x, y), (0, beyond - y))


@_page_oracle("drag-sort-numbers")
def _drag_sort_numbers(world: MiniWoBWorld) -> str | None:
    items = world.evaluate(ITEMS_JS)
    numbers = [int(item[0]) for item in items]
    for place, number in enumerate(sorted(numbers)):
        if numbers[place] != number:  # the lowest number out of place goes to this place
            return _move_item(items, numbers.index(number, place), place)
    return _submit(world)
