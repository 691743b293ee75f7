"""The docs' code runs: the new-family guide's blocks, in order, in one namespace."""

import re
import sys
import types
from pathlib import Path

import gymnasium

from agentgym import registry

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_the_new_family_guide_builds_a_conforming_env(capsys):
    module = types.ModuleType("docs_new_family_example")
    sys.modules[module.__name__] = module
    try:
        for block in python_blocks(DOCS / "new-family.md"):
            exec(compile(block, "docs/new-family.md", "exec"), module.__dict__)
        assert "nim/Nim-v0: 10 checks passed" in capsys.readouterr().out
    finally:
        sys.modules.pop(module.__name__, None)
        registry._registry.pop("nim/Nim-v0", None)
        gymnasium.registry.pop("nim/Nim-v0", None)


def test_the_readme_tour_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the tour writes a run directory under ./runs
    namespace: dict = {}
    for block in python_blocks(ROOT / "README.md"):
        exec(compile(block, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "<TimeLimit<OrderEnforcing<PassiveEnvChecker<SokobanEnv<games/Sokoban-v0>>>>>" in out
    assert "Verdict(score=1.0, passed=True" in out
    assert "games/Sokoban-v0: 10 checks passed" in out


def test_the_baselines_guide_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example writes its run under ./runs
    namespace: dict = {}
    for block in python_blocks(DOCS / "baselines.md"):
        exec(compile(block, "docs/baselines.md", "exec"), namespace)
    assert capsys.readouterr().out.endswith("2 iterations\n")


def test_the_sandbox_guide_runs(capsys):
    namespace: dict = {}
    for block in python_blocks(DOCS / "sandbox.md"):
        exec(compile(block, "docs/sandbox.md", "exec"), namespace)
    assert capsys.readouterr().out == "45\n 0 False False\n/tmp\n3\n\n"


def test_the_evaluation_guide_runs(capsys):
    namespace: dict = {}
    for block in python_blocks(DOCS / "evaluation.md"):
        exec(compile(block, "docs/evaluation.md", "exec"), namespace)
    assert capsys.readouterr().out == "always_up 0\nfirst-listed 0\nrandom 0\n"


def test_the_verifier_examples_print_what_they_say(capsys):
    """Every block of docs/verifiers.md but the judge's (it needs a model server) runs, and
    each printed value matches the comment beside it."""
    blocks = [b for b in python_blocks(DOCS / "verifiers.md") if "Judge(" not in b]
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "docs/verifiers.md", "exec"), {})
        printed = capsys.readouterr().out.splitlines()
        claimed = re.findall(r"print\(.*\)\s+# (.*)", block)
        assert len(printed) == len(claimed)
        for line, claim in zip(printed, claimed, strict=True):
            assert line.startswith(claim.rstrip(".")), (line, claim)
