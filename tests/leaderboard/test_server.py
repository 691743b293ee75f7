"""The leaderboard's server: a real run goes from evaluation over HTTP to the board with its
intervals (on SQLite and PostgreSQL), writes need the right token, uploads are capped before
they are read, tokens are rate-limited, refused bundles say why, everything a submitter wrote
comes back intact and is shown inert, and the static export links only to files it wrote.

The apps run in process (Starlette's test client, httpx's ASGI transport for streamed
uploads) or under uvicorn on 127.0.0.1 where a command line talks to them.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
import yaml
from hostile_text import HOSTILE, SHOWN_FIELDS  # tests/: script and SQL in every field
from markupsafe import escape
from starlette.testclient import TestClient

from agentgym.cli import main
from agentgym.errors import InfrastructureError
from agentgym.leaderboard import checker as checker_module
from agentgym.leaderboard.bundle import BundleLimits, pack_bundle
from agentgym.leaderboard.export import export_site
from agentgym.leaderboard.server import ServerLimits, create_app
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import SubmissionInfo

# ---------------------------------------------------------------------------------------------
# Helpers


@pytest.fixture
def sqlite_store(tmp_path: Path):
    """A store on SQLite only, for what does not depend on the database."""
    with Store(tmp_path / "leaderboard.db") as store:
        store.migrate()
        yield store


def open_board(store: Store, tiny, **limits) -> tuple[TestClient, dict[str, str]]:
    """The tiny benchmark registered, a submit and an admin token, and a client of an app."""
    store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
    tokens = {scope: store.create_token(f"{scope}-token", [scope]) for scope in ("submit", "admin")}
    app = create_app(store, limits=ServerLimits(**limits))
    return TestClient(app), tokens


@pytest.fixture
def board(sqlite_store, tiny):
    client, tokens = open_board(sqlite_store, tiny)
    yield client, tokens
    client.app.state.checker.close()


def bundle_of(run_dir: Path, tmp_path: Path, info: SubmissionInfo | None = None) -> bytes:
    info = info or SubmissionInfo(agent=run_dir.name, model="none")
    out = tmp_path / f"{run_dir.name}-{abs(hash(info))}.tar.gz"
    return pack_bundle(run_dir, info, out).read_bytes()


def post(client: TestClient, data: bytes, token: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    files = {"bundle": ("bundle.tar.gz", data, "application/gzip")}
    return client.post("/api/v1/submissions", files=files, headers=headers)


def checked(client: TestClient, submission_id: str) -> dict:
    """The submission's status once the checker has done everything asked."""
    assert client.app.state.checker.wait(60)
    return client.get(f"/api/v1/submissions/{submission_id}").json()


