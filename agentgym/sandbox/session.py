"""A persistent shell: one ``sh`` kept alive in a sandbox, commands written to it, results read.

Why: a fresh ``exec`` builds a process tree (tens of milliseconds under bwrap, hundreds under
docker); an agent that runs many small commands wants state (``cd``, ``export``, a server
started with ``&``) kept and each command to cost a few milliseconds.

The protocol, per command, is one line on the shell's stdin (bash; ``sh`` has no guard)::

    POSIXLY_CORRECT=y; <guard>; \\set +xv; \\unset -f -- eval printf builtin ...;
    \\unset POSIXLY_CORRECT; \\eval -- '<the command, single-quoted>' </dev/null;
    __agentgym_rc_<nonce>=$?; POSIXLY_CORRECT=y; <guard>; \\set +xv; \\unset -f -- ...;
    \\builtin printf '\\n%s %d\\n' <nonce> "$__agentgym_rc_<nonce>"; ... >&2

* The command travels as one single-quoted word (nothing inside is interpreted) and runs
  through ``eval``: an unbalanced quote or a heredoc without its end is a syntax error of that
  command (exit 2), not a shell left waiting for more input.
* Its stdin is ``/dev/null`` (or a file holding the caller's stdin), never the protocol stream.
* The end of its output is found by a random nonce per command, on stdout (with the exit code)
  and on stderr; a command cannot print the nonce before it exists.
* The result cannot be forged by an earlier command that redefined what the protocol runs:
  POSIX mode comes back by assignment (no command a function could shadow) and the guard
  checks it through the read-only ``SHELLOPTS`` (else a fatal expansion error: the shell or the
  line ends, the result is an ended shell or a timeout, never a forged code); in POSIX mode
  ``unset`` is a special builtin no function can shadow, so the protocol's words are unset as
  functions before they run; a backslash keeps aliases off; ``set +xv`` stops a ``PS4`` hook
  before the nonce appears; bash starts with ``enable -n trap enable`` (no DEBUG trap, no
  builtin disabled or re-enabled). ``docs/sandbox.md`` says what this does not cover.
* On timeout the command's processes (the shell's descendants, and every process carrying the
  session's gid: detached ones too) are killed and the shell reports exit code 137 and goes
  on; if the command ends the shell (``exit``), the result says so and the next command starts
  a new shell (state is lost, and ``restarts`` counts it).
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
import selectors
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

from agentgym.errors import SandboxClosedError, SandboxError, UsageError
from agentgym.sandbox.base import ExecResult, Limits, Session, as_stdin, check_timeout
from agentgym.sandbox.process import (
    CappedBuffer,
    descendants,
    exit_code_of,
    is_running,
    kill_pids,
)

__all__ = ["ShellSession"]


class ShellSession(Session):
    """A shell started by ``argv`` (already inside the sandbox) and driven over its pipes.

    Backends whose shell is not a descendant of the launcher process (docker: the shell runs
    under the daemon) override the two hooks :meth:`_shell_pid` and :meth:`_kill_shell`.
    """

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        limits: Limits,
        cwd: str | None = None,
        members: Callable[[], list[int]] | None = None,
        popen: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen,
        ensure: Callable[[], None] | None = None,
    ) -> None:
        self._members, self._popen, self._ensure = members, popen, ensure
        self._argv, self._env, self._limits, self._cwd = list(argv), dict(env), limits, cwd
        self._shell: subprocess.Popen[bytes] | None = None
        self._bash = os.path.basename(self._argv[-1]) == "bash"
        self.closed = False
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        self._shell = self._popen(
            self._argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
            cwd=self._cwd,
            start_new_session=True,
            close_fds=True,
        )
        assert self._shell.stdout and self._shell.stderr and self._shell.stdin
        for stream in (self._shell.stdout, self._shell.stderr):
            os.set_blocking(stream.fileno(), False)
        if self._bash:  # no DEBUG/RETURN/ERR traps, and no way to re-enable them
            self._shell.stdin.write(b"enable -n trap enable\n")

    def ended(self) -> bool:
        """Whether the shell has exited (``exit``, killed): the next command starts a new one,
        in the sandbox's work dir, without the old one's state."""
        return not self.closed and (self._shell is None or self._shell.poll() is not None)

    def run(
        self, command: str, timeout: float | None = None, stdin: bytes | str | None = None
    ) -> ExecResult:
        if self.closed:
            raise SandboxClosedError(
                "this session is closed; open a new one with sandbox.session()"
            )
        if not isinstance(command, str):
            raise TypeError(f"a session command is a str, got {type(command).__name__}")
        if self._ensure is not None:
            self._ensure()  # the sandbox is still there (not closed, not killed)
        timeout = check_timeout(timeout if timeout is not None else self._limits.timeout)
        data = as_stdin(stdin)
        if self._shell is None or self._shell.poll() is not None:
            self._start()
            self.restarts += 1
        assert self._shell and self._shell.stdin
        nonce = secrets.token_hex(16)
        if "\0" in command:
            raise UsageError("a session command may not contain NUL bytes")
        script = self._script(command, nonce, data)
        started = time.monotonic()
        try:
            self._shell.stdin.write(script.encode())
            self._shell.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._shell_ended(started, CappedBuffer.of(0), CappedBuffer.of(0))
        return self._collect(nonce.encode(), started, timeout)

    def _script(self, command: str, nonce: str, data: bytes) -> str:
        """The one protocol line for ``command`` (see the module docstring for why each part)."""
        bash = self._bash
        guard = _POSIX_GUARD if bash else ""
        before = [*guard, "\\set +xv", r"\unset -f -- " + " ".join(_PROTOCOL_WORDS[bash])]
        if data:
            feed = f"/tmp/.agentgym-stdin-{nonce}"
            chunks = base64.b64encode(data).decode()
            before.append(f"{_PRINTF[bash]} %s '{chunks}' | base64 -d >{feed}")
            redirect = f"<{feed}"
        else:
            redirect = "</dev/null"
        if bash:
            before.append(r"\unset POSIXLY_CORRECT")
        status = f"__agentgym_rc_{nonce}"
        after = [f"{status}=$?", *guard, "\\set +xv", before[len(guard) + 1]]
        after.append(f"{_PRINTF[bash]} '\\n%s %d\\n' {nonce} \"${status}\"")
        after.append(f"{_PRINTF[bash]} '\\n%s\\n' {nonce} >&2")
        after.append(r"\unset " + status + (" POSIXLY_CORRECT" if bash else ""))
        if data:
            after.append(f"\\command rm -f {feed}")
        run = f"\\eval {'-- ' if bash else ''}{shlex.quote(command)} {redirect}"
        line = [*before, run, *after]
        return "; ".join(line) + "\n"

    def _collect(self, nonce: bytes, started: float, timeout: float) -> ExecResult:
        assert self._shell and self._shell.stdout and self._shell.stderr
        cap = self._limits.output
        out, err = _MarkedStream(nonce, cap), _MarkedStream(nonce, cap)
        streams = {self._shell.stdout.fileno(): out, self._shell.stderr.fileno(): err}
        deadline, timed_out = started + timeout, False
        with selectors.DefaultSelector() as selector:
            for fd in streams:
                selector.register(fd, selectors.EVENT_READ)
            while not (out.done and err.done):
                now = time.monotonic()
                if now >= deadline:
                    if timed_out:  # killed, and still no end marker: the shell is wedged
                        self._kill_shell()
                        return self._shell_ended(started, out.buffer, err.buffer, timed_out=True)
                    timed_out = True
                    self._kill_command()
                    deadline = now + 2.0
                    continue
                events = selector.select(min(deadline - now, 0.05))
                for key, _ in events:
                    stream = streams[key.fd]
                    try:
                        chunk = os.read(key.fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not chunk:  # EOF: the shell is gone (the command ran `exit`)
                        return self._shell_ended(started, out.buffer, err.buffer, timed_out)
                    stream.feed(chunk)
        code = out.exit_code if out.exit_code is not None else 1
        return ExecResult(
            stdout_bytes=bytes(out.buffer.data),
            stderr_bytes=bytes(err.buffer.data),
            exit_code=137 if timed_out else code,
            timed_out=timed_out,
            duration=time.monotonic() - started,
            truncated=bool(out.buffer.dropped or err.buffer.dropped),
        )

    def _shell_ended(
        self, started: float, out: CappedBuffer, err: CappedBuffer, timed_out: bool = False
    ) -> ExecResult:
        assert self._shell
        try:
            returncode = self._shell.wait(timeout=5)
        except subprocess.TimeoutExpired as stuck:
            raise SandboxError("the session shell did not exit after its pipes closed") from stuck
        self._release_pipes()
        self._shell = None
        return ExecResult(
            stdout_bytes=bytes(out.data),
            stderr_bytes=bytes(err.data) + b"\n[the session's shell exited; the next command "
            b"starts a new one]\n",
            exit_code=exit_code_of(returncode),
            timed_out=timed_out,
            duration=time.monotonic() - started,
            truncated=bool(out.dropped or err.dropped),
        )

    def _kill_command(self) -> None:
        """Kill everything the shell started, keeping the shell: its descendants, and every
        process that carries the session's group (those that detached from the shell)."""
        shell = self._shell_pid()
        for _ in range(50):  # until no process of the session but the shell is left
            others = descendants(shell)
            if self._members is not None:
                others += [pid for pid in self._members() if pid != shell]
            others = [pid for pid in others if is_running(pid)]
            if not others:
                return
            kill_pids(others)
            time.sleep(0.002)

    def _shell_pid(self) -> int:
        """Host pid of the shell itself: the launcher (nsenter, prlimit...) may sit above it."""
        assert self._shell
        name = os.path.basename(self._argv[-1]).encode()
        for pid in [self._shell.pid, *descendants(self._shell.pid)]:
            try:
                with open(f"/proc/{pid}/comm", "rb") as comm:
                    if comm.read().strip() == name:
                        return pid
            except OSError:
                continue
        return self._shell.pid

    def _kill_shell(self) -> None:
        """Kill the shell, then let its launcher reap it and exit.

        Killed together, the launcher (``nsenter``) could die first and orphan the shell
        inside the sandbox's PID namespace, whose init (a ``sleep``) never reaps: the shell
        would stay a zombie of the sandbox's uid until the sandbox closed, and the close
        would wait for the host's init to reap it (a second or two).
        """
        assert self._shell
        kill_pids(descendants(self._shell.pid))
        try:
            self._shell.wait(timeout=2)
        except subprocess.TimeoutExpired:
            kill_pids([self._shell.pid])

    def _release_pipes(self) -> None:
        assert self._shell
        for stream in (self._shell.stdin, self._shell.stdout, self._shell.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._shell is not None:
            if self._shell.poll() is None:
                self._kill_shell()
            self._shell.wait()
            self._release_pipes()
            self._shell = None


# Words the protocol runs, unset as functions before it runs them (in POSIX mode ``unset`` is a
# special builtin, which no function can shadow; a backslash stops alias expansion).
_PROTOCOL_WORDS = {
    True: ("eval", "printf", "builtin", "command", "base64", "rm", "command_not_found_handle"),
    False: ("eval", "printf", "command", "base64", "rm"),
}
_PRINTF = {True: r"\builtin printf", False: r"\printf"}
# bash: turn POSIX mode on by an assignment (no command a function could shadow), then check
# it is on (SHELLOPTS is read-only); if not (a read-only POSIXLY_CORRECT), end the shell, or
# at least the line, before anything is reported.
_POSIX_GUARD = (
    "POSIXLY_CORRECT=y",
    "__agentgym_off=${SHELLOPTS##*posix*}",
    "__agentgym_off=${__agentgym_off:+${__agentgym_tampered?session shell tampered}$((1/0))}",
)


class _MarkedStream:
    """Output of one stream up to the line ``\\n<nonce>[ code]\\n`` that ends it."""

    def __init__(self, nonce: bytes, cap: int) -> None:
        self.marker = b"\n" + nonce
        self.buffer = CappedBuffer.of(cap)
        self.pending = bytearray()  # not yet known not to be (part of) the marker line
        self.done = False
        self.exit_code: int | None = None

    def feed(self, chunk: bytes) -> None:
        if self.done:
            return
        self.pending += chunk
        at = self.pending.find(self.marker)
        if at >= 0:
            end = self.pending.find(b"\n", at + len(self.marker))
            if end < 0:
                return  # the marker line is not complete yet
            self.buffer.add(bytes(self.pending[:at]))
            tail = self.pending[at + len(self.marker) : end].strip()
            self.exit_code = int(tail) if tail else None
            self.done = True
            return
        # Everything but a tail that could be the start of the marker is plain output.
        keep = len(self.marker) + 16
        if len(self.pending) > keep:
            self.buffer.add(bytes(self.pending[:-keep]))
            del self.pending[:-keep]
