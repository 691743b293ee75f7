"""The forum site: a small Postmill/Reddit with forums, posts, comments, votes and profiles.

Pages (all under ``/forum``): ``/`` the forums; ``/f/{forum}?sort=hot|new|top&page=N`` a
forum's posts, ten a page; ``/f/{forum}/{post}`` a post and its comments; ``/u/{user}`` a
profile; ``/login``. Writes (submit, comment, vote, edit, subscribe) need a signed-in user
and follow POST-redirect-GET; a signed-out write is sent to the login page and changes
nothing. The session is a cookie signed with a secret stored in the episode's database, so
a session never outlives its episode's browser context.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentgym.envs.web.sites.forum.data import ForumData, generate, hot_rank
from agentgym.envs.web.sites.users import UserSite, paginate
from agentgym.envs.web.sites.users import next_time as _next_time

__all__ = ["ForumSite"]

PAGE_SIZE = 10
SORTS = ("hot", "new", "top")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE NOT NULL,
    password TEXT NOT NULL, joined INTEGER NOT NULL, bio TEXT NOT NULL);
CREATE TABLE forums (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, title TEXT NOT NULL,
    description TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE posts (id INTEGER PRIMARY KEY, forum_id INTEGER NOT NULL REFERENCES forums(id),
    user_id INTEGER NOT NULL REFERENCES users(id), title TEXT NOT NULL, body TEXT NOT NULL,
    created INTEGER NOT NULL, edited INTEGER, score INTEGER NOT NULL);
CREATE TABLE comments (id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL REFERENCES posts(id),
    user_id INTEGER NOT NULL REFERENCES users(id), body TEXT NOT NULL,
    created INTEGER NOT NULL, score INTEGER NOT NULL);
CREATE TABLE votes (user_id INTEGER NOT NULL REFERENCES users(id),
    post_id INTEGER NOT NULL REFERENCES posts(id), value INTEGER NOT NULL,
    PRIMARY KEY (user_id, post_id));
CREATE TABLE subscriptions (user_id INTEGER NOT NULL REFERENCES users(id),
    forum_id INTEGER NOT NULL REFERENCES forums(id), PRIMARY KEY (user_id, forum_id));
CREATE INDEX posts_forum ON posts(forum_id);
CREATE INDEX comments_post ON comments(post_id);
"""


def next_time(db: sqlite3.Connection) -> int:
    """The time of a new post, comment or edit: a minute after the latest thing on the forum."""
    return _next_time(db, "posts.created", "comments.created", "posts.edited")


def _sort_key(sort: str, post: sqlite3.Row) -> float:
    """Sorting by ``sort`` puts the smallest key first (hot, new and top are descending)."""
    if sort == "hot":
        return -hot_rank(post["score"], post["created"])
    return -float(post["created"] if sort == "new" else post["score"])


