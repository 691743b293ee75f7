"""The leaderboard's store, on SQLite and on PostgreSQL (the ``store`` fixture runs each test
on both): what goes in comes out exactly, tokens are kept as hashes, every write is audited,
the migrated schema is the tables' schema, and the board is read in a fixed number of queries.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import event, inspect, select, text

from agentgym.errors import UsageError
from agentgym.leaderboard.results import Rescore, ScoredEpisode
from agentgym.leaderboard.store import (
    AuthError,
    Base,
    ConflictError,
    NotFoundError,
    Store,
    StoreError,
    TokenRow,
)
from agentgym.leaderboard.submission import SubmissionInfo

SPEC_HASH = "5" * 64
INJECTION = "'); DROP TABLE submissions; --"


def episode(i: int, **changes: object) -> ScoredEpisode:
    fields: dict[str, object] = {
        "episode_id": f"games/Nim-v0|t{i}|0", "env_id": "games/Nim-v0", "task_id": f"t{i}",
        "repeat": 0, "seed": 1_000 + i, "outcome": "ok", "passed": i % 2 == 0,
        "score": 1.0 if i % 2 == 0 else 0.0, "claimed_score": 1.0, "steps": 3 + i,
        "prompt_tokens": 100 * i, "completion_tokens": 7 * i,
    }  # fmt: skip
    fields.update(changes)
    return ScoredEpisode(**fields)  # type: ignore[arg-type]


def rescore(episodes: int = 3, *, tier: str = "re-scored", scorer: str = "0.1.0") -> Rescore:
    return Rescore(
        benchmark="nim-suite",
        benchmark_version=1,
        benchmark_hash=SPEC_HASH,
        tier=tier,  # type: ignore[arg-type]
        episodes=[episode(i) for i in range(episodes)],
        scorer_version=scorer,
        flags=[],
        seconds=0.25,
    )


def submit(store: Store, body: bytes, *, agent: str = "nim-bot", method: str = "standard"):
    """A stored bundle submitted by a fresh submit token: (submission, token)."""
    bench = store.add_benchmark("nim-suite", 1, SPEC_HASH, {"envs": ["games/Nim-v0"]})
    name = f"submitter-{hashlib.sha256(body).hexdigest()[:8]}"
    token = store.authorize(store.create_token(name, ["submit"]), "submit")
    sha = store.put_blob(body)
    info = SubmissionInfo(agent=agent, model="m", method=method)  # type: ignore[arg-type]
    submission, new = store.add_submission(bench, sha, info, {"agentgym": "0.1.0"}, token)
    assert new
    return submission, token


# -- schema ------------------------------------------------------------------------------------


def test_the_migrated_schema_is_the_tables_schema(store):
    store.migrate()  # a second upgrade is a no-op
    with store.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
        assert set(inspect(connection).get_table_names()) == {
            *Base.metadata.tables,
            "alembic_version",
        }


def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path):
    with Store(tmp_path / "board" / "leaderboard.db") as store:
        assert store.blob_dir == tmp_path / "board" / "blobs"
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_a_server_database_needs_a_blob_folder():
    with pytest.raises(UsageError, match="blob_dir"):
        Store("postgresql://nobody@/nowhere")


# -- tokens ------------------------------------------------------------------------------------


def test_only_the_hash_of_a_token_is_stored(store):
    plaintext = store.create_token("alice", ["submit"])
    with store.engine.connect() as connection:
        stored = connection.execute(select(TokenRow.__table__)).one()
    assert plaintext not in [str(value) for value in stored]
    assert stored.token_sha256 == hashlib.sha256(plaintext.encode()).hexdigest()


def test_a_token_authorizes_its_scopes_and_records_its_use(store):
    plaintext = store.create_token("alice", ["submit"])
    token = store.authorize(plaintext, "submit")
    assert (token.name, token.scopes, token.revoked_at) == ("alice", ("submit",), None)
    assert token.last_used_at is not None and token.last_used_at >= token.created_at
    with pytest.raises(AuthError, match="may not admin") as refused:
        store.authorize(plaintext, "admin")
    assert refused.value.reason == "lacks scope"


def test_an_admin_token_may_also_submit(store):
    assert store.authorize(store.create_token("root", ["admin"]), "submit").name == "root"


@pytest.mark.parametrize("plaintext", ["", "not-a-token", INJECTION])
def test_an_unknown_token_is_refused(store, plaintext):
    store.create_token("alice", ["submit"])
    with pytest.raises(AuthError) as refused:
        store.authorize(plaintext, "submit")
    assert refused.value.reason == "unknown"


def test_a_revoked_token_is_refused(store):
    plaintext = store.create_token("alice", ["submit"])
    store.revoke("alice", actor="root")
    store.revoke("alice", actor="root")
    with pytest.raises(AuthError, match="revoked") as refused:
        store.authorize(plaintext, "submit")
    assert refused.value.reason == "revoked"
    assert store.tokens()[0].revoked_at is not None


def test_token_names_are_never_reused_and_scopes_are_checked(store):
    store.create_token("alice", ["submit"])
    store.revoke("alice")
    with pytest.raises(ConflictError, match="alice"):
        store.create_token("alice", ["submit"])
    with pytest.raises(UsageError, match="scopes"):
        store.create_token("bob", ["write"])  # type: ignore[list-item]
    with pytest.raises(NotFoundError):
        store.revoke("carol")


# -- blobs -------------------------------------------------------------------------------------


def test_a_blob_is_stored_once_under_its_hash(store, tmp_path):
    sha = store.put_blob(b"bundle bytes")
    assert sha == hashlib.sha256(b"bundle bytes").hexdigest()
    assert store.blob_path(sha) == store.blob_dir / sha[:2] / sha[2:4] / sha
    source = tmp_path / "bundle.tar"
    source.write_bytes(b"bundle bytes")
    assert store.put_blob(source) == sha
    assert store.has_blob(sha) and store.get_blob(sha) == b"bundle bytes"
    assert list((store.blob_dir / "tmp").iterdir()) == []
    assert [e.action for e in store.audit_log()].count("blob.put") == 1


def test_an_unknown_or_changed_blob_is_an_error(store):
    missing = hashlib.sha256(b"never stored").hexdigest()
    assert not store.has_blob(missing)
    with pytest.raises(NotFoundError):
        store.get_blob(missing)
    sha = store.put_blob(b"original")
    path = store.blob_path(sha)
    path.chmod(0o644)
    path.write_bytes(b"tampered")
    with pytest.raises(StoreError, match="no longer holds"):
        store.get_blob(sha)


@pytest.mark.parametrize("name", ["../../etc/passwd", "ABC", "a" * 63])
def test_a_blob_name_is_a_sha256_digest(store, name):
    with pytest.raises(UsageError, match="sha256"):
        store.blob_path(name)


# -- benchmarks --------------------------------------------------------------------------------


def test_a_benchmark_version_is_its_spec(store):
    first = store.add_benchmark("nim-suite", 1, SPEC_HASH, {"envs": ["games/Nim-v0"]})
    assert store.add_benchmark("nim-suite", 1, SPEC_HASH, {"envs": ["games/Nim-v0"]}) == first
    with pytest.raises(ConflictError, match="new version"):
        store.add_benchmark("nim-suite", 1, "6" * 64, {"envs": []})
    second = store.add_benchmark("nim-suite", 2, "6" * 64, {"envs": []})
    assert store.benchmark("nim-suite") == second
    assert store.benchmark("nim-suite", 1).spec == {"envs": ["games/Nim-v0"]}
    with pytest.raises(NotFoundError):
        store.benchmark("nim-suite", 3)


# -- submissions -------------------------------------------------------------------------------


def test_the_same_bundle_twice_is_one_submission(store):
    submission, token = submit(store, b"run one")
    bench = store.benchmark("nim-suite")
    again, new = store.add_submission(
        bench, submission.bundle_sha, SubmissionInfo(agent="other"), {}, token
    )
    assert not new and again == submission
    assert len(store.submissions("nim-suite")) == 1


def test_a_submission_is_read_back_as_it_went_in(store):
    submission, token = submit(store, b"run one")
    assert store.submission(submission.id) == submission
    assert (submission.benchmark, submission.benchmark_version) == ("nim-suite", 1)
    assert (submission.token_name, submission.status) == (token.name, "received")
    assert submission.manifest == {"agentgym": "0.1.0"}
    assert submission.info == SubmissionInfo(agent="nim-bot", model="m")


def test_submitted_text_is_stored_as_given(store):
    """Every text field holds SQL: queries are parameterised, so it is only text."""
    bench = store.add_benchmark("nim-suite", 1, SPEC_HASH, {})
    token = store.authorize(store.create_token(INJECTION, ["submit"]), "submit")
    info = SubmissionInfo(
        agent=INJECTION, model=INJECTION, model_revision=INJECTION, method="custom",
        code_hash="abcdef1", contact=INJECTION + " <b>x</b>", notes=INJECTION + "\n\t\u00e9\u6f22",
    )  # fmt: skip
    sha = store.put_blob(INJECTION.encode())
    submission, _ = store.add_submission(bench, sha, info, {INJECTION: [INJECTION]}, token)
    stored = store.submissions("nim-suite")
    assert [s.info for s in stored] == [info] and stored[0].manifest == {INJECTION: [INJECTION]}
    assert stored[0].token_name == INJECTION
    store.set_status(submission.id, "rejected", reason=INJECTION)
    assert store.submission(submission.id).reject_reason == INJECTION
    assert store.submissions(INJECTION) == []


def test_a_submission_needs_a_stored_bundle(store):
    bench = store.add_benchmark("nim-suite", 1, SPEC_HASH, {})
    with pytest.raises(ConflictError, match="put_blob"):
        store.add_submission(bench, "0" * 64, SubmissionInfo(agent="x"), {}, None)


def test_a_rejection_has_a_reason(store):
    submission, _ = submit(store, b"run one")
    with pytest.raises(UsageError, match="reason"):
        store.set_status(submission.id, "rejected")
    store.set_status(submission.id, "rejected", reason="3 episodes missing", actor="root")
    stored = store.submission(submission.id)
    assert (stored.status, stored.reject_reason) == ("rejected", "3 episodes missing")
    with pytest.raises(NotFoundError):
        store.set_status("no-such-id", "checking")


def test_submissions_since_counts_a_tokens_recent_submissions(database_url, tmp_path):
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    with Store(database_url, blob_dir=tmp_path / "blobs", clock=lambda: now[0]) as store:
        store.migrate()
        _, token = submit(store, b"run one")
        bench = store.benchmark("nim-suite")
        for hours in (1, 2):
            now[0] += timedelta(hours=hours)
            sha = store.put_blob(f"run {hours}".encode())
            store.add_submission(bench, sha, SubmissionInfo(agent="x"), {}, token)
        start = datetime(2026, 1, 1, tzinfo=UTC)
        assert store.submissions_since(token, start) == 3
        assert store.submissions_since(token, start + timedelta(minutes=30)) == 2
        assert store.submissions_since(token, now[0] + timedelta(seconds=1)) == 0


# -- rescores ----------------------------------------------------------------------------------


def test_the_latest_rescore_comes_back_exactly(store):
    submission, _ = submit(store, b"run one")
    assert store.latest_rescore(submission.id) is None
    odd = [
        episode(0, seed=None, claimed_score=None, reason=None),
        episode(1, outcome="mismatch", reason=f"obs differs: {INJECTION}", score=0.0),
        episode(2, score=0.1 + 0.2, seed=2**62, oracle_like=True, outcome="truncated"),
        episode(3, outcome="missing", passed=False, score=0.0, steps=0, claimed_score=None),
        episode(4, outcome="errored", reason="EnvCrashedError", prompt_tokens=2**40),
    ]
    went_in = Rescore(
        "nim-suite", 1, SPEC_HASH, "re-scored", odd, "0.1.0+nim-1", ["oracle-like: t2"], 1 / 3
    )
    store.add_rescore(submission.id, went_in)
    assert store.latest_rescore(submission.id) == went_in
    assert store.submission(submission.id).status == "scored"


def test_rescores_are_kept_as_history(store):
    submission, _ = submit(store, b"run one")
    older, newer = rescore(scorer="0.1.0"), rescore(2, scorer="0.2.0", tier="self-reported")
    store.add_rescore(submission.id, older)
    store.add_rescore(submission.id, newer)
    assert store.latest_rescore(submission.id) == newer
    history = store.rescore_history(submission.id)
    assert [h.rescore for h in history] == [older, newer]
    assert history[0].computed_at <= history[1].computed_at


def test_a_rescore_does_not_overturn_a_rejection(store):
    submission, _ = submit(store, b"run one")
    store.set_status(submission.id, "rejected", reason="oracle actions", actor="root")
    store.add_rescore(submission.id, rescore(scorer="0.2.0"))
    assert store.submission(submission.id).status == "rejected"
    with pytest.raises(NotFoundError):
        store.add_rescore("no-such-id", rescore())


# -- the board ---------------------------------------------------------------------------------


def test_the_board_shows_each_scored_submissions_latest_rescore(store):
    ranked, _ = submit(store, b"ranked")
    downgraded, _ = submit(store, b"downgraded")
    custom, _ = submit(store, b"custom", method="custom")
    waiting, _ = submit(store, b"waiting")
    rejected, _ = submit(store, b"rejected")
    store.add_rescore(ranked.id, rescore(scorer="0.1.0"))
    store.add_rescore(ranked.id, rescore(4, scorer="0.2.0", tier="verified"))
    store.add_rescore(downgraded.id, rescore())
    store.add_rescore(downgraded.id, rescore(tier="self-reported", scorer="0.2.0"))
    store.add_rescore(custom.id, rescore())
    store.add_rescore(rejected.id, rescore())
    store.set_status(rejected.id, "rejected", reason="copied run")

    board = store.board_entries("nim-suite")
    assert [(s.id, r.scorer_version, len(r.episodes)) for s, r in board] == [
        (ranked.id, "0.2.0", 4),
        (custom.id, "0.1.0", 3),
    ]
    assert board[0][1] == store.latest_rescore(ranked.id)
    assert board[0][0].status == "scored" and waiting.id not in {s.id for s, _ in board}
    every_tier = store.board_entries("nim-suite", tiers=("self-reported", "re-scored", "verified"))
    assert [s.id for s, _ in every_tier] == [ranked.id, downgraded.id, custom.id]
    assert [s.id for s, _ in store.board_entries("nim-suite", method="custom")] == [custom.id]
    with pytest.raises(UsageError, match="tiers"):
        store.board_entries("nim-suite", tiers=("gold",))  # type: ignore[arg-type]


def test_the_board_is_read_in_a_fixed_number_of_queries(store):
    """No query per submission or per re-score (the N+1 a lazy ORM read would make)."""

    def queries_for_board(submissions: int) -> int:
        while len(store.submissions()) < submissions:
            sub, _ = submit(store, f"run {len(store.submissions())}".encode())
            store.add_rescore(sub.id, rescore(5))
        statements: list[str] = []
        listener = lambda *args: statements.append(args[2])  # noqa: E731
        event.listen(store.engine, "before_cursor_execute", listener)
        try:
            assert len(store.board_entries("nim-suite")) == submissions
        finally:
            event.remove(store.engine, "before_cursor_execute", listener)
        return len([s for s in statements if s.lstrip().upper().startswith("SELECT")])

    assert queries_for_board(2) == queries_for_board(12) == 3


# -- audit -------------------------------------------------------------------------------------


def test_every_write_is_audited_with_its_actor(store):
    store.create_token("root", ["admin"], actor="system")
    submission, token = submit(store, b"run one")
    store.set_status(submission.id, "checking", actor="root")
    store.add_rescore(submission.id, rescore(), actor="root")
    store.revoke(token.name, actor="root")
    entries = [(e.actor, e.action) for e in reversed(store.audit_log())]
    assert entries == [
        ("system", "token.create"),
        ("system", "benchmark.add"),
        ("system", "token.create"),
        ("system", "blob.put"),
        (token.name, "submission.add"),
        ("root", "submission.status"),
        ("root", "rescore.add"),
        ("root", "token.revoke"),
    ]
    (status,) = store.audit_log(target=submission.id, limit=1)
    assert status.action == "rescore.add" and status.detail["episodes"] == 3


def test_a_failed_write_leaves_no_audit_entry(store):
    store.add_benchmark("nim-suite", 1, SPEC_HASH, {})
    before = store.audit_log()
    with pytest.raises(ConflictError):
        store.add_benchmark("nim-suite", 1, "6" * 64, {})
    assert store.audit_log() == before


def test_audit_times_are_aware_utc(store):
    store.create_token("alice", ["submit"])
    (entry,) = store.audit_log()
    assert entry.at.tzinfo is UTC
    assert abs(datetime.now(UTC) - entry.at) < timedelta(minutes=5)
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM audit_log")).scalar() == 1


def test_a_store_closes_twice(tmp_path: Path):
    store = Store(tmp_path / "leaderboard.db")
    store.close()
    store.close()


def test_concurrent_writers_wait_for_sqlites_lock_instead_of_failing(tmp_path: Path):
    """Threads that each read then write (``authorize`` records a last use) must queue for
    SQLite's write lock: a deferred transaction would fail at once with "database is locked"
    when another thread committed between its read and its write (the server's threads)."""
    import threading

    store = Store(tmp_path / "board.db")
    store.migrate()
    token = store.create_token("writer", ["submit"])
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        for round_ in range(40):
            try:
                store.authorize(token, "submit")
                store.create_token(f"t{worker}-{round_}", ["submit"])
            except BaseException as error:
                errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()
    assert errors == []
