"""Learning is shown, not claimed: every baseline takes the tiny policy from near chance to
clearly better on FrozenLake (games family, multi-turn: up to 10 moves, reward only at the
goal), with fixed seeds, on a CPU, in under a minute each.

The start is the format warm start (``warm_policy``): the policy replies with a direction
and succeeds near chance (0.25 on this task, where the random agent's rate is 0.10). The thresholds:
the first iteration's success rate is at most 0.4 and the mean of the last three at least
0.6. Measured curves are in docs/baselines.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from training import fast_args

ITERATIONS = 12
START_AT_MOST = 0.4
END_AT_LEAST = 0.6

CASES = {
    "grpo": ("grpo", {}),
    "grpo-dapo": ("grpo", {"dapo": True}),
    "grpo-dr": ("grpo", {"dr_grpo": True}),
    "grpo-kl": ("grpo", {"kl_coef": 0.05}),
    "rloo": ("rloo", {}),
    "reinforce_pp": ("reinforce_pp", {}),
    "reinforce_pp-baseline": ("reinforce_pp", {"baseline": True}),
    "gigpo": ("gigpo", {}),
    "ppo": ("ppo", {}),
    "ppo-critic-free": ("ppo", {"critic": False}),
    "expert_iteration": ("expert_iteration", {}),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_baseline_learns(case, warm_policy, tmp_path):
    from agentgym.baselines.cli import load_algorithm

    algorithm, overrides = CASES[case]
    args = fast_args(
        algorithm, tmp_path, model=str(warm_policy), iterations=ITERATIONS, **overrides
    )
    run = load_algorithm(algorithm).train(args)
    success = [row["rollout/success_rate"] for row in run.metrics()]
    assert len(success) == ITERATIONS
    curve = " ".join(f"{s:.2f}" for s in success)
    print(f"\nlearning curve {case}: {curve}")  # docs/baselines.md quotes these (pytest -s)
    assert success[0] <= START_AT_MOST, f"{case} did not start near chance: {curve}"
    assert np.mean(success[-3:]) >= END_AT_LEAST, f"{case} did not learn: {curve}"
