"""The docs say the present: their code runs (each guide's blocks, in order, in one
namespace), and the claims that drifted before are checked against the code (the README's
families against the registry)."""

import importlib
import re
import sys
import tomllib
import types
from pathlib import Path

import gymnasium
import pytest

import agentgym
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
        out = capsys.readouterr().out
        assert "nim/Nim-v0: 10 checks passed" in out
        assert "nim/NimDuel-v0: 9 checks passed" in out  # the multi-agent section
        won = re.search(r"nim-sum, moving second .*: (\d+) of 20", out)
        assert won and int(won[1]) >= 15, out
    finally:
        sys.modules.pop(module.__name__, None)
        for env_id in ("nim/Nim-v0", "nim/NimDuel-v0"):
            registry._registry.pop(env_id, None)
            gymnasium.registry.pop(env_id, None)


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


# The README names what ships in its opening (the text above its first section) and in the
# family table. Both drifted once: the opening called simulated users "not built yet" while
# four usersim ids were registered. Each registered namespace is named as its id prefix,
# `usersim/`, so the check is exact; a new family fails here until the README names it.
NOT_BUILT = re.compile(r"not (?:yet )?(?:built|shipped|available)|not yet|to come|planned")


def readme_section(heading: str | None) -> str:
    """The README's text above its first ``## `` heading (``None``), or under ``## heading``."""
    text = (ROOT / "README.md").read_text()
    if heading is None:
        return text.split("\n## ", 1)[0]
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def namespaces() -> dict[str, str]:
    """Each namespace agentgym's own families register -> the family package that does."""
    return {
        spec.family: ".".join(spec.entry_point.split(".")[:3])
        for spec in agentgym.list_envs()
        if spec.entry_point.startswith("agentgym.envs.")
    }


def family_names(namespace: str, package: str) -> list[str]:
    """The words a sentence could name a family by: its namespace and the name its package's
    docstring gives it ("The simulated-users family: ..." -> simulated-users)."""
    doc = importlib.import_module(package).__doc__ or ""
    named = re.match(r"(?:The )?([\w-]+) family", doc)
    return [namespace] + ([named.group(1)] if named else [])


def mentions(sentence: str, name: str) -> bool:
    """Whether ``name`` occurs in ``sentence``, singular or plural, hyphen or space or none."""
    stem = re.escape(name.lower().removesuffix("s")).replace(r"\-", "[- ]?")
    return re.search(rf"\b{stem}s?\b", sentence.lower()) is not None


def test_the_registry_has_the_namespaces_the_readme_is_checked_for():
    assert {"games", "reasoning", "web", "swe", "usersim", "multiagent"} <= set(namespaces())


@pytest.mark.parametrize("namespace", sorted(namespaces()))
def test_the_readme_names_every_registered_namespace(namespace):
    opening, table = readme_section(None), readme_section("What's in the families")
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    assert f"`{namespace}/" in opening, f"the README's opening does not name `{namespace}/`"
    assert any(f"`{namespace}/" in first for first in rows), (
        f"the README's family table has no row for `{namespace}/`"
    )


def test_the_readme_calls_no_registered_family_unbuilt():
    sentences = re.split(r"(?<=[.;])\s+", " ".join(readme_section(None).split()))
    for sentence in filter(NOT_BUILT.search, sentences):
        for namespace, package in namespaces().items():
            for name in family_names(namespace, package):
                assert not mentions(sentence, name), (
                    f"the README's opening says {namespace!r} ({name}) is not there: {sentence!r}"
                )


def mypy_overrides() -> list[str]:
    """The modules pyproject.toml's ``[[tool.mypy.overrides]]`` blocks relax strict typing for,
    as written there (a block names one module or a list; names may end in ``.*``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    modules: list[str] = []
    for block in config["tool"]["mypy"].get("overrides", []):
        named = block["module"]
        modules += [named] if isinstance(named, str) else named
    return modules


def test_the_design_page_names_every_module_typed_less_than_strictly():
    """docs/design.md's "Types" says which modules are not checked with --strict as a whole;
    the set is pyproject's, so a new override block fails here until the page names it."""
    page = (DOCS / "design.md").read_text()
    types = page.split("\n## Types\n", 1)[1].split("\n## ", 1)[0]
    missing = [module for module in mypy_overrides() if f"`{module}`" not in types]
    assert not missing, f"docs/design.md's Types section does not name {missing}"


def table_ids(cell: str) -> list[str]:
    """The ids a family-table cell names: `games/Sokoban-v0`, `Game24-v0` (the row's namespace),
    `usersim/{Retail,Airline}-v1` (one id each); `<task>` stands for any name."""
    codes = re.findall(r"`([^`]+)`", cell)
    namespace = codes[0].split("/")[0]
    ids = []
    for code in codes:
        choice = re.fullmatch(r"(.*)\{(.*)\}(.*)", code)
        names = [choice[1] + one + choice[3] for one in choice[2].split(",")] if choice else [code]
        ids += [name if "/" in name else f"{namespace}/{name}" for name in names]
    return ids


def test_every_id_in_the_readme_family_table_is_registered():
    """An id the table shows but the registry lacks (a version bumped since, a rename) fails."""
    registered = [spec.id for spec in agentgym.list_envs()]
    table = readme_section("What's in the families")
    cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    shown = [env_id for cell in cells for env_id in table_ids(cell)]
    assert len(shown) >= 30
    for env_id in shown:
        pattern = re.sub(r"<[^>]+>", "[^/]+", re.escape(env_id))  # escape() leaves <> be
        assert any(re.fullmatch(pattern, one) for one in registered), (
            f"the README's family table names {env_id}, which is not registered"
        )
