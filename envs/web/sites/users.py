"""The base of the sites whose people sign in: the forum and the tracker.

Both are WebArena's apps with accounts (Postmill, GitLab), and they share all that is not
their own domain: a signed-cookie session (:mod:`.session`), the login and logout pages, a
page layout whose header shows who is signed in, the "not found" page, pages of a long
list, and a clock that moves with content rather than with the wall (episodes replay
exactly). :class:`UserSite` holds that once, and :class:`UserData` the part of the
generated content it reads (the users and the session secret); a site keeps its schema, its
data, its routes and its own templates, which extend the shared ``layout.html`` through its
``base.html``.
"""

from __future__ import annotations

import functools
import sqlite3
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Generic, NoReturn, Protocol, TypeVar

from agentgym.envs.web.sites.base import Site
from agentgym.envs.web.sites.session import CookieSession

__all__ = [
    "SHARED_TEMPLATES",
    "Account",
    "Answer",
    "UserData",
    "UserSite",
    "check_seed",
    "next_time",
    "paginate",
    "when",
]

SHARED_TEMPLATES = Path(__file__).parent / "templates"
"""The templates every :class:`UserSite` can use: ``layout.html``, ``login.html``,
``not_found.html`` and ``pager.html``. A site's own folder is searched first."""

T = TypeVar("T")


class Account(Protocol):
    """A user of a site's generated data: what signing in needs."""

    @property
    def username(self) -> str: ...

    @property
    def password(self) -> str: ...


A = TypeVar("A", bound=Account)


@dataclass(frozen=True)
class UserData(Generic[A]):
    """The first fields of a site's generated content (``ForumData``, ``TrackerData``
    extend it): the session secret and the users, which the shared code reads."""

    secret: str
    users: tuple[A, ...]

    def user(self, username: str) -> A:
        """The user of that name (StopIteration if there is none)."""
        return next(u for u in self.users if u.username == username)


D = TypeVar("D", bound=UserData[Any])


def check_seed(site: str, seed: object) -> None:
    """A data seed is a non-negative int; anything else is one clear ValueError."""
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a {site} seed is a non-negative int, got {seed!r}")


def when(seconds: int | None) -> str:
    """A timestamp as the pages show it (UTC, minutes); nothing for no time."""
    if seconds is None:
        return ""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")


def next_time(db: sqlite3.Connection, *columns: str) -> int:
    """The time of a new write: one minute after the latest value of ``columns``
    (``"table.column"``, written by the site's own code, never by a request).

    The sites have no wall clock (episodes must replay exactly), so "now" moves with content.
    """
    parts = [f"SELECT max({c.partition('.')[2]}) AS t FROM {c.partition('.')[0]}" for c in columns]
    row = db.execute(f"SELECT max(t) FROM ({' UNION ALL '.join(parts)})").fetchone()
    return int(row[0]) + 60


