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

import contextlib
import fnmatch
import io
import os
import posixpath
import sys
import sysconfig
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentgym.cache import cache_dir
from agentgym.envs.swe.patches import make_patch
from agentgym.envs.swe.repos import PreparedRepo
from agentgym.envs.swe.testrun import REPO_DIR
from agentgym.errors import SandboxError
from agentgym.sandbox import (
    ExecResult,
    Limits,
    Mount,
    Overlay,
    Sandbox,
    SandboxSpec,
    create,
)

__all__ = [
    "DEFAULT_LIMITS",
    "MAX_CHANGED_BYTES",
    "MAX_FILE_BYTES",
    "WorkingCopy",
    "WorkingCopyError",
    "open_workspace",
    "read_working_copy",
    "workspace_spec",
    "write_files",
]

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
MAX_FILE_BYTES = 4 << 20
"""A file of the working copy larger than this is left out of the patch: no source file is
so large (the catalogue's largest is 256 KiB), and a log or data file the agent made must
not void its fix."""
MAX_CHANGED_BYTES = 64 << 20
"""The most bytes of new and changed files a submission is read from: a working copy with
more ends the episode with a 0 (:class:`WorkingCopyError`)."""
_BATCH_BYTES = 768 << 10
"""Files are read out in tar batches of about this size (a command's output is capped at
``DEFAULT_LIMITS.output``); a file larger than a batch is read alone."""


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
    files: Mapping[str, str | None] | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    backend: str = "bwrap",
    git: bool = False,
) -> Sandbox:
    """A sandbox with the working copy at ``/testbed``, ``files`` (relative path -> text,
    or ``None`` to delete) written over it, and with ``git``, a fresh git repository whose
    only commit is that state (so ``git diff`` shows the agent its own changes and nothing
    older)."""
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


# ------------------------------------------------------------------ reading the working copy


class WorkingCopyError(Exception):
    """The agent's files make its working copy unreadable as a whole (more changed bytes
    than :data:`MAX_CHANGED_BYTES`, too many files to list, files changing while they are
    read): the agent's doing, so the episode scores 0 with this reason, never an error."""


@dataclass(frozen=True)
class WorkingCopy:
    """What a submission is: the patch of the working copy against the task's starting
    tree, and the files left out of it with the reason for each."""

    patch: str
    left_out: Mapping[str, str] = field(default_factory=dict)

    def note(self, shown: int = 10) -> str:
        """The left-out files in a sentence ("" when none)."""
        if not self.left_out:
            return ""
        items = [f"{path!r} ({why})" for path, why in sorted(self.left_out.items())[:shown]]
        more = f" and {len(self.left_out) - shown} more" if len(self.left_out) > shown else ""
        return f"left out of the patch: {', '.join(items)}{more}"


_Stat = tuple[str, int, int]
"""A listed file: its type (find's ``%y``: ``f`` file, ``d`` directory, ``l`` link...), size
and modification time in whole seconds."""


def read_working_copy(
    box: Sandbox, prepared: PreparedRepo, start: Mapping[str, str | None]
) -> WorkingCopy:
    """The patch of the working copy at ``/testbed`` against the task's starting tree
    (``prepared``'s tree with ``start`` written over it), read out of the sandbox as files:
    its git data is the agent's and is not trusted.

    Bounded whatever the agent left there. The tree is listed first; a file counts as
    unchanged when it is not one the task wrote and its size and time are the pristine
    file's (a change hidden that way is left out, which only loses). Left out, each with
    its reason: files over :data:`MAX_FILE_BYTES`, that are not UTF-8 text, whose names are
    not UTF-8, that are not regular files or cannot be read. Raises
    :class:`WorkingCopyError` when the changed files hold more than
    :data:`MAX_CHANGED_BYTES` or the tree cannot be listed or read whole.
    """
    listed, left_out = _listing(box)
    pristine = _tree_stats(prepared.tree)
    candidates = []
    for path, stat in listed.items():
        if path not in start and pristine.get(path) == stat:
            continue
        kind, size, _ = stat
        if kind != "f":
            if kind != "d":
                left_out[path] = "not a regular file"
        elif size > MAX_FILE_BYTES:
            left_out[path] = f"{size} bytes, over {MAX_FILE_BYTES}"
        else:
            candidates.append(path)
    total = sum(listed[path][1] for path in candidates)
    if total > MAX_CHANGED_BYTES:
        raise WorkingCopyError(
            f"the working copy's new and changed files hold {total} bytes, over the "
            f"{MAX_CHANGED_BYTES} a submission is read from"
        )
    data = _read_files(box, candidates, listed)

    def before(path: str) -> str | None:
        return start[path] if path in start else _pristine_text(prepared, path)

    changes: dict[str, tuple[str | None, str | None]] = {}
    for path in candidates:
        if path not in data:
            left_out[path] = "could not be read"
            continue
        try:
            text = data[path].decode("utf-8")
        except UnicodeDecodeError:
            if path in start or _pristine_bytes(prepared, path) != data[path]:
                left_out[path] = "not UTF-8 text"
            continue
        if len(data[path]) > MAX_FILE_BYTES:
            left_out[path] = f"{len(data[path])} bytes, over {MAX_FILE_BYTES}"
        elif text != before(path):
            changes[path] = (before(path), text)
    gone = {p for p, (kind, _, _) in pristine.items() if kind == "f"} | set(start)
    for path in gone - {p for p, (kind, _, _) in listed.items() if kind == "f"}:
        if path not in left_out and before(path) is not None:
            changes[path] = (before(path), None)
    return WorkingCopy(make_patch(changes), left_out)


