"""The local backend (limits without isolation, only when allowed) and the warm pool."""

from __future__ import annotations

import threading
import time

import pytest

from agentgym.errors import SandboxClosedError, SandboxUnavailableError, UsageError
from agentgym.sandbox import SandboxPool, SandboxSpec, create

# ----------------------------------------------------------------------------- local


def test_local_refuses_to_run_unless_allowed(monkeypatch):
    monkeypatch.delenv("AGENTGYM_ALLOW_LOCAL_SANDBOX", raising=False)
    with pytest.raises(SandboxUnavailableError, match="does not isolate"):
        create(backend="local")


@pytest.fixture
def local(spec):
    with pytest.warns(UserWarning, match="without isolation"):
        box = create(spec, backend="local", allow_local=True)
    yield box
    box.close()


def test_local_runs_commands_in_its_own_directory_with_limits(local):
    assert local.exec("pwd").stdout.strip() == local.root
    local.put_file("sub/f.txt", "data")
    assert local.get_file("sub/f.txt") == b"data"
    assert local.exec("cat sub/f.txt").stdout == "data"
    assert local.exec("sleep 30", timeout=0.3).timed_out
    assert local.exec("yes", timeout=1).truncated
    big = local.exec("head -c 20M /dev/zero > big")  # file_size limit 16 MiB
    assert big.exit_code != 0
    with local.session() as shell:
        shell.run("cd sub")
        assert shell.run("cat f.txt").stdout == "data"


def test_local_file_paths_stay_in_its_directory(local):
    with pytest.raises(UsageError, match="workdir"):
        local.put_file("/etc/agentgym-evil", "x")
    with pytest.raises(UsageError, match="workdir"):
        local.get_file("../../etc/passwd")


def test_local_close_removes_its_directory(local):
    root = local.root
    local.close()
    import os

    assert not os.path.exists(root)
    with pytest.raises(SandboxClosedError):
        local.exec("true")


def test_local_refuses_rootfs_images_and_mounts():
    with pytest.raises(UsageError, match="host"):
        create(SandboxSpec(image="python:3.11"), backend="local", allow_local=True)


# ----------------------------------------------------------------------------- pool


def test_pool_hands_out_live_distinct_sandboxes_and_refills(backend, spec):
    with SandboxPool(spec, size=2, backend=backend) as pool:
        first, second = pool.acquire(), pool.acquire()
        assert first is not second and first.alive() and second.alive()
        assert first.exec("echo hi").stdout == "hi\n"
        pool.release(first)
        assert first.closed  # never handed out again
        with pool.sandbox() as third:
            assert third.exec("true").ok
        assert third.closed
        pool.release(second)


def test_pool_never_hands_out_a_dead_sandbox(backend, spec):
    with SandboxPool(spec, size=2, backend=backend) as pool:
        box = pool.acquire()
        pool.release(box)
        with pool._lock:  # kill the ready sandboxes behind the pool's back
            pool._lock.wait_for(lambda: len(pool._ready) == 2, timeout=10)
            for ready in pool._ready:
                kill_behind_the_back(ready)
        fresh = pool.acquire()
        assert fresh.alive() and fresh.exec("true").ok and pool.discarded == 2
        pool.release(fresh)


def kill_behind_the_back(box) -> None:
    """Make a sandbox die without close(): its keeper process, or its container."""
    if box.backend == "docker":
        box._container.kill()
        while box.alive():
            time.sleep(0.01)
    else:
        box._keeper.kill()
        box._keeper.wait()


def test_pool_serves_concurrent_callers(backend, spec):
    with SandboxPool(spec, size=2, backend=backend) as pool:
        outputs = []

        def episode(i):
            with pool.sandbox() as box:
                outputs.append(box.exec(f"echo {i}").stdout)

        threads = [threading.Thread(target=episode, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outputs) == [f"{i}\n" for i in range(6)]


def test_a_closed_pool_refuses_and_bad_sizes_are_errors(backend):
    pool = SandboxPool(size=1, backend=backend)
    pool.close()
    pool.close()
    with pytest.raises(SandboxClosedError):
        pool.acquire()
    with pytest.raises(UsageError, match="size"):
        SandboxPool(size=0, backend=backend)
