"""Docker-only behaviour: container settings, labels, the reaper, images and their build command.

The escape battery and the protocol tests run on docker too (``ISOLATING`` in conftest); these
are what only the docker backend has.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace

import pytest

from agentgym.cli import main
from agentgym.errors import ImageNotFoundError, SandboxUnavailableError
from agentgym.sandbox import SandboxSpec, create
from agentgym.sandbox.docker import LABEL, OWNER_PID, docker_client, docker_problem, reap_orphans
from agentgym.sandbox.images import ROOTFS_IMAGE, SANDBOX_IMAGE, rootfs_dir
from agentgym.sandbox.uids import processes_of


@pytest.fixture
def client(docker_daemon):
    return docker_client()


def ours(client) -> list[str]:
    """Ids of the sandbox containers this test process owns."""
    found = client.containers.list(all=True, filters={"label": f"{OWNER_PID}={os.getpid()}"})
    return [c.id for c in found]


def test_the_container_is_locked_down_and_labelled(client, spec):
    limits = spec.limits
    with create(spec, backend="docker") as box:
        attrs = client.api.inspect_container(box._container.id)
        host, config = attrs["HostConfig"], attrs["Config"]
        assert config["Image"] == SANDBOX_IMAGE
        assert config["Labels"][LABEL] == "1" and config["Labels"][OWNER_PID] == str(os.getpid())
        assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
        assert host["Memory"] == limits.memory == host["MemorySwap"]
        assert host["PidsLimit"] == limits.processes + 2 and host["NanoCpus"] > 0
        assert set(host["Tmpfs"]) == {"/tmp", "/work"}
        assert {u["Name"] for u in host["Ulimits"]} == {"cpu", "fsize", "nofile", "nproc"}
        assert box.exec("cat /etc/debian_version").stdout.startswith("12.")
        container_id = box._container.id
    assert container_id not in ours(client)


def test_close_leaves_no_container_and_no_process(client, spec):
    box = create(spec, backend="docker")
    box.exec("sleep 1000 >/dev/null 2>&1 & (setsid sleep 1000 &) ; true")
    assert len(processes_of(box.uid)) >= 2
    container_id = box._container.id
    box.close()
    assert processes_of(box.uid) == [] and container_id not in ours(client)


def test_the_reaper_removes_containers_of_dead_owners(client, spec):
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = {
        LABEL: "1",
        "agentgym.owner.host": os.uname().nodename,
        OWNER_PID: str(dead.pid),
        "agentgym.owner.start": "1",
    }
    # The orphan is made after the first sandbox: that one reaps on its own (once per
    # process), so an orphan made before it would be gone when this test runs alone.
    with create(spec, backend="docker") as alive_box:
        orphan = client.containers.create(
            SANDBOX_IMAGE, ["sleep", "infinity"], labels=labels, network_mode="none"
        )
        orphan.start()
        removed = reap_orphans(client)
        assert orphan.name in removed
        assert alive_box._container.name not in removed  # its owner (this process) lives
        assert alive_box.exec("true").ok
    remaining = client.containers.list(all=True, filters={"label": f"{LABEL}=1"})
    assert orphan.id not in [c.id for c in remaining]


def test_a_missing_image_names_it_and_the_build_command(client):
    before = ours(client)
    with pytest.raises(ImageNotFoundError, match=r"no-such/image:1.*agentgym containers build"):
        create(SandboxSpec(image="no-such/image:1"), backend="docker")
    assert ours(client) == before  # nothing made, nothing left


def test_an_unreachable_daemon_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    assert "no Docker daemon socket" in docker_problem()
    with pytest.raises(SandboxUnavailableError, match="docker backend unavailable"):
        create(backend="docker")


def test_containers_build_is_a_no_op_when_current(docker_daemon, capsys):
    assert main(["containers", "build"]) == 0
    out = capsys.readouterr().out
    assert "is there and current" in out and "done in" in out and SANDBOX_IMAGE in out
    assert docker_client().images.get(ROOTFS_IMAGE).id


def test_the_rootfs_backs_bwrap_as_a_pinned_userland(docker_daemon, capsys, spec):
    assert main(["containers", "build", "--rootfs-only"]) == 0
    assert str(rootfs_dir()) in capsys.readouterr().out
    pinned = replace(spec, rootfs=str(rootfs_dir()), python=False)
    with create(pinned, backend="bwrap") as box:
        assert box.exec("cat /etc/debian_version").stdout.startswith("12.")
        assert not box.exec("test -e /usr/bin/gcc").ok  # minbase, not the host's /usr
