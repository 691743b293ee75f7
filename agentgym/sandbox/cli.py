"""``agentgym containers build``: the docker backend's image and the env servers' images,
built without a registry."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from agentgym.sandbox.server_images import SERVER_IMAGES

__all__ = ["add_commands"]

BUILD_HELP = """\
Build the docker backend's base image without a registry:

  1. debootstrap a minimal Debian 12 tree from Debian's mirror (about a minute), kept in
     $AGENTGYM_CACHE/rootfs/bookworm (default ~/.cache/agentgym); the bwrap backend can use
     it too: SandboxSpec(rootfs=<that directory>)
  2. `docker import` it as agentgym/rootfs:bookworm
  3. `docker build` containers/sandbox.Dockerfile on top (apt-get from Debian's mirror) as
     agentgym/sandbox:latest, the image DockerSandbox uses when spec.image is None.

With --image NAME (or --all), the env-server images instead (docs/serving.md, "In a
container"): `agentgym serve-env` with agentgym and the `remote` extra in a venv, built from
containers/server.Dockerfile on the same rootfs (swe: on the sandbox image):

  server  the env server with the families that need no extra (games' puzzles...)
  web     + Playwright and Debian's Chromium          (extra: web)
  swe     + git, bubblewrap and build tools           (extra: swe)
  gui     + Xvfb, openbox, the desktop's applications (extra: gui)

Their Python packages are wheels made on the host: this checkout's (pip wheel) and its
dependencies', resolved under constraints.txt by pip download; nothing in the build reaches
a package index. Run one with: docker run --network host agentgym/server:latest --host
127.0.0.1 --port PORT ID...

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
        help="build the base sandbox image (debootstrap rootfs, docker import, docker build) "
        "or the env-server images (--image, --all)",
        description=BUILD_HELP,
    )
    build.add_argument(
        "--rootfs-only",
        action="store_true",
        help="only make the debootstrap tree (for bwrap's SandboxSpec(rootfs=...); no docker)",
    )
    build.add_argument(
        "--tag",
        default=None,
        help="name of the built sandbox image (default: agentgym/sandbox:latest)",
    )
    build.add_argument(
        "--image",
        action="append",
        choices=list(SERVER_IMAGES),
        metavar="NAME",
        help=f"build the env-server image NAME, one of {', '.join(SERVER_IMAGES)} (repeatable)",
    )
    build.add_argument(
        "--all", action="store_true", help="build the sandbox image and every env-server image"
    )
    build.add_argument(
        "--force", action="store_true", help="redo the step even if its result is current"
    )
    build.set_defaults(run=_build)
    containers.set_defaults(run=lambda args: containers.print_help())


def _build(args: argparse.Namespace) -> int:
    from agentgym.errors import UsageError
    from agentgym.sandbox.dockerd import PrivateDaemon, docker_problem
    from agentgym.sandbox.images import SANDBOX_IMAGE, build_image, build_rootfs
    from agentgym.sandbox.server_images import build_server_image

    started = time.monotonic()
    if args.rootfs_only and (args.image or args.all):
        raise UsageError("--rootfs-only builds no image: leave out --image and --all")
    if args.tag and args.image and not args.all:
        raise UsageError("--tag names the sandbox image; the env-server images have fixed names")
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
        built = []
        if args.all or not args.image:
            built.append(build_image(args.tag or SANDBOX_IMAGE, force=args.force))
        for name in SERVER_IMAGES if args.all else dict.fromkeys(args.image or ()):
            built.append(build_server_image(name, force=args.force))
    finally:
        if daemon is not None:
            daemon.stop()
    where = f"the private daemon (data in {daemon.data_root})" if daemon else "the daemon"
    print(f"done in {_since(started)}: {', '.join(built)} on {where}")
    return 0


def _since(started: float) -> str:
    return f"{time.monotonic() - started:.0f} s"
