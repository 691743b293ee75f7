"""A page of each site renders in Chromium; the screenshots are the pictures in
docs/envs/web.md (this test writes them to docs/envs/img/)."""

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import agentgym

IMAGES = Path(__file__).parents[2] / "docs" / "envs" / "img"


@pytest.mark.parametrize(
    ("env_id", "oracle_steps", "picture"),
    [
        ("web/Shop-v1", 2, "shop.png"),  # the search results
        ("web/Forum-v1", 0, "forum.png"),
        ("web/Tracker-v1", 0, "tracker.png"),
        ("miniwob/login_user-v0", 0, "miniwob-login-user.png"),
    ],
)
def test_a_page_of_each_site_renders_and_is_saved_for_the_docs(env_id, oracle_steps, picture):
    env = agentgym.make(env_id, observation_mode="multimodal")
    try:
        observation, _ = env.reset(seed=0, options={"task_id": env.unwrapped.tasks.ids("test")[0]})
        for _ in range(oracle_steps):
            observation, *_ = env.step(env.unwrapped.oracle_action())
        shot = observation["screenshot"]
        assert shot.ndim == 3 and shot.shape[2] == 3
        assert shot.std() > 10, "the page rendered blank"
        assert len(np.unique(shot.reshape(-1, 3), axis=0)) > 20, "too few colours for a page"
        IMAGES.mkdir(parents=True, exist_ok=True)
        out = io.BytesIO()
        Image.fromarray(shot).save(out, format="PNG", optimize=True)
        (IMAGES / picture).write_bytes(out.getvalue())
    finally:
        env.close()