def edited_run(run_dir: Path, tmp_path: Path, edit) -> Path:
    """A copy of a run whose first episode record ``edit`` changed (a forger's work)."""
    copy = tmp_path / f"{run_dir.name}-edited"
    shutil.copytree(run_dir, copy)
    lines = (copy / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    edit(first)
    lines[0] = json.dumps(first)
    (copy / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    return copy


def hrefs(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*)"', page)]


# ---------------------------------------------------------------------------------------------
# End to end


def test_a_run_goes_from_evaluation_over_http_to_the_board_with_intervals(
    store, tiny, tiny_runs, serve, tmp_path, capsys
):
    store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
    token = store.create_token("alice", ["submit"])
    live = serve(create_app(store))
    hostile = ["--agent-name", HOSTILE.agent, "--model", HOSTILE.model, "--model-revision",
               HOSTILE.model_revision, "--method", HOSTILE.method, "--contact", HOSTILE.contact,
               "--notes", HOSTILE.notes]  # fmt: skip
    for agent, options in (("oracle", ["--agent-name", "oracle"]), ("random", hostile)):
        argv = ["submit", str(tiny_runs[agent]), "--to", live.url, "--token", token, "--wait"]
        status = main([*argv, *options])
        printed = capsys.readouterr()
        assert status == 0, printed
        assert "scored: re-scored; success" in printed.out

    found = httpx.get(f"{live.url}/api/v1/benchmarks/{tiny.name}/board").json()
    assert found["benchmark"] == tiny.name and found["tasks"] == 8 and found["episodes"] == 8
    oracle, rand = found["rows"]
    assert (oracle["rank"], oracle["submission"]["agent"]) == (1, "oracle")
    assert oracle["success"] == {"estimate": 1.0, "low": 1.0, "high": 1.0}
    assert oracle["submission"]["tier"] == "re-scored"
    assert rand["rank"] == 2 and rand["success"]["high"] < 1.0
    assert found["comparisons"][0]["separable"] is True
    assert found["resolution_floor"] > 0
    assert [env["env_id"] for env in oracle["envs"]] == sorted(e.id for e in tiny.envs)

    # What the submitter wrote is stored and served intact -- but never the contact.
    shown = rand["submission"]
    assert {k: shown[k] for k in SHOWN_FIELDS} == {k: getattr(HOSTILE, k) for k in SHOWN_FIELDS}
    assert "contact" not in shown and "x@example.org" not in json.dumps(found)
    assert len(store.submissions()) == 2  # the table the "injection" names is still there
    stored = next(s for s in store.submissions() if s.id == rand["id"])
    assert stored.info == HOSTILE

    # Every page shows it escaped, and holds no markup of the submitter's.
    pages = [
        "/",
        f"/b/{tiny.name}",
        f"/s/{rand['id']}",
        f"/compare?a={rand['id']}&b={oracle['id']}",
    ]
    episodes = httpx.get(f"{live.url}/api/v1/submissions/{rand['id']}/episodes").json()
    pages.append(f"/s/{rand['id']}/e/{quote(episodes['episodes'][0]['episode_id'], safe='')}")
    for path in pages:
        response = httpx.get(live.url + path)
        assert response.status_code == 200, path
        assert "<script" not in response.text and "<img" not in response.text, path
        assert "x@example.org" not in response.text, path
    entry = httpx.get(f"{live.url}/s/{rand['id']}").text
    for name in SHOWN_FIELDS:
        assert str(escape(getattr(HOSTILE, name))) in entry, name


# ---------------------------------------------------------------------------------------------
# Taking bundles


def test_a_new_bundle_is_accepted_and_the_same_bundle_again_is_the_same_submission(
    board, tiny_runs, tmp_path
):
    client, tokens = board
    data = bundle_of(tiny_runs["oracle"], tmp_path)
    first = post(client, data, tokens["submit"])
    assert first.status_code == 202
    assert first.json()["status"] == "received" and first.json()["new"] is True
    status = checked(client, first.json()["id"])
    assert (status["status"], status["tier"], status["reason"]) == ("scored", "re-scored", None)
    assert status["numbers"]["success"]["estimate"] == 1.0
    again = post(client, data, tokens["submit"])
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"] and again.json()["new"] is False
    assert [row["tier"] for row in checked(client, first.json()["id"])["history"]] == ["re-scored"]


def test_writes_need_a_token_with_the_scope(board, sqlite_store, tiny_runs, tmp_path):
    client, tokens = board
    data = bundle_of(tiny_runs["oracle"], tmp_path)
    missing = post(client, data, None)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
    assert "Authorization: Bearer" in missing.json()["detail"]
    assert post(client, data, "not-a-token").status_code == 401

    sqlite_store.revoke("submit-token")
    revoked = post(client, data, tokens["submit"])
    assert revoked.status_code == 401 and "revoked" in revoked.json()["detail"]

    accepted = post(client, data, tokens["admin"])  # admin may do everything
    submission = accepted.json()["id"]
    checked(client, submission)
    fresh = sqlite_store.create_token("carol", ["submit"])
    url = f"/api/v1/submissions/{submission}/rescore"
    forbidden = client.post(url, headers={"Authorization": f"Bearer {fresh}"})
    assert forbidden.status_code == 403 and "may not admin" in forbidden.json()["detail"]
    assert client.post(url).status_code == 401
    assert (
        client.post(url, headers={"Authorization": f"Bearer {tokens['admin']}"}).status_code == 202
    )


def test_an_upload_over_the_cap_is_refused_before_it_is_read(sqlite_store, tiny):
    sqlite_store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
    token = sqlite_store.create_token("big", ["submit"])
    limits = ServerLimits(bundle=BundleLimits(max_bytes=256 << 10))
    app = create_app(sqlite_store, limits=limits)
    chunk, chunks = 64 << 10, 3_200  # 200 MiB offered
    sent = {"declared": 0, "streamed": 0}

    async def body(name: str):
        for _ in range(chunks):
            sent[name] += 1
            yield b"x" * chunk

    async def upload(name: str, declared: bool) -> httpx.Response:
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "multipart/form-data; boundary=b",
        }
        if declared:
            headers["Content-Length"] = str(chunk * chunks)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://board") as client:
            return await client.post("/api/v1/submissions", content=body(name), headers=headers)

    try:
        declared = asyncio.run(upload("declared", True))
        streamed = asyncio.run(upload("streamed", False))
    finally:
        app.state.checker.close()
    assert declared.status_code == 413 and "at most" in declared.json()["detail"]
    assert sent["declared"] == 0  # refused on its Content-Length: not a byte read
    assert streamed.status_code == 413
    assert sent["streamed"] <= limits.max_upload // chunk + 2  # stopped at the cap, not the end


def test_over_http_a_refused_upload_closes_the_connection_instead_of_draining_it(
    sqlite_store, tiny, serve
):
    token = sqlite_store.create_token("big", ["submit"])
    limits = ServerLimits(bundle=BundleLimits(max_bytes=256 << 10))
    live = serve(create_app(sqlite_store, limits=limits))
    chunk, chunks, sent = 64 << 10, 3_200, [0]

    def body():
        for _ in range(chunks):
            sent[0] += 1
            yield b"x" * chunk

    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "multipart/form-data; boundary=b",
    }
    refused = httpx.post(f"{live.url}/api/v1/submissions", content=body(), headers=headers)
    assert refused.status_code == 413 and refused.headers["Connection"] == "close"
    assert sent[0] < chunks // 10  # what the sockets' buffers took, not the 200 MiB offered


