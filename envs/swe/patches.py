"""Unified diffs: made from file contents, split into files, applied with ``git apply``.

Patches are the family's currency, as in SWE-bench: a task's bug is a patch on the pristine
repository, its oracle is the reverse patch, and what an agent submits is the patch of its
working copy. They are written in git's format (``diff --git`` headers, ``/dev/null`` for
added and deleted files, ``\\ No newline at end of file``, and file names quoted as git
quotes them: ``"a/new\\nline.py"``, a tab after a name with a space on the ``---``/``+++``
lines) so ``git apply`` and SWE-bench's own tools read them, and applied with ``git apply``
itself rather than a parser of our own. Lines end at ``\\n`` only, as in git: a form feed
or a carriage return inside a line is part of it.
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

__all__ = ["FilePatch", "PatchError", "apply_patch", "make_patch", "quote_path", "split_patch"]

NO_NEWLINE = "\\ No newline at end of file\n"
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}
_UNESCAPES = {letter: code for code, letter in _ESCAPES.items()}


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
        header = [f"diff --git {quote_path('a/' + path)} {quote_path('b/' + path)}\n"]
        if old is None:
            header.append("new file mode 100644\n")
        elif new is None:
            header.append("deleted file mode 100644\n")
        source = _label("a/", path) if old is not None else "/dev/null"
        target = _label("b/", path) if new is not None else "/dev/null"
        hunks = difflib.unified_diff(
            _lines(old or ""), _lines(new or ""), fromfile=source, tofile=target, n=3
        )
        body = [_with_newline(line) for line in hunks]
        parts.append("".join(header + body))
    return "".join(parts)


def quote_path(path: str) -> str:
    """``path`` as git writes it in a patch (``core.quotePath``, its default): unchanged,
    or in double quotes with C escapes when it holds a quote, a backslash, a control
    character or a byte outside ASCII (a name that is not UTF-8, read with
    ``surrogateescape``, is quoted byte for byte)."""
    data = path.encode("utf-8", "surrogateescape")
    if all(0x20 <= byte < 0x7F and byte not in (34, 92) for byte in data):
        return path
    escaped = "".join(
        chr(byte)
        if 0x20 <= byte < 0x7F and byte not in _ESCAPES
        else f"\\{_ESCAPES[byte]}"
        if byte in _ESCAPES
        else f"\\{byte:03o}"
        for byte in data
    )
    return f'"{escaped}"'


def _label(prefix: str, path: str) -> str:
    """A ``---``/``+++`` name: quoted as in the header, and followed by a tab when it holds
    a space (git does so, that GNU patch reads the name whole)."""
    quoted = quote_path(prefix + path)
    return quoted + "\t" if " " in quoted else quoted


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def _with_newline(line: str) -> str:
    return line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}"


def split_patch(patch: str) -> list[FilePatch]:
    """The per-file parts of a git-style patch (text before the first header is dropped).

    Raises :class:`PatchError` for a patch with no ``diff --git`` header or a header whose
    two paths differ (renames are not part of this family's patches).
    """
    parts: list[FilePatch] = []
    current: list[str] = []
    for line in _lines(patch):
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
    path = _header_path(lines[0].removeprefix("diff --git ").removesuffix("\n"))
    if path is None:
        raise PatchError(f"cannot read the patch header {lines[0].strip()[:200]!r}")
    if path.startswith("/") or ".." in path.split("/") or posixpath.normpath(path) != path:
        raise PatchError(f"the patch names a path outside the repository: {path[:200]!r}")
    text = "".join(lines)
    added = any(line.startswith("new file mode") for line in lines[1:4])
    deleted = any(line.startswith("deleted file mode") for line in lines[1:4])
    return FilePatch(path, text, added, deleted)


def _header_path(names: str) -> str | None:
    """The one path of a ``diff --git`` header's ``a/PATH b/PATH`` (each quoted or not);
    None when the two differ or cannot be read."""
    if names.startswith('"'):
        first, rest = _unquote(names)
        if first is None or not rest.startswith(" "):
            return None
        second, tail = _unquote(rest[1:]) if rest[1:].startswith('"') else (rest[1:], "")
        if tail or second is None or second != "b/" + first[2:]:
            return None
        name = first
    else:
        # Unquoted names may hold spaces: the two halves are the same path, so the split
        # is in the middle (as git apply finds it).
        half = (len(names) - 1) // 2
        name = names[:half]
        if len(names) % 2 == 0 or names != f"{name} b/{name[2:]}":
            return None
    return name[2:] if name.startswith("a/") else None


def _unquote(text: str) -> tuple[str | None, str]:
    """A C-quoted name at the start of ``text`` (git's rules) and what follows it; None
    when it is not one."""
    data = bytearray()
    index = 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return data.decode("utf-8", "surrogateescape"), text[index + 1 :]
        if char != "\\":
            data += char.encode("utf-8", "surrogateescape")
            index += 1
            continue
        escape = text[index + 1 : index + 2]
        if escape in _UNESCAPES:
            data.append(_UNESCAPES[escape])
            index += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", text[index + 1 : index + 4]):
            data.append(int(text[index + 1 : index + 4], 8))
            index += 4
        else:
            return None, text
    return None, text


def apply_patch(files: Mapping[str, str], patch: str) -> dict[str, str | None]:
    """Apply ``patch`` to ``files`` (``{path: text}``, every file it changes); return
    ``{path: new text, or None if deleted}`` for the files it touches.

    Runs ``git apply`` in a scratch directory holding just those files; a patch that does
    not apply, or that is not (or makes files that are not) UTF-8 text, raises
    :class:`PatchError` with the reason.
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
                target.write_bytes(_utf8(files[path], path))
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"],
            input=_utf8(patch, "the patch"),
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
            try:
                result[path] = target.read_bytes().decode("utf-8") if target.exists() else None
            except UnicodeDecodeError:
                raise PatchError(f"the patch makes {path} a file that is not UTF-8") from None
        return result


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise PatchError(f"{what[:200]!r} holds text that is not UTF-8") from None
