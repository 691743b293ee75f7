"""A pool of unprivileged uids, one per live sandbox, shared by every process on the host.

Why a uid per sandbox: the kernel counts ``RLIMIT_NPROC`` per real uid, and does not enforce
it for uid 0 at all. Running each sandbox's commands as its own unprivileged uid makes the
process limit a per-sandbox limit (one sandbox's fork bomb cannot starve another), keeps
sandboxes from signalling or ptracing each other, and keeps them out of root-only files.

The uids are numeric (no ``/etc/passwd`` entries are made) from a high range nobody uses
(``AGENTGYM_SANDBOX_UID_BASE``, default 1,500,000). A uid is held through an ``flock`` on a
lock file, so concurrent evaluator processes never share one, and a crashed process frees its
uids when the kernel drops its locks. Before a uid is handed out, any process still running
under it (left by a crash) is killed, and a uid that owns kernel keys is skipped: the user
keyring of a uid outlives its processes, so a uid is recycled only once every process and
key of its previous holder is gone (the sandboxes' syscall filters deny the keyring calls,
so a sandbox cannot make one; a uid with keys was used by something else).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import tempfile
import time
from pathlib import Path

from agentgym.errors import SandboxError

__all__ = ["UidLease", "holds_keys", "lease_uid", "left_behind", "processes_of"]

SLOTS = 4096


def _base() -> int:
    return int(os.environ.get("AGENTGYM_SANDBOX_UID_BASE", "1500000"))


def _lock_dir() -> Path:
    path = Path(tempfile.gettempdir()) / "agentgym-sandbox-uids"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def processes_of(uid: int) -> list[int]:
    """Host pids of every process whose real uid is ``uid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def left_behind(uid: int) -> list[int]:
    """Host pids of processes a released lease of ``uid`` left running: those of the uid
    while nobody holds it. Once released, the lowest free uid is handed out again, maybe at
    once to another process's sandbox, whose processes are not leftovers: a uid leased
    again has none (checked under its lock, so no lease can begin meanwhile)."""
    fd = os.open(_lock_dir() / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return []
        return processes_of(uid)
    finally:
        os.close(fd)


def kill_all_of(uid: int, wait: float = 2.0) -> list[int]:
    """SIGKILL every process of ``uid`` until none is left; returns the survivors (none)."""
    deadline = time.monotonic() + wait
    while pids := processes_of(uid):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return pids
        time.sleep(0.005)
    return []


def holds_keys(uid: int) -> bool:
    """Whether ``uid`` owns kernel keys (``/proc/key-users``): a user keyring outlives every
    process of its uid, so a uid whose keys are not gone is never handed out again."""
    try:
        with open("/proc/key-users") as users:
            for line in users:
                owner, _, counts = line.partition(":")
                if owner.strip() == str(uid):
                    return int(counts.split()[1].split("/")[0]) > 0
    except (OSError, ValueError, IndexError):
        return False
    return False


class UidLease:
    """One uid, held until :meth:`release`."""

    def __init__(self, uid: int, lock_fd: int) -> None:
        self.uid = uid
        self._lock_fd: int | None = lock_fd

    def release(self) -> None:
        """Kill what still runs under the uid, then free it (idempotent)."""
        if self._lock_fd is None:
            return
        survivors = kill_all_of(self.uid)
        fd, self._lock_fd = self._lock_fd, None
        if survivors:  # keep it locked: a uid with live processes must not be reused
            raise SandboxError(f"processes {survivors} of sandbox uid {self.uid} survived SIGKILL")
        os.close(fd)


def lease_uid() -> UidLease:
    """Take a free uid from the pool (the lowest free one, so uids are reused)."""
    base, directory = _base(), _lock_dir()
    for slot in range(SLOTS):
        uid = base + slot
        fd = os.open(directory / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if kill_all_of(uid) or holds_keys(uid):
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise SandboxError(f"all {SLOTS} sandbox uids from {base} are in use on this host")
