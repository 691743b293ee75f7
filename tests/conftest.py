"""Shared test setup: tests/core and tests/eval hold test doubles importable by module name."""

import sys
from pathlib import Path

for folder in ("core", "eval"):
    sys.path.insert(0, str(Path(__file__).parent / folder))
