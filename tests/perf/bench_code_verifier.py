"""Benchmark: what sandboxed code verification costs per submission, against a raw subprocess.

Not a test (these machines are noisy). One submission is a built-in task's reference program
and its hidden tests (``--task``, default ``medium`` seed 0: 14 tests). Measured side by side
in one process, each the median over ``--rounds`` rounds in which the order of the variants
alternates:

* ``raw subprocess``: the same judge (:data:`agentgym.verifiers.code.HARNESS`), the same input
  and the same reading of its result, run by ``subprocess.run`` on the host in a temporary
  directory (no isolation, no limits);
* ``sandboxed, fresh``: :func:`~agentgym.verifiers.code.verify_code` as the envs call it, a new
  sandbox made and closed per submission;
* ``sandboxed, pool``: ``verify_code(..., sandbox=SandboxPool(...))``, a fresh sandbox handed
  out by a warm pool.

    python tests/perf/bench_code_verifier.py [--rounds N] [--repeat N] [--task LEVEL/SEED]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from agentgym.core import Verdict
from agentgym.envs.reasoning.code_tasks import generate
from agentgym.sandbox import ExecResult, SandboxPool
from agentgym.verifiers.code import (
    CodeTests,
    code_sandbox_spec,
    judge_argv,
    judge_input,
    read_judge,
    verify_code,
)


def raw_verify(program: str, tests: CodeTests, timeout: float = 10.0) -> Verdict:
    """The judge in a plain host subprocess: what verification costs without a sandbox."""
    nonce = secrets.token_hex(16)
    stdin = judge_input(program, tests, nonce, timeout, purge=False)
    with tempfile.TemporaryDirectory() as work:
        started = time.monotonic()
        done = subprocess.run(
            judge_argv(sys.executable), input=stdin.encode(), capture_output=True, cwd=work
        )
    result = ExecResult(
        done.stdout, done.stderr, done.returncode, False, time.monotonic() - started, False
    )
    return read_judge(tests, result, nonce, timeout).verdict()


def seconds(call: Callable[[], Verdict], repeat: int) -> float:
    """Median wall seconds of one call over ``repeat`` calls (each must pass)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        verdict = call()
        times.append(time.perf_counter() - started)
        assert verdict.passed, verdict.details
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=10, help="submissions per variant per round")
    parser.add_argument("--task", default="medium/0", help="LEVEL/SEED of a built-in task")
    args = parser.parse_args()
    level, seed = args.task.split("/")
    problem = generate(level, int(seed))
    program, tests = problem.reference, problem.hidden
    pool = SandboxPool(code_sandbox_spec(), size=2)
    variants: dict[str, Callable[[], Verdict]] = {
        "raw subprocess": lambda: raw_verify(program, tests),
        "sandboxed, fresh": lambda: verify_code(program, tests),
        "sandboxed, pool": lambda: verify_code(program, tests, sandbox=pool),
    }
    for call in variants.values():  # warm imports and the backend probe
        call()
    rows: dict[str, list[float]] = {}
    for round_number in range(args.rounds):
        names = list(variants)
        if round_number % 2:
            names.reverse()
        measured = {name: seconds(variants[name], args.repeat) for name in names}
        raw = measured["raw subprocess"]
        for name, value in measured.items():
            rows.setdefault(f"{name} (ms)", []).append(value * 1e3)
        rows.setdefault("fresh / raw", []).append(measured["sandboxed, fresh"] / raw)
        rows.setdefault("pool / raw", []).append(measured["sandboxed, pool"] / raw)
    pool.close()
    print(
        f"{problem.entry_point} ({args.task}): {len(tests)} hidden tests; median of "
        f"{args.rounds} rounds of {args.repeat} submissions per variant"
    )
    for name, values in rows.items():
        print(f"  {name:<24} {statistics.median(values):10.3f}")


if __name__ == "__main__":
    main()
