"""The forum's content, generated from a seed: users, forums, posts, comments, subscriptions.

:func:`generate` is a pure function of the seed; :meth:`ForumSite.build` writes what it
returns, and the task generator reads the same objects to pick targets and compute gold
answers, so a task and the database it runs on always agree. Times are seconds after
:data:`EPOCH` (a fixed date: no wall clock anywhere), and every forum's posts have distinct
scores and distinct times, so "the top post" and "the newest post" are never ties.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from agentgym.envs.web.sites.users import UserData, check_seed

__all__ = ["EPOCH", "ForumData", "Post", "generate", "hot_rank"]

EPOCH = 1_709_251_200
"""2024-03-01 00:00 UTC: every timestamp of the forum is an offset from here."""

SPAN = 60 * 86_400
"""Seeded content is spread over the 60 days after :data:`EPOCH`."""

NAMES = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "wendy",
)  # fmt: skip

TOPICS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    # name: (title, description, title patterns, fillers)
    "books": (
        "Books",
        "Reading, reviews and recommendations.",
        ("Just finished {x}", "Is {x} worth reading?", "Review: {x}", "Books like {x}?",
         "Why I keep rereading {x}", "Book club pick: {x}"),
        ("Dune", "Middlemarch", "The Hobbit", "Beloved", "Emma", "Ulysses", "Solaris",
         "Kindred", "Persuasion", "The Road", "Neuromancer", "Hyperion"),
    ),
    "cooking": (
        "Cooking",
        "Recipes, techniques and kitchen disasters.",
        ("My first attempt at {x}", "Best way to make {x}?", "Weeknight {x} recipe",
         "Help: my {x} keeps failing", "Grandma's {x}", "{x} tips wanted"),
        ("sourdough", "risotto", "ramen", "paella", "croissants", "curry", "gnocchi",
         "lasagna", "pho", "dumplings", "brioche", "tagine"),
    ),
    "gaming": (
        "Gaming",
        "Video games, old and new.",
        ("Finally beat {x}", "Is {x} still worth playing?", "{x} speedrun strategies",
         "Hidden secrets in {x}", "Replaying {x} after ten years", "{x} co-op partners?"),
        ("Hollow Knight", "Celeste", "Portal 2", "Hades", "Outer Wilds", "Stardew Valley",
         "Factorio", "Terraria", "Doom", "Myst", "Tetris", "Braid"),
    ),
    "science": (
        "Science",
        "News and questions from every field.",
        ("New results on {x}", "Can someone explain {x}?", "Misconceptions about {x}",
         "Open problems in {x}", "A history of {x}", "Textbook recommendations for {x}"),
        ("dark matter", "CRISPR", "plate tectonics", "entropy", "quantum tunnelling",
         "protein folding", "exoplanets", "photosynthesis", "black holes", "vaccines",
         "superconductors", "gravitational waves"),
    ),
    "movies": (
        "Movies",
        "Films, directors and what to watch next.",
        ("Rewatched {x} last night", "Underrated: {x}", "The ending of {x}",
         "{x} soundtrack appreciation", "Is {x} overrated?", "Behind the scenes of {x}"),
        ("Alien", "Vertigo", "Amelie", "Heat", "Arrival", "Jaws", "Casablanca", "Rashomon",
         "Brazil", "Gattaca", "Metropolis", "Paddington 2"),
    ),
    "music": (
        "Music",
        "Albums, gear and practice.",
        ("Learning {x} on guitar", "Album review: {x}", "Live recordings of {x}",
         "Songs that sound like {x}", "Cover of {x}", "The production on {x}"),
        ("Blue Train", "Kind of Blue", "Abbey Road", "Blackstar", "Homogenic", "Rumours",
         "Pet Sounds", "Discovery", "Remain in Light", "Clair de Lune", "Hejira", "Vespertine"),
    ),
    "travel": (
        "Travel",
        "Trip reports and planning help.",
        ("Two weeks in {x}", "First time visiting {x}", "Budget tips for {x}",
         "Hidden gems in {x}", "Is {x} safe in winter?", "Train routes through {x}"),
        ("Lisbon", "Kyoto", "Patagonia", "Iceland", "Oaxaca", "Tbilisi", "Hokkaido",
         "Sicily", "Vietnam", "Morocco", "Norway", "Peru"),
    ),
    "fitness": (
        "Fitness",
        "Training logs, form checks, motivation.",
        ("Progress report: {x}", "Form check on {x}", "Best program for {x}?",
         "Injured doing {x}", "{x} every day for a month", "Beginner questions about {x}"),
        ("deadlifts", "running", "swimming", "pull-ups", "yoga", "cycling", "squats",
         "rowing", "climbing", "kettlebells", "stretching", "sprints"),
    ),
    "history": (
        "History",
        "Ask about any period, any place.",
        ("What caused {x}?", "Daily life during {x}", "Primary sources on {x}",
         "Myths about {x}", "Books about {x}", "How {x} was remembered"),
        ("the Bronze Age collapse", "the Hanseatic League", "the Meiji era", "the Silk Road",
         "the printing press", "the Little Ice Age", "the Inca roads", "the Great Fire",
         "the Congress of Vienna", "the Byzantine court", "the Dust Bowl", "the Vikings"),
    ),
    "programming": (
        "Programming",
        "Code, tools and careers.",
        ("Why is {x} so hard?", "Tips for learning {x}", "A bug in my {x} code",
         "{x} in production", "Favourite {x} resources", "Rewriting it all in {x}"),
        ("Rust", "Haskell", "SQL", "regular expressions", "Python", "Go", "Prolog",
         "Erlang", "Lisp", "Fortran", "Zig", "OCaml"),
    ),
}  # fmt: skip

COMMENTS = (
    "Great post, thanks for sharing.",
    "I had the same experience.",
    "Could you say more about this?",
    "Strongly disagree, but interesting.",
    "Saving this for later.",
    "This is exactly what I needed today.",
    "Has anyone else tried this?",
    "Underrated take.",
    "I think you are missing the bigger picture.",
    "Came here to say this.",
    "Source?",
    "Thanks, this helped a lot.",
)

BODIES = (
    "I have been thinking about this for a while and wanted to hear what you all think.",
    "Long time lurker, first post. Curious about your experiences.",
    "Here is my take after a few months with it.",
    "Quick question for the experts here.",
    "Sharing in case it helps someone else.",
    "Not sure this is the right place, but here goes.",
)


@dataclass(frozen=True)
class User:
    id: int
    username: str
    password: str
    joined: int
    bio: str


@dataclass(frozen=True)
class Forum:
    id: int
    name: str
    title: str
    description: str
    created: int


@dataclass(frozen=True)
class Post:
    id: int
    forum: str
    author: str
    title: str
    body: str
    created: int
    score: int


@dataclass(frozen=True)
class Comment:
    id: int
    post_id: int
    author: str
    body: str
    created: int
    score: int


@dataclass(frozen=True)
class ForumData(UserData[User]):
    """Everything :func:`generate` makes for one seed (the secret and users first)."""

    forums: tuple[Forum, ...]
    posts: tuple[Post, ...]
    comments: tuple[Comment, ...]
    subscriptions: tuple[tuple[str, str], ...]  # (username, forum name)
    _by_forum: dict[str, list[Post]] = field(default_factory=dict, compare=False, repr=False)

    def posts_in(self, forum: str) -> list[Post]:
        """The posts of one forum, newest first."""
        if not self._by_forum:
            for post in sorted(self.posts, key=lambda p: -p.created):
                self._by_forum.setdefault(post.forum, []).append(post)
        return self._by_forum.get(forum, [])

    def comments_on(self, post_id: int) -> list[Comment]:
        """The comments of one post, oldest first."""
        return sorted((c for c in self.comments if c.post_id == post_id), key=lambda c: c.created)


def hot_rank(score: int, created: int) -> float:
    """Reddit's "hot" order: log of the score plus age, measured from the fixed epoch."""
    order = math.log10(max(abs(score), 1))
    sign = (score > 0) - (score < 0)
    return round(sign * order + (created - EPOCH) / 45_000, 7)


