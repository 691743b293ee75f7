"""Per-sandbox memory accounting without cgroups: a watchdog that sums and kills.

``RLIMIT_AS`` bounds one process; a sandbox of many processes and tmpfs files is bounded by
nothing the kernel offers us (no cgroups on our machines). So one thread per host process
measures, every :data:`INTERVAL` seconds, what each watched sandbox holds:

* its processes' resident memory that no file backs (``RssAnon`` + ``RssShmem`` from
  ``/proc/PID/status``, over the processes of the sandbox's own uid: forked copies of a page
  are counted once per process, so the sum can only over-count);
* memory files its processes hold open (``memfd``), unmapped ones too (their size);
* what its tmpfs mounts hold (``/tmp`` and the work dir, deleted-but-open files included);

and kills the sandbox whose sum is over its limit (:meth:`Watched.over_limit`). Between two
looks a sandbox can overshoot by what it can allocate in :data:`INTERVAL` (a few hundred MiB
at most on our machines), never by more than one process's ``RLIMIT_AS`` at once.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["INTERVAL", "Usage", "Watched", "unwatch", "usage_of", "watch"]

INTERVAL = 0.05


@dataclass
class Usage:
    """What one sandbox holds, in bytes."""

    processes: int = 0
    memfds: int = 0
    files: int = 0

    @property
    def total(self) -> int:
        return self.processes + self.memfds + self.files

    def describe(self) -> str:
        mib = 1 << 20
        return (
            f"{self.total // mib} MiB (processes {self.processes // mib} MiB, memory files "
            f"{self.memfds // mib} MiB, files in /tmp and the work dir {self.files // mib} MiB)"
        )


@dataclass
class Watched:
    """One sandbox under watch: its uid, where its tmpfs mounts are seen from the host, its
    limit, and what to call when it is over."""

    uid: int
    mounts: tuple[str, ...]
    limit: int
    over_limit: Callable[[Usage], None]
    fired: bool = field(default=False)


_lock = threading.Lock()
_watched: weakref.WeakValueDictionary[int, Watched] = weakref.WeakValueDictionary()
_wake = threading.Event()
_thread: threading.Thread | None = None


def watch(entry: Watched) -> None:
    """Start watching (the entry is held weakly: keep a reference for as long as it counts)."""
    global _thread
    with _lock:
        _watched[entry.uid] = entry
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_loop, name="agentgym-sandbox-watchdog", daemon=True)
            _thread.start()
    _wake.set()


def unwatch(entry: Watched) -> None:
    with _lock:
        if _watched.get(entry.uid) is entry:
            del _watched[entry.uid]


def _loop() -> None:
    while True:
        with _lock:
            entries = list(_watched.values())
        if not entries:
            _wake.wait(1.0)
            _wake.clear()
            continue
        for entry, usage in zip(entries, usage_of(entries), strict=True):
            if usage.total > entry.limit and not entry.fired:
                entry.fired = True
                with contextlib.suppress(Exception):
                    entry.over_limit(usage)
        time.sleep(INTERVAL)


def usage_of(entries: list[Watched]) -> list[Usage]:
    """What each sandbox holds now (one pass over ``/proc`` for all of them)."""
    by_uid = {entry.uid: Usage() for entry in entries}
    with os.scandir("/proc") as scan:
        for proc in scan:
            if not proc.name.isdigit():
                continue
            try:
                usage = by_uid.get(proc.stat().st_uid)
                if usage is not None:
                    usage.processes += _resident(proc.path)
                    usage.memfds += _memfds(proc.path)
            except OSError:
                continue  # gone meanwhile
    for entry in entries:
        usage = by_uid[entry.uid]
        for mount in entry.mounts:
            with contextlib.suppress(OSError):
                stats = os.statvfs(mount)
                usage.files += (stats.f_blocks - stats.f_bfree) * stats.f_frsize
    return [by_uid[entry.uid] for entry in entries]


def _resident(proc: str) -> int:
    total = 0
    with open(f"{proc}/status", "rb") as status:
        for line in status:
            if line.startswith((b"RssAnon:", b"RssShmem:")):
                total += int(line.split()[1]) * 1024
    return total


def _memfds(proc: str) -> int:
    total = 0
    for fd in os.listdir(f"{proc}/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"{proc}/fd/{fd}").startswith("/memfd:"):
                total += os.stat(f"{proc}/fd/{fd}").st_blocks * 512
    return total
