"""The tracker site: a small GitLab with projects, issues, labels, milestones and members.

Pages (all under ``/tracker``): ``/`` the projects; ``/p/{project}/issues`` the issue list
with filters ``state`` (opened, the default; closed; all), ``label``, ``assignee``,
``author``, ``milestone``, ``search`` and ``page``, which a GET form sets, so every view of
the list has its own URL (what URL-match tasks check); ``/p/{project}/issues/{iid}`` an
issue; ``/p/{project}/issues/new`` and ``.../edit``; ``/p/{project}/labels``,
``/p/{project}/milestones`` and ``/p/{project}/settings/members``. Writes need a signed-in
user, follow POST-redirect-GET and change nothing when signed out; managing members needs
the Maintainer or Owner role in the project.
"""

from __future__ import annotations

import sqlite3
from typing import Any, TypedDict
from urllib.parse import urlencode

from agentgym.envs.web.sites.tracker.data import ROLES, TrackerData, generate
from agentgym.envs.web.sites.users import UserSite, paginate
from agentgym.envs.web.sites.users import next_time as _next_time

__all__ = ["FILTERS", "TrackerSite"]

PAGE_SIZE = 20
STATES = ("opened", "closed", "all")
FILTERS = ("state", "label", "assignee", "author", "milestone", "search")
"""The issue list's query parameters (besides ``page``), in the order the form shows them."""

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE NOT NULL, name TEXT NOT NULL,
    password TEXT NOT NULL);
CREATE TABLE projects (id INTEGER PRIMARY KEY, slug TEXT UNIQUE NOT NULL, name TEXT NOT NULL,
    description TEXT NOT NULL);
CREATE TABLE members (project_id INTEGER NOT NULL REFERENCES projects(id),
    user_id INTEGER NOT NULL REFERENCES users(id), role TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id));
CREATE TABLE labels (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL, description TEXT NOT NULL, UNIQUE (project_id, name));
CREATE TABLE milestones (id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id), title TEXT NOT NULL, due TEXT NOT NULL,
    state TEXT NOT NULL, UNIQUE (project_id, title));
CREATE TABLE issues (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
    iid INTEGER NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id), assignee_id INTEGER REFERENCES users(id),
    milestone_id INTEGER REFERENCES milestones(id), state TEXT NOT NULL,
    created INTEGER NOT NULL, updated INTEGER NOT NULL, closed INTEGER,
    UNIQUE (project_id, iid));
CREATE TABLE issue_labels (issue_id INTEGER NOT NULL REFERENCES issues(id),
    label_id INTEGER NOT NULL REFERENCES labels(id), PRIMARY KEY (issue_id, label_id));
CREATE TABLE notes (id INTEGER PRIMARY KEY, issue_id INTEGER NOT NULL REFERENCES issues(id),
    author_id INTEGER NOT NULL REFERENCES users(id), body TEXT NOT NULL,
    created INTEGER NOT NULL);
