"""The board says what it can and cannot tell: its resolution at its own rates and at 50%,
the oracle flag on what copying the oracle looks like, and duplicates of an earlier entry's
episodes left unranked.

Each figure ``docs/leaderboard.md`` quotes for these is recomputed here, so the page cannot
drift from the code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentgym.eval import Benchmark, BenchmarkEnv, evaluate, load_benchmark
from agentgym.leaderboard.bundle import BundleLimits, pack_bundle, read_bundle
from agentgym.leaderboard.checker import Checker
from agentgym.leaderboard.duplicates import fingerprint
from agentgym.leaderboard.pages import Links, Site
from agentgym.leaderboard.ranking import resolution_floor
from agentgym.leaderboard.rescore import rescore
from agentgym.leaderboard.results import ScoredEpisode
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import SubmissionInfo
from agentgym.ledger import read_episodes

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


# --- duplicates ------------------------------------------------------------------------------


def test_a_fingerprint_is_the_actions_and_words_not_the_timings(tiny_runs, tmp_path):
    records = list(read_episodes(tiny_runs["oracle"] / "episodes.jsonl"))
    again = list(read_episodes(tiny_runs["oracle"] / "episodes.jsonl"))
    for record in again:
        for step in record.steps:
            step.env_seconds, step.agent_seconds = 9.0, 9.0
    assert fingerprint(reversed(again)) == fingerprint(records)  # order and timings aside
    again[0].steps[0].info["agent_text"] = "I think it is this one."
    assert fingerprint(again) != fingerprint(records)
    assert fingerprint(read_episodes(tiny_runs["random"] / "episodes.jsonl")) != fingerprint(
        records
    )


@pytest.fixture
def duplicated(tmp_path, tiny, tiny_runs):
    """A board where the oracle's run was sent, then the same run under another name (its
    timings edited, as a copy might be), then the random agent's: each checked."""
    copy = tmp_path / "copy"
    shutil.copytree(tiny_runs["oracle"], copy)
    lines = [json.loads(line) for line in (copy / "episodes.jsonl").read_text().splitlines()]
    for line in lines:
        line["steps"][0]["env_seconds"] = 1.5
    (copy / "episodes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    sent = [
        ("oracle", tiny_runs["oracle"]),
        ("oracle-again", copy),
        ("random", tiny_runs["random"]),
    ]
    with Store(tmp_path / "leaderboard.db") as store:
        store.migrate()
        record = store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
        checker = Checker(store, limits=BundleLimits())
        ids = {}
        for agent, run in sent:
            data = pack_bundle(run, SubmissionInfo(agent=agent), tmp_path / f"{agent}.tgz")
            bundle = read_bundle(data.read_bytes())
            sha = store.put_blob(data.read_bytes())
            found, _ = store.add_submission(record, sha, bundle.info, bundle.manifest, None)
            checker.submit(found.id)
            assert checker.wait(60)
            ids[agent] = found.id
        yield store, checker, ids
        checker.close()


def test_the_later_of_two_identical_episode_sets_is_a_duplicate_and_unranked(duplicated, tiny):
    store, checker, ids = duplicated
    latest = {agent: store.latest_rescore(sid) for agent, sid in ids.items()}
    assert latest["oracle-again"].duplicate_of == ids["oracle"]
    assert latest["oracle"].duplicate_of is None and latest["random"].duplicate_of is None
    checker.submit(ids["oracle-again"], again=True)  # every check of it says so again
    assert checker.wait(60)
    assert store.latest_rescore(ids["oracle-again"]).duplicate_of == ids["oracle"]
    assert len(store.rescore_history(ids["oracle-again"])) == 2

    site = Site(store)
    view = site.board(tiny.name)
    assert [row.id for row in view.board.rows] == [ids["oracle"], ids["random"]]
    assert [(sub.id, of) for sub, of in view.duplicates] == [(ids["oracle-again"], ids["oracle"])]
    listed = view.to_dict()["duplicates"]
    assert [(d["agent"], d["duplicate_of"]) for d in listed] == [("oracle-again", ids["oracle"])]
    board_page = site.render("board.html", Links(), view=view)
    assert f'data-duplicate-of="{ids["oracle"]}"' in board_page
    entry = site.render(
        "entry.html", Links(), view=site.entry(ids["oracle-again"]), check_error=None
    )
    assert 'id="duplicate"' in entry and f'href="/s/{ids["oracle"]}"' in entry
