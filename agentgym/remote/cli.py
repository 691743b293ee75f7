"""``agentgym serve-env``: serve envs over the network (:mod:`agentgym.remote.server`)."""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["add_commands"]

SERVE_HELP = """\
Serve registered envs over WebSocket (/ws) with an HTTP fallback, in OpenEnv's protocol:
OpenEnv's own client works unchanged, and agentgym.remote.make(URL, ID) is a Gymnasium env
that passes the conformance checker. Each session is owned by a lease that every message
renews; the reaper closes sessions whose lease lapsed (--lease) or that outlived --lifetime.
GET /ready answers 503 at --capacity or while draining; the first SIGTERM drains (episodes in
progress finish, for --drain seconds at most), the second stops at once. GET /metrics is
Prometheus text. --isolation process runs each session's env in a child process. With
--token (or $AGENTGYM_SERVER_TOKEN) every request but /health and /ready needs
'Authorization: Bearer TOKEN'. docs/serving.md describes the protocol.
"""


def add_commands(commands: Any) -> None:
    """Add ``serve-env`` to the ``agentgym`` command's subparsers."""
    serve = commands.add_parser(
        "serve-env",
        help="serve envs over the network (OpenEnv's protocol, with leases)",
        description=SERVE_HELP,
    )
    serve.add_argument(
        "ids",
        nargs="*",
        metavar="ID",
        help="the env ids clients may open (default: any registered id); the first is the one "
        "an OpenEnv client gets",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument(
        "--port", type=int, default=8765, help="port to bind; 0 picks one (default: %(default)s)"
    )
    serve.add_argument(
        "--capacity", type=int, default=256, help="most sessions at once (default: %(default)s)"
    )
    serve.add_argument(
        "--lease",
        type=float,
        default=300.0,
        help="seconds a session lives after its last message (default: %(default)s)",
    )
    serve.add_argument(
        "--lifetime",
        type=float,
        default=6 * 3600.0,
        help="seconds a session lives at most (default: %(default)s)",
    )
    serve.add_argument(
        "--drain",
        type=float,
        default=30.0,
        help="on SIGTERM, seconds to let episodes in progress finish (default: %(default)s)",
    )
    serve.add_argument(
        "--token",
        default=None,
        help="the bearer token clients must send (default: $AGENTGYM_SERVER_TOKEN, else none)",
    )
    serve.add_argument(
        "--isolation",
        choices=("thread", "process"),
        default="thread",
        help="where each session's env runs: a thread of the server (default), or a process "
        "of its own, for envs that are not thread-safe or may crash or hang (closing the "
        "session kills it)",
    )
    serve.set_defaults(run=_serve_env)


def _serve_env(args: argparse.Namespace) -> int:
    from agentgym.errors import UsageError
    from agentgym.registry import spec

    for env_id in args.ids:
        spec(env_id)  # an unknown id fails now, with "did you mean"
    if args.capacity < 1 or args.lease <= 0 or args.lifetime <= 0 or args.drain < 0:
        raise UsageError(
            f"--capacity must be at least 1 and --lease, --lifetime positive, got "
            f"{args.capacity}, {args.lease}, {args.lifetime}"
        )
    from agentgym.remote.server import ServerOptions, serve

    token = args.token or os.environ.get("AGENTGYM_SERVER_TOKEN") or None
    options = ServerOptions(
        env_ids=tuple(args.ids),
        capacity=args.capacity,
        lease_s=args.lease,
        lifetime_s=args.lifetime,
        token=token,
        drain_s=args.drain,
        isolation=args.isolation,
    )
    serve(options, args.host, args.port)
    return 0
