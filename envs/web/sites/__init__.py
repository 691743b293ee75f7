"""The sites the web family serves on 127.0.0.1, by name (see :mod:`.base`).

A new site is a :class:`~agentgym.envs.web.sites.base.Site` subclass in its own folder,
listed in :data:`SITES`; the server mounts every listed site at ``/{name}/``.
"""

from __future__ import annotations

import importlib

from agentgym.envs.web.sites.base import EPISODE_HEADER, Site, SiteState

__all__ = ["EPISODE_HEADER", "SITES", "Site", "SiteState", "load_sites", "register_site"]

SITES: dict[str, str] = {
    "shop": "agentgym.envs.web.sites.shop:ShopSite",
    "forum": "agentgym.envs.web.sites.forum:ForumSite",
    "tracker": "agentgym.envs.web.sites.tracker:TrackerSite",
}
"""Site name -> ``"module:Class"``; the modules are imported when a pool starts, in the env
process and in the server process alike (the pool hands the table to the server)."""


def register_site(name: str, entry_point: str) -> None:
    """Serve another site (``"module:Class"``) from pools started after this call."""
    if not name.isalpha() or not name.islower():
        raise ValueError(f"a site name is lower-case letters, got {name!r}")
    if ":" not in entry_point:
        raise ValueError(f"entry_point is 'module:Class', got {entry_point!r}")
    SITES[name] = entry_point


def load_sites(table: dict[str, str] | None = None) -> dict[str, Site]:
    """One instance of every site of ``table`` (default :data:`SITES`)."""
    sites: dict[str, Site] = {}
    for name, entry in (SITES if table is None else table).items():
        module_name, _, attr = entry.partition(":")
        site = getattr(importlib.import_module(module_name), attr)()
        if site.name != name:
            raise ValueError(f"{entry} calls itself {site.name!r}, but SITES lists it as {name!r}")
        sites[name] = site
    return sites
