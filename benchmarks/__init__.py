"""Benchmark suites as data: the YAML files next to this module (``agentgym eval --benchmark
quickstart`` runs ``quickstart.yaml``).

The code that reads and plans them is in the core, :mod:`agentgym.eval.plan` (the format is
described there); its names are re-exported here for code written against this module.
"""

from agentgym.eval import (
    Benchmark,
    BenchmarkEnv,
    EpisodePlan,
    episode_seed,
    list_benchmarks,
    load_benchmark,
)

__all__ = [
    "Benchmark",
    "BenchmarkEnv",
    "EpisodePlan",
    "episode_seed",
    "list_benchmarks",
    "load_benchmark",
]
