"""The SWE family: fix a bug in a real Python repository with bash, an editor and its tests.

Tasks are bugs injected into pinned releases of real packages (more-itertools, toolz,
attrs, ...) by the task factory and kept only when the repository's own tests catch them;
SWE-bench-format instances load too. Each repository is prepared once (``agentgym swe
prepare``: download, test environment, baseline) and used offline after. Importing this
module registers the ids; see ``docs/envs/swe.md``.
"""

from agentgym.registry import register

register(
    "swe/Repair-v1",
    entry_point="agentgym.envs.swe.env:SWEEnv",
    max_episode_steps=50,
    extra="swe",
    episode_cpus=1.0,  # a sandbox running the repository's tests
    description="fix a bug in a real Python repository with bash, an editor and its tests",
)
