"""Signed-cookie sessions for the sites that have users (the forum and the tracker).

The cookie is ``username.mac``, the MAC keyed with a secret that :meth:`Site.build` writes
into the site's ``meta`` table from the seed. No session table and no random tokens: the
database stays a pure function of the seed and the agent's writes, and since every episode
has its own browser context, a session never crosses episodes.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from typing import Any
from urllib.parse import urlencode

__all__ = ["CookieSession"]


class CookieSession:
    """Sign-in for one site: a ``users`` table with ``username`` and ``password`` columns
    and a ``meta`` table holding ``secret``."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.cookie = f"{site}_session"

    @staticmethod
    def _mac(db: sqlite3.Connection, username: str) -> str:
        secret = db.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()[0]
        return hmac.new(secret.encode(), username.encode(), hashlib.sha256).hexdigest()[:32]

    def user(self, request: Any) -> sqlite3.Row | None:
        """The signed-in user of the request, if its cookie is valid for this database."""
        username, _, mac = request.cookies.get(self.cookie, "").rpartition(".")
        db = request.state.db
        if not username or not hmac.compare_digest(mac, self._mac(db, username)):
            return None
        user: sqlite3.Row | None = db.execute(
            "SELECT * FROM users WHERE username = ?", (username,)
        ).fetchone()
        return user

    def safe_next(self, target: str | None) -> str:
        """Where to go after signing in: only a path of this site (no open redirect)."""
        home = f"/{self.site}/"
        return target if target and target.startswith(home) else home

    def check(self, db: sqlite3.Connection, username: str, password: str) -> bool:
        """Whether the username and password are right."""
        row = db.execute("SELECT password FROM users WHERE username = ?", (username,)).fetchone()
        return row is not None and hmac.compare_digest(row[0], password)

    def sign_in(self, db: sqlite3.Connection, username: str, back: str) -> Any:
        """The redirect that signs ``username`` in and goes to ``back``."""
        from starlette.responses import RedirectResponse

        response = RedirectResponse(self.safe_next(back), 303)
        value = f"{username}.{self._mac(db, username)}"
        response.set_cookie(self.cookie, value, httponly=True, samesite="lax")
        return response

    def sign_out(self) -> Any:
        """The redirect that signs out."""
        from starlette.responses import RedirectResponse

        response = RedirectResponse(f"/{self.site}/", 303)
        response.delete_cookie(self.cookie)
        return response

    def to_login(self, back: str) -> Any:
        """The redirect of a signed-out write: the login page, coming back to ``back``."""
        from starlette.responses import RedirectResponse

        return RedirectResponse(f"/{self.site}/login?{urlencode({'next': back})}", 303)
