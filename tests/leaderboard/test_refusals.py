"""What the board refuses, and how: a run whose user was not the env's own scripted one, an
archive whose tar headers claim more than they hold, JSON nested too deep or with a key twice,
request parameters the database cannot take, and command lines with bad values. Each case
here was once taken (scored, a 202, a 500) or crashed (a traceback, gigabytes allocated).

The bombs are built from raw 512-byte tar headers, small on disk; the refusals that reach a
database run on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import socket
import tarfile
import tracemalloc
import zlib
from pathlib import Path

import pytest
from cli_refusal import refused
from starlette.testclient import TestClient

from agentgym.agents import Agent
from agentgym.cli import main
from agentgym.eval import Benchmark, evaluate
from agentgym.leaderboard.bundle import (
    BUNDLE_FILES,
    MAX_JSON_DEPTH,
    BundleRejected,
    pack_bundle,
    parse_json,
    read_bundle,
)
from agentgym.leaderboard.rescore import rescore
from agentgym.leaderboard.server import create_app
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import SubmissionInfo

INFO = SubmissionInfo(agent="refusals", model="none")


def post(client: TestClient, data: bytes, token: str):
    files = {"bundle": ("bundle.tar.gz", data, "application/gzip")}
    return client.post(
        "/api/v1/submissions", files=files, headers={"Authorization": f"Bearer {token}"}
    )


def open_board(store, benchmark: Benchmark) -> tuple[TestClient, dict[str, str]]:
    store.add_benchmark(benchmark.name, benchmark.version, benchmark.digest(), benchmark.to_dict())
    tokens = {scope: store.create_token(f"{scope}-token", [scope]) for scope in ("submit", "admin")}
    return TestClient(create_app(store)), tokens


# ---------------------------------------------------------------------------------------------
# Colluding users


DIAGNOSIS = Benchmark.from_dict(
    {
        "name": "tiny-diagnosis",
        "version": 1,
        "seed": 0,
        "envs": [{"id": "usersim/Diagnosis-v0", "split": "test", "difficulty": "easy",
                  "tasks": 2, "max_steps": 3}],
    }
)  # fmt: skip


class AskThenTakeTheHint(Agent):
    """Asks once, then diagnoses whatever condition the patient's answer names: a hopeless
    doctor with a scripted patient, a perfect one with a patient of its own making."""

    name = "ask-then-take-the-hint"

    def reset(self, context):
        self.asked = False

    async def act(self, observation, info):
        if not self.asked:
            self.asked = True
            return "Do you have a fever?"
        said = str(observation)
        hint = said.rpartition("HINT=")[2].split('"')[0].strip() if "HINT=" in said else ""
        return f"diagnosis: {hint or 'influenza'}"


class ColludingPatient(Agent):
    """Plays the patient and says what the submitter wants (here: a fixed hint)."""

    name = "colluding-patient"

    def reset(self, context):
        pass

    async def act(self, observation, info):
        return "HINT=migraine"


@pytest.fixture(scope="module")
def diagnosis_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same agent with the env's scripted patient, and with the submitter's own."""
    folder = tmp_path_factory.mktemp("diagnosis-runs")
    scripted = evaluate(DIAGNOSIS, AskThenTakeTheHint, folder / "scripted").run_dir
    colluding = evaluate(
        DIAGNOSIS, AskThenTakeTheHint, folder / "colluding", user=ColludingPatient
    ).run_dir
    return {"scripted": scripted, "colluding": colluding}


def test_a_run_with_a_model_user_is_refused_and_one_with_the_scripted_user_is_scored(
    diagnosis_runs, tmp_path
):
    honest = read_bundle(
        pack_bundle(diagnosis_runs["scripted"], INFO, tmp_path / "s.tar.gz").read_bytes()
    )
    assert rescore(honest, DIAGNOSIS, workers=1).tier == "re-scored"
    data = pack_bundle(diagnosis_runs["colluding"], INFO, tmp_path / "c.tar.gz").read_bytes()
    colluding = read_bundle(data)
    assert colluding.episodes[0].user_turns  # the patient's lines are in the record
    with pytest.raises(BundleRejected, match=r"'colluding-patient'.*scripted user"):
        rescore(colluding, DIAGNOSIS, workers=1)
    # A forger who clears the manifest's user is still refused on the episodes' own record.
    colluding.manifest["user"] = None
    with pytest.raises(BundleRejected, match=r"scripted user"):
        rescore(colluding, DIAGNOSIS, workers=1)
    for record in colluding.episodes:
        record.spec.user = None
    with pytest.raises(BundleRejected, match=r"'a model'.*scripted user"):
        rescore(colluding, DIAGNOSIS, workers=1)


