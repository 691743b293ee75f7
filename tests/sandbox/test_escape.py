"""The escape battery: the same attacks against every isolating backend, each must be contained.

Every test plays the attacker inside a sandbox and then checks, from the host, that the
attack did not reach the host or another sandbox, and (where it spawns processes) that
``close()`` leaves nothing running.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from agentgym.errors import SandboxFileNotFoundError
from agentgym.sandbox.process import is_running
from agentgym.sandbox.uids import holds_keys, processes_of

REPO = Path(__file__).resolve().parents[2]


def left_behind(box) -> list[int]:
    """Processes of a sandbox still running (after close, must be none)."""
    return processes_of(box.uid)


def python(box, code: str, timeout: float = 20):
    return box.exec(["python", "-c", code], timeout=timeout)


# ----------------------------------------------------------------------------- network


def test_tcp_to_a_host_service_on_loopback_is_refused(box):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.settimeout(0.5)
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)"
    result = python(box, code)
    assert result.exit_code != 0 and "Connection refused" in result.stderr
    with pytest.raises(TimeoutError):
        server.accept()  # nothing ever reached the host's listener
    server.close()


def test_tcp_to_the_outside_world_is_unreachable(box):
    code = "import socket; socket.create_connection(('1.1.1.1', 443), timeout=3)"
    result = python(box, code)
    assert result.exit_code != 0 and "unreachable" in result.stderr.lower()


def test_udp_to_a_host_service_never_arrives(box):
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(0.5)
    port = receiver.getsockname()[1]
    code = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"[s.sendto(b'leak', ('127.0.0.1', {port})) for _ in range(20)]; "
        "s.sendto(b'leak', ('8.8.8.8', 53))"
    )
    result = python(box, code)
    assert "unreachable" in result.stderr.lower()  # the outside address fails outright
    with pytest.raises(TimeoutError):
        receiver.recvfrom(16)
    receiver.close()


def test_dns_resolves_nothing(box):
    result = python(box, "import socket; print(socket.getaddrinfo('pypi.org', 443))")
    assert result.exit_code != 0 and "gaierror" in result.stderr


def test_unix_sockets_of_host_services_are_out_of_reach(box, tmp_path):
    path = tmp_path / "service.sock"
    abstract = f"\0agentgym-test-{uuid.uuid4().hex}"
    servers = []
    for address in (str(path), abstract):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen()
        server.settimeout(0.3)
        servers.append(server)
    for address in (str(path), abstract, "/run/docker.sock", "/var/run/docker.sock"):
        code = (
            "import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); "
            f"s.connect({address!r})"
        )
        result = python(box, code)
        assert result.exit_code != 0, address
    for server in servers:
        with pytest.raises(TimeoutError):
            server.accept()
        server.close()


# ----------------------------------------------------------------------------- filesystem


@pytest.mark.parametrize(
    "target", ["/usr/evil", "/etc/evil", "/evil", "/opt/agentgym/venv/evil", "/bin/evil"]
)
def test_writing_outside_the_work_dir_fails(box, target):
    result = box.exec(f"echo x > {target}")
    assert result.exit_code != 0
    assert not os.path.exists(target)


def test_the_sandbox_tmp_is_private(box):
    name = f"agentgym-private-{uuid.uuid4().hex}"
    assert box.exec(f"echo inside > /tmp/{name}").ok
    assert not os.path.exists(f"/tmp/{name}")


def test_host_secrets_are_unreadable(box, tmp_path):
    secrets = []
    root_secret = Path("/root") / f".agentgym-secret-{uuid.uuid4().hex}"
    for path in (root_secret, tmp_path / "secret.txt", REPO / ".agentgym-secret-test"):
        path.write_text("TOPSECRET")
        secrets.append(path)
    try:
        for path in [*secrets, "/etc/shadow"]:
            assert not box.exec(["cat", str(path)]).ok, path
        listing = box.exec(f"ls -a {REPO} /root").stdout
        assert "agentgym-secret" not in listing and "pyproject.toml" not in listing
        found = box.exec("grep -rs TOPSECRET /root /tmp /opt /etc /work /proc/1/root/root")
        assert "TOPSECRET" not in found.stdout
    finally:
        for path in secrets:
            path.unlink()


def test_another_sandboxes_files_are_invisible(box, other_box):
    assert other_box.exec("echo OTHERSECRET > /work/secret.txt; sleep 30 &").ok
    result = box.exec(
        "ls /work; cat /proc/*/root/work/secret.txt; grep -rs OTHERSECRET /tmp /work /proc/*/cwd"
    )
    assert "OTHERSECRET" not in result.stdout


def test_disk_fill_stops_at_the_tmpfs_size(box):
    result = box.exec("for i in 1 2 3 4 5 6 7 8; do head -c 8M /dev/zero > f$i || exit 9; done")
    assert result.exit_code != 0  # 64 MiB into a 32 MiB work dir
    assert "No space left" in result.stderr or "File too large" in result.stderr
    usage = box.exec("du -sm /work | cut -f1").stdout.strip()
    assert int(usage) <= 33


def test_a_file_over_the_size_limit_is_cut(box):
    result = box.exec("head -c 20M /dev/zero > /tmp/big")  # limit 16 MiB
    assert result.exit_code != 0
    size = int(box.exec("stat -c %s /tmp/big").stdout)
    assert size <= 16 << 20


# ----------------------------------------------------------------------------- resources


def test_fork_bomb_is_contained_and_the_neighbour_keeps_working(box, other_box):
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    results = {}
    thread = threading.Thread(target=lambda: results.update(bomb=python(box, bomb, timeout=3)))
    thread.start()
    time.sleep(1.0)
    during = len(processes_of(box.uid))
    neighbour = other_box.exec("echo alive")
    thread.join()
    assert results["bomb"].timed_out
    assert during <= 64 + 2  # RLIMIT_NPROC of the sandbox's own uid
    assert neighbour.ok and neighbour.stdout == "alive\n"
    box.close()
    assert left_behind(box) == []


def test_memory_bomb_fails_inside(box):
    result = python(box, "x = bytearray(4 << 30)")  # limit 1 GiB
    assert result.exit_code != 0 and "MemoryError" in result.stderr
    assert box.exec("echo fine").ok


def test_cpu_spin_is_killed_by_the_cpu_limit(box):
    # cpu_seconds=5. The wall timeout is far above that on purpose: on a loaded machine the loop
    # gets a fraction of a core, so its 5 CPU-seconds can take several times 5 s of wall time.
    # What shows the CPU limit ended it is how it ended: killed by a signal before the wall
    # timeout. An unenforced CPU limit lets the loop spin on until the timeout (timed_out).
    result = box.exec("while :; do :; done", timeout=60)
    # soft = hard limit: the kernel sends SIGXCPU and then SIGKILL at the same second
    assert not result.timed_out and result.exit_code in (128 + 24, 128 + 9), result
    # One process cannot use 5 CPU-seconds in less wall time than that (a new process: its count
    # starts near 0), so a kill much sooner would be something other than the CPU limit.
    assert result.duration > 4, result


def test_unbounded_output_is_capped(box):
    result = box.exec("yes leak", timeout=2)
    assert result.timed_out and result.truncated
    assert len(result.stdout_bytes) == 64 << 10
    fast = box.exec("head -c 10M /dev/zero")
    assert fast.truncated and not fast.timed_out and len(fast.stdout_bytes) == 64 << 10


def test_double_forked_processes_do_not_outlive_close(box):
    script = "(setsid sleep 1000 &); nohup sleep 1000 >/dev/null 2>&1 & (sleep 1000 &) ; echo ok"
    assert box.exec(script).stdout == "ok\n"
    with box.session() as shell:
        shell.run("(setsid sleep 1000 &) ; sleep 1000 &")
    assert len(processes_of(box.uid)) >= 3
    box.close()
    assert left_behind(box) == []


# ----------------------------------------------------------------------------- processes


def test_signals_cannot_reach_host_processes(box):
    victim = subprocess.Popen(["sleep", "60"])
    try:
        result = box.exec(f"kill -9 {victim.pid}; kill -9 -1; kill -9 1; echo done")
        time.sleep(0.2)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    assert "done" in result.stdout or result.exit_code != 0


def test_ptrace_of_anything_outside_fails(box):
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "for pid in (1, os.getppid()):\n"
        "    r = libc.ptrace(16, pid, 0, 0)\n"  # PTRACE_ATTACH
        "    print(pid, r, ctypes.get_errno())\n"
    )
    result = python(box, code)
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines and all(r == "-1" for _, r, _ in lines), result.stdout


def test_capabilities_and_privileges_are_gone(box):
    status = box.exec("grep -E '^(Cap(Eff|Prm|Bnd)|NoNewPrivs)' /proc/self/status").stdout
    assert "CapEff:\t0000000000000000" in status and "CapBnd:\t0000000000000000" in status
    assert "NoNewPrivs:\t1" in status
    assert box.exec("id -u").stdout.strip() != "0"


# ----------------------------------------------------------------------------- file transfer


def test_symlinks_planted_inside_never_reach_host_files(box, tmp_path):
    secret = Path("/root") / f".agentgym-secret-{uuid.uuid4().hex}"
    secret.write_text("HOSTSECRET")
    try:
        box.exec(
            f"ln -s {secret} link; mkdir d; ln -s {secret} d/link; ln -s / d/root; echo a > d/a"
        )
        # Under bwrap /root does not exist inside; the docker image has one, mode 700 and
        # not the host's, so there the link ends in "Permission denied" instead.
        with pytest.raises(SandboxFileNotFoundError if box.backend == "bwrap" else OSError):
            box.get_file("link")
        box.get_dir("d", tmp_path / "out")
        copied = sorted(p.name for p in (tmp_path / "out").iterdir())
        assert copied == ["a"]  # the links were not extracted on the host
        assert not any(p.is_symlink() for p in (tmp_path / "out").rglob("*"))
    finally:
        secret.unlink()


def test_dotdot_paths_stay_inside_the_sandbox(box, tmp_path):
    with pytest.raises(OSError):
        box.put_file("../../../etc/agentgym-evil", "x")  # lands on the read-only /etc inside
    assert not os.path.exists("/etc/agentgym-evil")
    assert box.get_file("../../etc/hostname")  # the sandbox's own /etc, read as its user
    source = tmp_path / "src"
    source.mkdir()
    (source / "inner").symlink_to("/etc")
    box.put_dir(source, "copied")
    assert box.exec("readlink copied/inner").stdout == "/etc\n"  # a link inside, harmless


# ----------------------------------------------------------------------------- issue 16


def held_bytes(box) -> int:
    """What the sandbox holds now, seen from the host: its processes' private and shared
    resident memory, the memory files (memfd) they hold, and what its /tmp and work dir hold
    (0 once it is dead)."""
    total = 0
    for pid in processes_of(box.uid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(("RssAnon:", "RssShmem:")):
                total += int(line.split()[1]) * 1024
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(fd).startswith("/memfd:"):
                    total += fd.stat().st_blocks * 512
    if box.alive():
        df = box.exec("df -B1 --output=used /tmp /work | tail -n +2", timeout=10).stdout.split()
        total += sum(int(used) for used in df)
    return total


HOLD_MEMORY = (
    "import time; b = bytearray(400 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(60)"
)
HOLD_MEMFD = (  # written, never mapped: in no process's RSS
    "import os, time; fd = os.memfd_create('m'); "
    "[os.write(fd, b'x' * (1 << 20)) for _ in range(300)]; time.sleep(60)"
)


def test_a_sandbox_cannot_hold_more_memory_than_its_limit_by_any_mix(backend):
    from agentgym.sandbox import Limits, SandboxSpec, create

    limits = Limits(timeout=30, memory=1 << 30, disk=1 << 30, file_size=1 << 30)
    box = create(SandboxSpec(limits=limits), backend=backend)
    try:  # 2 x 400 MiB of processes, a 300 MiB memfd, 500 MiB of files: 1.6 GiB
        for code in (HOLD_MEMORY, HOLD_MEMORY, HOLD_MEMFD):
            box.exec(f"python -c {shlex.quote(code)} >/dev/null 2>&1 &", timeout=10)
        box.exec("head -c 500M /dev/zero > /tmp/fill", timeout=20)
        peak = 0
        for _ in range(30):
            time.sleep(0.2)
            peak = max(peak, held_bytes(box))
        assert peak < 1.5 * (1 << 30), f"the sandbox held {peak >> 20} MiB"
    finally:
        box.close()
    assert left_behind(box) == []


@pytest.mark.parametrize("backend", ["bwrap"], indirect=True)  # docker: its cgroup's OOM kill
def test_the_sandbox_over_its_memory_limit_is_killed_with_a_typed_error(backend):
    from agentgym.sandbox import Limits, ResourceLimitError, SandboxSpec, create

    limits = Limits(timeout=30, memory=256 << 20, disk=1 << 30, file_size=1 << 30)
    with create(SandboxSpec(limits=limits), backend="bwrap") as box:
        result = box.exec("head -c 300M /dev/zero > /tmp/fill; sleep 5", timeout=20)
        assert result.exit_code == 137 and "memory" in (result.limit_exceeded or "")
        assert not box.alive()
        with pytest.raises(ResourceLimitError, match="memory"):
            box.exec("true")
        assert left_behind(box) == []


SECRET_WRITER = r"""
import ctypes, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
secret = b"TOPSECRET-%s"
for ring in (-4, -3, -5):  # the user, session and user-session keyrings
    libc.syscall(248, b"user", b"agentgym-secret", secret, len(secret), ring)  # add_key
