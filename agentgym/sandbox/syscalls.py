"""The bwrap backend's syscall filter: Docker's default seccomp profile, as a deny list.

Namespaces and an unprivileged uid keep code in a bwrap sandbox away from the host's files,
network and processes; the kernel's attack surface is the rest. Docker's default profile
(moby's ``profiles/seccomp/default.json``) closes the parts of it that containers do not need,
and this filter denies the same calls with ``EPERM``:

* the kernel keyring (``keyctl``, ``add_key``, ``request_key``): keys outlive a sandbox and
  are shared by every process of a uid, so they were a channel from one sandbox to the next;
* ``io_uring_*`` (a second syscall interface, the source of many kernel exploits);
* new namespaces: ``unshare``, and ``clone`` with any ``CLONE_NEW*`` flag (an unprivileged user
  namespace makes its creator root inside it, and opens kernel code that assumes root is
  trusted); ``clone3`` answers ``ENOSYS``, as under Docker, so libc falls back to ``clone``;
* mounting and the new mount API, ``pivot_root``, ``kexec_*``, module loading, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ``open_by_handle_at``, clock and host-name setting,
  swap, quotas, ``reboot``, ``acct``, ``syslog``, ``iopl``/``ioperm``, and obsolete calls.

``ptrace`` stays allowed, as under Docker on kernels since 4.8: the sandbox's processes may
trace each other (a debugger runs), while their own uid keeps them from anything outside.
``setns`` and ``chroot`` stay allowed because the filter is already loaded when ``nsenter``
enters the sandbox; code inside has no capabilities, which both need. Calls of another
architecture (i386's ``int 0x80``, x32) kill the process (libseccomp's default).

The filter is compiled with libseccomp's own Python binding (Debian's ``python3-seccomp``), run
once per process by whichever Python has it, and the BPF program it exports is what bwrap
loads (``--seccomp``, for the keeper) and what :func:`filtered_popen` loads into the threads
that start every command (see there for why threads, and why several).
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from typing import Any

from agentgym.errors import SandboxUnavailableError

__all__ = [
    "DENIED",
    "docker_profile",
    "filter_problem",
    "filter_program",
    "filtered_popen",
    "program_fd",
]

DENIED = (
    *("keyctl", "add_key", "request_key"),
    *("io_uring_setup", "io_uring_enter", "io_uring_register"),
    "unshare",
    *("mount", "umount", "umount2", "pivot_root", "mount_setattr", "move_mount", "open_tree"),
    *("fsopen", "fsconfig", "fsmount", "fspick"),
    *("kexec_load", "kexec_file_load", "reboot"),
    *("init_module", "finit_module", "delete_module", "create_module", "query_module"),
    *("get_kernel_syms", "bpf", "perf_event_open", "userfaultfd", "fanotify_init"),
    *("open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "kcmp"),
    *("settimeofday", "clock_settime", "clock_adjtime", "stime", "adjtimex"),
    *("sethostname", "setdomainname", "swapon", "swapoff", "quotactl", "quotactl_fd"),
    *("acct", "syslog", "iopl", "ioperm", "vhangup", "uselib", "ustat", "sysfs", "_sysctl"),
    *("nfsservctl", "vm86", "vm86old"),
)
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
NAMESPACE_FLAGS = (
    *(0x20000, 0x2000000, 0x4000000, 0x8000000),
    *(0x10000000, 0x20000000, 0x40000000, 0x80),
)

# Run by a Python that has libseccomp's binding; prints the BPF program on stdout.
GENERATOR = """
import errno, json, sys
import seccomp
denied, flags = json.loads(sys.argv[1])
rules = seccomp.SyscallFilter(seccomp.ALLOW)
for name in denied:
    try:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    except (RuntimeError, ValueError, OSError):
        pass  # no such call on this architecture
rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
for flag in flags:
    new_namespace = seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag)
    rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", new_namespace)
