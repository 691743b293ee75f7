"""SWE-bench's instance format, both ways: our tasks out as SWE-bench instances, and
SWE-bench instances in as tasks of ``swe/Repair-v1``.

SWE-bench's JSON Lines are what repository-repair tools share: its harness, agent
scaffolds and the datasets built on it (Lite, Verified, SWE-Gym, ...) all read them.
Exporting lets those tools run our tasks; importing lets our env run theirs, with its
sandbox, its hardened grader and its ledger.

**Export** (:func:`export_swebench`). SWE-bench's ``base_commit`` is the tree the agent
starts from, so it already holds the bug; ours start from the pristine prepared repository
plus ``bug_patch``. So export writes, into a git mirror (one bare repository per upstream
repository, ``<mirror>/<owner>__<name>.git``), one commit per task: its tree is the
prepared tree with the bug applied, its parent the prepared repository's commit, its author
and date fixed (:data:`~agentgym.envs.swe.prepare.GIT_ENV`, with no user or system git
configuration), so the same task gives the same sha on every machine. A tag named by the
instance id keeps it reachable (``git checkout <instance_id>`` in a clone of the mirror),
and ``prepared/<name>-<version>`` tags the pristine commit. SWE-bench's eval script applies
a test patch and runs the files it names, and fails on an empty one: a task of ours has
none (its tests are the repository's), so its commit leaves out the test files of its
FAIL_TO_PASS and PASS_TO_PASS tests and its ``test_patch`` adds them back. Test ids that
SWE-bench's log parser cannot read back (with whitespace, :func:`parsable_test_id`) are left
out, and so is a task left without FAIL_TO_PASS; both are logged.

**Import** (:func:`import_swebench`). Against local checkouts: a directory holding, per
repository, a git clone ``<owner>__<name>`` (SWE-bench's convention) or a bare mirror
``<owner>__<name>.git`` (what export writes). Each distinct (repository, base commit) is
prepared like any local repository (:func:`~agentgym.envs.swe.prepare.prepare`, without a
baseline) from ``git archive <base_commit>``, under the name
``<owner>__<name>@<base_commit[:12]>``; the instances become :class:`SWEInstance` s with
that name as ``repo``, the prepared commit as ``base_commit`` and no ``bug_patch`` (the
base commit already is the buggy tree). The test environment is the family's: pytest
(pinned), the ``requirements`` given, and the package imported from its working copy
(``src`` when the tree has packages or modules there, else its root), never installed; a
repository that must be built (C extensions) does not run.
Only what our grader can run is imported: tests named by pytest node ids
(``path.py::name``; not Django's or SymPy's own runners) and patches of text files, without
renames, that apply to the base commit; anything else is a
:class:`~agentgym.errors.UsageError` naming the instance, or, with ``skip_unsupported``, left
out and logged. Gold changes the grader does not count (tests, build configuration, a
changelog entry outside the package) are logged: such a task resolves only if the tests do
not need them.

Difficulty of an imported task comes from its gold patch (:func:`patch_difficulty`):
``easy`` is one file and at most 6 changed lines, ``medium`` at most two files and 30
changed lines, ``hard`` anything larger (changed lines: added plus removed).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.cache import exclusive
from agentgym.envs.swe.grading import starting_files, writable_path
from agentgym.envs.swe.instances import SWEInstance, json_lines
from agentgym.envs.swe.patches import PatchError, apply_patch, make_patch, split_patch
from agentgym.envs.swe.prepare import (
    GIT_ENV,
    PrepareError,
    find_spec,
    prepare,
    prepared_repo,
)
from agentgym.envs.swe.repos import PreparedRepo, RepoSpec
from agentgym.errors import InfrastructureError, UsageError

__all__ = [
    "CREATED_AT",
    "MirrorError",
    "SWEBenchRecord",
    "checkout_path",
    "export_swebench",
    "import_swebench",
    "load_swebench",
    "mirror_path",
    "parsable_test_id",
    "patch_difficulty",
    "save_swebench",
    "task_test_files",
]

CREATED_AT = GIT_ENV["GIT_COMMITTER_DATE"]
"""``created_at`` of every exported instance: the date of its commit (fixed, so exports
are byte-for-byte reproducible), in the form of the SWE-bench datasets."""
EASY_LINES, MEDIUM_LINES, MEDIUM_FILES = 6, 30, 2
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
_PINNED = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._,-]+\])?==[A-Za-z0-9_.+!-]+"
)
_NODE_ID = re.compile(r"[^:\s][^:]*\.py::\S.*")


class MirrorError(InfrastructureError):
    """git could not read a checkout or write the mirror; the message names the command and
    quotes git."""


@dataclass(frozen=True)
class SWEBenchRecord:
    """One SWE-bench instance, its fields as in the datasets on the Hugging Face hub
    (``FAIL_TO_PASS`` and ``PASS_TO_PASS`` are JSON-encoded lists there; here, tuples)."""

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    problem_statement: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    test_patch: str = ""
    hints_text: str = ""
    created_at: str = ""
    version: str = ""
    environment_setup_commit: str = ""

    def to_json(self) -> dict[str, str]:
        """The instance as SWE-bench writes it (every value a string)."""
        return {
            "instance_id": self.instance_id,
            "repo": self.repo,
            "base_commit": self.base_commit,
            "patch": self.patch,
            "test_patch": self.test_patch,
            "problem_statement": self.problem_statement,
            "hints_text": self.hints_text,
            "created_at": self.created_at,
            "version": self.version,
            "FAIL_TO_PASS": json.dumps(list(self.fail_to_pass)),
            "PASS_TO_PASS": json.dumps(list(self.pass_to_pass)),
            "environment_setup_commit": self.environment_setup_commit,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SWEBenchRecord:
        """Read an instance; lists may be JSON strings or lists, unknown fields are ignored,
        a missing or malformed required field raises :class:`UsageError` naming it."""
        if not isinstance(data, Mapping):
            raise UsageError(f"expected a JSON object, got {type(data).__name__}")
        text = {name: _string(data, name, required=True) for name in _REQUIRED}
        optional = {name: _string(data, name, required=False) for name in _OPTIONAL}
        if not _REPO.fullmatch(text["repo"]):
            raise UsageError(f"field 'repo' must be 'owner/name', got {text['repo']!r}")
        if not _SHA.fullmatch(text["base_commit"]):
            raise UsageError(
                f"field 'base_commit' must be a commit sha, got {text['base_commit']!r}"
            )
        return cls(
            **text,
            **optional,
            fail_to_pass=_test_ids(data, "FAIL_TO_PASS"),
            pass_to_pass=_test_ids(data, "PASS_TO_PASS"),
        )


_REQUIRED = ("instance_id", "repo", "base_commit", "patch", "problem_statement")
_OPTIONAL = ("test_patch", "hints_text", "created_at", "version", "environment_setup_commit")


def _string(data: Mapping[str, Any], name: str, *, required: bool) -> str:
    value = data.get(name)
    if value is None and not required:
        return ""
    if name not in data:
        raise UsageError(f"lacks the field {name!r}")
    if not isinstance(value, str) or (required and not value.strip()):
        kind = "a non-empty string" if required else "a string"
        raise UsageError(f"field {name!r} must be {kind}, got {value!r:.80}")
    return value


def _test_ids(data: Mapping[str, Any], name: str) -> tuple[str, ...]:
    if name not in data:
        raise UsageError(f"lacks the field {name!r}")
    value = data[name]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise UsageError(f"field {name!r} is a string but not JSON: {value!r:.80}") from None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise UsageError(
            f"field {name!r} must be a list of test ids (or a JSON string of one), "
            f"got {value!r:.80}"
        )
    return tuple(value)


def load_swebench(path: str | Path) -> list[SWEBenchRecord]:
    """The instances of a SWE-bench JSON Lines file (ours, or a dataset's exported with
    ``datasets``' ``to_json``); errors name the line."""
    records = []
    for number, value in json_lines(path):
        try:
            records.append(SWEBenchRecord.from_json(value))
        except UsageError as error:
            raise UsageError(f"{path}:{number}: not a SWE-bench instance: {error}") from None
    return records


def save_swebench(records: Iterable[SWEBenchRecord], path: str | Path) -> None:
    """Write instances as SWE-bench JSON Lines (fields in SWE-bench's order)."""
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record.to_json()) + "\n")


