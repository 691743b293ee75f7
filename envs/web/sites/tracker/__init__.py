"""The issue tracker site (a small GitLab) and its env, ``web/Tracker-v1``.

``TrackerSite`` is what the site server mounts; ``TrackerEnv`` is loaded on first use, so
the server process never imports the browser side.
"""

from __future__ import annotations

from typing import Any

from agentgym.envs.web.sites.tracker.site import TrackerSite

__all__ = ["TrackerEnv", "TrackerSite"]


def __getattr__(name: str) -> Any:
    if name == "TrackerEnv":
        from agentgym.envs.web.sites.tracker.env import TrackerEnv

        return TrackerEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