@functools.lru_cache(maxsize=32)
def generate(seed: int) -> ForumData:
    """The forum's content for ``seed`` (cached: task generation asks for it often)."""
    check_seed("forum", seed)
    rng = np.random.default_rng([seed, 0xF0])
    names = sorted(rng.choice(NAMES, size=10, replace=False).tolist())
    users = tuple(
        User(
            i + 1,
            name,
            f"{name}-{int(rng.integers(1000, 10_000))}",
            EPOCH - int(rng.integers(30, 900)) * 86_400,
            f"Hi, I am {name}.",
        )
        for i, name in enumerate(names)
    )
    topics = sorted(rng.choice(sorted(TOPICS), size=6, replace=False).tolist())
    forums = tuple(
        Forum(i + 1, t, TOPICS[t][0], TOPICS[t][1], EPOCH - 400 * 86_400 + i)
        for i, t in enumerate(topics)
    )
    posts: list[Post] = []
    comments: list[Comment] = []
    for forum in forums:
        _, _, patterns, fillers = TOPICS[forum.name]
        count = int(rng.integers(14, 27))
        titles = sorted({p.format(x=x) for p in patterns for x in fillers})
        chosen = rng.choice(len(titles), size=count, replace=False)
        times = EPOCH + rng.choice(SPAN, size=count, replace=False)
        scores = rng.choice(np.arange(-5, 400), size=count, replace=False)
        for k in range(count):
            posts.append(
                Post(
                    len(posts) + 1,
                    forum.name,
                    str(rng.choice(names)),
                    titles[int(chosen[k])],
                    str(rng.choice(BODIES)),
                    int(times[k]),
                    int(scores[k]),
                )
            )
    for post in posts:
        for _ in range(int(rng.integers(0, 9))):
            comments.append(
                Comment(
                    0,
                    post.id,
                    str(rng.choice(names)),
                    str(rng.choice(COMMENTS)),
                    post.created + int(rng.integers(60, 3 * 86_400)),
                    int(rng.integers(-3, 60)),
                )
            )
    comments.sort(key=lambda c: (c.created, c.post_id))
    comments = [dataclasses.replace(c, id=i + 1) for i, c in enumerate(comments)]
    subscriptions = tuple((u.username, f.name) for u in users for f in forums if rng.random() < 0.4)
    secret = rng.bytes(16).hex()
    return ForumData(secret, users, forums, tuple(posts), tuple(comments), subscriptions)
