"""Benchmark: the evaluator's scheduling, as ratios measured in one process.

Not a test. The model is simulated (a test double: the point is the scheduler, not a model):
:class:`SimulatedBatchedModel` batches continuously, like vLLM: a reply takes ``latency``
seconds (32 decode iterations) whatever the batch size below its limit. Two measurements:

(a) **throughput vs the ideal**: 256 concurrent episodes of a real env (Maze, fixed length),
    each step waiting for the model. Ideal wall time = steps per episode x latency (every
    episode advances once per forward pass and nothing else costs time). Goal >= 0.9.
(b) **our scheduler vs lock-step batching** on the same workload with heavy-tailed env step
    times (mostly ~5 ms, 5% of steps 200-600 ms): lock-step makes every env step, waits
    for the slowest, then calls the model once for all; ours lets each episode go on as soon as
    its own step and its own answer are back, batching whatever requests are pending.
    Reported: lock-step wall time / ours. Goal >= 2.

    python tests/perf/bench_eval.py [--episodes 256] [--steps 50] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import threading
import time
from typing import Any

import gymnasium
import numpy as np

import agentgym
from agentgym.agents import Agent
from agentgym.eval.engine import run_episodes
from agentgym.eval.plan import Benchmark, BenchmarkEnv


class SimulatedBatchedModel:
    """A continuously batching model server (as vLLM and the ``hf`` backend batch).

    It runs on its own thread, as a real backend runs on its own device or process, so its
    clock does not depend on how busy the evaluator's event loop is. Generation goes in decode
    iterations of ``latency / tokens`` seconds each, whatever the batch size (below the
    limit); a request joins the batch at the next iteration and is answered after ``tokens``
    iterations: its latency is ``latency`` plus at most one iteration, however many other
    requests are in flight.
    """

    def __init__(self, latency: float, tokens: int = 32, limit: int = 1024) -> None:
        self.iteration, self.tokens, self.limit = latency / tokens, tokens, limit
        self.loop = asyncio.get_running_loop()
        self.waiting: list[asyncio.Future[str]] = []
        self.lock = threading.Condition()
        self.iterations = 0
        self.stopped = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    async def ask(self) -> str:
        answer = self.loop.create_future()
        with self.lock:
            self.waiting.append(answer)
            self.lock.notify()
        return await answer

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            self.lock.notify()
        self.thread.join()

    def _serve(self) -> None:
        running: list[list] = []  # [future, iterations left]
        deadline = time.perf_counter()
        while True:
            with self.lock:
                while not running and not self.waiting and not self.stopped:
                    self.lock.wait()
                    deadline = time.perf_counter()
                if self.stopped:
                    return
                room = self.limit - len(running)
                running += [[answer, self.tokens] for answer in self.waiting[:room]]
                del self.waiting[:room]
            deadline += self.iteration  # one decode step for the whole batch
            time.sleep(max(0.0, deadline - time.perf_counter()))
            self.iterations += 1
            done = []
            for entry in running:
                entry[1] -= 1
                if entry[1] == 0:
                    done.append(entry[0])
            running = [entry for entry in running if entry[1] > 0]
            if done:
                self.loop.call_soon_threadsafe(_answer, done)


def _answer(futures: list[asyncio.Future[str]]) -> None:
    for future in futures:
        if not future.done():
            future.set_result("up")


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
    model.stop()
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
            await asyncio.sleep(latency)  # one batched model call for every episode
            await asyncio.gather(*(loop.run_in_executor(pool, e.step, "up") for e in envs))
    wall = time.perf_counter() - started
    for env in envs:
        env.close()
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model reply")
    parser.add_argument("--tail-episodes", type=int, default=64)
    parser.add_argument("--step-mean", type=float, default=0.005)
    args = parser.parse_args()

    alone = min(asyncio.run(ours(1, args.steps, args.latency, None)) for _ in range(3))
    wall = asyncio.run(ours(args.episodes, args.steps, args.latency, None))
    print(
        f"(a) {args.episodes} concurrent episodes x {args.steps} steps, model reply "
        f"{args.latency * 1e3:.0f} ms nominal: {wall:.2f} s; one episode alone {alone:.2f} s "
        f"(nominal {args.steps * args.latency:.2f} s) -> throughput / ideal = "
        f"{alone / wall:.3f} (goal >= 0.9)"
    )

    n, mean = args.tail_episodes, args.step_mean
    ours_wall = asyncio.run(ours(n, args.steps, args.latency, mean))
    lock_wall = asyncio.run(lock_step(n, args.steps, args.latency, mean))
    print(
        f"(b) {n} episodes x {args.steps} steps, heavy-tailed env steps (usually ~"
        f"{mean * 1e3:.0f} ms, 5% 200-600 ms): lock-step {lock_wall:.2f} s, ours "
        f"{ours_wall:.2f} s -> {lock_wall / ours_wall:.2f}x (goal >= 2)"
    )


if __name__ == "__main__":
    main()