def paginate(request: Any, rows: Sequence[T], size: int) -> tuple[Sequence[T], int, int]:
    """``(shown, page, pages)``: the rows of the page the ``page`` query parameter asks for
    (the first for a bad number, the last for one past the end), ``size`` a page."""
    try:
        page = max(1, int(request.query_params.get("page", "1")))
    except ValueError:
        page = 1
    pages = max(1, -(-len(rows) // size))
    page = min(page, pages)
    return rows[(page - 1) * size : page * size], page, pages


class Answer(Exception):
    """An early reply from inside a handler: the "not found" page of a missing thing, the
    login page for a signed-out write. Raised by :meth:`UserSite.missing` and
    :meth:`UserSite.signed_in`, sent by every route :meth:`UserSite.route` makes, so the
    guard clauses of a handler are one line each (like Starlette's ``HTTPException``, but
    carrying a page of the site)."""

    def __init__(self, response: Any) -> None:
        super().__init__(f"early reply {getattr(response, 'status_code', '')}")
        self.response = response


class UserSite(Site, Generic[D]):
    """A :class:`Site` with accounts: a ``users`` table (``username``, ``password``) and a
    ``meta`` table holding the session ``secret``, which :meth:`build` writes.

    Subclasses set :attr:`schema`, :attr:`home`, :attr:`sign_in_label` and
    :attr:`sign_out_label` (the words the shared templates show), write :meth:`generate` and
    :meth:`write`, and put :meth:`auth_routes` among their routes.
    """

    schema: ClassVar[str]
    """The SQL that creates the tables, ``meta (key, value)`` and ``users`` among them."""

    home: ClassVar[str]
    """The main navigation's link to the front page (``"Forums"``); the "not found" page
    offers the way "back to the" same, in lower case."""
    sign_in_label: ClassVar[str] = "Sign in"
    """The words of the login link, page and button (the forum says ``"Log in"``)."""
    sign_out_label: ClassVar[str] = "Sign out"
    """The words of the logout button, by which the oracle tells it is signed in."""

    @abstractmethod
    def generate(self, seed: int) -> D:
        """The site's content for ``seed`` (a pure function of it)."""

    @abstractmethod
    def write(self, db: sqlite3.Connection, data: D) -> None:
        """Write ``data`` into the fresh tables (the schema and the secret are in already)."""

    def build(self, db: sqlite3.Connection, seed: int) -> None:
        data = self.generate(seed)
        db.executescript(self.schema)
        db.execute("INSERT INTO meta VALUES ('secret', ?)", (data.secret,))
        self.write(db, data)

    @functools.cached_property
    def session(self) -> CookieSession:
        """Sign-in for this site (cookie ``{name}_session``)."""
        return CookieSession(self.name)

    @functools.cached_property
    def templates(self) -> Any:
        """The site's own templates, then the shared ones (:data:`SHARED_TEMPLATES`)."""
        from starlette.templating import Jinja2Templates

        return Jinja2Templates(directory=[self.folder / "templates", SHARED_TEMPLATES])

    def current_user(self, request: Any) -> sqlite3.Row | None:
        """The signed-in user of the request, or None."""
        return self.session.user(request)

    def page(self, request: Any, template: str, status_code: int = 200, **context: Any) -> Any:
        """Render with the signed-in user (``me``, whom the header shows) and :func:`when`
        in the context."""
        context.setdefault("me", self.current_user(request))
        context.setdefault("when", when)
        return self.render(request, template, status_code, **context)

    def not_found(self, request: Any, what: str, status_code: int = 404) -> Any:
        """The page saying there is no ``what`` (``"forum f/x"``)."""
        return self.page(request, "not_found.html", status_code, what=what)

    def missing(self, request: Any, what: str, status_code: int = 404) -> NoReturn:
        """Reply at once with the page saying there is no ``what``."""
        raise Answer(self.not_found(request, what, status_code))

    def found(self, request: Any, thing: T | None, what: str) -> T:
        """``thing``, or (when it is None) the page saying there is no ``what``, at once."""
        if thing is None:
            self.missing(request, what)
        return thing

    @staticmethod
    def row(request: Any, sql: str, *args: Any) -> sqlite3.Row | None:
        """The first row of a query over the request's episode database, or None."""
        first: sqlite3.Row | None = request.state.db.execute(sql, args).fetchone()
        return first

    def signed_in(self, request: Any, back: str) -> sqlite3.Row:
        """The signed-in user; when there is none, reply at once with the login page, which
        comes back to ``back`` (a signed-out write changes nothing)."""
        me = self.current_user(request)
        if me is None:
            raise Answer(self.session.to_login(back))
        return me

    @staticmethod
    def redirect(path: str) -> Any:
        """The reply to a write: see ``path`` (POST-redirect-GET)."""
        from starlette.responses import RedirectResponse

        return RedirectResponse(path, 303)

    def route(
        self,
        path: str,
        endpoint: Callable[[Any], Awaitable[Any]],
        methods: Sequence[str] = ("GET",),
    ) -> Any:
        """A Starlette route to ``endpoint`` that sends the :class:`Answer` it raises."""
        from starlette.routing import Route

        async def reply(request: Any) -> Any:
            try:
                return await endpoint(request)
            except Answer as early:
                return early.response

        return Route(path, reply, methods=list(methods), name=endpoint.__name__)

    def auth_routes(self) -> list[Any]:
        """The login page and the logout button's target."""
        return [
            self.route("/login", self.login, ["GET", "POST"]),
            self.route("/logout", self.logout, ["POST"]),
        ]

    async def login(self, request: Any) -> Any:
        """The login form; a right username and password sign in and go back to ``next``."""
        back = self.session.safe_next(request.query_params.get("next"))
        if request.method == "GET":
            return self.page(request, "login.html", back=back, error=None)
        form = await request.form()
        username, password = str(form.get("username", "")), str(form.get("password", ""))
        if not self.session.check(request.state.db, username, password):
            error = "Wrong username or password."
            return self.page(request, "login.html", 401, back=back, error=error)
        return self.session.sign_in(request.state.db, username, back)

    async def logout(self, request: Any) -> Any:
        """Sign out and go to the front page."""
        return self.session.sign_out()
