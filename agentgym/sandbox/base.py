"""The sandbox protocol every backend implements: spec in, commands run, files moved, closed.

A :class:`Sandbox` is one isolated machine-in-miniature for one episode: a root filesystem
(read-only), a writable work directory, no network, limits on memory, CPU, processes, file
size, open files and captured output. Commands run either fresh (:meth:`Sandbox.exec`: a new
process tree each time) or in a :meth:`Sandbox.session` (one shell kept alive, so ``cd`` and
``export`` persist and a command costs a few milliseconds). Files move in and out through the
sandbox itself (``put_file``/``get_file``/``put_dir``/``get_dir``), never by following paths
from the host, so a symlink planted by the code inside cannot point the host at its own files.

What the code inside does wrong (a missing command, a crash, a timeout, too much output) comes
back in the :class:`ExecResult`; only a failure of the sandbox itself raises
(:class:`~agentgym.errors.SandboxError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import posixpath
import tarfile
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentgym.errors import (
    ImageNotFoundError,
    SandboxClosedError,
    SandboxFileNotFoundError,
    UsageError,
)

__all__ = [
    "ExecResult",
    "Limits",
    "Mount",
    "Overlay",
    "ResourceLimitError",
    "Sandbox",
    "SandboxSpec",
    "Session",
]

MiB = 1 << 20
GiB = 1 << 30

# stdin larger than this is a caller error: put the data in a file with put_file() instead.
MAX_STDIN_BYTES = 256 * MiB


class ResourceLimitError(SandboxClosedError):
    """The sandbox was killed for holding more than ``Limits.memory`` in all (its processes
    and its files): what its code did, not a failure of the machinery. The command running
    then returned with ``ExecResult.limit_exceeded`` set; any later call raises this."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox. Every limit is on by default; ``None`` turns one off.

    Attributes:
        timeout: seconds of wall time a command may run before it is killed (``exec`` default).
        memory: bytes the whole sandbox may hold: the resident memory of all its processes
            plus the files in its ``/tmp`` and work dir (bwrap: a watchdog that kills the
            sandbox, see ``docs/sandbox.md``; docker: the container's cgroup). Each process's
            address space (``RLIMIT_AS``) is capped at the same number.
        cpu_seconds: CPU seconds per process (``RLIMIT_CPU``); a spinning process is killed.
        processes: processes and threads the sandbox may have at once (``RLIMIT_NPROC`` on the
            sandbox's own uid, so one sandbox's fork bomb does not starve another).
        file_size: bytes one written file may reach (``RLIMIT_FSIZE``).
        open_files: file descriptors per process (``RLIMIT_NOFILE``).
        disk: bytes the work directory may hold, and ``/tmp`` the same (each a tmpfs, so
            memory: what they hold counts toward ``memory`` too).
        output: bytes of stdout and of stderr kept per command; the rest is counted, dropped,
            and the result says ``truncated``.
    """

    timeout: float = 60.0
    memory: int | None = 2 * GiB
    cpu_seconds: int | None = 600
    processes: int | None = 256
    file_size: int | None = 256 * MiB
    open_files: int | None = 1024
    disk: int | None = 1 * GiB
    output: int = 1 * MiB

    def __post_init__(self) -> None:
        for name in ("memory", "cpu_seconds", "processes", "file_size", "open_files", "disk"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value <= 0):
                raise UsageError(f"Limits.{name} must be a positive int or None, got {value!r}")
        if not isinstance(self.output, int) or self.output <= 0:
            raise UsageError(f"Limits.output must be a positive int, got {self.output!r}")
        check_timeout(self.timeout, "Limits.timeout")


@dataclass(frozen=True)
class Mount:
    """A host directory or file visible in the sandbox (read-only unless ``writable``)."""

    source: str
    target: str
    writable: bool = False

    def __post_init__(self) -> None:
        if not posixpath.isabs(self.target):
            raise UsageError(f"Mount.target must be an absolute path, got {self.target!r}")


@dataclass(frozen=True)
class Overlay:
    """A host directory shown writable at ``target``, copy-on-write: what the sandbox writes
    there stays in the sandbox (counted toward ``Limits.memory``, capped at ``Limits.disk``)
    and the host directory is never changed, so one prepared tree serves many sandboxes.

    Why: an episode that edits a repository wants its own working copy at once, and a full
    copy of a large tree per reset is what makes resets slow. bwrap mounts an overlay
    filesystem over the host directory (nothing is copied; the host path is not visible
    anywhere else inside); docker copies the tree into a tmpfs at ``target`` when the
    sandbox starts. ``target`` itself belongs to the sandbox's user; files and directories
    below it keep their owners and modes, so the tree's files must be writable by others
    for the sandbox's user (which owns none of them) to change them in place.
    """

    source: str
    target: str

    def __post_init__(self) -> None:
        if not posixpath.isabs(self.target) or posixpath.normpath(self.target) == "/":
            raise UsageError(
                f"Overlay.target must be an absolute path below /, got {self.target!r}"
            )


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox is made of.

    Attributes:
        rootfs: a directory holding a root filesystem (e.g. a ``debootstrap`` tree) to use
            instead of the host's ``/usr`` and ``/etc`` (bwrap), or ignored by docker.
        image: the container image (docker backend).
        mounts: extra host paths to show inside.
        overlays: host directories shown writable, copy-on-write (:class:`Overlay`).
        workdir: the writable directory commands start in (a fresh, empty tmpfs).
        env: environment variables of every command (on top of PATH, HOME, LANG).
        limits: resource limits.
        python: make the Python that runs agentgym available inside (read-only) and first on
            PATH, so code in the sandbox runs the interpreter and packages the host uses.
    """

    rootfs: str | None = None
    image: str | None = None
    mounts: tuple[Mount, ...] = ()
    overlays: tuple[Overlay, ...] = ()
    workdir: str = "/work"
    env: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    python: bool = True

    def __post_init__(self) -> None:
        if not posixpath.isabs(self.workdir):
            raise UsageError(f"SandboxSpec.workdir must be absolute, got {self.workdir!r}")
        for key, value in self.env.items():
            if not isinstance(key, str) or not isinstance(value, str) or "=" in key or not key:
                raise UsageError(f"SandboxSpec.env needs str names and values, got {key!r}")

    def with_limits(self, **changes: Any) -> SandboxSpec:
        """A copy with some limits changed: ``spec.with_limits(timeout=5)``."""
        return replace(self, limits=replace(self.limits, **changes))


@dataclass(frozen=True)
class ExecResult:
    """What a command did. ``exit_code`` is the shell's convention: 128+N when killed by N."""

    stdout_bytes: bytes
    stderr_bytes: bytes
    exit_code: int
    timed_out: bool
    duration: float
    truncated: bool
    limit_exceeded: str | None = None
    """Set when the sandbox was killed during this command for going over a limit of the
    whole sandbox (``Limits.memory``): what it held, against which limit."""

    @property
    def stdout(self) -> str:
        """stdout as text (undecodable bytes become U+FFFD; ``stdout_bytes`` keeps them)."""
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        """stderr as text (undecodable bytes become U+FFFD)."""
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def ok(self) -> bool:
        """Exit code 0 and not killed by the timeout."""
        return self.exit_code == 0 and not self.timed_out


def check_host_paths(spec: SandboxSpec, rootfs_hint: str) -> None:
    """The host paths a spec names exist: a missing rootfs is ImageNotFoundError, a missing
    mount source a UsageError (checked by every backend before it builds anything)."""
    if spec.rootfs and not (Path(spec.rootfs) / "usr").is_dir():
        raise ImageNotFoundError(f"rootfs {spec.rootfs!r} has no usr/ directory: {rootfs_hint}")
    for mount in spec.mounts:
        if not os.path.exists(mount.source):
            raise UsageError(f"mount source {mount.source!r} does not exist on the host")
    for overlay in spec.overlays:
        if not os.path.isdir(overlay.source):
            raise UsageError(f"overlay source {overlay.source!r} is not a directory on the host")


def check_timeout(timeout: Any, what: str = "timeout") -> float:
    """A positive number of seconds, or a UsageError naming the value."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise UsageError(f"{what} must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def as_stdin(stdin: bytes | str | None) -> bytes:
    """stdin as bytes, refusing what cannot be or should not be piped."""
    if stdin is None:
        return b""
    if isinstance(stdin, str):
        stdin = stdin.encode()
    if not isinstance(stdin, bytes | bytearray | memoryview):
        raise UsageError(f"stdin must be bytes, str or None, got {type(stdin).__name__}")
    if len(stdin) > MAX_STDIN_BYTES:
        raise UsageError(
            f"stdin of {len(stdin)} bytes is over {MAX_STDIN_BYTES}; write large inputs into the "
            f"sandbox with put_file() and read them from there"
        )
    return bytes(stdin)


def as_argv(cmd: str | Sequence[str]) -> list[str]:
    """A shell string runs under ``/bin/sh -c``; a sequence is an argv run as is."""
    if isinstance(cmd, str):
        if not cmd.strip():
            raise UsageError("the command is empty")
        return ["/bin/sh", "-c", cmd]
    argv = list(cmd)
    if not argv or not all(isinstance(part, str) for part in argv):
        raise UsageError(f"a command is a str or a non-empty list of str, got {cmd!r:.200}")
    if any("\0" in part for part in argv):
        raise UsageError("a command may not contain NUL bytes")
    return argv


class Session(ABC):
    """A shell kept alive in a sandbox: state (cwd, variables, background jobs) persists."""

    @abstractmethod
    def run(
        self, command: str, timeout: float | None = None, stdin: bytes | str | None = None
    ) -> ExecResult:
        """Run one shell command in the live shell and return its output and exit code."""

    @abstractmethod
    def close(self) -> None:
        """Stop the shell and every process it started (idempotent)."""

    def ended(self) -> bool:
        """Whether the shell has exited on its own (a command ran ``exit``, or it was
        killed) since the last :meth:`run`: the next command then starts a new shell, in
        the sandbox's work dir, without the old one's state (cwd, variables, jobs). False
        for a closed session. This default is for sessions whose shell cannot end that way."""
        return False

    async def arun(
        self, command: str, timeout: float | None = None, stdin: bytes | str | None = None
    ) -> ExecResult:
        """:meth:`run` in a worker thread, for the evaluator's event loop."""
        return await asyncio.to_thread(self.run, command, timeout, stdin)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Sandbox(ABC):
    """One live sandbox. Use as a context manager, or call :meth:`close`."""

    backend: str
    spec: SandboxSpec
    closed: bool = False
    limit_exceeded: str | None = None
    """Why the sandbox was killed for going over ``Limits.memory`` (then it is dead)."""
    own_user: bool = True
    """Commands run as a user of their own (no host process shares it), so killing every
    process of that user inside is safe: False only for the local backend."""

    def exec(
        self,
        cmd: str | Sequence[str],
        timeout: float | None = None,
        stdin: bytes | str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> ExecResult:
        """Run a command in a fresh process tree inside the sandbox.

        ``cmd`` is a shell string (run by ``/bin/sh -c``) or an argv list. ``timeout`` defaults
        to ``spec.limits.timeout``; on timeout the command's processes are killed and the result
        says ``timed_out``. A command that does not exist gives exit code 127, as in a shell.
        """
        self._ensure_open()
        argv = as_argv(cmd)
        limit = check_timeout(timeout if timeout is not None else self.spec.limits.timeout)
        return self._run(argv, as_stdin(stdin), limit, self.spec.limits.output, env, cwd)

    @abstractmethod
    def _run(
        self,
        argv: list[str],
        stdin: bytes,
        timeout: float,
        output: int,
        env: Mapping[str, str] | None,
        cwd: str | None,
    ) -> ExecResult:
        """Run a validated argv in the backend (``exec`` without the checks)."""

    @abstractmethod
    def session(self) -> Session:
        """A persistent shell in this sandbox (closed with the sandbox at the latest)."""

    @abstractmethod
    def alive(self) -> bool:
        """Whether the sandbox can still run commands (cheap; used by the pool)."""

    def overlay_upper(self, target: str) -> str | None:
        """The host path of the upper layer of the :class:`Overlay` at ``target``: a
        directory holding exactly the entries written there since the sandbox started, in
        overlayfs's format (a deleted entry is a 0/0 character device; a directory that
        replaced one of the source's carries ``trusted.overlay.opaque``). Lets the host see
        what changed without a command inside. Its contents are the sandbox's: read them
        without following links. ``None`` where the backend keeps no such layer on the
        host (docker copies the tree in) or no overlay is at ``target``."""
        return None

    @abstractmethod
    def _close(self) -> None:
        """Kill every process of the sandbox and free what it holds."""

    def close(self) -> None:
        """Kill every process in the sandbox and release it (idempotent)."""
        if not self.closed:
            self.closed = True
            self._close()

    def _ensure_open(self) -> None:
        if self.limit_exceeded:
            raise ResourceLimitError(
                f"this {self.backend} sandbox was killed: {self.limit_exceeded}"
            )
        if self.closed:
            raise SandboxClosedError(f"this {self.backend} sandbox is closed; create a new one")

    # ------------------------------------------------------------------ files, via the sandbox

    def path(self, path: str) -> str:
        """An absolute path inside the sandbox (relative ones are under the workdir)."""
        if not isinstance(path, str) or not path or "\0" in path:
            raise UsageError(f"a sandbox path must be a non-empty str, got {path!r}")
        return posixpath.normpath(posixpath.join(self.spec.workdir, path))

    def put_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        """Write ``data`` to ``path`` in the sandbox (parents are created)."""
        target = self.path(path)
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && chmod "$2" -- "$1"'
        result = self.exec(["/bin/sh", "-c", script, "put", target, f"{mode:o}"], stdin=data)
        if not result.ok:
            raise OSError(f"could not write {target} in the sandbox: {result.stderr.strip()}")

    def get_file(self, path: str) -> bytes:
        """The bytes of ``path`` in the sandbox (up to ``limits.file_size``)."""
        target = self.path(path)
        result = self._read_out(["/bin/cat", "--", target], target)
        return result.stdout_bytes

    def put_dir(self, source: str | Path, path: str) -> None:
        """Copy the host directory ``source`` to ``path`` in the sandbox (merged if present)."""
        source = Path(source)
        if not source.is_dir():
            raise UsageError(f"put_dir() needs a host directory, got {str(source)!r}")
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            archive.add(source, arcname=".")
        target = self.path(path)
        script = 'mkdir -p -- "$1" && tar -x -f - -C "$1" --no-same-owner'
        result = self.exec(["/bin/sh", "-c", script, "put", target], stdin=buffer.getvalue())
        if not result.ok:
            raise OSError(f"could not unpack into {target} in the sandbox: {result.stderr}")

    def get_dir(self, path: str, destination: str | Path, exclude: Sequence[str] = ()) -> list[str]:
        """Copy ``path`` from the sandbox into the host directory ``destination``.

        ``exclude`` holds tar patterns of what to leave out (``".git"``, ``"__pycache__"``:
        a name matches at any depth).

        Regular files (hard links kept as links), directories and nothing else are written,
        all inside ``destination`` (tarfile's ``data`` filter): symlinks, FIFOs and devices made
        by the code in the sandbox are not copied. Returns the paths (relative to ``path``)
        that were left out for that reason, so a caller can tell a complete copy from one that
        is not.
        """
        target = self.path(path)
        excluded = [f"--exclude={pattern}" for pattern in exclude]
        argv = ["/usr/bin/tar", "-c", "-f", "-", *excluded, "-C", target, "."]
        result = self._read_out(argv, target)
        destination = Path(destination)
        destination.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(result.stdout_bytes), mode="r") as archive:
            members = archive.getmembers()
            kept = [m for m in members if m.isfile() or m.isdir() or m.islnk()]
            archive.extractall(destination, members=kept, filter="data")
        skipped = [m.name for m in members if not (m.isfile() or m.isdir() or m.islnk())]
        return [posixpath.normpath(name) for name in skipped]

    def _read_out(self, argv: list[str], target: str) -> ExecResult:
        """Run a command that streams a path out; missing path and truncation are errors."""
        limit = self.spec.limits.file_size or 4 * GiB
        result = self._exec_capped(argv, limit)
        if result.exit_code != 0:
            if "No such file" in result.stderr or "Cannot open" in result.stderr:
                raise SandboxFileNotFoundError(f"{target} does not exist in the sandbox")
            raise OSError(f"could not read {target} from the sandbox: {result.stderr.strip()}")
        if result.truncated:
            raise OSError(f"{target} is larger than limits.file_size ({limit} bytes)")
        return result

    def _exec_capped(self, argv: list[str], output: int) -> ExecResult:
        """``exec`` with a different cap on captured stdout (file transfers)."""
        self._ensure_open()
        return self._run(argv, b"", self.spec.limits.timeout, output, None, None)

    # ------------------------------------------------------------------ async and context

    async def aexec(
        self,
        cmd: str | Sequence[str],
        timeout: float | None = None,
        stdin: bytes | str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> ExecResult:
        """:meth:`exec` in a worker thread, for the evaluator's event loop."""
        return await asyncio.to_thread(self.exec, cmd, timeout, stdin, env, cwd)

    async def aclose(self) -> None:
        """:meth:`close` in a worker thread."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A sandbox dropped without close() must not leave processes running.
        if not getattr(self, "closed", True):
            with contextlib.suppress(Exception):
                self.close()
