"""The Docker daemon: reaching the one ``DOCKER_HOST`` names, or running one of our own.

:func:`docker_client`, :func:`docker_cli` and :func:`docker_problem` are how the docker
backend (:mod:`agentgym.sandbox.docker`) and the image builder
(:mod:`agentgym.sandbox.images`) reach a daemon; they live here, below both, so neither
module imports the other for them.

Our machines (and CI) have the ``docker.io`` package but no running daemon and no registry.
:class:`PrivateDaemon` starts ``dockerd`` with its socket and runtime state in a short
directory under ``/tmp`` and its data root (images, so a built image survives between runs)
under ``$AGENTGYM_CACHE/docker`` (default ``~/.cache/agentgym/docker``), with no iptables and
no bridge: sandbox containers use ``network_mode="none"`` and need no network at all.

Several processes (two pytest runs, a build and a test run) may share one daemon: each user
holds a shared ``flock`` on ``users.lock`` for as long as it uses the daemon, start and stop
happen under an exclusive ``start.lock``, and the daemon is stopped by the last user to
leave, which then finds no other shared holder. So whoever stops it, it is never stopped
under someone else's feet, and nothing is left running once the last user is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from agentgym.cache import cache_dir, exclusive
from agentgym.errors import SandboxUnavailableError
from agentgym.sandbox.process import is_running

if TYPE_CHECKING:  # the SDK is an optional extra, imported only when a daemon is used
    from docker import DockerClient

__all__ = ["PrivateDaemon", "docker_cli", "docker_client", "docker_problem", "socket_answers"]


def docker_host() -> str:
    """``DOCKER_HOST`` as set now (empty: the default socket)."""
    return os.environ.get("DOCKER_HOST", "")


def docker_problem() -> str | None:
    """Why the docker backend cannot run here, or ``None`` when a daemon answers.

    Honours ``DOCKER_HOST``; the answer is cached per ``DOCKER_HOST`` value, and with no
    socket file at all it returns at once (``create(backend="auto")`` asks every time).
    """
    return _problem_for(docker_host())


@functools.cache
def _problem_for(host: str) -> str | None:
    try:
        import docker  # noqa: F401
    except ImportError:
        return "the docker Python package is missing: pip install 'agentgym[docker]'"
    if shutil.which("docker") is None:
        return "the docker command-line client is missing: apt-get install docker.io"
    if host.startswith("unix://") or not host:
        path = host.removeprefix("unix://") or "/var/run/docker.sock"
        if not os.path.exists(path):
            return (
                f"no Docker daemon socket at {path}; start dockerd (or set DOCKER_HOST), "
                f"see agentgym.sandbox.dockerd.PrivateDaemon"
            )
    try:
        client_for(host).ping()
    except Exception as error:
        return (
            f"the Docker daemon at {host or 'unix:///var/run/docker.sock'} does not answer: {error}"
        )
    return None


def docker_client() -> DockerClient:
    """A docker SDK client for the current ``DOCKER_HOST`` (one per host, shared)."""
    return client_for(docker_host())


@functools.cache
def client_for(host: str) -> DockerClient:
    """The shared docker SDK client for ``host`` (``""``: the default socket)."""
    import docker

    return docker.DockerClient(base_url=host or "unix:///var/run/docker.sock", timeout=60)


def docker_cli() -> str:
    """The ``docker`` command-line client."""
    cli = shutil.which("docker")
    if cli is None:
        raise SandboxUnavailableError("the docker command-line client is missing")
    return cli


def socket_answers(path: str | Path, timeout: float = 2.0) -> bool:
    """Whether a Docker daemon answers ``GET /_ping`` on the unix socket ``path``."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            conn.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            status = conn.recv(1024).split(b"\r\n", 1)[0]
            return status.startswith(b"HTTP/1.") and b" 200 " in status + b" "
    except OSError:
        return False


