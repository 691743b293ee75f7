"""Envs over the network: ``agentgym serve-env`` and :func:`agentgym.remote.make`.

The server (:mod:`agentgym.remote.server`) serves any registered id over OpenEnv's protocol,
with leases, numbered requests and typed errors on top; the client
(:mod:`agentgym.remote.client`) is a Gymnasium env that passes the same conformance checker as
the local one, and :func:`make_multi` a whole multi-agent game as PettingZoo
(:mod:`agentgym.remote.games`). ``docs/serving.md`` describes both. Needs the ``remote`` extra.
"""

from agentgym.remote.client import RemoteEnv, RemoteSnapshot, make
from agentgym.remote.games import make_multi
from agentgym.remote.server import ServerOptions, create_app, serve

__all__ = [
    "RemoteEnv",
    "RemoteSnapshot",
    "ServerOptions",
    "create_app",
    "make",
    "make_multi",
    "serve",
]