def test_the_board_refuses_a_colluding_user_run_on_upload_and_says_whom_it_accepts(
    store, diagnosis_runs, tmp_path
):
    client, tokens = open_board(store, DIAGNOSIS)
    try:
        data = pack_bundle(diagnosis_runs["colluding"], INFO, tmp_path / "c.tar.gz").read_bytes()
        refused = post(client, data, tokens["submit"])
        assert refused.status_code == 422, refused.text
        detail = refused.json()["detail"]
        assert "scripted user" in detail and "colluding-patient" in detail and "\n" not in detail
        assert store.submissions() == []
        honest = pack_bundle(diagnosis_runs["scripted"], INFO, tmp_path / "s.tar.gz").read_bytes()
        assert post(client, honest, tokens["submit"]).status_code == 202
        board = client.get(f"/api/v1/benchmarks/{DIAGNOSIS.name}/board").json()
        assert board["users"] == ["scripted"]
        listed = client.get("/api/v1/benchmarks").json()["benchmarks"]
        assert [b["users"] for b in listed] == [["scripted"]]
        assert "scripted user only" in client.get(f"/b/{DIAGNOSIS.name}").text
    finally:
        client.app.state.checker.close()


# ---------------------------------------------------------------------------------------------
# Header bombs


def tar_header(name: bytes, kind: bytes, size: int | bytes) -> bytes:
    """A ustar header as a hostile tool would write it (a checksum that checks out)."""
    header = bytearray(512)
    header[: len(name)] = name
    header[100:108] = b"0000644\0"
    header[108:124] = b"0000000\0" * 2
    header[124:136] = size if isinstance(size, bytes) else b"%011o\0" % size
    header[136:148] = b"00000000000\0"
    header[148:156] = b" " * 8
    header[156:157] = kind
    header[257:265] = b"ustar\x0000"
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


def gzipped(header: bytes, zeros: int) -> bytes:
    """``header`` then ``zeros`` zero bytes, gzipped a MiB at a time (small on disk)."""
    packer = zlib.compressobj(9, wbits=31)
    parts = [packer.compress(header)]
    chunk = bytes(1 << 20)
    for start in range(0, zeros, len(chunk)):
        parts.append(packer.compress(chunk[: zeros - start]))
    return b"".join([*parts, packer.flush()])


