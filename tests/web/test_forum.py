"""The forum site and web/Forum-v1: the site over HTTP (no browser), its tasks, and the
oracle end to end in Chromium."""

import contextlib
import hashlib
import os
import sqlite3
import subprocess
import sys
from collections import Counter

import pytest
from starlette.testclient import TestClient

from agentgym.envs.web.server import make_app
from agentgym.envs.web.sites.base import EPISODE_HEADER, SiteState
from agentgym.envs.web.sites.forum import ForumSite
from agentgym.envs.web.sites.forum.data import generate
from agentgym.envs.web.sites.forum.tasks import TEMPLATES, forum_tasks

SEED = 3


@pytest.fixture
def state(tmp_path):
    sites = {"forum": ForumSite()}
    state = SiteState(tmp_path, sites)
    state.prepare("ep1", {"forum": SEED})
    return state


def client(state, episode="ep1"):
    return TestClient(make_app(state.state_dir, state.sites), headers={EPISODE_HEADER: episode})


def log_in(browser, username):
    user = generate(SEED).user(username)
    reply = browser.post(
        "/forum/login", data={"username": user.username, "password": user.password}
    )
    assert reply.status_code == 200
    return user


def first_user():
    return generate(SEED).users[0].username


def comment_count(state, episode, body):
    db = state.connect(episode, "forum")
    try:
        return db.execute("SELECT count(*) FROM comments WHERE body = ?", (body,)).fetchone()[0]
    finally:
        db.close()


def dump_digest(lines):
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def build_digest_in_a_fresh_process(site_class, seed):
    """The :func:`dump_digest` of ``site_class().build(db, seed)`` run in a new Python process
    (nothing cached) whose str hash seed differs from this process's."""
    code = (
        "import hashlib, sqlite3\n"
        f"from {site_class.__module__} import {site_class.__name__} as Site\n"
        "db = sqlite3.connect(':memory:')\n"
        f"Site().build(db, {seed!r})\n"
        "print(hashlib.sha256('\\n'.join(db.iterdump()).encode()).hexdigest())\n"
    )
    hash_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


# ---------------------------------------------------------------------------- the site


def test_build_is_deterministic():
    # generate() is an lru_cache: empty it before each build so both builds draw the site's
    # data anew (reading one cached draw twice proves nothing), and build once more in a fresh
    # process with another str hash seed (set order must not leak into the data).
    dumps = []
    for _ in range(2):
        generate.cache_clear()
        db = sqlite3.connect(":memory:")
        ForumSite().build(db, SEED)
        dumps.append(list(db.iterdump()))
    assert dumps[0] == dumps[1]
    assert build_digest_in_a_fresh_process(ForumSite, SEED) == dump_digest(dumps[0])


def test_different_seeds_give_different_forums():
    assert generate(1).posts != generate(2).posts


def test_the_forum_list_names_every_forum(state):
    page = client(state).get("/forum/").text
    for forum in generate(SEED).forums:
        assert f"f/{forum.name}" in page


def test_top_sort_lists_the_highest_scores_first_ten_a_page(state):
    forum = generate(SEED).forums[0].name
    page = client(state).get(f"/forum/f/{forum}?sort=top").text
    scores = sorted((p.score for p in generate(SEED).posts_in(forum)), reverse=True)
    shown = [s for s in scores[:10] if f"<td>{s}</td>" in page]
    assert len(shown) == 10
    assert "Page 1 of" in page and "Next page" in page


def test_writes_need_login_and_change_nothing_signed_out(state):
    post = generate(SEED).posts[0]
    reply = client(state).post(
        f"/forum/f/{post.forum}/{post.id}/comment",
        data={"body": "anonymous words"},
        follow_redirects=False,
    )
    assert reply.status_code == 303
    assert reply.headers["location"].startswith("/forum/login?next=")
    assert comment_count(state, "ep1", "anonymous words") == 0


def test_a_wrong_password_is_refused(state):
    reply = client(state).post("/forum/login", data={"username": first_user(), "password": "wrong"})
    assert reply.status_code == 401
    assert "Wrong username or password" in reply.text


def test_a_comment_persists_within_the_episode(state):
    browser = client(state)
    log_in(browser, first_user())
    post = generate(SEED).posts[0]
    page = browser.post(f"/forum/f/{post.forum}/{post.id}/comment", data={"body": "hello"})
    assert "hello" in page.text
    assert "hello" in browser.get(f"/forum/f/{post.forum}/{post.id}").text


def test_writes_do_not_cross_episodes(state):
    state.prepare("ep2", {"forum": SEED})
    browser = client(state, "ep1")
    log_in(browser, first_user())
    post = generate(SEED).posts[0]
    browser.post(f"/forum/f/{post.forum}/{post.id}/comment", data={"body": "only in ep1"})
    assert comment_count(state, "ep1", "only in ep1") == 1
    assert comment_count(state, "ep2", "only in ep1") == 0


def test_a_session_cookie_does_not_sign_in_to_another_seed(tmp_path):
    state = SiteState(tmp_path, {"forum": ForumSite()})
    state.prepare("a", {"forum": 1})
    state.prepare("b", {"forum": 2})
    name = set(u.username for u in generate(1).users) & {u.username for u in generate(2).users}
    username = sorted(name)[0]
    browser = client(state, "a")
    user = generate(1).user(username)
    browser.post("/forum/login", data={"username": username, "password": user.password})
    other = TestClient(make_app(tmp_path, state.sites), headers={EPISODE_HEADER: "b"})
    other.cookies = browser.cookies
    assert "Log out" not in other.get("/forum/").text


