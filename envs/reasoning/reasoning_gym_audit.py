"""The audit behind :mod:`~agentgym.envs.reasoning.reasoning_gym_ids`' tables: every dataset
of the installed reasoning-gym at every level of its curriculum, generated and scored by its own
scorer, each level in its own process; prints the tables to paste into that module::

    python -m agentgym.envs.reasoning.reasoning_gym_audit [--json audit.json]

A module of its own because it uses the env module (:func:`~.reasoning_gym.audit`), which
imports the ids module for its tables: the ids module stays light and free of reasoning-gym.
"""

from __future__ import annotations

from typing import Any

from agentgym.envs.reasoning.reasoning_gym import audit, fingerprints

__all__ = ["main"]

_MODULE = "agentgym.envs.reasoning.reasoning_gym_audit"


def main(argv: list[str] | None = None) -> None:
    """Audit every dataset of the installed reasoning-gym; print this module's tables.

    Each (dataset, level) is audited in its own process, killed after ``--timeout`` seconds (a
    generator can run for minutes): every level of the dataset's curriculum, and its default
    config when it has no curriculum or no level passes.
    """
    import argparse
    import json

    from reasoning_gym.factory import CURRICULA
    from reasoning_gym.factory import DATASETS as registered

    from agentgym.clihelp import HelpFormatter

    parser = argparse.ArgumentParser(
        prog=f"python -m {_MODULE}", description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=10, help="items audited per split")
    parser.add_argument("--jobs", type=int, default=2, help="audits run at once")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per level")
    parser.add_argument("--only", default="", help="comma-separated datasets (default: all)")
    parser.add_argument("--json", default="", help="also write every level's audit here")
    parser.add_argument("--fingerprint", nargs=2, help=argparse.SUPPRESS)  # LEVELS.json OUT.json
    args = parser.parse_args(argv)
    if args.fingerprint:
        levels_path, out_path = args.fingerprint
        _write_fingerprints(levels_path, out_path, args.tasks)
        return

    names = sorted(args.only.split(",") if args.only else registered)
    jobs = [
        (name, level)
        for name in names
        for level in (("easy", "medium", "hard") if name in CURRICULA else ("default",))
    ]
    results = _run_audits(jobs, args.tasks, args.jobs, args.timeout)
    fallback = [
        (name, "default")
        for name in names
        if name in CURRICULA and all(r["problems"] for r in results[name])
    ]
    for name, found in _run_audits(fallback, args.tasks, args.jobs, args.timeout).items():
        results[name].extend(found)
    passing = [(n, r["difficulty"]) for n, rs in results.items() for r in rs if not r["problems"]]
    for (name, level), problem in _hash_seed_problems(passing, args.tasks).items():
        next(r for r in results[name] if r["difficulty"] == level)["problems"].append(problem)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    _print_tables(results)


def _run_audits(
    jobs: list[tuple[str, str]], tasks: int, parallel: int, timeout: float
) -> dict[str, list[dict[str, Any]]]:
    """Run :func:`_audit_level` for each job in its own process; a late one is killed."""
    import multiprocessing
    import sys
    import time
    from multiprocessing.connection import Connection
    from multiprocessing.context import SpawnProcess

    context = multiprocessing.get_context("spawn")
    results: dict[str, list[dict[str, Any]]] = {}
    pending = list(jobs)
    running: list[tuple[str, str, SpawnProcess, Connection, float]] = []
    while pending or running:
        while pending and len(running) < parallel:
            name, level = pending.pop(0)
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_audit_level, args=(name, level, tasks, sender))
            process.start()
            sender.close()
            running.append((name, level, process, receiver, time.monotonic()))
        for job in list(running):
            name, level, process, receiver, started = job
            found: dict[str, Any] | None = None
            if receiver.poll(0.05):
                try:
                    found = receiver.recv()
                except EOFError:
                    found = {"difficulty": level, "problems": ["the audit process died"]}
            elif not process.is_alive():
                found = {"difficulty": level, "problems": ["the audit process died"]}
            elif time.monotonic() - started > timeout:
                process.kill()
                found = {"difficulty": level, "problems": [f"the audit took over {timeout:g}s"]}
            if found is None:
                continue
            process.join()
            receiver.close()
            running.remove(job)
            results.setdefault(name, []).append(found)
            print(f"{name} {level}: {found['problems'] or 'ok'}", file=sys.stderr, flush=True)
    order = {"easy": 0, "medium": 1, "hard": 2, "default": 3}
    for audits in results.values():
        audits.sort(key=lambda r: order.get(str(r["difficulty"]), 9))
    return results


