"""The forum's task templates: questions, navigation and writes, each with its oracle.

==========================  ==========  ==============  ===================================
template                    evaluator   levels          the goal
==========================  ==========  ==============  ===================================
``TopPostComments``         answer      easy            comments on a forum's top post
``NewestAuthor``            answer      medium          who wrote a forum's newest post
``UserPostCount``           answer      hard            how many posts a user made in a forum
``SortedListing``           URL         easy, medium    a forum sorted a way (medium: page 2)
``TopAuthorProfile``        URL         hard            the profile of a top post's author
``Subscribe``               program     easy            subscribe to a forum
``CommentOnNewest``         program     medium          comment on a forum's newest post
``CreatePost``              program     medium          submit a post with a title and body
``RetitleOwnPost``          program     hard            change the title of one's own post
``UpvoteUserPosts``         program     hard            upvote every post of a user in a forum
``InfeasibleRequest``       infeasible  all             ask for what the forum cannot do
==========================  ==========  ==============  ===================================
"""

from __future__ import annotations

import sqlite3

import numpy as np

from agentgym.core import GeneratedTaskSet, Verdict
from agentgym.envs.web.actions import format_action
from agentgym.envs.web.base import WebWorld
from agentgym.envs.web.evaluators import Evaluator, StringMatch, UrlMatch, all_of
from agentgym.envs.web.sites.forum.data import ForumData, Post, generate
from agentgym.envs.web.sites.forum.site import ForumSite
from agentgym.envs.web.template_tasks import (
    InfeasibleTemplate,
    TemplateTask,
    click,
    go,
    same_page,
    submit_form,
    template_task_set,
)

__all__ = ["TEMPLATES", "ForumTask", "forum_tasks"]

SORT_DEFAULTS = {"sort": "hot", "page": "1"}
PHRASES = (
    "Thanks for sharing this",
    "I learned something new today",
    "Bookmarking this thread",
    "Great point about the details",
    "Following for updates",
)


class ForumTask(TemplateTask):
    """A forum task: the data of its seed is at hand as :attr:`data`."""

    site_class = ForumSite

    @property
    def data(self) -> ForumData:
        return generate(self.data_seed)

    def forum_of(self, rng: np.random.Generator) -> str:
        return str(rng.choice([f.name for f in self.data.forums]))

    def newest(self, forum: str) -> Post:
        return self.data.posts_in(forum)[0]

    def top(self, forum: str) -> Post:
        return max(self.data.posts_in(forum), key=lambda p: p.score)

    def post_path(self, post: Post) -> str:
        return f"/forum/f/{post.forum}/{post.id}"


def _user_id(db: sqlite3.Connection, username: str) -> int:
    return int(db.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()[0])


# ---------------------------------------------------------------------------- questions


class TopPostComments(ForumTask):
    kind, levels = "answer", ("easy",)

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        self.post = self.top(self.forum)
        self.count = len(self.data.comments_on(self.post.id))

    def goal(self) -> str:
        return (
            f"How many comments does the top post (the one with the highest score) of "
            f"f/{self.forum} have? Answer with the number."
        )

    def evaluator(self) -> Evaluator:
        return StringMatch(number=self.count)

    def solve(self, world: WebWorld) -> str | None:
        if same_page(world, self.post_path(self.post)):
            return format_action("answer", str(self.count))
        if same_page(world, f"/forum/f/{self.forum}?sort=top", SORT_DEFAULTS):
            return go(world, self.post_path(self.post))
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            return go(world, f"/forum/f/{self.forum}?sort=top")
        return go(world, f"/forum/f/{self.forum}")


class NewestAuthor(ForumTask):
    kind, levels = "answer", ("medium",)

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        self.author = self.newest(self.forum).author

    def goal(self) -> str:
        return f"Which user wrote the most recent post in f/{self.forum}? Answer with the username."

    def evaluator(self) -> Evaluator:
        return StringMatch(exact=self.author)

    def solve(self, world: WebWorld) -> str | None:
        if same_page(world, f"/forum/f/{self.forum}?sort=new", SORT_DEFAULTS):
            return format_action("answer", self.author)
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            return go(world, f"/forum/f/{self.forum}?sort=new")
        return go(world, f"/forum/f/{self.forum}")


