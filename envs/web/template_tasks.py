"""WebArena-style tasks of the apps with users (forum, tracker): templates, the oracle's moves.

A :class:`TemplateTask` is one instance of a task template: its ``__init__`` draws the
template's parameters from the task seed and the site's generated data, ``goal`` words it,
``evaluator`` judges it (one of :mod:`agentgym.envs.web.evaluators`), ``solve`` is the
oracle. The oracle's moves below read only the current page (``world.path`` and
``world.snapshot``), so the oracle can be asked from any state: it is a policy, not a
script.

What a site's tasks share is here too, so a site's task module holds only its templates:
the credentials sentence and the oracle's sign-in in the site's own words (taken from its
:class:`~agentgym.envs.web.sites.users.UserSite`), program checks over the site's database,
and the choice of a template by the task seed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlencode, urlsplit

import numpy as np

from agentgym.core import GeneratedTaskSet, Verdict
from agentgym.envs.web.actions import format_action
from agentgym.envs.web.base import WebTask, WebWorld
from agentgym.envs.web.evaluators import Evaluator, Infeasible, Program, ProgramCheck, canonical_url
from agentgym.envs.web.sites.users import UserData, UserSite

__all__ = [
    "DATA_SEEDS",
    "DIFFICULTIES",
    "InfeasibleTemplate",
    "TemplateTask",
    "click",
    "go",
    "make_template_task",
    "pick_template",
    "sign_in",
    "submit_form",
    "template_task_set",
]

DATA_SEEDS = 16
"""How many distinct site databases tasks draw from: template databases are built once per
data seed and copied per episode, so a small number keeps resets at a file copy."""

DIFFICULTIES = ("easy", "medium", "hard")
"""The levels of every site's task set."""

TaskT = TypeVar("TaskT", bound="TemplateTask")


class TemplateTask(WebTask):
    """One instance of a template; a site's task class sets :attr:`site_class` and
    :attr:`data`, its templates set ``kind`` and ``levels`` and write :meth:`draw`,
    :meth:`goal`, :meth:`evaluator` and :meth:`solve`."""

    site_class: ClassVar[type[UserSite[Any]]]
    """The site the task runs on: its name, and the words of its sign-in."""
    site: str
    """The site's name (``site_class.name``), the one entry of :attr:`sites`."""
    user: str
    """Who the task signs in as (a write's or an infeasible request's ``draw`` sets it)."""
    kind: ClassVar[str]
    """``answer``, ``url``, ``program`` or ``infeasible``: which evaluator judges it."""
    levels: ClassVar[tuple[str, ...]]
    """The difficulties this template serves."""

    def __init__(self, id: str, split: str, difficulty: str, seed: int) -> None:
        super().__init__(id, split, difficulty, seed)
        self.site = self.site_class.name
        self.data_seed = seed % DATA_SEEDS
        self.sites = {self.site: self.data_seed}
        self.start_path = f"/{self.site}/"
        self.draw(np.random.default_rng([seed, 0xD7]))
        self._evaluator = self.evaluator()

    def draw(self, rng: np.random.Generator) -> None:
        """Choose the template's parameters (from ``rng`` and the site's data)."""
        raise NotImplementedError

    def evaluator(self) -> Evaluator:
        """The evaluator that judges this instance."""
        raise NotImplementedError

    @property
    def data(self) -> UserData[Any]:
        """The site's generated data for :attr:`data_seed`."""
        raise NotImplementedError

    def validate(self, world: WebWorld) -> Verdict:
        return self._evaluator(world)

    def credentials(self) -> str:
        """The goal's opening: whom to sign in as, in the site's words."""
        user = self.data.user(self.user)
        label = self.site_class.sign_in_label
        return f"{label} as {user.username} (password: {user.password}), then "

    def sign_in(self, world: WebWorld) -> str | None:
        """The oracle's next move of signing in as :attr:`user`, None once signed in."""
        user = self.data.user(self.user)
        return sign_in(
            world,
            self.site,
            user.username,
            user.password,
            signed_in_button=self.site_class.sign_out_label,
            submit=self.site_class.sign_in_label,
        )

    def program(self, check: Program) -> Evaluator:
        """A program over the site's database; its docstring says what it checks."""
        return ProgramCheck(self.site, check, check.__doc__ or "")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r}, seed={self.seed})"


