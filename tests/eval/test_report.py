"""agentgym report's HTML page, from real runs (one with errored episodes)."""

import re
from pathlib import Path

import pytest

from agentgym.cli import main

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")


def test_the_html_report_has_every_section_and_counts_errors(tmp_path, capsys):
    hanoi = ["--env", "games/TowerOfHanoi-v0", "--tasks", "3", "--difficulty", "easy"]
    for agent in ("oracle", "random"):
        assert main(["eval", *hanoi, "--agent", agent, "--out", str(tmp_path / agent)]) == 0
    broken = ["--env", "evaltest/RaiseOnStep-v0", "--tasks", "2", "--retries", "0"]
    assert main(["eval", *broken, "--agent", "oracle", "--out", str(tmp_path / "broken")]) == 0
    runs = [str(tmp_path / name) for name in ("oracle", "random", "broken")]
    assert main(["report", *runs, "--html", str(tmp_path / "report.html")]) == 0
    output = capsys.readouterr()
    assert f"report: {tmp_path / 'report.html'}" in output.out
    assert "different benchmarks" in output.err
    page = (tmp_path / "report.html").read_text()
    titles = re.findall(r"<h2[^>]*>([^<]*)</h2>", page)
    assert [title.split(" ")[0] for title in titles] == [
        "Runs", "Headline", "Comparison", "Results", "Success", "Per", "Costs", "Time",
        "Transcripts", "Errored",
    ]  # fmt: skip
    assert len(re.findall(r'src="data:image/png;base64,', page)) == 3  # success, costs, time
    grid = page[page.index('id="per"') : page.index('id="costs"')]
    assert len(set(re.findall(r"test/easy/\d+", grid))) == 3  # every scored task has a row
    errors = page[page.index('id="errored"') :]
    assert errors.count("simulated env crash") == 2 and "RuntimeError" in errors
    transcripts = page[page.index('id="transcripts"') : page.index('id="errored"')]
    assert transcripts.count('<details class="episode">') == 4  # 2 tasks x 2 runs; broken: none
    assert "move " in transcripts and "step 1 · reward" in transcripts
    assert '<div class="table">' in page and "overflow-x: auto" in page
    assert "white-space: nowrap" in page
    assert "No token counts recorded" in page  # and no tokens plot: 3 images above
    comparison = page[page.index('id="comparison"') : page.index('id="results"')]
    assert comparison.count('<div class="pair">') == 3  # every pair of the three runs
    assert comparison.count("are not paired: they ran different benchmarks") == 2  # broken's
    assert "oracle (oracle) and random are not separable" in comparison
    warned = page[: page.index('id="runs"')]
    assert "different benchmarks" in warned  # the broken run's benchmark is another one


def test_runs_of_one_benchmark_get_no_warning(tmp_path, capsys):
    hanoi = ["--env", "games/TowerOfHanoi-v0", "--tasks", "1", "--difficulty", "easy"]
    for agent in ("oracle", "random"):
        assert main(["eval", *hanoi, "--agent", agent, "--out", str(tmp_path / agent)]) == 0
    capsys.readouterr()
    runs = [str(tmp_path / "oracle"), str(tmp_path / "random")]
    assert main(["report", *runs, "--html", str(tmp_path / "r.html")]) == 0
    assert main(["compare", *runs]) == 0
    assert "warning" not in capsys.readouterr().err
    assert "different benchmarks" not in (tmp_path / "r.html").read_text()


def test_report_defaults_to_the_run_directory_and_can_skip_html(tmp_path, capsys):
    args = ["eval", "--env", "games/Maze-v0", "--tasks", "2", "--agent", "random"]
    assert main([*args, "--out", str(tmp_path / "run")]) == 0
    assert main(["report", str(tmp_path / "run"), "--no-html"]) == 0
    assert not (tmp_path / "run" / "report.html").exists()
    assert main(["report", str(tmp_path / "run")]) == 0
    assert (tmp_path / "run" / "report.html").stat().st_size > 10_000


