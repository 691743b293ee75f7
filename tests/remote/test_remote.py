"""The env server and its client (issue 32, items 1 and 2): OpenEnv's own client over both
transports, the conformance checker on remote envs, and the faults — a retried step, a dropped
connection, 1,000 connections dropped without a close, a killed server, a drain, a lapsed
lifetime — each ending in the right answer or a typed error, never a hang."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import time
from pathlib import Path

import gymnasium
import httpx
import pytest
from remote import load
from remote.servers import running, subprocess_server
from websockets.sync.client import connect

import agentgym
from agentgym import remote
from agentgym.errors import RemoteEnvError, ServerBusyError, UsageError

MAZE = "games/Maze-v0"
MATH = "reasoning/Math-v1"


def _local_oracle(env_id: str, seed: int) -> tuple[str, object]:
    """The local env's first observation and oracle action for ``seed``."""
    env = agentgym.make(env_id)
    try:
        observation, _ = env.reset(seed=seed)
        return observation, env.unwrapped.oracle_action()
    finally:
        env.close()


# --------------------------------------------------------------------------- OpenEnv's client


def test_openenv_client_resets_and_steps_over_websocket():
    openenv = pytest.importorskip("openenv.core")
    observation, action = _local_oracle(MAZE, 3)
    with running(env_ids=(MAZE,)) as server:
        client = openenv.GenericEnvClient(base_url=server.url).sync()
        with client:
            result = client.reset(seed=3)
            assert result.observation["value"] == observation and result.done is False
            result = client.step({"value": action})
            assert result.reward == 0.0 and "state_key" in result.observation["info"]
            assert client.state()["step_count"] == 1
        deadline = time.monotonic() + 10
        while len(server.table) and time.monotonic() < deadline:  # its close frees the slot
            time.sleep(0.01)
        assert len(server.table) == 0


def test_openenv_models_read_the_http_fallback():
    types = pytest.importorskip("openenv.core.env_server.types")
    observation, action = _local_oracle(MAZE, 5)
    with running(env_ids=(MAZE,)) as server, httpx.Client(base_url=server.url) as http:
        reset = http.post("/reset", json=types.ResetRequest(seed=5).model_dump(exclude_unset=True))
        assert reset.status_code == 200
        assert types.ResetResponse.model_validate(reset.json()).observation["value"] == observation
        session = {k: reset.headers[k] for k in ("x-session-id", "x-session-token")}
        request = types.StepRequest(action={"value": action}).model_dump(exclude_none=True)
        step = http.post("/step", json=request, headers=session)
        assert types.StepResponse.model_validate(step.json()).done is False
        assert (
            types.State.model_validate(http.get("/state", headers=session).json()).step_count == 1
        )
        assert types.HealthResponse.model_validate(http.get("/health").json()).status == "healthy"
        types.SchemaResponse.model_validate(http.get("/schema").json())
        types.EnvironmentMetadata.model_validate(http.get("/metadata").json())
        # an env's error is a typed error answer, never a 200 with an error inside
        lost = http.post("/step", json=request)
        assert lost.status_code == 404 and lost.json()["error"]["code"] == "NO_SESSION"
        fresh = http.post("/reset", json={}).headers
        early = {k: fresh[k] for k in ("x-session-id", "x-session-token")}
        http.post("/close", headers=session)
        http.post("/close", headers=early)


def test_an_env_error_keeps_its_type_and_status():
    with running(env_ids=(MAZE,)) as server, httpx.Client(base_url=server.url) as http:
        opened = http.post("/reset", json={"seed": 0}).headers
        session = {k: opened[k] for k in ("x-session-id", "x-session-token")}
        wrong = http.post("/reset", json={"seed": "zero"}, headers=session)
        assert wrong.status_code == 400 and wrong.json()["error"]["error"] == "UsageError"
        env = remote.make(server.url, MAZE)
        with pytest.raises(gymnasium.error.ResetNeeded):  # as the local env raises it
            env.step("up")
        env.close()
        metrics = http.get("/metrics").text
        assert 'agentgym_env_errors_total{code="RESET_NEEDED"} 1' in metrics
        assert 'agentgym_env_errors_total{code="USAGE_ERROR"} 1' in metrics
        http.post("/close", headers=session)


# --------------------------------------------------------------------------- the checker


