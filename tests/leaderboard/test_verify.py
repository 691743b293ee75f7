"""The ``verified`` tier and re-scoring on a new scorer version: a maintainer's re-run of the
same agent spec verifies a submission when the paired difference includes 0, is refused when
its agent spec differs, and is flagged when its results differ; a submission judged by another
scorer version is re-scored when the server starts, its old row kept.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from agentgym.cli import main
from agentgym.eval import evaluate
from agentgym.leaderboard.bundle import pack_bundle, read_bundle
from agentgym.leaderboard.rescore import rescore, scorer_version
from agentgym.leaderboard.server import create_app
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import SubmissionInfo

from .conftest import tiny_benchmark


def _bundle(run_dir: Path, tmp_path: Path) -> bytes:
    out = tmp_path / f"{run_dir.name}.tar.gz"
    return pack_bundle(run_dir, SubmissionInfo(agent=run_dir.name), out).read_bytes()


def _posing_as(run_dir: Path, agent: str, tmp_path: Path) -> Path:
    """A copy of a run whose manifest names another agent: its episodes stay its own."""
    copy = tmp_path / f"{run_dir.name}-as-{agent}"
    shutil.copytree(run_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["agent"] = agent
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def test_a_rerun_of_the_same_agent_verifies_and_another_is_refused_or_flagged(
    store, tiny, tiny_runs, serve, tmp_path, capsys
):
    store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
    submit, admin = (store.create_token(s, [s]) for s in ("submit", "admin"))
    app = create_app(store)
    live = serve(app)
    files = {"bundle": ("b.tar.gz", _bundle(tiny_runs["oracle"], tmp_path), "application/gzip")}
    sent = httpx.post(
        f"{live.url}/api/v1/submissions", files=files, headers={"Authorization": f"Bearer {submit}"}
    ).json()
    assert app.state.checker.wait(60)
    sid = sent["id"]

    def verify(run_dir: Path, token: str = admin) -> int:
        return main(["leaderboard", "verify-rerun", sid, str(run_dir), "--to", live.url,
                     "--token", token])  # fmt: skip

    def status() -> dict:
        return httpx.get(f"{live.url}/api/v1/submissions/{sid}").json()

    # Another agent's run: refused, nothing recorded.
    assert verify(tiny_runs["random"]) == 2
    err = capsys.readouterr().err
    assert "422" in err and "manifest's agent is 'random'" in err and "'oracle'" in err
    assert verify(tiny_runs["oracle"], token=submit) == 2  # a submit token is not enough
    assert "403" in capsys.readouterr().err
    assert len(status()["history"]) == 1

    # The random agent's episodes under the oracle's name: replayed, paired, flagged.
    assert verify(_posing_as(tiny_runs["random"], "oracle", tmp_path)) == 1
    out = capsys.readouterr().out
    assert out.startswith("not verified: re-run ") and "differs" in out
    found = status()
    assert found["tier"] == "re-scored" and len(found["history"]) == 2
    assert any("differs, not verified" in flag for flag in found["flags"])

    # The oracle run again: the same results, verified.
    rerun = evaluate(tiny_benchmark(), "oracle", tmp_path / "oracle-again").run_dir
    assert verify(rerun) == 0
    out = capsys.readouterr().out
    assert out.startswith("verified: verified by re-run ") and "success +0.0 points" in out
    found = status()
    assert found["tier"] == "verified" and [h["tier"] for h in found["history"]] == [
        "re-scored", "re-scored", "verified",
    ]  # fmt: skip
    history = store.rescore_history(sid)
    assert history[-1].rescore.episodes == history[0].rescore.episodes  # its own, unchanged
    board = httpx.get(f"{live.url}/api/v1/benchmarks/{tiny.name}/board").json()
    assert [row["submission"]["tier"] for row in board["rows"]] == ["verified"]
    audits = [e for e in store.audit_log(target=sid) if e.action == "verification.add"]
    assert [e.detail["verified"] for e in audits] == [True, False]
    assert all(store.has_blob(e.detail["rerun_bundle"]) for e in audits)
    assert audits[0].detail["difference"]["success"] == {"estimate": 0.0, "low": 0.0, "high": 0.0}


def test_a_new_scorer_version_re_scores_at_start_and_keeps_the_old_row(tmp_path, tiny, tiny_runs):
    with Store(tmp_path / "leaderboard.db") as store:
        store.migrate()
        record = store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
        admin = store.create_token("ops", ["admin"])
        ids = []
        for agent, tier in (("oracle", "verified"), ("random", "re-scored")):
            data = _bundle(tiny_runs[agent], tmp_path)
            bundle = read_bundle(data)
            sha = store.put_blob(data)
            found, _ = store.add_submission(record, sha, bundle.info, bundle.manifest, None)
            old = replace(
                rescore(bundle, tiny),
                tier=tier,
                scorer_version="agentgym 0.0.1; old verifiers",
                flags=["verified by re-run 0123456789ab by ops: ..."] if tier == "verified" else [],
            )
            store.add_rescore(found.id, old)
            ids.append(found.id)
        current = scorer_version(tiny)

        app = create_app(store)
        with TestClient(app) as client:
            assert app.state.checker.wait(60)
            for sid, tier in zip(ids, ("verified", "re-scored"), strict=True):
                history = store.rescore_history(sid)
                versions = [h.rescore.scorer_version for h in history]
                assert versions == ["agentgym 0.0.1; old verifiers", current]
                # The same verdicts under the new scorer: a verified entry stays verified.
                assert history[-1].rescore.tier == tier
            verified = store.latest_rescore(ids[0])
            assert any(f.startswith("verified by re-run") for f in verified.flags)

            headers = {"Authorization": f"Bearer {admin}"}
            assert client.post("/api/v1/rescore", headers=headers).json() == {"queued": []}
            missing = client.post("/api/v1/rescore?benchmark=nope", headers=headers)
            assert missing.status_code == 404
            assert client.post("/api/v1/rescore").status_code == 401

            # An old version again, on one benchmark only: queued by the endpoint.
            store.add_rescore(ids[1], replace(store.latest_rescore(ids[1]), scorer_version="x"))
            queued = client.post(f"/api/v1/rescore?benchmark={tiny.name}", headers=headers)
            assert queued.status_code == 202 and queued.json() == {"queued": [ids[1]]}
            assert app.state.checker.wait(60)
            assert store.latest_rescore(ids[1]).scorer_version == current
            assert len(store.rescore_history(ids[1])) == 4

        # A server that does not replay leaves stale rows alone: its own would not be replays.
        store.add_rescore(ids[1], replace(store.latest_rescore(ids[1]), scorer_version="y"))
        with TestClient(create_app(store, replay=False)) as client:
            headers = {"Authorization": f"Bearer {admin}"}
            assert client.post("/api/v1/rescore", headers=headers).json() == {"queued": []}
            assert store.latest_rescore(ids[1]).scorer_version == "y"
