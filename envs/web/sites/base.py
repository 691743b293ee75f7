"""What a web site of the web family is, and how one server serves every episode's own copy.

A **site** is a small web application the project writes: a shop, a forum, an issue tracker.
It is a :class:`Site` subclass with two duties:

* :meth:`Site.build` writes the site's whole state into a fresh SQLite database from a seed
  (schema and content; same seed, same bytes of content);
* :meth:`Site.routes` returns its Starlette routes, which read and write
  ``request.state.db``: the SQLite database *of the episode the request belongs to*.

**One server, one database per episode.** A pool runs one server process
(:mod:`agentgym.envs.web.server`) that mounts every site at ``/{site.name}/``. Each browser
context (one per episode) sends the header :data:`EPISODE_HEADER` with every request; the
server opens ``{state_dir}/{episode}/{site}.sqlite`` for it. Resetting an episode is copying a
template database that :class:`SiteState` built once per ``(site, seed)``: milliseconds, where
WebArena restarts containers for minutes. The env process reads the same file to judge the
episode (WebArena's "program over the final state" evaluators), so verification never goes
through the page.
"""

from __future__ import annotations

import functools
import shutil
import sqlite3
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["EPISODE_HEADER", "Site", "SiteState", "episode_db"]

EPISODE_HEADER = "X-Agentgym-Episode"
"""The request header naming the episode; the pool sets it on each episode's browser context."""


class Site(ABC):
    """A web application served at ``/{name}/`` with its state in one SQLite database.

    Subclasses set :attr:`name` and :attr:`title` and write :meth:`build` and :meth:`routes`.
    ``templates`` is the folder of its Jinja2 templates (default: ``templates/`` beside the
    module that defines the subclass); ``static/`` beside it is served at ``/{name}/static/``.
    """

    name: ClassVar[str]
    """URL prefix and database file name: lower case letters only."""
    title: ClassVar[str]
    """The name a person sees in the page header."""
    version: ClassVar[int] = 1
    """Bump when :meth:`build` changes what it writes (template databases are rebuilt)."""

    @abstractmethod
    def build(self, db: sqlite3.Connection, seed: int) -> None:
        """Create the schema and write the content for ``seed`` (deterministically)."""

    @abstractmethod
    def routes(self) -> Sequence[Any]:
        """The site's Starlette routes, relative to its mount point."""

    @property
    def folder(self) -> Path:
        """The folder of the module that defines the site (templates/ and static/ live here)."""
        return Path(sys.modules[type(self).__module__].__file__ or ".").parent

    @functools.cached_property
    def templates(self) -> Any:
        """The site's Jinja2 templates (``templates/`` in :attr:`folder`)."""
        from starlette.templating import Jinja2Templates

        return Jinja2Templates(directory=self.folder / "templates")

    def render(self, request: Any, template: str, status_code: int = 200, **context: Any) -> Any:
        """A page from a template; ``root`` (the site's URL prefix, ``/shop``) and ``site``
        are in every template's context."""
        context.setdefault("root", f"/{self.name}")
        context.setdefault("site", self)
        return self.templates.TemplateResponse(request, template, context, status_code=status_code)


def episode_db(state_dir: Path, episode: str, site: str) -> Path:
    """Where the database of ``site`` for ``episode`` lives."""
    return state_dir / episode / f"{site}.sqlite"


class SiteState:
    """The databases of a pool: templates built once per ``(site, seed)``, copied per episode.

    Shared by the env process (which prepares, judges and releases episodes) and the server
    process (which only opens the files :func:`episode_db` names). Thread-safe.
    """

    def __init__(self, state_dir: Path, sites: Mapping[str, Site]) -> None:
        self.state_dir = Path(state_dir)
        self.sites = dict(sites)
        self._lock = threading.Lock()
        self._building: dict[tuple[str, int], threading.Lock] = {}

    def prepare(self, episode: str, seeds: Mapping[str, int]) -> None:
        """Give ``episode`` a fresh copy of each named site's database for its seed."""
        folder = self.state_dir / episode
        folder.mkdir(parents=True, exist_ok=True)
        for site, seed in seeds.items():
            shutil.copyfile(self._template(site, seed), folder / f"{site}.sqlite")

    def release(self, episode: str) -> None:
        """Delete the episode's databases."""
        shutil.rmtree(self.state_dir / episode, ignore_errors=True)

    def connect(self, episode: str, site: str) -> sqlite3.Connection:
        """A read-only connection to the episode's database of ``site`` (for verifiers)."""
        path = episode_db(self.state_dir, episode, site)
        if not path.exists():
            from agentgym.errors import EnvCrashedError

            raise EnvCrashedError(f"the {site} database of episode {episode} is gone: {path}")
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        db.row_factory = sqlite3.Row
        return db

    def _template(self, site: str, seed: int) -> Path:
        if site not in self.sites:
            raise KeyError(f"unknown site {site!r}; known sites: {sorted(self.sites)}")
        spec = self.sites[site]
        path = self.state_dir / "templates" / f"{site}-v{spec.version}-{seed}.sqlite"
        with self._lock:
            lock = self._building.setdefault((site, seed), threading.Lock())
        with lock:
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                partial = path.with_suffix(".partial")
                partial.unlink(missing_ok=True)
                db = sqlite3.connect(partial)
                try:
                    spec.build(db, seed)
                    db.commit()
                finally:
                    db.close()
                partial.replace(path)
        return path
