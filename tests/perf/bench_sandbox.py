"""Benchmark: what a sandboxed command costs, as ratios measured side by side in one process.

Not a test (these machines are noisy). Reported, each the median over ``--rounds`` rounds in
which the variants alternate:

* fresh-sandbox ``exec`` of ``true`` vs a raw ``subprocess.run(["true"])`` on the host;
* a persistent-session command vs a fresh-sandbox ``exec`` (goal: session >= 5x faster, a few
  milliseconds or less per command);
* sandbox creation + close per backend;
* pool hand-out (``acquire`` of a ready sandbox) vs creating one;
* with ``--backend docker``: a docker ``exec`` vs a bwrap session command (the cost of a
  container's fresh process tree against the fastest path we have).

With ``--backend bwrap`` two more parts (issues 16 and 28):

* hardening: fresh ``exec``, session command and create + close without and with the syscall
  filter and the memory watchdog, and a control identical to the variant with neither. The
  variants take turns call by call, in a new random order each time, so a change in the
  machine's load falls on all of them alike (taking turns by batches of 30 calls showed 20-37 %
  "costs" at load 3-8 that the control shows too). Each variant's median is set against the
  variant with neither; the control's ratio is the noise floor of the run. Goal: the filter
  adds <= 10 % to a fresh exec; a session command stays >= 5x faster than a fresh exec.
* at once: ``--at-once`` sandboxes (each size), each driven by a thread of its own running
  ``true`` ``--burst`` times, all started together: execs per second without the filter,
  with it (the spawner pool of :mod:`agentgym.sandbox.syscalls`), and with it through a single
  filtered thread (the design before issue 28). "spawner busy" is the mean number of spawns in
  progress in filtered threads (queueing excluded): near 1 with one thread, that thread is
  the bottleneck. Trials alternate the variants in a random order.

    python tests/perf/bench_sandbox.py [--rounds N] [--backend bwrap|docker] [--at-once 1,4,8]

For docker, a daemon that answers is used, or else a private ``dockerd`` is started (and
stopped after) with the base image built if missing, as the test fixtures do.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import random
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from agentgym.sandbox import SandboxPool, SandboxSpec, create, syscalls
from agentgym.sandbox.bwrap import BwrapSandbox


class UnfilteredSandbox(BwrapSandbox):
    """bwrap without the syscall filter: only to measure what the filter costs."""

    syscall_filter = False


class SpawnerClock:
    """Seconds spent spawning inside filtered threads (the pool's and the single one's)."""

    def __init__(self) -> None:
        self.busy = 0.0
        self._lock = threading.Lock()
        self._popen = syscalls._popen

    def popen(self, argv: list[str], options: dict[str, Any]) -> subprocess.Popen[bytes]:
        started = time.perf_counter()
        try:
            return self._popen(argv, options)
        finally:
            with self._lock:
                self.busy += time.perf_counter() - started


CLOCK = SpawnerClock()
syscalls._popen = CLOCK.popen  # what the pool's threads run; measured, then the real Popen

# The design before issue 28: every filtered spawn through one thread.
ONE_SPAWNER = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, initializer=syscalls._load_into_this_thread
)


def one_spawner_popen(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
    return ONE_SPAWNER.submit(CLOCK.popen, argv, options).result()


class OneSpawnerSandbox(BwrapSandbox):
    """bwrap with the filter, every command spawned by one filtered thread."""

    @property
    def _popen(self) -> Callable[..., subprocess.Popen[bytes]]:
        return one_spawner_popen


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
    parser.add_argument(
        "--at-once",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 4, 8],
        help="how many sandboxes at once, comma-separated (bwrap)",
    )
    parser.add_argument("--burst", type=int, default=5, help="execs per sandbox per trial")
    parser.add_argument("--trials", type=int, default=15, help="trials per size and variant")
    parser.add_argument("--part", choices=["all", "costs", "hardening", "at-once"], default="all")
    args = parser.parse_args()
    if args.backend == "docker":
        with docker_daemon():
            run(args)
        return
    if args.part in ("all", "costs"):
        run(args)
    if args.part in ("all", "hardening"):
        hardening(args)
    if args.part in ("all", "at-once"):
        at_once(args)


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


def alternating(calls: dict[str, Callable[[], object]], times: int) -> dict[str, list[float]]:
    """Wall seconds of each call, ``times`` each, taking turns in a new random order."""
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for _ in range(times):
        random.shuffle(names)
        for name in names:
            started = time.perf_counter()
            calls[name]()
            seconds[name].append(time.perf_counter() - started)
    return seconds


def hardening(args: argparse.Namespace) -> None:
    """What the syscall filter and the memory watchdog cost, call by call in one run."""
    accounted, unaccounted = SandboxSpec(), SandboxSpec().with_limits(memory=None)
    variants = {
        "neither": (UnfilteredSandbox, unaccounted),
        "control": (UnfilteredSandbox, unaccounted),  # = neither: the run's noise floor
        "filter": (BwrapSandbox, unaccounted),
        "watchdog": (UnfilteredSandbox, accounted),
        "both": (BwrapSandbox, accounted),
    }
    boxes = {name: kind(spec) for name, (kind, spec) in variants.items()}
    shells = {name: box.session() for name, box in boxes.items()}
    calls = args.rounds * args.repeat
    measured = {
        "fresh exec": alternating(
            {name: lambda box=box: box.exec(["true"]) for name, box in boxes.items()}, calls
        ),
        "session command": alternating(
            {name: lambda shell=shell: shell.run("true") for name, shell in shells.items()}, calls
        ),
        "create + close": alternating(
            {name: lambda v=v: v[0](v[1]).close() for name, v in variants.items()},
            args.rounds * 5,
        ),
    }
    for name in variants:
        shells[name].close()
        boxes[name].close()
    load = os.getloadavg()[0]
    print(f"hardening (bwrap), {calls} calls each (create: {args.rounds * 5}), taking turns")
    print(f"call by call; load {load:.1f}; median ms (ratio to neither)")
    print(f"  {'variant':<10}" + "".join(f"{what:>24}" for what in measured))
    for name in variants:
        cells = []
        for seconds in measured.values():
            median, reference = (
                statistics.median(seconds[name]),
                statistics.median(seconds["neither"]),
            )
            cells.append(f"{median * 1e3:9.3f} ({median / reference:5.3f}x)")
        print(f"  {name:<10}" + "".join(f"{cell:>24}" for cell in cells))


def at_once(args: argparse.Namespace) -> None:
    """Execs per second with many sandboxes at once: is the filtered spawn path a queue?"""
    spec = SandboxSpec().with_limits(memory=None)
    kinds = {
        "neither": UnfilteredSandbox,
        "control": UnfilteredSandbox,  # = neither: the run's noise floor
        "filter": BwrapSandbox,
        "filter, one spawner": OneSpawnerSandbox,
    }
    print(f"at once (bwrap): each sandbox runs `true` {args.burst} times in its own thread,")
    print(f"{args.trials} trials alternating; median execs/s (ratio to neither), spawner busy")
    for count in args.at_once:
        boxes = {name: [kind(spec) for _ in range(count)] for name, kind in kinds.items()}
        rates: dict[str, list[float]] = {name: [] for name in kinds}
        busy: dict[str, list[float]] = {name: [] for name in kinds}
        names = list(kinds)
        for _ in range(args.trials):
            random.shuffle(names)
            for name in names:
                CLOCK.busy = 0.0
                wall = burst(boxes[name], args.burst)
                rates[name].append(count * args.burst / wall)
                busy[name].append(CLOCK.busy / wall)
        for group in boxes.values():
            for box in group:
                box.close()
        reference = statistics.median(rates["neither"])
        load = os.getloadavg()[0]
        for name in kinds:
            rate = statistics.median(rates[name])
            spawner = f"{statistics.median(busy[name]):.2f}" if "filter" in name else "-"
            print(
                f"  {count:>2} at once, {name:<20} {rate:8.1f} ({rate / reference:5.3f}x)"
                f"  spawner busy {spawner:>5}  load {load:.1f}"
            )


def burst(boxes: list[BwrapSandbox], calls: int) -> float:
    """Wall seconds for every box to run ``true`` ``calls`` times, each box in its own thread."""
    start = threading.Barrier(len(boxes) + 1)

    def drive(box: BwrapSandbox) -> None:
        start.wait()
        for _ in range(calls):
            box.exec(["true"])

    threads = [threading.Thread(target=drive, args=(box,)) for box in boxes]
    for thread in threads:
        thread.start()
    start.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
