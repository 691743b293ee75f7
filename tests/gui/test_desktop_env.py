"""gui/MousepadNotes-v0 end to end: the oracle acts through pixel actions only and is judged
from the saved file; a fixed policy earns nothing; a dead X server errors the episode."""

import os
import signal

import pytest

pytest.importorskip("Xlib", reason="the desktop needs python-xlib (the gui extra)")

from agentgym.envs.gui.desktop import desktop_problem
from agentgym.envs.gui.desktop_env import DesktopNotesEnv
from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS
from agentgym.envs.gui.x11 import DesktopCrashedError
from agentgym.envs.web import actions as web_actions
from agentgym.errors import EnvCrashedError

pytestmark = pytest.mark.skipif(
    desktop_problem() is not None, reason=f"no desktop here: {desktop_problem()}"
)

TASK = {"task_id": "test/default/7"}


@pytest.fixture
def env():
    env = DesktopNotesEnv()
    yield env
    env.close()


def test_the_oracle_saves_the_sentence_through_pixel_actions_only(env):
    frame, info = env.reset(seed=0, options=TASK)
    assert frame.shape == env.observation_space.shape and env.observation_space.contains(frame)
    task, world = env.task, env._world
    assert task.sentence in info["goal"] and task.filename in info["goal"]
    reward = 0.0
    while (action := env.oracle_action()) is not None:
        frame, r, terminated, _, info = env.step(action)
        reward += r
    assert reward == 1.0 and terminated and info["verdict"].passed
    # Its log is four actions of the agent's own language: no back door wrote the file.
    names = [web_actions.parse(a, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)[0] for a in world.history]
    assert names == ["type", "key", "type", "key"]
    saved = world.desktop.home / task.filename
    assert saved.read_text() == task.sentence and saved.stat().st_uid == world.desktop.uid


def test_a_fixed_sequence_earns_nothing(env):
    """The same text saved under the same name every time: right only by chance, and the
    sentences are drawn so that it never is on this task."""
    env.reset(seed=0, options=TASK)
    fixed = ['type("Apple river stone cloud.")', 'key("Control+s")', 'type("notes.txt")']
    fixed.append('key("Enter")')
    total = 0.0
    for action in fixed:
        _, reward, terminated, _, info = env.step(action)
        total += reward
    assert (env._world.desktop.home / "notes.txt").exists()  # it did save, the wrong thing
    assert total == 0.0 and not terminated and not info["verdict"].passed


def test_a_dead_x_server_errors_the_episode(env):
    env.reset(seed=0, options=TASK)
    os.kill(env._desktop._xvfb_pid, signal.SIGKILL)
    with pytest.raises(DesktopCrashedError) as raised:
        env.step("click(10, 10)")
    assert isinstance(raised.value, EnvCrashedError)
