"""Sandboxes: where untrusted code runs. See ``docs/sandbox.md`` for the threat model.

from agentgym.sandbox import create

with create() as box:                      # bwrap when usable, else docker
    print(box.exec("python3 -c 'print(6*7)'").stdout)
    with box.session() as shell:           # a live shell: cd/export persist, ms per command
        shell.run("cd /tmp && export X=1")
        print(shell.run("pwd; echo $X").stdout)
"""

from agentgym.sandbox.base import (
    ExecResult,
    Limits,
    Mount,
    Overlay,
    ResourceLimitError,
    Sandbox,
    SandboxSpec,
    Session,
)
from agentgym.sandbox.factory import BACKENDS, available_backends, create
from agentgym.sandbox.pool import SandboxPool

__all__ = [
    "BACKENDS",
    "ExecResult",
    "Limits",
    "Mount",
    "Overlay",
    "ResourceLimitError",
    "Sandbox",
    "SandboxPool",
    "SandboxSpec",
    "Session",
    "available_backends",
    "create",
]
