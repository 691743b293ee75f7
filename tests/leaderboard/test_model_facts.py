"""What a board shows beside its numbers, without a browser: the model's facts a submitter
gives (validated, stored, migrated onto entries from before them), the cost they price, the
episodes as files to download, and the board's JSON with its families, dates and costs.

The pages themselves are checked in Chromium in ``test_pages.py``."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from alembic import command
from sqlalchemy import text

from agentgym.cli import main
from agentgym.errors import UsageError
from agentgym.leaderboard.downloads import COLUMNS, episodes_csv, episodes_json
from agentgym.leaderboard.pages import Site, family_of
from agentgym.leaderboard.results import Rescore, ScoredEpisode
from agentgym.leaderboard.server import create_app
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.store.database import alembic_config
from agentgym.leaderboard.submission import SubmissionInfo, format_parameters, parse_parameters

FACTS = {
    "organisation": "HuggingFace",
    "open_weights": True,
    "parameters": 135_000_000,
    "link": "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct",
    "price_prompt": 0.1,
    "price_completion": 0.4,
}


def episode(env: str, task: int, passed: bool, outcome: str = "ok") -> ScoredEpisode:
    return ScoredEpisode(
        episode_id=f"{env}|test/{task}|0", env_id=env, task_id=f"test/{task}", repeat=0,
        seed=task, outcome=outcome, passed=passed, score=float(passed), claimed_score=1.0,
        steps=2, prompt_tokens=1_000, completion_tokens=250,
    )  # fmt: skip


# -- the facts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "count", "shown"),
    [("135M", 135_000_000, "135M"), ("7B", 7_000_000_000, "7B"), ("1.5t", 1_500_000_000_000,
     "1.5T"), ("70000", 70_000, "70K"), ("8.03B", 8_030_000_000, "8.03B")],
)  # fmt: skip
def test_a_parameter_count_is_read_as_people_write_it(text, count, shown):
    assert parse_parameters(text) == count
    assert format_parameters(count) == shown


@pytest.mark.parametrize(
    ("facts", "named"),
    [
        ({"link": "javascript:alert(1)"}, "link 'javascript:alert(1)' is not an http(s)://"),
        ({"parameters": "7B"}, "parameters must be a whole number, got '7B'"),
        ({"parameters": 0}, "parameters 0 is not a model's size"),
        ({"open_weights": "yes"}, "open_weights must be true or false, got 'yes'"),
        ({"price_prompt": -1.0}, "price_prompt -1.0 is not a price per million tokens"),
        ({"price_completion": True}, "price_completion must be a number, got True"),
        ({"organisation": "x" * 201}, "organisation is 201 characters long"),
    ],
)
def test_a_bad_fact_is_refused_naming_its_value(facts, named):
    with pytest.raises(UsageError, match=re.escape(named)):
        SubmissionInfo(agent="a", **facts)
    with pytest.raises(UsageError, match=re.escape("'seven' is not a parameter count")):
        parse_parameters("seven")


def test_the_facts_travel_through_submission_json_and_price_a_cost():
    info = SubmissionInfo(agent="smol", **FACTS)
    assert SubmissionInfo.from_dict(json.loads(json.dumps(info.to_dict()))) == info
    assert info.cost(1_000, 250) == pytest.approx((1_000 * 0.1 + 250 * 0.4) / 1e6)
    assert SubmissionInfo(agent="smol", price_prompt=0.1).cost(1_000, 250) is None
    old = {"agent": "smol", "model": "m"}  # a submission.json from before the facts
    assert SubmissionInfo.from_dict(old).open_weights is None


def test_an_entry_from_before_the_migration_has_no_facts(tmp_path):
    """Upgraded from revision 0001 with a submission in it: it reads back with empty facts."""
    store = Store(tmp_path / "old.db")
    with store.engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
        connection.execute(
            text("INSERT INTO benchmarks VALUES (1, 'b', 1, :h, '{}', '2026-01-01 00:00:00');"),
            {"h": "a" * 64},
        )
        connection.execute(
            text("INSERT INTO blobs VALUES (:h, 1, '2026-01-01 00:00:00')"), {"h": "b" * 64}
        )
        connection.execute(
            text(
                "INSERT INTO submissions (id, benchmark_id, bundle_sha, agent, model, "
                "model_revision, method, code_hash, contact, notes, manifest, status, created_at) "
                "VALUES ('old', 1, :h, 'old-agent', 'm', '', 'standard', '', '', '', '{}', "
                "'received', '2026-01-01 00:00:00')"
            ),
            {"h": "b" * 64},
        )
    store.migrate()
    info = store.submission("old").info
    assert (info.organisation, info.open_weights, info.parameters, info.link) == (
        "",
        None,
        None,
        "",
    )
    assert (info.price_prompt, info.price_completion) == (None, None)
    store.close()


# -- the board's data --------------------------------------------------------------------------


@pytest.fixture
def mixed_site(tmp_path):
    """Two entries on a board of two families, one with the facts and prices, one without."""
    store = Store(tmp_path / "board.db")
    store.migrate()
    spec = {"envs": [{"id": "games/Maze-v0"}, {"id": "reasoning/Math-v0"}]}
    bench = store.add_benchmark("two", 1, "c" * 64, spec)
    plans = {
        "priced": (SubmissionInfo(agent="priced", **FACTS), [True, True, False, False]),
        "plain": (SubmissionInfo(agent="plain"), [False, False, True, True]),
    }
    ids = {}
    for name, (info, passes) in plans.items():
        sub, _ = store.add_submission(bench, store.put_blob(name.encode()), info, {}, None)
        envs = ["games/Maze-v0"] * 2 + ["reasoning/Math-v0"] * 2
        episodes = [
            episode(env, i % 2, p) for i, (env, p) in enumerate(zip(envs, passes, strict=True))
        ]
        store.add_rescore(sub.id, Rescore("two", 1, "c" * 64, "re-scored", episodes, "v"))
        store.set_status(sub.id, "scored")
        ids[name] = sub.id
    yield Site(store), ids
    store.close()


def test_the_board_json_has_families_dates_costs_and_the_headline(mixed_site):
    site, ids = mixed_site
    data = site.board("two").to_dict()
    assert data["families"] == ["games", "reasoning"] and data["family"] is None
    assert "mean of env means" in data["headline"]
    rows = {row["id"]: row for row in data["rows"]}
    priced, plain = rows[ids["priced"]], rows[ids["plain"]]
    assert priced["families"]["games"]["estimate"] == 1.0
    assert priced["families"]["reasoning"]["estimate"] == 0.0
    assert plain["families"]["reasoning"]["estimate"] == 1.0
    assert priced["cost_per_episode"] == pytest.approx((1_000 * 0.1 + 250 * 0.4) / 1e6)
    assert plain["cost_per_episode"] is None
    assert priced["submission"]["parameters"] == 135_000_000
    assert priced["submission"]["rescored_at"] >= priced["submission"]["created_at"]
    assert "contact" not in priced["submission"]

    tab = site.board("two", family="reasoning")
    assert [row.id for row in tab.board.rows] == [ids["plain"], ids["priced"]]
    assert tab.board.rows[0].success.estimate == 1.0
    assert list(tab.family_columns) == ["games"]
    with pytest.raises(
        Exception, match="no family 'swe'; its families: \\['games', 'reasoning'\\]"
    ):
        site.board("two", family="swe")
    assert family_of("games/Maze-v0") == "games" and family_of("local") == "local"


def test_the_board_api_answers_a_family_tab(mixed_site):
    from fastapi.testclient import TestClient

    site, ids = mixed_site
    with TestClient(create_app(site.store, replay=False)) as client:
        answer = client.get("/api/v1/benchmarks/two/board", params={"family": "reasoning"})
        assert answer.status_code == 200
        assert answer.json()["family"] == "reasoning"
        assert [row["id"] for row in answer.json()["rows"]] == [ids["plain"], ids["priced"]]
        assert client.get("/api/v1/benchmarks/two/board?family=swe").status_code == 404
        csv_file = client.get(f"/s/{ids['priced']}/episodes.csv")
        assert csv_file.status_code == 200 and len(csv_file.text.splitlines()) == 1 + 4


def test_the_episode_files_count_as_the_board_does(mixed_site):
    site, ids = mixed_site
    episodes = [
        episode("games/Maze-v0", 0, True),
        episode("games/Maze-v0", 1, True, outcome="mismatch"),  # passed as recorded: not counted
    ]
    rows = list(csv.DictReader(io.StringIO(episodes_csv(episodes, checked=True))))
    assert tuple(rows[0]) == COLUMNS
    assert [(r["outcome"], r["passed"], r["score"]) for r in rows] == [
        ("ok", "true", "1.0"), ("mismatch", "false", "0.0")
    ]  # fmt: skip
    unchecked = json.loads(episodes_json("s", episodes, checked=False))
    assert unchecked["checked"] is False
    assert {(e["outcome"], e["passed"], e["score"]) for e in unchecked["episodes"]} == {
        ("not checked", None, None)
    }  # fmt: skip

    entry = site.entry(ids["priced"])
    served = json.loads(episodes_json(ids["priced"], entry.episodes, checked=True))
    assert [e["passed"] for e in served["episodes"]] == [True, True, False, False]
    assert served["episodes"][0]["prompt_tokens"] == 1_000


def test_submit_sends_the_model_facts_and_refuses_a_bad_one(
    tiny, tiny_runs, tmp_path, serve, capsys
):
    store = Store(tmp_path / "board.db")
    store.migrate()
    store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
    token = store.create_token("facts", ["submit"])
    live = serve(create_app(store))
    argv = ["submit", str(tiny_runs["random"]), "--to", live.url, "--token", token,
            "--agent-name", "random", "--organisation", "HuggingFace", "--open-weights", "yes",
            "--parameters", "135M", "--link", FACTS["link"], "--price-prompt", "0.1",
            "--price-completion", "0.4"]  # fmt: skip
    assert main(argv) == 0
    (stored,) = store.submissions()
    assert {key: getattr(stored.info, key) for key in FACTS} == FACTS

    assert main([*argv[:-6], "--parameters", "seven"]) == 2
    assert "--parameters 'seven' is not a parameter count" in capsys.readouterr().err
    assert main([*argv[:-4], "--link", "ftp://x", "--agent-name", "other"]) == 2
    assert "link 'ftp://x' is not an http(s):// address" in capsys.readouterr().err
    assert len(store.submissions()) == 1
    store.close()
