"""``agentgym eval`` refuses bad input with one line and exit status 2, and leaves no run
directory behind that it did not fill; each case here once ended in a traceback or a run that
did nothing and exited 0."""

from __future__ import annotations

import json

import pytest
from cli_refusal import refused

from agentgym.cli import main
from agentgym.errors import UsageError
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark, BenchmarkEnv

MAZE = ["eval", "--env", "games/Maze-v0", "--tasks", "1", "--agent", "random"]


def test_a_malformed_benchmark_file_names_the_file_and_line(tmp_path, capsys):
    path = tmp_path / "suite.yaml"
    path.write_text("name: x\nenvs: [\n")
    refused(capsys, ["eval", "--benchmark", str(path), "--agent", "random"], str(path), "line")
    path.write_text("name: x\nenvs:\n  - {id: games/Maze-v0, tasks: 0}\n")
    refused(capsys, ["eval", "--benchmark", str(path), "--agent", "random"], "tasks")
    path.write_text("name: x\nsampling: {temprature: 0}\nenvs:\n  - {id: games/Maze-v0}\n")
    refused(capsys, ["eval", "--benchmark", str(path), "--agent", "random"], "temprature")


def test_an_output_path_that_cannot_be_a_run_directory(tmp_path, capsys):
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    refused(capsys, [*MAZE, "--out", str(a_file)], "is a file")
    refused(capsys, [*MAZE, "--out", str(a_file / "under")], "cannot create")
    refused(capsys, [*MAZE, "--out", "/proc/agentgym-run"], "cannot create")
    refused(capsys, [*MAZE, "--out", ""], "--out is empty")  # once a run under runs/
    assert a_file.read_text() == "mine"


def test_nonsense_counts_and_limits_are_refused_before_anything_runs(tmp_path, capsys):
    out = tmp_path / "run"
    refused(capsys, [*MAZE[:3], "--tasks=-1", *MAZE[5:], "--out", str(out)], "tasks", "-1")
    refused(capsys, [*MAZE, "--step-timeout", "-5", "--out", str(out)], "step_timeout")
    refused(capsys, [*MAZE, "--episode-timeout", "0", "--out", str(out)], "episode_timeout")
    refused(capsys, [*MAZE, "--retries", "-1", "--out", str(out)], "retries")
    refused(capsys, [*MAZE, "--num-envs", "0", "--out", str(out)], "num_envs")
    assert not out.exists()


def test_resume_needs_a_run_to_resume(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    refused(capsys, [*MAZE, "--resume", "--out", str(empty)], "nothing to resume")
    refused(capsys, [*MAZE, "--resume", "--out", str(tmp_path / "absent")], "nothing to resume")
    assert list(empty.iterdir()) == [] and not (tmp_path / "absent").exists()


def test_a_corrupted_manifest_is_named(tmp_path, capsys):
    run = tmp_path / "run"
    assert main([*MAZE, "--out", str(run)]) == 0
    capsys.readouterr()
    (run / "manifest.json").write_text("{cut sho")
    refused(capsys, [*MAZE, "--resume", "--out", str(run)], "manifest.json", "not JSON")
    refused(capsys, ["report", str(run), "--no-html"], "manifest.json")
    (run / "manifest.json").write_text("[1, 2]")
    refused(capsys, ["report", str(run), "--no-html"], "not a run's manifest")


def test_sampling_is_a_benchmark_setting_with_a_flag_for_one_env_runs(tmp_path, capsys):
    endpoint = "openai:m@http://127.0.0.1:9/v1"
    err = refused(
        capsys,
        [*MAZE[:-1], endpoint, "--agent-option", "max_tokens=16", "--out", str(tmp_path / "a")],
        "max_tokens",
        "--sampling max_tokens=VALUE",
    )
    assert "unexpected keyword" not in err
    out = tmp_path / "b"
    argv = [*MAZE, "--sampling", "temperature=0", "--sampling", "max_tokens=16", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["benchmark"]["sampling"] == {"temperature": 0, "max_tokens": 16}
    refused(capsys, [*MAZE, "--sampling", "temp=0", "--out", str(tmp_path / "c")], "temp")
    refused(
        capsys,
        ["eval", "--benchmark", "quickstart", "--agent", "random", "--sampling", "top_k=5"],
        "--sampling goes with --env",
    )


def refusing_agent(observation, info):
    """An agent that cannot work with the env: a UsageError stops the run (the caller's bug)."""
    raise UsageError("this agent cannot play mazes")


def test_a_run_that_fails_before_its_first_episode_leaves_nothing_behind(tmp_path):
    maze = Benchmark("maze", (BenchmarkEnv("games/Maze-v0", tasks=1),))
    with pytest.raises(UsageError, match="cannot play mazes"):
        evaluate(maze, refusing_agent, tmp_path / "new")
    assert not (tmp_path / "new").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError):
        evaluate(maze, refusing_agent, tmp_path / "mine")
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]


