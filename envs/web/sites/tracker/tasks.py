"""The tracker's task templates: questions, navigation and writes, each with its oracle.

==========================  ==========  ==============  ===================================
template                    evaluator   levels          the goal
==========================  ==========  ==============  ===================================
``IssueAssignee``           answer      easy            who is assigned an issue
``OpenLabelCount``          answer      medium          how many open issues carry a label
``TopReporter``             answer      hard            who opened the most issues with a label
``FilteredList``            URL         all             the issue list under some filters
``CreateIssue``             program     medium, hard    a new issue with a label (and assignee)
``AssignAndLabel``          program     medium          assign an issue and add a label
``AddMember``               program     easy            add a user to a project with a role
``CloseAssigned``           program     hard            close every open issue of an assignee
``InfeasibleRequest``       infeasible  all             ask for what the tracker cannot do
==========================  ==========  ==============  ===================================
"""

from __future__ import annotations

import sqlite3
from collections import Counter

import numpy as np

from agentgym.core import GeneratedTaskSet, Verdict
from agentgym.envs.web.actions import format_action
from agentgym.envs.web.base import WebWorld
from agentgym.envs.web.evaluators import Evaluator, StringMatch, UrlMatch, all_of
from agentgym.envs.web.sites.tracker.data import Issue, Project, TrackerData, generate
from agentgym.envs.web.sites.tracker.site import TrackerSite
from agentgym.envs.web.template_tasks import (
    InfeasibleTemplate,
    TemplateTask,
    click,
    go,
    same_page,
    submit_form,
    template_task_set,
)

__all__ = ["TEMPLATES", "TrackerTask", "tracker_tasks"]

LIST_DEFAULTS = {"state": "opened", "page": "1"}
STATE_NAMES = {"opened": "Open", "closed": "Closed", "all": "All"}


class TrackerTask(TemplateTask):
    """A tracker task: the data of its seed is at hand as :attr:`data`."""

    site_class = TrackerSite

    @property
    def data(self) -> TrackerData:
        return generate(self.data_seed)

    def project_of(self, rng: np.random.Generator) -> Project:
        return self.data.projects[int(rng.integers(len(self.data.projects)))]

    def manager_of(self, rng: np.random.Generator, project: str) -> str:
        """A member who may manage the project (Maintainer or Owner)."""
        managers = [
            u for u, r in self.data.members_of(project).items() if r in ("Maintainer", "Owner")
        ]
        return str(rng.choice(sorted(managers)))

    def issue_path(self, issue: Issue) -> str:
        return f"/tracker/p/{issue.project}/issues/{issue.iid}"

    def list_path(self, project: str, **filters: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in filters.items() if v)
        return f"/tracker/p/{project}/issues" + (f"?{query}" if query else "")

    def walk_to_list(self, world: WebWorld, project: str) -> str:
        """Toward the project's issue list, through the project page."""
        if same_page(world, f"/tracker/p/{project}"):
            return go(world, self.list_path(project))
        if same_page(world, "/tracker/"):
            return go(world, f"/tracker/p/{project}")
        return go(world, self.list_path(project))


def _issue_row(db: sqlite3.Connection, issue: Issue) -> sqlite3.Row:
    row: sqlite3.Row = db.execute(
        "SELECT i.*, s.username AS assignee FROM issues i JOIN projects p ON p.id = i.project_id "
        "LEFT JOIN users s ON s.id = i.assignee_id WHERE p.slug = ? AND i.iid = ?",
        (issue.project, issue.iid),
    ).fetchone()
    return row


def _labels(db: sqlite3.Connection, issue_id: int) -> set[str]:
    rows = db.execute(
        "SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id "
        "WHERE il.issue_id = ?",
        (issue_id,),
    )
    return {r[0] for r in rows}


# ---------------------------------------------------------------------------- questions