class UserPostCount(ForumTask):
    kind, levels = "answer", ("hard",)

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        authors = sorted({p.author for p in self.data.posts_in(self.forum)})
        self.author = str(rng.choice(authors))
        self.count = sum(p.author == self.author for p in self.data.posts_in(self.forum))

    def goal(self) -> str:
        return f"How many posts has the user {self.author} submitted to f/{self.forum}?"

    def evaluator(self) -> Evaluator:
        return StringMatch(number=self.count)

    def solve(self, world: WebWorld) -> str | None:
        if same_page(world, f"/forum/u/{self.author}"):
            return format_action("answer", str(self.count))
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            return go(world, f"/forum/u/{self.author}")
        return go(world, f"/forum/f/{self.forum}")


# ---------------------------------------------------------------------------- navigation


class SortedListing(ForumTask):
    kind, levels = "url", ("easy", "medium")

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        self.sort = str(rng.choice(["new", "top"]))
        self.page = 2 if self.difficulty == "medium" else 1

    @property
    def target(self) -> str:
        page = f"&page={self.page}" if self.page > 1 else ""
        return f"/forum/f/{self.forum}?sort={self.sort}{page}"

    def goal(self) -> str:
        where = "the second page of " if self.page > 1 else ""
        return f"Go to {where}the posts of f/{self.forum} sorted by {self.sort}."

    def evaluator(self) -> Evaluator:
        return UrlMatch(self.target, defaults=SORT_DEFAULTS)

    def solve(self, world: WebWorld) -> str | None:
        first = f"/forum/f/{self.forum}?sort={self.sort}"
        if same_page(world, self.target, SORT_DEFAULTS):
            return None
        if same_page(world, first, SORT_DEFAULTS):
            return click(world, "link", "Next page")
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            return go(world, first)
        return go(world, f"/forum/f/{self.forum}")


class TopAuthorProfile(ForumTask):
    kind, levels = "url", ("hard",)

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        self.post = self.top(self.forum)

    def goal(self) -> str:
        return (
            f"Open the profile page of the user who wrote the top-scoring post of f/{self.forum}."
        )

    def evaluator(self) -> Evaluator:
        return UrlMatch(f"/forum/u/{self.post.author}")

    def solve(self, world: WebWorld) -> str | None:
        profile = f"/forum/u/{self.post.author}"
        if same_page(world, profile):
            return None
        if same_page(world, f"/forum/f/{self.forum}?sort=top", SORT_DEFAULTS):
            return go(world, profile)
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            return go(world, f"/forum/f/{self.forum}?sort=top")
        return go(world, f"/forum/f/{self.forum}")


# ---------------------------------------------------------------------------- writes


class Subscribe(ForumTask):
    kind, levels = "program", ("easy",)

    def draw(self, rng: np.random.Generator) -> None:
        subscribed = set(self.data.subscriptions)
        options = [
            (u.username, f.name)
            for u in self.data.users
            for f in self.data.forums
            if (u.username, f.name) not in subscribed
        ]
        self.user, self.forum = options[int(rng.integers(len(options)))]
        self.before = sum(u == self.user for u, _ in subscribed)

    def goal(self) -> str:
        return self.credentials() + f"subscribe to f/{self.forum}."

    def evaluator(self) -> Evaluator:
        def subscribed(db: sqlite3.Connection) -> Verdict:
            """the user is subscribed to the forum, and to nothing else new"""
            rows = db.execute(
                "SELECT f.name FROM subscriptions s JOIN forums f ON f.id = s.forum_id "
                "WHERE s.user_id = ?",
                (_user_id(db, self.user),),
            ).fetchall()
            names = {r[0] for r in rows}
            return all_of(
                [
                    (f"subscribed to f/{self.forum}", self.forum in names),
                ],
                keep=[("no other subscription changed", len(names) == self.before + 1)],
            )

        return self.program(subscribed)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            if world.snapshot.find_all("button", "Unsubscribe"):
                return None
            return click(world, "button", "Subscribe")
        return go(world, f"/forum/f/{self.forum}")


