"""Benchmark: GiGPO against GRPO at the same budget, over several seeds, with confidence
intervals.

Not a timed test: a measurement for docs/baselines.md. Both algorithms start from the same
format-warm-started ``tiny`` policy (SFT on the random agent's episodes: near chance) and
train on FrozenLake (multi-step, reward only at the goal, holes end the episode: which step
was good is exactly what GiGPO's anchor-state groups estimate) with identical settings and
seeds; only the advantage differs. Each seed changes the task draws, the env and sampling
seeds and the minibatch order. Reported per algorithm: the success-rate curve (mean over
seeds, 95% bootstrap interval over seeds, per iteration) and the mean success over all
iterations (area under the curve); and the paired difference GiGPO - GRPO per seed.

    python tests/perf/compare_gigpo_grpo.py [--seeds 5] [--iterations 12] [--tasks 1]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from agentgym.baselines import expert_iteration, gigpo, grpo
from agentgym.baselines.common import QUICK
from agentgym.eval.stats import bootstrap_ci

FAST = {**QUICK, "checkpoint_every": 10**6}


def warm_start(directory: Path, options: argparse.Namespace) -> Path:
    args = expert_iteration.Args(
        **{**FAST, "difficulty": options.difficulty, "tasks": options.tasks},
        model="tiny",
        demos="random",
        keep="all",
        iterations=6,
        output_dir=str(directory / "warm"),
    )
    args.learning_rate = 3e-3
    args.checkpoint_every = 1
    run = expert_iteration.train(args)
    return run.latest_checkpoint() / "policy"


def ci(values: list[float]) -> str:
    mean, low, high = bootstrap_ci([[v] for v in values])
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--tasks", type=int, default=1)
    parser.add_argument("--difficulty", default="easy")
    options = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="gigpo-vs-grpo-"))
    policy = warm_start(directory, options)
    curves: dict[str, list[list[float]]] = {"grpo": [], "gigpo": []}
    for seed in range(1, options.seeds + 1):
        for name, module in (("grpo", grpo), ("gigpo", gigpo)):
            args = module.Args(
                **{**FAST, "difficulty": options.difficulty, "tasks": options.tasks},
                model=str(policy),
                seed=seed,
                iterations=options.iterations,
                output_dir=str(directory / f"{name}-{seed}"),
            )
            run = module.train(args)
            curves[name].append([row["rollout/success_rate"] for row in run.metrics()])
    print(
        f"\nFrozenLake {options.difficulty}, {options.tasks} task(s), {options.seeds} seeds, "
        f"{options.iterations} iterations of {FAST['groups']}x{FAST['group_size']} episodes"
    )
    print("\niteration  " + "  ".join(f"{name:>24}" for name in curves))
    for i in range(options.iterations):
        cells = [ci([curve[i] for curve in curves[name]]) for name in curves]
        print(f"{i:>9}  " + "  ".join(f"{cell:>24}" for cell in cells))
    auc = {name: [float(np.mean(c)) for c in values] for name, values in curves.items()}
    print("\nmean success over all iterations (area under the curve):")
    for name, values in auc.items():
        print(f"  {name:6} {ci(values)}   per seed: {' '.join(f'{v:.3f}' for v in values)}")
    difference = [g - r for g, r in zip(auc["gigpo"], auc["grpo"], strict=True)]
    print(f"  gigpo - grpo (paired by seed): {ci(difference)}")
    last = {name: [float(np.mean(c[-3:])) for c in values] for name, values in curves.items()}
    print("mean success over the last 3 iterations:")
    for name, values in last.items():
        print(f"  {name:6} {ci(values)}")


if __name__ == "__main__":
    main()
