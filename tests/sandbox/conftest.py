"""Sandbox fixtures: a sandbox per test for every isolating backend that this machine has.

bwrap needs only the package (and root): on our machines and in CI it must work, so a missing
bwrap fails the tests instead of skipping them. Off Linux or without root it is skipped with
the reason.

Docker runs for real too: the session-scoped ``docker_daemon`` fixture (``tests/conftest.py``,
shared with the families that run on docker) uses a daemon that
answers (``DOCKER_HOST`` or ``/var/run/docker.sock``), or else starts a private ``dockerd``
(:class:`~agentgym.sandbox.dockerd.PrivateDaemon`: private socket, data root under
``$AGENTGYM_CACHE/docker``, so the image built once is reused by later runs) and stops it at
the end. It builds the base image offline when it is missing or stale (a few minutes, once
per cache). Only off Linux or without root are docker tests skipped; on our machines a daemon
that cannot start or an image that cannot be built fails them.
"""

from __future__ import annotations

import os
import sys

import pytest

from agentgym.sandbox import Limits, SandboxSpec, create
from agentgym.sandbox.bwrap import bwrap_problem

ISOLATING = ["bwrap", "docker"]

# Small limits so attacks end fast; the defaults are larger.
TEST_LIMITS = Limits(
    timeout=20,
    memory=1 << 30,
    cpu_seconds=5,
    processes=64,
    file_size=16 << 20,
    disk=32 << 20,
    output=64 << 10,
)


def require(backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "bwrap":
        problem = bwrap_problem()
        if problem and (sys.platform != "linux" or os.geteuid() != 0):
            pytest.skip(f"bwrap backend unusable here: {problem}")
        assert problem is None, f"bwrap must work on this machine: {problem}"
    if backend == "docker":
        request.getfixturevalue("docker_daemon")


@pytest.fixture(params=ISOLATING)
def backend(request):
    require(request.param, request)
    return request.param


@pytest.fixture
def box(backend):
    sandbox = create(SandboxSpec(limits=TEST_LIMITS), backend=backend)
    yield sandbox
    sandbox.close()


@pytest.fixture
def other_box(backend):
    sandbox = create(SandboxSpec(limits=TEST_LIMITS), backend=backend)
    yield sandbox
    sandbox.close()


@pytest.fixture
def spec():
    """A spec with the small test limits."""
    return SandboxSpec(limits=TEST_LIMITS)
