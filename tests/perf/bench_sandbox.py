"""Benchmark: what a sandboxed command costs, as ratios measured side by side in one process.

Not a test (these machines are noisy). Reported, each the median over ``--rounds`` rounds in
which the variants alternate:

* fresh-sandbox ``exec`` of ``true`` vs a raw ``subprocess.run(["true"])`` on the host;
* a persistent-session command vs a fresh-sandbox ``exec`` (goal: session >= 5x faster, a few
  milliseconds or less per command);
* sandbox creation + close per backend;
* pool hand-out (``acquire`` of a ready sandbox) vs creating one;
* with ``--backend docker``: a docker ``exec`` vs a bwrap session command (the cost of a
  container's fresh process tree against the fastest path we have);
* with ``--backend bwrap``: fresh ``exec``, session command and create + close without and
  with the syscall filter and the memory watchdog (issue 16), all four variants alternating in
  each round, and the ratios of each against the variant with neither (goal: the filter adds
  <= 10 % to a fresh exec; a session command stays >= 5x faster than a fresh exec).

    python tests/perf/bench_sandbox.py [--rounds N] [--backend bwrap|docker]

For docker, a daemon that answers is used, or else a private ``dockerd`` is started (and
stopped after) with the base image built if missing, as the test fixtures do.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator

from agentgym.sandbox import SandboxPool, SandboxSpec, create
from agentgym.sandbox.bwrap import BwrapSandbox


class UnfilteredSandbox(BwrapSandbox):
    """bwrap without the syscall filter: only to measure what the filter costs."""

    syscall_filter = False


def seconds(call: Callable[[], object], repeat: int) -> float:
    """Median wall seconds of one call over ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@contextlib.contextmanager
def docker_daemon() -> Iterator[None]:
    """A daemon with the base image: the one that answers, or a private one for the run."""
    from agentgym.sandbox.dockerd import PrivateDaemon, docker_problem
    from agentgym.sandbox.images import ensure_images

    if docker_problem() is None:
        ensure_images(log=lambda line: None)
        yield
        return
    with PrivateDaemon() as daemon:
        os.environ["DOCKER_HOST"] = daemon.url
        ensure_images(log=lambda line: None)
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=30, help="calls per variant per round")
    parser.add_argument("--backend", default="bwrap", choices=["bwrap", "docker"])
    args = parser.parse_args()
    if args.backend == "docker":
        with docker_daemon():
            run(args)
    else:
        run(args)
        hardening(args)


def run(args: argparse.Namespace) -> None:
    spec = SandboxSpec()
    rows: dict[str, list[float]] = {}

    def record(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    box = create(spec, backend=args.backend)
    shell = box.session()
    if args.backend == "docker":
        reference = create(spec, backend="bwrap")
        bwrap_shell = reference.session()
    pool = SandboxPool(spec, size=2, backend=args.backend)
    for _ in range(args.rounds):
        raw = seconds(lambda: subprocess.run(["true"], check=True), args.repeat)
        fresh = seconds(lambda: box.exec(["true"]), args.repeat)
        session = seconds(lambda: shell.run("true"), args.repeat)
        made = seconds(lambda: create(spec, backend=args.backend).close(), 5)

        def hand_out() -> None:
            pool.release(pool.acquire())
            with pool._lock:  # wait (untimed) until the pool is full again
                pool._lock.wait_for(lambda: len(pool._ready) >= pool.size, timeout=30)

        acquire_times = []
        for _ in range(5):
            hand_out()
            started = time.perf_counter()
            got = pool.acquire()
            acquire_times.append(time.perf_counter() - started)
            pool.release(got)
        acquire = statistics.median(acquire_times)
        record("raw subprocess (ms)", raw * 1e3)
        record("fresh-sandbox exec (ms)", fresh * 1e3)
        record("session command (ms)", session * 1e3)
        record("create + close (ms)", made * 1e3)
        record("pool hand-out (ms)", acquire * 1e3)
        record("exec / raw subprocess", fresh / raw)
        record("exec / session (speed-up)", fresh / session)
        record("create / pool hand-out", made / acquire)
        if args.backend == "docker":
            bwrap_session = seconds(lambda: bwrap_shell.run("true"), args.repeat)
            record("bwrap session command (ms)", bwrap_session * 1e3)
            record("docker exec / bwrap session", fresh / bwrap_session)
    shell.close()
    box.close()
    pool.close()
    if args.backend == "docker":
        bwrap_shell.close()
        reference.close()
    print(f"backend {args.backend}, median of {args.rounds} rounds")
    for name, values in rows.items():
        print(f"  {name:<28} {statistics.median(values):10.3f}")


def hardening(args: argparse.Namespace) -> None:
    """What the syscall filter and the memory watchdog cost, side by side in one run."""
    accounted, unaccounted = SandboxSpec(), SandboxSpec().with_limits(memory=None)
    variants = {
        "neither": (UnfilteredSandbox, unaccounted),
        "filter": (BwrapSandbox, unaccounted),
        "watchdog": (UnfilteredSandbox, accounted),
        "both": (BwrapSandbox, accounted),
    }
    boxes = {name: kind(spec) for name, (kind, spec) in variants.items()}
    shells = {name: box.session() for name, box in boxes.items()}
    rows: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for name, (kind, spec) in variants.items():
            box, shell = boxes[name], shells[name]
            fresh = seconds(lambda: box.exec(["true"]), args.repeat)  # noqa: B023
            session = seconds(lambda: shell.run("true"), args.repeat)  # noqa: B023
            made = seconds(lambda: kind(spec).close(), 5)  # noqa: B023
            rows.setdefault(f"{name}: fresh exec (ms)", []).append(fresh * 1e3)
            rows.setdefault(f"{name}: session command (ms)", []).append(session * 1e3)
            rows.setdefault(f"{name}: create + close (ms)", []).append(made * 1e3)
            rows.setdefault(f"{name}: exec / session", []).append(fresh / session)
    for name in variants:
        shells[name].close()
        boxes[name].close()
    medians = {name: statistics.median(values) for name, values in rows.items()}
    print(f"hardening (bwrap), median of {args.rounds} rounds, variants alternating")
    for name, value in medians.items():
        print(f"  {name:<34} {value:10.3f}")
    for name in ("filter", "watchdog", "both"):
        for what in ("fresh exec", "session command", "create + close"):
            ratio = medians[f"{name}: {what} (ms)"] / medians[f"neither: {what} (ms)"]
            print(f"  {name} / neither, {what:<17} {ratio:10.3f}")


if __name__ == "__main__":
    main()
