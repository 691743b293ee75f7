"""Running one host process with fed stdin, capped capture, a timeout that kills, and no hang.

Shared by every backend: bwrap's ``nsenter`` into a live sandbox, the local backend's
subprocess, and docker's ``exec``. Written with one ``selectors`` loop (no threads), so stdin
of any size and both output streams make progress together and nothing deadlocks on a full
pipe. Two traps are handled: output over the cap is read and dropped (the writer is never
blocked, so it cannot stall), and a background process that keeps the pipes open after the
command has exited does not hold the caller: after the exit, output is read for a short grace
period and then the pipes are closed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agentgym.sandbox.base import ExecResult

__all__ = [
    "CappedBuffer",
    "descendants",
    "is_running",
    "kill_members",
    "kill_pids",
    "kill_tree",
    "members",
    "new_group",
    "parent_of",
    "proc_stat",
    "run_process",
    "start_time",
]

# After the command exits, how long to keep reading output its background children still write.
EXIT_GRACE_SECONDS = 0.05


@dataclass
class CappedBuffer:
    """Bytes up to ``cap``; the rest is counted and dropped."""

    cap: int
    data: bytearray
    dropped: int = 0

    @classmethod
    def of(cls, cap: int) -> CappedBuffer:
        return cls(cap, bytearray())

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room >= len(chunk):
            self.data += chunk
        else:
            self.data += chunk[: max(room, 0)]
            self.dropped += len(chunk) - max(room, 0)


def exit_code_of(returncode: int) -> int:
    """A Popen return code in the shell's convention (killed by signal N -> 128 + N)."""
    return 128 - returncode if returncode < 0 else returncode


def proc_stat(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, ...), or ``None``
    when the process is gone. (The name is cut at the last ``)``: it may hold spaces.)"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def is_running(pid: int) -> bool:
    """Alive and not a zombie (an exited child nobody has reaped yet)."""
    fields = proc_stat(pid)
    return fields is not None and fields[0] != b"Z"


def parent_of(pid: int) -> int | None:
    fields = proc_stat(pid)
    return int(fields[1]) if fields else None


def start_time(pid: int) -> str | None:
    """A process's start time in clock ticks (tells a live pid from a reused one)."""
    fields = proc_stat(pid)
    return fields[19].decode() if fields else None


def descendants(pid: int) -> list[int]:
    """Host pids of every live descendant of ``pid`` (read from ``/proc``; children first)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := proc_stat(entry)) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


# Supplementary (or, under docker, primary) gids that mark one command's processes: a process
# without capabilities cannot leave its groups, so detaching (setsid, a double fork, env -i)
# does not take it out of the command it belongs to. No file anywhere has these gids.
GROUP_BASE = 1_700_000_000


def new_group() -> int:
    """A fresh gid to mark one command's (or one session's) processes with."""
    return GROUP_BASE + secrets.randbelow(1 << 28)


def members(uid: int, gid: int) -> list[int]:
    """Host pids of the processes of ``uid`` that carry ``gid`` (real or supplementary)."""
    found = []
    wanted = str(gid).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as status:
                fields = dict(
                    line.split(b":", 1) for line in status.read().splitlines() if b":" in line
                )
        except OSError:
            continue
        if fields.get(b"Uid", b"").split()[:1] != [str(uid).encode()]:
            continue
        if fields.get(b"State", b"").split()[:1] == [b"Z"]:
            continue
        if wanted in fields.get(b"Groups", b"").split() or fields[b"Gid"].split()[0] == wanted:
            found.append(int(entry))
    return found


def kill_members(uid: int, gid: int, wait: float = 2.0) -> None:
    """SIGKILL every process of ``uid`` in ``gid`` until none is left (forks race the kill)."""
    deadline = time.monotonic() + wait
    while (pids := members(uid, gid)) and time.monotonic() < deadline:
        kill_pids(pids)
        time.sleep(0.002)


def kill_pids(pids: list[int]) -> None:
    """SIGKILL each pid, ignoring those already gone."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a process, its process group, and every descendant still alive."""
    targets = descendants(process.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    kill_pids([process.pid, *targets])


def run_process(
    argv: Sequence[str],
    *,
    stdin: bytes,
    timeout: float,
    output_cap: int,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    kill: Callable[[subprocess.Popen[bytes]], None] = kill_tree,
    popen: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen,
    stop_at_cap: bool = False,
) -> ExecResult:
    """Run ``argv`` to completion or ``timeout``; see the module docstring for the guarantees.
    ``stop_at_cap``: kill it once its stdout passes ``output_cap`` (a reader that needs the
    whole output has no use for the rest, and a command that never stops costs no more)."""
    started = time.monotonic()
    try:
        process = popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,  # its own process group: a timeout kills the whole group
            close_fds=True,
        )
    except FileNotFoundError as missing:
        return ExecResult(b"", f"{missing}\n".encode(), 127, False, 0.0, False)
    assert process.stdin and process.stdout and process.stderr
    out, err = CappedBuffer.of(output_cap), CappedBuffer.of(output_cap)
    sinks = {process.stdout.fileno(): out, process.stderr.fileno(): err}
    selector = selectors.DefaultSelector()
    for fd in sinks:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    pending = memoryview(stdin)
    stdin_fd = process.stdin.fileno()
    if pending:
        os.set_blocking(stdin_fd, False)
        selector.register(stdin_fd, selectors.EVENT_WRITE)
    else:
        process.stdin.close()
    deadline = started + timeout
    timed_out = False
    exited_at: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is not None and now > exited_at + EXIT_GRACE_SECONDS:
                break  # the command is done; a background child holds the pipes open
            if now >= deadline:
                timed_out = True
                kill(process)
                deadline = now + 1.0  # collect what the killed processes had written
                if exited_at is None:
                    process.wait()
                    exited_at = time.monotonic()
                continue
            wait = min(deadline - now, 0.01 if exited_at is not None else 0.05)
            for key, _ in selector.select(wait):
                fd = key.fd
                if fd == stdin_fd and pending:
                    try:
                        written = os.write(fd, pending[: 1 << 16])
                    except (BrokenPipeError, OSError):
                        written = len(pending)  # the command stopped reading: drop the rest
                    pending = pending[written:]
                    if not pending:
                        selector.unregister(fd)
                        process.stdin.close()
                    continue
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if chunk:
                    sinks[fd].add(chunk)
                    if stop_at_cap and out.dropped and exited_at is None:
                        kill(process)
                        process.wait()
                        exited_at = time.monotonic()
                else:
                    selector.unregister(fd)
    finally:
        selector.close()
        for stream in (process.stdin, process.stdout, process.stderr):
            if not stream.closed:
                stream.close()
    try:
        returncode = process.wait(timeout=max(0.0, deadline - time.monotonic()) + 1.0)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill(process)
        returncode = process.wait()
    return ExecResult(
        stdout_bytes=bytes(out.data),
        stderr_bytes=bytes(err.data),
        exit_code=exit_code_of(returncode),
        timed_out=timed_out,
        duration=time.monotonic() - started,
        truncated=bool(out.dropped or err.dropped),
    )
