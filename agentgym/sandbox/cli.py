"""``agentgym containers build``: the docker backend's images, built without a registry."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

__all__ = ["add_commands"]

BUILD_HELP = """\
Build the docker backend's base image without a registry:

  1. debootstrap a minimal Debian 12 tree from Debian's mirror (about a minute), kept in
     $AGENTGYM_CACHE/rootfs/bookworm (default ~/.cache/agentgym); the bwrap backend can use
     it too: SandboxSpec(rootfs=<that directory>)
  2. `docker import` it as agentgym/rootfs:bookworm
  3. `docker build` containers/sandbox.Dockerfile on top (apt-get from Debian's mirror) as
     agentgym/sandbox:latest, the image DockerSandbox uses when spec.image is None.

Steps already done are skipped. The daemon is the one at DOCKER_HOST (or
/var/run/docker.sock); when none answers, a private dockerd is started for the build and
stopped after, its images kept in $AGENTGYM_CACHE/docker (the test fixtures use the same one).
Needs root, `apt-get install debootstrap docker.io`, and Debian's mirror.
"""


def add_commands(commands: Any) -> None:
    """Add ``containers build`` to the ``agentgym`` command's subparsers."""
    containers = commands.add_parser(
        "containers",
        help="build sandbox images for the docker backend (offline)",
        description="Sandbox images for the docker backend, built without a registry.",
    )
    images = containers.add_subparsers(title="commands", metavar="COMMAND")
    build = images.add_parser(
        "build",
        help="build the base sandbox image (debootstrap rootfs, docker import, docker build)",
        description=BUILD_HELP,
    )
    build.add_argument(
        "--rootfs-only",
        action="store_true",
        help="only make the debootstrap tree (for bwrap's SandboxSpec(rootfs=...); no docker)",
    )
    build.add_argument(
        "--tag", default=None, help="name of the built image (default: agentgym/sandbox:latest)"
    )
    build.add_argument(
        "--force", action="store_true", help="redo the step even if its result is current"
    )
    build.set_defaults(run=_build)
    containers.set_defaults(run=lambda args: containers.print_help())


def _build(args: argparse.Namespace) -> int:
    from agentgym.sandbox.dockerd import PrivateDaemon, docker_problem
    from agentgym.sandbox.images import SANDBOX_IMAGE, build_image, build_rootfs

    started = time.monotonic()
    if args.rootfs_only:
        path = build_rootfs(force=args.force)
        print(f"done in {_since(started)}: SandboxSpec(rootfs={str(path)!r})")
        return 0
    daemon = None
    if docker_problem() is not None:
        daemon = PrivateDaemon()
        print(f"no Docker daemon answers; starting a private one at {daemon.url}")
        daemon.start()
        os.environ["DOCKER_HOST"] = daemon.url
    try:
        built = build_image(args.tag or SANDBOX_IMAGE, force=args.force)
    finally:
        if daemon is not None:
            daemon.stop()
    where = f"the private daemon (data in {daemon.data_root})" if daemon else "the daemon"
    print(f"done in {_since(started)}: {built} is on {where}")
    return 0


def _since(started: float) -> str:
    return f"{time.monotonic() - started:.0f} s"
