"""``web/Forum-v1``: WebArena-style tasks on a Reddit-like forum with state."""

from __future__ import annotations

from typing import Any

from agentgym.envs.web.base import WebEnv
from agentgym.envs.web.sites.forum.tasks import forum_tasks

__all__ = ["ForumEnv"]


class ForumEnv(WebEnv):
    """A forum in the style of Postmill (WebArena's Reddit), served on 127.0.0.1.

    **The site.** Ten users, six forums (``f/books``, ``f/cooking``, ...) with 14 to 26 posts
    each, comments, scores and subscriptions, all generated from a data seed (one of 16; the
    task id picks it), with timestamps from a fixed date. Pages: the forum list; a forum's
    posts sorted by ``hot``, ``new`` or ``top``, ten a page; a post with its comments; user
    profiles; a login form. A signed-in user can submit a post, comment, vote (voting the
    same way twice takes the vote back), edit their own posts and subscribe to forums. Each
    episode has its own copy of the database and its own browser context, so nothing an
    agent writes reaches another episode.

    **What the agent sees.** The goal, then each page as an accessibility-tree text in which
    every element has an id in brackets (``[12] link 'f/books'``), under a line naming the
    page's path. With ``observation_mode="multimodal"``, also a screenshot.

    **What it may do.** One call per step of the web action language (``click("12")``,
    ``fill("9", "text")``, ``select``, ``goto("/forum/f/books")``, ...), ending with
    ``answer("...")`` for a question or ``report_infeasible("...")`` for a request the site
    cannot carry out. Navigation is limited to ``/forum/``.

    **Scoring** (WebArena's evaluator kinds, :mod:`agentgym.envs.web.evaluators`): questions
    by the answer (a number, or a username after normalisation); navigation tasks by the
    final page's path and query, compared canonically; writes by a program over the
    episode's final database (the comment exists once, on the right post, by the right user;
    nothing else changed). A task the forum cannot do scores 1 only through
    ``report_infeasible``, and ``report_infeasible`` on any other task scores 0. Answers and
    URLs score 0 or 1; a write scores the share of its goals met (two of three posts upvoted:
    0.67), and 0 when it broke what had to stay (an invariant gates, it never pays). The
    episode ends when the task passes, on ``answer``/``report_infeasible``, or at 40 steps.

    **Levels.** ``easy``: one page to find or one button (top post's comments, a sorted
    listing, subscribing); ``medium``: a sort and a write (newest post's author, the second
    page of a sorted listing, commenting, posting); ``hard``: counting on a profile, the
    profile of a top post's author, editing one's own post, upvoting every post of a user.
    Every level has infeasible requests. Templates are listed in
    :mod:`agentgym.envs.web.sites.forum.tasks`.

    **Oracle.** A policy over the current page (path and snapshot): it signs in through the
    login form when a write needs it, follows links (or ``goto``) to the page that holds the
    answer or the form, fills and submits it, and answers with the gold. It reaches 1 on
    every template.

    **Version history.** v0: first release. v1 (2026-11): the sentence on
    ``report_infeasible`` moved from the goals of infeasible tasks, where it gave the answer
    away (an agent reporting infeasible whenever it read it scored 0.29 with no skill), to the
    end of every task's instructions.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = forum_tasks()
        super().__init__(**kwargs)