@pytest.mark.parametrize("env_id", [MAZE, MATH])
def test_the_checker_passes_on_a_remote_env(server, env_id):
    report = agentgym.check_env(lambda: remote.make(server.url, env_id), leak_cycles=30)
    assert "snapshot" in report.passed and "leaks" in report.passed
    assert report.oracle_mean_score == 1.0
    assert repr(remote.make(server.url, env_id, max_episode_steps=3)).startswith("<TimeLimit")


@pytest.mark.browser
def test_the_checker_passes_on_a_remote_web_env(server):
    """A web env (Chromium, Playwright's sync API, bound to the session's thread)."""
    pytest.importorskip("playwright")
    report = agentgym.check_env(
        lambda: remote.make(server.url, "miniwob/click_button-v0"), leak_cycles=10
    )
    assert "leaks" in report.passed and report.oracle_mean_score == 1.0


# --------------------------------------------------------------------------- faults


def _ask(socket, message):
    socket.send(json.dumps(message))
    return json.loads(socket.recv(timeout=30))


def test_a_retried_step_applies_once_even_on_another_connection(server):
    _, action = _local_oracle(MAZE, 1)
    url = server.url.replace("http", "ws") + "/ws"
    with connect(url) as first, connect(url) as again:
        _retry_on(first, again, action)


def _retry_on(first, again, action):
    session = _ask(first, {"type": "open", "data": {"env_id": MAZE}})["data"]
    _ask(first, {"type": "reset", "data": {"seed": 1}, "seq": 1})
    step = {"type": "step", "data": {"value": action}, "seq": 2}
    answer = _ask(first, step)
    assert _ask(first, step) == answer  # the same answer, not a second move
    first.socket.close()  # dropped: no close frame, no close message
    attach = {"session": session["session"], "token": session["token"]}
    assert _ask(again, {"type": "attach", "data": attach})["type"] == "session"
    assert _ask(again, step) == answer
    assert _ask(again, {"type": "state", "seq": 3})["data"]["step_count"] == 1
    stale = _ask(again, {"type": "step", "data": {"value": action}, "seq": 1})
    assert stale["data"]["code"] == "OUT_OF_ORDER"
    wrong = _ask(again, {"type": "attach", "data": {**attach, "token": "guess"}})
    assert wrong["data"]["code"] == "NO_SESSION"
    again.send(json.dumps({"type": "close"}))


def test_a_step_retried_after_a_timeout_applies_once():
    """The first reply comes after the client's deadline: it reconnects and sends the step
    again; the server answers the retry with the first one's result, applied once."""
    local = agentgym.make(MAZE)
    local.reset(seed=4)
    action = local.unwrapped.oracle_action()
    expected = local.step(action)[0]
    with running() as server:
        env = remote.make(server.url, MAZE, reply_timeout_s=0.3)
        env.reset(seed=4)
        (session,) = server.table.sessions.values()
        applied = []
        step = session.host.step

        def slow_step(action):
            applied.append(action)
            time.sleep(1.0)  # past the client's 0.3 s deadline
            return step(action)

        session.host.step = slow_step
        assert env.step(action)[0] == expected
        assert applied == [action] and session.steps == 1
        env.close()
    local.close()


def test_the_client_reattaches_after_a_dropped_connection(server):
    env = remote.make(server.url, MAZE)
    local = agentgym.make(MAZE)
    env.reset(seed=2)
    local.reset(seed=2)
    env.unwrapped._link.socket.socket.close()  # the connection drops under the client
    action = local.unwrapped.oracle_action()
    assert env.step(action)[0] == local.step(action)[0]
    env.close()
    local.close()


def test_dropped_connections_free_their_slots_when_leases_lapse():
    count, lease = 1_000, 5.0  # long enough to open them all before the first lapses
    with running(capacity=count, lease_s=lease) as server:
        asyncio.run(load.drop_connections(server.url, MAZE, count))
        assert httpx.get(f"{server.url}/ready").status_code == 503
        with pytest.raises(ServerBusyError):
            remote.make(server.url, MAZE)
        deadline = time.monotonic() + lease + 30
        while len(server.table):
            assert time.monotonic() < deadline, f"{len(server.table)} sessions never lapsed"
            time.sleep(0.1)
        assert httpx.get(f"{server.url}/ready").status_code == 200
        env = remote.make(server.url, MAZE)
        env.reset(seed=0)
        env.close()
        metrics = httpx.get(f"{server.url}/metrics").text
        assert f'agentgym_env_sessions_closed_total{{reason="lease"}} {count}' in metrics


