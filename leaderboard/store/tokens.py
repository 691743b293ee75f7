"""The ``tokens`` table: who may write. Only the sha256 of a token is stored, so a copy of the
database gives no one a way in; :meth:`Tokens.create` returns the plaintext once."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from agentgym.errors import UsageError

from .database import Database
from .records import SCOPES, AuthError, ConflictError, NotFoundError, Scope, Token
from .schema import TokenRow

__all__ = ["MAX_TOKEN_NAME", "TOKEN_PREFIX", "Tokens"]

TOKEN_PREFIX = "agl_"
"""How every token begins: never with ``-`` (which a command line would read as an option,
one token in 64 of bare base64url), and recognisable in a leaked log."""
MAX_TOKEN_NAME = 100
"""The longest token name (its column's width; the audit log names actors by it)."""


class Tokens:
    """Make, check and revoke tokens."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def create(self, name: str, scopes: Iterable[Scope], *, actor: str = "system") -> str:
        """Make a token and return its plaintext: the only time anyone sees it."""
        wanted = tuple(dict.fromkeys(scopes))
        unknown = [s for s in wanted if s not in SCOPES]
        if not name.strip() or len(name) > MAX_TOKEN_NAME or not wanted or unknown:
            raise UsageError(
                f"a token needs a name of 1 to {MAX_TOKEN_NAME} characters and scopes from "
                f"{SCOPES}, got {name[:120]!r} and {wanted}"
            )
        # Never beginning with "-": `--token VALUE` would read such a value as an option.
        plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
        try:
            with self.database.write(actor, "token.create", name, scopes=list(wanted)) as session:
                session.add(
                    TokenRow(
                        name=name,
                        token_sha256=_digest(plaintext),
                        scopes=list(wanted),
                        created_at=self.database.clock(),
                    )
                )
        except IntegrityError as error:
            raise ConflictError(f"a token named {name!r} exists (names are never reused)") from (
                error
            )
        return plaintext

    def authorize(self, plaintext: str, scope: Scope) -> Token:
        """The token behind ``plaintext`` if it may act in ``scope``; else :class:`AuthError`.

        Its last-used time is recorded; the audit log gets the write it authorises, not this.
        """
        if scope not in SCOPES:
            raise UsageError(f"scope must be one of {SCOPES}, got {scope!r}")
        digest = _digest(plaintext)
        with self.database.write_unaudited() as session:
            # The lookup compares sha256 digests, whose timing says nothing usable about a
            # plaintext; the digest found is compared again in constant time all the same.
            row = session.scalar(select(TokenRow).where(TokenRow.token_sha256 == digest))
            if row is None or not hmac.compare_digest(row.token_sha256, digest):
                raise AuthError("unknown", "no such token")
            if row.revoked_at is not None:
                raise AuthError("revoked", f"token {row.name!r} was revoked")
            token = _token(row)
            if not token.allows(scope):
                raise AuthError("lacks scope", f"token {row.name!r} may not {scope}")
            row.last_used_at = self.database.clock()
            return _token(row)

    def revoke(self, name: str, *, actor: str = "system") -> None:
        """Revoke the token called ``name`` (idempotent: a revoked token keeps its first time)."""
        with self.database.write(actor, "token.revoke", name) as session:
            row = session.scalar(select(TokenRow).where(TokenRow.name == name))
            if row is None:
                raise NotFoundError(f"no token named {name!r}")
            row.revoked_at = row.revoked_at or self.database.clock()

    def all(self) -> list[Token]:
        with self.database.read() as session:
            return [_token(row) for row in session.scalars(select(TokenRow).order_by(TokenRow.id))]


def _digest(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def _token(row: TokenRow) -> Token:
    scopes = tuple(s for s in SCOPES if s in row.scopes)
    return Token(row.id, row.name, scopes, row.created_at, row.revoked_at, row.last_used_at)
