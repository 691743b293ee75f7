"""A SWE task as data: :class:`SWEInstance`, and task sets as JSON Lines.

The fields are SWE-bench's (``instance_id``, ``repo``, ``base_commit``, ``patch``,
``test_patch``, ``problem_statement``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, ``version``), so
an instance converts both ways (:mod:`agentgym.envs.swe.swebench`), plus what a task made
here has beyond them: ``bug_patch`` (applied to the pristine repository, it makes the
task's starting tree; SWE-bench's ``base_commit`` already is the buggy tree, so there it is
empty), the split and difficulty, and how the bug was made.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentgym.errors import UsageError

__all__ = ["DEFAULT_TASKS", "SWEInstance", "json_lines", "load_instances", "save_instances"]

DEFAULT_TASKS = Path(__file__).parent / "data" / "swe-v0.jsonl"
"""The shipped task file (``swe-v0``): what the env and ``swe prepare`` use by default."""


@dataclass(frozen=True)
class SWEInstance:
    """One task: a repository at a commit, a bug, the tests that show it, its fix.

    Attributes:
        instance_id: a stable id, ``<repo>.<digest of the bug>``.
        repo: the catalogue name of the repository (:mod:`agentgym.envs.swe.repos`).
        version: the repository's version.
        base_commit: the prepared repository's commit (before ``bug_patch``).
        bug_patch: the injected bug, as a patch on ``base_commit``.
        patch: the gold fix: a patch on the buggy tree (the reverse of ``bug_patch``).
        test_patch: a patch to the tests applied only when grading ("" here: the tests are
            the repository's own, unchanged).
        problem_statement: what the agent is told, written from the failing tests.
        fail_to_pass: tests that fail on the buggy tree and must pass after the fix.
        pass_to_pass: tests that pass on the buggy tree and must still pass.
        split: ``train``, ``dev`` or ``test`` (the repository's).
        difficulty: ``easy`` (one change), ``medium`` (two, one file), ``hard`` (three, or
            changes in two files).
        mutations: how the bug was made (operator, path, function, line, description).
    """

    instance_id: str
    repo: str
    version: str
    base_commit: str
    bug_patch: str
    patch: str
    problem_statement: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    split: str
    difficulty: str
    test_patch: str = ""
    mutations: tuple[Mapping[str, Any], ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["fail_to_pass"] = list(self.fail_to_pass)
        data["pass_to_pass"] = list(self.pass_to_pass)
        data["mutations"] = [dict(m) for m in self.mutations]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SWEInstance:
        if not isinstance(data, Mapping):
            raise UsageError(f"an SWE instance is a JSON object, not {type(data).__name__}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        missing = sorted(
            name
            for name, spec in cls.__dataclass_fields__.items()
            if name not in data and spec.default is MISSING and spec.default_factory is MISSING
        )
        if unknown or missing:
            raise UsageError(
                f"an SWE instance has unknown fields {unknown} or lacks {missing} "
                f"(id {data.get('instance_id')!r})"
            )
        for name in ("fail_to_pass", "pass_to_pass"):
            ids = data[name]
            if not isinstance(ids, list) or not all(isinstance(t, str) for t in ids):
                raise UsageError(f"{name} must be a list of test ids, got {ids!r:.80}")
        values = dict(data)
        values["fail_to_pass"] = tuple(values["fail_to_pass"])
        values["pass_to_pass"] = tuple(values["pass_to_pass"])
        values["mutations"] = tuple(values.get("mutations", ()))
        return cls(**values)


def json_lines(path: str | Path) -> list[tuple[int, Any]]:
    """The values of a JSON Lines file with their line numbers (blank lines skipped); a file
    that cannot be read, is not UTF-8 or has a line that is not JSON raises
    :class:`UsageError` naming the file and the line."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UsageError(f"{path}:{line}: not UTF-8 text (a JSON Lines file is)") from None
    values = []
    for number, row in enumerate(text.split("\n"), start=1):
        if row.strip():
            try:
                values.append((number, json.loads(row)))
            except (ValueError, RecursionError) as error:
                raise UsageError(f"{path}:{number}: not JSON: {error}") from None
    return values


def load_instances(path: str | Path) -> list[SWEInstance]:
    """The instances of a JSON Lines file (one object per line).

    Parsed once per version of the file (its path, size and modification time): swe-v0's
    1.6 MB would otherwise be read at every ``make``.
    """
    try:
        info = os.stat(path)
    except OSError:
        return list(_parse_instances(path))  # raises the UsageError naming the file
    return list(_cached_instances(os.path.realpath(path), info.st_size, info.st_mtime_ns))


@functools.lru_cache(maxsize=8)
def _cached_instances(path: str, size: int, mtime_ns: int) -> tuple[SWEInstance, ...]:
    del size, mtime_ns  # the cache key: a file written again is read again
    return _parse_instances(path)


def _parse_instances(path: str | Path) -> tuple[SWEInstance, ...]:
    instances = []
    for number, value in json_lines(path):
        try:
            instances.append(SWEInstance.from_json(value))
        except (UsageError, ValueError, TypeError) as error:
            raise UsageError(f"{path}:{number}: not an SWE instance: {error}") from None
    return tuple(instances)


def save_instances(instances: Iterable[SWEInstance], path: str | Path) -> None:
    """Write instances as JSON Lines (sorted keys: the file diffs cleanly)."""
    with open(path, "w", encoding="utf-8") as out:
        for instance in instances:
            out.write(json.dumps(instance.to_json(), sort_keys=True) + "\n")
