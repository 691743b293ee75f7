"""Every registered env keeps the contract: the checker runs over the whole registry.

A new env is checked the moment it is registered; nothing here names a particular env.

One sample: a behaviour class of more than :data:`SAMPLED_CLASS_SIZE` ids whose envs drive a
browser (MiniWoB++'s 101 pages: the task tier costs 5-6 s of Chromium per id) runs its task
tier here on a fixed quarter of its ids, chosen by a hash of the id, so the web family keeps
to its suite time (docs/testing.md). Nothing is lost for good: ``make check``
(``agentgym check``) and ``AGENTGYM_FULL_CONFORMANCE=1`` check every id, and every MiniWoB++
page's oracle is played on a train and a test task by ``tests/web/test_miniwob.py``.
"""

import hashlib
import os
from collections import Counter

import pytest
from timings import PARTS_PROPERTY

import agentgym
from agentgym.checker import CLASS_CHECKS, behaviour_class, check_env, plan_tiers
from agentgym.errors import MissingExtraError
from agentgym.multiagent_checker import check_multiagent_env

SLOW_FAMILIES_OR_PREFIXES = ("games/TextWorld",)
SAMPLED_CLASS_SIZE = 24
"""Above this many ids, a browser class's task tier runs on a sample (the module docstring)."""


def _in_sample(env_id: str) -> bool:
    """A fixed quarter of the ids: the same ones on every machine and every run."""
    return hashlib.sha256(env_id.encode()).digest()[0] % 4 == 0


def _drives_a_browser(spec) -> bool:
    try:
        return bool(getattr(spec.load(), "metadata", {}).get("needs_browser"))
    except (MissingExtraError, ImportError):
        return False


def _params():
    """Every single-agent id, in the tier :func:`~agentgym.checker.plan_tiers` gives it: the
    class-level checks once per behaviour class, the task-level checks on every id (on a
    sample of a large browser class: the module docstring)."""
    planned = plan_tiers(agentgym.list_envs(kind="env"))
    sizes = Counter(behaviour_class(spec) for spec, _ in planned)
    full = os.environ.get("AGENTGYM_FULL_CONFORMANCE") == "1"
    for spec, tier in planned:
        sampled = sizes[behaviour_class(spec)] > SAMPLED_CLASS_SIZE and _drives_a_browser(spec)
        if tier == "task" and sampled and not full and not _in_sample(spec.id):
            continue
        slow = spec.id.startswith(SLOW_FAMILIES_OR_PREFIXES)
        marks = [pytest.mark.slow] if slow else []
        yield pytest.param(spec.id, tier, id=spec.id, marks=marks)


@pytest.mark.parametrize(("env_id", "tier"), list(_params()))
def test_env_conforms(env_id, tier, record_property):
    report = check_env(env_id, tier=tier)
    record_property(PARTS_PROPERTY, report.seconds)  # the timing report keeps it (timings.py)
    assert report.tier == tier
    assert "leaks" in report.passed
    for name in CLASS_CHECKS:
        assert (name in report.passed) == (tier == "class"), (name, report.skipped)
    assert "oracle" in report.passed  # every registered task has an oracle
    assert report.oracle_mean_score > report.random_mean_score


@pytest.mark.parametrize("env_id", [s.id for s in agentgym.list_envs() if s.kind != "env"])
def test_multiagent_env_conforms(env_id):
    report = check_multiagent_env(env_id, leak_cycles=200)
    assert "pettingzoo" in report.passed and "leaks" in report.passed


def test_every_behaviour_class_has_one_id_in_the_class_tier():
    planned = plan_tiers(agentgym.list_envs(kind="env"))
    class_tier = [spec for spec, tier in planned if tier == "class"]
    entry_points = {spec.entry_point for spec, _ in planned}
    assert {spec.entry_point for spec in class_tier} == entry_points
    # MiniWoB++'s pages and reasoning-gym's datasets differ only in their task source.
    assert sum(s.entry_point.endswith(":MiniWoBEnv") for s in class_tier) == 1
    assert sum(s.entry_point.endswith(":ReasoningGymEnv") for s in class_tier) == 1
    assert all(tier == "class" for _, tier in plan_tiers(agentgym.list_envs(), full=True))


def test_the_games_family_has_at_least_eleven_ids():
    assert len(agentgym.list_envs(family="games")) >= 11
