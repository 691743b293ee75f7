"""One headline for one run, wherever it is printed: ``agentgym report``'s table, the demo's
text, ``agentgym leaderboard verify`` and the board's ranking show the mean of env means with
the same interval, name the convention, and show the pooled rate only as a labelled second
number. And ``agentgym report`` with several runs says, for each pair, which is better.

The run is real and takes a tenth of a second: an agent that plays the oracle on half the
episodes (by seed) and random moves on the others, over 2 Hanoi and 4 Wordle tasks, so the
two envs' rates differ and so do their task counts: the mean of env means (62.5%) is not the
pooled rate (50.0%), and a printer that used the pooled figure fails here.
"""

from __future__ import annotations

import re

import pytest
from half_oracle import HalfOracle  # tests/: the oracle on even seeds, random on the others

from agentgym.cli import main
from agentgym.eval import Benchmark, evaluate, percent_interval, score_interval
from agentgym.eval.cli import ALL_ROW
from agentgym.eval.stats import HEADLINE

SUITE = {
    "name": "headline",
    "version": 1,
    "description": "Two envs of unequal size and rate: the headline is not the pooled rate.",
    "seed": 0,
    "envs": [
        {"id": "games/TowerOfHanoi-v0", "split": "test", "difficulty": "easy", "tasks": 2,
         "max_steps": 10},
        {"id": "games/Wordle-v0", "split": "test", "difficulty": "easy", "tasks": 4,
         "max_steps": 6},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return evaluate(Benchmark.from_dict(SUITE), HalfOracle, tmp_path_factory.mktemp("h") / "run")


def test_report_demo_verify_and_board_print_one_headline(run, capsys):
    from agentgym.demo import format_results
    from agentgym.leaderboard.bundle import read_bundle
    from agentgym.leaderboard.cli import _bundle_bytes, _interval
    from agentgym.leaderboard.ranking import board
    from agentgym.leaderboard.rescore import rescore

    overall = run.summary["overall"]
    headline = percent_interval(overall["success"], overall["success_ci"])
    pooled = percent_interval(overall["pooled_success"], overall["pooled_success_ci"])
    assert (headline, pooled) == ("62.5% [50.0, 87.5]", "50.0% [16.7, 83.3]")
    pooled_line = f"pooled over episodes (each weighs the same): success {pooled}"

    assert main(["report", str(run.run_dir), "--no-html"]) == 0
    report = capsys.readouterr().out
    demo = format_results([("half-oracle", run.summary)], {"half-oracle": run.records})
    for text in (report, demo):
        (all_row,) = [line for line in text.splitlines() if line.startswith(ALL_ROW)]
        assert re.split(r"\s{2,}", all_row)[2] == headline, text
        assert f"headline: {HEADLINE}" in text
        assert f"half-oracle: {pooled_line}" in text

    assert main(["leaderboard", "verify", str(run.run_dir)]) == 0
    verify = capsys.readouterr().out
    assert f"  success  {headline}\n" in verify
    assert f"headline: {HEADLINE}" in verify
    assert pooled_line in verify  # the same pooled figure, from the board's own episodes

    bundle = read_bundle(_bundle_bytes(run.run_dir, agent_name=None))
    episodes = rescore(bundle, Benchmark.from_dict(SUITE)).episodes
    (row,) = board({"half-oracle": episodes}).rows
    assert _interval(row.success, percent=True) == headline
    reward = score_interval(overall["reward"], overall["reward_ci"])
    assert _interval(row.score, percent=False) == reward


def test_report_of_several_runs_says_which_is_better_for_each_pair(run, tmp_path, capsys):
    oracle = evaluate(Benchmark.from_dict(SUITE), "oracle", tmp_path / "oracle").run_dir
    other = evaluate(
        Benchmark.from_dict({**SUITE, "name": "other", "envs": SUITE["envs"][:1]}),
        "random",
        tmp_path / "other",
    ).run_dir
    assert main(["report", str(run.run_dir), str(oracle), str(other), "--no-html"]) == 0
    pairs = capsys.readouterr().out.split("paired comparisons", 1)[1].splitlines()[1:4]
    assert pairs[0].startswith("  oracle beats half-oracle by 37.5 points [")
    assert pairs[0].endswith("of success (6 paired episodes)")
    for line, first in ((pairs[1], "half-oracle"), (pairs[2], "oracle")):
        assert line.startswith(f"  {first} and random are not paired: they ran different "), line
