"""The default backend: bubblewrap namespaces, an unprivileged uid per sandbox, rlimits, tmpfs.

One sandbox is one ``bwrap`` process that builds the namespaces and then idles as their
keeper: new PID, network (loopback only), IPC, UTS and cgroup namespaces; a root made of the
host's (or a given rootfs's) ``/usr`` and ``/etc`` read-only; a private ``/tmp`` and a
writable work directory, each a size-capped tmpfs; all capabilities dropped; a syscall filter
(:mod:`agentgym.sandbox.syscalls`). Commands enter those namespaces with ``nsenter`` (started
from the filtered thread), drop to the sandbox's own uid with ``setpriv`` (no capabilities,
``no_new_privs``, one supplementary gid per command that a timeout kills by) and get their
rlimits from ``prlimit``. A watchdog (:mod:`agentgym.sandbox.watchdog`) holds the whole
sandbox, processes and files, to ``Limits.memory``. Closing kills the keeper, which is PID 1
of the sandbox, so the kernel kills every process left inside, double-forked daemons
included; then any process still under the sandbox's uid is killed before the uid goes back
to the pool.

Why nsenter into a live namespace rather than a new ``bwrap`` per command: files written by
one command are there for the next (the work dir is the sandbox's, not the host's), background
processes survive between commands as in a container, and a command costs one ``nsenter``.

The traps measured on our machines (see ENVIRONMENT.md) and how they are met: as root, bwrap
keeps capabilities unless told (``--cap-drop ALL`` and an unprivileged uid); ``RLIMIT_NPROC``
is not enforced for uid 0 (the uid pool); root's home is mode 700 so an unprivileged user
silently falls back to Debian's Python (the interpreter is bound in with traversable parents,
and the tests check which Python runs); cgroups are unavailable (rlimits and tmpfs sizes).
This backend needs root (to run commands as other uids); without root, use docker.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath

from agentgym.errors import SandboxError, SandboxUnavailableError
from agentgym.sandbox.base import (
    ExecResult,
    Limits,
    Sandbox,
    SandboxSpec,
    check_host_paths,
)
from agentgym.sandbox.process import (
    descendants,
    kill_members,
    kill_tree,
    members,
    new_group,
    run_process,
)
from agentgym.sandbox.session import ShellSession
from agentgym.sandbox.syscalls import filter_problem, filtered_popen, program_fd
from agentgym.sandbox.uids import UidLease, kill_all_of, lease_uid
from agentgym.sandbox.watchdog import Usage, Watched, unwatch, watch

__all__ = ["BwrapSandbox", "bwrap_problem"]

KILL_WAIT = 10.0
"""Seconds a memory kill may take to leave no process behind: a SIGKILLed process that is
freeing a large address space on a loaded machine can take more than a second to go."""

LAYERS = "/.agentgym"
"""Where an overlay's host directory is staged (then unmounted) and where its writes live: a
tmpfs only root may enter, so the sandbox sees its overlays only at their targets."""

SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")

# The keeper sets its IPC namespace's SysV limits, then becomes ``sleep``: shared memory
# segments need no process to stay alive, so they are capped (64 MiB in all, 64 segments)
# instead of counted, and so are message queues (32 queues of 16 KiB).
IPC_LIMITS = (
    "echo 16384 >/proc/sys/kernel/shmall && echo 67108864 >/proc/sys/kernel/shmmax && "
    "echo 64 >/proc/sys/kernel/shmmni && echo 32 >/proc/sys/kernel/msgmni && "
    "exec /bin/sleep infinity"
)


@functools.cache
def bwrap_problem() -> str | None:
    """Why this backend cannot run here, or ``None`` when it can (probed once per process)."""
    if sys.platform != "linux":
        return "bubblewrap needs Linux"
    if os.geteuid() != 0:
        return (
            "the bwrap backend runs each sandbox under its own unprivileged uid, which needs "
            "root; run as root, or use the docker backend"
        )
    missing = [tool for tool in ("bwrap", "nsenter") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not found: apt-get install bubblewrap util-linux"
    probe = subprocess.run(
        ["bwrap", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--", "/bin/true"],
        capture_output=True,
        timeout=30,
    )
    if probe.returncode != 0:
        return f"bwrap cannot create namespaces here: {probe.stderr.decode().strip()}"
    return filter_problem()


def limit_args(limits: Limits) -> list[str]:
    """``prlimit`` options for the limits (soft = hard, so code inside cannot raise them)."""
    pairs = {
        "--as": limits.memory,
        "--cpu": limits.cpu_seconds,
        "--nproc": limits.processes,
        "--fsize": limits.file_size,
        "--nofile": limits.open_files,
    }
    return [f"{option}={value}" for option, value in pairs.items() if value is not None]


VENV_TARGET = "/opt/agentgym/venv"


def python_binds() -> list[tuple[str, str]]:
    """(host, sandbox) directories that make the running Python usable inside, read-only.

    The base interpreter is bound at its own path (a virtualenv's ``bin/python`` links to it
    by absolute path); a virtualenv is bound at :data:`VENV_TARGET`, not at its host path,
    which may lie inside a checkout that must stay out of reach. Only the environment's
    installed packages come along: an editable install's source tree does not.
    """
    base, prefix = os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)
    binds = [] if base.startswith("/usr") else [(base, base)]
    if prefix != base:
        binds.append((prefix, VENV_TARGET))
    return binds


def python_bin_dirs() -> list[str]:
    """PATH entries (inside) that run the bound Python first."""
    base, prefix = os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)
    dirs = [f"{VENV_TARGET}/bin"] if prefix != base else []
    return [*dirs, f"{base}/bin"]


class BwrapSandbox(Sandbox):
    """A sandbox made with bubblewrap. Create through :func:`agentgym.sandbox.create`."""

    backend = "bwrap"
    syscall_filter = True
    """False only to measure what the filter costs (``tests/perf/bench_sandbox.py``)."""

    def __init__(self, spec: SandboxSpec) -> None:
        problem = bwrap_problem()
        if problem:
            raise SandboxUnavailableError(f"bwrap backend unavailable: {problem}")
        check_host_paths(spec, "build one with `agentgym containers build` or debootstrap")
        root = Path(spec.rootfs) if spec.rootfs else Path("/")
        self.spec = spec
        self.closed = True  # until the keeper is up, close() has nothing to do
        self._lease: UidLease = lease_uid()
        self.uid = self._lease.uid
        try:
            self._keeper, self._pid = self._start_keeper(root)
            self.closed = False
            os.chown(f"/proc/{self._pid}/root{spec.workdir}", self.uid, self.uid)
            self._mount_overlays()
        except BaseException:
            if not self.closed:
                self._keeper.kill()
                self._keeper.wait()
            self._lease.release()
            raise
        self._env = self._base_env()
        self._killed = threading.Event()  # set once the watchdog's kill has left nothing running
        self._watched: Watched | None = None
        if spec.limits.memory is not None:
            mounts: tuple[str, ...] = (
                f"/proc/{self._pid}/root/tmp",
                f"/proc/{self._pid}/root{spec.workdir}",
            )
            if spec.overlays:
                mounts += (f"/proc/{self._pid}/root{LAYERS}/layers",)
            self._watched = Watched(self.uid, mounts, spec.limits.memory, self._over_limit)
            watch(self._watched)

    @property
    def _popen(self) -> Callable[..., subprocess.Popen[bytes]]:
        return filtered_popen if self.syscall_filter else subprocess.Popen

    def _over_limit(self, usage: Usage) -> None:
        """Called by the watchdog's thread: kill everything in the sandbox, say why."""
        limit = self.spec.limits.memory or 0
        self.limit_exceeded = (
            f"memory: the sandbox held {usage.describe()}, over its limit of "
            f"{limit >> 20} MiB (Limits.memory counts all its processes and files)"
        )
        try:
            self._keeper.kill()  # PID 1 inside: the kernel kills the rest of the namespace
            kill_all_of(self.uid, wait=KILL_WAIT)
        finally:
            self._killed.set()

    # ------------------------------------------------------------------ setup

    def _start_keeper(self, root: Path) -> tuple[subprocess.Popen[bytes], int]:
        read_info, write_info = os.pipe()
        seccomp = program_fd() if self.syscall_filter else os.open(os.devnull, os.O_RDONLY)
        argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-net", "--unshare-ipc"]
        argv += ["--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL", "--new-session"]
        argv += ["--hostname", "sandbox", "--info-fd", str(write_info)]
        argv += ["--seccomp", str(seccomp)] if self.syscall_filter else []
        argv += self._root_args(root)
        argv += ["--chdir", self.spec.workdir, "--", "/bin/sh", "-c", IPC_LIMITS]
        keeper = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(write_info, seccomp),
            start_new_session=True,
        )
        os.close(write_info)
        os.close(seccomp)
        with os.fdopen(read_info, "rb") as info:
            text = info.read()  # written as bwrap clones its child, before the mounts are made
        child = _child_pid(text)
        pid = _keeper_pid(child, keeper) if child is not None else None
        if pid is None:
            assert keeper.stderr
            keeper.kill()
            error = keeper.stderr.read().decode(errors="replace").strip()
            keeper.wait()
            raise SandboxError(f"bwrap could not create the sandbox: {error or text!r}")
        assert keeper.stderr
        keeper.stderr.close()
        return keeper, pid

    def _root_args(self, root: Path) -> list[str]:
        spec, disk = self.spec, self.spec.limits.disk
        args = ["--ro-bind", str(root / "usr"), "/usr", "--ro-bind", str(root / "etc"), "/etc"]
        for name in SYSTEM_DIRS:  # merged-/usr symlinks (bin -> usr/bin) or real dirs
            host = root / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        args += ["--proc", "/proc", "--dev", "/dev"]
        size = ["--size", str(disk)] if disk else []
        args += ["--perms", "01777", *size, "--tmpfs", "/tmp"]
        args += [*_dirs_for(spec.workdir), "--perms", "0700", *size, "--tmpfs", spec.workdir]
        binds = [(h, t, False) for h, t in python_binds()] if spec.python else []
        binds += [(m.source, m.target, m.writable) for m in spec.mounts]
        binds += [(o.source, f"{LAYERS}/lower/{i}", False) for i, o in enumerate(spec.overlays)]
        for source, target, writable in binds:
            args += _dirs_for(target)
            args += ["--bind" if writable else "--ro-bind", source, target]
        return args

    def _mount_overlays(self) -> None:
        """Mount each :class:`~agentgym.sandbox.base.Overlay` inside, as root of the host.

        In the sandbox's mount namespace: a tmpfs (capped at ``Limits.disk``, root only) for
        the upper layers, an overlay filesystem at each target over the host directory bound
        read-only at a staging path, then the staging bind is unmounted (the overlay keeps its
        own reference), so the host tree is reachable only through the overlay.
        """
        if not self.spec.overlays:
            return
        size = f",size={self.spec.limits.disk}" if self.spec.limits.disk else ""
        lines = [
            "set -e",
            f"mkdir -p {LAYERS}/layers",
            f"mount -t tmpfs -o mode=0700{size} agentgym-layers {LAYERS}/layers",
        ]
        for i, overlay in enumerate(self.spec.overlays):
            lower, layer = f"{LAYERS}/lower/{i}", f"{LAYERS}/layers/{i}"
            target = shlex.quote(overlay.target)
            options = f"lowerdir={lower},upperdir={layer}/up,workdir={layer}/work"
            lines += [
                f"mkdir -p {layer}/up {layer}/work {target}",
                f"mount -t overlay -o {options} agentgym-overlay {target}",
                f"umount -l {lower}",
                f"chown {self.uid}:{self.uid} {target}",
            ]
        # --pid as well: umount reads /proc/self, which the sandbox's /proc shows only to its
        # own processes.
        argv = ["nsenter", "--target", str(self._pid), "--mount", "--pid", "--"]
        done = subprocess.run(
            [*argv, "/bin/sh", "-c", "\n".join(lines)], capture_output=True, timeout=30
        )
        if done.returncode != 0:
            error = done.stderr.decode(errors="replace").strip()
            raise SandboxError(f"bwrap could not mount the sandbox's overlays: {error}")

    def _base_env(self) -> dict[str, str]:
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        if self.spec.python:
            path = ":".join([*python_bin_dirs(), path])
        env = {
            "PATH": path,
            "HOME": self.spec.workdir,
            "USER": "sandbox",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(self.spec.env)
        return env

    def _enter(self, group: int, cwd: str | None = None) -> list[str]:
        """The argv prefix that puts a command inside the sandbox as its uid, with limits.

        ``group`` is a supplementary gid that marks the command's processes (see
        :func:`~agentgym.sandbox.process.new_group`): a timeout kills all of them, detached or not.
        """
        uid = str(self.uid)
        prefix = ["nsenter", "--target", str(self._pid), "--mount", "--uts", "--ipc", "--net"]
        prefix += ["--pid", "--root", "--wd", "--"]
        prefix += ["/usr/bin/setpriv", "--reuid", uid, "--regid", uid, "--groups", str(group)]
        prefix += ["--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
        prefix += ["/usr/bin/prlimit", *limit_args(self.spec.limits), "--"]
        if cwd is not None:
            prefix += ["/usr/bin/env", "--chdir", self.path(cwd), "--"]
        return prefix

    # ------------------------------------------------------------------ the protocol

    def _run(
        self,
        argv: list[str],
        stdin: bytes,
        timeout: float,
        output: int,
        env: Mapping[str, str] | None,
        cwd: str | None,
    ) -> ExecResult:
        merged = {**self._env, **(env or {})}
        group = new_group()

        def kill(process: subprocess.Popen[bytes]) -> None:
            kill_tree(process)
            kill_members(self.uid, group)

        result = run_process(
            [*self._enter(group, cwd), *argv],
            stdin=stdin,
            timeout=timeout,
            output_cap=output,
            env=merged,
            kill=kill,
            popen=self._popen,
        )
        if self.limit_exceeded:
            # The watchdog kills from its own thread: return once it is done, so that a caller
            # who sees the kill never sees a process of the sandbox still dying.
            self._killed.wait(KILL_WAIT)
            note = f"\n[sandbox killed: {self.limit_exceeded}]\n".encode()
            return replace(
                result,
                stderr_bytes=result.stderr_bytes + note,
                exit_code=137,
                limit_exceeded=self.limit_exceeded,
            )
        if not self.alive():
            raise SandboxError("the sandbox's keeper process died while a command ran")
        return result

    def session(self) -> ShellSession:
        self._ensure_open()
        shell = "/bin/bash" if os.path.exists(f"/proc/{self._pid}/root/bin/bash") else "/bin/sh"
        group = new_group()
        return ShellSession(
            [*self._enter(group), shell],
            self._env,
            self.spec.limits,
            members=lambda: members(self.uid, group),
            popen=self._popen,
            ensure=self._ensure_open,
        )

    def alive(self) -> bool:
        return not self.closed and self._keeper.poll() is None

    def overlay_upper(self, target: str) -> str | None:
        self._ensure_open()
        for i, overlay in enumerate(self.spec.overlays):
            if overlay.target == target:  # seen through the keeper's mount namespace
                return f"/proc/{self._pid}/root{LAYERS}/layers/{i}/up"
        return None

    def _close(self) -> None:
        if self._watched is not None:
            unwatch(self._watched)
            if self._watched.fired:
                self._killed.wait(KILL_WAIT)
        self._keeper.kill()  # --die-with-parent takes PID 1 inside, and the kernel the rest
        self._keeper.wait()
        self._lease.release()


def _child_pid(info: bytes) -> int | None:
    try:
        return int(json.loads(info)["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None


def _keeper_pid(child: int, keeper: subprocess.Popen[bytes], wait: float = 10.0) -> int | None:
    """The host pid of ``sleep infinity`` inside, once it runs: the sandbox is then complete.

    (bwrap reports its child's pid before it has built the root filesystem; entering then
    would land in the host's root.)
    """
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and keeper.poll() is None:
        for pid in [child, *descendants(child)]:
            try:
                with open(f"/proc/{pid}/comm", "rb") as comm:
                    if comm.read().strip() == b"sleep":
                        return pid
            except OSError:
                continue
        time.sleep(0.001)
    return None


def _dirs_for(target: str) -> list[str]:
    """``--dir`` for each parent of ``target``, mode 0755, so the sandbox user can walk to it."""
    parents = list(PurePosixPath(target).parents)[:-1]  # without "/"
    args: list[str] = []
    for parent in reversed(parents):
        args += ["--perms", "0755", "--dir", str(parent)]
    return args
