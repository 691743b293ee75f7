"""MiniWoB++ pages the web family leaves out for needing a drag, played by pixel twins with
oracles of their own that drag."""

import pytest
from pixel_twins import make_twin

import agentgym
import agentgym.envs.gui  # registers the gui ids where the entry point is not installed
from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS, TABLE
from agentgym.envs.gui.pixel_ids import POINTER_PAGES, guessable, pointer_id
from agentgym.envs.gui.pixel_pages import PAGE_ORACLES
from agentgym.envs.web import actions as web_actions
from agentgym.envs.web.miniwob import EXCLUDED, TASKS, MiniWoBEnv
from agentgym.envs.web.server import miniwob_html
from agentgym.errors import UsageError
from agentgym.registry import spec

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(miniwob_html() is None, reason="the miniwob wheel is absent"),
]

IDS = [pointer_id(page) for page in POINTER_PAGES]


def test_each_pointer_page_is_one_the_web_family_leaves_out_for_its_drag():
    assert set(POINTER_PAGES) == set(PAGE_ORACLES)
    for page, env_id in zip(POINTER_PAGES, IDS, strict=True):
        assert page not in TASKS and "drag" in EXCLUDED[page]
        if env_id in guessable():  # a blind replay passed it: left out of the registry
            with pytest.raises(agentgym.UnknownEnvError):
                spec(env_id)
        else:
            assert spec(env_id).kwargs == {"page": page}
        with pytest.raises(UsageError, match="excluded"):
            MiniWoBEnv(task=page)  # the text env still refuses it


@pytest.mark.parametrize(
    ("env_id", "task_id"), [(env_id, f"test/default/{i}") for i, env_id in enumerate(IDS)]
)
def test_the_oracle_drags_to_score_max(env_id, task_id):
    env = make_twin(env_id)
    try:
        env.reset(seed=0, options={"task_id": task_id})
        played, info = [], {}
        while (action := env.unwrapped.oracle_action()) is not None:
            played.append(action)
            *_, terminated, truncated, info = env.step(action)
            assert not info["invalid_action"], info["feedback"]
            if terminated or truncated:
                break
    finally:
        env.close()
    assert info["verdict"].score == 1.0, played
    names = [web_actions.parse(a, tuple(PIXEL_ACTIONS), TABLE)[0] for a in played]
    assert "drag" in names


@pytest.mark.parametrize("env_id", [i for i in IDS if i not in guessable()])
def test_clicking_the_centre_or_typing_scores_nothing(env_id):
    env = agentgym.make(env_id)
    try:
        for action in ("click(80, 105)", 'type("hello")', "drag(80, 105, 100, 105)"):
            env.reset(seed=0, options={"task_id": "test/default/0"})
            for _ in range(3):
                *_, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    break
            assert info["verdict"].score == 0.0, (env_id, action)
    finally:
        env.close()
