"""Sandbox images built offline: a debootstrap rootfs, ``docker import``, ``docker build``.

There is no registry to pull from on our machines, but Debian's package mirror answers. So:

1. :func:`build_rootfs`: ``debootstrap --variant=minbase bookworm`` into
   ``$AGENTGYM_CACHE/rootfs/bookworm`` (built in a ``.partial`` directory and renamed when
   complete, so a half-made tree is never used). The same directory backs the bwrap backend
   as a pinned userland: ``SandboxSpec(rootfs=str(rootfs_dir()))``.
2. :func:`import_rootfs`: ``tar`` of that tree piped into ``docker import`` as
   :data:`ROOTFS_IMAGE`.
3. :func:`build_image`: ``docker build`` of ``containers/sandbox.Dockerfile`` (``FROM`` the
   imported rootfs; its ``apt-get`` reaches the same mirror through the build's host network)
   as :data:`SANDBOX_IMAGE`, the docker backend's default image.

Each step is skipped when its result is there and current (the image carries the hash of the
Dockerfile it was built from as a label), so :func:`ensure_images` is cheap after the first run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from agentgym.cache import cache_dir
from agentgym.errors import SandboxError, SandboxUnavailableError

__all__ = [
    "DEFAULT_MIRROR",
    "ROOTFS_IMAGE",
    "SANDBOX_IMAGE",
    "build_image",
    "build_rootfs",
    "dockerfile",
    "ensure_images",
    "import_rootfs",
    "rootfs_dir",
]

SUITE = "bookworm"
ROOTFS_IMAGE = f"agentgym/rootfs:{SUITE}"
SANDBOX_IMAGE = "agentgym/sandbox:latest"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
HASH_LABEL = "agentgym.dockerfile.sha256"

Log = Callable[[str], None]


def rootfs_dir() -> Path:
    """Where the debootstrap tree lives: ``$AGENTGYM_CACHE/rootfs/bookworm``."""
    return cache_dir() / "rootfs" / SUITE


def dockerfile() -> Path:
    """The base image's Dockerfile in the checkout's ``containers/`` folder."""
    path = Path(__file__).resolve().parents[2] / "containers" / "sandbox.Dockerfile"
    if not path.is_file():
        raise SandboxError(
            f"{path} is missing: building images needs an agentgym checkout (containers/)"
        )
    return path


def build_rootfs(mirror: str | None = None, force: bool = False, log: Log = print) -> Path:
    """A minbase Debian tree (about 200 MB, about a minute), built once per cache."""
    target = rootfs_dir()
    if (target / "usr" / "bin").is_dir() and not force:
        log(f"rootfs: {target} is there")
        return target
    if os.geteuid() != 0:
        raise SandboxUnavailableError("debootstrap needs root (it makes device nodes and chroots)")
    tool = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not os.access(tool, os.X_OK):
        raise SandboxUnavailableError("debootstrap not found: apt-get install debootstrap")
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    mirror = mirror or os.environ.get("AGENTGYM_DEBIAN_MIRROR") or DEFAULT_MIRROR
    log(f"rootfs: debootstrap --variant=minbase {SUITE} from {mirror} (about a minute)")
    started = time.monotonic()
    _run([tool, "--variant=minbase", SUITE, str(partial), mirror], "debootstrap")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    log(f"rootfs: built {target} in {time.monotonic() - started:.0f} s")
    return target


def import_rootfs(force: bool = False, log: Log = print) -> str:
    """``docker import`` the rootfs tree as :data:`ROOTFS_IMAGE` (a few seconds)."""
    client = _client()
    if not force and _image_labels(client, ROOTFS_IMAGE) is not None:
        log(f"import: {ROOTFS_IMAGE} is there")
        return ROOTFS_IMAGE
    tree = build_rootfs(log=log)
    log(f"import: {tree} -> {ROOTFS_IMAGE}")
    tar = subprocess.Popen(
        ["tar", "-C", str(tree), "--numeric-owner", "-c", "-f", "-", "."],
        stdout=subprocess.PIPE,
    )
    try:
        imported = subprocess.run(
            [_docker_cli(), "import", "-", ROOTFS_IMAGE],
            stdin=tar.stdout,
            capture_output=True,
            check=False,
        )
    finally:
        assert tar.stdout
        tar.stdout.close()
        tar.wait()
    if imported.returncode != 0 or tar.returncode != 0:
        raise SandboxError(f"docker import failed: {imported.stderr.decode().strip()}")
    return ROOTFS_IMAGE


def build_image(tag: str = SANDBOX_IMAGE, force: bool = False, log: Log = print) -> str:
    """``docker build`` the base sandbox image on the imported rootfs (a few minutes once)."""
    client = _client()
    recipe = dockerfile()
    digest = hashlib.sha256(recipe.read_bytes()).hexdigest()
    labels = _image_labels(client, tag)
    if not force and labels is not None and labels.get(HASH_LABEL) == digest:
        log(f"image: {tag} is there and current")
        return tag
    import_rootfs(log=log)
    log(f"image: docker build {recipe.name} -> {tag} (apt-get from Debian's mirror)")
    started = time.monotonic()
    argv = [_docker_cli(), "build", "--network", "host", "--label", f"{HASH_LABEL}={digest}"]
    argv += [
        "--build-arg",
        f"BASE={ROOTFS_IMAGE}",
        "-t",
        tag,
        "-f",
        str(recipe),
        str(recipe.parent),
    ]
    _run(argv, "docker build", env={**os.environ, "DOCKER_BUILDKIT": "0"})
    log(f"image: built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def ensure_images(tag: str = SANDBOX_IMAGE, rootfs_only: bool = False, log: Log = print) -> str:
    """Everything the docker backend's default image needs, each step only if missing."""
    if rootfs_only:
        return str(build_rootfs(log=log))
    return build_image(tag, log=log)


# ----------------------------------------------------------------------------- helpers


def _client():  # type: ignore[no-untyped-def]
    from agentgym.sandbox.docker import docker_client

    return docker_client()


def _image_labels(client, name: str) -> dict[str, str] | None:  # type: ignore[no-untyped-def]
    import docker.errors

    try:
        image = client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
    return dict(image.labels or {})


def _docker_cli() -> str:
    from agentgym.sandbox.docker import docker_cli

    return docker_cli()


def _run(argv: list[str], what: str, env: dict[str, str] | None = None) -> None:
    """Run a build step quietly; a failure names the step and ends with its output."""
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).decode(errors="replace")[-3000:]
        raise SandboxError(f"{what} failed (exit {done.returncode}):\n{tail}")
