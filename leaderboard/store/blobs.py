"""The ``blobs`` table and its folder: a bundle is a file on disk named by its sha256
(``ab/cd/abcd...``), written atomically; the table records that it is there. The same bytes
are one file."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy.exc import IntegrityError

from agentgym.errors import UsageError

from .database import Database
from .records import NotFoundError, StoreError
from .schema import BlobRow

__all__ = ["Blobs"]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 20


class Blobs:
    """Content-addressed bundle files under ``folder``, recorded in ``database``."""

    def __init__(self, database: Database, folder: Path) -> None:
        self.database = database
        self.folder = folder

    def path(self, sha: str) -> Path:
        """Where the file of ``sha`` lives: two levels of fan-out keep folders small."""
        if not _SHA256.match(sha):
            raise UsageError(f"a blob is named by a lowercase sha256 hex digest, got {sha!r}")
        return self.folder / sha[:2] / sha[2:4] / sha

    def put(self, source: bytes | Path, *, actor: str = "system") -> str:
        """Store bytes (or a file's bytes) and return their sha256.

        The file is written to a temporary name, synced and renamed into place, so a reader
        never sees half a bundle; it is in place before the database says so, so a crash
        between leaves only a file that the next put of the same bytes adopts.
        """
        sha, size = self._write_file(source)
        with self.database.read() as session:
            if session.get(BlobRow, sha) is not None:
                return sha
        try:
            with self.database.write(actor, "blob.put", sha, size=size) as session:
                session.add(BlobRow(sha256=sha, size=size, created_at=self.database.clock()))
        except IntegrityError:
            pass  # the same bytes, put by another writer at the same moment
        return sha

    def _write_file(self, source: bytes | Path) -> tuple[str, int]:
        staging = self.folder / "tmp"
        staging.mkdir(parents=True, exist_ok=True)
        digest, size = hashlib.sha256(), 0
        fd, temporary = tempfile.mkstemp(dir=staging)
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in _chunks(source):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, 0o444)
            final = self.path(digest.hexdigest())
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(temporary, final)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        return digest.hexdigest(), size

    def has(self, sha: str) -> bool:
        path = self.path(sha)
        with self.database.read() as session:
            return session.get(BlobRow, sha) is not None and path.exists()

    def get(self, sha: str) -> bytes:
        """The bytes of ``sha``, checked against their name (a changed file is an error)."""
        path = self.path(sha)
        with self.database.read() as session:
            if session.get(BlobRow, sha) is None:
                raise NotFoundError(f"no blob {sha}")
        try:
            data = path.read_bytes()
        except FileNotFoundError as error:
            raise StoreError(f"blob {sha} is recorded but its file {path} is gone") from error
        if hashlib.sha256(data).hexdigest() != sha:
            raise StoreError(f"blob file {path} no longer holds the bytes of its name")
        return data


def _chunks(source: bytes | Path) -> Iterator[bytes]:
    if isinstance(source, bytes | bytearray | memoryview):
        yield bytes(source)
        return
    with open(source, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            yield chunk
