"""Web envs under faults: renderers killed from outside during reset and step.

A renderer is the Chromium process that runs a page (``--type=renderer``); killing one crashes
its pages but not the browser. Whatever the moment, what escapes ``reset`` or ``step`` must be
an infrastructure error (the evaluator retries those), never a raw Playwright error and never
the agent's feedback, and the env must work again once the killing stops.
"""

import os
import random
import signal
import threading
import time

import pytest
from testbed import TestbedEnv as Testbed

from agentgym.envs.web.browser import BrowserCrashedError, BrowserPool
from agentgym.envs.web.miniwob import MiniWoBEnv
from agentgym.envs.web.server import miniwob_html
from agentgym.envs.web.sites.shop import ShopEnv
from agentgym.errors import InfrastructureError

SECONDS = 3.0
"""How long each env is played under fire, at least."""
MIN_STEPS = 12
"""Steps played under fire, at least, however slow the machine (a loaded CI machine played
only 4 in 3 s, and none of them was hit)."""


def kill_renderers(pool, killed):
    for pid in pool.renderer_pids():
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except ProcessLookupError:
            pass


def play_under_fire(env, act, seconds=SECONDS):
    """Reset and step ``env`` in a loop while a timer thread kills every renderer at a random
    moment of each call (or just after it, so the next call meets a dead page). Returns what
    escaped, by call, and how many renderers were killed."""
    rng = random.Random(0)
    started = time.monotonic()
    env.reset(seed=0)
    # Kills land within a call as long as an unharmed one takes (a recycled context makes a
    # reset take about 0.15 s, a fresh one 0.4 s), or just after it.
    reset_time = time.monotonic() - started
    started = time.monotonic()
    env.step(act(env))
    step_time = time.monotonic() - started
    env.reset(seed=0)
    pool = env.unwrapped._pool
    escaped = {"reset": [], "step": []}
    killed = []
    calls = {"reset": 0, "step": 0}
    need_reset, turn = False, 0
    deadline, cap = time.monotonic() + seconds, time.monotonic() + 20 * seconds
    while time.monotonic() < deadline or (calls["step"] < MIN_STEPS and time.monotonic() < cap):
        turn += 1
        call = "reset" if need_reset or turn % 2 == 0 else "step"
        timer = None
        if rng.random() < 0.7:  # some calls run unharmed, so that steps get their turn
            timer = threading.Timer(
                rng.uniform(0.0, 1.2 * (reset_time if call == "reset" else step_time)),
                kill_renderers,
                (pool, killed),
            )
            timer.start()
        calls[call] += 1
        try:
            if call == "reset":
                env.reset(seed=turn)
                need_reset = False
            else:
                *_, terminated, truncated, _ = env.step(act(env))
                need_reset = terminated or truncated
        except Exception as error:  # every one is checked below
            escaped[call].append(error)
            need_reset = True
        finally:
            if timer is not None:
                timer.join()
    return escaped, calls, killed


def assert_only_infrastructure_errors_and_recovery(env, act):
    escaped, calls, killed = play_under_fire(env, act)
    assert killed, "no renderer was killed: the test proved nothing"
    assert calls["reset"] and calls["step"], calls
    wrong = [
        f"{call}: {type(e).__module__}.{type(e).__name__}: {e}"
        for call, errors in escaped.items()
        for e in errors
        if not isinstance(e, InfrastructureError)
    ]
    assert not wrong, "\n".join(wrong)
    assert escaped["reset"] or escaped["step"], (calls, len(killed))
    # Once the killing stops, the env works again.
    observation, info = env.reset(seed=0)
    assert observation and info["goal"]
    *_, info = env.step(act(env))
    assert not info["invalid_action"]


@pytest.mark.skipif(miniwob_html() is None, reason="the miniwob wheel is absent")
def test_renderers_killed_during_miniwob_reset_and_step_raise_only_infrastructure_errors():
    env = MiniWoBEnv(task="click-checkboxes")

    def act(env):  # a real action on the page, or the oracle's
        return env.unwrapped.oracle_action() or "noop()"

    try:
        assert_only_infrastructure_errors_and_recovery(env, act)
    finally:
        env.close()


def test_renderers_killed_during_shop_reset_and_step_raise_only_infrastructure_errors():
    env = ShopEnv()

    def act(env):  # the oracle: searches, clicks, fills, goto
        return env.unwrapped.oracle_action() or "noop()"

    try:
        assert_only_infrastructure_errors_and_recovery(env, act)
    finally:
        env.close()


@pytest.fixture
def kill_on_navigation(monkeypatch):
    """Kill every renderer the moment a tab's navigation request goes out, once per item the
    test appends to the returned list: the moment a reset's ``goto`` or an agent's is in flight."""
    armed, killed = [], []
    open_context = BrowserPool.open_context

    async def open_context_with_a_trap(self, headers, **options):
        context, tab = await open_context(self, headers, **options)

        def on_request(request):
            if armed and request.is_navigation_request() and request.frame.parent_frame is None:
                armed.pop()
                kill_renderers(self, killed)

        context.on("request", on_request)
        return context, tab

    monkeypatch.setattr(BrowserPool, "open_context", open_context_with_a_trap)
    return armed


def test_a_start_page_whose_renderer_is_killed_as_it_loads_is_loaded_again(kill_on_navigation):
    env = Testbed()
    try:
        kill_on_navigation.append("the start page")
        env.reset(seed=0)
        assert not kill_on_navigation, "the trap did not fire"
        while (action := env.unwrapped.oracle_action()) is not None:
            *_, info = env.step(action)
        assert info["verdict"].passed
    finally:
        env.close()


def test_a_renderer_killed_under_the_agents_navigation_is_a_crash_not_feedback(
    kill_on_navigation,
):
    env = Testbed()
    try:
        env.reset(seed=0)
        kill_on_navigation.append("the agent's goto")
        with pytest.raises(BrowserCrashedError):
            env.step('goto("/testbed/frames")')
        assert not kill_on_navigation, "the trap did not fire"
        env.reset(seed=0)
        observation, *_, info = env.step('goto("/testbed/frames")')
        assert not info["invalid_action"] and "iframe" in observation
    finally:
        env.close()
