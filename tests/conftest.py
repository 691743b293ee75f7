"""Shared test setup: tests/core holds test doubles importable by their module name."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "core"))
