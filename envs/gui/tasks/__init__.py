"""Desktop task templates, one module per application (``mousepad.py``, ...).

:func:`load_templates` imports the modules of :data:`TEMPLATE_MODULES` (their ``@template``
decorators register them in :data:`agentgym.envs.gui.osworld.TEMPLATES`). An application's
templates need their module and its line here, nothing else: an app with templates gets its
env id (``gui/Mousepad-v0``) from :mod:`agentgym.envs.gui`. The list is explicit, not every
module found here, so that a module being written cannot break the ids of the others.
"""

from __future__ import annotations

import importlib

__all__ = ["TEMPLATE_MODULES", "load_templates"]

TEMPLATE_MODULES: tuple[str, ...] = (
    "agentgym.envs.gui.tasks.files",
    "agentgym.envs.gui.tasks.mousepad",
    "agentgym.envs.gui.tasks.spreadsheet",
    "agentgym.envs.gui.tasks.terminal",
)
"""The template modules, one line each."""


def load_templates() -> None:
    """Import every template module (once; later calls are free)."""
    for name in TEMPLATE_MODULES:
        importlib.import_module(name)
