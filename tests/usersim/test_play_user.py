"""``agentgym play ID --user``: a person types the user's turns while an agent serves them."""

import subprocess
import sys

import agentgym
from agentgym.envs.usersim.dialogue import rehearse

AGENTGYM = [sys.executable, "-m", "agentgym.cli"]


def play(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AGENTGYM, "play", *args], input=stdin, capture_output=True, text=True, timeout=300
    )


def scripted_user_lines(env_id: str, task_id: str) -> list[str]:
    """What the scripted user says to the oracle on ``task_id``: the lines a person types."""
    env = agentgym.make(env_id).unwrapped
    task = env.tasks.get(task_id)
    dialogue = rehearse(env.domain, task.draft)
    lines = [text for role, text in dialogue.transcript if role == "user"]
    assert lines and all("\n" not in line for line in lines)
    return lines


def test_a_person_plays_the_customer_and_the_oracle_serves_them():
    lines = scripted_user_lines("usersim/Retail-v2", "test/easy/0")
    result = play(
        "usersim/Retail-v2", "--user", "--task-id", "test/easy/0", "--seed", "0",
        stdin="\n" + "\n".join(lines) + "\n",  # an empty line first: asked again
    )  # fmt: skip
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "usersim/Retail-v2: you play the user, oracle plays the agent" in out
    assert "=== You play the user. Your brief (the agent does not see it) ===" in out
    assert "agent: Hi! How can I help you today?" in out  # before the person's first line
    assert out.count("you> ") == len(lines) + 1
    assert "Episode finished: score 1/1, passed — the conversation ended: the user ended it" in out


def test_leaving_ends_the_conversation_unscored():
    result = play("usersim/Retail-v2", "--user", "--task-id", "test/easy/0", stdin="Hi\n")
    assert result.returncode == 0, result.stderr
    assert "(you left the conversation; it is not scored)" in result.stdout
    assert "Episode" not in result.stdout


def test_an_env_without_a_user_refuses_user_in_one_line():
    result = play("games/TowerOfHanoi-v0", "--user", stdin="")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "agentgym: games/TowerOfHanoi-v0 has no user to play: --user is for conversation envs "
        "(usersim/*); without it you play the agent"
    )