sys.stdout.flush()
rules.export_bpf(sys.stdout)
"""
DEBIAN_PYTHON = "/usr/bin/python3"
INSTALL_HINT = "apt-get install python3-seccomp (libseccomp's Python binding)"


def docker_profile() -> str:
    """The same filter as a Docker seccomp profile (JSON, for ``security_opt``).

    Docker's own default profile is the reference, but the one a given daemon ships may be
    older (Debian 12's docker.io still allows ``io_uring``): the docker backend passes this
    one, so both backends deny the same calls.
    """
    rules: list[dict[str, Any]] = [
        {"names": list(DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
    ]
    for flag in NAMESPACE_FLAGS:
        test = {"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}
        rules.append(
            {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1, "args": [test]}
        )
    profile = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"],
        "syscalls": rules,
    }
    return json.dumps(profile)


def _generator_python() -> str | None:
    if importlib.util.find_spec("seccomp") is not None:
        return sys.executable
    return DEBIAN_PYTHON if shutil.which(DEBIAN_PYTHON) else None


@functools.cache
def _compiled() -> bytes | str:
    python = _generator_python()
    if python is None:
        return f"no Python with libseccomp's binding: {INSTALL_HINT}"
    arguments = json.dumps([list(DENIED), list(NAMESPACE_FLAGS)])
    done = subprocess.run(
        [python, "-I", "-c", GENERATOR, arguments], capture_output=True, timeout=60
    )
    if done.returncode != 0 or not done.stdout or len(done.stdout) % 8:
        error = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        return f"libseccomp could not build the syscall filter ({error}): {INSTALL_HINT}"
    return done.stdout


def filter_problem() -> str | None:
    """Why the filter cannot be built here, or ``None`` (built once per process)."""
    compiled = _compiled()
    return compiled if isinstance(compiled, str) else None


def filter_program() -> bytes:
    """The filter as a BPF program (``struct sock_filter[]``), as bwrap's ``--seccomp`` reads."""
    compiled = _compiled()
    if isinstance(compiled, str):
        raise SandboxUnavailableError(compiled)
    return compiled


def program_fd() -> int:
    """A new fd holding the program, at offset 0, for ``bwrap --seccomp FD`` (caller closes)."""
    fd = os.memfd_create("agentgym-seccomp", 0)
    os.write(fd, filter_program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


def _load_into_this_thread() -> None:
    program = filter_program()
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        errno = ctypes.get_errno()
        raise SandboxUnavailableError(f"the syscall filter did not load: {os.strerror(errno)}")


SPAWNERS = 32
"""At most this many filtered threads start commands at once (made only as callers overlap).

One thread was a queue for every sandbox of the process: a spawn holds its thread until the
new process has exec'd, which on a loaded machine is milliseconds of waiting for a CPU, so
eight sandboxes at once on 2 cores kept a single spawner 48-70 % busy and ran 11-16 % slower
than unfiltered (``tests/perf/bench_sandbox.py``, "at once"). A spawner mostly waits, so the
bound is not the CPU count: the thread pool makes a thread only when no idle one is there,
and a process drives fewer than 32 sandboxes at once in practice."""


@functools.cache
def _spawner() -> concurrent.futures.ThreadPoolExecutor:
    # Every thread loads the filter before it takes any work; if one cannot, the pool is
    # broken and every submit raises: no command ever starts unfiltered.
    return concurrent.futures.ThreadPoolExecutor(
        max_workers=SPAWNERS,
        thread_name_prefix="agentgym-sandbox-spawner",
        initializer=_load_into_this_thread,
    )


def filtered_popen(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` from a thread of this process that has the filter loaded.

    A seccomp filter is per thread and inherited by every process the thread forks, so the
    commands ``nsenter`` puts into a sandbox (which are not descendants of the sandbox's
    filtered keeper) get it too. Why not a new ``bwrap --seccomp`` per command: that costs
    another mount namespace and 3-5 ms, most of a command's cost; why not ``preexec_fn``: it
    is unsafe in a threaded program (the evaluator) and forces a full ``fork`` of this process.
    The hand-off to the thread costs about 0.04 ms. The threads only ever start processes, so
    the filter changes nothing else in this process; up to :data:`SPAWNERS` of them serve
    callers at once, so sandboxes driven from many threads do not queue behind one spawn.
    """
    return _spawner().submit(_popen, argv, options).result()


def _popen(argv: list[str], options: dict[str, Any]) -> subprocess.Popen[bytes]:
    process: subprocess.Popen[bytes] = subprocess.Popen(argv, **options)
    return process
