"""The tracker's content, generated from a seed: users, projects, members, labels,
milestones, issues and their comments.

:func:`generate` is a pure function of the seed; :meth:`TrackerSite.build` writes what it
returns and the task generator reads the same objects to choose targets and compute gold
answers. Times are seconds after :data:`EPOCH` (no wall clock), and issue titles are unique
within a project so a goal can name an issue by its title.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from agentgym.envs.web.sites.users import UserData, check_seed

__all__ = ["EPOCH", "ROLES", "Issue", "TrackerData", "generate"]

EPOCH = 1_704_067_200
"""2024-01-01 00:00 UTC: every timestamp of the tracker is an offset from here."""

ROLES = ("Guest", "Reporter", "Developer", "Maintainer", "Owner")
"""GitLab's roles, weakest first; managing members needs Maintainer or Owner."""

PEOPLE = (
    ("alice", "Alice Nguyen"), ("bob", "Bob Okafor"), ("carol", "Carol Schmidt"),
    ("dave", "Dave Kowalski"), ("erin", "Erin Walsh"), ("frank", "Frank Moreau"),
    ("grace", "Grace Lindqvist"), ("heidi", "Heidi Tanaka"), ("ivan", "Ivan Petrov"),
    ("judy", "Judy Alvarez"), ("mallory", "Mallory Chen"), ("niaj", "Niaj Haddad"),
    ("olivia", "Olivia Brennan"), ("peggy", "Peggy Osei"), ("rupert", "Rupert Dahl"),
    ("sybil", "Sybil Rossi"), ("trent", "Trent Ivanova"), ("victor", "Victor Mensah"),
)  # fmt: skip

PROJECTS = {
    "atlas": ("Atlas", "A map tile server."),
    "beacon": ("Beacon", "Push notifications for mobile apps."),
    "comet": ("Comet", "A static site generator."),
    "delta": ("Delta", "Incremental backups to object storage."),
    "ember": ("Ember", "A terminal text editor."),
    "falcon": ("Falcon", "A job queue with retries."),
    "harbor": ("Harbor", "A container registry mirror."),
}

LABELS = (
    ("bug", "Something is broken"),
    ("feature", "A new capability"),
    ("ui", "User interface"),
    ("docs", "Documentation"),
    ("performance", "Too slow or too big"),
    ("security", "A security concern"),
    ("question", "Needs an answer, not code"),
)

MILESTONES = ("v1.0", "v1.1", "v1.2", "v2.0")

SUBJECTS = (
    "login page", "settings dialog", "export job", "search box", "config parser",
    "upload form", "cache layer", "sidebar", "API client", "scheduler", "installer",
    "error messages", "dark mode", "keyboard shortcuts", "audit log", "CLI help",
)  # fmt: skip

PATTERNS = (
    "Crash in the {x}", "The {x} is slow", "Redesign the {x}", "Document the {x}",
    "Add tests for the {x}", "Typo in the {x}", "Refactor the {x}", "Translate the {x}",
    "The {x} leaks memory", "Accessibility of the {x}",
)  # fmt: skip

NOTES = (
    "I can reproduce this on the main branch.",
    "Could you attach the logs?",
    "Working on a fix.",
    "This looks like a duplicate.",
    "Confirmed, thanks for the report.",
    "Fixed in the latest build, please verify.",
    "Needs a design decision first.",
    "Moving this to the next milestone.",
)


@dataclass(frozen=True)
class User:
    id: int
    username: str
    name: str
    password: str


@dataclass(frozen=True)
class Project:
    id: int
    slug: str
    name: str
    description: str


@dataclass(frozen=True)
class Milestone:
    id: int
    project: str
    title: str
    due: str
    state: str  # "active" or "closed"


@dataclass(frozen=True)
class Issue:
    id: int
    project: str
    iid: int  # the number within the project, shown as #iid
    title: str
    description: str
    author: str
    assignee: str | None
    milestone: str | None
    labels: tuple[str, ...]
    state: str  # "opened" or "closed"
    created: int


@dataclass(frozen=True)
class Note:
    id: int
    issue_id: int
    author: str
    body: str
    created: int


