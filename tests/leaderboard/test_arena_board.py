"""Arena boards: a submitted arena run is replayed and checked against the schedule its
manifest rebuilds (round-robin or Swiss) before it is stored. A tampered score or move, a
match left out, an edited seat or seed, an unknown or repeated id refuses the whole
submission with the match named, and nothing of it is kept. An errored match counts as lost
by its agent seats. The accepted matches of an env make its board (ratings with intervals
and tie groups, each player's matches and errored matches, a link to the matches), on both
databases. Every run here is a real arena run of tic-tac-toe."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

import agentgym
from agentgym.agents import Agent
from agentgym.arena import MatchRecord, rate
from agentgym.arena.run import Arena, read_matches, run_arena
from agentgym.errors import ModelError
from agentgym.eval.engine import EngineLimits
from agentgym.leaderboard.arena import (
    ArenaRejected,
    arena_payload,
    errored_scores,
    read_arena_payload,
)
from agentgym.leaderboard.export import export_site
from agentgym.leaderboard.server import create_app
from agentgym.multiagent import play_game

TICTACTOE = "multiagent/TicTacToe-v0"
PLAYERS = ("solver", "random", "first-legal", "last-legal")


class FirstLegal(Agent):
    """Plays the first legal move it is shown: a submitted agent, as the board sees it."""

    async def act(self, observation, info):
        return info["admissible_actions"][0]


class LastLegal(Agent):
    async def act(self, observation, info):
        return info["admissible_actions"][-1]


class DownAgainstSolver(FirstLegal):
    """Its model server fails whenever it faces the solver: those matches error."""

    async def act(self, observation, info):
        if "solver" in info["opponents"].values():
            raise ModelError("the model server went away")
        return await super().act(observation, info)


AGENTS = {"first-legal": FirstLegal, "last-legal": LastLegal}


def play(root: Path, name: str, players=PLAYERS, agents=AGENTS, **arena) -> Path:
    """A real arena run of tic-tac-toe, two games a table, into ``root/name``."""
    out = root / name
    limits = EngineLimits(retries=0)
    run_arena(Arena(TICTACTOE, players, 2, **arena), out, agents=agents, limits=limits)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("arena-runs")
    flaky = {"first-legal": DownAgainstSolver}
    return {
        "round-robin": play(root, "round-robin"),
        "swiss": play(root, "swiss", schedule="swiss"),
        "seed-1": play(root, "seed-1", seed=1),
        "errored": play(root, "errored", ("solver", "random", "first-legal"), flaky),
    }


def records_of(run_dir: Path) -> list[MatchRecord]:
    return read_matches(run_dir)[0]


def upload(run_dir: Path) -> dict:
    """The upload of a run directory, as a dict to edit."""
    return json.loads(arena_payload(run_dir))


def post(client: TestClient, data: dict | bytes, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    files = {"bundle": ("arena.json", body, "application/json")}
    return client.post("/api/v1/arena/submissions", files=files, headers=headers)


def lost_by(records: list[MatchRecord], player: str) -> MatchRecord:
    """A match ``player`` lost."""
    return next(
        r
        for r in records
        if player in r.players and min(r.scores.values()) == r.scores[_seat(r, player)] < 1
    )


def _seat(record: MatchRecord, player: str) -> str:
    return next(seat for seat, name in record.seats.items() if name == player)


@pytest.fixture
def arena(store):
    token = store.create_token("arena-submitter", ["submit"])
    with TestClient(create_app(store)) as client:
        yield client, token, store


def test_a_whole_run_is_replayed_stored_and_shown_on_its_envs_board(arena, runs):
    client, token, _ = arena
    records = records_of(runs["round-robin"])
    answer = post(client, upload(runs["round-robin"]), token)
    assert answer.status_code == 201, answer.text
    assert answer.json()["new"] and answer.json()["matches"] == len(records) == 12
    assert answer.json()["errored"] == 0
    again = post(client, upload(runs["round-robin"]), token)
    assert (again.status_code, again.json()["id"]) == (200, answer.json()["id"])

    board = client.get("/api/v1/arena/board", params={"env": TICTACTOE}).json()
    expected = rate(records).rows
    got = board["ratings"]["rows"]
    assert [(r["player"], r["matches"], r["rank"]) for r in got] == [
        (r.player, r.matches, r.rank) for r in expected
    ]
    assert [(r["low"], r["rating"], r["high"]) for r in got] == [
        (r.low, r.rating, r.high) for r in expected
    ]  # the board's match ids carry the submission's, which sorts them alike
    assert board["ratings"]["groups"] == 6 and board["submissions"] == 1
    assert board["errored"] == dict.fromkeys(PLAYERS, 0)

    page = client.get("/arena", params={"env": TICTACTOE}).text
    for row in expected:
        assert f'data-player="{row.player}" data-rank="{row.rank}"' in page
        assert f"[{row.low:.1f}, {row.high:.1f}]" in page
    assert page.count('data-errored="0"') == len(PLAYERS)
    assert 'id="arena-matches" href="/api/v1/arena/matches?env=multiagent%2FTicTacToe-v0"' in page
    listed = client.get("/api/v1/arena/matches", params={"env": TICTACTOE}).json()
    assert [m["match_id"] for m in listed["matches"]] == [r.match_id for r in records]
    assert listed["matches"][0]["moves"] == [dict(turn) for turn in records[0].moves]
    assert listed["errored"] == []
    assert TICTACTOE in client.get("/arena").text
    assert 'href="/arena"' in client.get("/").text


@pytest.mark.parametrize("schedule", ["round-robin", "swiss"])
def test_a_run_that_leaves_out_a_lost_match_is_refused(arena, runs, schedule):
    """The schedule is rebuilt from the manifest (Swiss rounds from the replayed results):
    the whole run is accepted, the run without one of its agent's losses is not."""
    client, token, store = arena
    data = upload(runs[schedule])
    loss = lost_by(records_of(runs[schedule]), "first-legal")
    data["matches"] = [m for m in data["matches"] if m["match_id"] != loss.match_id]
    answer = post(client, data, token)
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert f"scheduled match {loss.match_id!r} (" in detail
    assert ") is missing: a run sends every match of its schedule" in detail
    assert store.arena_envs() == []
    assert post(client, upload(runs[schedule]), token).status_code == 201


