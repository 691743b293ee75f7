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
:func:`build_recipe` is that last step for any recipe and digest: the env-server images
(:mod:`agentgym.sandbox.server_images`) are built with it too. A rebuild removes the image it
replaced, unless something still uses it, so rebuilds do not pile up in the data root.

Several processes (parallel test workers, a build beside a test run) may ask for the same step
at once, so each step runs under an exclusive :func:`~agentgym.cache.exclusive` lock and looks
again once it holds it: a second caller waits, then finds the result there instead of building
it twice (or deleting the first caller's half-built tree). The tree is guarded by
``$AGENTGYM_CACHE/rootfs/.bookworm.lock``, the two docker steps by
``$AGENTGYM_CACHE/docker/images.lock`` (beside the private daemon's data root; callers with
different caches are not serialized, which costs a duplicate build at worst). Each call takes
each lock at most once, always the docker lock before the rootfs lock (a ``flock`` taken twice
by one process, on two descriptors, would wait for itself).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from agentgym.cache import cache_dir, exclusive
from agentgym.errors import SandboxError, SandboxUnavailableError
from agentgym.sandbox.dockerd import docker_cli, docker_client

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = [
    "DEFAULT_MIRROR",
    "ROOTFS_IMAGE",
    "SANDBOX_IMAGE",
    "build_image",
    "build_recipe",
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
    if not force and _rootfs_complete(target):
        log(f"rootfs: {target} is there")
        return target
    with exclusive(_rootfs_lock()):
        return _build_rootfs_locked(mirror, force, log)


def import_rootfs(force: bool = False, log: Log = print) -> str:
    """``docker import`` the rootfs tree as :data:`ROOTFS_IMAGE` (a few seconds)."""
    client = docker_client()
    if not force and _image_labels(client, ROOTFS_IMAGE) is not None:
        log(f"import: {ROOTFS_IMAGE} is there")
        return ROOTFS_IMAGE
    with exclusive(_docker_lock()):
        return _import_rootfs_locked(client, force, log)


def build_image(tag: str = SANDBOX_IMAGE, force: bool = False, log: Log = print) -> str:
    """``docker build`` the base sandbox image on the imported rootfs (a few minutes once)."""
    recipe = dockerfile()
    digest = hashlib.sha256(recipe.read_bytes()).hexdigest()
    build_args = {"BASE": ROOTFS_IMAGE}
    context = lambda: contextlib.nullcontext(recipe.parent)  # noqa: E731
    return build_recipe(recipe, tag, digest, context, build_args, force, log)


def build_recipe(
    recipe: Path,
    tag: str,
    digest: str,
    context: Callable[[], AbstractContextManager[Path]],
    build_args: dict[str, str],
    force: bool = False,
    log: Log = print,
) -> str:
    """``docker build`` ``recipe`` as ``tag`` unless an image built from ``digest`` is there.

    ``digest`` is what the image is built from (at least the Dockerfile's hash); the image
    carries it as a label, so a later call with the same digest skips the build. ``context``
    gives the build context's folder for the length of the build (a ``with``), and is called
    only when a build happens, under the docker lock (making it may take a while: the
    env-server images' wheels are downloaded into a folder removed after the build). The rootfs is
    imported first if missing: every recipe here starts ``FROM`` it, directly or not.
    """
    client = docker_client()

    def current() -> bool:
        labels = _image_labels(client, tag)
        return labels is not None and labels.get(HASH_LABEL) == digest

    if not force and current():
        log(f"image: {tag} is there and current")
        return tag
    with exclusive(_docker_lock()):
        if not force and current():  # another process built it while this one waited
            log(f"image: {tag} is there and current")
            return tag
        _import_rootfs_locked(client, False, log)
        replaced = _image_id(client, tag)
        with context() as folder:
            _docker_build(recipe, tag, digest, folder, build_args, log)
        if replaced is not None and replaced != _image_id(client, tag):
            _remove_image(client, replaced)
    return tag


def ensure_images(tag: str = SANDBOX_IMAGE, rootfs_only: bool = False, log: Log = print) -> str:
    """Everything the docker backend's default image needs, each step only if missing."""
    if rootfs_only:
        return str(build_rootfs(log=log))
    return build_image(tag, log=log)


# ----------------------------------------------------------------------------- helpers


def _rootfs_complete(target: Path) -> bool:
    return (target / "usr" / "bin").is_dir()


def _rootfs_lock() -> Path:
    """The lock around building (and reading, for ``docker import``) the rootfs tree."""
    path = rootfs_dir()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.lock")


def _docker_lock() -> Path:
    """The lock around the docker steps (import and build), beside the private daemon's data."""
    path = cache_dir() / "docker"
    path.mkdir(parents=True, exist_ok=True)
    return path / "images.lock"


def _build_rootfs_locked(mirror: str | None, force: bool, log: Log) -> Path:
    """:func:`build_rootfs` for a caller that holds :func:`_rootfs_lock`."""
    target = rootfs_dir()
    if not force and _rootfs_complete(target):  # another process built it while this one waited
        log(f"rootfs: {target} is there")
        return target
    # Only the lock holder works in .partial: whatever is there is a dead builder's leftover.
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    mirror = mirror or os.environ.get("AGENTGYM_DEBIAN_MIRROR") or DEFAULT_MIRROR
    log(f"rootfs: debootstrap --variant=minbase {SUITE} from {mirror} (about a minute)")
    started = time.monotonic()
    _debootstrap(partial, mirror)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    log(f"rootfs: built {target} in {time.monotonic() - started:.0f} s")
    return target


def _import_rootfs_locked(client: DockerClient, force: bool, log: Log) -> str:
    """:func:`import_rootfs` for a caller that holds :func:`_docker_lock`."""
    if not force and _image_labels(client, ROOTFS_IMAGE) is not None:
        log(f"import: {ROOTFS_IMAGE} is there")
        return ROOTFS_IMAGE
    with exclusive(_rootfs_lock()):  # held while tar reads, so a forced rebuild waits for it
        tree = _build_rootfs_locked(None, False, log)
        log(f"import: {tree} -> {ROOTFS_IMAGE}")
        _docker_import(tree)
    return ROOTFS_IMAGE


def _debootstrap(partial: Path, mirror: str) -> None:
    """Run ``debootstrap`` into ``partial`` (the step the locking tests stand in for)."""
    if os.geteuid() != 0:
        raise SandboxUnavailableError("debootstrap needs root (it makes device nodes and chroots)")
    tool = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not os.access(tool, os.X_OK):
        raise SandboxUnavailableError("debootstrap not found: apt-get install debootstrap")
    _run([tool, "--variant=minbase", SUITE, str(partial), mirror], "debootstrap")


def _docker_import(tree: Path) -> None:
    """``tar`` of ``tree`` piped into ``docker import`` as :data:`ROOTFS_IMAGE`."""
    tar = subprocess.Popen(
        ["tar", "-C", str(tree), "--numeric-owner", "-c", "-f", "-", "."],
        stdout=subprocess.PIPE,
    )
    try:
        imported = subprocess.run(
            [docker_cli(), "import", "-", ROOTFS_IMAGE],
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


def _image_labels(client: DockerClient, name: str) -> dict[str, str] | None:
    import docker.errors

    try:
        image = client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
    return dict(image.labels or {})


def _docker_build(
    recipe: Path, tag: str, digest: str, folder: Path, build_args: dict[str, str], log: Log
) -> None:
    """``docker build`` (the legacy builder, which runs ``RUN`` on the host's network)."""
    log(f"image: docker build {recipe.name} -> {tag} (apt-get from Debian's mirror)")
    started = time.monotonic()
    # --force-rm: a failed step's container (a gigabyte, for a desktop's apt-get) goes too.
    argv = [docker_cli(), "build", "--network", "host", "--force-rm"]
    argv += ["--label", f"{HASH_LABEL}={digest}"]
    for name, value in build_args.items():
        argv += ["--build-arg", f"{name}={value}"]
    argv += ["-t", tag, "-f", str(recipe), str(folder)]
    _run(argv, "docker build", env={**os.environ, "DOCKER_BUILDKIT": "0"})
    log(f"image: built {tag} in {time.monotonic() - started:.0f} s")


def _image_id(client: DockerClient, name: str) -> str | None:
    import docker.errors

    try:
        return str(client.images.get(name).id)
    except docker.errors.ImageNotFound:
        return None


def _remove_image(client: DockerClient, image_id: str) -> None:
    """Remove the image a rebuild replaced, so rebuilds do not pile up in the data root; one
    that a container or another image still uses stays (and so do its layers)."""
    import docker.errors

    with contextlib.suppress(docker.errors.APIError):
        client.images.remove(image_id)


def _run(argv: list[str], what: str, env: dict[str, str] | None = None) -> None:
    """Run a build step quietly; a failure names the step and ends with its output."""
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).decode(errors="replace")[-3000:]
        raise SandboxError(f"{what} failed (exit {done.returncode}):\n{tail}")
