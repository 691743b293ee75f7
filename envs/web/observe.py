"""What the agent sees of a page: an accessibility-tree text in which every element has an id.

``observe.js`` walks one frame's document and returns its nodes; :func:`take_snapshot` runs it
in the top frame and splices every iframe's nodes in under the iframe's own node, with ids
prefixed by the iframe's id (``"7.3"`` is node 3 of the frame that node 7 holds). Each frame is
walked on its own, so a frame that detaches or navigates mid-walk loses only its subtree — the
failure BrowserGym's users meet most ("Frame was detached"): here it becomes a line
``[7] iframe (unavailable)``.

A line of the text reads ``[id] role 'name' value='...' flags``, indented by depth::

    [3] navigation
      [4] link 'Home'
    [9] textbox 'Search' value='red shirt' focused
    [10] button 'Search'

Ids are stable while an element lives (they are kept on the element), so an id the agent read
in one observation names the same element in its next action.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym.envs.web.browser import is_crash

__all__ = ["Node", "PageSnapshot", "draw_marks", "take_snapshot"]

WALKER = (Path(__file__).parent / "observe.js").read_text()

_FLAGS = ("checked", "selected", "disabled", "expanded", "required", "readonly", "focused")


@dataclass(frozen=True)
class Node:
    """One line of the observation: an element with its id, role, name and state."""

    id: str
    role: str
    name: str
    depth: int
    value: str | None = None
    flags: tuple[str, ...] = ()
    href: str | None = None
    box: tuple[int, int, int, int] = (0, 0, 0, 0)
    """``x, y, width, height`` in CSS pixels of the viewport (iframes' nodes offset into it)."""
    parent: str | None = None
    """The id of the nearest enclosing node that has a line, if any."""

    @property
    def checked(self) -> bool:
        return "checked" in self.flags

    @property
    def selected(self) -> bool:
        return "selected" in self.flags

    @property
    def disabled(self) -> bool:
        return "disabled" in self.flags

    @property
    def focused(self) -> bool:
        return "focused" in self.flags

    def line(self) -> str:
        """The node as the observation shows it."""
        text = f"{'  ' * self.depth}[{self.id}] {self.role}"
        if self.name:
            text += f" {self.name!r}"
        if self.value is not None:
            text += f" value={self.value!r}"
        return " ".join([text, *self.flags])


@dataclass(frozen=True)
class PageSnapshot:
    """A page as the agent last saw it: its nodes, the text made of them, title and scroll."""

    nodes: tuple[Node, ...]
    title: str = ""
    scroll: tuple[int, int] = (0, 0)
    size: tuple[int, int] = (0, 0)
    text: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", "\n".join(node.line() for node in self.nodes))

    def get(self, node_id: str) -> Node | None:
        """The node with this id, if the page shows one."""
        return next((n for n in self.nodes if n.id == node_id), None)

    def find_all(
        self, role: str | None = None, name: str | None = None, *, contains: str | None = None
    ) -> list[Node]:
        """Nodes with this role (any if None), exact name (if given) and name substring
        ``contains`` (case-insensitive), in document order."""
        needle = contains.lower() if contains is not None else None
        return [
            n
            for n in self.nodes
            if (role is None or n.role == role)
            and (name is None or n.name == name)
            and (needle is None or needle in n.name.lower())
        ]

    def find(
        self, role: str | None = None, name: str | None = None, *, contains: str | None = None
    ) -> Node:
        """The first node :meth:`find_all` gives; ``LookupError`` listing the page if none."""
        found = self.find_all(role, name, contains=contains)
        if not found:
            wanted = ", ".join(
                f"{k}={v!r}"
                for k, v in (("role", role), ("name", name), ("contains", contains))
                if v is not None
            )
            raise LookupError(f"no node with {wanted} on the page:\n{self.text[:3000]}")
        return found[0]


async def take_snapshot(page: Any) -> PageSnapshot:
    """Walk the page's top frame and, recursively, its iframes."""
    main = await page.main_frame.evaluate(WALKER, {"depth": 0})
    nodes = await _splice(page.main_frame, main["nodes"], prefix="", offset=(0, 0))
    return PageSnapshot(
        nodes=tuple(nodes),
        title=main["title"],
        scroll=tuple(main["scroll"]),
        size=tuple(main["size"]),
    )


async def _splice(
    frame: Any, raw: Sequence[dict[str, Any]], prefix: str, offset: tuple[int, int]
) -> list[Node]:
    from playwright.async_api import Error as PlaywrightError

    nodes: list[Node] = []
    parents: list[str] = []  # the id at each depth, to find a node's parent
    for item in raw:
        depth = item["depth"]
        node_id = prefix + item["id"]
        del parents[depth:]
        x, y, w, h = item["box"]
        node = Node(
            id=node_id,
            role=item["role"],
            name=item["name"],
            depth=depth,
            value=item["value"],
            flags=tuple(f for f in _FLAGS if f in item["flags"]),
            href=item["href"],
            box=(x + offset[0], y + offset[1], w, h),
            parent=parents[-1] if parents else None,
        )
        parents.extend([node_id] * (depth + 1 - len(parents)))
        nodes.append(node)
        if not item["frame"]:
            continue
        try:
            handle = await frame.query_selector(f'[data-agid="{item["id"]}"]')
            child = await handle.content_frame() if handle else None
            if child is None:
                raise PlaywrightError("the frame has no document")
            inner = await child.evaluate(WALKER, {"depth": depth + 1})
            nodes.extend(
                await _splice(child, inner["nodes"], f"{node_id}.", (x + offset[0], y + offset[1]))
            )
        except PlaywrightError as error:  # detached or navigating: only its subtree is lost
            if is_crash(error):  # unless the whole page's renderer is gone
                raise
            nodes[-1] = Node(**{**node.__dict__, "name": (node.name + " (unavailable)").strip()})
    return nodes


def draw_marks(png: bytes, snapshot: PageSnapshot) -> bytes:
    """Set-of-marks: the screenshot with each visible node's box and id drawn on it."""
    from PIL import Image, ImageDraw

    image = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(image)
    width, height = image.size
    for node in snapshot.nodes:
        x, y, w, h = node.box
        if w <= 0 or h <= 0 or x >= width or y >= height or x + w <= 0 or y + h <= 0:
            continue
        if node.role == "text":
            continue
        draw.rectangle((x, y, x + w - 1, y + h - 1), outline=(255, 0, 0))
        label_w = 6 * len(node.id) + 4
        draw.rectangle((x, max(0, y - 10), x + label_w, max(10, y)), fill=(255, 0, 0))
        draw.text((x + 2, max(0, y - 10)), node.id, fill=(255, 255, 255))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
