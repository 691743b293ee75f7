"""The browser layer over the testbed site: observations, actions, bad input, tabs, faults.

The testbed (tests/web/testbed.py) is a test double for a site: small real pages served by the
real server and driven in the real Chromium, so these tests measure the browser layer.
"""

import contextlib
import os
import signal
import time

import numpy as np
import pytest
from testbed import TestbedEnv as Testbed

from agentgym.envs.web import browser
from agentgym.envs.web.base import LOAD_TIMEOUT_MS
from agentgym.envs.web.browser import BrowserCrashedError


@pytest.fixture
def env():
    env = Testbed()
    env.reset(seed=1)
    yield env
    env.close()


def world(env):
    return env.unwrapped._world


def goto(env, path):
    observation, *_ = env.step(f'goto("{path}")')
    return observation


def test_the_observation_is_an_accessibility_tree_with_an_id_per_element(env):
    snap = world(env).snapshot
    assert snap.find("heading", "Sign up").depth == 0
    assert snap.find("link", "Frames").parent == snap.find("navigation").id
    color = snap.find("combobox", "Color")
    assert color.value == "Red"
    assert [n.name for n in snap.find_all("option")] == ["Red", "Green"]
    assert snap.find("option", "Red").selected
    assert "[6] textbox 'Name' value=''" in snap.text


def test_ids_stay_with_their_elements_across_steps(env):
    before = world(env).snapshot.find("button", "Save").id
    box = world(env).snapshot.find("textbox", "Name")
    env.step(f'fill("{box.id}", "Ada")')
    after = world(env).snapshot
    assert after.find("button", "Save").id == before
    assert after.find("textbox", "Name").value == "Ada"
    assert after.find("textbox", "Name").focused


def test_elements_inside_an_iframe_get_ids_under_the_frame_and_can_be_clicked(env):
    goto(env, "/testbed/frames")
    snap = world(env).snapshot
    frame = snap.find("iframe", "inner")
    button = snap.find("button", "Press")
    assert button.id.startswith(frame.id + ".")
    env.step(f'click("{button.id}")')
    assert world(env).snapshot.find("text", "pressed").id.startswith(frame.id + ".")


def test_a_late_request_is_waited_for_not_slept_on(env):
    goto(env, "/testbed/late")
    load = world(env).snapshot.find("button", "Load")
    start = time.perf_counter()
    observation, *_ = env.step(f'click("{load.id}")')
    assert "'arrived'" in observation  # the response came 300 ms after the click
    # It returned on the response, not on a timeout: well before the load limit it would
    # have waited out (10 s) had it missed the request's end (a loaded machine takes ~1 s).
    assert time.perf_counter() - start < LOAD_TIMEOUT_MS / 1000 / 2


def test_a_scroll_is_observed_where_it_stopped(env):
    goto(env, "/testbed/long")
    env.step(f'hover("{world(env).snapshot.find("text", "Line 0").id}")')
    env.step('scroll("down", 700)')
    # The wheel scrolls frames after its event: the step waits until the box stands still.
    where = "() => document.getElementById('box').scrollTop"
    assert world(env).evaluate(where) == 700
    time.sleep(0.3)
    assert world(env).evaluate(where) == 700


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ('click("999")', "there is no element [999]"),
        ("click(", "is not a call"),
        ('goto("http://example.com/")', "goto is limited to the task's sites"),
        ('goto("/")', "goto is limited to the task's sites"),
        ('goto("file:///etc/passwd")', "goto is limited to the task's sites"),
        ('goto("javascript:alert(1)")', "goto is limited to the task's sites"),
        ('fill("1", "x")', "fill failed"),  # a heading is not a text field
        ('select("6", "Blue")', "has no option 'Blue'"),
        ('select("8", "Blue")', "has no option 'Blue'; its options are ['Red', 'Green']"),
        ('press("NoSuchKey")', "press failed"),
        ("tab_focus(3)", "there is no tab 3"),
        ("tab_close()", "the only tab"),
    ],
)
def test_bad_actions_are_feedback_and_the_page_stays(env, action, says):
    path = world(env).path
    observation, _reward, terminated, _truncated, info = env.step(action)
    assert observation.startswith("Invalid action: ")
    assert says in observation.splitlines()[0]
    assert info["invalid_action"] and not terminated
    assert world(env).path == path


def test_links_off_the_task_sites_are_blocked(env):
    goto(env, "/testbed/away")
    for name in ("Elsewhere", "Server index"):
        link = world(env).snapshot.find("link", name)
        observation, *_ = env.step(f'click("{link.id}")')
        assert "was blocked: it is outside the task's sites" in observation
        assert world(env).path == "/testbed/away"


def test_script_typed_into_a_field_stays_text(env):
    attack = '<img src=x onerror="document.title=\'pwned\'">"); alert(1); ("'
    box = world(env).snapshot.find("textbox", "Name")
    env.step(f"fill({box.id!r}, {attack!r})")
    env.step(f'click("{world(env).snapshot.find("button", "Save").id}")')
    assert world(env).snapshot.title == "Saved"
    assert world(env).snapshot.find("text", contains="Saved:").name == f"Saved: {attack}"
    db = world(env).db("testbed")
    assert db.execute("SELECT name FROM entries").fetchone()[0] == attack
    db.close()


