"""Desktop task templates, one module per application (``mousepad.py``, ...).

Every module of this package is a template module: :func:`load_templates` imports them all
(their ``@template`` decorators register them in :data:`agentgym.envs.gui.osworld.TEMPLATES`),
so a new application's templates need nothing but their module. An app with templates gets
its env id (``gui/Mousepad-v0``) from :mod:`agentgym.envs.gui`.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["load_templates", "template_modules"]


def template_modules() -> list[str]:
    """The names of this package's modules, sorted."""
    return sorted(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__))


def load_templates() -> None:
    """Import every template module (once; later calls are free)."""
    for name in template_modules():
        importlib.import_module(name)
