"""MiniWoB++ through our browser layer: seeded pages, the page's reward, the oracles, and the
list of tasks registered and left out."""

import inspect
import re
import time

import numpy as np
import pytest
from test_conformance import CASES, in_sample

from agentgym.envs.web import miniwob
from agentgym.envs.web.miniwob import EXCLUDED, ORACLES, PAGES, TASKS, MiniWoBEnv
from agentgym.envs.web.miniwob_ids import PARTIAL_CREDIT, VERSIONS
from agentgym.envs.web.server import miniwob_html
from agentgym.errors import UsageError
from agentgym.registry import spec

pytestmark = pytest.mark.skipif(miniwob_html() is None, reason="the miniwob wheel is absent")


def play_oracle(env, task_id):
    env.reset(seed=0, options={"task_id": task_id})
    info = {}
    for _ in range(30):
        action = env.oracle_action()
        if action is None:
            break
        _, _, terminated, truncated, info = env.step(action)
        assert not info["invalid_action"], f"{task_id}: the oracle's {action} was invalid"
        if terminated or truncated:
            break
    return info["verdict"]


def env_id(task: str) -> str:
    return f"miniwob/{task.replace('-', '_')}-v{VERSIONS.get(task, 0)}"


@pytest.mark.slow
@pytest.mark.parametrize("task", [t for t in sorted(ORACLES) if not in_sample(env_id(t))])
def test_the_oracle_scores_one_on_a_test_task(task):
    """Every page outside the conformance task tier's sample (whose oracle check plays a
    task of every split: tests/test_conformance.py) has its oracle played here, on a task of
    the split benchmarks use (``make check`` plays every split of every page)."""
    env = MiniWoBEnv(task=task)
    try:
        verdict = play_oracle(env, "test/default/1")
        assert verdict.score == 1.0 and verdict.passed, f"{task}: {verdict}"
    finally:
        env.close()


def test_every_pages_oracle_is_played_in_the_suite():
    played_here = {env_id(t) for t in ORACLES if not in_sample(env_id(t))}
    checked = {case.values[0] for case in CASES}  # the oracle check plays every split
    assert {env_id(t) for t in ORACLES} <= played_here | checked


def test_a_page_worded_in_natural_language_gives_the_agent_its_sentence_not_its_parse():
    env = MiniWoBEnv(task="email-inbox-nl-turk")  # its page returns {utterance, fields}
    try:
        _, info = env.reset(seed=0)
        assert "fields" not in info["goal"] and not info["goal"].startswith("{")
        assert info["goal"] == env.unwrapped._world.evaluate("() => core.getUtterance().utterance")
    finally:
        env.close()


@pytest.mark.parametrize("task", ["click-button", "enter-text", "choose-date"])
def test_doing_nothing_scores_zero_and_the_episode_goes_on(task):
    env = MiniWoBEnv(task=task)
    try:
        env.reset(seed=0)
        for _ in range(2):
            _, reward, terminated, _, info = env.step("noop()")
            assert (reward, terminated, info["verdict"].score) == (0.0, False, 0.0)
    finally:
        env.close()


def test_a_wrong_answer_ends_the_episode_with_score_zero_and_the_raw_reward():
    env = MiniWoBEnv(task="click-test-2")  # "Click button ONE."; TWO is wrong
    try:
        env.reset(seed=0, options={"task_id": "dev/default/0"})
        two = env.unwrapped._world.snapshot.find("button", "TWO")
        _, _, terminated, _, info = env.step(f'click("{two.id}")')
        verdict = info["verdict"]
        assert terminated and verdict.score == 0.0 and not verdict.passed
        assert verdict.components == {"raw_reward": -1.0, "done": 1.0}
    finally:
        env.close()


def test_partial_credit_is_no_score_so_a_blind_submit_earns_nothing():
    """use-colorwheel pays 1 - (colour distance) for whatever colour is submitted: Submit at
    once, without reading the task, was paid about 0.5 and passed (found by the checker's
    task-blind policies). Only the page's full reward scores."""
    env = MiniWoBEnv(task="use-colorwheel")
    try:
        env.reset(seed=0, options={"task_id": "test/default/0"})
        submit = env.unwrapped._world.snapshot.find("button", "Submit")
        _, reward, terminated, _, info = env.step(f'click("{submit.id}")')
        verdict = info["verdict"]
        assert terminated and 0 < verdict.components["raw_reward"] < 1
        assert reward == 0.0 and verdict.score == 0.0 and not verdict.passed
    finally:
        env.close()
    assert all(VERSIONS[page] >= 1 for page in PARTIAL_CREDIT)


