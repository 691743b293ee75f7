"""The gui-v0 suite: the oracle scores the maximum on it, a random agent below it."""

import dataclasses

import pytest
from sampling import FULL, sample

pytest.importorskip("Xlib", reason="the desktop needs python-xlib (the gui extra)")

from agentgym.envs.gui.desktop import desktop_problem
from agentgym.eval import evaluate
from agentgym.eval.plan import load_benchmark

pytestmark = pytest.mark.skipif(
    desktop_problem() is not None, reason=f"no desktop here: {desktop_problem()}"
)


def suite_sample():
    """The whole suite under ``make check``; in the suite, the first task of one pixel web
    env (a desktop episode costs seconds: every desktop template's oracle and task-blind
    policies are played by the apps' own tests, on a sample in the suite)."""
    suite = load_benchmark("gui-v0")
    if FULL:
        return suite
    web = [e for e in suite.envs if e.id.startswith("gui/miniwob_")]
    return dataclasses.replace(
        suite, envs=[dataclasses.replace(e, tasks=1) for e in sample(web, 1)]
    )


def test_the_suite_mixes_desktop_and_pixel_web_envs_over_four_apps():
    ids = [e.id for e in load_benchmark("gui-v0").envs]
    desktop = {"gui/Mousepad-v0", "gui/Spreadsheet-v0", "gui/FileManager-v0", "gui/Terminal-v0"}
    assert desktop <= set(ids) and any(i.startswith("gui/web_") for i in ids)


@pytest.mark.sampled
def test_the_oracle_scores_max_on_gui_v0_and_random_below_it(tmp_path):
    benchmark = suite_sample()
    oracle = evaluate(benchmark, "oracle", tmp_path / "oracle", num_envs=2)
    overall = oracle.summary["overall"]
    assert len(oracle.records) == sum(e.tasks for e in benchmark.envs)
    assert overall["errored"] == 0, [r.error for r in oracle.records if r.error]
    assert overall["success"] == 1.0 and overall["reward"] == 1.0
    randomly = evaluate(benchmark, "random", tmp_path / "random", num_envs=2)
    assert randomly.summary["overall"]["errored"] == 0
    assert randomly.summary["overall"]["reward"] < overall["reward"]