def test_a_token_over_its_rate_is_refused_and_refused_uploads_count(sqlite_store, tiny):
    client, tokens = open_board(sqlite_store, tiny, submissions=2)
    try:
        for _ in range(2):
            assert post(client, b"not a bundle", tokens["submit"]).status_code == 422
        limited = post(client, b"not a bundle", tokens["submit"])
        assert limited.status_code == 429
        assert int(limited.headers["Retry-After"]) > 0
        assert "limit" in limited.json()["detail"]
        assert post(client, b"not a bundle", tokens["admin"]).status_code == 422  # per token
    finally:
        client.app.state.checker.close()


def test_a_bundle_that_does_not_read_is_refused_with_its_reason_and_nothing_is_kept(
    board, sqlite_store
):
    client, tokens = board
    refused = post(client, b"\x1f\x8b garbage", tokens["submit"])
    assert refused.status_code == 422
    assert refused.json()["detail"].startswith("bundle refused: ")
    assert "\n" not in refused.json()["detail"]
    assert sqlite_store.submissions() == []
    no_field = client.post(
        "/api/v1/submissions",
        files={"other": ("x", b"x")},
        headers={"Authorization": f"Bearer {tokens['submit']}"},
    )
    assert no_field.status_code == 400 and "'bundle'" in no_field.json()["detail"]


def test_a_run_of_a_benchmark_not_on_the_board_is_refused(board, tiny_runs, tmp_path):
    client, tokens = board

    def other_benchmark(manifest_path: Path) -> None:
        manifest = json.loads(manifest_path.read_text())
        manifest["benchmark_hash"] = "0" * 64
        manifest_path.write_text(json.dumps(manifest))

    run = tmp_path / "other"
    shutil.copytree(tiny_runs["oracle"], run)
    other_benchmark(run / "manifest.json")
    refused = post(client, bundle_of(run, tmp_path), tokens["submit"])
    assert refused.status_code == 422
    assert "is not on this board" in refused.json()["detail"]
    assert "tiny-games v1" in refused.json()["detail"]


def test_a_forged_bundle_is_rejected_by_the_check_and_the_page_says_why(board, tiny_runs, tmp_path):
    client, tokens = board

    def richer(record: dict) -> None:
        record["steps"][0]["reward"] = 5.0

    forged = edited_run(tiny_runs["oracle"], tmp_path, richer)
    answer = post(client, bundle_of(forged, tmp_path), tokens["submit"])
    assert answer.status_code == 202  # it reads: only the replay can tell
    status = checked(client, answer.json()["id"])
    assert status["status"] == "rejected" and status["tier"] is None
    assert "cannot be scored" in status["reason"]
    page = client.get(f"/s/{answer.json()['id']}").text
    assert str(escape(status["reason"])) in page
    board_rows = client.get("/api/v1/benchmarks/tiny-games/board?tier=all").json()["rows"]
    assert board_rows == []


def test_a_check_the_server_cannot_run_leaves_the_submission_received_with_the_error(
    board, tiny_runs, tmp_path, monkeypatch
):
    client, tokens = board

    def broken(*args, **kwargs):
        raise InfrastructureError("the env's sandbox would not start")

    monkeypatch.setattr(checker_module, "rescore", broken)
    answer = post(client, bundle_of(tiny_runs["oracle"], tmp_path), tokens["submit"])
    status = checked(client, answer.json()["id"])
    assert status["status"] == "received"  # not the submitter's fault: not rejected
    assert status["check_error"] == "InfrastructureError: the env's sandbox would not start"
    assert "would not start" in client.get(f"/s/{answer.json()['id']}").text

    monkeypatch.undo()
    admin = {"Authorization": f"Bearer {tokens['admin']}"}
    client.post(f"/api/v1/submissions/{answer.json()['id']}/rescore", headers=admin)
    status = checked(client, answer.json()["id"])
    assert (status["status"], status["check_error"]) == ("scored", None)


