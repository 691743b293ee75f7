"""The dependency rule (docs/design.md, "Layers"): the core never imports the folders built
on it, those folders import only downward, and inside the core the sandbox, the verifiers and
the agents stand below the evaluator (the verifiers below the agents too). No two modules of
the whole package import each other, however indirectly: the import graph has no cycle.

Every import statement counts, the ones inside functions too (a lazy import is still a
dependency). Tests feed the scanner fixture modules that break each rule, so each rule's
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
    # inside the core, from the bottom up: sandbox, verifiers, agents, then the evaluator
    "agentgym.sandbox": ("agentgym.eval", *ABOVE_THE_CORE),
    # a verifier judges what it is given; an LLM judge's model comes in as a function
    "agentgym.verifiers": ("agentgym.agents", "agentgym.eval", *ABOVE_THE_CORE),
    "agentgym.agents": ("agentgym.eval", *ABOVE_THE_CORE),
    # the arena plays matches through the evaluator's engine: it stands above the evaluator
    "agentgym.eval": ("agentgym.arena", *ABOVE_THE_CORE),
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


def resolved_base(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` statement names, its dots resolved against ``package``."""
    base = node.module or ""
    if node.level:
        anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
        base = f"{anchor}.{base}" if base else anchor
    return base


def import_nodes(module: str, path: Path) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement in the file, with the package its relative imports start from."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return [
        (node, package) for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
    ]


def imports_of(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, relative ones resolved."""
    found = []
    for node, package in import_nodes(module, path):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        else:
            found.append((node.lineno, resolved_base(node, package)))
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


BUILDS_ON = {("gui", "web"): "the pixel twins are the web envs seen as screens (docs/envs/gui.md)"}
"""The one declared exception to families standing side by side, and why (the gui extra
installs the web one)."""


def family_crossings(found: dict[str, Path]) -> list[str]:
    """Imports from one env family into another (families stand side by side), but those
    :data:`BUILDS_ON` declares."""
    crossings = []
    for module, path in sorted(found.items()):
        if not module.startswith("agentgym.envs."):
            continue
        family = module.split(".")[2]
        for line, target in imports_of(module, path):
            other = target.split(".")[2] if target.startswith("agentgym.envs.") else family
            if other != family and (family, other) not in BUILDS_ON:
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


FACES = ("agentgym.agents", "agentgym.backends", "agentgym.eval")
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


def test_the_folders_above_the_core_use_the_agents_backends_and_evaluator_faces():
    assert reaches_past_faces(package_modules()) == []
    import agentgym.agents
    import agentgym.backends
    import agentgym.eval

    for face in (agentgym.agents, agentgym.backends, agentgym.eval):
        for name in face.__all__:
            assert getattr(face, name) is not None, (face.__name__, name)


def test_reaching_past_the_evaluators_face_is_caught(tmp_path):
    fixture = tmp_path / "fixture.py"
    fixture.write_text(
        "from agentgym.eval import evaluate\nfrom agentgym.eval.plan import Benchmark\n"
    )
    found = reaches_past_faces({"agentgym.leaderboard.fixture": fixture})
    assert [entry.split(": ", 1)[1] for entry in found] == [
        "agentgym.leaderboard.fixture imports agentgym.eval.plan"
    ]


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


def import_graph(found: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Module -> {package module it imports: the line}. ``from a import b`` points at ``a.b``
    when that is a module, else at ``a``; ``import a.b.c`` at the deepest module of the name.
    Importing ``a.b`` runs ``a/__init__.py`` too, but that is no edge: otherwise every package
    whose face re-exports its modules would be a cycle with each of them."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in found.items():
        edges = graph.setdefault(module, {})
        for node, package in import_nodes(module, path):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = resolved_base(node, package)
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                while target and target not in found:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    edges.setdefault(target, node.lineno)
    return graph


def import_cycles(found: dict[str, Path]) -> list[list[str]]:
    """The import graph's cycles: each set of modules that reach one another (a strongly
    connected component of two or more), as the ``file:line: a imports b`` lines inside it."""
    graph = import_graph(found)
    components = strongly_connected(graph)
    return [
        [
            f"{shown(found[a])}:{graph[a][b]}: {a} imports {b}"
            for a in sorted(members)
            for b in sorted(graph[a])
            if b in members
        ]
        for members in components
        if len(members) > 1
    ]


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """Tarjan's algorithm: the graph's strongly connected components."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:  # node is the root of a component: pop it whole
            component = {stack.pop()}
            while node not in component:
                component.add(stack.pop())
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_the_package_has_no_import_cycle():
    """Lazy and ``TYPE_CHECKING`` imports count: each is a dependency a reader must follow,
    and a cycle through one turns into an import-time failure as soon as it is hoisted."""
    cycles = import_cycles(package_modules())
    assert cycles == [], f"{len(cycles)} import cycle(s):\n" + "\n\n".join(
        "\n".join(cycle) for cycle in cycles
    )


def test_a_cycle_through_a_lazy_import_is_caught(tmp_path):
    """The rule can fail: two fixture modules that import each other, one lazily and through
    ``from package import module``; a third that only imports them is in no cycle."""
    (tmp_path / "a.py").write_text("def late():\n    from agentgym.fixture import b\n")
    (tmp_path / "b.py").write_text("from .a import late\nimport agentgym.fixture.b\n")
    (tmp_path / "c.py").write_text("from . import a, b\n")
    (tmp_path / "__init__.py").write_text("from agentgym.fixture import a, b, c\n")
    found = {f"agentgym.fixture.{name}": tmp_path / f"{name}.py" for name in "abc"}
    found["agentgym.fixture"] = tmp_path / "__init__.py"
    assert [[entry.split(": ", 1)[1] for entry in cycle] for cycle in import_cycles(found)] == [
        [
            "agentgym.fixture.a imports agentgym.fixture.b",
            "agentgym.fixture.b imports agentgym.fixture.a",
        ]
    ]


def test_the_inner_core_rows_are_caught(tmp_path):
    """The rule can fail: a verifier that imports an agent and the evaluator, an agent and a
    sandbox module that import the evaluator."""
    fixture = tmp_path / "fixture.py"
    fixture.write_text(
        "def judge():\n    from agentgym.agents import resolve_agent\n"
        "from agentgym.eval import evaluate\n"
    )
    found = [
        entry.split(": ", 1)[1] for entry in violations({"agentgym.verifiers.fixture": fixture})
    ]
    assert found == [
        "agentgym.verifiers.fixture imports agentgym.agents",
        "agentgym.verifiers.fixture imports agentgym.eval",
    ]
    for room in ("agentgym.agents", "agentgym.sandbox"):
        found = [entry.split(": ", 1)[1] for entry in violations({f"{room}.fixture": fixture})]
        assert found == [f"{room}.fixture imports agentgym.eval"]


def test_the_evaluator_importing_the_arena_is_caught(tmp_path):
    """The rule can fail: the arena stands above the evaluator, never below it."""
    fixture = tmp_path / "fixture.py"
    fixture.write_text("def rated():\n    from agentgym.arena import rate\n")
    found = [entry.split(": ", 1)[1] for entry in violations({"agentgym.eval.fixture": fixture})]
    assert found == ["agentgym.eval.fixture imports agentgym.arena"]