def test_agent_options_reach_the_agent_and_the_manifest(tmp_path, capsys):
    import json

    args = ["eval", "--env", "games/Maze-v0", "--tasks", "1", "--out", str(tmp_path / "run")]
    url = "openai:m@http://127.0.0.1:9/v1"
    options = ["--agent-option", "max_retries=0", "--agent-option", "backoff=0.01"]
    assert main([*args, "--agent", url, *options, "--retries", "0"]) == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["agent_options"] == {"max_retries": 0, "backoff": 0.01}
    assert manifest["agent_prompt"]["answer_extraction"] == "strict"  # the default, recorded
    assert "errored" in capsys.readouterr().out
    assert main([*args[:-2], "--agent", "random", "--agent-option", "oops"]) == 2
    assert "not KEY=VALUE" in capsys.readouterr().err


def test_report_episode_prints_one_transcript_in_the_terminal(tmp_path, capsys):
    args = ["eval", "--env", "games/TowerOfHanoi-v0", "--tasks", "2", "--difficulty", "easy"]
    assert main([*args, "--agent", "oracle", "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    run = str(tmp_path / "run")
    assert main(["report", run, "--episode", "test/easy/1"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("### oracle: games/TowerOfHanoi-v0|test/easy/1|0")
    assert "== instructions\n  Tower of Hanoi" in shown and "== step 1 (reward 0)" in shown
    assert "-- action\n  move " in shown and "== outcome: passed, score 1 (ok)" in shown
    assert "success" not in shown and not (tmp_path / "run" / "report.html").exists()
    assert main(["report", run, "--episode", "games/TowerOfHanoi-v0|test/easy/0|0"]) == 0
    assert "test/easy/0|0" in capsys.readouterr().out
    assert main(["report", run, "--episode", "test/easy/9"]) == 2
    assert "no such episode or task; its episode ids look like" in capsys.readouterr().err


def records(agent: str, passed: list[bool], errored: int = 0, env: str = "games/Maze-v0"):
    """Episode records of one task each, passed as listed, the first ``errored`` errored."""
    from agentgym.core import Verdict
    from agentgym.ledger import EpisodeRecord, EpisodeSpec

    made = []
    for n, ok in enumerate(passed):
        spec = EpisodeSpec(env, f"test/easy/{n}", seed=n, agent=agent)
        made.append(
            EpisodeRecord(
                spec, "start", verdict=Verdict(score=float(ok), passed=ok),
                status="errored" if n < errored else "ok", episode_id=f"{env}|test/easy/{n}|0",
            )
        )  # fmt: skip
    return made


def test_a_pair_that_scored_different_episodes_says_so(tmp_path):
    from agentgym.eval.report import Run, write_html

    manifest = {"benchmark_hash": "ab" * 32, "agent": "x"}
    runs = [
        Run(tmp_path / "a", "a", manifest, records("a", [False] * 12)),
        Run(tmp_path / "b", "b", manifest, records("b", [True] * 12, errored=2)),
    ]
    page = write_html(runs, tmp_path / "r.html").read_text()
    comparison = page[page.index('id="comparison"') : page.index('id="results"')]
    assert "b beats a by 100.0 points [100.0, 100.0] of success (10 paired episodes)" in comparison
    note = "Different episode sets: compared on the 10 episodes both scored; 2 scored only by a"
    assert f"{note}, 0 only by b." in comparison
    assert "+100.0 points [+100.0, +100.0]" in comparison  # the table, in the terminal's units


def test_the_all_row_is_the_mean_of_env_means_pass_k_included():
    from agentgym.eval.report import ALL, Run, results_frame

    two_envs = records("a", [True] * 2) + records("a", [False] * 6, env="games/Wordle-v0")
    frame = results_frame([Run(Path("a"), "a", {}, two_envs)]).set_index("env")
    assert frame.loc[ALL, "success"] == frame.loc[ALL, "pass@1"] == frame.loc[ALL, "pass^1"] == 0.5
    assert frame.loc["games/Wordle-v0", "pass@1"] == 0.0  # pooled, it would be 0.25