open("/tmp/agentgym-secret", "wb").write(secret)
try:
    open("/dev/shm/agentgym-secret", "wb").write(secret)
except OSError:
    pass
libc.shmat.restype = ctypes.c_void_p
shm = libc.shmget(0x5EC12E7, 4096, 0o1666)  # IPC_CREAT | 0666
if shm >= 0:
    ctypes.memmove(libc.shmat(shm, None, 0), secret, len(secret))
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(b"\0agentgym-secret")
server.listen()
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    conn.sendall(secret)
    conn.close()
"""

SECRET_READER = r"""
import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
found = []
for ring in (-4, -3, -5):
    key = libc.syscall(250, 10, ring, b"user", b"agentgym-secret", 0)  # KEYCTL_SEARCH
    if key >= 0:
        buf = ctypes.create_string_buffer(256)
        libc.syscall(250, 11, key, buf, 256)  # KEYCTL_READ
        found.append(buf.value)
for path in ("/tmp/agentgym-secret", "/dev/shm/agentgym-secret"):
    try:
        found.append(open(path, "rb").read())
    except OSError:
        pass
libc.shmat.restype = ctypes.c_void_p
shm = libc.shmget(0x5EC12E7, 0, 0)
if shm >= 0:
    found.append(ctypes.string_at(libc.shmat(shm, None, 0), 32))
try:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(b"\0agentgym-secret")
    found.append(client.recv(64))
except OSError:
    pass
print(found)
"""


def test_no_state_crosses_sandboxes(backend, spec):
    from agentgym.sandbox import create

    token = uuid.uuid4().hex
    writer = create(spec, backend=backend)
    with writer.session() as shell:
        shell.run(f"python -c {shlex.quote(SECRET_WRITER % token)} >/tmp/w.log 2>&1 &")
        for _ in range(100):
            if "ready" in writer.exec("cat /tmp/w.log").stdout:
                break
            time.sleep(0.05)
        assert "ready" in writer.exec("cat /tmp/w.log").stdout, writer.exec("cat /tmp/w.log")
        neighbour = create(spec, backend=backend)  # at the same time
        try:
            assert token not in python(neighbour, SECRET_READER).stdout
        finally:
            neighbour.close()
    writer.close()
    later = create(spec, backend=backend)  # after: the freed uid, unless it kept keys
    try:
        assert later.uid == writer.uid or holds_keys(writer.uid)
        result = python(later, SECRET_READER)
        assert result.ok and token not in result.stdout, result
    finally:
        later.close()


SYSCALLS = {  # name: (x86_64 number, arguments)
    "keyctl": (250, (0, -3, 0, 0, 0)),  # KEYCTL_GET_KEYRING_ID of the session keyring
    "add_key": (248, (b"user", b"k", b"v", 1, -3)),
    "request_key": (249, (b"user", b"k", 0, 0, 0)),
    "io_uring_setup": (425, (1, 0, 0, 0, 0)),
    "unshare(CLONE_NEWUSER)": (272, (0x10000000, 0, 0, 0, 0)),
    "mount": (165, (b"none", b"/tmp", b"tmpfs", 0, 0)),
    "bpf": (321, (0, 0, 0, 0, 0)),
    "perf_event_open": (298, (0, 0, -1, -1, 0)),
    "kexec_load": (246, (0, 0, 0, 0, 0)),
    "userfaultfd": (323, (0, 0, 0, 0, 0)),
}


def test_the_syscall_filter_denies_what_dockers_profile_denies(box):
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"for name, (number, args) in {SYSCALLS!r}.items():\n"
        "    r = libc.syscall(number, *args)\n"
        "    print(name, r, os.strerror(ctypes.get_errno()) if r < 0 else '')\n"
        "r = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER)\n"
        "if r == 0:\n"
        "    os._exit(0)\n"
        "print('clone(CLONE_NEWUSER)', r, os.strerror(ctypes.get_errno()) if r < 0 else '')\n"
    )
    result = python(box, code)
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert len(lines) == len(SYSCALLS) + 1, result
    for name, outcome in lines.items():
        assert outcome.startswith("-1 "), f"{name} was allowed: {outcome}"
    for name in ("keyctl", "add_key", "request_key", "io_uring_setup", "unshare(CLONE_NEWUSER)"):
        assert "Operation not permitted" in lines[name] or "not implemented" in lines[name], (
            name,
            lines[name],
        )
    assert not box.exec("unshare --user --map-root-user true").ok
    assert "Seccomp:\t2" in box.exec("cat /proc/self/status").stdout


DETACHING = {
    "setsid": "setsid sleep 1000 & sleep 1000",
    "double fork": "(sleep 1000 &); sleep 1000",
    "env -i": "env -i /bin/sh -c 'setsid sleep 1000 &'; sleep 1000",
}


def running(box) -> set[int]:
    """Processes of the sandbox that run (an exited one its init has not reaped yet is not)."""
    return {pid for pid in processes_of(box.uid) if is_running(pid)}


@pytest.mark.parametrize("how", DETACHING)
def test_a_timeout_kills_detached_processes_too(box, how):
    before = running(box)
    result = box.exec(DETACHING[how], timeout=1.5)
    assert result.timed_out
    time.sleep(0.2)
    assert running(box) <= before, box.exec("ps -eo pid,pgid,sid,args").stdout
    with box.session() as shell:
        assert shell.run(DETACHING[how], timeout=1.5).timed_out
        time.sleep(0.2)
        survivors = running(box) - before
        assert len(survivors) == 1  # the session's shell, nothing it started
        assert shell.run("echo alive").stdout == "alive\n"


# Every word the session protocol runs, and the shell machinery a command could use to hook it.
PROTOCOL_WORDS = [
    *("eval", "printf", "builtin", "command", "unset", "set", "base64", "rm", "exit", "echo"),
    *("shopt", "declare", "export", "readonly", "local", "read", "trap", "enable", "source"),
    "command_not_found_handle",
]


def test_session_results_cannot_be_forged_by_redefining_the_shell(box):
    functions = "; ".join(f"{word}() {{ return 0; }}" for word in PROTOCOL_WORDS)
    aliases = "; ".join(f"alias {word}=true" for word in PROTOCOL_WORDS)
    forge = 'if (($# > 1)); then set -- "${@:1:$#-1}" 0; fi'  # report the last argument as 0
    poisons = [
        f'printf() {{ {forge}; command builtin printf "$@"; }}',
        f'builtin() {{ {forge}; command builtin "$@"; }}',
        f'forge() {{ {forge}; command builtin printf "$@"; }}; shopt -s expand_aliases; '
        "alias printf=forge builtin=forge",
        f"set +o posix; {functions}",
        f"shopt -s expand_aliases; {aliases}",
        "readonly POSIXLY_CORRECT=; set +o posix; printf() { builtin printf '\\n%s 0\\n' $2; }",
        "PS4='$(echo forged >&2)'; set -x",
        "trap 'return 0' DEBUG; shopt -s extdebug",
        "enable -n printf builtin",
    ]
    for poison in poisons:
        with box.session() as shell:
            shell.run(poison, timeout=3)
            result = shell.run("sh -c 'exit 3'", timeout=3)
            assert result.exit_code != 0, (poison, result)  # 3, or the shell ended / timed out
            if not result.timed_out and shell.restarts == 0:
                assert result.exit_code == 3, (poison, result)


# ----------------------------------------------------------------------------- file transfer


def test_get_dir_and_put_dir_keep_hard_links(box, tmp_path):
    box.exec("mkdir -p d/sub && echo shared > d/a && ln d/a d/sub/b && mkfifo d/pipe")
    skipped = box.get_dir("d", tmp_path / "out")
    a, b = tmp_path / "out" / "a", tmp_path / "out" / "sub" / "b"
    assert a.read_text() == b.read_text() == "shared\n"
    assert a.stat().st_ino == b.stat().st_ino  # still one file
    assert skipped == ["pipe"]  # what could not be copied is reported
    box.put_dir(tmp_path / "out", "back")
    inodes = box.exec("stat -c %i back/a back/sub/b").stdout.split()
    assert len(inodes) == 2 and inodes[0] == inodes[1]


def test_mountinfo_shows_only_the_documented_host_paths(box):
    from agentgym.sandbox.bwrap import python_binds

    mountinfo = box.exec("cat /proc/self/mountinfo").stdout
    roots = {line.split()[3] for line in mountinfo.splitlines()}
    if box.backend == "bwrap":
        allowed = {"/", "/usr", "/etc"} | {host for host, _ in python_binds()}
        allowed |= {f"/{name}" for name in ("null", "zero", "full", "random", "urandom", "tty")}
        assert roots <= allowed | {"/irq", "/bus", "/newroot"}, roots - allowed
    else:  # docker: its overlay layers and the files it binds sit in its data root
        from agentgym.sandbox.docker import docker_client

        mountinfo = mountinfo.replace(docker_client().info()["DockerRootDir"], "")
    assert str(REPO) not in mountinfo.replace(f"{REPO}/.venv", "")
    assert "/root/" not in mountinfo.replace(sys_prefix_base(), "")


def sys_prefix_base() -> str:
    import sys

    return os.path.realpath(sys.base_prefix)