def test_voting_the_same_way_twice_takes_the_vote_back(state):
    browser = client(state)
    log_in(browser, first_user())
    post = generate(SEED).posts[0]
    url = f"/forum/f/{post.forum}/{post.id}/vote"
    assert f"Score: {post.score + 1}." in browser.post(url, data={"direction": "up"}).text
    assert f"Score: {post.score}." in browser.post(url, data={"direction": "up"}).text


def test_only_the_author_may_edit_a_post(state):
    data = generate(SEED)
    post = data.posts[0]
    stranger = next(u.username for u in data.users if u.username != post.author)
    browser = client(state)
    log_in(browser, stranger)
    assert browser.get(f"/forum/f/{post.forum}/{post.id}/edit").status_code == 403


def test_the_author_edits_a_post(state):
    post = generate(SEED).posts[0]
    browser = client(state)
    log_in(browser, post.author)
    page = browser.post(
        f"/forum/f/{post.forum}/{post.id}/edit", data={"title": "New title", "body": "b"}
    )
    assert "<h1>New title</h1>" in page.text and "(edited" in page.text


def test_subscribing_shows_the_unsubscribe_button(state):
    data = generate(SEED)
    user, forum = next(
        (u.username, f.name)
        for u in data.users
        for f in data.forums
        if (u.username, f.name) not in data.subscriptions
    )
    browser = client(state)
    log_in(browser, user)
    page = browser.post(f"/forum/f/{forum}/subscribe", data={"action": "subscribe"})
    assert "Unsubscribe" in page.text


def test_a_new_post_gets_a_time_after_everything_else(state):
    data = generate(SEED)
    browser = client(state)
    log_in(browser, first_user())
    forum = data.forums[0].name
    page = browser.post(f"/forum/f/{forum}/submit", data={"title": "Fresh", "body": "x"})
    assert page.status_code == 200 and "<h1>Fresh</h1>" in page.text
    newest = browser.get(f"/forum/f/{forum}?sort=new").text
    assert newest.index("Fresh") < newest.index(data.posts_in(forum)[0].title)


def test_unknown_pages_are_404(state):
    assert client(state).get("/forum/f/nowhere").status_code == 404


# ---------------------------------------------------------------------------- the tasks


def test_every_difficulty_has_every_evaluator_kind():
    tasks = forum_tasks()
    for difficulty in tasks.difficulties:
        kinds = Counter(tasks.get(f"dev/{difficulty}/{i}").kind for i in range(60))
        assert set(kinds) == {"answer", "url", "program", "infeasible"}, (difficulty, kinds)


def test_every_template_is_drawn():
    tasks = forum_tasks()
    drawn = {type(tasks.get(f"train/{d}/{i}")) for d in tasks.difficulties for i in range(80)}
    assert drawn == set(TEMPLATES)


def test_a_task_id_always_names_the_same_task():
    named = []
    for _ in range(2):
        generate.cache_clear()  # the goal is drawn from the site's data: drawn anew each time
        task = forum_tasks().get("test/hard/5")
        named.append((type(task), task.goal(), task.sites))
    assert named[0] == named[1]


def test_task_ids_give_varied_instances():
    tasks = forum_tasks()
    goals = {tasks.get(f"dev/medium/{i}").goal() for i in range(30)}
    assert len(goals) >= 25


# ---------------------------------------------------------------------------- end to end


def one_task_per_template(tasks, templates, split="test"):
    """A task id for each template (its first level), found by walking the split."""
    found = {}
    for template in templates:
        level = template.levels[0]
        for index in range(500):
            task_id = f"{split}/{level}/{index}"
            if type(tasks.get(task_id)) is template:
                found[template.__name__] = task_id
                break
    assert len(found) == len(templates)
    return found


def run_oracle(env, task_id, max_steps=40):
    """The oracle's episode: its final verdict and its number of steps."""
    _, info = env.reset(seed=0, options={"task_id": task_id})
    for step in range(max_steps):
        action = env.unwrapped.oracle_action()
        if action is None:
            return info["verdict"], step
        observation, _, terminated, truncated, info = env.step(action)
        assert not info["invalid_action"], (task_id, action, observation)
        if terminated or truncated:
            return info["verdict"], step + 1
    return info["verdict"], max_steps


def run_idle(env, task_id, steps=2):
    """A do-nothing agent's verdict after a few ``noop()`` steps."""
    _, info = env.reset(seed=0, options={"task_id": task_id})
    for _ in range(steps):
        _, _, terminated, truncated, info = env.step("noop()")
        if terminated or truncated:
            break
    return info["verdict"]


@contextlib.contextmanager
def made(env_id):
    """The env of ``env_id``, closed after use (a module fixture's body)."""
    import agentgym
    import agentgym.envs.web

    env = agentgym.make(env_id)
    try:
        yield env
    finally:
        env.close()


def check_oracle_and_idling(env, templates, template):
    """The oracle reaches the max on a task of ``template``; a few ``noop()`` steps score 0."""
    task_id = one_task_per_template(env.unwrapped.tasks, templates)[template]
    verdict, steps = run_oracle(env, task_id)
    assert verdict.passed and verdict.score == verdict.max_score, (task_id, verdict, steps)
    idle = run_idle(env, task_id)
    assert idle.score == 0.0 and not idle.passed, (task_id, idle)


@pytest.fixture(scope="module")
def forum_env():
    with made("web/Forum-v1") as env:
        yield env


@pytest.mark.slow
@pytest.mark.parametrize("template", [t.__name__ for t in TEMPLATES])
def test_the_oracle_reaches_the_max_and_idling_does_not(forum_env, template):
    check_oracle_and_idling(forum_env, TEMPLATES, template)
