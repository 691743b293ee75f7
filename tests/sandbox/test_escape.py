"""The escape battery: the same attacks against every isolating backend, each must be contained.

Every test plays the attacker inside a sandbox and then checks, from the host, that the
attack did not reach the host or another sandbox, and (where it spawns processes) that
``close()`` leaves nothing running.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from agentgym.errors import SandboxFileNotFoundError
from agentgym.sandbox.uids import processes_of

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
