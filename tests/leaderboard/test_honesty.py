"""The board says what it can and cannot tell: its resolution at its own rates and at 50%,
the oracle flag on what copying the oracle looks like, and duplicates of an earlier entry's
episodes left unranked.

Each figure ``docs/leaderboard.md`` quotes for these is recomputed here, so the page cannot
drift from the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym.eval import load_benchmark
from agentgym.leaderboard.ranking import resolution_floor
from agentgym.leaderboard.results import ScoredEpisode

DOCS = Path(__file__).parents[2] / "docs" / "leaderboard.md"


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
