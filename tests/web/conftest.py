"""Web tests: the testbed site (a test double for the browser-layer tests) is served by every
pool this test process starts."""

import sys
from pathlib import Path

from agentgym.envs.web.sites import register_site

sys.path.insert(0, str(Path(__file__).parent))
register_site("testbed", "testbed:TestbedSite")
