"""Shared test setup: tests/core holds test doubles importable by their module name."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "core"))
# Keep generated game caches inside the test session's temp area when CI sets nothing.
os.environ.setdefault("AGENTGYM_CACHE", str(Path.home() / ".cache" / "agentgym"))
