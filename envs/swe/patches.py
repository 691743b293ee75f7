"""Unified diffs: made from file contents, split into files, applied with ``git apply``.

Patches are the family's currency, as in SWE-bench: a task's bug is a patch on the pristine
repository, its oracle is the reverse patch, and what an agent submits is the patch of its
working copy. They are written in git's format (``diff --git`` headers, ``/dev/null`` for
added and deleted files, ``\\ No newline at end of file``) so ``git apply`` and SWE-bench's
own tools read them, and applied with ``git apply`` itself rather than a parser of our own.
"""

from __future__ import annotations

import difflib
import posixpath
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FilePatch", "PatchError", "apply_patch", "make_patch", "split_patch"]

NO_NEWLINE = "\\ No newline at end of file\n"
_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$")


class PatchError(ValueError):
    """A patch that does not apply (or cannot be read); the message says which file."""


@dataclass(frozen=True)
class FilePatch:
    """One file's part of a patch: its path (the new path; the old one when deleted)."""

    path: str
    text: str
    added: bool = False
    deleted: bool = False


def make_patch(changes: Mapping[str, tuple[str | None, str | None]]) -> str:
    """A git-style patch from ``{path: (old text or None, new text or None)}``, files in
    sorted order; unchanged files are left out."""
    parts = []
    for path in sorted(changes):
        old, new = changes[path]
        if old == new:
            continue
        header = [f"diff --git a/{path} b/{path}\n"]
        if old is None:
            header.append("new file mode 100644\n")
        elif new is None:
            header.append("deleted file mode 100644\n")
        source = f"a/{path}" if old is not None else "/dev/null"
        target = f"b/{path}" if new is not None else "/dev/null"
        hunks = difflib.unified_diff(
            _lines(old or ""), _lines(new or ""), fromfile=source, tofile=target, n=3
        )
        body = [_with_newline(line) for line in hunks]
        parts.append("".join(header + body))
    return "".join(parts)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _with_newline(line: str) -> str:
    return line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}"


def split_patch(patch: str) -> list[FilePatch]:
    """The per-file parts of a git-style patch (text before the first header is dropped).

    Raises :class:`PatchError` for a patch with no ``diff --git`` header or a header whose
    two paths differ (renames are not part of this family's patches).
    """
    parts: list[FilePatch] = []
    current: list[str] = []
    for line in patch.splitlines(keepends=True):
        if line.startswith("diff --git "):
            if current:
                parts.append(_file_patch(current))
            current = [line]
        elif current:
            current.append(line)
    if current:
        parts.append(_file_patch(current))
    if not parts and patch.strip():
        raise PatchError("the patch has no 'diff --git a/... b/...' header")
    return parts


def _file_patch(lines: list[str]) -> FilePatch:
    match = _HEADER.match(lines[0].rstrip("\n"))
    if match is None or match.group(1) != match.group(2):
        raise PatchError(f"cannot read the patch header {lines[0].strip()[:200]!r}")
    path = match.group(1)
    if path.startswith("/") or ".." in path.split("/") or posixpath.normpath(path) != path:
        raise PatchError(f"the patch names a path outside the repository: {path[:200]!r}")
    text = "".join(lines)
    added = any(line.startswith("new file mode") for line in lines[1:4])
    deleted = any(line.startswith("deleted file mode") for line in lines[1:4])
    return FilePatch(path, text, added, deleted)


def apply_patch(files: Mapping[str, str], patch: str) -> dict[str, str | None]:
    """Apply ``patch`` to ``files`` (``{path: text}``, every file it changes); return
    ``{path: new text, or None if deleted}`` for the files it touches.

    Runs ``git apply`` in a scratch directory holding just those files; a patch that does
    not apply raises :class:`PatchError` with git's message.
    """
    touched = [part.path for part in split_patch(patch)]
    if not touched:
        return {}
    with tempfile.TemporaryDirectory(prefix="agentgym-patch-") as scratch:
        root = Path(scratch)
        for path in touched:
            if path in files:
                target = root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(files[path], encoding="utf-8")
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"],
            input=patch.encode(),
            cwd=root,
            capture_output=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise PatchError(f"the patch does not apply: {done.stderr.decode(errors='replace')}")
        result: dict[str, str | None] = {}
        for path in touched:
            target = root / path
            if target.is_symlink() or (target.exists() and not target.is_file()):
                # git apply makes links (mode 120000): reading one would read where it points
                raise PatchError(f"the patch makes {path} a symbolic link or a special file")
            result[path] = target.read_text(encoding="utf-8") if target.exists() else None
        return result