class ForumSite(UserSite[ForumData]):
    """See the module docstring."""

    name = "forum"
    title = "Forum"
    version = 1
    schema = SCHEMA
    home = "Forums"
    sign_in_label = "Log in"
    sign_out_label = "Log out"

    # ------------------------------------------------------------------ data

    def generate(self, seed: int) -> ForumData:
        return generate(seed)

    def write(self, db: sqlite3.Connection, data: ForumData) -> None:
        db.executemany(
            "INSERT INTO users VALUES (?, ?, ?, ?, ?)",
            [(u.id, u.username, u.password, u.joined, u.bio) for u in data.users],
        )
        db.executemany(
            "INSERT INTO forums VALUES (?, ?, ?, ?, ?)",
            [(f.id, f.name, f.title, f.description, f.created) for f in data.forums],
        )
        user_ids = {u.username: u.id for u in data.users}
        forum_ids = {f.name: f.id for f in data.forums}
        db.executemany(
            "INSERT INTO posts VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
            [
                (p.id, forum_ids[p.forum], user_ids[p.author], p.title, p.body, p.created, p.score)
                for p in data.posts
            ],
        )
        db.executemany(
            "INSERT INTO comments VALUES (?, ?, ?, ?, ?, ?)",
            [
                (c.id, c.post_id, user_ids[c.author], c.body, c.created, c.score)
                for c in data.comments
            ],
        )
        db.executemany(
            "INSERT INTO subscriptions VALUES (?, ?)",
            [(user_ids[u], forum_ids[f]) for u, f in data.subscriptions],
        )

    # ------------------------------------------------------------------ routes

    def routes(self) -> list[Any]:
        post, both = "/f/{forum}/{post:int}", ["GET", "POST"]
        return [
            self.route("/", self.index),
            *self.auth_routes(),
            self.route("/u/{username}", self.profile),
            self.route("/f/{forum}", self.forum),
            self.route("/f/{forum}/subscribe", self.subscribe, ["POST"]),
            self.route("/f/{forum}/submit", self.submit, both),
            self.route(post, self.post),
            self.route(f"{post}/comment", self.comment, ["POST"]),
            self.route(f"{post}/vote", self.vote, ["POST"]),
            self.route(f"{post}/edit", self.edit, both),
        ]

    async def index(self, request: Any) -> Any:
        db, me = request.state.db, self.current_user(request)
        forums = db.execute(
            "SELECT f.*, (SELECT count(*) FROM posts p WHERE p.forum_id = f.id) AS posts, "
            "(SELECT count(*) FROM subscriptions s WHERE s.forum_id = f.id) AS subscribers, "
            "EXISTS(SELECT 1 FROM subscriptions s WHERE s.forum_id = f.id AND s.user_id = ?) "
            "AS subscribed FROM forums f ORDER BY f.name",
            (me["id"] if me else -1,),
        ).fetchall()
        return self.page(request, "index.html", forums=forums, me=me)

    def _find_forum(self, request: Any) -> sqlite3.Row | None:
        name = request.path_params["forum"]
        return self.row(request, "SELECT * FROM forums WHERE name = ?", name)

    def _forum(self, request: Any) -> sqlite3.Row:
        """The forum the path names (or its "not found" page, at once)."""
        name = request.path_params["forum"]
        return self.found(request, self._find_forum(request), f"forum f/{name}")

    async def forum(self, request: Any) -> Any:
        db, forum = request.state.db, self._forum(request)
        sort = request.query_params.get("sort", "hot")
        if sort not in SORTS:
            sort = "hot"
        posts = db.execute(
            "SELECT p.*, u.username, (SELECT count(*) FROM comments c WHERE c.post_id = p.id) "
            "AS comments FROM posts p JOIN users u ON u.id = p.user_id WHERE p.forum_id = ?",
            (forum["id"],),
        ).fetchall()
        posts = sorted(posts, key=lambda p: (_sort_key(sort, p), p["id"]))
        shown, page, pages = paginate(request, posts, PAGE_SIZE)
        me = self.current_user(request)
        subscribed = (
            me is not None
            and db.execute(
                "SELECT 1 FROM subscriptions WHERE user_id = ? AND forum_id = ?",
                (me["id"], forum["id"]),
            ).fetchone()
        )
        subscribers = db.execute(
            "SELECT count(*) FROM subscriptions WHERE forum_id = ?", (forum["id"],)
        ).fetchone()[0]
        return self.page(
            request,
            "forum.html",
            me=me,
            forum=forum,
            posts=shown,
            sort=sort,
            sorts=SORTS,
            page=page,
            pages=pages,
            page_link=lambda n: f"/{self.name}/f/{forum['name']}?sort={sort}&page={n}",
            total=len(posts),
            subscribed=bool(subscribed),
            subscribers=subscribers,
        )

    def _post(self, request: Any) -> tuple[sqlite3.Row, sqlite3.Row]:
        """The forum and the post the path names (or the post's "not found" page, at once)."""
        forum = self._find_forum(request)
        post = None
        if forum is not None:
            post = self.row(
                request,
                "SELECT p.*, u.username FROM posts p JOIN users u ON u.id = p.user_id "
                "WHERE p.id = ? AND p.forum_id = ?",
                request.path_params["post"],
                forum["id"],
            )
        if forum is None or post is None:
            self.missing(request, f"post {request.path_params['post']}")
        return forum, post

    async def post(self, request: Any) -> Any:
        db = request.state.db
        forum, post = self._post(request)
        comments = db.execute(
            "SELECT c.*, u.username FROM comments c JOIN users u ON u.id = c.user_id "
            "WHERE c.post_id = ? ORDER BY c.created, c.id",
            (post["id"],),
        ).fetchall()
        me = self.current_user(request)
        vote = 0
        if me is not None:
            row = db.execute(
                "SELECT value FROM votes WHERE user_id = ? AND post_id = ?", (me["id"], post["id"])
            ).fetchone()
            vote = row[0] if row else 0
        return self.page(
            request, "post.html", me=me, forum=forum, post=post, comments=comments, vote=vote
        )

    async def profile(self, request: Any) -> Any:
        db = request.state.db
        name = request.path_params["username"]
        user = self.row(request, "SELECT * FROM users WHERE username = ?", name)
        user = self.found(request, user, f"user {name}")
        posts = db.execute(
            "SELECT p.*, f.name AS forum FROM posts p JOIN forums f ON f.id = p.forum_id "
            "WHERE p.user_id = ? ORDER BY p.created DESC",
            (user["id"],),
        ).fetchall()
        comments = db.execute(
            "SELECT c.*, p.title, p.id AS post_id, f.name AS forum FROM comments c "
            "JOIN posts p ON p.id = c.post_id JOIN forums f ON f.id = p.forum_id "
            "WHERE c.user_id = ? ORDER BY c.created DESC",
            (user["id"],),
        ).fetchall()
        karma = sum(p["score"] for p in posts) + sum(c["score"] for c in comments)
        return self.page(
            request,
            "profile.html",
            user=user,
            posts=posts,
            comments=comments[:10],
            comment_count=len(comments),
            karma=karma,
        )

    # ------------------------------------------------------------------ writes

    async def subscribe(self, request: Any) -> Any:
        db, forum = request.state.db, self._forum(request)
        back = f"/{self.name}/f/{forum['name']}"
        me = self.signed_in(request, back)
        form = await request.form()
        if form.get("action") == "unsubscribe":
            db.execute(
                "DELETE FROM subscriptions WHERE user_id = ? AND forum_id = ?",
                (me["id"], forum["id"]),
            )
        else:
            db.execute("INSERT OR IGNORE INTO subscriptions VALUES (?, ?)", (me["id"], forum["id"]))
        db.commit()
        return self.redirect(back)

    async def submit(self, request: Any) -> Any:
        db, forum = request.state.db, self._forum(request)
        me = self.signed_in(request, f"/{self.name}/f/{forum['name']}/submit")
        if request.method == "GET":
            return self.page(request, "submit.html", me=me, forum=forum, error=None, form={})
        form = await request.form()
        title, body = str(form.get("title", "")).strip(), str(form.get("body", "")).strip()
        if not title:
            return self.page(
                request,
                "submit.html",
                400,
                me=me,
                forum=forum,
                error="A post needs a title.",
                form={"title": title, "body": body},
            )
        cursor = db.execute(
            "INSERT INTO posts (forum_id, user_id, title, body, created, edited, score) "
            "VALUES (?, ?, ?, ?, ?, NULL, 1)",
            (forum["id"], me["id"], title, body, next_time(db)),
        )
        db.execute("INSERT INTO votes VALUES (?, ?, 1)", (me["id"], cursor.lastrowid))
        db.commit()
        return self.redirect(f"/{self.name}/f/{forum['name']}/{cursor.lastrowid}")

    async def comment(self, request: Any) -> Any:
        db = request.state.db
        forum, post = self._post(request)
        back = f"/{self.name}/f/{forum['name']}/{post['id']}"
        me = self.signed_in(request, back)
        body = str((await request.form()).get("body", "")).strip()
        if body:
            db.execute(
                "INSERT INTO comments (post_id, user_id, body, created, score) "
                "VALUES (?, ?, ?, ?, 1)",
                (post["id"], me["id"], body, next_time(db)),
            )
            db.commit()
        return self.redirect(back)

    async def vote(self, request: Any) -> Any:
        """Up or down; voting the same way again takes the vote back (as on Reddit)."""
        db = request.state.db
        forum, post = self._post(request)
        back = f"/{self.name}/f/{forum['name']}/{post['id']}"
        me = self.signed_in(request, back)
        wanted = {"up": 1, "down": -1}.get(str((await request.form()).get("direction")), 0)
        row = db.execute(
            "SELECT value FROM votes WHERE user_id = ? AND post_id = ?", (me["id"], post["id"])
        ).fetchone()
        old = row[0] if row else 0
        new = 0 if wanted == old else wanted
        if new:
            db.execute("INSERT OR REPLACE INTO votes VALUES (?, ?, ?)", (me["id"], post["id"], new))
        else:
            db.execute(
                "DELETE FROM votes WHERE user_id = ? AND post_id = ?", (me["id"], post["id"])
            )
        db.execute("UPDATE posts SET score = score + ? WHERE id = ?", (new - old, post["id"]))
        db.commit()
        return self.redirect(back)

    async def edit(self, request: Any) -> Any:
        db = request.state.db
        forum, post = self._post(request)
        back = f"/{self.name}/f/{forum['name']}/{post['id']}"
        me = self.signed_in(request, f"{back}/edit")
        if me["id"] != post["user_id"]:
            self.missing(request, "a post of yours with that id", 403)
        if request.method == "GET":
            return self.page(request, "edit.html", me=me, forum=forum, post=post, error=None)
        form = await request.form()
        title, body = str(form.get("title", "")).strip(), str(form.get("body", "")).strip()
        if not title:
            return self.page(
                request,
                "edit.html",
                400,
                me=me,
                forum=forum,
                post=post,
                error="A post needs a title.",
            )
        db.execute(
            "UPDATE posts SET title = ?, body = ?, edited = ? WHERE id = ?",
            (title, body, next_time(db), post["id"]),
        )
        db.commit()
        return self.redirect(back)
