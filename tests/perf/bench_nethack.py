"""Benchmark: roguelike/NetHack-v0's step against nle's own, and its reference bot against random.

Not a test (the suite plays a few short games). Two figures, both in ``docs/envs/roguelike.md``:

1. **Step time**: the same random keys played through nle's own ``step`` (the game as
   ``NetHackEnv`` builds it, integer actions, no text) and through ``roguelike/NetHack-v0``'s
   ``step`` (action words in, the language observation out), in one run; the ratio is our
   cost per action over the engine's.
2. **Bot against random**: BALROG's progression of the scripted bot and of a uniformly random
   action word, on the same ``--games`` test tasks at the id's step limit (1,000 actions), as
   means with 95% bootstrap intervals, and the paired difference with its interval.

    python tests/perf/bench_nethack.py [--games 50] [--steps 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import agentgym
from agentgym.envs.roguelike.nethack_env import make_game
from agentgym.envs.roguelike.nethack_text import KEYS
from agentgym.eval.stats import bootstrap_ci

ENV_ID = "roguelike/NetHack-v0"


def step_times(steps: int) -> tuple[float, float]:
    """Mean seconds per step of nle's own env and of ours, on the same random keys."""
    words = list(KEYS)
    rng = np.random.default_rng(0)
    chosen = [words[i] for i in rng.integers(len(words), size=steps)]
    game = make_game()
    index = {key: game.actions.index(key) for key in set(KEYS.values())}
    game.reset()
    started = time.perf_counter()
    for word in chosen:
        *_, done, _, _ = game.step(index[KEYS[word]])
        if done:
            game.reset()
    engine = (time.perf_counter() - started) / steps
    game.close()
    env = agentgym.make(ENV_ID, max_invalid_actions=None)
    env.reset(seed=0)
    started = time.perf_counter()
    for word in chosen:
        *_, terminated, truncated, _ = env.step(word)
        if terminated or truncated:
            env.reset()
    ours = (time.perf_counter() - started) / steps
    env.close()
    return engine, ours


def progressions(games: int, player: str) -> tuple[np.ndarray, np.ndarray]:
    """The progression and deepest Dlvl each of ``games`` test tasks ends at, played by
    ``player``."""
    env = agentgym.make(ENV_ID)
    words = list(KEYS)
    scores, depths = [], []
    for index in range(games):
        _, info = env.reset(options={"task_id": f"test/standard/{index}"})
        rng = np.random.default_rng(index)
        done = False
        while not done:
            if player == "bot":
                action = env.unwrapped.oracle_action()
            else:
                action = words[int(rng.integers(len(words)))]
            *_, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        scores.append(info["verdict"].score)
        depths.append(info["verdict"].components["depth"])
    env.close()
    return np.array(scores), np.array(depths)


def interval(values: np.ndarray) -> tuple[float, float]:
    """A 95% bootstrap interval of the mean over tasks (the evaluator's own)."""
    _, low, high = bootstrap_ci([[float(v)] for v in values])
    return low, high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    engine, ours = step_times(args.steps)
    print(
        f"step: nle {1e6 * engine:.0f} us, {ENV_ID} {1e6 * ours:.0f} us, "
        f"ratio {ours / engine:.1f}x ({args.steps} random keys)"
    )
    scores = {}
    for player in ("random", "bot"):
        started = time.perf_counter()
        scores[player], depths = progressions(args.games, player)
        low, high = interval(scores[player])
        reached = float(np.mean(scores[player] > 0))
        print(
            f"{player:>6}: progression {100 * scores[player].mean():.2f}% "
            f"[{100 * low:.2f}, {100 * high:.2f}] over {args.games} test tasks; "
            f"above 0 in {reached:.0%}; mean deepest Dlvl {depths.mean():.2f}; "
            f"{time.perf_counter() - started:.0f} s"
        )
    low, high = interval(scores["bot"] - scores["random"])
    print(
        f"bot - random: {100 * (scores['bot'] - scores['random']).mean():.2f} points "
        f"[{100 * low:.2f}, {100 * high:.2f}]"
    )


if __name__ == "__main__":
    main()
