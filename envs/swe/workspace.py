"""A sandbox holding a working copy of a prepared repository at ``/testbed``.

The working copy is an :class:`~agentgym.sandbox.Overlay` of the prepared tree, so a reset
copies nothing: the files a task changes (its injected bug) are written on top, and so is
everything the agent does. Inside, the repository's own test environment (a virtualenv
bound read-only) is first on ``PATH``, the package imports from the working copy
(``PYTHONPATH``), and every other Python package directory of the machine is hidden behind
an empty directory: the host's interpreter carries installed copies of popular packages,
and an installed copy of the package under repair is its unbroken source.
"""

from __future__ import annotations

import io
import os
import posixpath
import sys
import sysconfig
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentgym.cache import cache_dir
from agentgym.envs.swe.testrun import REPO_DIR
from agentgym.sandbox import Limits, Mount, Overlay, Sandbox, SandboxSpec, create

if TYPE_CHECKING:
    from agentgym.envs.swe.prepare import PreparedRepo

__all__ = ["DEFAULT_LIMITS", "open_workspace", "workspace_spec", "write_files"]

VENV = "/opt/agentgym/swe/venv"
PLUGIN_DIR = "/opt/agentgym/swe/plugin"
HOME = "/work"
DEFAULT_LIMITS = Limits(
    timeout=120.0,
    memory=3 << 30,
    cpu_seconds=900,
    processes=256,
    file_size=128 << 20,
    disk=1 << 30,
    output=1 << 20,
)
IGNORED = (".git", "__pycache__", ".hypothesis", ".pytest_cache", "*.pyc", "*.egg-info")
"""What is never part of a working copy's changes: caches and the agent's own git data."""


def workspace_spec(
    prepared: PreparedRepo, limits: Limits = DEFAULT_LIMITS, backend: str = "bwrap"
) -> SandboxSpec:
    """The sandbox of one episode (or one grading run) on ``prepared``."""
    plugin = Path(__file__).parent / "pytest_plugin"
    homes = _interpreter_home(prepared)
    mounts = [Mount(home, home) for home in homes]
    mounts += [Mount(str(prepared.venv), VENV), Mount(str(plugin), PLUGIN_DIR)]
    mounts += [Mount(str(_empty_dir()), hidden) for hidden in _package_dirs(homes)]
    roots = [posixpath.normpath(posixpath.join(REPO_DIR, r)) for r in prepared.spec.import_roots]
    env = {
        "PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin",
        "VIRTUAL_ENV": VENV,
        "PYTHONPATH": ":".join([*roots, PLUGIN_DIR]),
        "PYTHONHASHSEED": "0",
        "HYPOTHESIS_STORAGE_DIRECTORY": "/tmp/.hypothesis",
        # The working copy belongs to root, the agent's uid runs git in it.
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "*",
        "GIT_AUTHOR_NAME": "agentgym",
        "GIT_AUTHOR_EMAIL": "swe@agentgym.invalid",
        "GIT_COMMITTER_NAME": "agentgym",
        "GIT_COMMITTER_EMAIL": "swe@agentgym.invalid",
    }
    del backend  # the same spec serves docker (which copies the overlay in)
    return SandboxSpec(
        mounts=tuple(mounts),
        overlays=(Overlay(str(prepared.tree), REPO_DIR),),
        workdir=HOME,
        env=env,
        limits=limits,
        python=False,
    )


def open_workspace(
    prepared: PreparedRepo,
    files: Mapping[str, str] | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    backend: str = "bwrap",
    git: bool = False,
) -> Sandbox:
    """A sandbox with the working copy at ``/testbed``, ``files`` (relative path -> text)
    written over it, and with ``git``, a fresh git repository whose only commit is that
    state (so ``git diff`` shows the agent its own changes and nothing older)."""
    box = create(workspace_spec(prepared, limits, backend), backend=backend)
    try:
        write_files(box, files or {})
        if git:
            init = (
                f"cd {REPO_DIR} && git init -q && git add -A && "
                "git commit -q --no-verify -m 'the repository' >/dev/null"
            )
            done = box.exec(["/bin/sh", "-c", init], timeout=60)
            if not done.ok:
                raise OSError(f"git init of the working copy failed: {done.stderr.strip()}")
    except BaseException:
        box.close()
        raise
    return box


_WRITE = """set -e
staged=$(mktemp -d)
tar -x -f - -C "$staged"
i=0
for entry do
  target=${entry#?}
  case $entry in
    -*) rm -f -- "$target" ;;
    *) mkdir -p -- "$(dirname -- "$target")"; cat "$staged/$i" >"$target" ;;
  esac
  i=$((i + 1))
done
rm -rf "$staged"
"""
"""Writes each staged file over its target in place (``cat >``: the target keeps its inode and
mode) and deletes the targets marked ``-``: one process tree for any number of files."""


def write_files(box: Sandbox, files: Mapping[str, str | None]) -> None:
    """Write (text) or delete (``None``) files of the working copy, in place as the
    sandbox's user (the prepared tree's files are writable by others)."""
    if not files:
        return
    buffer = io.BytesIO()
    entries = []
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for index, (path, text) in enumerate(files.items()):
            target = posixpath.join(REPO_DIR, path)
            entries.append(f"-{target}" if text is None else f"+{target}")
            data = (text or "").encode("utf-8", "surrogateescape")
            member = tarfile.TarInfo(str(index))
            member.size, member.mode = len(data), 0o600
            archive.addfile(member, io.BytesIO(data))
    argv = ["/bin/sh", "-c", _WRITE, "write", *entries]
    done = box.exec(argv, stdin=buffer.getvalue(), timeout=60)
    if not done.ok:
        raise OSError(f"could not write {sorted(files)} in the sandbox: {done.stderr.strip()}")


def _interpreter_home(prepared: PreparedRepo) -> list[str]:
    """The installation the test venv's interpreter belongs to, when it is not the system's
    (bound at its own path: the venv's ``python`` links to it by absolute path)."""
    home = ""
    for line in (prepared.venv / "pyvenv.cfg").read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home":
            home = value.strip()
    if not home or home.startswith("/usr/"):
        return []
    return [os.path.dirname(os.path.realpath(home))]


def _package_dirs(homes: list[str]) -> list[str]:
    """The Python package directories visible inside: the system's, and those of the
    interpreter installations bound in (each is hidden there)."""
    minor = sys.version_info.minor
    found = {"/usr/lib/python3/dist-packages", f"/usr/local/lib/python3.{minor}/dist-packages"}
    for home in homes:
        paths = sysconfig.get_paths(vars={"base": home, "platbase": home})
        found |= {paths["purelib"], paths["platlib"]}
    return sorted(path for path in found if os.path.isdir(path))


def _empty_dir() -> Path:
    path = cache_dir() / "swe" / "empty"
    path.mkdir(parents=True, exist_ok=True)
    return path
