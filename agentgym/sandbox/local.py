"""The ``local`` backend: a subprocess in a temporary directory, with rlimits. It does NOT isolate.

For platforms with neither bubblewrap nor Docker (macOS, a locked-down CI). Commands run as
the calling user on the host: they can read the user's files, use the network and signal the
user's processes. The limits (time, memory, CPU, file size, open files, output) still hold,
and ``close()`` kills what the commands started, but nothing else is defended. So it runs only
when asked for explicitly: ``create(backend="local", allow_local=True)`` or
``AGENTGYM_ALLOW_LOCAL_SANDBOX=1``, and it warns when it starts.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Mapping

from agentgym.errors import SandboxUnavailableError, UsageError
from agentgym.sandbox.base import ExecResult, Sandbox, SandboxSpec
from agentgym.sandbox.bwrap import limit_args
from agentgym.sandbox.process import descendants, kill_pids, run_process
from agentgym.sandbox.session import ShellSession

__all__ = ["LocalSandbox"]


class LocalSandbox(Sandbox):
    """Runs commands on the host in a temporary work directory. Not isolation: see the module."""

    backend = "local"
    own_user = False

    def __init__(self, spec: SandboxSpec, *, allow_local: bool = False) -> None:
        if not (allow_local or os.environ.get("AGENTGYM_ALLOW_LOCAL_SANDBOX") == "1"):
            raise SandboxUnavailableError(
                "the local backend does not isolate (commands run as you, with your files and "
                "network); pass allow_local=True or set AGENTGYM_ALLOW_LOCAL_SANDBOX=1 to use "
                "it anyway, or install bubblewrap (apt-get install bubblewrap) or Docker"
            )
        if spec.rootfs or spec.image or spec.mounts:
            raise UsageError("the local backend runs on the host: no rootfs, image or mounts")
        if shutil.which("prlimit") is None:
            raise SandboxUnavailableError("the local backend needs prlimit (util-linux)")
        warnings.warn(
            "agentgym local sandbox: commands run on this host without isolation",
            stacklevel=3,
        )
        self.spec = spec
        self.root = tempfile.mkdtemp(prefix="agentgym-local-")
        self.closed = False
        self._env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.root,
            "LANG": "C.UTF-8",
            "TMPDIR": self.root,
            **spec.env,
        }
        self._sessions: list[ShellSession] = []
        self._started: list[int] = []

    def path(self, path: str) -> str:
        """Host path for a sandbox path: the workdir maps to the temporary directory."""
        inside = super().path(path)
        relative = os.path.relpath(inside, self.spec.workdir)
        if relative == ".." or relative.startswith("../"):
            raise UsageError(f"the local backend only reaches the workdir, not {path!r}")
        return os.path.normpath(os.path.join(self.root, relative))

    def _prefix(self) -> list[str]:
        return ["prlimit", *limit_args(self.spec.limits), "--"]

    def _run(
        self,
        argv: list[str],
        stdin: bytes,
        timeout: float,
        output: int,
        env: Mapping[str, str] | None,
        cwd: str | None,
    ) -> ExecResult:
        return run_process(
            [*self._prefix(), *argv],
            stdin=stdin,
            timeout=timeout,
            output_cap=output,
            env={**self._env, **(env or {})},
            cwd=self.path(cwd) if cwd else self.root,
        )

    def session(self) -> ShellSession:
        self._ensure_open()
        shell = ShellSession([*self._prefix(), "/bin/sh"], self._env, self.spec.limits, self.root)
        self._sessions.append(shell)
        return shell

    def alive(self) -> bool:
        return not self.closed and os.path.isdir(self.root)

    def _close(self) -> None:
        for shell in self._sessions:
            shell.close()
        # Processes started by exec() that outlived it are the commands' own business on a
        # host without isolation; what can be found (children of this process) is killed.
        inside = []
        for pid in descendants(os.getpid()):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/cwd").startswith(self.root):
                    inside.append(pid)
        kill_pids(inside)
        shutil.rmtree(self.root, ignore_errors=True)
