"""Env-server images: ``agentgym serve-env`` in a container, one image per heavy family.

Every image is ``containers/server.Dockerfile`` built with the arguments of one
:class:`ServerImage` in :data:`SERVER_IMAGES`: ``server`` (the families that need no extra),
``web`` (Chromium), ``swe`` (git, bubblewrap, build tools) and ``gui`` (an X server, a window
manager and the desktop's applications). Each holds a venv at ``/opt/agentgym`` with agentgym
and the ``remote`` extra, plus its family's extra, and starts ``agentgym serve-env``.

The build is offline in the same sense as the sandbox image's (:mod:`agentgym.sandbox.images`):
no registry, and no package index inside the build. The build context is made on the host, in
a scratch folder under ``$AGENTGYM_CACHE/containers`` removed after the build: the wheel of
this checkout (``pip wheel``, as ``tests/test_wheel.py`` builds it) and every third-party wheel
it needs, which ``pip download`` resolves under the checkout's ``constraints.txt`` (the
development venv's versions). The
download goes through the host's pip, its configuration and its cache; inside the build only
``apt-get`` reaches out, to Debian's mirror, as for the sandbox image. (Our machines reach PyPI
through a TLS proxy whose certificate authority only the host trusts, so a ``pip install`` in
the build could not.)

An image is current when its label holds the digest of what it is built from: the
Dockerfile, the image's arguments, ``constraints.txt``, ``pyproject.toml``, ``setup.py`` and
every file of the folders the wheel is made of. A current image is not rebuilt, and nothing is
downloaded; a changed checkout rebuilds only the layer that installs agentgym's wheel (the
dependencies' layer is cached by Docker while their wheels are the same).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentgym.cache import cache_dir
from agentgym.errors import SandboxError, UsageError
from agentgym.sandbox.images import (
    ROOTFS_IMAGE,
    SANDBOX_IMAGE,
    Log,
    build_image,
    build_recipe,
)

__all__ = [
    "SERVER_IMAGES",
    "ServerImage",
    "build_server_image",
    "server_dockerfile",
    "server_image",
]

CHECKOUT = Path(__file__).resolve().parents[2]
BUILD_FILES = ("pyproject.toml", "setup.py", "README.md")
"""The files beside the mapped folders that ``pip wheel`` reads."""


@dataclass(frozen=True)
class ServerImage:
    """One env-server image: what ``containers/server.Dockerfile`` is built with."""

    name: str
    summary: str
    packages: tuple[str, ...] = ()
    """Debian packages beyond ``python3`` and ``python3-venv``."""
    extras: tuple[str, ...] = ()
    """agentgym extras beyond ``remote``."""
    no_deps: tuple[str, ...] = ()
    """Packages installed without their declared dependencies, as the Makefile installs them."""
    base: str = ROOTFS_IMAGE
    user: str = "agentgym"
    """Who the server runs as; ``root`` for families that make namespaces and drop to uids."""

    @property
    def tag(self) -> str:
        return f"agentgym/{self.name}:latest"

    @property
    def build_args(self) -> dict[str, str]:
        return {"BASE": self.base, "PACKAGES": " ".join(self.packages), "USER": self.user}


# Playwright's driver is a node binary of its own, linked against libatomic.
BROWSER = ("chromium", "fonts-liberation", "libatomic1")
# The Makefile's list for the GUI family (envs/gui: Xvfb, openbox and the four applications,
# D-Bus and AT-SPI for the accessibility view); its pixel twins of the web ids need Chromium.
DESKTOP = (
    "xvfb", "openbox", "mousepad", "gnumeric", "pcmanfm", "xterm", "x11-utils",
    "dbus-daemon", "at-spi2-core", "python3-gi", "gir1.2-atspi-2.0", "libatk-adaptor",
    "libgail-common",
)  # fmt: skip

SERVER_IMAGES: dict[str, ServerImage] = {
    image.name: image
    for image in (
        ServerImage("server", "the env server with the families that need no extra"),
        ServerImage(
            "web",
            "the web family: Playwright and Debian's Chromium, MiniWoB++'s pages",
            packages=BROWSER,
            extras=("web",),
            no_deps=("miniwob",),
        ),
        ServerImage(
            "swe",
            "the SWE family: git, bubblewrap and build tools, on the sandbox image",
            packages=("bubblewrap", "python3-seccomp", "git", "patch"),
            extras=("swe",),
            base=SANDBOX_IMAGE,
            user="root",
        ),
        ServerImage(
            "gui",
            "the GUI family: Xvfb, openbox and the desktop's applications, and Chromium",
            packages=(*BROWSER, *DESKTOP),
            extras=("gui",),
            no_deps=("miniwob",),
            user="root",
        ),
    )
}


def server_image(name: str) -> ServerImage:
    """The image called ``name``; a name that is none of them is a :class:`UsageError`."""
    try:
        return SERVER_IMAGES[name]
    except KeyError:
        known = ", ".join(SERVER_IMAGES)
        raise UsageError(f"no env-server image named {name!r}: the images are {known}") from None


def server_dockerfile() -> Path:
    """The env-server images' recipe in the checkout's ``containers/`` folder."""
    path = CHECKOUT / "containers" / "server.Dockerfile"
    if not path.is_file():
        raise SandboxError(
            f"{path} is missing: building images needs an agentgym checkout (containers/)"
        )
    return path


def build_server_image(name: str, force: bool = False, log: Log = print) -> str:
    """Build the env-server image ``name`` (and what it starts from) unless it is current."""
    image = server_image(name)
    if image.base == SANDBOX_IMAGE:
        build_image(log=log)
    recipe = server_dockerfile()
    digest = _digest(image, recipe)
    context = lambda: _context(image, log)  # noqa: E731 (called only when it builds)
    return build_recipe(recipe, image.tag, digest, context, image.build_args, force, log)


# ----------------------------------------------------------------------------- helpers


def _digest(image: ServerImage, recipe: Path) -> str:
    """The hash of everything the image is built from (see the module's docstring)."""
    digest = hashlib.sha256(repr(image).encode())
    for path in [recipe, CHECKOUT / "constraints.txt", *_source_files()]:
        digest.update(str(path.relative_to(CHECKOUT)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _source_files() -> Iterator[Path]:
    """The files ``pip wheel`` makes agentgym's wheel of, in a stable order."""
    for name in BUILD_FILES:
        yield CHECKOUT / name
    for folder in _mapped_folders():
        for path in sorted((CHECKOUT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield path


def _mapped_folders() -> list[str]:
    """The top-level folders ``pyproject.toml`` maps into the ``agentgym`` namespace."""
    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())
    return sorted(set(config["tool"]["setuptools"]["package-dir"].values()))


@contextlib.contextmanager
def _context(image: ServerImage, log: Log) -> Iterator[Path]:
    """The build context in a scratch folder under the cache, removed after the build."""
    parent = cache_dir() / "containers"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{image.name}-", dir=parent) as scratch:
        yield _fill_context(image, Path(scratch), log)


def _fill_context(image: ServerImage, context: Path, log: Log) -> Path:
    """``context/agentgym/`` (this checkout's wheel) and ``context/wheels/`` (the rest)."""
    ours, wheels = context / "agentgym", context / "wheels"
    ours.mkdir(parents=True)
    log(f"wheels: agentgym's from {CHECKOUT}, its dependencies by pip download")
    wheel = _build_wheel(ours)
    requirement = f"{wheel}[{','.join(('remote', *image.extras))}]"
    _pip("download", "--only-binary", ":all:", "-d", str(wheels), requirement)
    if image.no_deps:
        _pip("download", "--only-binary", ":all:", "--no-deps", "-d", str(wheels), *image.no_deps)
    (wheels / wheel.name).unlink()  # pip download copies the requirement itself in
    return context


def _build_wheel(out: Path) -> Path:
    """This checkout's wheel, built from a copy (so the checkout gets no ``build/``)."""
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "agentgym"
        skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        for folder in _mapped_folders():
            shutil.copytree(CHECKOUT / folder, source / folder, ignore=skip)
        for name in BUILD_FILES:
            shutil.copy2(CHECKOUT / name, source / name)
        _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(source))
    (wheel,) = out.glob("agentgym-*.whl")
    return wheel


def _pip(*args: str) -> None:
    """``pip`` of this interpreter, under the checkout's constraints; a failure says why."""
    argv = [sys.executable, "-m", "pip", args[0], "-q", "-c", str(CHECKOUT / "constraints.txt")]
    done = subprocess.run([*argv, *args[1:]], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-3000:]
        raise SandboxError(f"pip {args[0]} for an env-server image failed:\n{tail}")
