"""``agentgym swe prepare``: a repository made ready for tasks, once, then used offline.

For a catalogue repository (:mod:`agentgym.envs.swe.repos`), in
``$AGENTGYM_CACHE/swe/<name>-<version>/``:

1. ``sdist/`` — the source distribution, downloaded by pip by name, version and sha256;
2. ``tree/`` — the sdist unpacked: the repository's files (made writable by others, so a
   sandbox's user can edit its copy-on-write working copy in place), and ``git/``, a bare
   git repository whose one commit is that tree (the ``base_commit`` of SWE-bench exports);
3. ``venv/`` — the test environment: a virtualenv with pytest and the repository's pinned
   test requirements, *without* the package itself (it imports from the working copy);
4. ``baseline.json`` (only with ``baseline=True``: the task factory needs it, episodes
   and grading do not) — the suite run twice in a sandbox: each test's outcome and duration,
   and which repository functions each test calls (the second run, traced). A test counts
   as passing only if it passed both times, so flaky tests never become tasks.

``manifest.json`` is written once steps 1-3 are done, ``baseline.json`` once step 4 is: a
directory without them is unfinished and is rebuilt.
Any local git repository with a pytest suite works the same way (``--repo PATH``), with a
spec made from the command line.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from agentgym.cache import cache_dir, exclusive
from agentgym.envs.swe.instances import DEFAULT_TASKS, load_instances
from agentgym.envs.swe.repos import (
    CATALOGUE,
    TEST_REQUIREMENTS,
    PreparedRepo,
    RepoSpec,
    repo_spec,
)
from agentgym.envs.swe.testrun import TestReport, run_tests
from agentgym.envs.swe.workspace import open_workspace
from agentgym.errors import InfrastructureError, UsageError

__all__ = [
    "PrepareError",
    "disk_usage",
    "find_spec",
    "is_prepared",
    "prepare",
    "prepared_repo",
    "spec_for_local",
    "test_python",
    "total_line",
]

FORMAT = 1
"""Bumped when what a prepared directory holds changes: older ones are rebuilt."""
NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
"""What a local repository may be called: it becomes a folder name of the cache."""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "agentgym",
    "GIT_AUTHOR_EMAIL": "swe@agentgym.invalid",
    "GIT_COMMITTER_NAME": "agentgym",
    "GIT_COMMITTER_EMAIL": "swe@agentgym.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
"""Fixed author and date: the same sdist gives the same ``base_commit`` on every machine."""


class PrepareError(InfrastructureError):
    """A repository could not be prepared: download, unpacking, its test environment, or a
    suite that does not run at all. The message names the step and the cause."""


def prepared_repo(
    spec: RepoSpec, root: Path | None = None, *, baseline: bool = False
) -> PreparedRepo:
    """The prepared repository of ``spec`` (with its baseline if asked), or a
    :class:`PrepareError` saying how to prepare it: nothing is downloaded here, so episodes
    and grading run offline."""
    prepared = PreparedRepo(spec, _repo_dir(spec, root))
    missing = _manifest(prepared) is None or (
        baseline and not (prepared.root / "baseline.json").exists()
    )
    if missing:
        what, option = (
            ("prepared with its baseline", " --baseline") if baseline else ("prepared", "")
        )
        raise PrepareError(
            f"the SWE repository {spec.key} is not {what} in {prepared.root}; run "
            f"`agentgym swe prepare{option} {spec.name}` once (it downloads the sdist from PyPI)"
        )
    return prepared


def prepare(
    spec: RepoSpec,
    root: Path | None = None,
    *,
    baseline: bool = True,
    source: Path | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> PreparedRepo:
    """Prepare ``spec`` (idempotent; concurrent callers wait for one another).

    ``baseline``: also run the suite (twice) and record its results and call map, which the
        task factory needs; episodes and grading do not (their tests are in the tasks).
    ``source``: a local directory to use instead of downloading the sdist (``--repo``).
    """
    prepared = PreparedRepo(spec, _repo_dir(spec, root))
    prepared.root.mkdir(parents=True, exist_ok=True)
    with exclusive(prepared.root.parent / f".{spec.key}.lock"):
        manifest = _manifest(prepared)
        if manifest is None:
            started = time.monotonic()
            (prepared.root / "baseline.json").unlink(missing_ok=True)
            tree = _unpack(spec, prepared.root, source, log)
            commit = _commit(tree, prepared.git_dir)
            _build_venv(spec, prepared.venv, log)
            manifest = {
                "format": FORMAT,
                "name": spec.name,
                "version": spec.version,
                "sha256": spec.sha256,
                "base_commit": commit,
                "python": sys.version.split()[0],
                "spec": dataclasses.asdict(spec),
                "seconds": round(time.monotonic() - started, 1),
            }
            manifest["interpreter"] = test_python()
            _write_atomic(prepared.root / "manifest.json", json.dumps(manifest, indent=2))
            log(f"{spec.key}: prepared in {manifest['seconds']} s")
        elif manifest.get("interpreter") != test_python():
            # Built on another interpreter (an older agentgym, another machine's layout): the
            # test environment is rebuilt; the tree, commit and baseline stay.
            _build_venv(spec, prepared.venv, log)
            manifest["interpreter"] = test_python()
            _write_atomic(prepared.root / "manifest.json", json.dumps(manifest, indent=2))
        if baseline and not (prepared.root / "baseline.json").exists():
            started = time.monotonic()
            results = _baseline(PreparedRepo(spec, prepared.root), log)
            _write_atomic(prepared.root / "baseline.json", json.dumps(results))
            log(
                f"{spec.key}: {len(results['passing'])} of {len(results['outcomes'])} tests "
                f"pass (baseline in {time.monotonic() - started:.1f} s)"
            )
    return PreparedRepo(spec, prepared.root)


def is_prepared(spec: RepoSpec, root: Path | None = None) -> bool:
    """Whether ``spec`` is prepared (its steps 1-3 done): :func:`prepare` will not build it."""
    return _manifest(PreparedRepo(spec, _repo_dir(spec, root))) is not None


def total_line(
    repos: Sequence[PreparedRepo], built: int, seconds: float, tasks: Path | None = None
) -> str:
    """The line ``agentgym swe prepare`` ends with: how many repositories are ready (``built``
    of them just now), in how long, the room they take, and which tasks of ``tasks`` (the
    shipped ``swe-v0`` file by default) they make runnable, by split."""
    tasks = tasks or DEFAULT_TASKS
    names = {repo.spec.name for repo in repos}
    by_split = Counter(i.split for i in load_instances(tasks) if i.repo in names)
    runnable = ", ".join(f"{count} {split}" for split, count in sorted(by_split.items()))
    where = {str(repo.root.parent) for repo in repos}
    plural = "repository" if len(repos) == 1 else "repositories"
    return (
        f"total: {len(repos)} {plural} ready ({built} prepared now, "
        f"{len(repos) - built} already) in {_duration(seconds)}; "
        f"{_size(sum(disk_usage(repo.root) for repo in repos))} on disk in "
        f"{', '.join(sorted(where))}; {tasks.stem} tasks they run: {runnable or 'none'}"
    )


def disk_usage(path: Path) -> int:
    """The bytes the files under ``path`` take on disk, as ``du`` counts them: each file
    once however many hard links it has, links not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:  # removed meanwhile: nothing to count
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{seconds:.1f} s"


