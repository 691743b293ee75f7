"""Measure how often a task-blind policy passes each MiniWoB++ pixel twin: the next task's
oracle solution replayed, coordinates and all (the checker's ``replay_another_task``).

Not a test (minutes of Chromium); its output is ``envs/gui/data/pixel_blind_rates.json``, which
:mod:`agentgym.envs.gui.pixel_ids` reads to leave out every twin a blind replay passed: on a
pixel page a target that sits in the same place, or is large, is hit by clicking where another
task's target was.

    python tests/perf/gui_blind_rates.py [--tasks 6]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).parents[2] / "envs" / "gui" / "data" / "pixel_blind_rates.json"


def solution(env: Any, task_id: str, limit: int = 40) -> list[str]:
    """The oracle's actions on ``task_id``."""
    env.reset(seed=0, options={"task_id": task_id})
    played: list[str] = []
    while (action := env.unwrapped.oracle_action()) is not None and len(played) < limit:
        played.append(action)
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    return played


def blind_rate(env_id: str, tasks: int) -> float:
    """The mean score of replaying task i+1's solution on task i, over ``tasks`` dev tasks."""
    import agentgym

    env = agentgym.make(env_id)
    try:
        ids = env.unwrapped.tasks.ids("dev")[: tasks + 1]
        solutions = [solution(env, task_id) for task_id in ids]
        total = 0.0
        for task_id, donor in zip(ids, solutions[1:], strict=False):
            env.reset(seed=0, options={"task_id": task_id})
            info: dict[str, Any] = {}
            for action in donor:
                _, _, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    break
            total += info["verdict"].score if "verdict" in info else 0.0
        return total / (len(ids) - 1)
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    args = parser.parse_args()
    from agentgym.envs.gui.pixel_ids import register_pixel_twins
    from agentgym.registry import list_envs

    register_pixel_twins(every=True)
    ids = sorted(s.id for s in list_envs("gui", kind="env") if s.id.startswith("gui/miniwob_"))
    rates = {}
    for env_id in ids:
        rates[env_id] = round(blind_rate(env_id, args.tasks), 3)
        print(env_id, rates[env_id], flush=True)
    OUT.write_text(json.dumps({"tasks": args.tasks, "rates": rates}, indent=1) + "\n")


if __name__ == "__main__":
    main()