def test_a_swiss_run_is_checked_against_its_own_schedule(arena, runs):
    """A Swiss run's rounds are not a round-robin's: a manifest edited to say otherwise, or
    another seed, schedules other matches."""
    client, token, _ = arena
    for edit in ({"schedule": "round-robin"}, {"seed": 5}):
        data = upload(runs["swiss"])
        data["manifest"]["arena"].update(edit)
        answer = post(client, data, token)
        assert answer.status_code == 422, edit
        assert "more): a run sends every match of its schedule" in answer.json()["detail"]


def edit_seed(data: dict, match: dict) -> None:
    match["seed"] += 1


def edit_seats(data: dict, match: dict) -> None:
    match["seats"] = dict(zip(match["seats"], reversed(match["seats"].values()), strict=True))


def extra(data: dict, match: dict) -> None:
    seats, seed, group = match["seats"], match["seed"], match["group"]
    entry = {"match_id": "extra/0", "seats": seats, "seed": seed, "group": group}
    data["errored"].append({**entry, "error": "a match no schedule has"})


def also_errored(data: dict, match: dict) -> None:
    seats, seed, group = match["seats"], match["seed"], match["group"]
    entry = {"match_id": match["match_id"], "seats": seats, "seed": seed, "group": group}
    data["errored"].append({**entry, "error": "it was lost"})


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (edit_seed, "has seed"),
        (edit_seats, "has seats"),
        (extra, "errored match 'extra/0' is not in the schedule"),
        (also_errored, "is sent 2 times"),
    ],
)
def test_an_edited_match_is_refused_naming_it(arena, runs, edit, reason):
    """Two agents' game replays whatever its seed or its players' names (no reference player
    to hold to its moves): the schedule is what catches the edit."""
    client, token, store = arena
    data = upload(runs["round-robin"])
    match = next(m for m in data["matches"] if m["match_id"] == "first-legal-vs-last-legal/0")
    edit(data, match)
    answer = post(client, data, token)
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert reason in detail and ("first-legal-vs-last-legal/0" in detail or "extra/0" in detail)
    assert store.arena_envs() == []


