"""``agentgym swe`` refuses bad input with one line naming the value and exit status 2, before
any work; each case here once ended in a traceback, wrote outside the cache, or was taken
silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_refusal import refused

TINYLIB = str(Path(__file__).parent / "tinylib")


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """A cache of its own: a refused preparation must leave nothing in it, nor beside it."""
    cache = tmp_path / "deep" / "cache"
    cache.mkdir(parents=True)
    monkeypatch.setenv("AGENTGYM_CACHE", str(cache))
    return cache


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--repo", TINYLIB, "--name", "../../escaped"], ["'../../escaped'", "cannot name"]),
        (["--repo", TINYLIB, "--name", "a/b"], ["'a/b'"]),
        (["--repo", TINYLIB, "--name", "toolz"], ["'toolz'", "catalogue"]),
        (["--repo", TINYLIB, "--tests", "../../etc"], ["'../../etc'", "inside the repository"]),
        (["--repo", TINYLIB, "--tests", "/etc"], ["'/etc'", "inside the repository"]),
        (["--repo", TINYLIB, "--tests", "no_such_dir"], ["'no_such_dir'", "there is no"]),
        (["toolz", "--repo", TINYLIB], ["toolz", "--repo", "not both"]),
        (["toolz", "--name", "mine"], ["--name goes with --repo"]),
        (["--tests", "tests"], ["--tests goes with --repo"]),
        (["--repo", TINYLIB + "/README.nope"], ["is not a directory"]),
    ],
)
def test_prepare_refuses_names_and_paths_it_cannot_use(empty_cache, capsys, argv, words):
    refused(capsys, ["swe", "prepare", *argv], *words)
    assert list(empty_cache.iterdir()) == []
    assert sorted(p.name for p in empty_cache.parent.parent.iterdir()) == ["deep"]


def test_factory_refuses_bad_counts_names_and_outputs_before_any_work(tinylib, tmp_path, capsys):
    out = str(tmp_path / "tasks.jsonl")
    refused(capsys, ["swe", "factory", "tinylib", "--easy", "-5", "--out", out], "--easy -5")
    refused(capsys, ["swe", "factory", "tinylib", "--hard=-1", "--out", out], "--hard -1")
    zero = ["--easy", "0", "--medium", "0", "--hard", "0"]
    refused(capsys, ["swe", "factory", "tinylib", *zero, "--out", out], "no task to make")
    refused(capsys, ["swe", "factory", "tinylib", "tinylib", "--out", out], "more than once")
    refused(capsys, ["swe", "factory", "tinylib", "nosuch", "--out", out], "'nosuch'")
    one = ["--easy", "1", "--medium", "0", "--hard", "0"]
    refused(capsys, ["swe", "factory", "tinylib", *one, "--out", str(tmp_path)], "is a folder")
    missing = str(tmp_path / "missing" / "t.jsonl")
    refused(capsys, ["swe", "factory", "tinylib", *one, "--out", missing], "cannot be written")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.fixture
def bad_inputs(tmp_path):
    """Files export and import cannot read: missing, not UTF-8, not JSON, not an object."""
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(b'{"instance_id": "caf\xe9"}\n')
    not_json = tmp_path / "cut.jsonl"
    not_json.write_text('{"instance_id": "x"}\n{"cut\n')
    a_list = tmp_path / "list.jsonl"
    a_list.write_text(json.dumps([1, 2]) + "\n")
    return {
        "missing": (str(tmp_path / "absent.jsonl"), ["absent.jsonl", "cannot read"]),
        "folder": (str(tmp_path), ["cannot read", "directory"]),
        "latin": (str(latin), ["latin1.jsonl:1", "not UTF-8"]),
        "not json": (str(not_json), ["cut.jsonl:2", "not JSON"]),
        "a list": (str(a_list), ["list.jsonl:1", "list"]),
    }


@pytest.mark.parametrize("case", ["missing", "folder", "latin", "not json", "a list"])
@pytest.mark.parametrize("command", ["export", "import"])
def test_export_and_import_name_a_file_they_cannot_read(
    bad_inputs, tmp_path, capsys, command, case
):
    path, words = bad_inputs[case]
    where = "--mirror" if command == "export" else "--checkouts"
    out = tmp_path / "out.jsonl"
    refused(capsys, ["swe", command, path, where, str(tmp_path), "--out", str(out)], *words)
    assert not out.exists()


def test_export_and_import_refuse_unusable_folders_and_options(tiny_tasks, tmp_path, capsys):
    tasks = str(tiny_tasks[0])
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    out = str(tmp_path / "out.jsonl")
    export = ["swe", "export", tasks]
    twice = tmp_path / "twice.jsonl"
    twice.write_text(tiny_tasks[0].read_text().splitlines()[0] + "\n" + tiny_tasks[0].read_text())
    refused(
        capsys,
        ["swe", "export", str(twice), "--mirror", str(tmp_path / "m"), "--out", out],
        "more than once",
    )
    refused(capsys, [*export, "--mirror", str(a_file), "--out", out], "--mirror", "is a file")
    refused(capsys, [*export, "--mirror", str(tmp_path / "m"), "--out", str(tmp_path)], "folder")
    records = tmp_path / "records.jsonl"
    records.write_text("")
    imports = ["swe", "import", str(records)]
    refused(capsys, [*imports, "--checkouts", str(a_file), "--out", out], "--checkouts")
    for requirement in ("--index-url=http://example.invalid", "./local", "pytest>=1", "x==1 -e ."):
        argv = [
            *imports,
            "--checkouts",
            str(tmp_path),
            "--out",
            out,
            f"--requirement={requirement}",
        ]
        refused(capsys, argv, repr(requirement), "NAME==VERSION")
    assert a_file.read_text() == "mine" and not (tmp_path / "m").exists()
    assert not (tmp_path / "out.jsonl").exists()