@dataclass(frozen=True)
class TrackerData(UserData[User]):
    """Everything :func:`generate` makes for one seed (the secret and users first)."""

    projects: tuple[Project, ...]
    members: tuple[tuple[str, str, str], ...]  # (project slug, username, role)
    labels: tuple[tuple[str, str, str], ...]  # (project slug, label, description)
    milestones: tuple[Milestone, ...]
    issues: tuple[Issue, ...]
    notes: tuple[Note, ...]

    def issues_of(self, project: str) -> list[Issue]:
        return [i for i in self.issues if i.project == project]

    def members_of(self, project: str) -> dict[str, str]:
        return {u: r for p, u, r in self.members if p == project}

    def labels_of(self, project: str) -> list[str]:
        return [name for p, name, _ in self.labels if p == project]


@functools.lru_cache(maxsize=32)
def generate(seed: int) -> TrackerData:
    """The tracker's content for ``seed`` (cached: task generation asks for it often)."""
    check_seed("tracker", seed)
    rng = np.random.default_rng([seed, 0x7A])
    people = sorted(rng.choice(len(PEOPLE), size=12, replace=False).tolist())
    users = tuple(
        User(i + 1, PEOPLE[k][0], PEOPLE[k][1], f"{PEOPLE[k][0]}-{int(rng.integers(1000, 10_000))}")
        for i, k in enumerate(people)
    )
    names = [u.username for u in users]
    slugs = sorted(rng.choice(sorted(PROJECTS), size=4, replace=False).tolist())
    projects = tuple(Project(i + 1, s, *PROJECTS[s]) for i, s in enumerate(slugs))
    members: list[tuple[str, str, str]] = []
    labels: list[tuple[str, str, str]] = []
    milestones: list[Milestone] = []
    issues: list[Issue] = []
    notes: list[Note] = []
    for project in projects:
        team = [names[k] for k in sorted(rng.choice(len(names), size=7, replace=False))]
        roles = ["Owner", "Maintainer", *rng.choice(ROLES[:3], size=len(team) - 2).tolist()]
        members += [(project.slug, u, str(r)) for u, r in zip(team, roles, strict=True)]
        kept = sorted(rng.choice(len(LABELS), size=5, replace=False).tolist())
        own_labels = [LABELS[k][0] for k in kept]
        if "bug" not in own_labels:
            own_labels[0], kept[0] = "bug", 0
        labels += [(project.slug, LABELS[k][0], LABELS[k][1]) for k in kept]
        for m, title in enumerate(MILESTONES[: int(rng.integers(2, 5))]):
            due = f"2024-{3 + 2 * m:02d}-{int(rng.integers(1, 29)):02d}"
            milestones.append(
                Milestone(
                    len(milestones) + 1, project.slug, title, due, "closed" if m == 0 else "active"
                )
            )
        own_milestones = [m.title for m in milestones if m.project == project.slug]
        titles = [p.format(x=x) for p in PATTERNS for x in SUBJECTS]
        count = int(rng.integers(24, 41))
        times = EPOCH + np.sort(rng.choice(150 * 86_400, size=count, replace=False))
        for iid, pick in enumerate(rng.choice(len(titles), size=count, replace=False), start=1):
            title = titles[int(pick)]
            chosen = rng.choice(own_labels, size=int(rng.integers(0, 3)), replace=False)
            issues.append(
                Issue(
                    len(issues) + 1,
                    project.slug,
                    iid,
                    title,
                    f"{title}. Steps to reproduce and expected behaviour are below.",
                    str(rng.choice(team)),
                    str(rng.choice(team)) if rng.random() < 0.75 else None,
                    str(rng.choice(own_milestones)) if rng.random() < 0.6 else None,
                    tuple(sorted(str(x) for x in chosen)),
                    "closed" if rng.random() < 0.35 else "opened",
                    int(times[iid - 1]),
                )
            )
    for issue in issues:
        team = [u for p, u, _ in members if p == issue.project]
        for k in range(int(rng.integers(0, 5))):
            notes.append(
                Note(
                    len(notes) + 1,
                    issue.id,
                    str(rng.choice(team)),
                    str(rng.choice(NOTES)),
                    issue.created + 3600 * (k + 1) + int(rng.integers(0, 3000)),
                )
            )
    return TrackerData(
        rng.bytes(16).hex(),
        users,
        projects,
        tuple(members),
        tuple(labels),
        tuple(milestones),
        tuple(issues),
        tuple(notes),
    )
