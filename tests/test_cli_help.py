"""Every ``agentgym`` command's help reads as the best tools' do (issue 29): a usage line, the
description in plain text (the docstrings' reST rendered, no ``%%`` left from argparse's
escaping), a help text for every option and its default where it has one. The parsers are
built in process and walked (``agentgym train ALGO`` included), so the whole tree takes a
few seconds. Beside them: ``agentgym benchmarks``, ``info`` pages without markup, and the
modules ``--agent`` finds in the current directory.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator

import pytest

from agentgym import cli
from agentgym.baselines import cli as train_cli
from agentgym.clihelp import HelpFormatter, plain
from agentgym.errors import UsageError

MARKUP = re.compile(
    r"(?<!`)``(?!`)|:(?:mod|func|class|meth|data|attr|exc|obj):`|::$|\*\*[A-Z]", re.MULTILINE
)
"""reST left in a page: a double backquote (not part of a Markdown fence, ```bash, which a
page may show as text), a cross-reference role, a literal block's ``::``, strong emphasis."""


def _walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases once
                yield from _walk(sub)


def every_parser() -> list[argparse.ArgumentParser]:
    """The ``agentgym`` parser and all its subcommands', ``agentgym train``'s own (main()
    builds it) and each algorithm's options."""
    found = list(_walk(cli._parser()))
    found.append(train_cli.train_parser())
    for name in train_cli.ALGORITHMS:
        args = train_cli.load_algorithm(name).Args
        found.append(train_cli._options_parser(name, args))
    return found


@pytest.fixture(scope="module")
def parsers() -> list[argparse.ArgumentParser]:
    return every_parser()


def test_every_command_has_a_usage_line_and_plain_text(parsers):
    assert len(parsers) > 25  # the tree was walked, not just the top
    wrong = []
    for parser in parsers:
        text = parser.format_help()
        if not text.startswith(f"usage: {parser.prog}"):
            wrong.append(f"{parser.prog}: no usage line")
        if not re.match(r"usage: .*?\n\n(?!options:|positional arguments:)\S", text, re.DOTALL):
            wrong.append(f"{parser.prog}: no description after the usage")
        if "%%" in text:
            wrong.append(f"{parser.prog}: a literal %%")
        wrong += [f"{parser.prog}: markup {m.group()!r}" for m in MARKUP.finditer(text)]
    assert not wrong, "\n".join(wrong)


def test_every_option_has_help_and_shows_its_default(parsers):
    wrong = []
    for parser in parsers:
        formatter = HelpFormatter(parser.prog)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            name = "/".join(action.option_strings) or action.dest
            if not (action.help or "").strip():
                wrong.append(f"{parser.prog} {name}: no help")
                continue
            default = action.default
            empty = isinstance(default, list | str) and not default
            unset = empty or any(default is value for value in (None, False, argparse.SUPPRESS))
            shown = "default" in formatter._get_help_string(action)
            if action.option_strings and not unset and not shown:
                wrong.append(f"{parser.prog} {name}: its default {default!r} is not shown")
            if re.search(r"\(default [^:]", action.help):  # one form: "(default: X)"
                wrong.append(f"{parser.prog} {name}: '(default X)' for '(default: X)'")
    assert not wrong, "\n".join(wrong)


def test_plain_renders_rest_as_the_text_it_stands_for():
    assert plain("``x = 1`` and :func:`~agentgym.eval.stats.compare`") == "x = 1 and compare"
    assert plain(":class:`agentgym.Agent` or :doc:`the guide <docs/guide>`") == (
        "agentgym.Agent or the guide"
    )
    assert plain("Run it::\n\n    agentgym list") == "Run it:\n\n    agentgym list"
    assert plain("For example ::\n\n    x\n::\n\n    y") == "For example\n\n    x\n\n    y"
    assert plain(".. code-block:: python\n\n    x\n.. note:: careful") == "\n    x\nNote: careful"
    fence = "a reply with a ```` ```bash ```` block (``docs/x.md``)"
    assert plain(fence) == "a reply with a  ```bash  block (docs/x.md)"
    assert plain("**What it sees.** f(**kwargs)") == "What it sees. f(**kwargs)"


def test_descriptions_keep_their_examples_and_refill_their_prose(parsers):
    parser = cli._OneLineParser(
        prog="demo",
        description="A first line of prose\nthat goes on here.\n\n"
        "    demo run --this \\\n        --that\n    demo list            aligned comment\n",
    )
    text = parser.format_help()
    assert "A first line of prose that goes on here." in text
    assert "    demo run --this \\\n        --that\n    demo list            aligned" in text
    # ``agentgym swe --help`` joined a continued line: its docstring is raw now
    swe = next(p for p in parsers if p.prog == "agentgym swe")
    assert "--out tasks.jsonl \\\n" in swe.format_help()


def test_agentgym_benchmarks_lists_every_shipped_suite_with_its_envs_and_size(capsys):
    from agentgym.eval.plan import list_benchmarks, load_benchmark

    assert cli.main(["benchmarks", "--no-counts"]) == 0
    out = capsys.readouterr().out
    for name in list_benchmarks():
        benchmark = load_benchmark(name)
        assert f"{name} (version {benchmark.version}): {len(benchmark.envs)} envs" in out
        assert all(env.id in out for env in benchmark.envs)
        assert " ".join(benchmark.description.split()[:6]) in " ".join(out.split())
    assert cli.main(["benchmarks", "quickstart"]) == 0
    quickstart = load_benchmark("quickstart")
    tasks = sum(len(env.task_ids()) for env in quickstart.envs)
    episodes = tasks * quickstart.episodes_per_task
    assert f"{tasks} tasks x {quickstart.episodes_per_task} episodes = {episodes} episodes" in (
        capsys.readouterr().out
    )
    assert cli.main(["benchmarks", "quickstrat"]) == 2
    assert "no shipped benchmark 'quickstrat'" in capsys.readouterr().err


def test_eval_help_names_the_shipped_benchmarks(parsers):
    from agentgym.eval.plan import list_benchmarks

    text = " ".join(next(p for p in parsers if p.prog == "agentgym eval").format_help().split())
    assert all(name in text for name in list_benchmarks())
    assert "agentgym benchmarks" in text


@pytest.mark.parametrize("env_id", ["games/Maze-v0", "swe/Repair-v1"])
def test_an_info_page_is_plain_text(env_id, capsys):
    assert cli.main(["info", env_id]) == 0
    page = capsys.readouterr().out
    assert env_id in page and not MARKUP.search(page), MARKUP.findall(page)


def test_agent_modules_are_found_in_the_current_directory(tmp_path, monkeypatch):
    from agentgym.agents.specs import resolve_agent

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    (tmp_path / "h5_local_agents").mkdir()
    (tmp_path / "h5_local_agents" / "__init__.py").write_text("")
    (tmp_path / "h5_local_agents" / "act.py").write_text("def act(obs, info):\n    return 'x'\n")
    try:
        factory, name = resolve_agent("h5_local_agents.act:act")
        assert name == "h5_local_agents.act:act" and factory().act is not None
        with pytest.raises(UsageError) as refused:
            resolve_agent("h5_nowhere.agents:act")
        message = str(refused.value)
        assert "no module 'h5_nowhere'" in message and str(tmp_path) in message
        assert "run from the folder that holds h5_nowhere/" in message
    finally:
        for module in [m for m in sys.modules if m.startswith("h5_local_agents")]:
            del sys.modules[module]


@pytest.mark.parametrize("env_id", ["games/Maze-v0", "swe/Repair-v1"])
def test_play_refuses_a_task_id_with_real_ones_of_that_env(env_id, capsys):
    """``play --task-id`` suggested ``test/easy/3`` for SWE, whose ids are ``REPO.DIGEST``."""
    import agentgym

    assert cli.main(["play", env_id, "--task-id", "no/such/3"]) == 2
    said = capsys.readouterr().err
    env = agentgym.make(env_id)
    try:
        tasks = env.unwrapped.tasks
        assert all(tasks.ids(split)[0] in said for split in tasks.splits if tasks.count(split))
    finally:
        env.close()
    assert said.count("\n") == 1 and f"agentgym info {env_id}" in said
