"""The forum and the tracker pinned: their databases, their pages and their tasks, to the byte.

The two sites share their base (:mod:`agentgym.envs.web.sites.users`), their templates'
layout and their task helpers. A refactor of that shared code must not change what an agent
sees or how it is scored, so these digests were taken before the sites were merged onto the
shared base (issue 28) and must not move. A change that means to alter a page, a seeded
database or a task is a version bump of the env (docs/envs/web.md) and updates its digest here.
"""

import hashlib
import json
import re
import sqlite3
from types import SimpleNamespace

import pytest
from starlette.testclient import TestClient

from agentgym.envs.web.server import make_app
from agentgym.envs.web.sites.base import EPISODE_HEADER, SiteState
from agentgym.envs.web.sites.forum import ForumSite
from agentgym.envs.web.sites.forum.data import generate as forum_data
from agentgym.envs.web.sites.forum.tasks import forum_tasks
from agentgym.envs.web.sites.tracker import TrackerSite
from agentgym.envs.web.sites.tracker.data import generate as tracker_data
from agentgym.envs.web.sites.tracker.tasks import tracker_tasks

DIGESTS = {
    "forum-db": "86286cbd828c8b2d3273add5df109395e83d93812d725667f0693d4d86135f14",
    "tracker-db": "c066193ddb603386ff7e41f10020287253d17dca90026929259645ef7f82e290",
    "forum-pages": "b69e67c0efedd6ace4bd49f139a5855580cd18bbcb08981e740ef3258426f7b3",
    "tracker-pages": "ee1990d4c1895d7b383c993ba5a1402769f12eb6fef86846939fd8a0ed13db49",
    "forum-tasks": "8e47ecadb0214778eef463860608e36e33a74bf96834f0b8daf29493abce450a",
    "tracker-tasks": "a6f606771bae39919dd5a77991dd7305ce75807c5dcaf1bc9dd1469ca4404856",
}


def digest(lines):
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def db_lines(site):
    lines = []
    for seed in (0, 7):
        db = sqlite3.connect(":memory:")
        site.build(db, seed)
        lines += db.iterdump()
    return lines


@pytest.mark.parametrize("name,site", [("forum", ForumSite()), ("tracker", TrackerSite())])
def test_the_seeded_databases_are_pinned(name, site):
    assert digest(db_lines(site)) == DIGESTS[f"{name}-db"]


# ---------------------------------------------------------------------------- pages


def visit(browser, requests):
    """Every reply of ``requests`` (``(method, path, form)``) as lines: status, where a
    redirect goes, the cookie it sets, and the page."""
    lines = []
    for method, path, form in requests:
        reply = browser.request(method, path, data=form, follow_redirects=False)
        cookie = re.sub(r"expires=[^;]*", "", reply.headers.get("set-cookie", ""))  # wall clock
        head = [reply.headers.get("location"), cookie]
        lines += [f"{method} {path} {reply.status_code} {head}"]
        lines += reply.text.splitlines()
    return lines


def forum_walk(data):
    post = data.posts_in(data.forums[0].name)[0]
    forum = f"/forum/f/{post.forum}"
    here = f"{forum}/{post.id}"
    user = data.user(post.author)
    other = next(p for p in data.posts_in(post.forum) if p.author != post.author)
    signed_out = [
        ("GET", "/forum/", None),
        ("GET", forum, None),
        ("GET", f"{forum}?sort=top&page=2", None),
        ("GET", f"{forum}?sort=bogus&page=x", None),
        ("GET", here, None),
        ("GET", f"/forum/u/{user.username}", None),
        ("GET", "/forum/login?next=/forum/f/x", None),
        ("POST", "/forum/login", {"username": user.username, "password": "wrong"}),
        ("POST", f"{here}/comment", {"body": "signed out"}),
        ("GET", "/forum/f/nowhere", None),
        ("GET", f"{forum}/99999", None),
        ("GET", "/forum/u/nobody", None),
    ]
    signed_in = [
        (
            "POST",
            f"/forum/login?next={here}",
            {"username": user.username, "password": user.password},
        ),
        ("GET", "/forum/", None),
        ("GET", here, None),
        ("POST", f"{here}/comment", {"body": "A pinned comment"}),
        ("POST", f"{here}/vote", {"direction": "down"}),
        ("GET", here, None),
        ("GET", f"{here}/edit", None),
        ("GET", f"{forum}/{other.id}/edit", None),
        ("POST", f"{here}/edit", {"title": "", "body": "x"}),
        ("POST", f"{here}/edit", {"title": "Pinned title", "body": "Pinned body"}),
        ("GET", f"{forum}/submit", None),
        ("POST", f"{forum}/submit", {"title": "", "body": "no title"}),
        ("POST", f"{forum}/submit", {"title": "A pinned post", "body": "Body"}),
        ("POST", f"{forum}/subscribe", {"action": "subscribe"}),
        ("GET", f"{forum}?sort=new", None),
        ("GET", f"/forum/u/{user.username}", None),
        ("POST", "/forum/logout", None),
        ("GET", "/forum/", None),
    ]
    return signed_out + signed_in


