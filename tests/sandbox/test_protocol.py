"""The sandbox protocol on every isolating backend: exec, files, sessions, bad input."""

from __future__ import annotations

import asyncio
import dataclasses
import sys

import pytest

from agentgym.errors import (
    ImageNotFoundError,
    SandboxClosedError,
    SandboxFileNotFoundError,
    UsageError,
)
from agentgym.sandbox import Limits, Mount, Overlay, SandboxSpec, create
from agentgym.sandbox.uids import processes_of

# ----------------------------------------------------------------------------- exec


def test_exec_returns_output_exit_code_and_timing(box):
    result = box.exec("echo out; echo err >&2; exit 3")
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 3)
    assert not result.timed_out and not result.truncated and result.duration > 0


def test_argv_lists_run_without_a_shell(box):
    result = box.exec(["printf", "%s|", "a b", "$HOME", ";rm -rf /"])
    assert result.stdout == "a b|$HOME|;rm -rf /|"


def test_files_written_by_one_exec_are_there_for_the_next(box):
    assert box.exec("echo kept > note").ok
    assert box.exec("cat note").stdout == "kept\n"


def test_commands_run_in_the_workdir_as_an_unprivileged_user_with_env(box):
    result = box.exec("pwd; id -u; echo $HOME $GREETING", env={"GREETING": "hi"})
    pwd, uid, rest = result.stdout.splitlines()
    assert pwd == "/work" and int(uid) == box.uid and int(uid) != 0
    assert rest == "/work hi"
    assert box.exec("pwd", cwd="sub").exit_code != 0  # no such directory yet
    box.exec("mkdir sub")
    assert box.exec("pwd", cwd="sub").stdout == "/work/sub\n"


def test_the_hosts_python_runs_inside(box):
    if box.backend == "docker":  # containers run the image's own Python, never the host's
        result = box.exec(["python", "-c", "import sys; print(sys.executable, sys.version)"])
        assert result.ok and result.stdout.startswith("/usr/bin/python 3."), result.stderr
        return
    # The trap: an unprivileged user cannot reach a Python under /root and silently gets
    # Debian's. The sandbox binds the running interpreter in; this checks it is the one.
    code = "import sys, numpy; print(sys.version.split()[0])"
    result = box.exec(["python", "-c", code])
    assert result.ok, result.stderr
    assert result.stdout.strip() == sys.version.split()[0]


def test_a_missing_command_is_exit_127_not_an_exception(box):
    assert box.exec("no-such-command").exit_code == 127
    result = box.exec(["no-such-command"])
    assert result.exit_code in (126, 127) and result.stderr


def test_binary_output_is_kept_as_bytes(box):
    result = box.exec("printf '\\377\\000\\001abc'")
    assert result.stdout_bytes == b"\xff\x00\x01abc"
    assert result.stdout == "\ufffd\x00\x01abc"


def test_large_stdin_is_fed_while_output_is_read(box):
    data = b"x" * (20 << 20)
    result = box.exec("wc -c; head -c 100000 /dev/zero", stdin=data, timeout=60)
    assert result.stdout_bytes.startswith(b"20971520\n")


def test_timeout_kills_the_command_and_reports_it(box):
    result = box.exec("sleep 30", timeout=0.5)
    # Killed at 0.5 s, not left to run its 30 s: 10 s leaves room for a loaded machine (a
    # docker exec and kill are API round trips) and is still far below 30.
    assert result.timed_out and result.exit_code == 137 and result.duration < 10
    assert not [pid for pid in processes_of(box.uid) if "sleep 30" in _cmdline(pid)]


def test_a_background_child_holding_the_pipes_does_not_block_exec(box):
    result = box.exec("sleep 30 & echo started", timeout=10)
    # Held by the child's pipes, exec would wait out its 10 s timeout (timed_out). Returning
    # takes the exec's own cost (dockerd itself waits up to 2 s for an exec's streams after the
    # exec has exited) plus room for a loaded machine, still well below the timeout.
    bound = 2 + 4 if box.backend == "docker" else 4
    assert result.stdout == "started\n" and result.duration < bound and not result.timed_out


@pytest.mark.parametrize("timeout", [0, -1, "5", float("nan"), True])
def test_bad_timeouts_are_usage_errors(box, timeout):
    with pytest.raises(UsageError, match="timeout"):
        box.exec("true", timeout=timeout)


