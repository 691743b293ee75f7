"""The desktop's costs, measured side by side in one process (docs/envs/gui.md, "Desktop").

* a desktop step (an XTEST pointer move through :class:`~agentgym.envs.gui.x11.X11Screen` and
  a screenshot as an RGB array, through shared memory) against a bare one (the same XTEST
  request, ``XSync`` and an MIT-SHM ``GetImage`` into a segment, no conversion), and a step
  whose screenshot is a plain ``GetImage`` over the socket (what the desktop falls back to
  without MIT-SHM): p50 and p99 of each and the ratios of p50s; the three take turns step by
  step, on a desktop showing mousepad;
* start (``Desktop()``: Xvfb and openbox up), reset (home restored, mousepad relaunched and
  focused) and close, medians;
* ``--leak-cycles`` make/reset/screenshot/close cycles through the checker's leak check (the
  issue's 100), then nothing of any desktop left: processes, display lock, socket, directory;
* ``--episodes N``: the oracle's episodes per minute on ``--env`` (default gui/Mousepad-v0)
  through the evaluator with one desktop and with four at once, and the ratio.

Run: ``.venv/bin/python tests/perf/bench_desktop.py [--steps N] [--rounds N] [--leak-cycles N]``
(as root, with Debian's xvfb, openbox and mousepad: ``make install`` puts them there).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from Xlib import X
from Xlib.ext import xtest

from agentgym.checker import check_leaks
from agentgym.envs.gui import xshm
from agentgym.envs.gui.desktop import Desktop
from agentgym.envs.gui.x11 import X11Screen
from agentgym.sandbox.uids import left_behind


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def steps(count: int) -> None:
    """Desktop step vs bare XTEST + XShm GetImage vs a plain-GetImage step, taking turns."""
    with Desktop() as desktop:
        desktop.reset(["mousepad"])
        bare = X11Screen(desktop.number or 0, desktop.runtime / "Xauthority")
        raw = bare._display
        shared = xshm.attach(raw, raw.screen().root, desktop.width, desktop.height, desktop.uid)
        assert shared is not None and desktop.screen.shared_memory, "no MIT-SHM on this server"
        plain = X11Screen(desktop.number or 0, desktop.runtime / "Xauthority")
        timings: dict[str, list[float]] = {
            "desktop step": [],
            "bare XTEST+XShm": [],
            "step, plain GetImage": [],
        }
        for index in range(count):
            x, y = 100 + index % 400, 100 + index % 300
            started = time.perf_counter()
            desktop.screen.move(x, y)
            desktop.screen.screenshot()
            timings["desktop step"].append(time.perf_counter() - started)
            started = time.perf_counter()
            xtest.fake_input(raw, X.MotionNotify, x=x + 1, y=y + 1)
            raw.sync()
            shared.fetch()
            timings["bare XTEST+XShm"].append(time.perf_counter() - started)
            started = time.perf_counter()
            plain.move(x + 2, y + 2)
            plain.screenshot()
            timings["step, plain GetImage"].append(time.perf_counter() - started)
        shared.close()
        bare.close()
        plain.close()
    width, height = desktop.width, desktop.height
    print(f"step ({width}x{height}, {count} each, taking turns; load {os.getloadavg()[0]:.1f})")
    bare_p50 = statistics.median(timings["bare XTEST+XShm"])
    for name, values in timings.items():
        p50, p99 = _percentile(values, 0.5), _percentile(values, 0.99)
        print(
            f"  {name:<22} p50 {p50 * 1000:6.1f} ms  p99 {p99 * 1000:6.1f} ms"
            f"  p50 / bare {statistics.median(values) / bare_p50:5.2f}"
        )


def lifecycle(rounds: int) -> None:
    """Start, reset (mousepad) and close, medians."""
    timings: dict[str, list[float]] = {"start": [], "reset (mousepad)": [], "close": []}
    for _ in range(rounds):
        started = time.perf_counter()
        desktop = Desktop()
        timings["start"].append(time.perf_counter() - started)
        desktop.reset(["mousepad"])
        started = time.perf_counter()
        desktop.reset(["mousepad"])  # the second: a reset that kills a running app too
        timings["reset (mousepad)"].append(time.perf_counter() - started)
        started = time.perf_counter()
        desktop.close()
        timings["close"].append(time.perf_counter() - started)
    print(f"lifecycle, median of {rounds}")
    for name, values in timings.items():
        print(f"  {name:<22} {statistics.median(values) * 1000:7.0f} ms")


def leaks(cycles: int) -> None:
    """The checker's leak check over make/reset/screenshot/close, then nothing left."""
    made: list[Desktop] = []

    def touch(desktop: Desktop, index: int) -> None:
        desktop.reset(["xterm"])
        desktop.screen.screenshot()
        made.append(desktop)

    started = time.perf_counter()
    check_leaks(Desktop, "desktop", cycles=cycles, seed=0, touch=touch)
    left = [
        str(path)
        for d in made
        for path in (d.root, Path(f"/tmp/.X{d.number}-lock"), Path(f"/tmp/.X11-unix/X{d.number}"))
        if path.exists()
    ] + [f"pid {pid}" for d in made for pid in left_behind(d.uid)]
    seconds = time.perf_counter() - started
    verdict = "nothing left" if not left else f"LEFT: {left[:5]}"
    print(
        f"leak check: {len(made)} desktops ({cycles} measured cycles) in {seconds:.1f} s, {verdict}"
    )


def episodes(env_id: str, tasks: int) -> None:
    """The oracle's episodes per minute through the evaluator with one desktop, then four
    (one per env the evaluator runs at once), on the same tasks."""
    import tempfile

    from agentgym.eval import evaluate

    rates = {}
    for desktops in (1, 4):
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            result = evaluate(
                env=env_id, agent="oracle", tasks=tasks, split="train", out=out, num_envs=desktops
            )
            minutes = (time.perf_counter() - started) / 60
        passed = sum(1 for r in result.records if r.verdict is not None and r.verdict.passed)
        rates[desktops] = len(result.records) / minutes
        print(
            f"  {desktops} desktop(s): {len(result.records)} episodes ({passed} passed) in "
            f"{minutes * 60:.1f} s = {rates[desktops]:.1f} episodes/min"
        )
    print(f"  4 desktops vs 1: {rates[4] / rates[1]:.2f}x (load {os.getloadavg()[0]:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--leak-cycles", type=int, default=100)
    parser.add_argument(
        "--episodes",
        type=int,
        default=12,
        metavar="N",
        help="oracle episodes of --env with 1 and with 4 desktops (0: skip)",
    )
    parser.add_argument("--env", default="gui/Mousepad-v0")
    args = parser.parse_args()
    if args.episodes:
        print(f"episodes of {args.env}, the oracle, through the evaluator")
        episodes(args.env, args.episodes)
    steps(args.steps)
    lifecycle(args.rounds)
    if args.leak_cycles:
        leaks(args.leak_cycles)


if __name__ == "__main__":
    main()
