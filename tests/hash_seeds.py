"""Running a snippet under two string-hash seeds, for tests that an output does not depend on
Python's per-process ``str`` hash salt (a generator that iterates over a set would)."""

from __future__ import annotations

import os
import subprocess
import sys


def outputs_under_two_hash_seeds(code: str) -> set[str]:
    """The distinct stdouts of ``code`` run with ``PYTHONHASHSEED`` 1 and 2: one means the
    output does not depend on the salt."""
    return {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