def patch_difficulty(patch: str) -> str:
    """``easy`` (one file, at most 6 changed lines), ``medium`` (at most two files and 30
    changed lines) or ``hard``, from a patch's files and added plus removed lines."""
    files = len(split_patch(patch))
    changed = _changed_lines(patch)
    if files <= 1 and changed <= EASY_LINES:
        return "easy"
    if files <= MEDIUM_FILES and changed <= MEDIUM_LINES:
        return "medium"
    return "hard"


def _changed_lines(patch: str) -> int:
    count, in_hunk = 0, False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line[:1] in ("+", "-"):
            count += 1
    return count


# ---------------------------------------------------------------------------------- export


def mirror_path(mirror: Path, repo: str) -> Path:
    """The bare repository of upstream ``repo`` (``owner/name``) in a mirror directory."""
    return mirror / f"{_dirname(repo)}.git"


def _dirname(repo: str) -> str:
    return repo.replace("/", "__")


def export_swebench(
    instances: Iterable[SWEInstance],
    mirror: Path,
    *,
    root: Path | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> list[SWEBenchRecord]:
    """Our tasks as SWE-bench instances, each task's buggy tree committed into ``mirror``
    (see the module docstring). Their repositories must be prepared (under ``root``).

    Test ids SWE-bench's log parser cannot read back (:func:`parsable_test_id`) are left out
    of FAIL_TO_PASS and PASS_TO_PASS, and a task left with no FAIL_TO_PASS is left out
    (SWE-bench would call any patch a fix of it); both are logged."""
    instances = list(instances)
    _check_unique(i.instance_id for i in instances)
    prepared: dict[str, PreparedRepo] = {}
    records = []
    for instance in instances:
        fail_to_pass = tuple(filter(parsable_test_id, instance.fail_to_pass))
        pass_to_pass = tuple(filter(parsable_test_id, instance.pass_to_pass))
        unreadable = len(instance.fail_to_pass + instance.pass_to_pass) - len(
            fail_to_pass + pass_to_pass
        )
        if not fail_to_pass:
            log(
                f"left out {instance.instance_id}: every FAIL_TO_PASS id holds whitespace, "
                f"which SWE-bench's pytest log parser cannot read"
            )
            continue
        if unreadable:
            log(
                f"{instance.instance_id}: left out {unreadable} test ids with whitespace "
                f"(SWE-bench's pytest log parser cannot read them)"
            )
        instance = dataclasses.replace(
            instance, fail_to_pass=fail_to_pass, pass_to_pass=pass_to_pass
        )
        if instance.repo not in prepared:
            prepared[instance.repo] = prepared_repo(find_spec(instance.repo, root), root)
        repo = prepared[instance.repo]
        if instance.base_commit != repo.base_commit:
            raise UsageError(
                f"task {instance.instance_id} was made on commit {instance.base_commit} of "
                f"{instance.repo}, but that repository is prepared at {repo.base_commit}; "
                f"export it where it was made (or make the tasks again)"
            )
        commit = _commit_task(mirror, repo, instance)
        records.append(_record(instance, repo, commit))
    return records


def parsable_test_id(test_id: str) -> bool:
    """Whether SWE-bench's pytest log parser reads ``test_id`` back from a test log: it
    takes the id as the second whitespace-separated word of a ``PASSED <id>`` line, so an
    id with whitespace (a parametrized value such as ``[a b]``) comes back cut short and
    its test counts as not run."""
    return not any(char.isspace() for char in test_id)


def task_test_files(instance: SWEInstance) -> list[str]:
    """The files of a task's FAIL_TO_PASS and PASS_TO_PASS tests."""
    return sorted({t.split("::")[0] for t in instance.fail_to_pass + instance.pass_to_pass})


def _test_patch(prepared: PreparedRepo, instance: SWEInstance) -> str:
    """The task's test patch as SWE-bench has one: a task of ours has none (its tests are
    the repository's), so it is the patch that adds its test files, which its exported
    starting tree lacks. An imported task keeps its own."""
    if instance.test_patch:
        return instance.test_patch
    return make_patch({path: (None, prepared.read(path)) for path in task_test_files(instance)})


def _record(instance: SWEInstance, prepared: PreparedRepo, commit: str) -> SWEBenchRecord:
    return SWEBenchRecord(
        instance_id=instance.instance_id,
        repo=prepared.spec.url,
        base_commit=commit,
        patch=instance.patch,
        problem_statement=instance.problem_statement,
        fail_to_pass=instance.fail_to_pass,
        pass_to_pass=instance.pass_to_pass,
        test_patch=_test_patch(prepared, instance),
        created_at=CREATED_AT,
        version=instance.version,
        environment_setup_commit=commit,
    )


def _commit_task(mirror: Path, prepared: PreparedRepo, instance: SWEInstance) -> str:
    """Commit the task's starting tree into the mirror, tag it; return the commit's sha."""
    git_dir = mirror_path(mirror, prepared.spec.url)
    tag = f"refs/tags/{instance.instance_id}"
    _check_ref(tag, instance.instance_id)
    mirror.mkdir(parents=True, exist_ok=True)
    with exclusive(mirror / f".{git_dir.name}.lock"):
        if not git_dir.is_dir():
            _run_git(["git", "init", "--quiet", "--bare", str(git_dir)], _MIRROR_ENV, None)
        _add_prepared(git_dir, prepared)
        tree = _buggy_tree(git_dir, prepared, instance)
        message = f"{instance.instance_id}: the starting tree of this agentgym SWE task\n"
        commit = _mirror_git(
            git_dir, "commit-tree", tree, "-p", prepared.base_commit, "-m", message
        )
        _mirror_git(git_dir, "update-ref", tag, commit.strip())
    return commit.strip()


def _add_prepared(git_dir: Path, prepared: PreparedRepo) -> None:
    """Fetch the prepared repository's commit into the mirror (once), tagged
    ``prepared/<name>-<version>``."""
    base = prepared.base_commit
    if not _has_commit(git_dir, base):
        target = f"+HEAD:refs/tags/prepared/{prepared.spec.key}"
        _mirror_git(git_dir, "fetch", "--quiet", "--no-tags", str(prepared.git_dir), target)
    if not _has_commit(git_dir, base):
        raise MirrorError(
            f"{prepared.git_dir} does not hold {prepared.spec.key}'s commit {base}; "
            f"prepare the repository again"
        )


def _buggy_tree(git_dir: Path, prepared: PreparedRepo, instance: SWEInstance) -> str:
    """The tree of the prepared commit with the task's bug applied and, for a task of ours,
    without its test files (:func:`_test_patch` adds them); written through a scratch
    index: a bare repository has no working tree to apply it in."""
    files = dict(starting_files(prepared, instance))
    if not instance.test_patch:  # its test files come with the test patch
        files.update(dict.fromkeys(task_test_files(instance)))
    modes = _modes(git_dir, prepared.base_commit, list(files))
    entries = []
    for path, text in sorted(files.items()):
        if text is None:
            entries.append(f"0 {'0' * 40}\t{path}\n")
        else:
            blob = _mirror_git(git_dir, "hash-object", "-w", "--stdin", stdin=text).strip()
            entries.append(f"{modes.get(path, '100644')} {blob}\t{path}\n")
    with tempfile.TemporaryDirectory(prefix="agentgym-index-") as scratch:
        index = os.path.join(scratch, "index")
        _mirror_git(git_dir, "read-tree", prepared.base_commit, index=index)
        if entries:
            _mirror_git(
                git_dir, "update-index", "--index-info", stdin="".join(entries), index=index
            )
        return _mirror_git(git_dir, "write-tree", index=index).strip()


def _modes(git_dir: Path, commit: str, paths: Sequence[str]) -> dict[str, str]:
    """The file modes of ``paths`` in ``commit`` (those it has)."""
    if not paths:
        return {}
    listing = _mirror_git(git_dir, "ls-tree", "-r", "-z", commit, "--", *paths)
    modes = {}
    for entry in filter(None, listing.split("\0")):
        info, _, path = entry.partition("\t")
        modes[path] = info.split()[0]
    return modes


def _check_ref(ref: str, instance_id: str) -> None:
    done = subprocess.run(["git", "check-ref-format", ref], capture_output=True, check=False)
    if done.returncode != 0:
        raise UsageError(
            f"task id {instance_id!r} cannot name a git tag (see `git help check-ref-format`)"
        )


# ---------------------------------------------------------------------------------- import


def checkout_path(checkouts: Path, repo: str) -> Path:
    """The local checkout of upstream ``repo``: ``<owner>__<name>`` (a clone) or
    ``<owner>__<name>.git`` (a bare mirror, as export writes) in ``checkouts``."""
    for candidate in (checkouts / _dirname(repo), mirror_path(checkouts, repo)):
        if candidate.is_dir():
            return candidate
    raise UsageError(
        f"no checkout of {repo} in {checkouts}: clone it there as {_dirname(repo)} "
        f"(git clone https://github.com/{repo} {checkouts / _dirname(repo)}) or give the "
        f"mirror export wrote ({_dirname(repo)}.git)"
    )


def import_swebench(
    records: Sequence[SWEBenchRecord],
    checkouts: Path,
    *,
    requirements: Sequence[str] = (),
    root: Path | None = None,
    skip_unsupported: bool = False,
    log: Callable[[str], None] = lambda line: None,
) -> list[SWEInstance]:
    """SWE-bench instances as our tasks, their repositories prepared (under ``root``) from
    the checkouts in ``checkouts``; see the module docstring.

    ``requirements``: pinned packages the tests need beyond pytest (every repository's test
        environment gets them all).
    ``skip_unsupported``: leave out (and log) instances our grader cannot run, instead of
        raising :class:`UsageError`.
    """
    _check_pinned(requirements)
    _check_unique(r.instance_id for r in records)
    kept = [r for r in records if not _rejected(r, _static_problem(r), skip_unsupported, log)]
    groups: dict[tuple[str, str], list[SWEBenchRecord]] = {}
    for record in kept:
        groups.setdefault((record.repo, record.base_commit), []).append(record)
    prepared = {
        key: _prepare_commit(key[0], key[1], group, checkouts, requirements, root, log)
        for key, group in groups.items()
    }
    instances = []
    for record in kept:
        repo = prepared[record.repo, record.base_commit]
        if _rejected(record, _tree_problem(repo, record), skip_unsupported, log):
            continue
        _note_uncounted(repo, record, log)
        instances.append(_instance(record, repo))
    return instances


def _check_pinned(requirements: Sequence[str]) -> None:
    """Each requirement is ``NAME==VERSION`` (extras allowed): pip is given them as they
    are, and anything else (an option, a path, a range) would install what no one pinned."""
    for requirement in requirements:
        if not _PINNED.fullmatch(requirement):
            raise UsageError(
                f"--requirement {requirement!r} is not a pinned package: write NAME==VERSION "
                f"(e.g. hypothesis==6.170.17)"
            )


def _check_unique(instance_ids: Iterable[str]) -> None:
    """Refuse a repeated id: it names a task (and, exported, a git tag) once."""
    seen: set[str] = set()
    for instance_id in instance_ids:
        if instance_id in seen:
            raise UsageError(f"the instance id {instance_id!r} occurs more than once")
        seen.add(instance_id)


def _rejected(record: SWEBenchRecord, problem: str, skip: bool, log: Callable[[str], None]) -> bool:
    if not problem:
        return False
    if not skip:
        raise UsageError(
            f"instance {record.instance_id} cannot be imported: {problem} "
            f"(skip_unsupported / --skip-unsupported leaves such instances out)"
        )
    log(f"skipped {record.instance_id}: {problem}")
    return True


def _static_problem(record: SWEBenchRecord) -> str:
    """Why the record cannot run here, seen from the record alone ("" if it can)."""
    if not record.fail_to_pass:
        return "its FAIL_TO_PASS is empty"
    for field_name, ids in (
        ("FAIL_TO_PASS", record.fail_to_pass),
        ("PASS_TO_PASS", record.pass_to_pass),
    ):
        bad = next((t for t in ids if not _NODE_ID.fullmatch(t)), None)
        if bad is not None:
            return (
                f"its {field_name} id {bad!r} is not a pytest node id (path.py::name); "
                f"the grader runs tests with pytest"
            )
    for field_name, patch in (("patch", record.patch), ("test_patch", record.test_patch)):
        try:
            split_patch(patch)
        except PatchError as error:
            return f"its {field_name} cannot be read: {error}"
    return ""


def _tree_problem(prepared: PreparedRepo, record: SWEBenchRecord) -> str:
    """Why the record cannot run on its prepared tree ("" if it can)."""
    for field_name, patch in (("patch", record.patch), ("test_patch", record.test_patch)):
        try:
            apply_patch(_originals(prepared, patch), patch)
        except (PatchError, UnicodeDecodeError) as error:
            return f"its {field_name} does not apply to {record.base_commit}: {error}"
    return ""


def _note_uncounted(
    prepared: PreparedRepo, record: SWEBenchRecord, log: Callable[[str], None]
) -> None:
    """Log the files of the gold patch whose changes the grader drops (a changelog entry,
    say: harmless unless the tests need them)."""
    uncounted = [
        part.path
        for part in split_patch(record.patch)
        if not writable_path(prepared, part.path, exists=(prepared.tree / part.path).is_file())
    ]
    if uncounted:
        log(f"note: the grader does not count {record.instance_id}'s changes to {uncounted}")


def _originals(prepared: PreparedRepo, patch: str) -> dict[str, str]:
    paths = [part.path for part in split_patch(patch)]
    return {path: prepared.read(path) for path in paths if (prepared.tree / path).is_file()}


def _instance(record: SWEBenchRecord, prepared: PreparedRepo) -> SWEInstance:
    return SWEInstance(
        instance_id=record.instance_id,
        repo=prepared.spec.name,
        version=record.version,
        base_commit=prepared.base_commit,
        bug_patch="",
        patch=record.patch,
        problem_statement=record.problem_statement,
        fail_to_pass=record.fail_to_pass,
        pass_to_pass=record.pass_to_pass,
        split="test",
        difficulty=patch_difficulty(record.patch),
        test_patch=record.test_patch,
    )


def _prepare_commit(
    repo: str,
    commit: str,
    records: Sequence[SWEBenchRecord],
    checkouts: Path,
    requirements: Sequence[str],
    root: Path | None,
    log: Callable[[str], None],
) -> PreparedRepo:
    """The prepared repository of ``repo`` at ``commit`` (prepared now if it is not yet)."""
    checkout = checkout_path(checkouts, repo)
    full = _resolve(checkout, commit, [r.instance_id for r in records])
    tests = sorted({t.split("::")[0] for r in records for t in r.fail_to_pass + r.pass_to_pass})
    spec = _spec(repo, full, records[0].version, tests, _import_roots(checkout, full), requirements)
    try:
        return prepared_repo(spec, root)
    except PrepareError:
        pass
    with tempfile.TemporaryDirectory(prefix="agentgym-archive-") as scratch:
        tree = Path(scratch) / "tree"
        _archive(checkout, full, tree)
        return prepare(spec, root, baseline=False, source=tree, log=log)


def _spec(
    repo: str,
    commit: str,
    version: str,
    tests: Sequence[str],
    import_roots: Sequence[str],
    requirements: Sequence[str],
) -> RepoSpec:
    """The spec of an imported repository at a commit; its ``sha256`` digests everything
    the preparation depends on, so a changed import prepares it anew."""
    identity = [repo, commit, list(tests), list(import_roots), list(requirements)]
    digest = hashlib.sha256(json.dumps(identity).encode()).hexdigest()
    return RepoSpec(
        name=f"{_dirname(repo)}@{commit[:12]}",
        version=re.sub(r"[^A-Za-z0-9._+-]", "_", version) or "unversioned",
        sha256=digest,
        url=repo,
        split="test",
        tests=tuple(tests),
        import_roots=tuple(import_roots),
        requirements=tuple(requirements),
    )


def _resolve(checkout: Path, commit: str, instance_ids: Sequence[str]) -> str:
    """The full sha of ``commit`` in ``checkout``, or a UsageError naming both."""
    try:
        return _checkout_git(
            checkout, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"
        ).strip()
    except MirrorError:
        pass
    try:
        _checkout_git(checkout, "rev-parse", "--git-dir")
    except MirrorError as error:
        raise UsageError(f"the checkout {checkout} is not a git repository: {error}") from None
    shown = ", ".join(instance_ids[:3]) + (", ..." if len(instance_ids) > 3 else "")
    raise UsageError(
        f"the checkout {checkout} lacks the base commit {commit} (of {shown}); fetch it "
        f"(git -C {checkout} fetch origin {commit}) or point --checkouts elsewhere"
    )


def _import_roots(checkout: Path, commit: str) -> tuple[str, ...]:
    """``("src",)`` when the tree has packages or modules under ``src/``, else ``(".",)``."""
    listing = _checkout_git(checkout, "ls-tree", "-r", "--name-only", "-z", commit, "--", "src")
    parts = [path.split("/") for path in filter(None, listing.split("\0"))]
    src_layout = any(
        (len(p) == 3 and p[2] == "__init__.py") or (len(p) == 2 and p[1].endswith(".py"))
        for p in parts
    )
    return ("src",) if src_layout else (".",)


def _archive(checkout: Path, commit: str, target: Path) -> None:
    """The tree of ``commit`` in ``checkout``, written to ``target`` (``git archive``)."""
    with tempfile.TemporaryFile() as tar:
        argv = ["git", "-C", str(checkout), "archive", "--format=tar", commit]
        done = subprocess.run(argv, stdout=tar, stderr=subprocess.PIPE, check=False, timeout=900)
        if done.returncode != 0:
            raise MirrorError(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')}")
        tar.seek(0)
        with tarfile.open(fileobj=tar) as archive:
            archive.extractall(target, filter="data")


# ------------------------------------------------------------------------------------- git

_MIRROR_ENV = {
    **os.environ,
    **GIT_ENV,
    # No user or system configuration (signing, autocrlf, hooks): the same sha everywhere.
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _mirror_git(git_dir: Path, *args: str, stdin: str | None = None, index: str = "") -> str:
    """git in a bare repository of the mirror, with the mirror's fixed identity and no
    other configuration (``index``: a scratch index file)."""
    env = {**_MIRROR_ENV, "GIT_INDEX_FILE": index} if index else _MIRROR_ENV
    return _run_git(["git", "--git-dir", str(git_dir), *args], env, stdin)


def _checkout_git(checkout: Path, *args: str) -> str:
    """git in a user's checkout (a clone or a bare mirror), with the user's configuration."""
    return _run_git(["git", "-C", str(checkout), *args], None, None)


def _has_commit(git_dir: Path, commit: str) -> bool:
    try:
        _mirror_git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}")
    except MirrorError:
        return False
    return True


def _run_git(argv: list[str], env: Mapping[str, str] | None, stdin: str | None) -> str:
    try:
        done = subprocess.run(
            argv,
            input=stdin.encode() if stdin is not None else None,
            capture_output=True,
            env=env,
            timeout=900,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise MirrorError(f"{_shown(argv)} failed: {error}") from error
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip()
        raise MirrorError(f"{_shown(argv)} failed (exit code {done.returncode}): {stderr}")
    return done.stdout.decode(errors="replace")


def _shown(argv: Sequence[str]) -> str:
    return " ".join(argv[:7]) + (" ..." if len(argv) > 7 else "")
