"""The ``docker`` backend: one container per sandbox on a real daemon, made with the docker SDK.

Each sandbox is a container of ``spec.image`` (default :data:`~agentgym.sandbox.images.
SANDBOX_IMAGE`, built offline by ``agentgym containers build``) with ``network_mode="none"``,
a read-only root, a size-capped tmpfs for ``/tmp`` and for the work dir, every capability
dropped, ``no-new-privileges``, the bwrap backend's syscall list as seccomp profile, cgroup
limits on memory (no swap, tmpfs pages included), processes and CPU, and rlimits
(``ulimits``) on CPU time, file size, open files and processes. Commands run as an
unprivileged uid leased from :mod:`agentgym.sandbox.uids`, one per live sandbox, exactly as
under bwrap: the process limit is per sandbox, and from the host the sandbox's processes are
the processes of that uid (``processes_of(box.uid)``).

PID 1 is ``docker-init`` (tini) running ``sleep infinity`` as uid 0 of the container with no
capabilities: it reaps orphans, and code in the sandbox (another uid) can neither signal nor
ptrace it. ``RLIMIT_AS`` has no docker ulimit, so when the image has ``prlimit`` every command
starts under ``prlimit`` with the same limits as bwrap's (a memory bomb gets ``MemoryError``
instead of the cgroup's OOM kill); the cgroup limits hold either way.

Why commands go through ``docker exec -i`` (the CLI) driven by :func:`run_process`, not the
SDK's exec socket: the CLI path was measured as fast as the SDK's (about 0.1 s, nearly all of
it runc's own exec), the SDK reports the exec's host pid only after the process has often
already exited, and ``run_process`` already gives capped output, stdin of any size without
deadlock and a timeout that kills. Timeouts really kill: every command runs with a primary
gid of its own (``docker exec -u uid:gid``), which a process without capabilities cannot
leave (``env -i`` and ``setsid`` do not help); on timeout the host finds the exec's processes
by that gid (they are host processes of the sandbox's uid) and SIGKILLs them and all their
descendants, then the CLI. When the host cannot see the daemon's processes
(a remote ``DOCKER_HOST``), the command runs under ``timeout -s KILL`` (a second later) inside
instead; not otherwise, as that ``timeout`` would be a same-uid parent the command could
ptrace or signal.

One known cost: if a command leaves a background process holding its stdout or stderr
(``server &``), the daemon waits up to 2 s for that stream before ``docker exec`` returns.
Redirect background jobs (``server >log 2>&1 &``) or start them in a :meth:`session`.

Containers are labelled (``agentgym.sandbox=1`` and the owner's host, pid and start time);
the first sandbox a process makes on a daemon removes containers whose owner process is gone
(:func:`reap_orphans`), so a crash leaves nothing behind for long.

``spec.python`` does not apply: the host's Python is not bind-mounted into containers (the
image has its own; the default image has Debian 12's Python 3.11 as ``python``). ``spec.rootfs``
is checked (a missing tree is :class:`ImageNotFoundError`) but containers run ``spec.image``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import socket
import subprocess
from collections.abc import Mapping
from typing import Any

from agentgym.errors import ImageNotFoundError, SandboxError, SandboxUnavailableError, UsageError
from agentgym.sandbox.base import (
    ExecResult,
    Sandbox,
    SandboxSpec,
    check_host_paths,
)
from agentgym.sandbox.bwrap import limit_args
from agentgym.sandbox.dockerd import (
    client_for,
    docker_cli,
    docker_client,
    docker_host,
    docker_problem,
)
from agentgym.sandbox.images import SANDBOX_IMAGE
from agentgym.sandbox.process import (
    descendants,
    is_running,
    kill_members,
    kill_pids,
    kill_tree,
    members,
    new_group,
    parent_of,
    run_process,
    start_time,
)
from agentgym.sandbox.session import ShellSession
from agentgym.sandbox.syscalls import docker_profile
from agentgym.sandbox.uids import UidLease, lease_uid, processes_of

# docker_client and docker_problem live in dockerd (below images.py, which needs them too);
# they stay importable from here, where a caller making sandboxes looks for them.
__all__ = ["DockerSandbox", "docker_client", "docker_problem", "reap_orphans"]

LABEL = "agentgym.sandbox"
OWNER_HOST, OWNER_PID, OWNER_START = (
    "agentgym.owner.host",
    "agentgym.owner.pid",
    "agentgym.owner.start",
)
DEFAULT_CPUS = 1.0  # CPUs per container (AGENTGYM_DOCKER_CPUS); Limits has no CPU-count field
BUILD_HINT = "build it offline with `agentgym containers build`"


def reap_orphans(client: Any = None) -> list[str]:
    """Remove sandbox containers on this host whose owner process is gone; their names."""
    client = client or docker_client()
    me = socket.gethostname()
    removed = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        labels = container.labels or {}
        if labels.get(OWNER_HOST) != me:
            continue  # another machine's, sharing this daemon: not ours to judge
        try:
            pid = int(labels.get(OWNER_PID, ""))
        except ValueError:
            pid = -1
        if pid > 0 and start_time(pid) == labels.get(OWNER_START):
            continue
        with contextlib.suppress(Exception):
            container.remove(force=True)
            removed.append(container.name)
    return removed


@functools.cache
def _reaped(host: str) -> list[str]:
    """Reap once per process and daemon."""
    return reap_orphans(client_for(host))


_TOOLS: dict[str, frozenset[str]] = {}
PROBE = "for t in prlimit timeout bash; do command -v $t >/dev/null && echo $t; done; true"


class DockerSandbox(Sandbox):
    """A sandbox in a Docker container. Create through :func:`agentgym.sandbox.create`."""

    backend = "docker"

    def __init__(self, spec: SandboxSpec) -> None:
        problem = docker_problem()
        if problem:
            raise SandboxUnavailableError(f"docker backend unavailable: {problem}")
        check_host_paths(spec, f"the docker backend runs spec.image; {BUILD_HINT}")
        self.spec = spec
        self.image = spec.image or SANDBOX_IMAGE
        self.closed = True  # until the container runs, close() has nothing to do
        self._client = docker_client()
        self._host = docker_host()
        self._cli = docker_cli()
        _reaped(self._host)
        self._lease: UidLease = lease_uid()
        self.uid = self._lease.uid
        self._container: Any = None
        try:
            self._container = self._create()
            self.closed = False
            self._container.start()
            self._container.reload()
            self._init_pid = int(self._container.attrs["State"]["Pid"])
            self._init_start = start_time(self._init_pid)
            self._tools = self._probe_tools()
            self._prefix = self._command_prefix()
            for overlay in spec.overlays:  # no overlay filesystem here: a copy in a tmpfs
                self.put_dir(overlay.source, overlay.target)
        except BaseException:
            self._remove()
            self.closed = True
            self._lease.release()
            raise

    # ------------------------------------------------------------------ setup

    def _create(self) -> Any:
        import docker.errors
        from docker.types import Mount as DockerMount
        from docker.types import Ulimit

        spec, limits = self.spec, self.spec.limits
        ulimits = []
        for name, value in (
            ("cpu", limits.cpu_seconds),
            ("fsize", limits.file_size),
            ("nofile", limits.open_files),
            ("nproc", limits.processes),
        ):
            if value is not None:
                ulimits.append(Ulimit(name=name, soft=value, hard=value))
        size = f",size={limits.disk}" if limits.disk else ""
        tmpfs = {
            "/tmp": f"rw,exec,nosuid,nodev,mode=1777{size}",
            spec.workdir: f"rw,exec,nosuid,nodev,mode=0700,uid={self.uid},gid={self.uid}{size}",
        }
        for overlay in spec.overlays:
            tmpfs[overlay.target] = f"rw,exec,nosuid,nodev,uid={self.uid},gid={self.uid}{size}"
        # Mount objects, not the ``volumes`` dict: that is keyed by the host path, so two
        # mounts of one source (an empty dir hiding two directories) would collapse into one.
        binds = [
            DockerMount(m.target, m.source, type="bind", read_only=not m.writable)
            for m in spec.mounts
        ]
        cpus = float(os.environ.get("AGENTGYM_DOCKER_CPUS", DEFAULT_CPUS))
        options: dict[str, Any] = {
            "command": ["sleep", "infinity"],
            "name": f"agentgym-{os.getpid()}-{secrets.token_hex(4)}",
            "hostname": "sandbox",
            "labels": {
                LABEL: "1",
                OWNER_HOST: socket.gethostname(),
                OWNER_PID: str(os.getpid()),
                OWNER_START: start_time(os.getpid()) or "",
                "agentgym.uid": str(self.uid),
            },
            "user": "0:0",  # PID 1 only; every command runs as self.uid (see the module doc)
            "init": True,
            "network_mode": "none",
            "read_only": True,
            "tmpfs": tmpfs,
            "mounts": binds,
            "working_dir": spec.workdir,
            "environment": self._base_env(),
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges", f"seccomp={docker_profile()}"],
            "ulimits": ulimits,
            "nano_cpus": int(cpus * 1e9),
            "detach": True,
        }
        if limits.processes is not None:
            options["pids_limit"] = limits.processes + 2  # + init and its sleep
        if limits.memory is not None:
            options["mem_limit"] = limits.memory
            options["memswap_limit"] = limits.memory  # no swap on top
        try:
            return self._client.containers.create(self.image, **options)
        except docker.errors.ImageNotFound as missing:
            raise ImageNotFoundError(
                f"docker image {self.image!r} is not on the daemon at "
                f"{self._host or 'unix:///var/run/docker.sock'}: {BUILD_HINT}"
                + (" (it builds this image)" if self.image == SANDBOX_IMAGE else "")
            ) from missing
        except docker.errors.APIError as error:
            raise SandboxError(f"docker could not create the sandbox container: {error}") from error

    def _base_env(self) -> dict[str, str]:
        env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": self.spec.workdir,
            "USER": "sandbox",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(self.spec.env)
        return env

    def _probe_tools(self) -> frozenset[str]:
        """Which of ``prlimit``, ``timeout`` and ``bash`` the image has (once per image)."""
        image_id = self._container.attrs["Image"]
        if image_id not in _TOOLS:
            probe = self._container.exec_run(["/bin/sh", "-c", PROBE], user=f"{self.uid}")
            _TOOLS[image_id] = frozenset(probe.output.decode(errors="replace").split())
        return _TOOLS[image_id]

    def _command_prefix(self) -> list[str]:
        if "prlimit" in self._tools:
            return ["prlimit", *limit_args(self.spec.limits), "--"]
        return []

    def _exec_argv(
        self, marker: str, group: int, env: Mapping[str, str] | None, cwd: str | None
    ) -> list[str]:
        argv = [self._cli, "exec", "-i", "-u", f"{self.uid}:{group}"]
        argv += ["-e", f"AGENTGYM_EXEC={marker}"]
        for key, value in (env or {}).items():
            if not isinstance(key, str) or not isinstance(value, str) or not key or "=" in key:
                raise UsageError(f"env needs str names and values, got {key!r}")
            argv += ["-e", f"{key}={value}"]
        if cwd is not None:
            argv += ["-w", self.path(cwd)]
        return [*argv, self._container.id, *self._prefix]

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
        marker, group = secrets.token_hex(12), new_group()
        inner = []
        if self._init_start is None and "timeout" in self._tools:  # remote: host can't kill
            inner = ["timeout", "-s", "KILL", f"{timeout + 1:.3f}"]
        result = run_process(
            [*self._exec_argv(marker, group, env, cwd), *inner, *argv],
            stdin=stdin,
            timeout=timeout,
            output_cap=output,
            env=os.environ,
            kill=lambda cli: self._kill_command(group, cli),
        )
        if not self.alive():
            raise SandboxError("the sandbox's container stopped while a command ran")
        return result

    def _kill_command(self, group: int, cli: subprocess.Popen[bytes]) -> None:
        """SIGKILL every process of the command (its gid: detached ones too), then the CLI."""
        kill_members(self.uid, group)
        kill_tree(cli)

    def _kill_marked(self, name: str, marker: str, cli: subprocess.Popen[bytes] | None) -> None:
        """SIGKILL the container processes whose environment has ``name=marker``, and theirs."""
        roots = marked(self.uid, f"{name}={marker}".encode())
        kill_pids([pid for root in roots for pid in [root, *descendants(root)]])
        if cli is not None:
            kill_tree(cli)

    def session(self) -> ShellSession:
        self._ensure_open()
        marker, group = secrets.token_hex(12), new_group()
        shell = "bash" if "bash" in self._tools else "sh"
        argv = self._exec_argv(marker, group, {"AGENTGYM_SESSION": marker}, None)
        return DockerShellSession(
            [*argv, shell],
            dict(os.environ),
            self.spec.limits,
            sandbox=self,
            marker=marker,
            members=lambda: members(self.uid, group),
        )

    def alive(self) -> bool:
        if self.closed:
            return False
        if self._init_start is not None:  # a local daemon: its init is a host process
            return start_time(self._init_pid) == self._init_start and is_running(self._init_pid)
        try:
            self._container.reload()
        except Exception:
            return False
        return str(self._container.status) == "running"

    def _remove(self) -> None:
        if self._container is None:
            return
        import docker.errors

        try:
            self._container.remove(force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as error:
            raise SandboxError(
                f"docker could not remove container {self._container.name}: {error}"
            ) from error

    def _close(self) -> None:
        try:
            self._remove()
        finally:
            self._lease.release()  # kills whatever still runs under the uid on this host


class DockerShellSession(ShellSession):
    """A :class:`ShellSession` over ``docker exec -i``.

    The shell is not a descendant of the ``docker`` client on the host (the daemon starts it),
    so the shell's host pid is found by the ``AGENTGYM_SESSION`` marker in its environment.
    """

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        limits: Any,
        *,
        sandbox: DockerSandbox,
        marker: str,
        members: Any = None,
    ) -> None:
        self._sandbox, self._marker = sandbox, marker
        super().__init__(argv, env, limits, members=members)

    def _shell_pid(self) -> int:
        roots = marked(self._sandbox.uid, f"AGENTGYM_SESSION={self._marker}".encode())
        return roots[0] if roots else super()._shell_pid()

    def _kill_shell(self) -> None:
        self._sandbox._kill_marked("AGENTGYM_SESSION", self._marker, None)
        super()._kill_shell()


def marked(uid: int, entry: bytes) -> list[int]:
    """Processes of ``uid`` whose initial environment holds ``entry`` (``NAME=value``)."""
    found = []
    for pid in processes_of(uid):
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if entry in environ.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    # Only the roots: a marked process whose parent is marked too is one of its descendants.
    roots = set(found)
    return [pid for pid in found if parent_of(pid) not in roots]
