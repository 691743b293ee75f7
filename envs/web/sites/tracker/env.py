"""``web/Tracker-v1``: WebArena-style tasks on a GitLab-like issue tracker with state."""

from __future__ import annotations

from typing import Any

from agentgym.envs.web.base import WebEnv
from agentgym.envs.web.sites.tracker.tasks import tracker_tasks

__all__ = ["TrackerEnv"]


class TrackerEnv(WebEnv):
    """An issue tracker in the style of GitLab (WebArena's GitLab), served on 127.0.0.1.

    **The site.** Twelve users and four projects (``atlas``, ``beacon``, ...), each with
    seven members in GitLab's roles (Guest to Owner), five labels, two to four milestones and
    24 to 40 issues with authors, assignees, labels, milestones, states and comments, all
    generated from a data seed (one of 16; the task id picks it) with timestamps from a
    fixed date. Pages: the projects; a project's issue list, filtered by state, label,
    assignee, author, milestone and a search (a GET form, so each view has its own URL),
    twenty a page; an issue; new-issue and edit forms; labels and milestones with their
    counts; the members page. A signed-in user can create, edit (title, description,
    assignee, milestone, labels), close and reopen issues and comment; a Maintainer or Owner
    can add members, change roles and remove members. Each episode has its own copy of the
    database and its own browser context.

    **What the agent sees.** The goal, then each page as an accessibility-tree text in which
    every element has an id in brackets (``[31] combobox 'Label' value='Any label'``), under
    a line naming the page's path. With ``observation_mode="multimodal"``, also a screenshot.

    **What it may do.** One call per step of the web action language (``click``, ``fill``,
    ``select``, ``check``, ``goto("/tracker/p/atlas/issues")``, ...), ending with
    ``answer("...")`` for a question or ``report_infeasible("...")`` for a request the site
    cannot carry out. Navigation is limited to ``/tracker/``.

    **Scoring** (WebArena's evaluator kinds, :mod:`agentgym.envs.web.evaluators`): questions
    by the answer (a number, or a username after normalisation); navigation tasks by the
    final page's path and query, compared canonically (parameter order, blank fields and
    ``state=opened``, the default, do not matter); writes by a program over the episode's
    final database (the issue exists once with the right label and assignee; the right
    issues are closed and no others changed; the member has the role and no other member
    changed). A task the tracker cannot do scores 1 only through ``report_infeasible``, and
    ``report_infeasible`` on any other task scores 0. Answers and URLs score 0 or 1; a
    write scores the share of its goals met (two of three issues closed: 0.67), and 0 when
    it broke what had to stay (an invariant gates, it never pays). The episode ends when the
    task passes, on ``answer``/``report_infeasible``, or at 40 steps.

    **Levels.** ``easy``: an issue's assignee, a list filtered by state and label, adding a
    member; ``medium``: counting open issues of a label, a list filtered by label and
    milestone, creating a labelled issue, assigning and labelling an issue; ``hard``: the
    top reporter of a label, a list under three filters, a new issue with a label and an
    assignee, closing every open issue of an assignee. Every level has infeasible requests.
    Templates are listed in
    :mod:`agentgym.envs.web.sites.tracker.tasks`.

    **Oracle.** A policy over the current page (path and snapshot): it signs in through the
    login form when a write needs it, follows links (or ``goto``), sets the filter form's
    drop-downs, fills the issue and member forms, presses the buttons, and answers with the
    gold. It reaches 1 on every template.

    **Version history.** v0: first release. v1 (2026-11): the sentence on
    ``report_infeasible`` moved from the goals of infeasible tasks, where it gave the answer
    away (an agent reporting infeasible whenever it read it scored 0.29 with no skill), to the
    end of every task's instructions.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = tracker_tasks()
        super().__init__(**kwargs)
