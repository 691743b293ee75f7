"""The board says what it can and cannot tell: its resolution at its own rates and at 50%,
the oracle flag on what copying the oracle looks like, and duplicates of an earlier entry's
episodes left unranked.

Each figure ``docs/leaderboard.md`` quotes for these is recomputed here, so the page cannot
drift from the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym.eval import Benchmark, BenchmarkEnv, evaluate, load_benchmark
from agentgym.leaderboard.bundle import pack_bundle, read_bundle
from agentgym.leaderboard.ranking import resolution_floor
from agentgym.leaderboard.rescore import rescore
from agentgym.leaderboard.results import ScoredEpisode
from agentgym.leaderboard.submission import SubmissionInfo

DOCS = Path(__file__).parents[2] / "docs" / "leaderboard.md"
MIXED = Benchmark(
    "honesty-mixed",
    (
        BenchmarkEnv("games/TowerOfHanoi-v0", difficulty="easy", tasks=2, max_steps=10),
        BenchmarkEnv("reasoning-gym/chain_sum-v1", difficulty="easy", tasks=10),
    ),
)
"""Two multi-step tasks beside ten one-reply ones: the quickstart's mix in small (there the
oracle's run has 18 of 98 passed episodes that can show a copy)."""


@pytest.fixture(scope="module")
def mixed_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real runs of :data:`MIXED` by the oracle and by the random agent (12 episodes each)."""
    folder = tmp_path_factory.mktemp("mixed")
    return {agent: evaluate(MIXED, agent, folder / agent).run_dir for agent in ("oracle", "random")}


def rescored(run: Path, folder: Path, agent: str = "x"):
    data = pack_bundle(run, SubmissionInfo(agent=agent), folder / f"{agent}.tar.gz").read_bytes()
    return rescore(read_bundle(data), MIXED, workers=2)


def plan_of(benchmark) -> list[ScoredEpisode]:
    """A benchmark's plan as episodes (their outcomes are not used by the floor)."""
    return [
        ScoredEpisode(p.episode_id, p.env_id, p.task_id, p.repeat, p.seed, "missing")
        for p in benchmark.plan()
    ]


# --- the resolution line ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rate", "quoted"),
    [
        ("quickstart", 0.5, "15.9 points at 50%"),
        ("quickstart", 0.07, "8.1 points at 7%"),
        ("quickstart", 0.0, "1.5 points at 0%"),
    ],
)
def test_the_docs_resolution_figures_are_what_the_floor_computes(name, rate, quoted):
    floor = resolution_floor(plan_of(load_benchmark(name)), rate)
    assert quoted.startswith(f"{100 * floor:.1f} points")
    assert quoted in DOCS.read_text()


def test_the_tiny_boards_floor_at_half_is_the_pictures(tiny):
    floor = resolution_floor(plan_of(tiny), 0.5)
    assert f"{100 * floor:.1f} points at 50%" in DOCS.read_text()


# --- the oracle flag -------------------------------------------------------------------------


def test_the_oracles_own_run_is_flagged_among_the_episodes_that_can_show_a_copy(
    mixed_runs, tmp_path
):
    # Passed one-reply episodes cannot show a copy (one right answer is every solver's), so
    # they are left out of the share: counted in, 10 of them hid the oracle's 2 copied
    # solutions (2 of 12 passed, under the 20% threshold: no flag).
    result = rescored(mixed_runs["oracle"], tmp_path, "oracle")
    passed = [e for e in result.episodes if e.passed]
    assert len(passed) == 12
    assert [e.oracle_like for e in passed] == [e.steps >= 2 for e in passed]
    assert sum(e.oracle_like for e in passed) == 2
    assert "2 of 2 passed episodes of two or more steps take exactly the oracle's actions" in (
        result.flags
    )


def test_a_run_that_copies_nothing_is_not_flagged(mixed_runs, tmp_path):
    result = rescored(mixed_runs["random"], tmp_path, "random")
    assert not any(e.oracle_like for e in result.episodes)
    assert not any("oracle" in flag for flag in result.flags)