@pytest.mark.parametrize("cmd", ["", "   ", [], [""], ["echo", 3], ["a\0b"]])
def test_bad_commands_are_usage_errors(box, cmd):
    if cmd == [""]:
        assert box.exec(cmd).exit_code in (126, 127)  # an empty program name, like a shell
        return
    with pytest.raises(UsageError):
        box.exec(cmd)


def test_stdin_over_the_cap_is_a_usage_error(box, monkeypatch):
    import agentgym.sandbox.base as base

    monkeypatch.setattr(base, "MAX_STDIN_BYTES", 1000)
    with pytest.raises(UsageError, match="put_file"):
        box.exec("cat", stdin=b"x" * 1001)


def test_a_closed_sandbox_refuses_work_and_close_is_idempotent(box):
    box.close()
    box.close()
    assert not box.alive()
    for call in (lambda: box.exec("true"), box.session, lambda: box.get_file("x")):
        with pytest.raises(SandboxClosedError):
            call()


def test_async_exec(box):
    async def main():
        return await asyncio.gather(*(box.aexec(f"echo {i}") for i in range(4)))

    assert [r.stdout for r in asyncio.run(main())] == ["0\n", "1\n", "2\n", "3\n"]


# ----------------------------------------------------------------------------- files


def test_put_and_get_files_and_directories(box, tmp_path):
    box.put_file("deep/dir/data.bin", b"\x00\x01binary", mode=0o755)
    assert box.get_file("/work/deep/dir/data.bin") == b"\x00\x01binary"
    assert box.exec("stat -c %a deep/dir/data.bin").stdout == "755\n"
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("print('a')\n")
    (tmp_path / "src" / "top.txt").write_text("top")
    box.put_dir(tmp_path / "src", "project")
    assert box.exec(["python", "project/pkg/a.py"]).stdout == "a\n"
    box.exec("echo new > project/made_inside.txt")
    box.get_dir("project", tmp_path / "back")
    names = sorted(str(p.relative_to(tmp_path / "back")) for p in (tmp_path / "back").rglob("*"))
    assert names == ["made_inside.txt", "pkg", "pkg/a.py", "top.txt"]


def test_getting_a_missing_path_is_a_typed_error(box, tmp_path):
    with pytest.raises(SandboxFileNotFoundError, match="nope"):
        box.get_file("nope")
    with pytest.raises(SandboxFileNotFoundError):
        box.get_dir("nope", tmp_path)
    with pytest.raises(UsageError):
        box.put_dir(tmp_path / "not-there", "x")


# ----------------------------------------------------------------------------- sessions


def test_a_session_keeps_state_between_commands(box):
    with box.session() as shell:
        assert shell.run("cd /tmp && export X=5 && f() { echo fn $1; }").ok
        result = shell.run("pwd; echo $X; f 1; echo e >&2")
        assert (result.stdout, result.stderr) == ("/tmp\n5\nfn 1\n", "e\n")
        assert shell.run("false").exit_code == 1


def test_a_session_survives_syntax_errors_timeouts_and_stdin(box):
    with box.session() as shell:
        shell.run("cd /tmp")
        assert shell.run("echo 'unbalanced").exit_code == 2
        assert shell.run("cat <<EOF").exit_code in (0, 2)  # heredoc without its end
        slow = shell.run("sleep 30 & sleep 30", timeout=0.5)
        assert slow.timed_out and slow.exit_code == 137
        assert shell.run("cat", stdin=b"fed\x00in").stdout_bytes == b"fed\x00in"
        assert shell.run("pwd").stdout == "/tmp\n"  # the same shell all along
        assert shell.restarts == 0


def test_output_without_a_final_newline_and_marker_lookalikes_are_exact(box):
    with box.session() as shell:
        assert shell.run("printf abc").stdout == "abc"
        assert shell.run("printf 'x\\n\\n'").stdout == "x\n\n"
        big = shell.run("head -c 200000 /dev/zero | tr '\\0' a")
        assert big.truncated and len(big.stdout) == 64 << 10


def test_exit_in_a_session_is_reported_and_the_next_command_gets_a_new_shell(box):
    with box.session() as shell:
        shell.run("cd /tmp")
        assert not shell.ended()
        gone = shell.run("exit 4")
        assert gone.exit_code == 4 and "exited" in gone.stderr and shell.ended()
        assert shell.run("pwd").stdout == "/work\n" and shell.restarts == 1
        assert not shell.ended()


def test_a_closed_session_refuses_commands(box):
    shell = box.session()
    shell.close()
    shell.close()
    with pytest.raises(SandboxClosedError):
        shell.run("true")