def _repo_dir(spec: RepoSpec, root: Path | None) -> Path:
    return (root or cache_dir() / "swe") / spec.key


def _manifest(prepared: PreparedRepo) -> dict[str, Any] | None:
    """The manifest of a complete, current preparation (else None: it is rebuilt)."""
    try:
        manifest: dict[str, Any] = json.loads((prepared.root / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    current = manifest.get("format") == FORMAT and manifest.get("sha256") == prepared.spec.sha256
    return manifest if current else None


def _unpack(spec: RepoSpec, root: Path, source: Path | None, log: Callable[[str], None]) -> Path:
    tree = root / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    if source is not None:
        log(f"{spec.key}: copying {source}")
        shutil.copytree(source, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    else:
        archive = _download(spec, root / "sdist", log)
        with tempfile.TemporaryDirectory(dir=root) as scratch, tarfile.open(archive) as sdist:
            sdist.extractall(scratch, filter="data")
            entries = list(Path(scratch).iterdir())
            if len(entries) != 1 or not entries[0].is_dir():
                raise PrepareError(f"{archive.name} does not hold one top-level directory")
            entries[0].rename(tree)
    for path in [tree, *tree.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o777 if path.is_dir() else 0o666 | (path.stat().st_mode & 0o111))
    return tree


def _download(spec: RepoSpec, target: Path, log: Callable[[str], None]) -> Path:
    found = sorted(target.glob("*.tar.gz"))
    if found:
        return found[0]
    log(f"{spec.key}: downloading the sdist from PyPI")
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as requirement:
        requirement.write(spec.requirement_line() + "\n")
        requirement.flush()
        _run(
            [
                *(sys.executable, "-m", "pip", "download", "-q", "--no-deps"),
                *("--no-binary", ":all:", "--require-hashes", "-r", requirement.name),
                *("-d", str(target)),
            ],
            f"downloading {spec.name}=={spec.version}",
        )
    found = sorted(target.glob("*.tar.gz"))
    if not found:
        raise PrepareError(f"pip downloaded no .tar.gz sdist of {spec.key} into {target}")
    return found[0]


def _commit(tree: Path, git_dir: Path) -> str:
    """Commit ``tree`` into the bare repository ``git_dir``; return the commit id."""
    shutil.rmtree(git_dir, ignore_errors=True)
    env = {**os.environ, **GIT_ENV, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(tree)}
    _run(["git", "init", "-q", "--bare", str(git_dir)], "creating the git repository")
    for argv in (
        ["git", "add", "-A", "--force", "."],
        ["git", "commit", "-q", "--no-verify", "-m", "the sdist, unpacked"],
    ):
        _run(argv, "committing the unpacked tree", env=env, cwd=tree)
    return _run(["git", "rev-parse", "HEAD"], "reading the commit", env=env).strip()


@functools.cache
def test_python() -> str:
    """The interpreter test environments are built on.

    The system's ``/usr/bin/python3`` when it is the same Python version as ours: the sandbox
    images have it at the same path, so one test environment serves the bwrap backend (which
    shows the host's ``/usr``) and the docker backend (whose image has its own ``/usr``).
    Otherwise our own base interpreter, which only bwrap can show inside.
    """
    system = "/usr/bin/python3"
    ours = f"{sys.version_info.major}.{sys.version_info.minor}"
    if os.path.exists(system):
        probe = subprocess.run(
            [system, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0 and probe.stdout.strip() == ours:
            return system
    return os.path.join(os.path.realpath(sys.base_prefix), "bin", f"python{ours}")


def _build_venv(spec: RepoSpec, venv: Path, log: Callable[[str], None]) -> None:
    log(f"{spec.key}: building the test environment")
    shutil.rmtree(venv, ignore_errors=True)
    _run([test_python(), "-m", "venv", "--without-pip", str(venv)], "creating the venv")
    python = str(venv / "bin" / "python")
    requirements = [*TEST_REQUIREMENTS, *spec.requirements]
    _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", *requirements],
        f"installing the test requirements {requirements}",
    )
    # A test requirement may depend on the package itself (hypothesis on attrs): an installed
    # copy would be the unbroken source of every task, so it goes; the working copy imports.
    installed = _run(
        [sys.executable, "-m", "pip", "--python", python, "list", "--format=freeze"],
        "listing the venv",
    )
    names = {line.split("==")[0].lower().replace("_", "-") for line in installed.split()}
    if spec.name.lower() in names:
        _run(
            [sys.executable, "-m", "pip", "--python", python, "uninstall", "-q", "-y", spec.name],
            f"removing the installed {spec.name} from the test environment",
        )


def _baseline(prepared: PreparedRepo, log: Callable[[str], None]) -> dict[str, Any]:
    spec = prepared.spec
    log(f"{spec.key}: running its test suite (twice: plain, then traced)")
    with open_workspace(prepared) as box:
        plain = run_tests(box, spec, timeout=1800)
        _check_suite_ran(spec, plain)
        callmap = "/tmp/.agentgym-callmap.json"
        traced = run_tests(box, spec, timeout=3600, callmap=callmap)
        _check_suite_ran(spec, traced)
        calls = json.loads(box.get_file(callmap))
    passing = [n for n, o in plain.outcomes.items() if o.outcome == "passed" and traced.passed(n)]
    return {
        "outcomes": {n: o.outcome for n, o in plain.outcomes.items()},
        "passing": passing,
        "durations": {n: round(o.seconds, 4) for n, o in plain.outcomes.items()},
        "suite_seconds": round(plain.duration, 2),
        "calls": {n: calls.get(n, []) for n in passing},
    }


def _check_suite_ran(spec: RepoSpec, report: TestReport) -> None:
    if report.timed_out or not report.outcomes:
        raise PrepareError(
            f"the test suite of {spec.key} did not run in its sandbox (exit code "
            f"{report.exit_code}{', timed out' if report.timed_out else ''}); pytest said:\n"
            f"{report.output[-3000:]}"
        )


def _run(
    argv: list[str], what: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=900, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PrepareError(f"{what} failed: {error}") from error
    if done.returncode != 0:
        raise PrepareError(f"{what} failed (exit code {done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def _write_atomic(path: Path, text: str) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(text)
    partial.replace(path)


def spec_for_local(
    path: Path, name: str | None = None, tests: tuple[str, ...] = ("tests",)
) -> RepoSpec:
    """A spec for a local repository with a pytest suite (``agentgym swe prepare --repo``):
    its version is a digest of its files, so a changed repository is prepared anew."""
    if not path.is_dir():
        raise UsageError(f"--repo {str(path)!r} is not a directory")
    label = name if name is not None else path.resolve().name
    _check_name(label)
    for test in tests:
        _check_test_path(path, test)
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and ".git" not in p.parts):
        if "__pycache__" in file.parts:
            continue
        try:
            data = file.read_bytes()
        except OSError as error:
            raise UsageError(f"--repo {path}: cannot read {file}: {error.strerror}") from None
        digest.update(file.relative_to(path).as_posix().encode() + b"\0" + data)
    return RepoSpec(
        name=label,
        version=f"local-{digest.hexdigest()[:12]}",
        sha256=digest.hexdigest(),
        url=f"local/{label}",
        split="test",
        tests=tests,
    )


def _check_name(name: str) -> None:
    """A local repository's name becomes a folder of the cache (``<name>-<version>``) and
    the ``repo`` of its tasks: a plain name, not a catalogue repository's."""
    if not NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} cannot name a repository (from --name, or the folder's name): use "
            f"letters, digits, '.', '_' and '-', starting and ending with a letter or digit"
        )
    if any(spec.name == name for spec in CATALOGUE):
        raise UsageError(
            f"{name!r} is the name of a catalogue repository; give the local one another --name"
        )


def _check_test_path(repo: Path, test: str) -> None:
    """A test path is a path inside the repository that exists there."""
    pure = PurePosixPath(test)
    if not test or pure.is_absolute() or ".." in pure.parts:
        raise UsageError(
            f"--tests {test!r} is not a path inside the repository (test paths are relative "
            f"to it, without '..')"
        )
    if not (repo / test).exists():
        raise UsageError(f"--tests {test!r}: there is no {test} in {repo}")


def find_spec(name: str, root: Path | None = None) -> RepoSpec:
    """The spec of repository ``name``: the catalogue's, or that of a local repository
    prepared under ``root`` (the newest, if it was prepared more than once)."""
    try:
        return repo_spec(name)
    except UsageError:
        pass
    found = []
    for manifest_path in (root or cache_dir() / "swe").glob("*/manifest.json"):
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError):
            continue
        if manifest.get("name") == name and isinstance(manifest.get("spec"), dict):
            found.append((manifest_path.stat().st_mtime, manifest["spec"]))
    if not found:
        raise UsageError(
            f"no SWE repository {name!r}: not in the catalogue, and no local repository of "
            f"that name is prepared (agentgym swe prepare --repo PATH --name {name})"
        )
    fields = max(found, key=lambda item: item[0])[1]
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    return RepoSpec(**values)