class InfeasibleTemplate(TemplateTask):
    """A request the site has no feature for, put before the site's task class
    (``class InfeasibleRequest(InfeasibleTemplate, ForumTask)``): ``draw`` sets ``ask`` (the
    request), ``why`` (what the site lacks) and ``user``; only ``report_infeasible`` scores,
    as in WebArena."""

    kind = "infeasible"
    levels = DIFFICULTIES
    ask: str
    why: str

    def goal(self) -> str:
        # The report_infeasible hint is every task's (WebEnv), not this template's.
        return self.credentials() + f"{self.ask}."

    def evaluator(self) -> Evaluator:
        return Infeasible(self.why)

    def solve(self, world: WebWorld) -> str | None:
        return format_action("report_infeasible", self.why)


def template_task_set(namespace: str, templates: Sequence[type[TemplateTask]]) -> GeneratedTaskSet:
    """A site's task set (``"web/forum"``): 1,000 dev and test tasks per difficulty, 100,000
    train, each id an instance of the template its seed picks (:func:`pick_template`)."""
    make_task = functools.partial(make_template_task, tuple(templates))
    return GeneratedTaskSet(namespace, make_task, DIFFICULTIES)


def make_template_task(
    templates: Sequence[type[TaskT]], task_id: str, split: str, difficulty: str, seed: int
) -> TaskT:
    """The task of an id: a template chosen by the seed among those of the difficulty."""
    return pick_template(templates, difficulty, seed)(task_id, split, difficulty, seed)


def pick_template(templates: Sequence[type[TaskT]], difficulty: str, seed: int) -> type[TaskT]:
    """The template of a task: drawn from those serving ``difficulty``, by the task seed."""
    fitting = [t for t in templates if difficulty in t.levels]
    if not fitting:
        raise ValueError(f"no template serves difficulty {difficulty!r}")
    return fitting[int(np.random.default_rng([seed, 0x7E]).integers(len(fitting)))]


# ---------------------------------------------------------------------------- oracle moves


def same_page(world: WebWorld, path: str, defaults: dict[str, str] | None = None) -> bool:
    """Whether the browser shows ``path`` (compared canonically, as URL match does)."""
    return canonical_url(world.path, defaults) == canonical_url(path, defaults)


def _link_to(world: WebWorld, path: str) -> Any:
    want = canonical_url(path)
    for node in world.snapshot.find_all("link"):
        if (
            node.href
            and canonical_url(urlsplit(node.href)._replace(scheme="", netloc="").geturl()) == want
        ):
            return node
    return None


def go(world: WebWorld, path: str) -> str:
    """The move toward ``path``: click a link to it if the page has one, else ``goto``."""
    link = _link_to(world, path)
    if link is not None:
        return format_action("click", link.id)
    return format_action("goto", path)


def click(world: WebWorld, role: str, name: str) -> str:
    """Click the first node with this role and exact name (LookupError if the page lacks it)."""
    return format_action("click", world.snapshot.find(role, name).id)


def submit_form(world: WebWorld, fields: Sequence[tuple[str, str, str]], button: str) -> str:
    """The next move of filling a form and sending it.

    ``fields`` are ``(role, label, wanted)``: a textbox is filled, a combobox selected (by
    option label), a checkbox checked (wanted ``"on"``) or unchecked (``"off"``), each only if
    it does not already hold the wanted value; when all do, the button is clicked.
    """
    for role, label, wanted in fields:
        node = world.snapshot.find(role, label)
        if role == "checkbox":
            if node.checked != (wanted == "on"):
                return format_action("check" if wanted == "on" else "uncheck", node.id)
        elif role == "combobox":
            if (node.value or "") != wanted:
                return format_action("select", node.id, wanted)
        elif (node.value or "") != wanted:
            return format_action("fill", node.id, wanted)
    return click(world, "button", button)


def sign_in(
    world: WebWorld, site: str, username: str, password: str, *, signed_in_button: str, submit: str
) -> str | None:
    """The next move of signing in as ``username``, or None when already signed in.

    Signed in means the page shows the sign-out button (``signed_in_button``); the login
    form is reached through ``/{site}/login?next=<here>`` so the oracle comes back.
    """
    if world.snapshot.find_all("button", signed_in_button):
        return None
    login = f"/{site}/login"
    if urlsplit(world.path).path != login:
        return format_action("goto", f"{login}?{urlencode({'next': world.path})}")
    username_box = world.snapshot.find("textbox", "Username")
    if (username_box.value or "") != username:
        return format_action("fill", username_box.id, username)
    password_box = next(n for n in world.snapshot.find_all(name="Password") if n.role != "text")
    if len(password_box.value or "") != len(password):
        return format_action("fill", password_box.id, password)
    return click(world, "button", submit)
