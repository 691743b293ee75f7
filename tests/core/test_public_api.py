"""The public API is what the docs say it is."""

import re
from pathlib import Path

import agentgym


def test_every_exported_name_exists():
    for name in agentgym.__all__:
        assert hasattr(agentgym, name), name


def test_the_contract_doc_lists_the_public_names():
    doc = (Path(__file__).parents[2] / "docs" / "contract.md").read_text()
    documented = set(re.findall(r"`agentgym\.(\w+)", doc))
    exported = set(agentgym.__all__) - {"__version__"}
    assert exported <= documented, sorted(exported - documented)
