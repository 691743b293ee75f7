"""The image steps' locking: concurrent callers build each cache entry once, and safely.

The real steps (debootstrap, ``docker import``, ``docker build``) take minutes and need root,
a mirror and a daemon, so these tests put doubles in their place: the doubles record each call,
take a while (so the callers overlap) and leave the result the real step would. What is
measured is the locking around the steps, which is the code under test and runs unchanged.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentgym.sandbox import images

REPO = Path(__file__).resolve().parents[2]

# One caller in a process of its own (xdist workers are processes): it puts the debootstrap
# double in place, waits at a file barrier until every caller is up, then asks for the rootfs.
CALLER = r"""
import os, sys, time
from pathlib import Path

from agentgym.sandbox import images

calls, barrier, callers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])


def debootstrap(partial, mirror):
    with open(calls, "a") as out:
        out.write(f"{os.getpid()}\n")
    time.sleep(0.5)
    (partial / "usr" / "bin").mkdir(parents=True)
    (partial / "built-by").write_text(str(os.getpid()))


images._debootstrap = debootstrap
(barrier / str(os.getpid())).touch()
deadline = time.monotonic() + 60
while len(list(barrier.iterdir())) < callers:
    assert time.monotonic() < deadline, "the other callers never came up"
    time.sleep(0.005)
tree = images.build_rootfs(log=lambda line: None)
print(tree, (tree / "built-by").read_text())
"""


def test_build_rootfs_runs_once_for_concurrent_processes(tmp_path, monkeypatch):
    """Two processes ask for a cold rootfs at once: one builds it, the other waits and uses it.

    A double stands in for debootstrap (it writes ``usr/bin`` and a ``built-by`` marker into the
    ``.partial`` tree after 0.5 s) because the test measures the locking, not debootstrap.
    Without the lock both callers build, and each deletes the other's tree.
    """
    cache = tmp_path / "cache"
    monkeypatch.setenv("AGENTGYM_CACHE", str(cache))
    calls, barrier = tmp_path / "calls", tmp_path / "barrier"
    barrier.mkdir()
    callers = 2
    argv = [sys.executable, "-c", CALLER, str(calls), str(barrier), str(callers)]
    procs = [
        subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(callers)
    ]
    results = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
    builders = calls.read_text().split()
    assert len(builders) == 1, f"debootstrap ran {len(builders)} times: {builders}"
    tree = cache / "rootfs" / images.SUITE
    # Both callers got the one tree, made by the one build; no half-made tree is left.
    assert {out.strip() for out, _ in results} == {f"{tree} {builders[0]}"}
    assert (tree / "usr" / "bin").is_dir()
    assert not tree.with_name(tree.name + ".partial").exists()


class FakeDocker:
    """Doubles for the daemon's image store and the docker steps, counting each step."""

    def __init__(self) -> None:
        self.labels: dict[str, dict[str, str]] = {}
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def record(self, step: str) -> None:
        with self.lock:
            self.calls.append(step)
        time.sleep(0.3)

    def image_labels(self, client: object, name: str) -> dict[str, str] | None:
        return self.labels.get(name)

    def debootstrap(self, partial: Path, mirror: str) -> None:
        self.record("debootstrap")
        (partial / "usr" / "bin").mkdir(parents=True)

    def docker_import(self, tree: Path) -> None:
        assert (tree / "usr" / "bin").is_dir()
        self.record("import")
        self.labels[images.ROOTFS_IMAGE] = {}

    def run(self, argv: list[str], what: str, env: dict[str, str] | None = None) -> None:
        assert what == "docker build", argv
        self.record("build")
        label = argv[argv.index("--label") + 1]
        self.labels[argv[argv.index("-t") + 1]] = dict([label.split("=", 1)])


@pytest.fixture
def fake_docker(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    fake = FakeDocker()
    monkeypatch.setattr(images, "docker_client", lambda: object())
    monkeypatch.setattr(images, "docker_cli", lambda: "docker")
    monkeypatch.setattr(images, "_image_labels", fake.image_labels)
    monkeypatch.setattr(images, "_image_id", lambda client, name: None)
    monkeypatch.setattr(images, "_debootstrap", fake.debootstrap)
    monkeypatch.setattr(images, "_docker_import", fake.docker_import)
    monkeypatch.setattr(images, "_run", fake.run)
    return fake


def test_build_image_runs_each_step_once_for_concurrent_callers(fake_docker):
    """Two callers of a cold ``build_image``: each step runs once, and the nested locks (the
    docker lock, then the rootfs lock, in one caller) do not wait on themselves.

    Doubles stand in for debootstrap, ``docker import`` and ``docker build`` because the test
    measures the locking. Threads suffice: ``flock`` locks on separate descriptors exclude
    each other within a process too.
    """
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            assert images.build_image(log=lambda line: None) == images.SANDBOX_IMAGE
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=caller, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "deadlocked"
    assert not errors, errors
    assert sorted(fake_docker.calls) == ["build", "debootstrap", "import"]
    # Warm: nothing runs again, and no lock is needed to find that out.
    assert images.build_image(log=lambda line: None) == images.SANDBOX_IMAGE
    assert images.import_rootfs(log=lambda line: None) == images.ROOTFS_IMAGE
    assert len(fake_docker.calls) == 3


def test_build_rootfs_clears_a_dead_builders_partial_tree(fake_docker):
    """A ``.partial`` tree left by a builder that died is removed before the next build."""
    partial = images.rootfs_dir().with_name(images.SUITE + ".partial")
    (partial / "junk").mkdir(parents=True)
    tree = images.build_rootfs(log=lambda line: None)
    assert (tree / "usr" / "bin").is_dir()
    assert not (tree / "junk").exists() and not partial.exists()
    assert fake_docker.calls == ["debootstrap"]


def test_a_rebuild_removes_the_image_it_replaced(fake_docker, monkeypatch):
    """A changed recipe rebuilds the image; the previous one is removed, so rebuilds (one per
    changed checkout, for the env-server images) do not pile up in the daemon's data root."""
    ids = iter(["sha256:old", "sha256:new"])
    removed: list[str] = []
    monkeypatch.setattr(images, "_image_id", lambda client, name: next(ids))
    monkeypatch.setattr(images, "_remove_image", lambda client, image: removed.append(image))
    fake_docker.labels[images.ROOTFS_IMAGE] = {}
    fake_docker.labels[images.SANDBOX_IMAGE] = {images.HASH_LABEL: "an older recipe"}
    assert images.build_image(log=lambda line: None) == images.SANDBOX_IMAGE
    assert fake_docker.calls == ["build"] and removed == ["sha256:old"]