class PrivateDaemon:
    """``dockerd`` on a private socket, shared by its users and stopped by the last one.

    ``with PrivateDaemon() as daemon: os.environ["DOCKER_HOST"] = daemon.url``
    """

    def __init__(self, data_root: str | Path | None = None, start_timeout: float = 60.0) -> None:
        self.data_root = Path(data_root) if data_root else cache_dir() / "docker" / "data"
        # Unix socket paths are limited to 108 bytes, and containerd nests sockets under the
        # exec root: keep both in a short directory named after the data root.
        tag = hashlib.sha256(str(self.data_root.resolve()).encode()).hexdigest()[:12]
        self.run_dir = Path("/tmp") / f"agentgym-dockerd-{tag}"
        self.socket = self.run_dir / "docker.sock"
        self.url = f"unix://{self.socket}"
        self.log = self.data_root.parent / "dockerd.log"
        self.start_timeout = start_timeout
        self.started = False  # whether this user started the daemon
        self._user_fd: int | None = None

    def __enter__(self) -> PrivateDaemon:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Join the running daemon, or start it (idempotent per instance)."""
        if self._user_fd is not None:
            return
        self.data_root.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(mode=0o700, exist_ok=True)
        self._user_fd = os.open(self.run_dir / "users.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._user_fd, fcntl.LOCK_SH)
        try:
            with exclusive(self.run_dir / "start.lock"):
                if not socket_answers(self.socket):
                    self._launch()
                    self.started = True
        except BaseException:
            os.close(self._user_fd)
            self._user_fd = None
            raise

    def _launch(self) -> None:
        dockerd = _which("dockerd")
        self._kill_stale()
        argv = [dockerd, "--host", self.url, "--data-root", str(self.data_root)]
        argv += ["--exec-root", str(self.run_dir / "exec"), "--pidfile", str(self._pidfile)]
        argv += ["--iptables=false", "--ip-masq=false", "--bridge=none"]
        with open(self.log, "ab") as log:
            daemon = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )
        deadline = time.monotonic() + self.start_timeout
        while not socket_answers(self.socket, timeout=1.0):
            if daemon.poll() is not None or time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    daemon.kill()
                daemon.wait()
                tail = self.log.read_text(errors="replace")[-2000:]
                raise SandboxUnavailableError(
                    f"dockerd did not start (log {self.log}):\n{tail}\nIs docker.io installed "
                    f"(apt-get install docker.io) and are we root?"
                )
            time.sleep(0.1)

    @property
    def _pidfile(self) -> Path:
        return self.run_dir / "dockerd.pid"

    def _kill_stale(self) -> None:
        """A daemon left by a crashed run that no longer answers: stop it before starting."""
        pid = self._daemon_pid()
        if pid is not None:
            _terminate(pid)
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()

    def _daemon_pid(self) -> int | None:
        try:
            pid = int(self._pidfile.read_text().strip())
            with open(f"/proc/{pid}/comm", "rb") as comm:
                return pid if comm.read().strip() == b"dockerd" else None
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        """Leave; the last user stops the daemon (its containers die with it)."""
        if self._user_fd is None:
            return
        fd, self._user_fd = self._user_fd, None
        with exclusive(self.run_dir / "start.lock"):
            fcntl.flock(fd, fcntl.LOCK_UN)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)  # someone else still uses it
                return
            try:
                pid = self._daemon_pid()
                if pid is not None:
                    _terminate(pid)
            finally:
                os.close(fd)


def _terminate(pid: int, wait: float = 30.0) -> None:
    """SIGTERM (dockerd stops its containers and containerd), then SIGKILL if it hangs."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _which(tool: str) -> str:
    for directory in [*os.environ.get("PATH", "").split(os.pathsep), "/usr/sbin", "/usr/bin"]:
        candidate = os.path.join(directory, tool)
        if os.access(candidate, os.X_OK):
            return candidate
    raise SandboxUnavailableError(f"{tool} not found: apt-get install docker.io")