def test_an_admin_rescore_adds_a_history_row_and_the_entry_stays_on_the_board(
    board, tiny_runs, tmp_path
):
    client, tokens = board
    submission = post(client, bundle_of(tiny_runs["random"], tmp_path), tokens["submit"]).json()
    checked(client, submission["id"])
    admin = {"Authorization": f"Bearer {tokens['admin']}"}
    again = client.post(f"/api/v1/submissions/{submission['id']}/rescore", headers=admin)
    assert again.status_code == 202 and again.json()["status"] == "scored"
    status = checked(client, submission["id"])
    assert status["status"] == "scored" and len(status["history"]) == 2
    page = client.get(f"/s/{submission['id']}").text
    assert page.count("(shown)") == 1


# ---------------------------------------------------------------------------------------------
# Reading boards and entries


def test_the_board_filters_by_tier_metric_and_method(sqlite_store, tiny, tiny_runs, tmp_path):
    client, tokens = open_board(sqlite_store, tiny)
    self_reported = TestClient(create_app(sqlite_store, replay=False))
    try:
        standard = bundle_of(tiny_runs["oracle"], tmp_path)
        custom = bundle_of(
            tiny_runs["random"], tmp_path, SubmissionInfo(agent="random", method="custom")
        )
        unreplayed = bundle_of(tiny_runs["first-listed"], tmp_path)
        ids = []
        for app, data in ((client, standard), (client, custom), (self_reported, unreplayed)):
            ids.append(post(app, data, tokens["submit"]).json()["id"])
            checked(app, ids[-1])

        def rows(query: str = "") -> list[str]:
            found = client.get(f"/api/v1/benchmarks/tiny-games/board{query}")
            assert found.status_code == 200, found.text
            return [row["id"] for row in found.json()["rows"]]

        assert rows() == ids[:2]  # self-reported rows are hidden unless asked
        assert set(rows("?tier=all")) == set(ids)
        assert rows("?tier=self-reported") == [ids[2]]
        assert rows("?method=custom") == [ids[1]]
        assert client.get("/api/v1/benchmarks/tiny-games/board?metric=score").json()["metric"] == (
            "score"
        )
        badge = '<span class="badge self-reported">'
        assert badge not in client.get("/b/tiny-games").text
        assert badge in client.get("/b/tiny-games?tier=all").text

        bad = client.get("/api/v1/benchmarks/tiny-games/board?metric=vibes")
        assert bad.status_code == 422 and "metric must be one of" in bad.json()["detail"]
        missing = client.get("/api/v1/benchmarks/nope/board")
        assert missing.status_code == 404 and missing.json() == {
            "detail": "no benchmark 'nope' is registered"
        }
        listed = client.get("/api/v1/benchmarks").json()["benchmarks"]
        assert [(b["name"], b["entries"], b["pending"]) for b in listed] == [("tiny-games", 3, 0)]
    finally:
        client.app.state.checker.close()
        self_reported.app.state.checker.close()


def test_episodes_are_served_from_the_stored_bundle(board, tiny_runs, tmp_path):
    client, tokens = board
    submission = post(client, bundle_of(tiny_runs["oracle"], tmp_path), tokens["submit"]).json()
    checked(client, submission["id"])
    base = f"/api/v1/submissions/{submission['id']}/episodes"
    listed = client.get(base).json()
    assert listed["checked"] is True and len(listed["episodes"]) == 8
    first = listed["episodes"][0]
    assert first["outcome"] == "ok" and first["passed"] is True
    one = client.get(f"{base}/{quote(first['episode_id'], safe='')}").json()
    assert one["scored"] == first
    assert one["record"]["episode_id"] == first["episode_id"]
    assert len(one["record"]["steps"]) == first["steps"]
    page = client.get(f"/s/{submission['id']}/e/{quote(first['episode_id'], safe='')}").text
    action = one["record"]["steps"][0]["action"]
    assert f'<div class="tx-label">action</div><pre>{escape(action)}</pre>' in page
    assert client.get(f"{base}/nope").status_code == 404


