"""The dependency rule (docs/design.md, "Layers"): the core never imports the folders built
on it, and those folders import only downward.

Every import statement counts, the ones inside functions too (a lazy import is still a
dependency). A test feeds the scanner a fixture module that breaks the rule, so the rule
test can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

from package_layout import ROOT, package_modules

CORE = "agentgym"
ABOVE_THE_CORE = (
    "agentgym.envs",
    "agentgym.benchmarks",
    "agentgym.baselines",
    "agentgym.leaderboard",
)

FORBIDDEN: dict[str, tuple[str, ...]] = {
    # the contract, registry, checker, sandbox, verifiers, agents, eval, CLI
    CORE: ABOVE_THE_CORE,
    # an env knows the contract, sandboxes and verifiers; never how it is evaluated or trained
    "agentgym.envs": (
        "agentgym.eval",
        "agentgym.agents",
        "agentgym.benchmarks",
        "agentgym.baselines",
        "agentgym.leaderboard",
    ),
    # model backends generate tokens; the agents over them and the evaluator stand above
    "agentgym.backends": ("agentgym.agents", "agentgym.eval", *ABOVE_THE_CORE),
    "agentgym.benchmarks": ("agentgym.envs", "agentgym.baselines", "agentgym.leaderboard"),
    "agentgym.baselines": ("agentgym.envs", "agentgym.benchmarks", "agentgym.leaderboard"),
    "agentgym.leaderboard": ("agentgym.envs", "agentgym.baselines", "agentgym.benchmarks"),
}
"""Layer -> the packages its modules must not import."""


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def layer_of(module: str) -> str:
    for layer in sorted(FORBIDDEN, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    raise AssertionError(f"{module} is in no layer")


def imports_of(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.append((node.lineno, base))
    return sorted(found)


def violations(found: dict[str, Path]) -> list[str]:
    """Every import that breaks :data:`FORBIDDEN`, as ``file:line: a imports b``."""
    broken = []
    for module, path in sorted(found.items()):
        layer = layer_of(module)
        for line, target in imports_of(module, path):
            for banned in FORBIDDEN[layer]:
                if target == banned or target.startswith(banned + "."):
                    broken.append(f"{shown(path)}:{line}: {module} imports {target}")
    return broken


def family_crossings(found: dict[str, Path]) -> list[str]:
    """Imports from one env family into another (families stand side by side)."""
    crossings = []
    for module, path in sorted(found.items()):
        if not module.startswith("agentgym.envs."):
            continue
        family = module.split(".")[2]
        for line, target in imports_of(module, path):
            if target.startswith("agentgym.envs.") and target.split(".")[2] != family:
                crossings.append(f"{shown(path)}:{line}: {module} imports {target}")
    return crossings


def test_the_scan_sees_every_room():
    found = package_modules()
    for name in (
        "agentgym.registry",
        "agentgym.eval.plan",
        "agentgym.envs.web.base",
        "agentgym.baselines.rollouts",
        "agentgym.benchmarks",
    ):
        assert name in found, name
    assert len(found) > 120


def test_layers_only_point_down():
    assert violations(package_modules()) == []


def test_env_families_do_not_import_each_other():
    assert family_crossings(package_modules()) == []


FACES = ("agentgym.agents", "agentgym.backends")
"""Rooms whose public face (the package's ``__all__``) is all the folders above the core use."""


def reaches_past_faces(found: dict[str, Path]) -> list[str]:
    """Imports, from the folders above the core, of a face room's submodules."""
    reaches = []
    for module, path in sorted(found.items()):
        if not module.startswith(ABOVE_THE_CORE):
            continue
        for line, target in imports_of(module, path):
            if any(target.startswith(face + ".") for face in FACES):
                reaches.append(f"{shown(path)}:{line}: {module} imports {target}")
    return reaches


def test_the_folders_above_the_core_use_the_agents_and_backends_faces():
    assert reaches_past_faces(package_modules()) == []
    import agentgym.agents
    import agentgym.backends

    for face in (agentgym.agents, agentgym.backends):
        for name in face.__all__:
            assert getattr(face, name) is not None, (face.__name__, name)


def test_a_core_module_importing_a_higher_layer_is_caught(tmp_path):
    """The rule can fail: a fixture module in the core that imports the trainers (lazily,
    inside a function) and the plan layer the old way."""
    fixture = tmp_path / "fixture.py"
    fixture.write_text(
        "from agentgym.core import Env\n"
        "def train():\n"
        "    from agentgym.baselines.grpo import train\n"
        "    return train\n"
        "from agentgym.benchmarks import EpisodePlan\n"
    )
    found = violations({"agentgym.eval.fixture": fixture})
    assert [entry.split(": ", 1)[1] for entry in found] == [
        "agentgym.eval.fixture imports agentgym.baselines.grpo",
        "agentgym.eval.fixture imports agentgym.benchmarks",
    ]


def test_an_env_importing_the_evaluator_or_another_family_is_caught(tmp_path):
    fixture = tmp_path / "fixture.py"
    fixture.write_text("from ..games.puzzles import base\nfrom agentgym.eval import evaluate\n")
    found = {"agentgym.envs.web.fixture": fixture}
    assert len(violations(found)) == 1 and "agentgym.eval" in violations(found)[0]
    assert family_crossings(found)[0].endswith("imports agentgym.envs.games.puzzles")
