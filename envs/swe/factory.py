"""The task factory: bugs injected into real code, kept only when the real tests catch them.

SWE-smith's recipe, offline on one machine. For a prepared repository
(:mod:`agentgym.envs.swe.prepare`, with its baseline):

1. every single-site mutation of every function of the package
   (:func:`agentgym.envs.swe.mutate.find_mutations`) that some passing test calls (the
   baseline's call map says which);
2. candidates drawn in a seeded order, each run for real in a sandbox against the tests that
   call its function; kept only if at least one of them now fails (FAIL_TO_PASS) and the run
   finished in time. The tests that call the function and still pass are PASS_TO_PASS:
   the fix must not break them;
3. harder tasks combine two or three kept bugs (two in one file: ``medium``; three, or two
   files: ``hard``), run again, kept under the same rule;
4. each kept bug becomes an :class:`~agentgym.envs.swe.instances.SWEInstance`: its patch,
   the reverse patch as the oracle, and a problem statement written from the failing tests'
   names, assertion messages and the test-side lines of their tracebacks — never from the
   change itself.

Tasks are reproducible: the repositories are pinned by hash and every choice comes from the
seed. ``agentgym swe factory`` runs it and writes JSON Lines.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from agentgym.envs.swe.instances import SWEInstance
from agentgym.envs.swe.mutate import Mutation, apply, find_mutations
from agentgym.envs.swe.patches import make_patch
from agentgym.envs.swe.repos import PreparedRepo
from agentgym.envs.swe.testrun import TestReport, run_tests
from agentgym.envs.swe.workspace import open_workspace, write_files
from agentgym.sandbox import Sandbox

__all__ = ["Bug", "FactoryStats", "make_tasks", "problem_statement", "source_files"]

MAX_FAIL_TO_PASS = 40
"""A bug that breaks more tests than this is too blunt to be a task (an import error)."""
MAX_PASS_TO_PASS = 200
"""PASS_TO_PASS is cut to this many (evenly through the suite) to keep grading quick."""
MAX_TESTS_RUN = 400
"""A function called by more tests than this is validated on this many of them (evenly)."""
MIN_TIMEOUT = 10.0
LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Bug:
    """A validated bug: its mutations (sites in one or more files) and what it breaks."""

    mutations: tuple[tuple[str, Mutation], ...]  # (path, mutation)
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    report: TestReport = field(repr=False, compare=False)

    @property
    def files(self) -> set[str]:
        return {path for path, _ in self.mutations}

    @property
    def difficulty(self) -> str:
        if len(self.mutations) == 1:
            return "easy"
        if len(self.mutations) == 2 and len(self.files) == 1:
            return "medium"
        return "hard"


@dataclass
class FactoryStats:
    """What a factory run did, for its log and the docs' throughput figure."""

    candidates: int = 0
    kept: int = 0
    seconds: float = 0.0
    rejected: dict[str, int] = field(default_factory=dict)

    def reject(self, why: str) -> None:
        self.rejected[why] = self.rejected.get(why, 0) + 1

    @property
    def per_minute(self) -> float:
        return 60.0 * self.kept / self.seconds if self.seconds else 0.0


def source_files(prepared: PreparedRepo) -> list[str]:
    """The package's Python files (under its import roots), tests and build files left out."""
    tree = prepared.tree
    tests = [PurePosixPath(t) for t in prepared.spec.tests]
    found = []
    for root in prepared.spec.import_roots:
        for path in sorted((tree / root).rglob("*.py")):
            relative = PurePosixPath(path.relative_to(tree).as_posix())
            if _is_test_or_build(relative, tests):
                continue
            found.append(str(relative))
    return found


def _is_test_or_build(path: PurePosixPath, tests: Sequence[PurePosixPath]) -> bool:
    if any(path == t or t in path.parents for t in tests):
        return True
    if path.name in ("conftest.py", "setup.py", "noxfile.py", "conf.py", "tasks.py"):
        return True
    parts = set(path.parts)
    return bool(parts & {"tests", "test", "testing", "docs", "doc", "examples", "benchmarks"}) or (
        path.name.startswith("test_") or path.name.endswith("_test.py")
    )


