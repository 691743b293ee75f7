"""Choosing a backend and making a sandbox: :func:`create`."""

from __future__ import annotations

from typing import Any

from agentgym.errors import SandboxUnavailableError, UsageError
from agentgym.sandbox.base import Sandbox, SandboxSpec

__all__ = ["BACKENDS", "available_backends", "create"]

BACKENDS = ("auto", "bwrap", "docker", "local")


def available_backends() -> dict[str, str | None]:
    """Each isolating backend and why it cannot run here (``None`` when it can)."""
    from agentgym.sandbox.bwrap import bwrap_problem

    problems: dict[str, str | None] = {"bwrap": bwrap_problem()}
    try:
        from agentgym.sandbox.dockerd import docker_problem
    except ImportError:
        problems["docker"] = "the docker backend is not installed in this agentgym"
    else:
        problems["docker"] = docker_problem()
    return problems


def create(
    spec: SandboxSpec | None = None,
    *,
    backend: str = "auto",
    allow_local: bool = False,
    **spec_fields: Any,
) -> Sandbox:
    """Make a live sandbox.

    Args:
        spec: what the sandbox is made of (default: ``SandboxSpec(**spec_fields)``).
        backend: ``"bwrap"``, ``"docker"``, ``"local"``, or ``"auto"``: bwrap if usable, else
            docker if a daemon answers, else an error saying how to get either.
        allow_local: let the ``local`` backend run (it does not isolate).
    """
    if spec is None:
        spec = SandboxSpec(**spec_fields)
    elif spec_fields:
        raise UsageError("pass either a SandboxSpec or its fields, not both")
    if backend not in BACKENDS:
        raise UsageError(f"unknown sandbox backend {backend!r}; choose from {list(BACKENDS)}")
    if backend == "auto":
        problems = available_backends()
        usable = [name for name, problem in problems.items() if problem is None]
        if not usable:
            reasons = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
            raise SandboxUnavailableError(
                f"no isolating sandbox backend works here ({reasons}). Install bubblewrap "
                f"(apt-get install bubblewrap) and run as root, or start a Docker daemon"
            )
        backend = usable[0]
    if backend == "bwrap":
        from agentgym.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(spec)
    if backend == "docker":
        from agentgym.sandbox.docker import DockerSandbox

        return DockerSandbox(spec)
    from agentgym.sandbox.local import LocalSandbox

    return LocalSandbox(spec, allow_local=allow_local)
