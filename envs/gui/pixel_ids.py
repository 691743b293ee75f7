"""The pixel twins' ids: ``gui/<family>_<name>-vN`` for every web id ``<family>/<name>-vN``.

Kept apart from :mod:`agentgym.envs.gui.pixel` (the env and Playwright's side) so that
registering imports nothing but the registry and the web family's own id module.
"""

from __future__ import annotations

from agentgym.registry import list_envs, register

__all__ = [
    "LEFT_OUT",
    "POINTER_PAGES",
    "STEP_FACTOR",
    "WEB_FAMILIES",
    "pixel_id",
    "register_pixel_twins",
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


def register_pixel_twins() -> None:
    """Register a pixel twin of every web and MiniWoB++ id registered now, but those
    :data:`LEFT_OUT`."""
    import agentgym.envs.web  # noqa: F401  (registers the web ids; cheap, see its docstring)

    for spec in (s for family in WEB_FAMILIES for s in list_envs(family, kind="env")):
        if spec.id in LEFT_OUT:
            continue
        steps = spec.max_episode_steps
        register(
            pixel_id(spec.id),
            entry_point="agentgym.envs.gui.pixel:PixelWebEnv",
            kwargs={"web_id": spec.id},
            max_episode_steps=None if steps is None else steps * STEP_FACTOR,
            extra=spec.extra,
            description=f"{spec.id} by pixels: screenshots in, mouse and keyboard out",
        )
    for page in POINTER_PAGES:
        register(
            f"gui/miniwob_{page.replace('-', '_')}-v0",
            entry_point="agentgym.envs.gui.pixel:PixelWebEnv",
            kwargs={"page": page},
            max_episode_steps=MINIWOB_STEPS * STEP_FACTOR,
            extra="web",
            description=f"MiniWoB++ task {page} by pixels (a drag: no text id), its own reward",
        )