def test_an_unknown_agent_option_lists_the_options_there_are(tmp_path, capsys):
    argv = [*MAZE[:-1], "hf:/nowhere", "--agent-option", "maxtokens=3"]
    refused(capsys, [*argv, "--out", str(tmp_path / "r")], "no option 'maxtokens'", "device")


# --------------------------------------------------------------------------- issue 27


def test_seed_with_a_benchmark_replaces_its_seed_and_the_manifest_records_it(tmp_path, capsys):
    """``--seed 1`` with a benchmark once ran the file's seed 0 and said nothing."""
    from agentgym.eval.plan import episode_seed

    suite = tmp_path / "suite.yaml"
    suite.write_text("name: s\nseed: 0\nenvs:\n  - {id: games/Maze-v0, tasks: 1}\n")
    out = tmp_path / "run"
    argv = ["eval", "--benchmark", str(suite), "--agent", "random", "--seed", "7"]
    assert main([*argv, "--out", str(out)]) == 0
    capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["benchmark"]["seed"] == 7
    record = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert record["spec"]["seed"] == episode_seed(7, "games/Maze-v0", record["spec"]["task_id"], 0)


@pytest.mark.parametrize(
    "option",
    [
        ["--tasks", "3"],
        ["--split", "dev"],
        ["--difficulty", "easy"],
        ["--episodes-per-task", "2"],
        ["--max-steps", "5"],
        ["--env-kwargs", "{}"],
    ],
)
def test_one_env_options_with_a_benchmark_are_refused_not_ignored(tmp_path, capsys, option):
    argv = ["eval", "--benchmark", "quickstart", "--agent", "random", *option]
    refused(capsys, [*argv, "--out", str(tmp_path / "r")], option[0], "goes with --env")
    assert not (tmp_path / "r").exists()


def test_user_options_without_a_user_are_refused(tmp_path, capsys):
    refused(capsys, [*MAZE, "--user-option", "x=1", "--out", str(tmp_path / "r")], "--user")
    assert not (tmp_path / "r").exists()


def test_more_tasks_than_the_env_has_are_refused_with_the_count(tmp_path, capsys):
    out = str(tmp_path / "r")
    argv = [*MAZE[:4], "99999999999", *MAZE[5:], "--out", out]
    refused(capsys, argv, "99999999999", "3000 test tasks", "--tasks 3000 or fewer")
    argv = [*MAZE[:4], "1001", *MAZE[5:], "--difficulty", "easy", "--out", out]
    refused(capsys, argv, "1001", "1000 test tasks of difficulty 'easy'")
    assert not (tmp_path / "r").exists()


def test_a_plan_too_large_to_hold_is_refused_before_it_is_built(tmp_path, capsys):
    argv = [*MAZE, "--episodes-per-task", "99999999999", "--out", str(tmp_path / "r")]
    refused(capsys, argv, "99,999,999,999 episodes", "1,000,000")


def test_a_malformed_option_names_its_own_flag(tmp_path, capsys):
    out = ["--out", str(tmp_path / "r")]
    refused(capsys, [*MAZE, "--sampling", "temperature", *out], "--sampling 'temperature'")
    refused(capsys, [*MAZE, "--user", "random", "--user-option", "x", *out], "--user-option 'x'")


def test_a_directory_or_an_unreadable_file_as_a_benchmark_is_named(tmp_path, capsys):
    (tmp_path / "suite.yaml").mkdir()
    for path in (tmp_path / "suite.yaml", tmp_path):
        refused(capsys, ["eval", "--benchmark", str(path), "--agent", "random"], "a directory")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe name: x")
    refused(capsys, ["eval", "--benchmark", str(binary), "--agent", "random"], str(binary))


@pytest.fixture(scope="module")
def a_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("runs") / "run"
    assert main([*MAZE, "--out", str(run)]) == 0
    return run


