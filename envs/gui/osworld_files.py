"""The metrics of the file manager and terminal tasks, and the evaluator parts they build.

Those tasks are judged from the home's real state after the episode: a folder's listing (the
``list_directory`` getter), a file's content (``vm_file``), a command's output
(``vm_command_line``: ``stat -c %a`` for a mode, ``readlink`` and ``test -L`` for a link) and an
archive the agent made. OSWorld's metrics cover the first three (``literal_match``,
``compare_text_file``, ``exact_match``, in :mod:`agentgym.envs.gui.osworld_metrics`); this
module adds OSWorld's ``compare_archive``.

**Archives.** An archive is read in memory, never unpacked on the host: an agent's archive may
hold ``../`` names, links or a bomb. Its members are its regular files by path (a leading
``./`` dropped); more than :data:`ARCHIVE_LIMIT` bytes of members reads as a failed result.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

from agentgym.envs.gui.osworld_metrics import metric
from agentgym.errors import UsageError

__all__ = [
    "ARCHIVE_LIMIT",
    "archive_members",
    "command_output",
    "compare_archive",
    "listing",
    "text_file",
]

ARCHIVE_LIMIT = 4 << 20
"""Bytes of members an archive may hold before it reads as a failed result (no task's archive
comes near: theirs are a few kilobytes)."""


class _TooBig(Exception):
    """An archive whose members pass :data:`ARCHIVE_LIMIT`."""


def archive_members(data: bytes) -> dict[str, bytes]:
    """The regular files of a tar (plain, gzip, bzip2, xz) or zip archive, by path.

    Raises ``ValueError`` for bytes that are no archive of those kinds or whose members pass
    :data:`ARCHIVE_LIMIT`."""
    try:
        if zipfile.is_zipfile(io.BytesIO(data)):
            return _zip_members(data)
        return _tar_members(data)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, _TooBig) as failure:
        raise ValueError(f"not a readable archive: {failure}") from failure


def _tar_members(data: bytes) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    total = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for info in archive:
            if not info.isfile():
                continue
            total += info.size
            if total > ARCHIVE_LIMIT:
                raise _TooBig(f"its members pass {ARCHIVE_LIMIT} bytes")
            handle = archive.extractfile(info)
            members[_member_path(info.name)] = handle.read() if handle else b""
    return members


def _zip_members(data: bytes) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    total = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            total += info.file_size
            if total > ARCHIVE_LIMIT:
                raise _TooBig(f"its members pass {ARCHIVE_LIMIT} bytes")
            members[_member_path(info.filename)] = archive.read(info)
    return members


def _member_path(name: str) -> str:
    while name.startswith("./"):
        name = name[2:]
    return name


@metric("compare_archive")
def compare_archive(result: str | None, expected: str | None, **options: Any) -> float:
    """The two archives hold the same files with the same contents (OSWorld's; the kinds may
    differ: a tar.gz matches a zip of the same files). ``file_path`` compares only the files
    under that folder of both, by their paths inside it."""
    if result is None:
        return 0.0
    if expected is None:
        raise UsageError("compare_archive: the task's expected archive is missing")
    try:
        gold = archive_members(Path(expected).read_bytes())
    except (OSError, ValueError) as failure:
        raise UsageError(f"compare_archive: the expected archive {expected}: {failure}") from None
    try:
        made = archive_members(Path(result).read_bytes())
    except (OSError, ValueError):
        return 0.0
    inside = str(options.get("file_path", "")).strip("/")
    wanted = _under(gold, inside)
    if not wanted:
        raise UsageError(f"compare_archive: the expected archive has no files under {inside!r}")
    return float(_under(made, inside) == wanted)


def _under(members: dict[str, bytes], folder: str) -> dict[str, bytes]:
    if not folder:
        return members
    prefix = folder + "/"
    return {name[len(prefix) :]: data for name, data in members.items() if name.startswith(prefix)}


# ---------------------------------------------------------------------- evaluator parts


def listing(folder: str, names: list[str]) -> dict[str, Any]:
    """The evaluator part: the home's ``folder`` holds exactly ``names`` (OSWorld's
    ``literal_match`` over the ``list_directory`` getter)."""
    return {
        "func": "literal_match",
        "result": {"type": "list_directory", "path": f"~/{folder}"},
        "expected": {"type": "rule", "rules": sorted(names)},
        "options": {"type": "list"},
    }


def text_file(path: str, gold: str, **options: Any) -> dict[str, Any]:
    """The evaluator part: the home's ``path`` holds the text of the task's file ``gold``."""
    return {
        "func": "compare_text_file",
        "result": {"type": "vm_file", "path": f"~/{path}", "dest": Path(path).name},
        "expected": {"type": "cloud_file", "path": f"local://{gold}", "dest": gold},
        "options": options,
    }


def command_output(command: str, expected: str) -> dict[str, Any]:
    """The evaluator part: ``sh -c command``, run in the home as the desktop's uid, prints
    exactly ``expected`` (OSWorld's ``exact_match`` over ``vm_command_line``)."""
    return {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": command},
        "expected": {"type": "rule", "rules": {"expected": expected}},
        "options": {},
    }
