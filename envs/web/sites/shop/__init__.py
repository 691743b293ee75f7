"""The shop: a WebShop-style store with a generated catalogue, and its shopping tasks.

:class:`ShopSite` is the web application (served at ``/shop/`` by the web family's server);
:class:`ShopEnv` is ``web/Shop-v1``, the env whose tasks are shopping instructions scored with
the WebShop reward. ``ShopEnv`` is imported on first use, so the site server, which needs only
the site, never loads the browser side of the family.
"""

from __future__ import annotations

from typing import Any

from agentgym.envs.web.sites.shop.site import ShopSite

__all__ = ["ShopEnv", "ShopSite"]


def __getattr__(name: str) -> Any:
    if name == "ShopEnv":
        from agentgym.envs.web.sites.shop.env import ShopEnv

        return ShopEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
