"""Benchmark: the web family's step and reset against plain Playwright, in one process.

Not a test (these machines are noisy): it prints what one run measures, as ratios against
references measured in the same run, interleaved so that drift hits both sides alike.

* **step vs plain Playwright** — on the same local page (the testbed's sign-up form, served by
  our site server), one round is *fill a field, click Save, read the page*. Plain: three
  Playwright calls (``fill``, ``click``, ``inner_text``). Ours: two ``env.step`` calls
  (``fill``, ``click``) through the wrappers ``agentgym.make`` adds, each parsing the action,
  waiting for the page to settle and taking the accessibility-tree observation. Goal <= 1.5x.
* **fixed-delay step** — the same round with BrowserGym's fixed 0.5 s wait before each
  observation (its ``pre_observation_delay``) instead of our waits on real signals. Goal: ours
  >= 5x faster, p50 step <= 100 ms.
* **reset** — ``env.reset`` (the episode's database copied, the start page loaded and
  observed), p50.
* **make, reset and close: a recycled context vs a fresh one** — the cycle every conformance
  check repeats, on a MiniWoB++ page (``--miniwob``), with the pool recycling contexts
  (``browser.IDLE_CONTEXTS`` as shipped) and with it off (0: a new context and renderer per
  episode, as before recycling), interleaved; wall time and CPU time of the whole machine
  (Chromium's processes included) per cycle. Goal: >= 2x less CPU.
* **episodes per minute** — the oracle through the evaluator on ``--env`` with 4 episodes at
  once (4 contexts of one browser) vs 1.

    python tests/perf/bench_web.py [--rounds 30] [--env web/Shop-v1] [--episodes 16]
        [--miniwob miniwob/click_option-v0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "web"))

import conftest  # noqa: F401  (serves the testbed site, a test double of a site)

import agentgym

TESTBED = "webbench/Testbed-v0"
FIXED_DELAY = 0.5


def p50(values: list[float]) -> float:
    return statistics.median(values)


def plain_round(pool, world, delay: float = 0.0) -> float:
    """Fill + click + read with plain Playwright in the world's own context (same page)."""

    async def run() -> float:
        page = await world._context.new_page()
        await page.goto(world.origin + "/testbed/")
        started = time.perf_counter()
        await page.fill("#name", "Ada")
        if delay:
            await asyncio.sleep(delay)
            await page.inner_text("body")
        await page.click("button[type=submit]")
        if delay:
            await asyncio.sleep(delay)
        await page.inner_text("body")
        elapsed = time.perf_counter() - started
        await page.close()
        return elapsed

    return pool.call(run())


def our_round(env) -> tuple[float, list[float]]:
    env.reset(seed=0)
    snap = env.unwrapped._world.snapshot
    steps = []
    for action in (
        f'fill("{snap.find("textbox", "Name").id}", "Ada")',
        f'click("{snap.find("button", "Save").id}")',
    ):
        started = time.perf_counter()
        env.step(action)
        steps.append(time.perf_counter() - started)
    return sum(steps), steps