def test_a_session_ends_at_the_lifetime_cap_however_busy():
    with running(lifetime_s=1.0) as server:
        env = remote.make(server.url, MAZE, reconnect_s=1.0)
        deadline = time.monotonic() + 30
        with pytest.raises(RemoteEnvError, match="NO_SESSION"):
            while time.monotonic() < deadline:
                env.reset(seed=0)
                time.sleep(0.05)
        env.close()


def test_a_killed_server_is_a_typed_error_not_a_hang():
    with subprocess_server(MAZE) as (child, url):
        env = remote.make(url, MAZE, reconnect_s=2.0, reply_timeout_s=10.0)
        env.reset(seed=0)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        started = time.monotonic()
        with pytest.raises(RemoteEnvError, match="could not be reached again"):
            env.step("up")
        assert time.monotonic() - started < 10
        env.close()


def test_sigterm_drains_the_episodes_in_progress():
    with subprocess_server(MAZE, "--drain", "60") as (child, url):
        env = remote.make(url, MAZE)
        env.reset(seed=0)
        child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/ready").status_code != 503:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(ServerBusyError):
            remote.make(url, MAZE)
        env.step("up")  # the episode in progress goes on
        assert child.poll() is None
        with pytest.raises(ServerBusyError, match="DRAINING"):
            env.reset(seed=1)  # but no new one starts
        env.close()  # its session closed, nothing is in progress: the server exits
        assert child.wait(timeout=30) == 0


def test_a_bearer_token_is_required_where_set():
    with running(token="s3cret") as server:
        with pytest.raises(RemoteEnvError, match="token"):
            remote.make(server.url, MAZE)
        env = remote.make(server.url, MAZE, token="s3cret")
        env.reset(seed=0)
        env.close()
        assert httpx.get(f"{server.url}/health").status_code == 200
        assert httpx.get(f"{server.url}/metrics").status_code == 401
        assert httpx.post(f"{server.url}/reset", json={}).status_code == 401


def test_bad_urls_and_ids_are_one_clear_line(server):
    with pytest.raises(UsageError, match="http://HOST:PORT"):
        remote.make("127.0.0.1:1", MAZE)
    with pytest.raises(agentgym.UnknownEnvError, match="Did you mean"):
        remote.make(server.url, "games/Maze-v9")
    nobody = socket.socket()
    nobody.bind(("127.0.0.1", 0))  # a port that nothing listens on
    started = time.monotonic()
    with pytest.raises(RemoteEnvError, match="could not be reached"):
        remote.make(f"http://127.0.0.1:{nobody.getsockname()[1]}", MAZE, reconnect_s=0.5)
    assert time.monotonic() - started < 5
    nobody.close()


def test_the_guide_runs_as_written(capsys):
    """docs/serving.md's Python blocks, in order, against a server of the guide's ids."""
    guide = (Path(__file__).parents[2] / "docs" / "serving.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, flags=re.DOTALL)
    assert len(blocks) == 3
    with running(env_ids=("games/Wordle-v0", "multiagent/TicTacToe-v0")) as server:
        for block in blocks:
            code = block.replace("http://127.0.0.1:8765", server.url)
            exec(compile(code, "docs/serving.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("<TimeLimit<RemoteEnv<games/Wordle-v0") and "True" in printed[0]
    assert printed[1].split()[2] == "1"


def test_a_multi_agent_id_is_served_seated(server):
    env = remote.make(server.url, "multiagent/ConnectFour-v0", opponent="random")
    observation, info = env.reset(seed=0)
    assert isinstance(observation, str) and "state_key" in info
    env.close()


@pytest.mark.parametrize("env_id", ["multiagent/TicTacToe-v0", "multiagent/RockPaperScissors-v0"])
def test_the_multi_agent_checker_passes_on_a_remote_game(server, env_id):
    report = agentgym.check_multiagent_env(
        lambda: remote.make_multi(server.url, env_id), leak_cycles=10
    )
    assert "pettingzoo" in report.passed and "leaks" in report.passed
    assert report.oracle_mean_score == 1.0
