"""A process per session (``serve-env --isolation process``): the env runs in a child process,
so a crash takes that session only and a hung call can be ended by closing its session."""

from __future__ import annotations

import os
import signal
import time

import pytest
from remote.servers import running

import agentgym
from agentgym import remote
from agentgym.errors import EnvCrashedError, RemoteEnvError, TaskError

MAZE = "games/Maze-v0"


@pytest.fixture(scope="module")
def server():
    with running(isolation="process") as found:
        yield found


def _child_pid(server, env) -> int:
    session = server.table.sessions[env.unwrapped._link.session["session"]]
    return int(session.host.process.pid)


def test_the_checker_passes_with_a_process_per_session(server):
    report = agentgym.check_env(lambda: remote.make(server.url, MAZE), leak_cycles=10)
    assert "snapshot" in report.passed and "leaks" in report.passed
    assert report.oracle_mean_score == 1.0


def test_an_env_error_from_the_child_keeps_its_type(server):
    env = remote.make(server.url, MAZE)
    try:
        with pytest.raises(TaskError, match="no-such-task"):
            env.reset(seed=0, options={"task_id": "no-such-task"})
    finally:
        env.close()


def test_a_crashed_env_process_errors_its_session_only(server):
    crashed, other = remote.make(server.url, MAZE), remote.make(server.url, MAZE)
    try:
        crashed.reset(seed=0)
        other.reset(seed=0)
        action = crashed.unwrapped.oracle_action()
        os.kill(_child_pid(server, crashed), signal.SIGSEGV)
        with pytest.raises(EnvCrashedError, match="ended during 'step': exit code -11"):
            crashed.step(action)
        other.step(other.unwrapped.oracle_action())  # the other session goes on
    finally:
        crashed.close()
        other.close()
    _wait_for(lambda: len(server.table) == 0, "the crashed session's slot came back")


def test_closing_a_session_ends_a_hung_env_process():
    with running(isolation="process", lifetime_s=2.0) as server:
        env = remote.make(server.url, MAZE, reconnect_s=1.0)
        env.reset(seed=0)
        pid = _child_pid(server, env)
        os.kill(pid, signal.SIGSTOP)  # every call on it hangs from now on
        started = time.monotonic()
        with pytest.raises((EnvCrashedError, RemoteEnvError)):
            env.step(env.unwrapped.oracle_action())
        assert time.monotonic() - started < 20
        _wait_for(lambda: not _alive(pid), "the hung child was killed")
        assert len(server.table) == 0
        env.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead but not yet reaped
        return stat.read().split(") ", 1)[1][0] != "Z"


def _wait_for(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.05)


def test_a_whole_game_runs_in_a_process_of_its_own(server):
    report = agentgym.check_multiagent_env(
        lambda: remote.make_multi(server.url, "multiagent/TicTacToe-v0"), leak_cycles=5
    )
    assert "pettingzoo" in report.passed and report.oracle_mean_score == 1.0