def test_errors_are_a_status_and_one_line_never_a_200(board):
    client, _ = board
    api = client.get("/api/v1/submissions/nope")
    assert api.status_code == 404 and api.json() == {"detail": "no submission 'nope'"}
    page = client.get("/s/nope")
    assert page.status_code == 404 and "text/html" in page.headers["content-type"]
    assert "no submission &#39;nope&#39;" in page.text
    assert client.get("/no/such/page").status_code == 404
    assert client.get("/compare").status_code == 422
    assert client.delete("/api/v1/benchmarks").status_code == 405


def test_a_failure_of_the_server_is_a_500_with_one_line(board, monkeypatch):
    client, _ = board

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals\nline two")

    monkeypatch.setattr(client.app.state.site, "benchmarks", broken)
    quiet = TestClient(client.app, raise_server_exceptions=False)
    failed = quiet.get("/api/v1/benchmarks")
    assert failed.status_code == 500
    assert failed.json() == {"detail": "the server failed (RuntimeError)"}
    assert quiet.get("/").status_code == 500


def test_pages_forbid_every_script(board):
    client, _ = board
    for path in ("/", "/b/tiny-games", "/s/nope"):
        response = client.get(path)
        policy = response.headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy
        assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_a_board_is_computed_once_per_store_version(board, sqlite_store, tiny_runs, tmp_path):
    client, tokens = board
    post(client, bundle_of(tiny_runs["oracle"], tmp_path), tokens["submit"])
    client.app.state.checker.wait(60)
    site = client.app.state.site
    first = site.board("tiny-games")
    assert site.board("tiny-games") is first
    sqlite_store.create_token("dave", ["submit"])  # any write: a new version
    assert site.board("tiny-games") is not first
    assert site.board("tiny-games").board == first.board


# ---------------------------------------------------------------------------------------------
# Static export and the command line


def test_the_static_export_links_only_to_files_it_wrote(board, tiny_runs, tmp_path):
    client, tokens = board
    for agent in ("oracle", "random", "half-oracle"):
        checked(
            client,
            post(client, bundle_of(tiny_runs[agent], tmp_path), tokens["submit"]).json()["id"],
        )
    out = tmp_path / "site"
    written = export_site(client.app.state.store, out)
    assert (written.boards, written.entries) == (1, 3)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))
    # the index, the board and its one family's tab, 3 entries, their episodes, 2 comparisons
    assert written.pages == len(files) == 1 + 2 + 3 + 3 * 8 + 2
    assert written.downloads == 3 * 3  # each entry's bundle, episodes.json and .csv
    for name in files:
        page = (out / name).read_text()
        assert "<script" not in page
        for link in hrefs(page):
            assert not link.startswith(("/", "http")), f"{name} links to {link}"
            assert (out / name).parent.joinpath(link).resolve().is_file(), f"{name}: {link}"


def test_the_command_line_makes_tokens_verifies_and_exports(tiny, tiny_runs, tmp_path, capsys):
    db = str(tmp_path / "board.db")
    assert main(["leaderboard", "token", "create", "erin", "--scope", "admin", "--db", db]) == 0
    plaintext = capsys.readouterr().out.strip()
    with Store(db) as store:
        assert store.authorize(plaintext, "admin").name == "erin"
    assert main(["leaderboard", "token", "revoke", "erin", "--db", db]) == 0

    suite = tmp_path / "tiny-games.yaml"
    suite.write_text(yaml.safe_dump(tiny.to_dict()))
    assert main(["leaderboard", "verify", str(tiny_runs["oracle"]), "--benchmark", str(suite)]) == 0
    shown = capsys.readouterr().out
    assert "tiny-games v1: re-scored" in shown
    assert "success  100.0% [100.0, 100.0]" in shown

    forged = edited_run(tiny_runs["random"], tmp_path, lambda r: r["steps"].pop())
    assert main(["leaderboard", "verify", str(forged), "--benchmark", str(suite)]) == 1
    assert capsys.readouterr().out.startswith("rejected: 1 of 8 episodes cannot be scored")

    assert main(["leaderboard", "export", "--db", db, "--out", str(tmp_path / "site")]) == 0
    assert "1 pages in" in capsys.readouterr().out  # no board registered: the index alone


def test_submit_says_why_a_board_refused(sqlite_store, tiny, tiny_runs, serve, capsys):
    sqlite_store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
    live = serve(create_app(sqlite_store))
    argv = ["submit", str(tiny_runs["oracle"]), "--to", live.url, "--agent-name", "o"]
    assert main([*argv, "--token", "wrong"]) == 2
    assert "agentgym: 401 Unauthorized: no such token" in capsys.readouterr().err
    started = time.monotonic()
    assert main([*argv, "--to", "http://127.0.0.1:9", "--token", "t"]) == 2
    assert "could not reach" in capsys.readouterr().err
    assert time.monotonic() - started < 30
