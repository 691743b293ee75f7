"""The one cache every part of agentgym keeps its derived files in, and the lock that guards it.

``$AGENTGYM_CACHE`` (default ``~/.cache/agentgym``) holds what is expensive to make and safe to
rebuild: generated TextWorld games, the converted SmolLM2 model, the debootstrap rootfs and the
private Docker daemon's data. Several processes (test runs, evaluations, builds) share it, so
whatever is built there is built under :func:`exclusive` and moved into place atomically.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["cache_dir", "exclusive"]


def cache_dir() -> Path:
    """``$AGENTGYM_CACHE``, or ``~/.cache/agentgym``."""
    root = os.environ.get("AGENTGYM_CACHE") or os.path.join(Path.home(), ".cache", "agentgym")
    return Path(root)


@contextlib.contextmanager
def exclusive(lock_path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if missing) across processes."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
