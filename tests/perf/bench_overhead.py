"""Benchmark: the cost of agentgym's wrapper stack, and steps per second per game.

Not a test (these machines are noisy): it reports ratios measured in one process. For each
env, the oracle's action sequence on one hard task (recorded once) is replayed, about
``--steps`` steps per round, on the raw env and on the env built by ``agentgym.make``
(TimeLimit, OrderEnforcing, PassiveEnvChecker), interleaving the two in rounds and keeping
the best round of each, so drift on the machine hits both alike. The goal is an overhead
ratio of at most 1.05.

    python tests/perf/bench_overhead.py [--rounds N] [--ids ID ...]
"""

from __future__ import annotations

import argparse
import statistics
import time

import agentgym
from agentgym.errors import MissingExtraError

RATIO_IDS = ("games/TextWorldCoinCollector-v0", "games/Sokoban-v0")


def oracle_actions(env_id: str, task_id: str) -> list[str]:
    env = agentgym.make(env_id).unwrapped
    env.reset(seed=0, options={"task_id": task_id})
    actions = []
    while (action := env.oracle_action()) is not None and len(actions) < 500:
        actions.append(action)
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    env.close()
    return actions


def replay(env, task_id: str, actions: list[str], episodes: int) -> float:
    """Seconds spent in step() over ``episodes`` replays of ``actions`` (resets not counted)."""
    spent = 0.0
    for _ in range(episodes):
        env.reset(seed=0, options={"task_id": task_id})
        started = time.perf_counter()
        for action in actions:
            env.step(action)
        spent += time.perf_counter() - started
    return spent


def measure(env_id: str, rounds: int, steps_per_round: int) -> dict[str, float]:
    wrapped = agentgym.make(env_id, max_episode_steps=10_000)
    raw = wrapped.unwrapped
    task_id = raw.tasks.ids("dev", raw.tasks.difficulties[-1])[0]
    actions = oracle_actions(env_id, task_id)
    episodes = max(1, -(-steps_per_round // len(actions)))
    raw_times, wrapped_times = [], []
    for _ in range(rounds):
        raw_times.append(replay(raw, task_id, actions, episodes))
        wrapped_times.append(replay(wrapped, task_id, actions, episodes))
    wrapped.close()
    steps = len(actions) * episodes
    best_raw, best_wrapped = min(raw_times), min(wrapped_times)
    ratios = [w / r for w, r in zip(wrapped_times, raw_times, strict=True)]
    return {
        "steps": steps,
        "raw_us_per_step": 1e6 * best_raw / steps,
        "ratio_best": best_wrapped / best_raw,
        "ratio_median": statistics.median(ratios),
        "steps_per_s": steps / best_raw,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=2000, help="steps per round and variant")
    parser.add_argument("--ids", nargs="*", help="env ids (default: every games env)")
    args = parser.parse_args()
    ids = args.ids or [s.id for s in agentgym.list_envs(family="games", kind="env")]
    print(f"{'env':<36} {'steps':>5} {'raw µs/step':>12} {'steps/s':>9} {'wrapped/raw':>12}")
    for env_id in ids:
        try:
            r = measure(env_id, args.rounds, args.steps)
        except MissingExtraError as error:
            print(f"{env_id:<36} skipped: {error}")
            continue
        goal = "  (goal <= 1.05)" if env_id in RATIO_IDS else ""
        print(
            f"{env_id:<36} {r['steps']:>5} {r['raw_us_per_step']:>12.1f} "
            f"{r['steps_per_s']:>9.0f} {r['ratio_best']:>6.3f} (median {r['ratio_median']:.3f})"
            f"{goal}"
        )


if __name__ == "__main__":
    main()