def test_a_game_on_another_task_is_refused(arena, runs):
    """A real, replayable game of the same seats on another task than the seed draws."""
    client, token, _ = arena
    data = upload(runs["round-robin"])
    match = next(m for m in data["matches"] if m["match_id"] == "first-legal-vs-last-legal/0")
    env = agentgym.make_multi(TICTACTOE, split="test")
    solver = env.unwrapped.reference_players()["solver"]
    other, seed = match["task_id"], 0
    while other == match["task_id"]:
        env.reset(seed=seed)
        other, seed = env.unwrapped.task.id, seed + 1
    result = play_game(env, {seat: solver() for seat in match["seats"]}, 0, task_id=other)
    env.close()
    moves = [dict(turn) for turn in result.moves]
    match.update(task_id=other, moves=moves, scores=dict(result.outcome))
    answer = post(client, data, token)
    assert answer.status_code == 422
    assert "match 'first-legal-vs-last-legal/0' played task" in answer.json()["detail"]


def test_an_errored_match_is_accepted_and_counted_as_lost_by_the_agent(arena, runs):
    client, token, _ = arena
    records, errored = read_matches(runs["errored"])
    assert sorted(e["match_id"] for e in errored) == [
        "solver-vs-first-legal/0",
        "solver-vs-first-legal/1",
    ]
    answer = post(client, upload(runs["errored"]), token)
    assert answer.status_code == 201, answer.text
    assert (answer.json()["matches"], answer.json()["errored"]) == (6, 2)

    losses = [
        MatchRecord(e["match_id"], TICTACTOE, e["seats"], errored_scores(e["seats"], ["solver"]),
                    e["group"], e["seed"])
        for e in errored
    ]  # fmt: skip
    assert all(r.scores[_seat(r, "first-legal")] == 0.0 for r in losses)
    counted = rate(records + losses).by_player()
    board = client.get("/api/v1/arena/board", params={"env": TICTACTOE}).json()
    rows = {r["player"]: r for r in board["ratings"]["rows"]}
    assert {p: rows[p]["rating"] for p in rows} == {p: counted[p].rating for p in counted}
    assert rows["first-legal"]["rating"] < rate(records).by_player()["first-legal"].rating
    assert board["errored"] == {"solver": 2, "first-legal": 2, "random": 0}
    assert rows["first-legal"]["matches"] == 4

    page = client.get("/arena", params={"env": TICTACTOE}).text
    assert page.count('data-errored="2"') == 2
    listed = client.get("/api/v1/arena/matches", params={"env": TICTACTOE}).json()["errored"]
    assert [(m["match_id"], m["scores"]) for m in listed] == [
        (r.match_id, r.scores) for r in losses
    ]
    assert "ModelError: the model server went away" in listed[0]["error"]


@pytest.mark.parametrize(
    ("seats", "scores"),
    [
        ({"x": "agent", "o": "solver"}, {"x": 0.0, "o": 1.0}),
        ({"x": "solver", "o": "agent"}, {"x": 1.0, "o": 0.0}),
        ({"x": "agent", "o": "other-agent"}, {"x": 0.0, "o": 0.0}),  # a draw
    ],
)
def test_an_errored_match_is_a_loss_for_an_agent_seat_and_a_draw_between_agents(seats, scores):
    assert errored_scores(seats, ["solver", "random"]) == scores


@pytest.mark.parametrize("tamper", ["score", "move"])
def test_a_tampered_match_refuses_the_submission_and_nothing_is_kept(arena, runs, tamper):
    client, token, store = arena
    data = upload(runs["round-robin"])
    victim = data["matches"][1]
    if tamper == "score":
        victim["scores"] = {seat: 1 - score for seat, score in victim["scores"].items()}
    else:
        victim["moves"] = victim["moves"][::-1]
    answer = post(client, data, token)
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert f"match '{victim['match_id']}' does not replay (at turn " in detail
    assert store.arena_envs() == []
    assert client.get("/api/v1/arena/board", params={"env": TICTACTOE}).status_code == 404


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "not valid JSON"),
        (b'{"matches": [], "matches": []}', "twice"),
        (b'{"matches": []}', "no match"),
        (b'{"matches": [{"match_id": "m"}]}', "match 1 is not a match record"),
        (b'{"manifest": {"arena": "test"}, "matches": []}', "no match"),
        (b'{"matches": [], "errored": [{"match_id": "m"}]}', "errored entry 1 is not an errored"),
        (b'{"matches": [], "errored": [{"match_id": "m", "seats": {}, "seed": 1}]}', "no arena"),
    ],
)
def test_an_upload_that_does_not_read_is_refused_with_its_reason(arena, body, reason):
    client, token, _ = arena
    answer = post(client, body, token)
    assert answer.status_code == 422 and reason in answer.json()["detail"]