CREATE INDEX issues_project ON issues(project_id);
CREATE INDEX notes_issue ON notes(issue_id);
"""


def next_time(db: sqlite3.Connection) -> int:
    """The time of a new write: a minute after the latest change to an issue or comment."""
    return _next_time(db, "issues.updated", "notes.created")


class Choices(TypedDict):
    """What the forms of a project offer."""

    members: list[sqlite3.Row]  # username, name, role
    labels: list[str]
    milestones: list[str]


class TrackerSite(UserSite[TrackerData]):
    """See the module docstring."""

    name = "tracker"
    title = "Tracker"
    version = 1
    schema = SCHEMA
    home = "Projects"

    # ------------------------------------------------------------------ data

    def generate(self, seed: int) -> TrackerData:
        return generate(seed)

    def write(self, db: sqlite3.Connection, data: TrackerData) -> None:
        db.executemany(
            "INSERT INTO users VALUES (?, ?, ?, ?)",
            [(u.id, u.username, u.name, u.password) for u in data.users],
        )
        db.executemany(
            "INSERT INTO projects VALUES (?, ?, ?, ?)",
            [(p.id, p.slug, p.name, p.description) for p in data.projects],
        )
        user = {u.username: u.id for u in data.users}
        project = {p.slug: p.id for p in data.projects}
        db.executemany(
            "INSERT INTO members VALUES (?, ?, ?)",
            [(project[p], user[u], role) for p, u, role in data.members],
        )
        db.executemany(
            "INSERT INTO labels (project_id, name, description) VALUES (?, ?, ?)",
            [(project[p], name, text) for p, name, text in data.labels],
        )
        db.executemany(
            "INSERT INTO milestones VALUES (?, ?, ?, ?, ?)",
            [(m.id, project[m.project], m.title, m.due, m.state) for m in data.milestones],
        )
        label = {
            (r[0], r[1]): r[2]
            for r in db.execute("SELECT project_id, name, id FROM labels").fetchall()
        }
        milestone = {(project[m.project], m.title): m.id for m in data.milestones}
        for i in data.issues:
            pid = project[i.project]
            closed = i.created + 86_400 if i.state == "closed" else None
            db.execute(
                "INSERT INTO issues VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    i.id,
                    pid,
                    i.iid,
                    i.title,
                    i.description,
                    user[i.author],
                    user.get(i.assignee) if i.assignee else None,
                    milestone[(pid, i.milestone)] if i.milestone else None,
                    i.state,
                    i.created,
                    closed or i.created,
                    closed,
                ),
            )
            db.executemany(
                "INSERT INTO issue_labels VALUES (?, ?)",
                [(i.id, label[(pid, name)]) for name in i.labels],
            )
        db.executemany(
            "INSERT INTO notes VALUES (?, ?, ?, ?, ?)",
            [(n.id, n.issue_id, user[n.author], n.body, n.created) for n in data.notes],
        )

    # ------------------------------------------------------------------ helpers

    def _find_project(self, request: Any) -> sqlite3.Row | None:
        slug = request.path_params["project"]
        return self.row(request, "SELECT * FROM projects WHERE slug = ?", slug)

    def _project(self, request: Any) -> sqlite3.Row:
        """The project the path names (or its "not found" page, at once)."""
        slug = request.path_params["project"]
        return self.found(request, self._find_project(request), f"project {slug}")

    def _issue(self, request: Any) -> tuple[sqlite3.Row, sqlite3.Row]:
        """The project and the issue the path names (or the issue's "not found" page)."""
        project = self._find_project(request)
        issue = None
        if project is not None:
            issue = self.row(
                request,
                "SELECT i.*, a.username AS author, s.username AS assignee, m.title AS milestone "
                "FROM issues i JOIN users a ON a.id = i.author_id "
                "LEFT JOIN users s ON s.id = i.assignee_id "
                "LEFT JOIN milestones m ON m.id = i.milestone_id "
                "WHERE i.project_id = ? AND i.iid = ?",
                project["id"],
                request.path_params["iid"],
            )
        if project is None or issue is None:
            self.missing(request, f"issue #{request.path_params['iid']}")
        return project, issue

    def _choices(self, db: sqlite3.Connection, project: sqlite3.Row) -> Choices:
        """What the forms of a project offer: its members, labels and milestones."""
        return {
            "members": db.execute(
                "SELECT u.username, u.name, m.role FROM members m JOIN users u "
                "ON u.id = m.user_id WHERE m.project_id = ? ORDER BY u.username",
                (project["id"],),
            ).fetchall(),
            "labels": [
                r["name"]
                for r in db.execute(
                    "SELECT name FROM labels WHERE project_id = ? ORDER BY name", (project["id"],)
                )
            ],
            "milestones": [
                r["title"]
                for r in db.execute(
                    "SELECT title FROM milestones WHERE project_id = ? ORDER BY title",
                    (project["id"],),
                )
            ],
        }

    def _issue_labels(self, db: sqlite3.Connection, issue_ids: list[int]) -> dict[int, list[str]]:
        found: dict[int, list[str]] = {i: [] for i in issue_ids}
        marks = ",".join("?" * len(issue_ids))
        for row in db.execute(
            f"SELECT il.issue_id, l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id "
            f"WHERE il.issue_id IN ({marks}) ORDER BY l.name",
            issue_ids,
        ):
            found[row[0]].append(row[1])
        return found

    # ------------------------------------------------------------------ routes

    def routes(self) -> list[Any]:
        project, both = "/p/{project}", ["GET", "POST"]
        issue = f"{project}/issues/{{iid:int}}"
        return [
            self.route("/", self.index),
            *self.auth_routes(),
            self.route(project, self.project),
            self.route(f"{project}/issues", self.issues),
            self.route(f"{project}/issues/new", self.new_issue, both),
            self.route(issue, self.issue),
            self.route(f"{issue}/edit", self.edit_issue, both),
            self.route(f"{issue}/state", self.set_state, ["POST"]),
            self.route(f"{issue}/comment", self.comment, ["POST"]),
            self.route(f"{project}/labels", self.labels),
            self.route(f"{project}/milestones", self.milestones),
            self.route(f"{project}/settings/members", self.members, both),
        ]

    async def index(self, request: Any) -> Any:
        projects = request.state.db.execute(
            "SELECT p.*, (SELECT count(*) FROM issues i WHERE i.project_id = p.id "
            "AND i.state = 'opened') AS open FROM projects p ORDER BY p.slug"
        ).fetchall()
        return self.page(request, "index.html", projects=projects)

    async def project(self, request: Any) -> Any:
        project = self._project(request)
        counts = request.state.db.execute(
            "SELECT state, count(*) FROM issues WHERE project_id = ? GROUP BY state",
            (project["id"],),
        ).fetchall()
        return self.page(request, "project.html", project=project, counts=dict(map(tuple, counts)))

    async def issues(self, request: Any) -> Any:
        db, project = request.state.db, self._project(request)
        chosen = {k: request.query_params.get(k, "").strip() for k in FILTERS}
        if chosen["state"] not in STATES:
            chosen["state"] = "opened"
        where, args = ["i.project_id = ?"], [project["id"]]
        if chosen["label"]:
            where.append(
                "EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id "
                "WHERE il.issue_id = i.id AND l.name = ?)"
            )
            args.append(chosen["label"])
        if chosen["assignee"] == "none":
            where.append("i.assignee_id IS NULL")
        elif chosen["assignee"]:
            where.append("s.username = ?")
            args.append(chosen["assignee"])
        if chosen["author"]:
            where.append("a.username = ?")
            args.append(chosen["author"])
        if chosen["milestone"]:
            where.append("m.title = ?")
            args.append(chosen["milestone"])
        if chosen["search"]:
            where.append("(i.title LIKE ? OR i.description LIKE ?)")
            args += [f"%{chosen['search']}%"] * 2
        rows = db.execute(
            "SELECT i.*, a.username AS author, s.username AS assignee, m.title AS milestone "
            "FROM issues i JOIN users a ON a.id = i.author_id "
            "LEFT JOIN users s ON s.id = i.assignee_id "
            "LEFT JOIN milestones m ON m.id = i.milestone_id "
            f"WHERE {' AND '.join(where)} ORDER BY i.iid DESC",
            args,
        ).fetchall()
        counts = {s: sum(1 for r in rows if s in ("all", r["state"])) for s in STATES}
        if chosen["state"] != "all":
            rows = [r for r in rows if r["state"] == chosen["state"]]
        shown, page, pages = paginate(request, rows, PAGE_SIZE)

        def link(**change: Any) -> str:
            params = {k: v for k, v in {**chosen, **change}.items() if v}
            return f"/{self.name}/p/{project['slug']}/issues?{urlencode(params)}"

        return self.page(
            request,
            "issues.html",
            project=project,
            issues=shown,
            labels_of=self._issue_labels(db, [r["id"] for r in shown]),
            chosen=chosen,
            counts=counts,
            total=len(rows),
            page=page,
            pages=pages,
            link=link,
            page_link=lambda n: link(page=n),
            states=STATES,
            **self._choices(db, project),
        )

    async def issue(self, request: Any) -> Any:
        db = request.state.db
        project, issue = self._issue(request)
        notes = db.execute(
            "SELECT n.*, u.username FROM notes n JOIN users u ON u.id = n.author_id "
            "WHERE n.issue_id = ? ORDER BY n.created, n.id",
            (issue["id"],),
        ).fetchall()
        return self.page(
            request,
            "issue.html",
            project=project,
            issue=issue,
            labels=self._issue_labels(db, [issue["id"]])[issue["id"]],
            notes=notes,
        )

    async def labels(self, request: Any) -> Any:
        db, project = request.state.db, self._project(request)
        labels = db.execute(
            "SELECT l.*, (SELECT count(*) FROM issue_labels il JOIN issues i ON i.id = il.issue_id "
            "WHERE il.label_id = l.id AND i.state = 'opened') AS open FROM labels l "
            "WHERE l.project_id = ? ORDER BY l.name",
            (project["id"],),
        ).fetchall()
        return self.page(request, "labels.html", project=project, labels=labels)

    async def milestones(self, request: Any) -> Any:
        db, project = request.state.db, self._project(request)
        milestones = db.execute(
            "SELECT m.*, (SELECT count(*) FROM issues i WHERE i.milestone_id = m.id "
            "AND i.state = 'opened') AS open, (SELECT count(*) FROM issues i WHERE "
            "i.milestone_id = m.id AND i.state = 'closed') AS closed FROM milestones m "
            "WHERE m.project_id = ? ORDER BY m.title",
            (project["id"],),
        ).fetchall()
        return self.page(request, "milestones.html", project=project, milestones=milestones)

    # ------------------------------------------------------------------ writes

    def _write_form(
        self, request: Any, project: sqlite3.Row, issue: sqlite3.Row | None, **extra: Any
    ) -> Any:
        db = request.state.db
        labels = self._issue_labels(db, [issue["id"]])[issue["id"]] if issue else []
        return self.page(
            request,
            "issue_form.html",
            extra.pop("status", 200),
            project=project,
            issue=issue,
            checked=labels,
            **self._choices(db, project),
            **extra,
        )

    async def _save_issue(self, request: Any, project: sqlite3.Row, issue_id: int | None) -> Any:
        """Apply the issue form: create (``issue_id`` None) or update. Returns the issue's iid
        or an error message."""
        db, form = request.state.db, await request.form()
        title = str(form.get("title", "")).strip()
        if not title:
            return "An issue needs a title."
        choices = self._choices(db, project)
        assignee = str(form.get("assignee", ""))
        if assignee and assignee not in [m["username"] for m in choices["members"]]:
            return f"{assignee} is not a member of this project."
        milestone = str(form.get("milestone", ""))
        if milestone and milestone not in choices["milestones"]:
            return f"There is no milestone {milestone}."
        labels = [str(x) for x in form.getlist("labels") if str(x) in choices["labels"]]
        assignee_id = db.execute("SELECT id FROM users WHERE username = ?", (assignee,)).fetchone()
        milestone_id = db.execute(
            "SELECT id FROM milestones WHERE project_id = ? AND title = ?",
            (project["id"], milestone),
        ).fetchone()
        values = (
            title,
            str(form.get("description", "")).strip(),
            assignee_id[0] if assignee_id else None,
            milestone_id[0] if milestone_id else None,
        )
        now = next_time(db)
        if issue_id is None:
            me = self.signed_in(request, f"/{self.name}/p/{project['slug']}/issues/new")
            iid = db.execute(
                "SELECT coalesce(max(iid), 0) + 1 FROM issues WHERE project_id = ?",
                (project["id"],),
            ).fetchone()[0]
            issue_id = db.execute(
                "INSERT INTO issues (project_id, iid, title, description, assignee_id, "
                "milestone_id, author_id, state, created, updated, closed) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 'opened', ?, ?, NULL)",
                (project["id"], iid, *values, me["id"], now, now),
            ).lastrowid
        else:
            db.execute(
                "UPDATE issues SET title = ?, description = ?, assignee_id = ?, milestone_id = ?, "
                "updated = ? WHERE id = ?",
                (*values, now, issue_id),
            )
        db.execute("DELETE FROM issue_labels WHERE issue_id = ?", (issue_id,))
        db.executemany(
            "INSERT INTO issue_labels SELECT ?, id FROM labels WHERE project_id = ? AND name = ?",
            [(issue_id, project["id"], name) for name in labels],
        )
        db.commit()
        return db.execute("SELECT iid FROM issues WHERE id = ?", (issue_id,)).fetchone()[0]

    async def new_issue(self, request: Any) -> Any:
        project = self._project(request)
        here = f"/{self.name}/p/{project['slug']}/issues"
        self.signed_in(request, f"{here}/new")
        if request.method == "GET":
            return self._write_form(request, project, None, error=None, form={})
        outcome = await self._save_issue(request, project, None)
        if isinstance(outcome, str):
            form = dict((await request.form()).items())
            return self._write_form(request, project, None, error=outcome, form=form, status=400)
        return self.redirect(f"{here}/{outcome}")

    async def edit_issue(self, request: Any) -> Any:
        project, issue = self._issue(request)
        here = f"/{self.name}/p/{project['slug']}/issues/{issue['iid']}"
        self.signed_in(request, f"{here}/edit")
        if request.method == "GET":
            return self._write_form(request, project, issue, error=None, form={})
        outcome = await self._save_issue(request, project, issue["id"])
        if isinstance(outcome, str):
            return self._write_form(request, project, issue, error=outcome, form={}, status=400)
        return self.redirect(here)

    async def set_state(self, request: Any) -> Any:
        """Close or reopen an issue."""
        db = request.state.db
        project, issue = self._issue(request)
        here = f"/{self.name}/p/{project['slug']}/issues/{issue['iid']}"
        self.signed_in(request, here)
        state = str((await request.form()).get("state", ""))
        if state in ("opened", "closed") and state != issue["state"]:
            now = next_time(db)
            db.execute(
                "UPDATE issues SET state = ?, updated = ?, closed = ? WHERE id = ?",
                (state, now, now if state == "closed" else None, issue["id"]),
            )
            db.commit()
        return self.redirect(here)

    async def comment(self, request: Any) -> Any:
        db = request.state.db
        project, issue = self._issue(request)
        here = f"/{self.name}/p/{project['slug']}/issues/{issue['iid']}"
        me = self.signed_in(request, here)
        body = str((await request.form()).get("body", "")).strip()
        if body:
            now = next_time(db)
            db.execute(
                "INSERT INTO notes (issue_id, author_id, body, created) VALUES (?, ?, ?, ?)",
                (issue["id"], me["id"], body, now),
            )
            db.execute("UPDATE issues SET updated = ? WHERE id = ?", (now, issue["id"]))
            db.commit()
        return self.redirect(here)

    async def members(self, request: Any) -> Any:
        """The members page; POST adds a member, changes a role or removes a member."""
        db, project = request.state.db, self._project(request)
        here = f"/{self.name}/p/{project['slug']}/settings/members"
        me = self.signed_in(request, here)
        mine = db.execute(
            "SELECT role FROM members WHERE project_id = ? AND user_id = ?",
            (project["id"], me["id"]),
        ).fetchone()
        may_manage = mine is not None and mine[0] in ("Maintainer", "Owner")
        error = None
        if request.method == "POST":
            form = await request.form()
            username, role = str(form.get("username", "")).strip(), str(form.get("role", ""))
            user = db.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
            if not may_manage:
                error = "Only a Maintainer or Owner can manage members."
            elif user is None:
                error = f"There is no user {username!r}."
            elif form.get("action") == "remove":
                db.execute(
                    "DELETE FROM members WHERE project_id = ? AND user_id = ? AND role != 'Owner'",
                    (project["id"], user[0]),
                )
                db.commit()
                return self.redirect(here)
            elif role not in ROLES:
                error = f"Choose a role: {', '.join(ROLES)}."
            else:
                db.execute(
                    "INSERT OR REPLACE INTO members VALUES (?, ?, ?)",
                    (project["id"], user[0], role),
                )
                db.commit()
                return self.redirect(here)
        return self.page(
            request,
            "members.html",
            403 if error and not may_manage else (400 if error else 200),
            project=project,
            error=error,
            may_manage=may_manage,
            roles=ROLES,
            users=[r[0] for r in db.execute("SELECT username FROM users ORDER BY username")],
            members=self._choices(db, project)["members"],
        )
