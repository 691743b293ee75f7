"""Benchmark suites as data (YAML): pinned env ids, splits, seeds, episodes per task, metrics."""
