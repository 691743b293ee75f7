"""The working copy's state key: which files differ from the task's starting tree, and how.

A state key is digested after every step, so it must be cheap: a ``git status`` and a
``git diff`` in a shell of the sandbox cost about five raw process starts. Where the backend
keeps the working copy's overlay on the host (bwrap), the key is read there instead, from
the overlay's upper layer: it holds exactly the entries written since the sandbox started
(a deleted one as a whiteout, a directory that replaced the source's marked opaque), so
only the changed files are looked at, and a file is hashed again only when its inode
changed (its ``ctime``, which no agent can set back; a file changed in the last second is
hashed again).

What the key means: two working copies of one task have equal keys if and only if every
file (a regular file's bytes and executable bit, a link's target) outside the ignored names
(:data:`~agentgym.envs.swe.workspace.IGNORED`: git data, caches) is the same; directories
and other metadata do not count (as in a patch). The upper layer is compared with the one
at the start of the episode (the task's own changes) and with the source tree, so an edit
undone gives the starting key back. Where the layer cannot be read whole (a tree deeper
than the host's limits, which only an agent makes), or the backend has none (docker), the
key comes from git in the sandbox (:data:`GIT_STATE`), which is coarser: it sees an
untracked file by name only, and a committed change not at all.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import stat
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentgym.envs.swe.testrun import REPO_DIR
from agentgym.envs.swe.workspace import IGNORED
from agentgym.sandbox import Sandbox, Session

__all__ = ["GIT_STATE", "WorkingCopyKey", "git_state_key"]

GIT_STATE = "git status --porcelain -uall; git diff"
"""The key where the overlay's upper layer cannot be read: which files changed, and how."""

Entry = tuple[str, ...] | None
"""A file's state: ``("f", "x" or "-", sha256)``, ``("l", target)``, ``("o", type)`` for
anything else, ``None`` when there is no file."""

_Seen = tuple[str, int, int, int, int]
"""A file of the layer as last hashed: path, inode, size, mtime and ctime (ns)."""
_RACY_NS = 1_000_000_000
"""A file changed less than this before a read is hashed again at the next: file times
advance by clock ticks, so a second write of the same size in the same tick would
otherwise look unchanged (git's "racy" files)."""
_OPAQUE = "trusted.overlay.opaque"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def git_state_key(probe: Session) -> str:
    """The working copy's status and diff by git, digested in the sandbox."""
    return probe.run(f"cd {REPO_DIR} && {{ {GIT_STATE} ; }} 2>&1 | sha256sum").stdout


def _ignored(path: str) -> bool:
    return any(fnmatch.fnmatchcase(part, p) for part in path.split("/") for p in IGNORED)


class _Source:
    """The overlay's source tree on the host (never written: states computed once)."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.files = sorted(_source_files(str(tree)))
        self._entries: dict[str, Entry] = {}

    def entry(self, path: str) -> Entry:
        """The state of the source's ``path`` (``None`` for a directory, as for nothing)."""
        if path not in self._entries:
            self._entries[path] = _source_entry(self.tree / path)
        return self._entries[path]

    def under(self, directory: str) -> list[str]:
        """The source's files below ``directory``."""
        prefix = directory + "/"
        first = bisect_left(self.files, prefix)
        found = []
        for path in self.files[first:]:
            if not path.startswith(prefix):
                break
            found.append(path)
        return found


def _source_entry(full: Path) -> Entry:
    try:
        info = full.lstat()
        if stat.S_ISLNK(info.st_mode):
            return ("l", os.readlink(full))
        if stat.S_ISREG(info.st_mode):
            return ("f", _exec_bit(info.st_mode), _hash(full.read_bytes()))
    except OSError:  # not there (or below a file of the source)
        return None
    return None if stat.S_ISDIR(info.st_mode) else ("o", str(stat.S_IFMT(info.st_mode)))


@functools.lru_cache(maxsize=32)
def _source(tree: str, mtime_ns: int) -> _Source:
    del mtime_ns  # part of the cache key: a tree prepared again is read again
    return _Source(Path(tree))


def _source_files(tree: str) -> Iterator[str]:
    """Every non-directory of ``tree`` outside the ignored names, relative."""
    for folder, dirs, files in os.walk(tree):  # links to directories are not followed
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = [d for d in dirs if d not in links and not _ignored(d)]
        for name in [*files, *links]:
            relative = os.path.relpath(os.path.join(folder, name), tree)
            if not _ignored(relative):
                yield relative


def _exec_bit(mode: int) -> str:
    return "x" if mode & 0o111 else "-"


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class _Layer:
    """An upper layer as read at one moment."""

    files: dict[str, Entry] = field(default_factory=dict)
    """Its non-directories (whiteouts excluded), by path."""
    whiteouts: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    covers: set[str] = field(default_factory=set)
    """Paths below which the source shows nothing: opaque directories, whiteouts and
    non-directories (each replaced whatever the source had there)."""

    def state(self, path: str, source: _Source) -> Entry:
        if path in self.files:
            return self.files[path]
        if path in self.whiteouts or path in self.dirs:
            return None
        if any(a in self.covers for a in _ancestors(path)):
            return None
        return source.entry(path)

    def candidates(self, source: _Source) -> set[str]:
        """Every path whose state this layer may make differ from the source's."""
        found = set(self.files) | self.whiteouts | self.dirs
        for cover in self.covers:
            found.update(source.under(cover))
        return found