def bench_steps(rounds: int) -> None:
    env = agentgym.make(TESTBED)
    env.reset(seed=0)
    pool = env.unwrapped._pool
    for _ in range(3):  # warm up both paths
        our_round(env)
        plain_round(pool, env.unwrapped._world)
    ours, plain, fixed, steps = [], [], [], []
    for index in range(rounds):
        order = (0, 1) if index % 2 == 0 else (1, 0)
        for which in order:
            if which == 0:
                total, parts = our_round(env)
                ours.append(total)
                steps.extend(parts)
            else:
                plain.append(plain_round(pool, env.unwrapped._world))
        if index < max(3, rounds // 5):  # the fixed-delay rounds are slow: fewer of them
            fixed.append(plain_round(pool, env.unwrapped._world, FIXED_DELAY))
    resets = []
    for seed in range(rounds):
        started = time.perf_counter()
        env.reset(seed=seed)
        resets.append(time.perf_counter() - started)
    env.close()
    print(f"fill + click + read on the same page, {rounds} rounds each (p50):")
    print(f"  plain Playwright       {p50(plain) * 1000:7.1f} ms")
    print(
        f"  agentgym (2 steps)     {p50(ours) * 1000:7.1f} ms  = {p50(ours) / p50(plain):.2f}x "
        f"plain (goal <= 1.5x)"
    )
    print(
        f"  fixed 0.5 s delay      {p50(fixed) * 1000:7.1f} ms  = {p50(fixed) / p50(ours):.1f}x "
        f"slower than agentgym (goal >= 5x)"
    )
    print(
        f"  agentgym step p50 {p50(steps) * 1000:.1f} ms, p90 "
        f"{statistics.quantiles(steps, n=10)[-1] * 1000:.1f} ms (goal p50 <= 100 ms)"
    )
    print(f"  reset p50 {p50(resets) * 1000:.1f} ms")


def machine_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy (``/proc/stat``): Chromium's too."""
    import os

    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def bench_recycling(env_id: str, rounds: int, block: int = 5) -> None:
    from agentgym.envs.web import browser

    shipped = browser.IDLE_CONTEXTS
    measured: dict[int, tuple[list[float], list[float]]] = {shipped: ([], []), 0: ([], [])}

    def cycle(seed: int) -> None:
        env = agentgym.make(env_id)
        env.reset(seed=seed)
        env.close()

    cycle(0)
    # Blocks of cycles, the settings alternating: Chromium finishes some work (a closed
    # context's teardown) after the call returns, so CPU is measured over a block of cycles.
    for index in range(rounds):
        for idle in (shipped, 0) if index % 2 else (0, shipped):
            browser.IDLE_CONTEXTS = idle
            cycle(index)  # unmeasured: it leaves the pool as this setting keeps it
            started, cpu = time.perf_counter(), machine_cpu_seconds()
            for seed in range(block):
                cycle(seed)
            measured[idle][0].append((time.perf_counter() - started) / block)
            measured[idle][1].append((machine_cpu_seconds() - cpu) / block)
    browser.IDLE_CONTEXTS = shipped
    (wall, cpu), (fresh_wall, fresh_cpu) = measured[shipped], measured[0]
    print(f"make + reset + close of {env_id}, {rounds} blocks of {block} cycles each (p50):")
    print(
        f"  fresh context     {p50(fresh_wall) * 1000:7.1f} ms, CPU {p50(fresh_cpu) * 1000:.0f} ms"
    )
    print(
        f"  recycled context  {p50(wall) * 1000:7.1f} ms, CPU {p50(cpu) * 1000:.0f} ms  = "
        f"{p50(fresh_cpu) / max(p50(cpu), 1e-9):.1f}x less CPU (goal >= 2x)"
    )


def bench_throughput(env_id: str, episodes: int) -> None:
    from agentgym.eval import evaluate
    from agentgym.eval.plan import Benchmark

    spec = agentgym.spec(env_id)
    benchmark = Benchmark.from_dict(
        {
            "name": "web-throughput",
            "episodes_per_task": 1,
            "envs": [
                {
                    "id": env_id,
                    "split": "test",
                    "tasks": episodes,
                    "max_steps": spec.max_episode_steps,
                }
            ],
        }
    )
    rates = {}
    for num_envs in (1, 4, 1, 4):
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            result = evaluate(benchmark, "oracle", Path(out) / "run", num_envs=num_envs)
            elapsed = time.perf_counter() - started
        overall = result.summary["overall"]
        rates.setdefault(num_envs, []).append(episodes / elapsed * 60)
        print(
            f"  {env_id} oracle, {num_envs} at once: {episodes} episodes in {elapsed:.1f} s "
            f"({episodes / elapsed * 60:.0f}/min), success {overall['success']:.2f}, "
            f"errored {overall['errored']}"
        )
    one, four = max(rates[1]), max(rates[4])
    print(f"episodes per minute: 4 contexts {four:.0f} vs 1 context {one:.0f} = {four / one:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--env", default="web/Shop-v1", help="the env of the throughput part")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--miniwob", default="miniwob/click_option-v0")
    args = parser.parse_args()
    agentgym.register(TESTBED, entry_point="testbed:TestbedEnv", max_episode_steps=20)
    bench_steps(args.rounds)
    bench_recycling(args.miniwob, max(4, args.rounds // 5))
    bench_throughput(args.env, args.episodes)


if __name__ == "__main__":
    main()
