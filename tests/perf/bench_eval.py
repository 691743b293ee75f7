"""Benchmark: the evaluator's scheduling, as ratios measured in one process.

Not a test. The model is simulated (a test double: the point is the scheduler, not a model):
:class:`SimulatedBatchedModel` answers requests in batches, each forward pass taking
``latency`` seconds whatever its size, like a GPU below its batch limit. Two measurements:

(a) **throughput vs the ideal**: 256 concurrent episodes of a real env (Maze, fixed length),
    each step waiting for the model. Ideal wall time = steps per episode x latency (every
    episode advances once per forward pass and nothing else costs time). Goal >= 0.9.
(b) **our scheduler vs lock-step batching** on the same workload with heavy-tailed env step
    times (mostly ~5 ms, 5% of steps 200-600 ms): lock-step makes every env step, waits
    for the slowest, then calls the model once for all; ours lets each episode go on as soon as
    its own step and its own answer are back, batching whatever requests are pending.
    Reported: lock-step wall time / ours. Goal >= 2.

    python tests/perf/bench_eval.py [--episodes 256] [--steps 20] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import time
from typing import Any

import gymnasium
import numpy as np

import agentgym
from agentgym.agents import Agent
from agentgym.benchmarks import Benchmark, BenchmarkEnv
from agentgym.eval.engine import run_episodes


class SimulatedBatchedModel:
    """Answers every pending request after one ``latency``-long pass (batches up to ``limit``)."""

    def __init__(self, latency: float, limit: int = 512) -> None:
        self.latency, self.limit = latency, limit
        self.queue: asyncio.Queue[asyncio.Future[str]] = asyncio.Queue()
        self.passes = 0
        self.worker = asyncio.get_running_loop().create_task(self._serve())

    async def ask(self) -> str:
        answer = asyncio.get_running_loop().create_future()
        await self.queue.put(answer)
        return await answer

    async def _serve(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while not self.queue.empty() and len(batch) < self.limit:
                batch.append(self.queue.get_nowait())
            await asyncio.sleep(self.latency)
            self.passes += 1
            for answer in batch:
                answer.set_result("up")


class ModelAgent(Agent):
    def __init__(self, model: SimulatedBatchedModel) -> None:
        self.model = model

    async def act(self, observation: Any, info: dict[str, Any]) -> str:
        return await self.model.ask()


class HeavyTailedSteps(gymnasium.Wrapper):
    """Adds a sleep to every step: usually short (exponential, mean ``mean``), 5% of the time
    long (200-600 ms), like a page load, a container exec or a game generated on the fly."""

    def __init__(self, env: gymnasium.Env, mean: float, seed: int) -> None:
        super().__init__(env)
        self.rng = np.random.default_rng(seed)
        self.mean = mean

    def step(self, action):
        slow = self.rng.random() < 0.05
        time.sleep(self.rng.uniform(0.2, 0.6) if slow else self.rng.exponential(self.mean))
        return self.env.step(action)


def plans(episodes: int, steps: int):
    suite = Benchmark(
        name="bench",
        episodes_per_task=1,
        envs=(BenchmarkEnv("games/Maze-v0", split="train", tasks=episodes, max_steps=steps),),
    )
    return suite.plan()


async def ours(episodes: int, steps: int, latency: float, step_mean: float | None) -> float:
    model = SimulatedBatchedModel(latency)

    def make_env(plan):
        env = agentgym.make(plan.env_id, max_episode_steps=plan.max_steps)
        return HeavyTailedSteps(env, step_mean, plan.index) if step_mean else env

    started = time.perf_counter()
    records = await run_episodes(
        plans(episodes, steps),
        lambda: ModelAgent(model),
        "sim",
        num_envs=episodes,
        make_env=make_env,
    )
    wall = time.perf_counter() - started
    model.worker.cancel()
    assert all(len(r.steps) == steps for r in records), "every episode runs its full length"
    return wall


async def lock_step(episodes: int, steps: int, latency: float, step_mean: float) -> float:
    """The lock-step baseline: all envs step, barrier, one model call for all, repeat."""
    envs = []
    for plan in plans(episodes, steps):
        env = HeavyTailedSteps(
            agentgym.make(plan.env_id, max_episode_steps=steps), step_mean, plan.index
        )
        env.reset(seed=plan.seed, options={"task_id": plan.task_id})
        envs.append(env)
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=episodes) as pool:
        for _ in range(steps):
            await asyncio.sleep(latency)  # one batched forward pass for every episode
            await asyncio.gather(*(loop.run_in_executor(pool, e.step, "up") for e in envs))
    wall = time.perf_counter() - started
    for env in envs:
        env.close()
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per forward pass")
    parser.add_argument("--tail-episodes", type=int, default=64)
    parser.add_argument("--step-mean", type=float, default=0.005)
    args = parser.parse_args()

    wall = asyncio.run(ours(args.episodes, args.steps, args.latency, None))
    ideal = args.steps * args.latency
    print(
        f"(a) {args.episodes} concurrent episodes x {args.steps} steps, {args.latency * 1e3:.0f}"
        f" ms per forward pass: {wall:.2f} s vs ideal {ideal:.2f} s -> "
        f"throughput / ideal = {ideal / wall:.3f} (goal >= 0.9)"
    )

    n, mean = args.tail_episodes, args.step_mean
    ours_wall = asyncio.run(ours(n, args.steps, args.latency, mean))
    lock_wall = asyncio.run(lock_step(n, args.steps, args.latency, mean))
    print(
        f"(b) {n} episodes x {args.steps} steps, heavy-tailed env steps (mean "
        f"{mean * 1e3:.0f} ms): lock-step {lock_wall:.2f} s, ours {ours_wall:.2f} s -> "
        f"{lock_wall / ours_wall:.2f}x (goal >= 2)"
    )


if __name__ == "__main__":
    main()