def make_tasks(
    prepared: PreparedRepo,
    counts: dict[str, int],
    *,
    seed: int = 0,
    workers: int = 2,
    log: Callable[[str], None] = lambda line: None,
) -> tuple[list[SWEInstance], FactoryStats]:
    """Up to ``counts[level]`` validated tasks per level from ``prepared``, deterministic
    for a seed (given the same repository and test results). ``workers`` sandboxes validate
    candidates side by side (results are taken in candidate order, so the tasks do not
    depend on which finished first, but on the number of workers)."""
    rng = random.Random(f"{prepared.spec.key}:{seed}")
    stats = FactoryStats()
    started = time.monotonic()
    sources = {path: prepared.read(path) for path in source_files(prepared)}
    candidates = _interleaved(list(_candidates(prepared, sources)), rng)
    tasks: list[SWEInstance] = []
    singles: list[Bug] = []
    used_functions: set[tuple[str, str]] = set()
    wanted_singles = counts.get("easy", 0) + 3 * (counts.get("medium", 0) + counts.get("hard", 0))
    with contextlib.ExitStack() as stack:
        boxes = [stack.enter_context(open_workspace(prepared)) for _ in range(workers)]
        with ThreadPoolExecutor(workers) as pool_of_runs:
            for batch in _batches(candidates, used_functions, workers):
                if len(singles) >= wanted_singles:
                    break
                stats.candidates += len(batch)
                found = pool_of_runs.map(
                    lambda job: _validate(job[0], prepared, sources, (job[1],)),
                    zip(boxes, batch, strict=False),
                )
                for (path, mutation), bug in zip(batch, list(found), strict=True):
                    if isinstance(bug, str):
                        stats.reject(bug)
                    elif len(singles) < wanted_singles:
                        singles.append(bug)
                        used_functions.add((path, mutation.function))
                        log(
                            f"{prepared.spec.key}: kept {path}:{mutation.lineno} "
                            f"{mutation.operator}"
                        )
        box = boxes[0]
        easy = singles[: counts.get("easy", 0)]
        tasks += [_instance(prepared, sources, bug) for bug in easy]
        pool = singles[len(easy) :]
        for level in ("medium", "hard"):
            for bug in _combinations(box, prepared, sources, pool, level, counts, rng, stats):
                tasks.append(_instance(prepared, sources, bug))
    stats.kept = len(tasks)
    stats.seconds = time.monotonic() - started
    return tasks, stats


def _batches(
    candidates: list[tuple[str, Mutation]], used: set[tuple[str, str]], size: int
) -> Iterator[list[tuple[str, Mutation]]]:
    """Candidates in order, ``size`` at a time, none of a function already used (the caller
    adds to ``used`` between batches) and no two of one function in a batch."""
    batch: list[tuple[str, Mutation]] = []
    for path, mutation in candidates:
        key = (path, mutation.function)
        if key in used or any((p, m.function) == key for p, m in batch):
            continue
        batch.append((path, mutation))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _candidates(prepared: PreparedRepo, sources: dict[str, str]) -> Iterator[tuple[str, Mutation]]:
    for path, source in sources.items():
        try:
            mutations = find_mutations(source)
        except (SyntaxError, ValueError, RecursionError):
            continue  # a file our Python cannot parse holds no tasks
        for mutation in mutations:
            if prepared.callers.get((path, mutation.function)):
                yield path, mutation


def _interleaved(
    candidates: list[tuple[str, Mutation]], rng: random.Random
) -> list[tuple[str, Mutation]]:
    """The candidates shuffled within each operator, then taken from the operators in turn:
    every kind of bug is tried early (``wrong_variable`` alone has more sites than the rest)."""
    by_operator: dict[str, list[tuple[str, Mutation]]] = {}
    for candidate in candidates:
        by_operator.setdefault(candidate[1].operator, []).append(candidate)
    queues = [by_operator[name] for name in sorted(by_operator)]
    for queue in queues:
        rng.shuffle(queue)
    order: list[tuple[str, Mutation]] = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop())
    return order


def _callers(prepared: PreparedRepo, mutations: Sequence[tuple[str, Mutation]]) -> list[str]:
    seen: dict[str, None] = {}
    for path, mutation in mutations:
        for nodeid in prepared.callers.get((path, mutation.function), ()):
            seen[nodeid] = None
    return list(seen)


def _mutated_files(
    sources: dict[str, str], mutations: Sequence[tuple[str, Mutation]]
) -> dict[str, str]:
    by_file: dict[str, list[Mutation]] = {}
    for path, mutation in mutations:
        by_file.setdefault(path, []).append(mutation)
    return {path: apply(sources[path], found) for path, found in by_file.items()}


def _validate(
    box: Sandbox,
    prepared: PreparedRepo,
    sources: dict[str, str],
    mutations: tuple[tuple[str, Mutation], ...],
) -> Bug | str:
    """The bug the mutations make, run for real; or why it is not one."""
    try:
        files = _mutated_files(sources, mutations)
    except ValueError:
        return "overlapping or unparsable"
    tests = _evenly(_callers(prepared, mutations), MAX_TESTS_RUN)
    durations = prepared.durations()
    timeout = MIN_TIMEOUT + 3 * sum(durations.get(t, 1.0) for t in tests)
    write_files(box, files)
    try:
        report = run_tests(box, prepared.spec, tests, timeout=timeout)
    finally:
        write_files(box, {path: sources[path] for path in files})
    if report.timed_out or not report.junit_found:
        return "timed out or crashed"
    failing = [t for t in tests if not report.passed(t)]
    if not failing:
        return "no test fails"
    if len(failing) > MAX_FAIL_TO_PASS:
        return "too many tests fail"
    still = [t for t in tests if report.passed(t)]
    return Bug(mutations, tuple(failing), tuple(_evenly(still, MAX_PASS_TO_PASS)), report)


