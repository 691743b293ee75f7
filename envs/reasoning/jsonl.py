"""Reading a dataset file in JSONL, one place for every loader of the reasoning family.

Blank lines are skipped; a row that is not JSON, not an object, or that ``parse`` cannot
read becomes a :class:`~agentgym.errors.UsageError` naming the file, the line and why, so a
user with the wrong file learns which line is wrong rather than getting a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from agentgym.errors import UsageError

__all__ = ["read_rows"]

T = TypeVar("T")


def read_rows(path: str | Path, what: str, parse: Callable[[dict[str, Any]], T]) -> Iterator[T]:
    """``parse(row)`` for every row of the JSONL file ``path`` (``what``: e.g. "gsm8k")."""
    source = Path(path).expanduser()
    if not source.is_file():
        raise UsageError(f"{what} dataset file {str(source)!r} does not exist")
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise TypeError(f"a row is a JSON object, got {type(row).__name__}")
            yield parse(row)
        except (ValueError, KeyError, TypeError, SyntaxError, UsageError) as error:
            raise UsageError(
                f"{source}:{number}: not a {what} row ({type(error).__name__}: {error})"
            ) from None