class CommentOnNewest(ForumTask):
    kind, levels = "program", ("medium",)

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        self.post = self.newest(self.forum)
        self.user = str(rng.choice([u.username for u in self.data.users]))
        self.text = f"{rng.choice(PHRASES)} (#{int(rng.integers(100, 1000))})"

    def goal(self) -> str:
        return self.credentials() + f"comment {self.text!r} on the newest post in f/{self.forum}."

    def evaluator(self) -> Evaluator:
        def commented(db: sqlite3.Connection) -> Verdict:
            """one comment with the text by the user on the newest post"""
            rows = db.execute(
                "SELECT post_id, user_id, trim(body) FROM comments WHERE trim(body) = ?",
                (self.text,),
            ).fetchall()
            me = _user_id(db, self.user)
            right = [r for r in rows if r[0] == self.post.id and r[1] == me]
            return all_of(
                [
                    ("the comment is on the newest post, by the user", len(right) == 1),
                ],
                keep=[("no stray copies", len(rows) == len(right))],
            )

        return self.program(commented)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        path = self.post_path(self.post)
        if same_page(world, path):
            if any(n.role != "textbox" for n in world.snapshot.find_all(contains=self.text)):
                return None  # the comment is on the page
            return submit_form(world, [("textbox", "Comment", self.text)], "Post comment")
        if same_page(world, f"/forum/f/{self.forum}?sort=new", SORT_DEFAULTS):
            return go(world, path)
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            return go(world, f"/forum/f/{self.forum}?sort=new")
        return go(world, f"/forum/f/{self.forum}")


class CreatePost(ForumTask):
    kind, levels = "program", ("medium",)

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        self.user = str(rng.choice([u.username for u in self.data.users]))
        number = int(rng.integers(10, 100))
        self.title = f"Weekly discussion thread {number}"
        self.body = f"{rng.choice(PHRASES)}. What is everyone working on this week?"

    def goal(self) -> str:
        return (
            self.credentials()
            + f"submit a post to f/{self.forum} titled {self.title!r} with the body {self.body!r}."
        )

    def evaluator(self) -> Evaluator:
        def posted(db: sqlite3.Connection) -> Verdict:
            """a post with the title and body in the forum, by the user"""
            rows = db.execute(
                "SELECT f.name, p.user_id, trim(p.body) FROM posts p JOIN forums f "
                "ON f.id = p.forum_id WHERE trim(p.title) = ?",
                (self.title,),
            ).fetchall()
            me = _user_id(db, self.user)
            right = [r for r in rows if r[0] == self.forum and r[1] == me]
            return all_of(
                [
                    (f"the post is in f/{self.forum}, by the user", len(right) == 1),
                    ("the body is right", any(r[2] == self.body for r in right)),
                ],
                keep=[("no stray copies", len(rows) == len(right))],
            )

        return self.program(posted)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        submit = f"/forum/f/{self.forum}/submit"
        if same_page(world, submit):
            return submit_form(
                world,
                [("textbox", "Title", self.title), ("textbox", "Body", self.body)],
                "Create post",
            )
        if world.snapshot.find_all("heading", self.title):
            return None  # the new post's page
        if same_page(world, f"/forum/f/{self.forum}", SORT_DEFAULTS):
            return go(world, submit)
        return go(world, f"/forum/f/{self.forum}")


