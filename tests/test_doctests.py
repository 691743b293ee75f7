"""The doctests of the folders mapped into the package (``envs/``, ``baselines/``,
``benchmarks/``, ``leaderboard/``), run on the modules as the package names them.

pytest's own doctest collection covers ``agentgym/`` (``testpaths``), whose folder name is its
package name; it would import ``envs/games/puzzles/base.py`` as ``envs.games.puzzles.base``,
a second copy beside ``agentgym.envs.games.puzzles.base`` that registers every id again.
"""

from __future__ import annotations

import doctest
import importlib
import re

import pytest
from package_layout import package_modules

EXAMPLE = re.compile(r"^\s*>>> ", re.MULTILINE)
MAPPED = ("agentgym.envs", "agentgym.baselines", "agentgym.benchmarks", "agentgym.leaderboard")


def _with_examples() -> list[str]:
    return sorted(
        name
        for name, path in package_modules().items()
        if name.startswith(MAPPED) and EXAMPLE.search(path.read_text())
    )


def test_the_mapped_folders_have_doctests_to_run():
    assert len(_with_examples()) >= 2


@pytest.mark.parametrize("name", _with_examples())
def test_doctests(name):
    module = importlib.import_module(name)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [test for test in finder.find(module, name) if test.examples]
    assert tests, f"{name} has a line starting with >>> but no doctest"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