def test_an_unknown_env_is_refused_and_a_write_needs_a_token(arena, runs):
    client, token, _ = arena
    data = upload(runs["round-robin"])
    data["manifest"]["arena"]["env_id"] = "multiagent/NoSuchGame-v0"
    answer = post(client, data, token)
    assert answer.status_code == 422 and "NoSuchGame" in answer.json()["detail"]
    for match in data["matches"]:
        match["env_id"] = "multiagent/NoSuchGame-v0"
    answer = post(client, data, token)
    assert answer.status_code == 422 and "NoSuchGame" in answer.json()["detail"]
    assert post(client, upload(runs["round-robin"]), None).status_code == 401


def test_two_submissions_never_share_a_match_or_a_group(arena, runs):
    """Two runs of one arena on two seeds have the same match ids and group names."""
    client, token, _ = arena
    assert post(client, upload(runs["round-robin"]), token).status_code == 201
    assert post(client, upload(runs["seed-1"]), token).status_code == 201
    board = client.get("/api/v1/arena/board", params={"env": TICTACTOE}).json()
    assert (board["ratings"]["matches"], board["ratings"]["groups"]) == (24, 12)
    assert board["submissions"] == 2


def test_agentgym_submit_sends_an_arena_run_directory(store, serve, runs, tmp_path, capsys):
    from agentgym.cli import main

    token = store.create_token("arena-cli", ["submit"])
    live = serve(create_app(store))
    run_dir = tmp_path / "run"
    shutil.copytree(runs["errored"], run_dir)
    assert main(["submit", str(run_dir), "--to", live.url, "--token", token]) == 0
    out = capsys.readouterr().out
    assert "6 matches accepted, 2 errored (counted as lost by their agent seats)" in out
    assert f"{live.url}/arena?env=multiagent%2FTicTacToe-v0" in out
    records = records_of(run_dir)
    flipped = {seat: 1 - score for seat, score in records[0].scores.items()}
    lines = [json.loads(line) for line in (run_dir / "matches.jsonl").read_text().splitlines()]
    lines[0]["scores"] = flipped
    (run_dir / "matches.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["submit", str(run_dir), "--to", live.url, "--token", token]) != 0
    assert "does not replay" in capsys.readouterr().err


def test_the_static_export_writes_the_arena_boards(arena, runs, tmp_path):
    """The boards as files: the pages, the board and matches as the API gives them, every
    link relative and to a file the export wrote."""
    client, token, store = arena
    assert post(client, upload(runs["errored"]), token).status_code == 201
    written = export_site(store, tmp_path / "site")
    site = tmp_path / "site"
    assert written.arena_boards == 1
    stem = "arena/multiagent~2FTicTacToe-v0"
    board = json.loads((site / f"{stem}.json").read_text())
    assert board == client.get("/api/v1/arena/board", params={"env": TICTACTOE}).json()
    matches = json.loads((site / f"{stem}.matches.json").read_text())
    assert matches == client.get("/api/v1/arena/matches", params={"env": TICTACTOE}).json()
    page = (site / f"{stem}.html").read_text()
    assert page.count('data-errored="2"') == 2
    assert f'href="../{stem}.html"' in (site / "arena/index.html").read_text()
    assert 'href="arena/index.html"' in (site / "index.html").read_text()
    for name in ("index.html", "arena/index.html", f"{stem}.html"):
        for link in re.findall(r'href="([^"]*)"', (site / name).read_text()):
            link = html.unescape(link)
            assert not link.startswith(("/", "http")), f"{name} links to {link}"
            assert (site / name).parent.joinpath(link).resolve().is_file(), f"{name}: {link}"


def test_one_game_sent_twice_under_two_ids_is_refused(runs):
    """A game counted twice would weigh twice in the ratings: copies are refused."""
    data = upload(runs["round-robin"])
    data["matches"].append({**data["matches"][0], "match_id": "copy"})
    with pytest.raises(ArenaRejected, match="are the same game"):
        read_arena_payload(json.dumps(data).encode())
    read_arena_payload(arena_payload(runs["round-robin"]))  # an honest run: every game once