def _listing(box: Sandbox) -> tuple[dict[str, _Stat], dict[str, str]]:
    """Every entry of the working copy but the ignored ones (its type, size and time), and
    the entries left out for their names (not UTF-8)."""
    names: list[str] = []
    for pattern in IGNORED:
        names += ["-o", "-name", pattern]
    argv = ["/usr/bin/find", REPO_DIR, "-mindepth", "1", "(", *names[1:], ")", "-prune"]
    result = _machinery(box.exec([*argv, "-o", "-printf", "%y %s %T@ %P\\0"], timeout=120))
    if result.timed_out or result.truncated:
        raise WorkingCopyError(
            "the working copy holds too many files to list (the listing "
            f"{'took over 120 s' if result.timed_out else 'is over its output limit'})"
        )
    listed: dict[str, _Stat] = {}
    left_out: dict[str, str] = {}
    for entry in filter(None, result.stdout_bytes.split(b"\0")):
        kind, size, mtime, name = entry.split(b" ", 3)
        try:
            path = name.decode("utf-8")
        except UnicodeDecodeError:
            left_out[name.decode("utf-8", "backslashreplace")] = "its name is not UTF-8"
            continue
        listed[path] = (kind.decode(), int(size), int(mtime.split(b".")[0]))
    return listed, left_out


def _machinery(result: ExecResult) -> ExecResult:
    """``result``, unless the tool itself could not run (exit 126 or 127: the sandbox
    lacks ``find`` or ``tar``): a failure of ours, never the agent's 0."""
    if result.exit_code in (126, 127):
        raise SandboxError(f"the sandbox cannot read the working copy: {result.stderr.strip()}")
    return result


def _ignored(parts: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(part, pattern) for part in parts for pattern in IGNORED)


def _tree_stats(tree: Path) -> dict[str, _Stat]:
    """The pristine tree's entries as :func:`_listing` gives them (types as find's)."""
    found: dict[str, _Stat] = {}
    for path in tree.rglob("*"):
        relative = path.relative_to(tree)
        if _ignored(relative.parts):
            continue
        stat = path.lstat()
        kind = "l" if path.is_symlink() else "d" if path.is_dir() else "f"
        found[relative.as_posix()] = (kind, stat.st_size, stat.st_mtime_ns // 1_000_000_000)
    return found


def _pristine_bytes(prepared: PreparedRepo, path: str) -> bytes | None:
    file = prepared.tree / path
    return file.read_bytes() if file.is_file() and not file.is_symlink() else None


def _pristine_text(prepared: PreparedRepo, path: str) -> str | None:
    data = _pristine_bytes(prepared, path)
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def _read_files(box: Sandbox, paths: list[str], listed: Mapping[str, _Stat]) -> dict[str, bytes]:
    """The bytes of ``paths`` (files of the working copy) that could be read: small ones in
    tar batches under a command's output limit, larger ones one by one."""
    found: dict[str, bytes] = {}
    batch: list[str] = []
    size = 0
    for path in sorted(paths, key=lambda p: listed[p][1]):
        cost = listed[path][1] + 1536 + len(path.encode())
        if cost > _BATCH_BYTES:
            # Unreadable, gone, or grown past the sandbox's file size limit: left out.
            with contextlib.suppress(OSError):
                found[path] = box.get_file(posixpath.join(REPO_DIR, path))
            continue
        if size + cost > _BATCH_BYTES:
            found.update(_read_batch(box, batch))
            batch, size = [], 0
        batch.append(path)
        size += cost
    if batch:
        found.update(_read_batch(box, batch))
    return found


def _read_batch(box: Sandbox, paths: list[str]) -> dict[str, bytes]:
    """Files of the working copy, read in one tar stream (unreadable ones are missing)."""
    names = b"".join(b"./" + path.encode() + b"\0" for path in paths)
    argv = ["/usr/bin/tar", "-c", "-f", "-", "--null", "--no-recursion", "--ignore-failed-read"]
    result = _machinery(box.exec([*argv, "-C", REPO_DIR, "-T", "-"], stdin=names, timeout=120))
    if result.timed_out or result.truncated:
        raise WorkingCopyError("the working copy's files changed while they were read")
    found: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(result.stdout_bytes), mode="r:") as archive:
            for member in archive:
                extracted = archive.extractfile(member) if member.isfile() else None
                if extracted is not None:
                    found[posixpath.normpath(member.name)] = extracted.read()
    except (tarfile.TarError, EOFError) as error:
        raise WorkingCopyError(f"the working copy could not be read whole: {error}") from None
    return found
