"""``docs/envs/usersim.md``'s "Adding a domain" works as written: its files, written to a
temporary folder, make a domain package; its last block registers it, makes the env, and
plays the oracle (which scores 1) and a blind agent (which scores 0)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import gymnasium
import pytest

from agentgym import registry
from agentgym.envs.usersim import domain, env

DOC = Path(__file__).parents[2] / "docs" / "envs" / "usersim.md"
ENV_ID = "toyshop/Orders-v0"


def section() -> str:
    text = DOC.read_text()
    return text[text.index("## Adding a domain") : text.index("## Version history")]


@pytest.fixture
def toyshop(tmp_path, monkeypatch):
    """The section's files under ``tmp_path``, importable; everything they register or
    cache is removed afterwards."""
    files = re.findall(r"```\w+ (toyshop/\S+)\n(.*?)```", section(), flags=re.DOTALL)
    assert {path for path, _ in files} >= {
        "toyshop/__init__.py",
        "toyshop/data_model.py",
        "toyshop/tools.py",
        "toyshop/policy.md",
        "toyshop/tasks.py",
    }
    for path, text in files:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    registry._registry.pop(ENV_ID, None)
    gymnasium.registry.pop(ENV_ID, None)
    loaded = env._DOMAINS.pop("toyshop:ToyShopDomain", None)
    env._TASK_SETS.pop("toyshop", None)
    if loaded is not None:
        domain._DB_CACHE.pop(type(loaded), None)
    for name in [m for m in sys.modules if m == "toyshop" or m.startswith("toyshop.")]:
        del sys.modules[name]


def test_the_guide_adds_a_domain_whose_oracle_scores_one_and_blind_agent_zero(toyshop, capsys):
    blocks = re.findall(r"```python\n(.*?)```", section(), flags=re.DOTALL)
    exec(compile(blocks[-1], str(DOC), "exec"), {})
    scores = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert len(scores) == 6
    assert {(agent, float(reward)) for agent, _, reward in scores} == {
        ("oracle", 1.0),
        ("blind", 0.0),
    }


def test_a_domain_that_is_not_one_is_refused_in_one_line(toyshop):
    (toyshop / "notadomain.py").write_text("class Thing:\n    pass\n")
    with pytest.raises(Exception, match="is a Thing, not a Domain"):
        env.load_domain("notadomain:Thing")
    with pytest.raises(Exception, match="or a domain of your own as 'module:Class'"):
        env.load_domain("toyshoppe")
