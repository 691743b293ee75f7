"""The forum site (a small Postmill/Reddit) and its env, ``web/Forum-v1``.

``ForumSite`` is what the site server mounts; ``ForumEnv`` is loaded on first use, so the
server process never imports the browser side.
"""

from __future__ import annotations

from typing import Any

from agentgym.envs.web.sites.forum.site import ForumSite

__all__ = ["ForumEnv", "ForumSite"]


def __getattr__(name: str) -> Any:
    if name == "ForumEnv":
        from agentgym.envs.web.sites.forum.env import ForumEnv

        return ForumEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