def test_report_names_a_run_it_cannot_read_and_a_report_it_cannot_write(a_run, tmp_path, capsys):
    capsys.readouterr()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_bytes((a_run / "manifest.json").read_bytes())
    (broken / "episodes.jsonl").write_bytes(b"\xff\xfe\n")
    refused(capsys, ["report", str(broken), "--no-html"], str(broken), "not UTF-8")
    refused(capsys, ["compare", str(a_run), str(broken)], str(broken), "not UTF-8")
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    for html, words in [
        (tmp_path, ("is a directory",)),
        (a_file / "report.html", ("lies under", str(a_file))),
        ("/proc/agentgym-report.html", ("cannot write the report",)),
    ]:
        refused(capsys, ["report", str(a_run), "--html", str(html)], *words)
    assert a_file.read_text() == "mine"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["check", "games/Maze-v0", "--tasks-per-split", "0"], ("--tasks-per-split", "0")),
        (["check", "games/Maze-v0", "--tasks-per-split", "-1"], ("--tasks-per-split", "-1")),
        (["check", "games/Maze-v0", "--leak-cycles", "-1"], ("--leak-cycles", "-1")),
        (["check", "games/Maze-v0", "--seed", "-1"], ("--seed", "-1")),
        (["check", "games/Maze-v0", "--skip", "oracel"], ("'oracel'", "oracle")),
        (["check", "--family", "gamse"], ("'gamse'", "games")),
        (["list", "--family", "gamse"], ("'gamse'", "games")),
        (["info", "games/Nope-v0"], ("games/Nope-v0",)),
    ],
)
def test_check_list_and_info_refuse_values_they_cannot_honour(capsys, argv, words):
    """Each of these once ended in a traceback (0 or negative counts, a negative seed), a
    failure per env (an unknown --skip), or an empty answer and exit 0 (an unknown family)."""
    refused(capsys, argv, *words)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("name: x\nseed: abc\n", ("seed must be an int", "'abc'")),
        ("name: [1]\n", ("name must be a str",)),
        ("name: x\nenvs:\n  - {id: games/Maze-v0, tasks: 1, kwargs: {bogus: 1}}\n", ("bogus",)),
    ],
)
def test_a_benchmark_file_with_values_of_the_wrong_kind_is_refused(tmp_path, capsys, text, words):
    """A string seed once ran (seeds derived from 'abc'), a list as a name too; an env
    keyword the env does not take was a TypeError traceback."""
    suite = tmp_path / "suite.yaml"
    envs = "" if "envs:" in text else "envs:\n  - {id: games/Maze-v0, tasks: 1}\n"
    suite.write_text(text + envs)
    argv = ["eval", "--benchmark", str(suite), "--agent", "random", "--out", str(tmp_path / "r")]
    refused(capsys, argv, *words)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([*MAZE[:4], "abc", *MAZE[5:]], ("--tasks", "'abc'")),
        ([*MAZE, "--num-envs", "1.5"], ("--num-envs", "'1.5'")),
        ([*MAZE, "--step-timeout", "soon"], ("--step-timeout", "'soon'")),
        (["eval", "--env", "games/Maze-v0"], ("--agent",)),
        (["eval", "--agent", "random"], ("--benchmark", "--env")),
        (["list", "--kind", "game"], ("'game'",)),
        (["check", "--leak-cycles", "many"], ("--leak-cycles", "'many'")),
        (["evaluate"], ("'evaluate'",)),
    ],
)
def test_a_malformed_command_line_is_one_line_not_the_usage_block(capsys, argv, words):
    """argparse printed its whole usage block (nine lines for eval) and raised SystemExit out
    of ``main``; now one line, which points at --help."""
    assert "--help" in refused(capsys, argv, *words)


def test_the_default_run_directory_stays_under_runs_whatever_the_names(tmp_path, monkeypatch):
    """A benchmark named ``../escaped`` once put its default run directory outside runs/."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    suite = work / "suite.yaml"
    suite.write_text("name: ../escaped\nenvs:\n  - {id: games/Maze-v0, tasks: 1}\n")
    assert main(["eval", "--benchmark", str(suite), "--agent", "random"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    (run,) = (work / "runs").iterdir()
    assert run.name.startswith("escaped-random-") and (run / "episodes.jsonl").is_file()


def test_env_kwargs_reach_every_episode_and_bad_ones_are_refused(tmp_path, capsys):
    """``--env-kwargs JSON`` (the form ``agentgym train`` takes) goes to the env of every
    episode and into the manifest; text that is not a JSON object, an argument the env does
    not take, and seating set twice are refused."""
    out = tmp_path / "run"
    kwargs = {"max_invalid_actions": 2}
    assert main([*MAZE, "--env-kwargs", json.dumps(kwargs), "--out", str(out)]) == 0
    capsys.readouterr()
    record = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert record["spec"]["env_kwargs"] == kwargs
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["benchmark"]["envs"][0]["kwargs"] == kwargs
    for text, message in (("max_invalid_actions=2", "not JSON"), ("[2]", "not a JSON object")):
        refused(capsys, [*MAZE, "--env-kwargs", text, "--out", str(tmp_path / "r")], message)
    refused(
        capsys,
        [*MAZE, "--env-kwargs", '{"max_invalid_action": 2}', "--out", str(tmp_path / "r")],
        "max_invalid_action",
    )
    seated = ["eval", "--env", "multiagent/TicTacToe-v0", "--agent", "random", "--tasks", "1"]
    refused(
        capsys,
        [*seated, "--opponent", "random", "--env-kwargs", '{"opponent": "random"}'],
        "--env-kwargs sets opponent",
    )
    assert not (tmp_path / "r").exists()