class IssueAssignee(TrackerTask):
    kind, levels = "answer", ("easy",)

    def draw(self, rng: np.random.Generator) -> None:
        assigned = [i for i in self.data.issues if i.assignee]
        self.issue = assigned[int(rng.integers(len(assigned)))]

    def goal(self) -> str:
        project = next(p for p in self.data.projects if p.slug == self.issue.project)
        return (
            f"Who is assigned to issue #{self.issue.iid} of the {project.name} project? "
            f"Answer with the username."
        )

    def evaluator(self) -> Evaluator:
        return StringMatch(exact=self.issue.assignee)

    def solve(self, world: WebWorld) -> str | None:
        if same_page(world, self.issue_path(self.issue)):
            return format_action("answer", self.issue.assignee)
        if same_page(world, self.list_path(self.issue.project), LIST_DEFAULTS):
            return go(world, self.issue_path(self.issue))
        return self.walk_to_list(world, self.issue.project)


class OpenLabelCount(TrackerTask):
    kind, levels = "answer", ("medium",)

    def draw(self, rng: np.random.Generator) -> None:
        self.project = self.project_of(rng)
        self.label = str(rng.choice(self.data.labels_of(self.project.slug)))
        self.count = sum(
            i.state == "opened" and self.label in i.labels
            for i in self.data.issues_of(self.project.slug)
        )

    def goal(self) -> str:
        return (
            f"How many open issues labelled {self.label!r} does the {self.project.name} "
            f"project have? Answer with the number."
        )

    def evaluator(self) -> Evaluator:
        return StringMatch(number=self.count)

    def solve(self, world: WebWorld) -> str | None:
        labels = f"/tracker/p/{self.project.slug}/labels"
        if same_page(world, labels):
            return format_action("answer", str(self.count))
        if same_page(world, self.list_path(self.project.slug), LIST_DEFAULTS):
            return go(world, labels)
        return self.walk_to_list(world, self.project.slug)


class TopReporter(TrackerTask):
    kind, levels = "answer", ("hard",)

    def draw(self, rng: np.random.Generator) -> None:
        for _ in range(100):
            self.project = self.project_of(rng)
            self.label = str(rng.choice(self.data.labels_of(self.project.slug)))
            authors = Counter(
                i.author for i in self.data.issues_of(self.project.slug) if self.label in i.labels
            ).most_common()
            if authors and (len(authors) == 1 or authors[0][1] > authors[1][1]):
                self.author = authors[0][0]
                return
        raise ValueError(f"data seed {self.data_seed} has no label with a single top reporter")

    def goal(self) -> str:
        return (
            f"In the {self.project.name} project, which user opened the most issues labelled "
            f"{self.label!r} (open or closed)? Answer with the username."
        )

    def evaluator(self) -> Evaluator:
        return StringMatch(exact=self.author)

    def solve(self, world: WebWorld) -> str | None:
        listing = self.list_path(self.project.slug, state="all", label=self.label)
        if same_page(world, listing, LIST_DEFAULTS):
            return format_action("answer", self.author)
        if same_page(world, self.list_path(self.project.slug), LIST_DEFAULTS) or (
            world.path.startswith(f"/tracker/p/{self.project.slug}/issues?")
        ):
            return submit_form(
                world,
                [("combobox", "State", "All"), ("combobox", "Label", self.label)],
                "Apply filters",
            )
        return self.walk_to_list(world, self.project.slug)


# ---------------------------------------------------------------------------- navigation