def test_a_link_that_opens_a_tab_adds_a_tab_the_agent_can_switch_and_close(env):
    goto(env, "/testbed/popup")
    link = world(env).snapshot.find("link", "Open in a new tab")
    env.step(f'click("{link.id}")')
    observation, *_ = env.step("tab_focus(1)")
    assert "Tabs: [0], [1] (active)" in observation and "at /testbed/" in observation
    observation, *_ = env.step("tab_close()")
    assert "Tabs:" not in observation and "at /testbed/popup" in observation


def test_answer_and_report_infeasible_end_the_episode(env):
    *_, terminated, _truncated, _ = env.step('answer("done")')
    assert terminated and world(env).answer == "done"
    env.reset(seed=2)
    *_, terminated, _, _ = env.step('report_infeasible("no such form")')
    assert terminated and world(env).infeasible == "no such form"


def test_native_tool_calls_drive_the_page():
    env = Testbed()
    try:
        env.reset(seed=3)
        box = world(env).snapshot.find("textbox", "Name")
        env.step({"name": "fill", "arguments": {"id": box.id, "text": "Grace"}})
        assert world(env).snapshot.find("textbox", "Name").value == "Grace"
    finally:
        env.close()


def test_each_episode_has_its_own_database_and_storage():
    first, second = Testbed(), Testbed()
    try:
        first.reset(seed=4)
        second.reset(seed=4)
        while (action := first.unwrapped.oracle_action()) is not None:
            first.step(action)
        assert first.unwrapped.task.validate(world(first)).passed
        assert not second.unwrapped.task.validate(world(second)).passed
        assert "Saved so far: 0" in second.step("noop()")[0]
        first.reset(seed=4)  # a new episode of the same task starts from the seed's state
        assert "Saved so far: 0" in first.step("noop()")[0]
    finally:
        first.close()
        second.close()


def test_a_recycled_context_keeps_nothing_of_the_episode_before():
    env = Testbed()
    try:
        env.reset(seed=5)
        first = world(env)
        first.evaluate(
            """() => { document.cookie = "who=first; path=/";
                       localStorage.setItem("who", "first");
                       sessionStorage.setItem("who", "first"); }"""
        )
        goto(env, "/testbed/popup")  # history: the start page, then this one
        link = first.snapshot.find("link", "Open in a new tab")
        env.step(f'click("{link.id}")')
        context = first._context
        env.reset(seed=6)
        second = world(env)
        assert second._context is context, "the context was not recycled"
        assert len(context.pages) == 1, "the old episode's popup is still open"
        left = second.evaluate(
            "() => [document.cookie, localStorage.getItem('who'), sessionStorage.getItem('who')]"
        )
        assert left == ["", None, None]
        observation, *_ = env.step("go_back()")  # nothing to go back to in a new episode
        assert second.path == second.start_path and "Tabs:" not in observation
        box = second.snapshot.find("textbox", "Name")  # the new episode's database answers
        env.step(f'fill("{box.id}", "Ada")')
        env.step(f'click("{second.snapshot.find("button", "Save").id}")')
        db = second.db("testbed")
        assert [tuple(row) for row in db.execute("SELECT name FROM entries")] == [("Ada",)]
        db.close()
    finally:
        env.close()


def test_a_context_whose_tab_died_is_closed_not_recycled():
    env = Testbed()
    try:
        env.reset(seed=0)
        context = world(env)._context
        for pid in env.unwrapped._pool.renderer_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrowserCrashedError):
            env.step("noop()")
        env.reset(seed=0)
        assert world(env)._context is not context
        while (action := env.unwrapped.oracle_action()) is not None:
            *_, info = env.step(action)
        assert info["verdict"].passed
    finally:
        env.close()


def test_multimodal_observations_carry_a_screenshot_of_the_viewport():
    env = Testbed(observation_mode="multimodal", viewport=(640, 480), set_of_marks=True)
    try:
        observation, _ = env.reset(seed=0)
        assert env.observation_space.contains(observation)
        shot = observation["screenshot"]
        assert shot.shape == (480, 640, 3) and shot.dtype == np.uint8
        assert (shot[..., 0] > 200).any() and shot.std() > 0  # marks drawn in red on a page
    finally:
        env.close()


def test_a_killed_browser_errors_the_episode_and_the_next_one_relaunches_it():
    env = Testbed()
    try:
        env.reset(seed=0)
        pool = env.unwrapped._pool
        pids = pool.browser_pids()
        assert pids
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # gone with the browser killed first
                os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrowserCrashedError):
            env.step("noop()")
        env.reset(seed=0)
        while (action := env.unwrapped.oracle_action()) is not None:
            *_, info = env.step(action)
        assert info["verdict"].passed
    finally:
        env.close()


def test_closing_the_last_env_closes_browser_and_server(monkeypatch):
    monkeypatch.setattr(browser, "LINGER", 0.2)
    browser.shutdown()
    env = Testbed()
    env.reset(seed=0)
    pool = env.unwrapped._pool
    processes = [*pool.browser_pids(), pool.server.pid]
    env.close()
    deadline = time.monotonic() + 15
    while not pool.closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.closed
    deadline = time.monotonic() + 30
    while [pid for pid in processes if _running(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)  # Chromium's helpers exit a moment after the browser
    assert not [pid for pid in processes if _running(pid)]
    assert not pool.state_dir.exists()


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
