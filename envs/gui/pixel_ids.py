"""The pixel twins' ids: ``gui/<family>_<name>-vN`` for every web id ``<family>/<name>-vN``.

Kept apart from :mod:`agentgym.envs.gui.pixel` (the env and Playwright's side) so that
registering imports nothing but the registry and the web family's own id module.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from agentgym.registry import list_envs, register

__all__ = [
    "BLIND_RATES",
    "LEFT_OUT",
    "POINTER_PAGES",
    "STEP_FACTOR",
    "WEB_FAMILIES",
    "guessable",
    "pixel_id",
    "pointer_id",
    "register_pixel_twins",
    "twin_kwargs",
    "web_id_of",
]

WEB_FAMILIES = ("web", "miniwob")
"""The families whose ids get a pixel twin (the web family registers both)."""

LEFT_OUT = {
    "web/Shop-v1": "a task-blind policy earns reward: replaying another task's clicks buys a "
    "product of the asked type that shares some attributes, and WebShop's partial credit pays "
    "it (0.6 on train/medium/6369); registered again once the shop pays nothing below the "
    "asked product",
}
"""Web ids with no registered twin, and why (``PixelWebEnv(web_id=...)`` still builds one)."""

BLIND_RATES = Path(__file__).with_name("data") / "pixel_blind_rates.json"
"""How often a blind replay (the next task's solution, coordinates and all) passed each
MiniWoB++ twin, written by ``tests/perf/gui_blind_rates.py``."""


@functools.cache
def guessable() -> dict[str, float]:
    """The twins a blind replay passed at all, and how often: left out of the registry. On a
    pixel page a target that keeps its place, or is large, is hit by clicking where another
    task's target was, which the same page by element ids does not allow."""
    data = json.loads(BLIND_RATES.read_text())
    return {env_id: rate for env_id, rate in data["rates"].items() if rate > 0}


POINTER_PAGES = (
    "drag-box",
    "drag-items",
    "drag-single-shape",
    "drag-sort-numbers",
    "draw-line",
    "highlight-text",
    "highlight-text-2",
    "resize-textarea",
)
"""MiniWoB++ pages the web family leaves out for needing a drag that a twin plays
(``gui/miniwob_<page>-v0``; their oracles are in :mod:`agentgym.envs.gui.pixel_pages`)."""

MINIWOB_STEPS = 30
"""A MiniWoB++ web id's step limit (``agentgym.envs.web.miniwob_ids``), for the pointer pages."""

STEP_FACTOR = 3
"""A twin's step limit is its web id's times this: one web action can take up to three pixel
actions (``fill`` is a click, ``Control+a`` and the typing)."""


def pixel_id(web_id: str) -> str:
    """``miniwob/click_test-v0`` -> ``gui/miniwob_click_test-v0``."""
    family, rest = web_id.split("/", 1)
    return f"gui/{family}_{rest}"


def web_id_of(gui_id: str) -> str:
    """The inverse of :func:`pixel_id`."""
    family, rest = gui_id.split("/", 1)[1].split("_", 1)
    return f"{family}/{rest}"


def pointer_id(page: str) -> str:
    """``drag-box`` -> ``gui/miniwob_drag_box-v0``."""
    return f"gui/miniwob_{page.replace('-', '_')}-v0"


def twin_kwargs(gui_id: str) -> dict[str, str]:
    """What :class:`~agentgym.envs.gui.pixel.PixelWebEnv` takes to build the twin ``gui_id``
    (registered or left out): a pointer page's ``page``, else its web id's ``web_id``."""
    pages = {pointer_id(page): page for page in POINTER_PAGES}
    return {"page": pages[gui_id]} if gui_id in pages else {"web_id": web_id_of(gui_id)}


def register_pixel_twins(*, every: bool = False) -> None:
    """Register a pixel twin of every web and MiniWoB++ id registered now, but those
    :data:`LEFT_OUT` and those :func:`guessable` (``every``: them too, to measure them)."""
    import agentgym.envs.web  # noqa: F401  (registers the web ids; cheap, see its docstring)

    left_out = set() if every else {*map(pixel_id, LEFT_OUT), *guessable()}
    for spec in (s for family in WEB_FAMILIES for s in list_envs(family, kind="env")):
        if pixel_id(spec.id) in left_out:
            continue
        steps = spec.max_episode_steps
        register(
            pixel_id(spec.id),
            entry_point="agentgym.envs.gui.pixel:PixelWebEnv",
            kwargs=twin_kwargs(pixel_id(spec.id)),
            max_episode_steps=None if steps is None else steps * STEP_FACTOR,
            extra=spec.extra,
            episode_cpus=1.0,  # a browser per episode
            description=f"{spec.id} by pixels: screenshots in, mouse and keyboard out",
        )
    for page in POINTER_PAGES:
        if pointer_id(page) in left_out:
            continue
        register(
            pointer_id(page),
            entry_point="agentgym.envs.gui.pixel:PixelWebEnv",
            kwargs=twin_kwargs(pointer_id(page)),
            max_episode_steps=MINIWOB_STEPS * STEP_FACTOR,
            extra="web",
            episode_cpus=1.0,  # a browser per episode
            description=f"MiniWoB++ task {page} by pixels (a drag: no text id), its own reward",
        )