class FilteredList(TrackerTask):
    """easy: state and label; medium: open issues of a label in a milestone; hard: state,
    label and assignee."""

    kind, levels = "url", ("easy", "medium", "hard")

    def draw(self, rng: np.random.Generator) -> None:
        self.project = self.project_of(rng)
        medium = self.difficulty == "medium"
        self.state = "opened" if medium else str(rng.choice(["closed", "all"]))
        self.label = str(rng.choice(self.data.labels_of(self.project.slug)))
        members = sorted(self.data.members_of(self.project.slug))
        self.assignee = str(rng.choice(members)) if self.difficulty == "hard" else ""
        milestones = sorted(
            {m.title for m in self.data.milestones if m.project == self.project.slug}
        )
        self.milestone = str(rng.choice(milestones)) if medium else ""

    @property
    def target(self) -> str:
        return self.list_path(
            self.project.slug,
            state=self.state,
            label=self.label,
            assignee=self.assignee,
            milestone=self.milestone,
        )

    def goal(self) -> str:
        which = {
            "opened": "open issues",
            "closed": "closed issues",
            "all": "issues, open and closed,",
        }[self.state]
        whose = f" assigned to {self.assignee}" if self.assignee else ""
        when = f" in the milestone {self.milestone}" if self.milestone else ""
        return (
            f"Open the list of {which} labelled {self.label!r}{whose}{when} in the "
            f"{self.project.name} project."
        )

    def evaluator(self) -> Evaluator:
        return UrlMatch(self.target, defaults=LIST_DEFAULTS)

    def solve(self, world: WebWorld) -> str | None:
        if same_page(world, self.target, LIST_DEFAULTS):
            return None
        if world.path.split("?")[0] == f"/tracker/p/{self.project.slug}/issues":
            fields = [
                ("combobox", "State", STATE_NAMES[self.state]),
                ("combobox", "Label", self.label),
                ("combobox", "Assignee", self.assignee or "Any assignee"),
                ("combobox", "Milestone", self.milestone or "Any milestone"),
            ]
            return submit_form(world, fields, "Apply filters")
        return self.walk_to_list(world, self.project.slug)


# ---------------------------------------------------------------------------- writes


class CreateIssue(TrackerTask):
    kind, levels = "program", ("medium", "hard")

    def draw(self, rng: np.random.Generator) -> None:
        self.project = self.project_of(rng)
        self.user = self.manager_of(rng, self.project.slug)
        self.label = str(rng.choice(self.data.labels_of(self.project.slug)))
        area = rng.choice(["export", "search", "login", "sync", "upload"])
        self.title = f"Investigate {area} failures ({int(rng.integers(100, 1000))})"
        members = sorted(self.data.members_of(self.project.slug))
        self.assignee = str(rng.choice(members)) if self.difficulty == "hard" else None

    def goal(self) -> str:
        whom = f", assigned to {self.assignee}" if self.assignee else ""
        return (
            self.credentials() + f"create an issue in the {self.project.name} project titled "
            f"{self.title!r} with the label {self.label!r}{whom}."
        )

    def evaluator(self) -> Evaluator:
        def created(db: sqlite3.Connection) -> Verdict:
            """one open issue with the title, label (and assignee) in the project"""
            rows = db.execute(
                "SELECT i.id, p.slug, a.username AS author, s.username AS assignee, i.state "
                "FROM issues i JOIN projects p ON p.id = i.project_id "
                "JOIN users a ON a.id = i.author_id LEFT JOIN users s ON s.id = i.assignee_id "
                "WHERE trim(i.title) = ?",
                (self.title,),
            ).fetchall()
            mine = [r for r in rows if r["slug"] == self.project.slug and r["author"] == self.user]
            issue = mine[0] if len(mine) == 1 else None
            facts = [
                ("one such issue in the project, by the user", issue is not None),
                ("it is open", issue is not None and issue["state"] == "opened"),
                ("it has the label", issue is not None and self.label in _labels(db, issue["id"])),
            ]
            if self.assignee:
                facts.append(
                    ("it is assigned", issue is not None and issue["assignee"] == self.assignee)
                )
            return all_of(facts, keep=[("no stray copies", len(rows) == len(mine))])

        return self.program(created)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        new = f"/tracker/p/{self.project.slug}/issues/new"
        if same_page(world, new):
            fields = [("textbox", "Title", self.title), ("checkbox", self.label, "on")]
            if self.assignee:
                fields.append(("combobox", "Assignee", self.assignee))
            return submit_form(world, fields, "Create issue")
        if world.snapshot.find_all("heading", contains=self.title):
            return None  # the new issue's page
        if same_page(world, self.list_path(self.project.slug), LIST_DEFAULTS):
            return go(world, new)
        return self.walk_to_list(world, self.project.slug)


