"""Benchmark: roguelike/Crafter-v0's step against crafter's own, and its reference bot
against random actions.

Not a test (the suite plays a few short games). Two figures, both in ``docs/envs/roguelike.md``:

1. **Step time**: the same random actions played through crafter's own ``Env.step`` (its
   default 64 x 64 picture drawn every step, integer actions) and through
   ``roguelike/Crafter-v0``'s ``step`` (action names in, the text out, no picture), in one
   run; the ratio is our cost per action over the engine's.
2. **Bot against random**: BALROG's progression (the share of the 22 achievements) of the
   scripted bot and of a uniformly random action name on the same ``--games`` test tasks,
   at the checker's horizon (300 steps) and at the id's step limit (2,000, BALROG's), as
   means with 95% bootstrap intervals over tasks, and the paired lead with its interval.

    python tests/perf/bench_crafter.py [--games 30] [--steps 2000]
"""

from __future__ import annotations

import argparse
import time

import crafter
import numpy as np

import agentgym
from agentgym.envs.roguelike.crafter_env import crafter_seed
from agentgym.envs.roguelike.crafter_text import NAMES
from agentgym.eval.stats import bootstrap_ci

ENV_ID = "roguelike/Crafter-v0"


def step_times(steps: int) -> tuple[float, float]:
    """Mean seconds per step of crafter's own env and of ours, on the same random actions
    (the world generated before the clock starts, for both)."""
    chosen = np.random.default_rng(0).integers(len(NAMES), size=steps)
    env = agentgym.make(ENV_ID, max_invalid_actions=None, max_episode_steps=steps + 1)
    env.reset(options={"task_id": "test/standard/0"})
    game = crafter.Env(seed=crafter_seed(env.unwrapped.task.seed), length=None)
    game.reset()
    started = time.perf_counter()
    for action in chosen:
        *_, done, _ = game.step(int(action))
        if done:
            game.reset()
    engine = (time.perf_counter() - started) / steps
    started = time.perf_counter()
    for action in chosen:
        *_, terminated, truncated, _ = env.step(NAMES[action])
        if terminated or truncated:
            env.reset(options={"task_id": "test/standard/0"})
    ours = (time.perf_counter() - started) / steps
    env.close()
    return engine, ours


def progressions(games: int, player: str, steps: int) -> np.ndarray:
    """The progression each of ``games`` test tasks ends at within ``steps``, played by
    ``player``."""
    env = agentgym.make(ENV_ID)
    scores = []
    for index in range(games):
        _, info = env.reset(options={"task_id": f"test/standard/{index}"})
        rng = np.random.default_rng(index)
        for _ in range(steps):
            if player == "bot":
                action = env.unwrapped.oracle_action()
            else:
                action = NAMES[int(rng.integers(len(NAMES)))]
            *_, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        scores.append(info["verdict"].score)
    env.close()
    return np.array(scores)


def shown(values: np.ndarray) -> str:
    mean, low, high = bootstrap_ci([[float(v)] for v in values])
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    engine, ours = step_times(args.steps)
    print(
        f"step: crafter {1e6 * engine:.0f} us, {ENV_ID} {1e6 * ours:.0f} us, "
        f"ratio {ours / engine:.2f}x ({args.steps} random actions)"
    )
    for horizon in (300, args.steps):
        scores = {}
        for player in ("random", "bot"):
            started = time.perf_counter()
            scores[player] = progressions(args.games, player, horizon)
            print(
                f"{horizon} steps, {player:>6}: progression {shown(scores[player])} over "
                f"{args.games} test tasks; {time.perf_counter() - started:.0f} s"
            )
        print(f"{horizon} steps, bot - random: {shown(scores['bot'] - scores['random'])}")


if __name__ == "__main__":
    main()
