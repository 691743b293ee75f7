"""A real X11 desktop per episode: Xvfb, openbox and Debian applications, isolated.

**Isolation.** Each desktop leases an unprivileged uid from the sandboxes' pool
(:mod:`agentgym.sandbox.uids`, no ``/etc/passwd`` entry) and runs every process as that uid
(``setpriv``, no supplementary groups, ``no_new_privs``), each in a network namespace of its
own holding only a down loopback (``unshare --net``): no network. Its home is a fresh temporary
directory of that uid (mode 700), which every process sees at ``/home/user`` (a mount
namespace of its own, :data:`HOME_INSIDE`), so applications of two desktops cannot read each other's
files, signal each other's processes, or open each other's display: the X server admits only
clients with its own cookie (:func:`agentgym.envs.gui.x11.write_xauthority`). The display
number is the first free one, chosen by Xvfb itself (``-displayfd``), so desktops started at
once never race for one.

**Reset.** :meth:`Desktop.reset` kills every process of the uid but the X server and the window
manager, puts the home back as it was when the desktop started (a snapshot copied then), and
launches the given applications, waiting until each shows a window.

**Close.** :meth:`Desktop.close` closes the X connection, stops Xvfb with SIGTERM (it removes
its lock file and socket), kills whatever is left under the uid and returns the uid to the
pool, removes the lock and socket if Xvfb could not, then the temporary directory.

**Faults.** A dead X server, or an application that died by a signal or an error status, is a
:class:`~agentgym.envs.gui.x11.DesktopCrashedError` (an infrastructure error: the episode is
errored, never scored) from :meth:`Desktop.check` and from every call on the screen. An
application the agent quit (exit status 0) is the agent's doing, not a fault. Every wait has a
deadline: a desktop that does not come up raises, it never hangs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentgym.envs.gui import a11y
from agentgym.envs.gui.x11 import DesktopCrashedError, X11Screen, new_cookie, write_xauthority
from agentgym.errors import SandboxUnavailableError, UsageError
from agentgym.sandbox.process import run_process
from agentgym.sandbox.uids import UidLease, lease_uid, processes_of

__all__ = ["APPS", "App", "Desktop", "DesktopCrashedError", "desktop_problem"]

START_TIMEOUT = 30.0
"""Seconds Xvfb, the window manager or an application may take to come up: a deadline that
only ends a start that hangs, not a wait. 10 s was once too short for pcmanfm to show its
focused window in CI, with the suite's two workers busy beside it."""

STOP_WAIT = 2.0
"""Seconds Xvfb gets to exit on SIGTERM (and remove its lock and socket) before SIGKILL."""

COMMAND_TIMEOUT = 10.0
"""Seconds a command :meth:`Desktop.run` runs may take before it is killed."""

OUTPUT_LIMIT = 1 << 20
"""Bytes of a command's output :meth:`Desktop.run` keeps (the rest is not read)."""

HOME_INSIDE = Path("/home/user")
"""Where the applications see their home (OSWorld's path). Each process gets a mount namespace
of its own in which the desktop's temporary home is bound over this folder (created empty on
the host if missing), so no window shows a path that differs between desktops."""

_BIND_HOME = f'mount --bind "$0" {HOME_INSIDE} && cd {HOME_INSIDE} && exec "$@"'
"""The shell line that binds the home (``$0``) and runs the command (``$@``) there."""

X11_SOCKETS = Path("/tmp/.X11-unix")

REQUIRED = ("Xvfb", "openbox", "setpriv", "unshare")


@dataclass(frozen=True)
class App:
    """An application a desktop can launch: its command and the WM_CLASS class of its window
    (how :meth:`Desktop.launch` knows it is up)."""

    name: str
    argv: tuple[str, ...]
    window_class: str