class AssignAndLabel(TrackerTask):
    kind, levels = "program", ("medium",)

    def draw(self, rng: np.random.Generator) -> None:
        self.project = self.project_of(rng)
        issues = [i for i in self.data.issues_of(self.project.slug) if i.state == "opened"]
        self.issue = issues[int(rng.integers(len(issues)))]
        self.user = self.manager_of(rng, self.project.slug)
        members = sorted(set(self.data.members_of(self.project.slug)) - {self.issue.assignee})
        self.assignee = str(rng.choice(members))
        missing = sorted(set(self.data.labels_of(self.project.slug)) - set(self.issue.labels))
        self.label = str(rng.choice(missing))

    def goal(self) -> str:
        return (
            self.credentials() + f"assign issue #{self.issue.iid} of the {self.project.name} "
            f"project to {self.assignee} and add the label {self.label!r} to it, keeping its "
            f"other labels."
        )

    def evaluator(self) -> Evaluator:
        def assigned(db: sqlite3.Connection) -> Verdict:
            """the issue is assigned, has the new label and keeps the old ones"""
            row = _issue_row(db, self.issue)
            labels = _labels(db, row["id"])
            return all_of(
                [
                    (f"assigned to {self.assignee}", row["assignee"] == self.assignee),
                    (f"labelled {self.label}", self.label in labels),
                ],
                keep=[
                    ("old labels kept", set(self.issue.labels) <= labels),
                    ("still open", row["state"] == "opened"),
                ],
            )

        return self.program(assigned)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        path = self.issue_path(self.issue)
        if same_page(world, f"{path}/edit"):
            fields = [("combobox", "Assignee", self.assignee), ("checkbox", self.label, "on")]
            return submit_form(world, fields, "Save changes")
        if same_page(world, path):
            return go(world, f"{path}/edit")
        if same_page(world, self.list_path(self.project.slug), LIST_DEFAULTS):
            return go(world, path)
        return self.walk_to_list(world, self.project.slug)


class AddMember(TrackerTask):
    kind, levels = "program", ("easy",)

    def draw(self, rng: np.random.Generator) -> None:
        self.project = self.project_of(rng)
        self.user = self.manager_of(rng, self.project.slug)
        members = self.data.members_of(self.project.slug)
        outsiders = [u.username for u in self.data.users if u.username not in members]
        self.newcomer = str(rng.choice(outsiders))
        self.role = str(rng.choice(["Reporter", "Developer", "Maintainer"]))

    def goal(self) -> str:
        return (
            self.credentials()
            + f"add {self.newcomer} to the {self.project.name} project as a {self.role}."
        )

    def evaluator(self) -> Evaluator:
        def added(db: sqlite3.Connection) -> Verdict:
            """the newcomer is a member with the role; the other members are unchanged"""
            rows = db.execute(
                "SELECT u.username, m.role FROM members m JOIN users u ON u.id = m.user_id "
                "JOIN projects p ON p.id = m.project_id WHERE p.slug = ?",
                (self.project.slug,),
            ).fetchall()
            now = dict(map(tuple, rows))
            return all_of(
                [(f"{self.newcomer} is a {self.role}", now.get(self.newcomer) == self.role)],
                keep=[
                    (
                        "the other members are unchanged",
                        {u: r for u, r in now.items() if u != self.newcomer}
                        == self.data.members_of(self.project.slug),
                    ),
                ],
            )

        return self.program(added)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        members = f"/tracker/p/{self.project.slug}/settings/members"
        if same_page(world, members):
            if world.snapshot.find_all("button", f"Remove {self.newcomer}"):
                return None  # listed: the role was saved with the member
            fields = [("combobox", "User", self.newcomer), ("combobox", "Role", self.role)]
            return submit_form(world, fields, "Save member")
        if same_page(world, f"/tracker/p/{self.project.slug}"):
            return go(world, members)
        if same_page(world, "/tracker/"):
            return go(world, f"/tracker/p/{self.project.slug}")
        return go(world, members)


