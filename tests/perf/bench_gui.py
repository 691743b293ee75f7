"""Pixel web against text web: a pixel step (a mouse action and a screenshot) and a text step
(an element action and the accessibility-tree text), on the same MiniWoB++ page in one process.

Run: ``.venv/bin/python tests/perf/bench_gui.py [--steps N]``. Prints per-step p50 of each and
their ratio (the figure in docs/envs/gui.md).
"""

from __future__ import annotations

import argparse
import statistics
import time

import agentgym
import agentgym.envs.gui  # registers the gui ids where the entry point is not installed


def _p50(env_id: str, action: str, steps: int) -> float:
    """The median seconds of a step of ``action`` (a step that ends the episode resets)."""
    env = agentgym.make(env_id)
    try:
        env.reset(seed=0, options={"task_id": "test/default/0"})
        timings = []
        for _ in range(steps):
            started = time.perf_counter()
            *_, terminated, truncated, _ = env.step(action)
            timings.append(time.perf_counter() - started)
            if terminated or truncated:
                env.reset(seed=0, options={"task_id": "test/default/0"})
        return statistics.median(timings)
    finally:
        env.close()


def _screenshot_p50(env_id: str, frames: int) -> float:
    """The median seconds of the screenshot alone (PNG from Chromium, decoded to an array)."""
    env = agentgym.make(env_id)
    try:
        env.reset(seed=0, options={"task_id": "test/default/0"})
        timings = []
        for _ in range(frames):
            started = time.perf_counter()
            env.unwrapped._screenshot_array(marks=False)
            timings.append(time.perf_counter() - started)
        return statistics.median(timings)
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=60)
    steps = parser.parse_args().steps
    # A click on the page's empty bottom corner: it changes nothing, so every step is alike.
    text = _p50("miniwob/click_test-v0", "mouse_click(150, 200)", steps)
    pixel = _p50("gui/miniwob_click_test-v0", "click(150, 200)", steps)
    print(f"text web step  p50 {text * 1000:7.1f} ms  (mouse_click + accessibility-tree text)")
    print(f"pixel web step p50 {pixel * 1000:7.1f} ms  (click + 160x210 screenshot)")
    shot = _screenshot_p50("gui/miniwob_click_test-v0", steps)
    print(f"screenshot alone p50 {shot * 1000:5.1f} ms")
    print(f"ratio pixel/text   {pixel / text:7.2f}")


if __name__ == "__main__":
    main()