class RetitleOwnPost(ForumTask):
    kind, levels = "program", ("hard",)

    def draw(self, rng: np.random.Generator) -> None:
        self.post = self.data.posts[int(rng.integers(len(self.data.posts)))]
        self.user = self.post.author
        self.new_title = f"{self.post.title} [updated]"

    def goal(self) -> str:
        return (
            self.credentials()
            + f"change the title of your post {self.post.title!r} in f/{self.post.forum} to "
            f"{self.new_title!r}, leaving its body as it is."
        )

    def evaluator(self) -> Evaluator:
        def retitled(db: sqlite3.Connection) -> Verdict:
            """the post has the new title and its old body"""
            row = db.execute(
                "SELECT trim(title), trim(body) FROM posts WHERE id = ?", (self.post.id,)
            ).fetchone()
            return all_of(
                [
                    ("the title is the new one", row[0] == self.new_title),
                ],
                keep=[("the body is unchanged", row[1] == self.post.body)],
            )

        return self.program(retitled)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        path = self.post_path(self.post)
        if same_page(world, f"{path}/edit"):
            return submit_form(world, [("textbox", "Title", self.new_title)], "Save changes")
        if same_page(world, path):
            if world.snapshot.find_all("heading", self.new_title):
                return None
            return go(world, f"{path}/edit")
        if same_page(world, f"/forum/u/{self.user}"):
            return go(world, path)
        return go(world, f"/forum/u/{self.user}")


class UpvoteUserPosts(ForumTask):
    kind, levels = "program", ("hard",)

    def draw(self, rng: np.random.Generator) -> None:
        self.forum = self.forum_of(rng)
        posts = self.data.posts_in(self.forum)
        authors = sorted({p.author for p in posts if sum(q.author == p.author for q in posts) <= 4})
        self.author = str(rng.choice(authors))
        self.targets = sorted(p.id for p in posts if p.author == self.author)
        self.user = str(
            rng.choice([u.username for u in self.data.users if u.username != self.author])
        )

    def goal(self) -> str:
        return (
            self.credentials()
            + f"upvote every post that {self.author} submitted to f/{self.forum}."
        )

    def evaluator(self) -> Evaluator:
        def upvoted(db: sqlite3.Connection) -> Verdict:
            """the user upvoted exactly the author's posts in the forum"""
            votes = dict(
                db.execute(
                    "SELECT post_id, value FROM votes WHERE user_id = ?", (_user_id(db, self.user),)
                ).fetchall()
            )
            return all_of(
                [
                    *((f"post {p} upvoted", votes.get(p) == 1) for p in self.targets),
                ],
                keep=[("no other post voted on", set(votes) <= set(self.targets))],
            )

        return self.program(upvoted)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        paths = [f"/forum/f/{self.forum}/{p}" for p in self.targets]
        here = next((i for i, p in enumerate(paths) if same_page(world, p)), None)
        if here is None:
            if same_page(world, f"/forum/u/{self.author}"):
                return go(world, paths[0])
            return go(world, f"/forum/u/{self.author}")
        if world.snapshot.find_all("button", "Upvote"):
            return click(world, "button", "Upvote")
        if here + 1 < len(paths):
            return go(world, paths[here + 1])
        return None


# ---------------------------------------------------------------------------- infeasible


class InfeasibleRequest(InfeasibleTemplate, ForumTask):
    """Asks for what the forum has no feature for; the right move is ``report_infeasible``."""

    ASKS = (
        ("send a private message to {other} saying hello", "the forum has no private messages"),
        ("delete the forum f/{forum}", "users cannot delete forums"),
        ("change your password to 'hunter2'", "the forum has no password settings"),
        ("pin the top post of f/{forum} to the top of the forum", "the forum has no pinning"),
    )

    def draw(self, rng: np.random.Generator) -> None:
        self.user = str(rng.choice([u.username for u in self.data.users]))
        other = str(rng.choice([u.username for u in self.data.users if u.username != self.user]))
        ask, self.why = self.ASKS[int(rng.integers(len(self.ASKS)))]
        self.ask = ask.format(other=other, forum=self.forum_of(rng))


TEMPLATES: tuple[type[ForumTask], ...] = (
    TopPostComments,
    NewestAuthor,
    UserPostCount,
    SortedListing,
    TopAuthorProfile,
    Subscribe,
    CommentOnNewest,
    CreatePost,
    RetitleOwnPost,
    UpvoteUserPosts,
    InfeasibleRequest,
)


def forum_tasks() -> GeneratedTaskSet:
    """The forum's task set: 1,000 dev and test tasks per difficulty, 100,000 train."""
    return template_task_set("web/forum", TEMPLATES)
