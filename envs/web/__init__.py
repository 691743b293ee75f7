"""The web family: real Chromium through Playwright over sites served on 127.0.0.1.

* ``web/Shop-v1`` — find and buy a product in a generated shop (WebShop's reward);
* ``web/Forum-v1``, ``web/Tracker-v1`` — WebArena-style tasks on a forum and an issue tracker
  with state, scored by answer, URL or a program over the final database;
* ``miniwob/<task>-v0`` — MiniWoB++'s tasks, scored by the page's own reward.

Importing this module registers the ids; Playwright and the sites are imported when an env is
made. See ``docs/envs/web.md``.
"""

from agentgym.envs.web.miniwob_ids import register_all
from agentgym.registry import register

_SITES = "agentgym.envs.web.sites"

register(
    "web/Shop-v1",
    entry_point=f"{_SITES}.shop:ShopEnv",
    max_episode_steps=40,
    extra="web",
    episode_cpus=1.0,  # a Chromium per episode
    description="find the product an instruction describes in a shop, choose its options, buy it",
)
register(
    "web/Forum-v1",
    entry_point=f"{_SITES}.forum:ForumEnv",
    max_episode_steps=40,
    extra="web",
    episode_cpus=1.0,  # a Chromium per episode
    description="answer questions, navigate and post on a Reddit-like forum",
)
register(
    "web/Tracker-v1",
    entry_point=f"{_SITES}.tracker:TrackerEnv",
    max_episode_steps=40,
    extra="web",
    episode_cpus=1.0,  # a Chromium per episode
    description="answer questions about and change issues in a GitLab-like tracker",
)

register_all()  # miniwob/<task>-v0, one id per task page that runs headless (docs/envs/web.md)