def _hash_seed_problems(levels: list[tuple[str, str]], tasks: int) -> dict[tuple[str, str], str]:
    """Levels whose questions change with Python's hash seed (set order), so that a task id
    would name another question in another process: each level's items are fingerprinted in
    two processes with different ``PYTHONHASHSEED``."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    runs = []
    with tempfile.TemporaryDirectory() as folder:
        wanted = os.path.join(folder, "levels.json")
        with open(wanted, "w") as out:
            json.dump(levels, out)
        for seed in ("1", "2"):
            found = os.path.join(folder, f"fingerprints-{seed}.json")
            subprocess.run(
                [sys.executable, "-m", _MODULE, "--fingerprint", wanted, found, f"--tasks={tasks}"],
                env={**os.environ, "PYTHONHASHSEED": seed},
                check=True,
                stdout=subprocess.DEVNULL,
            )
            with open(found) as fingerprints:
                runs.append(json.load(fingerprints))
    problems = {}
    for name, level in levels:
        first, second = (run[f"{name}/{level}"] for run in runs)
        questions = sum(a[0] != b[0] for a, b in zip(first, second, strict=True))
        answers = sum(a[1] != b[1] for a, b in zip(first, second, strict=True))
        if questions:
            problems[(name, level)] = (
                f"{questions} of {len(first)} questions differ between processes with different "
                f"hash seeds: a task id would name another question in another process"
            )
        elif answers:  # the question is the same; whether any answer scores is for a person
            print(f"# {name} {level}: {answers} gold answers depend on the hash seed", flush=True)
    return problems


def _write_fingerprints(levels_path: str, out_path: str, tasks: int) -> None:
    import json

    with open(levels_path) as levels:
        wanted = json.load(levels)
    found = {f"{name}/{level}": fingerprints(name, level, tasks) for name, level in wanted}
    with open(out_path, "w") as out:
        json.dump(found, out)


def _audit_level(name: str, level: str, tasks: int, sender: object) -> None:
    from dataclasses import asdict

    try:
        found = asdict(audit(name, level, tasks))
    except Exception as error:
        found = {"difficulty": level, "problems": [f"the audit raised {error!r}"]}
    sender.send(found)  # type: ignore[attr-defined]


def _print_tables(results: dict[str, list[dict[str, Any]]]) -> None:
    datasets, fewer, excluded, excluded_levels, executes = [], {}, {}, {}, []
    for name, found in sorted(results.items()):
        good = tuple(str(level["difficulty"]) for level in found if not level["problems"])
        bad = {str(level["difficulty"]): "; ".join(map(str, level["problems"])) for level in found}
        if any(level.get("executes_answer") for level in found):
            executes.append(name)
        if not good:
            excluded[name] = " | ".join(f"{k}: {v}" for k, v in bad.items())
            continue
        datasets.append(name)
        if good != ("easy", "medium", "hard"):
            fewer[name] = good
        dropped = {k: v for k, v in bad.items() if v and k != "default"}
        if dropped and good != ("default",):
            excluded_levels[name] = dropped
    print(f"DATASETS: tuple[str, ...] = {tuple(datasets)!r}")
    print(f"_FEWER_LEVELS: dict[str, tuple[str, ...]] = {fewer!r}")
    print(f"EXCLUDED: dict[str, str] = {excluded!r}")
    print(f"EXCLUDED_LEVELS: dict[str, dict[str, str]] = {excluded_levels!r}")
    print(f"# scorers that ran an answer as code (EXECUTES_ANSWER): {executes}")
    print("# dataset level: build s, mean s per task, slowest s, printed to stdout")
    for name, found in sorted(results.items()):
        for level in found:
            if "tasks" in level:
                print(
                    f"# {name} {level['difficulty']}: {level['build_seconds']:.3f} "
                    f"{level['mean_seconds']:.4f} {level['slowest_seconds']:.3f} "
                    f"{level['printed']}"
                )


if __name__ == "__main__":
    main()