APPS: dict[str, App] = {
    app.name: app
    for app in (
        App("mousepad", ("mousepad",), "Mousepad"),
        App("gnumeric", ("gnumeric",), "Gnumeric"),
        App("pcmanfm", ("pcmanfm",), "Pcmanfm"),
        App("xterm", ("xterm",), "XTerm"),
    )
}
"""The applications by name; a task's ``launch`` step names one of them."""


def desktop_problem() -> str | None:
    """Why no desktop can start here (a missing program, not root), or None."""
    missing = [name for name in REQUIRED if shutil.which(name) is None]
    if missing:
        return (
            f"the desktop needs {', '.join(missing)}: install Debian's xvfb openbox mousepad "
            f"xterm x11-utils (make install does, as root)"
        )
    if os.geteuid() != 0:
        return "the desktop runs its applications as an unprivileged uid, which needs root"
    return None


@dataclass
class _Process:
    app: str
    popen: subprocess.Popen[bytes]
    keep: bool = field(default=False)  # the X server and window manager: reset leaves them


class Desktop:
    """One isolated desktop: ``screen`` (pixels and XTEST input), ``home``, applications.

    ``files`` (paths relative to the home, text or bytes) are written into the home before
    the snapshot that :meth:`reset` restores.
    """

    def __init__(
        self,
        width: int = 1024,
        height: int = 768,
        files: Mapping[str, str | bytes] | None = None,
        accessible: bool = False,
    ) -> None:
        problem = desktop_problem()
        if problem:
            raise SandboxUnavailableError(problem)
        self.width, self.height = width, height
        self._processes: list[_Process] = []
        self._screen: X11Screen | None = None
        self._lease: UidLease | None = lease_uid()
        self.uid = self._lease.uid
        self.root = Path(tempfile.mkdtemp(prefix="agentgym-desktop-"))
        self.number: int | None = None
        self._xvfb_pid = 0
        self.a11y_bus: str | None = None  # the AT-SPI bus's address (a11y.py), if accessible
        try:
            self._prepare_dirs(files or {})
            self._start_server()
            if accessible:
                argv, self.a11y_bus = a11y.bus_command(self.root, self.runtime)
                self._spawn("dbus-daemon", argv, keep=True)
                self._wait("the accessibility bus", a11y.bus_socket(self.runtime).exists)
                self._spawn("at-spi2-registryd", a11y.registry_command(), keep=True)
                a11y.wait_for_registry(self, START_TIMEOUT)
            self._spawn("openbox", ("openbox", "--sm-disable"), keep=True)
            self._wait("openbox to manage the screen", self.screen.has_window_manager)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ start

    def _prepare_dirs(self, files: Mapping[str, str | bytes]) -> None:
        """The temporary root (root's, traversable), the uid's home and runtime dir, the
        cookie, and the home's snapshot (root's alone)."""
        self.root.chmod(0o711)
        self.home = self.root / "home"
        self.runtime = self.root / "run"
        for path in (self.home, self.runtime):
            path.mkdir(mode=0o700)
            os.chown(path, self.uid, self.uid)
        write_files(self.home, files, self.uid)
        self._snapshot = self.root / "snapshot"
        shutil.copytree(self.home, self._snapshot, symlinks=True)
        self._snapshot.chmod(0o700)
        self._cookie = new_cookie()
        self._server_auth = self.root / "server.xauth"
        write_xauthority(self._server_auth, self._cookie)
        self._client_auth = self.runtime / "Xauthority"
        self._log = open(self.root / "desktop.log", "wb")  # noqa: SIM115 (closed in close())

    def _start_server(self) -> None:
        HOME_INSIDE.mkdir(mode=0o755, parents=True, exist_ok=True)  # the bind's mount point
        """Xvfb as the uid, on the first free display, which it writes to a pipe."""
        X11_SOCKETS.mkdir(mode=0o1777, exist_ok=True)
        X11_SOCKETS.chmod(0o1777)  # sticky and world-writable: the uid makes its socket there
        os.chown(self._server_auth, self.uid, self.uid)
        read_end, write_end = os.pipe()
        argv = (
            "Xvfb", "-displayfd", str(write_end), "-screen", "0",
            f"{self.width}x{self.height}x24", "-br", "-nolisten", "tcp", "-noreset",
            "-auth", str(self._server_auth),
        )  # fmt: skip
        try:
            server = self._spawn("Xvfb", argv, keep=True, pass_fds=(write_end,))
        finally:
            os.close(write_end)
        self._xvfb_pid = server.pid
        try:
            self.number = int(_read_line(read_end, START_TIMEOUT, "Xvfb", self._log_tail))
        finally:
            os.close(read_end)
        write_xauthority(self._client_auth, self._cookie, self.number)
        os.chown(self._client_auth, self.uid, self.uid)
        self._screen = X11Screen(self.number, self._client_auth, server_uid=self.uid)

    def _env(self) -> dict[str, str]:
        """The applications' environment: nothing of ours but PATH and the locale."""
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(HOME_INSIDE),
            "USER": "agent",
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": str(self.runtime),
            "XAUTHORITY": str(self._client_auth),
            "DISPLAY": f":{self.number}" if self.number is not None else "",
            "NO_AT_BRIDGE": "1",  # no accessibility bus (but see a11y_bus): GTK would wait
            # No session bus: settings in memory and local files only, or GLib tries to start
            # D-Bus (dbus-launch) for dconf and gvfs on every settings write, and GTK's file
            # chooser answers a Save seconds late (measured: 1 in 3 saves took over 0.3 s).
            "GSETTINGS_BACKEND": "memory",
            "GIO_USE_VFS": "local",
        }
        if self.a11y_bus is not None:  # GTK's bridge joins the desktop's own AT-SPI bus
            del env["NO_AT_BRIDGE"]
            env |= a11y.bus_env(self.a11y_bus)
        return env

    def _spawn(
        self, app: str, argv: Sequence[str], keep: bool = False, pass_fds: Sequence[int] = ()
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` as the uid, in network and mount namespaces of its own (its home at
        :data:`HOME_INSIDE`), in its own session.

        An application (not ``keep``) also gets a PID namespace of its own, which it is PID 1
        of: when it dies the kernel kills and reaps what it started (xterm's shell), at once,
        instead of leaving orphans for the host's init to reap whenever it gets to it.
        """
        popen = subprocess.Popen(
            [*self._wrapper(keep), *argv],
            cwd=self.home,
            env=self._env(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
        )
        self._processes.append(_Process(app, popen, keep))
        return popen

    def _wrapper(self, keep: bool) -> tuple[str, ...]:
        """The command line that runs what follows it as the uid, isolated (:meth:`_spawn`)."""
        pids = () if keep else ("--pid", "--fork", "--kill-child")
        return (
            "unshare", "--net", "--mount", *pids, "--", "sh", "-c", _BIND_HOME, str(self.home),
            "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
            "--no-new-privs", "--",
        )  # fmt: skip

    # ------------------------------------------------------------------ use

    def run(
        self, argv: Sequence[str], timeout: float = COMMAND_TIMEOUT, limit: int = OUTPUT_LIMIT
    ) -> tuple[int | None, bytes]:
        """Run ``argv`` as the uid, isolated as an application is, in the home, on this
        display; return its exit status (None: killed, at ``timeout`` or once it wrote
        ``limit`` bytes) and its stdout (the first ``limit`` bytes). What it started dies with
        it (its PID namespace)."""
        result = run_process(
            [*self._wrapper(False), *argv],
            stdin=b"",
            timeout=timeout,
            output_cap=limit,
            env=self._env(),
            cwd=str(self.home),
            stop_at_cap=True,
        )
        self._log.write(result.stderr_bytes)
        killed = result.timed_out or (result.truncated and len(result.stdout_bytes) >= limit)
        return (None if killed else result.exit_code), result.stdout_bytes

    @property
    def screen(self) -> X11Screen:
        """The display's pixels and input (:class:`~agentgym.envs.gui.x11.X11Screen`)."""
        if self._screen is None:
            raise UsageError("this desktop is closed")
        return self._screen

    def launch(self, name: str, *args: str, timeout: float = START_TIMEOUT) -> int:
        """Start application ``name`` (a key of :data:`APPS`) with ``args``; return its host
        pid once its window is on the screen and has the focus."""
        app = APPS.get(name)
        if app is None:
            raise UsageError(f"unknown application {name!r}: the desktop knows {', '.join(APPS)}")
        before = {w.id for w in self.screen.windows()}
        popen = self._spawn(name, (*app.argv, *args))

        def focused() -> bool:  # mapped and given the keyboard: typing reaches it
            active = self.screen.active_window()
            return any(
                w.id == active and w.wm_class == app.window_class and w.id not in before
                for w in self.screen.windows()
            )

        self._wait(f"{name} to show a focused window", focused, timeout)
        return _child_of(popen.pid)

    def client_pids(self) -> list[int]:
        """Host pids of the uid's processes but the X server's (whose CPU time counts the
        screenshots taken, not what the applications do)."""
        return [pid for pid in processes_of(self.uid) if pid != self._xvfb_pid]

    def activate(self, name: str, timeout: float = START_TIMEOUT) -> None:
        """Raise and focus the newest window whose WM_CLASS class or title holds ``name``
        (any case); wait until it has the focus."""
        screen, wanted = self.screen, name.lower()
        matches = [
            w.id
            for w in screen.windows()
            if wanted in w.wm_class.lower() or wanted in screen.title(w.id).lower()
        ]
        if not matches:
            raise UsageError(f"no window of display :{self.number} is called {name!r}")
        screen.activate(matches[-1])
        self._wait(
            f"the window {name!r} to get the focus",
            lambda: screen.active_window() == matches[-1],
            timeout,
        )

    def _wait(
        self, what: str, condition: Callable[[], bool], timeout: float = START_TIMEOUT
    ) -> None:
        """Poll ``condition`` until it holds; a crash or the deadline raises."""
        deadline = time.monotonic() + timeout
        while not condition():
            self.check()
            if time.monotonic() > deadline:
                raise DesktopCrashedError(
                    f"timed out after {timeout:.0f} s waiting for {what} on display "
                    f":{self.number}{self._log_tail()}"
                )
            time.sleep(0.02)

    def check(self) -> None:
        """Raise :class:`DesktopCrashedError` if the X server or an application crashed.

        When the X server dies its clients fail with it, sometimes before the server's own exit
        is seen: a failed client, or a connection the server dropped, waits :data:`STOP_WAIT`
        for the server's exit, so the error names the cause, not a consequence.
        """
        failed = [p for p in self._processes if _crashed(p)]
        server = next((p for p in self._processes if p.popen.pid == self._xvfb_pid), None)
        broken = self._screen is not None and self._screen.broken
        if (failed or broken) and server is not None and server not in failed:
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.popen.wait(timeout=STOP_WAIT)
                failed.insert(0, server)
        if broken and not failed:
            raise DesktopCrashedError(f"the X server of display :{self.number} dropped us")
        if failed:
            code = failed[0].popen.returncode
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            raise DesktopCrashedError(
                f"{failed[0].app} of display :{self.number} {how}{self._log_tail()}"
            )

    def reset(self, apps: Sequence[str] = ()) -> None:
        """Kill the applications, restore the home from its snapshot, launch ``apps``."""
        self.check()
        keep = self._end_applications()
        self._wait("the applications to end", lambda: not set(processes_of(self.uid)) - keep)
        shutil.rmtree(self.home)
        shutil.copytree(self._snapshot, self.home, symlinks=True)
        _chown_tree(self.home, self.uid)
        self.home.chmod(0o700)
        for name in apps:
            self.launch(name)

    def _end_applications(self) -> set[int]:
        """SIGKILL every process of the uid but those reset keeps, and reap the applications;
        return the kept pids. Each application's ``unshare`` lives on to reap it: killed
        first, it would leave the application a zombie for the host's init to reap whenever
        it gets to it (a second and more), still counted as the uid's."""
        keep = {p.popen.pid for p in self._processes if p.keep}
        for pid in processes_of(self.uid):
            if pid not in keep:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for process in [p for p in self._processes if not p.keep]:
            process.popen.wait(timeout=START_TIMEOUT)
            self._processes.remove(process)
        return keep

    # ------------------------------------------------------------------ close

    def close(self) -> None:
        """Stop every process, free the uid and the display, remove the temporary files
        (idempotent)."""
        if self._screen is not None:
            self._screen.close()
            self._screen = None
        if self._lease is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._end_applications()
        for process in self._processes:
            if process.popen.pid == self._xvfb_pid and process.popen.poll() is None:
                process.popen.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.popen.wait(timeout=STOP_WAIT)
        for process in self._processes:  # each in a session of its own: kill it, reap it
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.popen.pid, signal.SIGKILL)
            process.popen.wait()
        self._processes.clear()
        if self._lease is not None:
            lease, self._lease = self._lease, None
            lease.release()  # SIGKILLs whatever left its session and still runs as the uid
        self._remove_display_files()
        if hasattr(self, "_log"):
            self._log.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _remove_display_files(self) -> None:
        """The lock file and socket a killed Xvfb left, if they are this desktop's."""
        if self.number is None:
            return
        lock = Path(f"/tmp/.X{self.number}-lock")
        with contextlib.suppress(OSError, ValueError):
            if int(lock.read_text().strip()) == self._xvfb_pid:
                lock.unlink()
        socket_path = X11_SOCKETS / f"X{self.number}"
        with contextlib.suppress(OSError):
            if socket_path.lstat().st_uid == self.uid:
                socket_path.unlink()

    def _log_tail(self) -> str:
        """The last lines the desktop's processes wrote, for an error message."""
        try:
            lines = (self.root / "desktop.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return f"; its log ends: {' | '.join(lines[-3:])}" if lines else ""

    def __enter__(self) -> Desktop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Desktop(:{self.number}, uid {self.uid}, {self.width}x{self.height})"


def write_files(home: Path, files: Mapping[str, str | bytes], uid: int) -> None:
    """Write ``files`` (relative paths) under ``home``, owned by ``uid``."""
    for relative, content in files.items():
        path = (home / relative).resolve()
        if not path.is_relative_to(home.resolve()) or path == home.resolve():
            raise UsageError(f"desktop file {relative!r} is not a path inside the home")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    _chown_tree(home, uid)


def _chown_tree(top: Path, uid: int) -> None:
    os.chown(top, uid, uid)
    for directory, dirs, names in os.walk(top):
        for name in (*dirs, *names):
            os.chown(os.path.join(directory, name), uid, uid, follow_symlinks=False)


def _crashed(process: _Process) -> bool:
    """Whether ``process`` ended other than by an application's own clean exit."""
    code = process.popen.poll()
    return code is not None and (code != 0 or process.keep)


def _child_of(pid: int) -> int:
    """The one child of ``unshare --fork`` (the application)."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
    except (OSError, IndexError, ValueError) as failure:
        raise DesktopCrashedError(f"the application under pid {pid} is gone") from failure


def _read_line(fd: int, timeout: float, what: str, log: object) -> str:
    """Read a line from ``fd`` within ``timeout`` seconds (Xvfb's display number)."""
    import select

    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        chunk = os.read(fd, 64) if ready else b""
        if not chunk:
            tail = log() if callable(log) else ""
            raise DesktopCrashedError(f"{what} did not report its display in {timeout:.0f} s{tail}")
        data += chunk
    return data.decode().strip()