def test_the_terminal_is_focused_and_its_caret_still_at_the_first_observation():
    # The page focuses its input 200 ms after the start and blinks its caret: without the
    # settle step, keys typed at once went nowhere and the caret came and went (SETTLE_JS).
    env = MiniWoBEnv(task="terminal")
    try:
        observation, _ = env.reset(seed=0, options={"task_id": "train/default/0"})
        assert "textbox value='' focused" in observation and "'█'" in observation
        observation, *_ = env.step('type("ls")')
        assert "text 'l s'" in observation
        time.sleep(1.0)  # longer than a blink
        observation, *_ = env.step("noop()")
        assert "'█'" in observation
    finally:
        env.close()


def test_the_same_task_id_gives_the_same_page_and_another_id_another():
    env = MiniWoBEnv(task="click-checkboxes")
    try:
        first, info = env.reset(seed=0, options={"task_id": "train/default/3"})
        again, info_again = env.reset(seed=5, options={"task_id": "train/default/3"})
        other, _ = env.reset(seed=0, options={"task_id": "train/default/4"})
        assert first == again and info["goal"] == info_again["goal"]
        assert first != other
    finally:
        env.close()


def test_the_goal_is_the_pages_instruction_and_the_human_display_is_hidden():
    env = MiniWoBEnv(task="enter-text")
    try:
        observation, info = env.reset(seed=0)
        assert info["goal"].startswith("Enter ") and info["goal"] in observation
        for display in ("Last reward", "Time left", "Episodes done", "START"):
            assert display not in observation
        world = env.unwrapped._world
        assert world.evaluate("() => core.EPISODE_MAX_TIME") == miniwob.EPISODE_MAX_MS
    finally:
        env.close()


def test_the_multimodal_observation_has_the_declared_shape():
    env = MiniWoBEnv(task="click-test", observation_mode="multimodal")
    try:
        observation, _ = env.reset(seed=0)
        assert observation["screenshot"].shape == (210, 160, 3)
        assert observation["screenshot"].dtype == np.uint8
        assert env.observation_space.contains(observation)
        assert observation["screenshot"].std() > 0  # the page was drawn, not a blank frame
    finally:
        env.close()


@pytest.mark.parametrize(
    "action",
    ['click("999")', "click(", 'goto("/miniwob/")', 'fill("1", "<script>alert(1)</script>")'],
)
def test_a_wrong_action_is_feedback_not_a_crash(action):
    env = MiniWoBEnv(task="click-test")
    try:
        env.reset(seed=0)
        observation, reward, terminated, truncated, info = env.step(action)
        assert info["invalid_action"] and observation.startswith("Invalid action")
        assert (reward, terminated, truncated) == (0.0, False, False)
    finally:
        env.close()


def test_every_registered_task_has_an_oracle_and_the_others_say_why_not():
    assert set(TASKS) <= set(ORACLES)
    for page in ("tic-tac-toe", "click-pie", "circle-center"):
        assert page not in TASKS and EXCLUDED[page].startswith("no oracle")


def test_an_unknown_or_excluded_task_is_a_clear_error():
    with pytest.raises(UsageError, match="click-tset"):
        MiniWoBEnv(task="click-tset")
    with pytest.raises(UsageError, match="excluded: needs a mouse drag"):
        MiniWoBEnv(task="drag-box")


def test_every_page_of_the_wheel_is_registered_or_excluded_with_a_reason():
    assert sorted(PAGES) == sorted(p.stem for p in (miniwob_html() / "miniwob").glob("*.html"))
    assert set(TASKS) | set(EXCLUDED) == set(PAGES) and not set(TASKS) & set(EXCLUDED)
    assert all(reason for reason in EXCLUDED.values())
    assert set(ORACLES) == set(TASKS)  # every registered page has an oracle
    for task in TASKS:
        registered = spec(env_id(task))
        assert registered.kwargs == {"task": task} and registered.extra == "web"


def test_the_doc_page_lists_the_oracles_and_the_excluded_tasks():
    doc = inspect.getdoc(MiniWoBEnv)
    words = set(re.sub(r"[,.:`]", " ", doc).split())
    assert set(ORACLES) <= words and set(EXCLUDED) <= words