def tracker_walk(data):
    project = data.projects[0].slug
    issue = data.issues_of(project)[0]
    root = f"/tracker/p/{project}"
    here = f"{root}/issues/{issue.iid}"
    owner = next(u for u, r in data.members_of(project).items() if r == "Owner")
    outsider = next(u.username for u in data.users if u.username not in data.members_of(project))
    password = data.user(owner).password
    label = data.labels_of(project)[0]
    signed_out = [
        ("GET", "/tracker/", None),
        ("GET", root, None),
        ("GET", f"{root}/issues", None),
        ("GET", f"{root}/issues?state=all&label={label}&page=2", None),
        ("GET", f"{root}/issues?state=closed&assignee=none&search=the", None),
        ("GET", here, None),
        ("GET", f"{root}/labels", None),
        ("GET", f"{root}/milestones", None),
        ("GET", "/tracker/login", None),
        ("POST", "/tracker/login", {"username": owner, "password": "wrong"}),
        ("POST", f"{here}/state", {"state": "closed"}),
        ("GET", f"{root}/settings/members", None),
        ("GET", "/tracker/p/nowhere", None),
        ("GET", f"{root}/issues/9999", None),
    ]
    signed_in = [
        ("POST", f"/tracker/login?next={here}", {"username": owner, "password": password}),
        ("GET", here, None),
        ("POST", f"{here}/comment", {"body": "A pinned note"}),
        ("POST", f"{here}/state", {"state": "closed" if issue.state == "opened" else "opened"}),
        ("GET", f"{here}/edit", None),
        ("POST", f"{here}/edit", {"title": "", "labels": label}),
        ("POST", f"{here}/edit", {"title": "Pinned", "assignee": owner, "labels": label}),
        ("GET", f"{root}/issues/new", None),
        ("POST", f"{root}/issues/new", {"title": "New", "assignee": "nobody"}),
        ("POST", f"{root}/issues/new", {"title": "Pinned new issue", "labels": label}),
        ("GET", f"{root}/issues?state=all", None),
        ("GET", f"{root}/settings/members", None),
        ("POST", f"{root}/settings/members", {"username": "nobody", "role": "Guest"}),
        ("POST", f"{root}/settings/members", {"username": outsider, "role": "Boss"}),
        ("POST", f"{root}/settings/members", {"username": outsider, "role": "Developer"}),
        ("POST", f"{root}/settings/members", {"username": outsider, "action": "remove"}),
        ("GET", f"{root}/settings/members", None),
        ("POST", "/tracker/logout", None),
        ("GET", "/tracker/", None),
    ]
    return signed_out + signed_in


@pytest.mark.parametrize(
    "name,site,walk",
    [
        ("forum", ForumSite(), lambda: forum_walk(forum_data(3))),
        ("tracker", TrackerSite(), lambda: tracker_walk(tracker_data(5))),
    ],
)
def test_the_pages_are_pinned(tmp_path, name, site, walk):
    seed = 3 if name == "forum" else 5
    state = SiteState(tmp_path, {name: site})
    state.prepare("ep1", {name: seed})
    app = make_app(state.state_dir, state.sites)
    with TestClient(app, headers={EPISODE_HEADER: "ep1"}) as browser:
        lines = visit(browser, walk())
    assert digest(lines) == DIGESTS[f"{name}-pages"]


# ---------------------------------------------------------------------------- tasks


def task_lines(tasks, name, state):
    """Each sampled task: its template, goal, evaluator and the verdict of an agent that did
    nothing (on the untouched database) and of one that answered "3"."""
    lines = []
    for split in ("dev", "test"):
        for difficulty in tasks.difficulties:
            for index in range(12):
                task = tasks.get(f"{split}/{difficulty}/{index}")
                fields = {k: repr(v) for k, v in vars(task._evaluator).items() if k != "program"}
                episode = f"{split}{difficulty}{index}"
                state.prepare(episode, task.sites)
                idle = SimpleNamespace(
                    answer=None,
                    infeasible=None,
                    path=task.start_path,
                    db=lambda site, e=episode: state.connect(e, site),
                )
                answered = SimpleNamespace(**{**vars(idle), "answer": "3"})
                verdicts = [repr(task.validate(w)) for w in (idle, answered)]
                record = [task.id, type(task).__name__, task.kind, task.goal(), task.start_path]
                record += [json.dumps(task.sites), json.dumps(fields), *verdicts]
                lines += record
                state.release(episode)
    return lines


@pytest.mark.parametrize(
    "name,site,tasks",
    [("forum", ForumSite(), forum_tasks), ("tracker", TrackerSite(), tracker_tasks)],
)
def test_the_tasks_and_their_verdicts_are_pinned(tmp_path, name, site, tasks):
    state = SiteState(tmp_path, {name: site})
    assert digest(task_lines(tasks(), name, state)) == DIGESTS[f"{name}-tasks"]
