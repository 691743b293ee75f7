"""Arena boards: a submitted arena run's matches are replayed before they are stored; a
tampered score or move refuses the whole submission with the match and turn named, and
nothing of it is kept; the accepted matches of an env make its board (ratings with
intervals and tie groups, each player's matches, a link to the matches), on both databases."""

from __future__ import annotations

import dataclasses
import json

import pytest
from arena_matches import TICTACTOE, solver_vs_random  # tests/: real tic-tac-toe matches
from starlette.testclient import TestClient

from agentgym.arena import MatchRecord, rate
from agentgym.leaderboard.arena import arena_payload
from agentgym.leaderboard.server import create_app


def matches(games: int = 4) -> list[MatchRecord]:
    """The solver against random on shared seeds, seats swapped: real games."""
    return solver_vs_random(games)


def payload(records: list[MatchRecord], manifest: dict | None = None) -> bytes:
    matches = [r.to_dict() for r in records]
    return json.dumps({"manifest": manifest or {"arena": "test"}, "matches": matches}).encode()


def post(client: TestClient, data: bytes, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    files = {"bundle": ("arena.json", data, "application/json")}
    return client.post("/api/v1/arena/submissions", files=files, headers=headers)


@pytest.fixture
def arena(store):
    token = store.create_token("arena-submitter", ["submit"])
    with TestClient(create_app(store)) as client:
        yield client, token, store


def test_a_submission_is_replayed_stored_and_shown_on_its_envs_board(arena):
    client, token, _ = arena
    records = matches()
    answer = post(client, payload(records), token)
    assert answer.status_code == 201, answer.text
    assert answer.json()["new"] and answer.json()["matches"] == len(records)
    again = post(client, payload(records), token)
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
    assert board["ratings"]["groups"] == 4 and board["submissions"] == 1

    page = client.get("/arena", params={"env": TICTACTOE}).text
    for row in expected:
        assert f'data-player="{row.player}" data-rank="{row.rank}"' in page
        assert f"[{row.low:.1f}, {row.high:.1f}]" in page
    assert 'id="arena-matches" href="/api/v1/arena/matches?env=multiagent%2FTicTacToe-v0"' in page
    listed = client.get("/api/v1/arena/matches", params={"env": TICTACTOE}).json()["matches"]
    assert [m["match_id"] for m in listed] == [r.match_id for r in records]
    assert listed[0]["moves"] == [dict(turn) for turn in records[0].moves]
    assert TICTACTOE in client.get("/arena").text
    assert 'href="/arena"' in client.get("/").text


@pytest.mark.parametrize("tamper", ["score", "move"])
def test_a_tampered_match_refuses_the_submission_and_nothing_is_kept(arena, tamper):
    client, token, store = arena
    records = matches(games=2)
    victim = records[1]
    if tamper == "score":
        flipped = {seat: 1 - score for seat, score in victim.scores.items()}
        records[1] = dataclasses.replace(victim, scores=flipped)
    else:
        records[1] = dataclasses.replace(victim, moves=victim.moves[::-1])
    answer = post(client, payload(records), token)
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert f"match '{victim.match_id}' does not replay (at turn " in detail
    assert store.arena_envs() == []
    assert client.get("/api/v1/arena/board", params={"env": TICTACTOE}).status_code == 404


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "not valid JSON"),
        (b'{"matches": [], "matches": []}', "twice"),
        (b'{"matches": []}', "no match"),
        (b'{"matches": [{"match_id": "m"}]}', "match 1 is not a match record"),
    ],
)
def test_an_upload_that_does_not_read_is_refused_with_its_reason(arena, body, reason):
    client, token, _ = arena
    answer = post(client, body, token)
    assert answer.status_code == 422 and reason in answer.json()["detail"]


def test_an_unknown_env_is_refused_and_a_write_needs_a_token(arena):
    client, token, _ = arena
    record = dataclasses.replace(matches(games=1)[0], env_id="multiagent/NoSuchGame-v0")
    answer = post(client, payload([record]), token)
    assert answer.status_code == 422 and "NoSuchGame" in answer.json()["detail"]
    assert post(client, payload(matches(games=1)), None).status_code == 401


def test_two_submissions_never_share_a_match_or_a_group(arena, tmp_path):
    client, token, _ = arena
    records = matches(games=2)
    assert post(client, payload(records[:2]), token).status_code == 201
    assert post(client, payload(records[2:]), token).status_code == 201
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    renamed = [dataclasses.replace(r, match_id=f"again-{r.match_id}") for r in records[:2]]
    (run_dir / "matches.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in renamed))
    assert post(client, arena_payload(run_dir), token).status_code == 201  # same groups' names
    board = client.get("/api/v1/arena/board", params={"env": TICTACTOE}).json()
    assert (board["ratings"]["matches"], board["ratings"]["groups"]) == (6, 3)
    assert board["submissions"] == 3


def test_agentgym_submit_sends_an_arena_run_directory(store, serve, tmp_path, capsys):
    from agentgym.cli import main

    token = store.create_token("arena-cli", ["submit"])
    live = serve(create_app(store))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    records = matches(games=1)
    (run_dir / "manifest.json").write_text(json.dumps({"env": TICTACTOE}))
    lines = "".join(json.dumps(r.to_dict()) + "\n" for r in records)
    (run_dir / "matches.jsonl").write_text(lines)
    assert main(["submit", str(run_dir), "--to", live.url, "--token", token]) == 0
    out = capsys.readouterr().out
    assert f"{len(records)} matches replayed and accepted" in out
    assert f"{live.url}/arena?env=multiagent%2FTicTacToe-v0" in out
    flipped = {seat: 1 - score for seat, score in records[0].scores.items()}
    tampered = [dataclasses.replace(records[0], scores=flipped), *records[1:]]
    (run_dir / "matches.jsonl").write_text(
        "".join(json.dumps(r.to_dict()) + "\n" for r in tampered)
    )
    assert main(["submit", str(run_dir), "--to", live.url, "--token", token]) != 0
    assert "does not replay" in capsys.readouterr().err


def test_one_game_sent_twice_under_two_ids_is_refused():
    """A game counted twice would weigh twice in the ratings: copies are refused."""
    from agentgym.leaderboard.arena import ArenaRejected, read_arena_payload

    record = matches(games=1)[0]
    copy = dataclasses.replace(record, match_id="copy")
    with pytest.raises(ArenaRejected, match="are the same game"):
        read_arena_payload(payload([record, copy]))
    read_arena_payload(payload(matches(games=2)))  # an honest run: every game once