class CloseAssigned(TrackerTask):
    kind, levels = "program", ("hard",)

    def draw(self, rng: np.random.Generator) -> None:
        for _ in range(100):
            self.project = self.project_of(rng)
            load = Counter(
                i.assignee
                for i in self.data.issues_of(self.project.slug)
                if i.state == "opened" and i.assignee
            )
            choices = sorted(u for u, n in load.items() if 1 <= n <= 5)
            if choices:
                break
        else:
            raise ValueError(f"data seed {self.data_seed} has no assignee with 1-5 open issues")
        self.assignee = str(rng.choice(choices))
        self.targets = sorted(
            i.iid
            for i in self.data.issues_of(self.project.slug)
            if i.state == "opened" and i.assignee == self.assignee
        )
        self.user = self.manager_of(rng, self.project.slug)

    def goal(self) -> str:
        return (
            self.credentials() + f"close every open issue assigned to {self.assignee} in the "
            f"{self.project.name} project."
        )

    def evaluator(self) -> Evaluator:
        def closed(db: sqlite3.Connection) -> Verdict:
            """the assignee's open issues are closed and no other issue changed state"""
            rows = db.execute(
                "SELECT i.iid, i.state FROM issues i JOIN projects p ON p.id = i.project_id "
                "WHERE p.slug = ?",
                (self.project.slug,),
            ).fetchall()
            now = dict(map(tuple, rows))
            before = {i.iid: i.state for i in self.data.issues_of(self.project.slug)}
            return all_of(
                [(f"#{iid} closed", now.get(iid) == "closed") for iid in self.targets],
                keep=[
                    (
                        "no other issue changed state",
                        all(now.get(k) == s for k, s in before.items() if k not in self.targets),
                    ),
                ],
            )

        return self.program(closed)

    def solve(self, world: WebWorld) -> str | None:
        move = self.sign_in(world)
        if move is not None:
            return move
        listing = self.list_path(self.project.slug, assignee=self.assignee)
        issue_paths = [f"/tracker/p/{self.project.slug}/issues/{iid}" for iid in self.targets]
        if any(same_page(world, p) for p in issue_paths):
            if world.snapshot.find_all("button", "Close issue"):
                return click(world, "button", "Close issue")
            return go(world, listing)
        if same_page(world, listing, LIST_DEFAULTS):
            for path in issue_paths:
                link = [n for n in world.snapshot.find_all("link") if (n.href or "").endswith(path)]
                if link:
                    return format_action("click", link[0].id)
            return None  # the assignee has no open issue left
        if world.path.split("?")[0] == f"/tracker/p/{self.project.slug}/issues":
            fields = [("combobox", "State", "Open"), ("combobox", "Assignee", self.assignee)]
            return submit_form(world, fields, "Apply filters")
        return self.walk_to_list(world, self.project.slug)


# ---------------------------------------------------------------------------- infeasible


class InfeasibleRequest(InfeasibleTemplate, TrackerTask):
    """Asks for what the tracker has no feature for; the right move is ``report_infeasible``."""

    ASKS = (
        ("set the weight of issue #{iid} of {project} to 3", "issues have no weight"),
        ("merge the merge request !{iid} of {project}", "the tracker has no merge requests"),
        ("delete the {project} project", "projects cannot be deleted"),
        ("lock the discussion of issue #{iid} of {project}", "discussions cannot be locked"),
    )

    def draw(self, rng: np.random.Generator) -> None:
        project = self.project_of(rng)
        self.user = self.manager_of(rng, project.slug)
        ask, self.why = self.ASKS[int(rng.integers(len(self.ASKS)))]
        iid = int(rng.integers(1, len(self.data.issues_of(project.slug)) + 1))
        self.ask = ask.format(iid=iid, project=project.name)


TEMPLATES: tuple[type[TrackerTask], ...] = (
    IssueAssignee,
    OpenLabelCount,
    TopReporter,
    FilteredList,
    CreateIssue,
    AssignAndLabel,
    AddMember,
    CloseAssigned,
    InfeasibleRequest,
)


def tracker_tasks() -> GeneratedTaskSet:
    """The tracker's task set: 1,000 dev and test tasks per difficulty, 100,000 train."""
    return template_task_set("web/tracker", TEMPLATES)
