r"""``agentgym swe``: prepare repositories, make tasks, convert to and from SWE-bench.

    agentgym swe prepare                 # every catalogue repository (download once)
    agentgym swe prepare toolz --baseline
    agentgym swe prepare --repo ./mylib --name mylib --tests tests
    agentgym swe factory toolz --easy 20 --medium 5 --hard 5 --out tasks.jsonl
    agentgym swe list                    # the catalogue and what is prepared
    agentgym swe export tasks.jsonl --mirror ./mirror --out swebench.jsonl
    agentgym swe import swebench.jsonl --checkouts ./repos --out tasks.jsonl \
        --requirement hypothesis==6.170.17
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentgym.errors import UsageError

__all__ = ["add_commands"]


def add_commands(commands: Any) -> None:
    """``agentgym swe`` and its actions."""
    swe = commands.add_parser(
        "swe",
        help="SWE family: prepare repositories, make tasks, SWE-bench formats",
        description=__doc__,
    )
    actions = swe.add_subparsers(title="actions", metavar="ACTION")
    swe.set_defaults(run=lambda _: swe.print_help() or 0)

    prepare = actions.add_parser(
        "prepare", help="download and prepare repositories (offline afterwards)"
    )
    prepare.add_argument("names", nargs="*", help="catalogue names (default: all of them)")
    prepare.add_argument(
        "--baseline",
        action="store_true",
        help="also run each suite and record its results and call map (the factory needs it)",
    )
    prepare.add_argument("--repo", type=Path, help="a local repository with a pytest suite")
    prepare.add_argument(
        "--name", help="the local repository's name (default: its folder's; letters, digits, ._-)"
    )
    prepare.add_argument(
        "--tests", nargs="+", help="the local repository's test paths, inside it (default: tests)"
    )
    prepare.set_defaults(run=_prepare)

    factory = actions.add_parser("factory", help="inject bugs, keep those the tests catch")
    factory.add_argument("names", nargs="+", help="repositories (catalogue or prepared local)")
    for level, default in (("easy", 10), ("medium", 3), ("hard", 3)):
        factory.add_argument(f"--{level}", type=int, default=default, help=f"{level} tasks")
    factory.add_argument(
        "--seed", type=int, default=0, help="seed of the bug injection (same seed, same tasks)"
    )
    factory.add_argument("--out", type=Path, required=True, help="JSON Lines file to write")
    factory.set_defaults(run=_factory)

    listing = actions.add_parser("list", help="the catalogue and what is prepared here")
    listing.set_defaults(run=_list)

    export = actions.add_parser(
        "export", help="write tasks as SWE-bench instances, their starting trees in a git mirror"
    )
    export.add_argument("tasks", type=Path, help="our tasks (JSON Lines of SWE instances)")
    export.add_argument(
        "--mirror",
        type=Path,
        required=True,
        help="git mirror directory: one bare repository per repository (<owner>__<name>.git)",
    )
    export.add_argument("--out", type=Path, required=True, help="SWE-bench JSON Lines to write")
    export.set_defaults(run=_export)

    importing = actions.add_parser(
        "import", help="make tasks of SWE-bench instances, from local checkouts"
    )
    importing.add_argument("instances", type=Path, help="SWE-bench instances (JSON Lines)")
    importing.add_argument(
        "--checkouts",
        type=Path,
        required=True,
        help="a directory with a git clone (<owner>__<name>) or mirror (<owner>__<name>.git) "
        "of each repository",
    )
    importing.add_argument("--out", type=Path, required=True, help="our tasks (JSON Lines)")
    importing.add_argument(
        "--requirement",
        action="append",
        default=[],
        metavar="REQ",
        help="a pinned package the tests need beyond pytest (repeatable)",
    )
    importing.add_argument(
        "--skip-unsupported",
        action="store_true",
        help="leave out instances the grader cannot run (not pytest, renames) instead of failing",
    )
    importing.set_defaults(run=_import)


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _output_file(path: Path, option: str) -> None:
    """Refuse, before any work, an output file that cannot be written (a folder, a missing
    folder, no permission): found only at the end, it would waste the run."""
    if path.is_dir():
        raise UsageError(f"{option} {path} is a folder; give the file to write")
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as error:
        raise UsageError(f"{option} {path} cannot be written: {error.strerror or error}") from None
    if not existed:
        path.unlink()


def _counts(args: argparse.Namespace) -> dict[str, int]:
    counts = {level: getattr(args, level) for level in ("easy", "medium", "hard")}
    for level, count in counts.items():
        if count < 0:
            raise UsageError(f"--{level} {count}: a number of tasks is 0 or more")
    if not any(counts.values()):
        raise UsageError("--easy, --medium and --hard are all 0: there is no task to make")
    return counts


def _unique(names: Sequence[str]) -> None:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise UsageError(f"{', '.join(repeated)} named more than once")


def _prepare(args: argparse.Namespace) -> int:
    from agentgym.envs.swe.prepare import is_prepared, prepare, spec_for_local, total_line
    from agentgym.envs.swe.repos import CATALOGUE, repo_spec

    if args.repo is not None and args.names:
        raise UsageError(
            f"prepare takes catalogue names or --repo, not both ({' '.join(args.names)} and "
            f"--repo {args.repo}); a local repository's name is --name"
        )
    if args.repo is None and (args.name is not None or args.tests is not None):
        option = "--name" if args.name is not None else "--tests"
        raise UsageError(f"{option} goes with --repo PATH (a local repository)")
    started = time.monotonic()
    if args.repo is not None:
        spec = spec_for_local(args.repo, args.name, tuple(args.tests or ("tests",)))
        fresh = not is_prepared(spec)
        local = prepare(spec, baseline=args.baseline, source=args.repo, log=_log)
        print(f"prepared {spec.name} ({spec.version}); tasks name it as repo {spec.name!r}")
        print(total_line([local], int(fresh), time.monotonic() - started))
        return 0
    specs = [repo_spec(name) for name in args.names] if args.names else list(CATALOGUE)
    ready, built = [], 0
    for spec in specs:
        built += not is_prepared(spec)
        ready.append(prepare(spec, baseline=args.baseline, log=_log))
        print(f"{spec.key}: ready in {ready[-1].root}")
    print(total_line(ready, built, time.monotonic() - started))
    return 0


def _factory(args: argparse.Namespace) -> int:
    from agentgym.envs.swe.factory import make_tasks
    from agentgym.envs.swe.instances import save_instances
    from agentgym.envs.swe.prepare import find_spec, prepare

    counts = _counts(args)
    _unique(args.names)
    specs = [find_spec(name) for name in args.names]
    _output_file(args.out, "--out")
    everything = []
    for spec in specs:
        prepared = prepare(spec, baseline=True, log=_log)
        tasks, stats = make_tasks(prepared, counts, seed=args.seed, log=_log)
        everything += tasks
        print(
            f"{prepared.spec.key}: {stats.kept} tasks from {stats.candidates} candidates in "
            f"{stats.seconds:.0f} s ({stats.per_minute:.1f} validated tasks per minute); "
            f"rejected: {stats.rejected}"
        )
    save_instances(everything, args.out)
    print(f"wrote {len(everything)} tasks to {args.out}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from agentgym.envs.swe.prepare import PrepareError, prepared_repo
    from agentgym.envs.swe.repos import CATALOGUE

    for spec in CATALOGUE:
        try:
            prepared_repo(spec)
            state = "prepared"
        except PrepareError:
            state = "not prepared"
        print(f"{spec.key:28} {spec.split:6} {spec.url:40} {state}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from agentgym.envs.swe.instances import load_instances
    from agentgym.envs.swe.swebench import export_swebench, save_swebench

    instances = load_instances(args.tasks)
    if args.mirror.exists() and not args.mirror.is_dir():
        raise UsageError(f"--mirror {args.mirror} is a file; give a folder for the git mirror")
    _output_file(args.out, "--out")
    records = export_swebench(instances, args.mirror, log=_log)
    save_swebench(records, args.out)
    print(
        f"wrote {len(records)} SWE-bench instances to {args.out}; "
        f"their base commits are in {args.mirror}"
    )
    return 0


def _import(args: argparse.Namespace) -> int:
    from agentgym.envs.swe.instances import save_instances
    from agentgym.envs.swe.swebench import import_swebench, load_swebench

    records = load_swebench(args.instances)
    if not args.checkouts.is_dir():
        raise UsageError(f"--checkouts {args.checkouts} is not a folder (of git checkouts)")
    _output_file(args.out, "--out")
    instances = import_swebench(
        records,
        args.checkouts,
        requirements=args.requirement,
        skip_unsupported=args.skip_unsupported,
        log=_log,
    )
    save_instances(instances, args.out)
    print(
        f"wrote {len(instances)} tasks to {args.out}; run them with "
        f"agentgym.make('swe/Repair-v1', tasks={str(args.out)!r})"
    )
    return 0