def test_async_session(box):
    async def main():
        with box.session() as shell:
            return [(await shell.arun(f"echo {i}")).stdout for i in range(3)]

    assert asyncio.run(main()) == ["0\n", "1\n", "2\n"]


# ----------------------------------------------------------------------------- specs


def test_mounts_are_read_only_unless_writable(backend, tmp_path):
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "data.txt").write_text("shared")
    (tmp_path / "rw").mkdir()
    (tmp_path / "rw").chmod(0o777)
    mounts = (Mount(str(tmp_path / "ro"), "/data"), Mount(str(tmp_path / "rw"), "/out", True))
    with create(SandboxSpec(mounts=mounts), backend=backend) as box:
        assert box.exec("cat /data/data.txt").stdout == "shared"
        assert not box.exec("echo x > /data/new").ok
        assert box.exec("echo x > /out/new").ok
    assert (tmp_path / "rw" / "new").read_text() == "x\n"


def test_one_host_directory_can_be_mounted_at_two_places(backend, spec, tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "f").write_text("x")
    shared = str(tmp_path / "shared")
    mounts = (Mount(shared, "/one"), Mount(shared, "/two"))
    with create(dataclasses.replace(spec, mounts=mounts), backend=backend) as box:
        assert box.exec("cat /one/f /two/f").stdout == "xx"


def test_an_overlay_is_writable_inside_and_leaves_the_host_tree_unchanged(backend, spec, tmp_path):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("x = 1\n")
    for path in (tree, tree / "pkg", tree / "pkg" / "mod.py"):
        path.chmod(0o777 if path.is_dir() else 0o666)  # the sandbox's user owns none of it
    spec = dataclasses.replace(spec, overlays=(Overlay(str(tree), "/repo"),))
    with create(spec, backend=backend) as box, create(spec, backend=backend) as other:
        assert box.exec("echo 'x = 2' >> /repo/pkg/mod.py && rm /repo/pkg/mod.py").ok
        assert box.exec("mkdir /repo/new && echo hi > /repo/new/f && touch /repo/top").ok
        assert box.exec("ls /repo").stdout.split() == ["new", "pkg", "top"]
        assert other.exec("cat /repo/pkg/mod.py; ls /repo").stdout == "x = 1\npkg\n"
    assert sorted(p.name for p in tree.rglob("*")) == ["mod.py", "pkg"]
    assert (tree / "pkg" / "mod.py").read_text() == "x = 1\n"


def test_an_overlays_host_tree_is_reachable_only_through_the_overlay(backend, spec, tmp_path):
    if backend != "bwrap":
        pytest.skip("docker copies the tree in: there is no host tree inside to reach")
    (tmp_path / "secret").write_text("s")
    spec = dataclasses.replace(spec, overlays=(Overlay(str(tmp_path), "/repo"),))
    with create(spec, backend="bwrap") as box:
        assert box.exec("cat /repo/secret").stdout == "s"
        assert box.exec("ls -A /.agentgym/lower/0").stdout == ""  # the staging bind is gone
        mount_points = [
            line.split()[1] for line in box.exec("cat /proc/mounts").stdout.splitlines()
        ]
        assert not [point for point in mount_points if point.startswith("/.agentgym/lower")]
        assert box.exec("ls -A /.agentgym").stdout.split() == ["layers", "lower"]
        assert not box.exec("ls /.agentgym/layers").ok  # root's, where the writes live


def test_a_missing_rootfs_is_image_not_found(backend, tmp_path):
    with pytest.raises(ImageNotFoundError, match="rootfs"):
        create(SandboxSpec(rootfs=str(tmp_path / "none")), backend=backend)


def test_bad_specs_and_backends_are_usage_errors():
    with pytest.raises(UsageError, match="backend"):
        create(backend="qemu")
    with pytest.raises(UsageError, match="workdir"):
        SandboxSpec(workdir="relative")
    with pytest.raises(UsageError, match="memory"):
        Limits(memory=-1)
    with pytest.raises(UsageError, match="timeout"):
        SandboxSpec().with_limits(timeout=0)
    with pytest.raises(UsageError, match="target"):
        Mount("/tmp", "relative")
    with pytest.raises(UsageError, match="target"):
        Overlay("/tmp", "/")
    with pytest.raises(UsageError, match="overlay source"):
        create(SandboxSpec(overlays=(Overlay("/no/such/dir", "/repo"),)), backend="bwrap")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""
