"""The agentgym command, run as a user would: in a subprocess, and `play` through a pty."""

import os
import pty
import select
import subprocess
import sys
import time

AGENTGYM = [sys.executable, "-m", "agentgym.cli"]


def run(*args, stdin=None):
    return subprocess.run(
        [*AGENTGYM, *args], input=stdin, capture_output=True, text=True, timeout=300
    )


def test_list_shows_ids_with_task_counts():
    out = run("list", "--grep", "towerofhanoi").stdout
    assert "games/TowerOfHanoi-v0  env   300k/3000/3000" in out
    assert out.strip().endswith("1 envs in 1 families (games)")


def test_info_shows_the_doc_page_spaces_and_splits():
    out = run("info", "games/TowerOfHanoi-v0").stdout
    assert "What the agent sees." in out and "**" not in out  # reST rendered plain
    assert "actions          Text(min_length=0, max_length=4096)" in out
    assert "split test       3000 tasks, e.g. test/easy/0" in out


def test_an_unknown_id_is_a_one_line_error_with_a_suggestion():
    result = run("info", "games/Hanoi-v0")
    assert result.returncode == 2
    assert result.stderr.startswith("agentgym: no env is registered as 'games/Hanoi-v0'.")
    assert "Traceback" not in result.stderr


def test_check_reports_conformance():
    result = run("check", "games/TowerOfHanoi-v0", "--leak-cycles", "20")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok    games/TowerOfHanoi-v0: 10 checks passed" in result.stdout


def test_play_through_stdin_reaches_the_verdict():
    # easy task 0 of dev: ask the oracle for hints and type them in
    moves = []
    import agentgym

    env = agentgym.make("games/TowerOfHanoi-v0").unwrapped
    env.reset(options={"task_id": "dev/easy/0"})
    while (move := env.oracle_action()) is not None:
        moves.append(move)
        env.step(move)
    script = "\n".join(["nonsense", ":hint", *moves]) + "\n"
    out = run("play", "games/TowerOfHanoi-v0", "--task-id", "dev/easy/0", stdin=script).stdout
    assert "Invalid action: could not read a move from 'nonsense'" in out
    assert f"oracle: '{moves[0]}'" in out
    assert "Episode finished: score 1/1, passed — solved" in out


def test_play_in_a_terminal():
    pid, fd = pty.fork()
    if pid == 0:  # the child is the player's terminal session
        os.execv(sys.executable, [*AGENTGYM, "play", "games/TowerOfHanoi-v0", "--seed", "0"])
    screen = b""

    def read_until(marker, timeout=60):
        nonlocal screen
        deadline = time.time() + timeout
        while marker not in screen and time.time() < deadline:
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    screen += os.read(fd, 4096)
                except OSError:
                    break
        return marker in screen

    try:
        assert read_until(b"> ")
        os.write(fd, b":actions\n")
        assert read_until(b"move ")
        os.write(fd, b":quit\n")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        os.close(fd)