def _combinations(
    box: Sandbox,
    prepared: PreparedRepo,
    sources: dict[str, str],
    pool: list[Bug],
    level: str,
    counts: dict[str, int],
    rng: random.Random,
    stats: FactoryStats,
) -> Iterator[Bug]:
    """Bugs of ``level`` made by combining validated single bugs (each used once)."""
    wanted, made, tries = counts.get(level, 0), 0, 0
    while made < wanted and tries < 20 * max(wanted, 1) and len(pool) >= 2:
        tries += 1
        size = 2 if level == "medium" else rng.choice((2, 3))
        picked = _pick(pool, size, same_file=(level == "medium"), rng=rng)
        if picked is None:
            if level == "hard" and size == 3:
                continue
            break
        mutations = tuple(m for bug in picked for m in bug.mutations)
        if level == "hard" and len(mutations) == 2 and len({p for p, _ in mutations}) == 1:
            continue
        stats.candidates += 1
        bug = _validate(box, prepared, sources, mutations)
        if isinstance(bug, str):
            stats.reject(bug)
        elif bug.difficulty == level:
            for used in picked:
                pool.remove(used)
            made += 1
            yield bug


def _pick(pool: list[Bug], size: int, *, same_file: bool, rng: random.Random) -> list[Bug] | None:
    if same_file:
        by_file: dict[str, list[Bug]] = {}
        for bug in pool:
            by_file.setdefault(next(iter(bug.files)), []).append(bug)
        groups = [bugs for bugs in by_file.values() if len(bugs) >= size]
        if not groups:
            return None
        group = groups[rng.randrange(len(groups))]
        return rng.sample(group, size)
    if len(pool) < size:
        return None
    return rng.sample(pool, size)


def _evenly(items: list[str], limit: int) -> list[str]:
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def _instance(prepared: PreparedRepo, sources: dict[str, str], bug: Bug) -> SWEInstance:
    buggy = _mutated_files(sources, bug.mutations)
    bug_patch = make_patch({path: (sources[path], text) for path, text in buggy.items()})
    fix = make_patch({path: (text, sources[path]) for path, text in buggy.items()})
    digest = hashlib.sha256(bug_patch.encode()).hexdigest()[:10]
    spec = prepared.spec
    return SWEInstance(
        instance_id=f"{spec.name}.{digest}",
        repo=spec.name,
        version=spec.version,
        base_commit=prepared.base_commit,
        bug_patch=bug_patch,
        patch=fix,
        problem_statement=problem_statement(spec.name, bug.fail_to_pass, bug.report),
        fail_to_pass=bug.fail_to_pass,
        pass_to_pass=bug.pass_to_pass,
        split=spec.split,
        difficulty=bug.difficulty,
        mutations=tuple(
            {
                "path": path,
                "function": m.function,
                "operator": m.operator,
                "line": m.lineno,
                "description": m.description,
            }
            for path, m in bug.mutations
        ),
    )


_FRAME = re.compile(r"^(\S+?\.py):(\d+): in (\S+)")
SHOWN_TESTS = 3


def problem_statement(repo: str, failing: Sequence[str], report: TestReport) -> str:
    """An issue written from the failing tests: which fail, what they assert, where in the
    tests — without the package's own frames, so the report says what is wrong, not where
    the change is."""
    lines = [
        f"Some behaviour of {repo} is broken: {len(failing)} of its tests fail.",
        "",
        "Failing tests:",
        *(f"- {nodeid}" for nodeid in failing[:20]),
    ]
    if len(failing) > 20:
        lines.append(f"- ... and {len(failing) - 20} more")
    for nodeid in failing[:SHOWN_TESTS]:
        outcome = report.outcomes.get(nodeid)
        if outcome is None:
            continue
        lines += ["", f"{nodeid}:", "```", *_test_side(outcome.text or outcome.message), "```"]
    lines += [
        "",
        "Fix the package so that these tests pass, without breaking other tests. The tests are "
        "right; changes to them are not counted.",
    ]
    return "\n".join(lines)


def _test_side(traceback: str, limit: int = 25) -> list[str]:
    """The lines of a short traceback that belong to test files, and the error lines."""
    kept: list[str] = []
    keep = True
    for line in traceback.splitlines():
        frame = _FRAME.match(line)
        if frame:
            path = PurePosixPath(frame.group(1))
            keep = path.name.startswith("test") or "tests" in path.parts or "test" in path.parts
        if line.startswith("E ") or (keep and line.strip()):
            kept.append(line[:300])
    return kept[:limit] or ["(no details)"]
