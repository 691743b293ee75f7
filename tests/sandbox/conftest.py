"""Sandbox fixtures: a sandbox per test for every isolating backend that this machine has.

bwrap needs only the package (and root): on our machines and in CI it must work, so a missing
bwrap fails the tests instead of skipping them. Off Linux or without root it is skipped with
the reason. (Docker joins ISOLATING once its backend lands.)
"""

from __future__ import annotations

import os
import sys

import pytest

from agentgym.sandbox import Limits, SandboxSpec, create
from agentgym.sandbox.bwrap import bwrap_problem

ISOLATING = ["bwrap"]

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


def require(backend: str) -> None:
    if backend == "bwrap":
        problem = bwrap_problem()
        if problem and (sys.platform != "linux" or os.geteuid() != 0):
            pytest.skip(f"bwrap backend unusable here: {problem}")
        assert problem is None, f"bwrap must work on this machine: {problem}"


@pytest.fixture(params=ISOLATING)
def backend(request):
    require(request.param)
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
