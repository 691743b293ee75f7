"""The evaluator over env servers (``evaluate(..., env_servers=[...])``, ``--env-server``):
the same records as a local run but for timing, the load spread, and a server killed
mid-run costing no episode (the engine retries it on the server still up)."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest
from remote.servers import running, subprocess_server
from slow_oracle import SlowOracle, without_timing

from agentgym.errors import UsageError
from agentgym.eval import evaluate, read_manifest
from agentgym.eval.servers import EnvServers

pytest.importorskip("websockets")

SUITE = {"env": "games/Maze-v0", "tasks": 6, "num_envs": 4}


def ledger(run_dir: Path) -> list[dict]:
    lines = (run_dir / "episodes.jsonl").read_text().splitlines()
    return [without_timing(json.loads(line)) for line in lines]


@pytest.mark.parametrize("agent", ["oracle", "random"])
def test_records_equal_a_local_runs_on_one_server_and_on_two(tmp_path, agent):
    evaluate(agent=agent, out=tmp_path / "local", **SUITE)
    with running() as one, running() as two:
        evaluate(agent=agent, out=tmp_path / "one", env_servers=[one.url], **SUITE)
        evaluate(agent=agent, out=tmp_path / "two", env_servers=[one.url, two.url], **SUITE)
        served = [one.table.metrics.opened, two.table.metrics.opened]
    local = ledger(tmp_path / "local")
    assert ledger(tmp_path / "one") == local
    assert ledger(tmp_path / "two") == local
    assert read_manifest(tmp_path / "two")["env_servers"] == [one.url, two.url]
    assert read_manifest(tmp_path / "local")["env_servers"] is None
    # The first server took the first run's 6 sessions; both shared the second run's 6.
    assert served[0] > 6 and served[1] > 0 and sum(served) == 12, served


def test_each_episode_goes_to_the_server_with_the_fewest_in_flight():
    servers = EnvServers(["http://a:1", "http://b:2", "http://c:3"])
    taken = [servers._take() for _ in range(3)]
    assert sorted(taken) == ["http://a:1", "http://b:2", "http://c:3"]
    servers._release("http://b:2")
    assert servers._take() == "http://b:2"  # the only one with none in flight
    servers._failed("http://a:1")
    for url in servers.urls:
        servers.in_flight[url] = 0
    assert "http://a:1" not in {servers._take(), servers._take()}  # down: passed over


def test_the_token_is_sent_and_never_recorded(tmp_path, monkeypatch):
    with running(token="s3cret") as server:
        monkeypatch.setenv("AGENTGYM_SERVER_TOKEN", "s3cret")
        result = evaluate(agent="oracle", out=tmp_path / "run", env_servers=[server.url], **SUITE)
    assert result.summary["overall"]["errored"] == 0
    assert "s3cret" not in (tmp_path / "run" / "manifest.json").read_text()


@pytest.mark.parametrize(
    ("servers", "why"),
    [("http://a:1", "list of URLs"), ([], "empty"), (["a:1"], "not a server's URL")],
)
def test_a_bad_server_list_is_one_clear_line(tmp_path, servers, why):
    with pytest.raises(UsageError, match=why):
        evaluate(agent="oracle", out=tmp_path / "run", env_servers=servers, **SUITE)
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_server_killed_mid_run_loses_no_episode(tmp_path):
    """Server A dies with episodes in flight: each raises RemoteEnvError (within the
    client's reconnect time), the engine plays it again from its start on server B, and
    the ledger equals a local run's but for timing."""
    suite = {"env": "games/Maze-v0", "tasks": 10, "num_envs": 4}
    evaluate(agent=SlowOracle, out=tmp_path / "local", **suite)
    with subprocess_server() as (doomed, url_a), subprocess_server() as (_, url_b):
        written = tmp_path / "remote" / "episodes.jsonl"

        def kill_after_two() -> None:
            while not written.exists() or len(written.read_text().splitlines()) < 2:
                time.sleep(0.01)
            doomed.send_signal(signal.SIGKILL)

        threading.Thread(target=kill_after_two, daemon=True).start()
        result = evaluate(
            agent=SlowOracle, out=tmp_path / "remote", env_servers=[url_a, url_b], **suite
        )
    assert doomed.poll() is not None, "the server was not killed during the run"
    assert result.summary["overall"]["errored"] == 0
    assert ledger(tmp_path / "remote") == ledger(tmp_path / "local")


def test_agentgym_eval_takes_env_servers_and_their_token(tmp_path, monkeypatch, capsys):
    from agentgym.cli import main

    monkeypatch.delenv("AGENTGYM_SERVER_TOKEN", raising=False)
    with running(token="t0k") as server:
        out = tmp_path / "run"
        flags = ["--env-server", server.url, "--env-server-token", "t0k"]
        command = ["eval", "--env", "games/Maze-v0", "--tasks", "2", "--agent", "oracle"]
        assert main([*command, "--out", str(out), *flags]) == 0
        opened = server.table.metrics.opened
    assert "100.0%" in capsys.readouterr().out
    assert read_manifest(out)["env_servers"] == [server.url] and opened == 2