def _ancestors(path: str) -> Iterator[str]:
    end = path.find("/")
    while end != -1:
        yield path[:end]
        end = path.find("/", end + 1)


class WorkingCopyKey:
    """The state key of one episode's working copy, read from its overlay's upper layer.

    Made right after the task's starting files are written (the baseline); :meth:`__call__`
    gives the key of the working copy as it is now.
    """

    def __init__(self, box: Sandbox, upper: str, tree: Path, fallback: Callable[[], str]) -> None:
        self.box, self.upper = box, upper
        self.source = _source(str(tree), tree.stat().st_mtime_ns)
        self.fallback = fallback
        self._hashes: dict[_Seen, str] = {}  # the files of the last read, by inode state
        self._fresh: dict[_Seen, str] = {}
        self._settled = 0
        self.baseline = self._read()

    @classmethod
    def of(cls, box: Sandbox, tree: Path, fallback: Callable[[], str]) -> WorkingCopyKey | None:
        """The key of ``box``'s working copy, or ``None`` where its backend keeps no upper
        layer on the host (the caller then uses :func:`git_state_key`)."""
        upper = box.overlay_upper(REPO_DIR)
        if upper is None or _overlay_redirects():
            return None
        try:
            return cls(box, upper, tree, fallback)
        except OSError:
            return None

    def __call__(self) -> str:
        if not self.box.alive():  # its /proc entry may be another process's by now
            return "git:" + self.fallback()
        try:
            layer = self._read()
        except OSError:  # a tree past the host's limits (the agent's), or changing as read
            return "git:" + self.fallback()
        base, source = self.baseline, self.source
        changed = []
        for path in sorted(layer.candidates(source) | base.candidates(source)):
            now = layer.state(path, source)
            if now != base.state(path, source):
                changed.append(f"{path}\0{now!r}")
        return _hash("\n".join(changed).encode("utf-8", "surrogateescape"))

    def _read(self) -> _Layer:
        """The upper layer now: walked by directory descriptors, links never followed."""
        layer = _Layer()
        self._fresh = {}
        self._settled = time.time_ns() - _RACY_NS
        stack: list[tuple[str, int, list[str]]] = []  # open directories, subdirectories to go
        try:
            self._enter(stack, "", os.open(self.upper, _DIR), layer)
            while stack:
                directory, fd, subdirs = stack[-1]
                if not subdirs:
                    os.close(stack.pop()[1])
                    continue
                name = subdirs.pop()
                path = f"{directory}/{name}" if directory else name
                self._enter(stack, path, os.open(name, _DIR, dir_fd=fd), layer)
        finally:
            for _, fd, _ in stack:
                os.close(fd)
        self._hashes = self._fresh  # what is gone is forgotten
        return layer

    def _enter(
        self, stack: list[tuple[str, int, list[str]]], directory: str, fd: int, layer: _Layer
    ) -> None:
        stack.append((directory, fd, []))  # first, so that the descriptor is closed
        stack[-1][2].extend(self._scan(directory, fd, layer))

    def _scan(self, directory: str, fd: int, layer: _Layer) -> list[str]:
        """Record the files of one directory of the layer; return its subdirectories."""
        if directory and _opaque(fd):
            layer.covers.add(directory)
        prefix = f"{directory}/" if directory else ""
        subdirs = []
        with os.scandir(fd) as entries:
            for entry in entries:
                path = prefix + entry.name
                if _ignored(entry.name):
                    continue
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    layer.dirs.add(path)
                    subdirs.append(entry.name)
                elif stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                    layer.whiteouts.add(path)
                    layer.covers.add(path)
                else:
                    layer.files[path] = self._entry(path, entry.name, fd, info)
                    layer.covers.add(path)
        return subdirs

    def _entry(self, path: str, name: str, fd: int, info: os.stat_result) -> Entry:
        if stat.S_ISLNK(info.st_mode):
            return ("l", os.readlink(name, dir_fd=fd))
        if not stat.S_ISREG(info.st_mode):
            return ("o", str(stat.S_IFMT(info.st_mode)))
        seen = (path, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        digest = self._hashes.get(seen) or _hash_file(name, fd)
        if info.st_ctime_ns < self._settled:  # else a write in the same clock tick may follow
            self._fresh[seen] = digest
        return ("f", _exec_bit(info.st_mode), digest)


def _opaque(fd: int) -> bool:
    try:
        return os.getxattr(fd, _OPAQUE) == b"y"
    except OSError:  # ENODATA: not opaque
        return False


def _hash_file(name: str, directory: int) -> str:
    fd = os.open(name, _FILE, dir_fd=directory)
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):  # swapped under us
            raise OSError(f"{name} is no longer a regular file")
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@functools.cache
def _overlay_redirects() -> bool:
    """Whether this kernel's overlays may record a renamed directory or a metadata-only
    copy as a pointer into the source (``redirect_dir``, ``metacopy``): then the upper
    layer does not hold every changed file's bytes, and git gives the key."""
    for parameter in ("redirect_dir", "metacopy"):
        try:
            value = Path(f"/sys/module/overlay/parameters/{parameter}").read_text().strip()
        except OSError:
            continue
        if value not in ("N", "n", "0", "off"):
            return True
    return False