BOMBS = {
    # what the header claims, in bytes; 16 MiB of zeros really follow it
    "pax-extended-header": (b"././@PaxHeader", b"x", 1_300_000_000),
    "pax-global-header": (b"././@GlobalHead", b"g", 1_300_000_000),
    "gnu-long-name": (b"././@LongLink", b"L", 2_100_000_000),
    "regular-file-over-the-cap": (b"episodes.jsonl", b"0", 1_300_000_000),
}


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_header_bomb_is_refused_on_its_header_alone(bomb):
    name, kind, claimed = BOMBS[bomb]
    data = gzipped(tar_header(name, kind, claimed), 16 << 20)
    assert len(data) < 1 << 20  # a 1 MiB upload at most
    tracemalloc.start()
    try:
        with pytest.raises(BundleRejected) as refused:
            read_bundle(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"reading the bomb took {peak:,} bytes"
    assert "\n" not in str(refused.value)
    expected = "more than" if kind == b"0" else "not a regular file"
    assert expected in str(refused.value)


def test_a_header_that_claims_more_than_it_holds_allocates_what_arrives():
    data = gzipped(tar_header(b"episodes.jsonl", b"0", 500 << 20), 1 << 10)
    tracemalloc.start()
    try:
        with pytest.raises(BundleRejected, match=r"ends inside episodes.jsonl"):
            read_bundle(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"a 1 KiB file claimed as 500 MiB took {peak:,} bytes"


@pytest.mark.parametrize(
    "size", [b"\x80" + bytes(3) + (1 << 40).to_bytes(8, "big"), b"12345678901x", b"-0000000001\0"]
)
def test_a_size_that_is_not_an_octal_number_is_refused(size):
    with pytest.raises(BundleRejected, match=r"size in its tar header is not an octal number"):
        read_bundle(gzipped(tar_header(b"manifest.json", b"0", size), 0))


def test_a_header_with_a_wrong_checksum_is_refused():
    header = bytearray(tar_header(b"manifest.json", b"0", 2))
    header[0:1] = b"n"
    with pytest.raises(BundleRejected, match=r"checksum"):
        read_bundle(gzip.compress(bytes(header) + b"{}"))


def pax_record(key: bytes, value: bytes) -> bytes:
    """One ``LENGTH key=value\\n`` record of a PAX header (its length counts its own digits)."""
    body = b" " + key + b"=" + value + b"\n"
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length += 1
    return str(length).encode() + body


def test_a_header_bomb_before_a_real_bundle_is_refused_by_the_board_on_both_databases(
    store, tiny, tiny_runs, tmp_path
):
    client, tokens = open_board(store, tiny)
    try:
        honest = bundle_files(tiny_runs["oracle"], tmp_path)
        pax = pax_record(b"comment", b"a" * (8 << 20))  # tarfile reads all of it, then the files
        padded = pax + bytes(-len(pax) % 512)
        bomb = gzip.compress(
            tar_header(b"././@PaxHeader", b"x", len(pax)) + padded + tar_body(honest)
        )
        assert len(bomb) < 1 << 20
        refused = post(client, bomb, tokens["submit"])
        assert refused.status_code == 422, refused.text
        assert "PAX extended header, not a regular file" in refused.json()["detail"]
        assert store.submissions() == []
        assert post(client, gzip.compress(tar_body(honest)), tokens["submit"]).status_code == 202
    finally:
        client.app.state.checker.close()


# ---------------------------------------------------------------------------------------------
# JSON


def bundle_files(run: Path, tmp_path: Path) -> dict[str, bytes]:
    data = pack_bundle(run, INFO, tmp_path / "b.tar.gz").read_bytes()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}


def repacked(files: dict[str, bytes]) -> bytes:
    """``files`` in a bundle whose index matches them (a forger's re-hash)."""
    index = json.loads(files["bundle.json"])
    index["files"] = {n: hashlib.sha256(files[n]).hexdigest() for n in index["files"]}
    return gzip.compress(tar_body({**files, "bundle.json": json.dumps(index).encode()}))


def tar_body(files: dict[str, bytes]) -> bytes:
    """The bundle's files as an uncompressed tar, header by header, and its end blocks."""
    body = b""
    for name in BUNDLE_FILES:
        content = files[name]
        body += tar_header(name.encode(), b"0", len(content)) + content + bytes(-len(content) % 512)
    return body + bytes(1024)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_json_nested_too_deep_is_refused_wherever_it_is(tiny_runs, tmp_path, depth):
    files = bundle_files(tiny_runs["oracle"], tmp_path)
    deep = "[" * depth + "]" * depth
    line = json.loads(files["episodes.jsonl"].splitlines()[0])
    line["steps"][0]["info"] = {"x": "PLACEHOLDER"}
    text = json.dumps(line).replace('"PLACEHOLDER"', deep)
    with pytest.raises(
        BundleRejected, match=rf"episodes.jsonl line 1 is nested deeper than {MAX_JSON_DEPTH}"
    ):
        read_bundle(repacked({**files, "episodes.jsonl": text.encode() + b"\n"}))
    manifest = (
        files["manifest.json"]
        .decode()
        .replace('"agent_options": {}', f'"agent_options": {{"x": {deep}}}')
    )
    assert manifest != files["manifest.json"].decode()
    with pytest.raises(BundleRejected, match=r"manifest.json is nested deeper"):
        read_bundle(repacked({**files, "manifest.json": manifest.encode()}))


def test_json_at_the_depth_limit_is_read():
    deep = "[" * (MAX_JSON_DEPTH - 1) + "1" + "]" * (MAX_JSON_DEPTH - 1)
    assert parse_json(f'{{"a": {deep}}}', "x")["a"][0] is not None


def test_a_key_twice_in_one_object_is_refused(tiny_runs, tmp_path):
    files = bundle_files(tiny_runs["oracle"], tmp_path)
    twice = b'{"agent": "honest", "agent": "someone else"}'
    with pytest.raises(BundleRejected, match=r"submission.json .*'agent' appears twice"):
        read_bundle(repacked({**files, "submission.json": twice}))
    first, *rest = files["episodes.jsonl"].splitlines()
    edited = first.replace(b'"status": ', b'"status": "errored", "status": ', 1)
    with pytest.raises(BundleRejected, match=r"episodes.jsonl line 1 .*'status' appears twice"):
        read_bundle(repacked({**files, "episodes.jsonl": b"\n".join([edited, *rest])}))
    assert parse_json('{"a": {"b": 1}, "b": {"b": 2}}', "x") == {"a": {"b": 1}, "b": {"b": 2}}


# ---------------------------------------------------------------------------------------------
# Request parameters


HUGE = "9" * 40
BAD_PARAMETERS = [
    ("GET", f"/b/tiny-games?version={HUGE}"),
    ("GET", f"/api/v1/benchmarks/tiny-games/board?version={HUGE}"),
    ("GET", "/b/tiny-games?version=-1"),
    ("GET", "/b/tiny-games?version=2147483648"),
    ("GET", "/b/tiny-games?version=x"),
    ("GET", "/b/tiny-games?tier=%00"),
    ("GET", "/b/tiny-games?method=%00"),
    ("GET", "/b/tiny-games?metric=%00"),
    ("GET", "/b/%00"),
    ("GET", "/b/%ff%fe"),
    ("GET", "/b/" + "x" * 5000),
    ("GET", "/api/v1/benchmarks/%00/board"),
    ("GET", "/s/%00"),
    ("GET", "/s/%ed%a0%80"),
    ("GET", "/s/x/e/%00"),
    ("GET", "/api/v1/submissions/%00"),
    ("GET", "/api/v1/submissions/%00/episodes"),
    ("GET", "/api/v1/submissions/x/episodes/%00"),
    ("GET", "/compare?a=%00&b=x"),
    ("GET", "/compare?a=x&b=" + "y" * 5000),
    ("POST", "/api/v1/submissions/%00/rescore"),
    ("POST", "/api/v1/rescore?benchmark=%00"),
    ("POST", f"/api/v1/rescore?benchmark={HUGE}"),
]


def test_every_bad_request_parameter_is_a_4xx_with_one_line_on_both_databases(store, tiny):
    client, tokens = open_board(store, tiny)
    headers = {"Authorization": f"Bearer {tokens['admin']}"}
    quiet = TestClient(client.app, raise_server_exceptions=False)
    try:
        answers = {
            url: quiet.request(method, url, headers=headers) for method, url in BAD_PARAMETERS
        }
        failed = {
            url[:60]: a.status_code for url, a in answers.items() if not 400 <= a.status_code < 500
        }
        assert failed == {}
        for url, answer in answers.items():
            if url.startswith("/api/"):
                assert "\n" not in answer.json()["detail"], url
    finally:
        client.app.state.checker.close()


def test_a_nul_in_what_a_record_says_is_stored_on_both_databases(store, tiny, tmp_path):
    sixteen = Benchmark.from_dict(
        {**tiny.to_dict(), "envs": [{**env, "tasks": 8} for env in tiny.to_dict()["envs"]]}
    )
    run = evaluate(sixteen, "random", tmp_path / "run").run_dir
    lines = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    lines[0].update(status="errored", error="the agent said \x00 and stopped")
    (run / "episodes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    client, tokens = open_board(store, sixteen)
    try:
        sent = post(
            client, pack_bundle(run, INFO, tmp_path / "b.tar.gz").read_bytes(), tokens["submit"]
        )
        assert client.app.state.checker.wait(60)
        status = client.get(sent.json()["api"]).json()
        assert (status["status"], status["check_error"]) == ("scored", None)
        episodes = client.get(f"{sent.json()['api']}/episodes").json()["episodes"]
        assert "the agent said \ufffd and stopped" in [e["reason"] for e in episodes]
    finally:
        client.app.state.checker.close()


# ---------------------------------------------------------------------------------------------
# The command line


def test_serve_refuses_bad_values_before_it_starts(tmp_path, capsys):
    db = str(tmp_path / "board.db")
    serve = ["leaderboard", "serve", "--db", db]
    refused(capsys, [*serve, "--port", "-1"], "--port -1", "0 to 65535")
    refused(capsys, [*serve, "--port", "99999"], "--port 99999")
    refused(capsys, [*serve, "--rate", "0"], "--rate 0")
    refused(capsys, [*serve, "--host", "no-such-host.invalid"], "no-such-host.invalid")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        refused(capsys, [*serve, "--port", port], f"cannot listen on 127.0.0.1:{port}")
    missing = tmp_path / "no-such-folder" / "board.db"
    refused(capsys, ["leaderboard", "serve", "--db", str(missing)], "does not exist")
    refused(capsys, ["leaderboard", "serve", "--db", str(tmp_path)], "is a folder")
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    refused(capsys, [*serve[:2], "--db", str(a_file / "board.db")], "is a file, not a folder")
    refused(capsys, ["leaderboard", "serve", "--db", "postgresql://u@/x"], "--blob-dir")
    assert not missing.parent.exists() and not Path(db).exists()


def test_tokens_and_exports_refuse_what_is_not_a_database(tmp_path, capsys):
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("not a database")
    create = ["leaderboard", "token", "create", "alice"]
    refused(capsys, [*create, "--db", str(tmp_path)], "is a folder")
    refused(capsys, [*create, "--db", str(not_sqlite)], str(not_sqlite), "not a database")
    assert not_sqlite.read_text() == "not a database"
    missing = str(tmp_path / "missing.db")
    refused(
        capsys,
        ["leaderboard", "export", "--db", missing, "--out", str(tmp_path / "site")],
        "no leaderboard database at",
    )
    refused(
        capsys,
        ["leaderboard", "token", "revoke", "alice", "--db", missing],
        "no leaderboard database at",
    )
    assert not Path(missing).exists() and not (tmp_path / "site").exists()
    db = str(tmp_path / "board.db")
    refused(capsys, [*create[:3], "x" * 101, "--db", db], "1 to 100 characters")
    assert main([*create, "--db", db]) == 0
    capsys.readouterr()
    refused(capsys, ["leaderboard", "export", "--db", db, "--out", str(not_sqlite)], "is a file")
    refused(
        capsys,
        ["leaderboard", "export", "--db", db, "--out", "/proc/agentgym-site"],
        "cannot write",
    )


def test_verify_and_submit_refuse_bad_values(tiny_runs, tmp_path, capsys):
    run = str(tiny_runs["oracle"])
    refused(capsys, ["leaderboard", "verify", run, "--workers", "0"], "--workers 0")
    submit = ["submit", run, "--agent-name", "a", "--token", "t"]
    refused(capsys, [*submit, "--to", "ftp://board"], "'ftp://board' is not a board's address")
    refused(capsys, [*submit, "--to", "::::"], "'::::' is not a URL")
    refused(
        capsys, [*submit, "--to", "http://127.0.0.1:9", "--wait", "--timeout", "-1"], "--timeout"
    )
    rerun = ["leaderboard", "verify-rerun", "some-id", run, "--token", "t"]
    refused(capsys, [*rerun, "--to", "::::"], "is not a URL")


def test_a_token_never_begins_like_an_option(tmp_path, monkeypatch):
    # One bare base64url token in 64 began with "-", which `--token VALUE` reads as an option.
    monkeypatch.setattr(
        "agentgym.leaderboard.store.tokens.secrets.token_urlsafe", lambda n: "-" * n
    )
    with Store(tmp_path / "board.db") as store:
        store.migrate()
        token = store.create_token("alice", ["submit"])
        assert not token.startswith("-") and store.authorize(token, "submit").name == "alice"
