"""Benchmark: the cost of agentgym's wrapper stack, and steps per second per game.

Not a test (these machines are noisy): it reports ratios measured in one process. For each
env, the oracle's action sequence on one hard task (recorded once) is replayed on two envs
side by side: a raw one and one built by ``agentgym.make`` (TimeLimit, OrderEnforcing,
PassiveEnvChecker). They take the same step one after the other, alternating which goes
first, so drift on the machine hits both alike. A round is about ``--steps`` steps or
``--round-seconds`` of stepping, whichever is less (TextWorld steps take milliseconds). It
reports the wrapped/raw ratio of all time spent (and the median over rounds); the goal is at
most 1.05.

    python tests/perf/bench_overhead.py [--rounds N] [--steps N] [--ids ID ...]
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


def replay_in_lockstep(raw, wrapped, task_id: str, actions: list[str]) -> tuple[float, float]:
    """Seconds in ``step()`` of each env over one episode, the two stepped alternately.

    Both envs play the same task with the same actions, one step of one then the same step of
    the other (which goes first alternates), so a slow moment of the machine lands on both.
    """
    raw_spent = wrapped_spent = 0.0
    raw.reset(seed=0, options={"task_id": task_id})
    wrapped.reset(seed=0, options={"task_id": task_id})
    clock = time.perf_counter
    for index, action in enumerate(actions):
        pair = ((raw, True), (wrapped, False)) if index % 2 else ((wrapped, False), (raw, True))
        for env, is_raw in pair:
            started = clock()
            env.step(action)
            spent = clock() - started
            if is_raw:
                raw_spent += spent
            else:
                wrapped_spent += spent
    return raw_spent, wrapped_spent


def measure(
    env_id: str, rounds: int, steps_per_round: int, round_seconds: float
) -> dict[str, float]:
    wrapped = agentgym.make(env_id, max_episode_steps=10_000)
    raw = agentgym.make(env_id).unwrapped  # a second instance: the two play side by side
    task_id = raw.tasks.ids("dev", raw.tasks.difficulties[-1])[0]
    actions = oracle_actions(env_id, task_id)
    episode_seconds = sum(replay_in_lockstep(raw, wrapped, task_id, actions))  # also a warm-up
    by_steps = -(-steps_per_round // len(actions))
    episodes = max(1, min(by_steps, int(round_seconds / episode_seconds)))
    raw_times, wrapped_times = [], []
    for _ in range(rounds):
        spent = [replay_in_lockstep(raw, wrapped, task_id, actions) for _ in range(episodes)]
        raw_times.append(sum(r for r, _ in spent))
        wrapped_times.append(sum(w for _, w in spent))
    wrapped.close()
    raw.close()
    steps = len(actions) * episodes
    ratios = [w / r for w, r in zip(wrapped_times, raw_times, strict=True)]
    return {
        "steps": steps,
        "raw_us_per_step": 1e6 * min(raw_times) / steps,
        "ratio_total": sum(wrapped_times) / sum(raw_times),
        "ratio_median": statistics.median(ratios),
        "steps_per_s": steps / min(raw_times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=2000, help="steps per round and variant")
    parser.add_argument("--round-seconds", type=float, default=2.0)
    parser.add_argument("--ids", nargs="*", help="env ids (default: every games env)")
    args = parser.parse_args()
    ids = args.ids or [s.id for s in agentgym.list_envs(family="games", kind="env")]
    print(f"{'env':<36} {'steps':>5} {'raw µs/step':>12} {'steps/s':>9} {'wrapped/raw':>12}")
    for env_id in ids:
        try:
            r = measure(env_id, args.rounds, args.steps, args.round_seconds)
        except MissingExtraError as error:
            print(f"{env_id:<36} skipped: {error}")
            continue
        goal = "  (goal <= 1.05)" if env_id in RATIO_IDS else ""
        print(
            f"{env_id:<36} {r['steps']:>5} {r['raw_us_per_step']:>12.1f} "
            f"{r['steps_per_s']:>9.0f} {r['ratio_total']:>6.3f} (median {r['ratio_median']:.3f})"
            f"{goal}"
        )


if __name__ == "__main__":
    main()
