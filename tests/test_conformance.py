"""Every registered env keeps the contract: the checker runs over the whole registry.

A new env is checked the moment it is registered; nothing here names a particular env.
"""

import pytest

import agentgym
from agentgym.checker import check_env
from agentgym.multiagent_checker import check_multiagent_env

SLOW_FAMILIES_OR_PREFIXES = ("games/TextWorld",)


SIBLING_CHECK = {"leak_cycles": 10, "skip": ("gymnasium", "close")}
"""How an id is checked when an earlier id of the same env class was checked in full: the
class-level checks (Gymnasium's API, close, a leak in the class's code) were proven there, so
a sibling (one of reasoning-gym's datasets, of MiniWoB's pages) runs every check that depends
on its tasks, and 10 leak cycles of its own."""


def _params():
    checked_classes = set()
    for spec in agentgym.list_envs(kind="env"):
        slow = spec.id.startswith(SLOW_FAMILIES_OR_PREFIXES)
        how = SIBLING_CHECK if spec.entry_point in checked_classes else {"leak_cycles": 200}
        checked_classes.add(spec.entry_point)
        marks = [pytest.mark.slow] if slow else []
        yield pytest.param(spec.id, how, id=spec.id, marks=marks)


@pytest.mark.parametrize(("env_id", "how"), list(_params()))
def test_env_conforms(env_id, how):
    report = check_env(env_id, **how)
    assert "leaks" in report.passed
    if "oracle" in report.skipped:  # declared: a MiniWoB++ task with no scripted solver yet
        env = agentgym.make(env_id)
        assert env.metadata["oracle"] is False
        env.close()
    else:
        assert "oracle" in report.passed
        assert report.oracle_mean_score > report.random_mean_score


@pytest.mark.parametrize("env_id", [s.id for s in agentgym.list_envs() if s.kind != "env"])
def test_multiagent_env_conforms(env_id):
    report = check_multiagent_env(env_id, leak_cycles=200)
    assert "pettingzoo" in report.passed and "leaks" in report.passed


def test_the_games_family_has_at_least_eleven_ids():
    assert len(agentgym.list_envs(family="games")) >= 11
