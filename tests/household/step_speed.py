"""Steps a second of household/ALFWorld-v0 against alfworld's engine stepping the same game with
the same commands, in one run (docs/envs/household.md, "Figures").

    .venv/bin/python tests/household/step_speed.py
"""

import random
import time

import agentgym.envs.household  # noqa: F401  (registers the id where the metadata is stale)
from agentgym.envs.household.alfworld_env import ENGINE_LOCK, close_game, ensure_game, play_game
from agentgym.registry import make


def main(games: int = 6, steps: int = 30) -> None:
    env = make("household/ALFWorld-v0").unwrapped
    ours = engine = 0.0
    count = 0
    for index in range(games):
        rng = random.Random(index)
        _, info = env.reset(options={"task_id": f"train/medium/{index}"})
        game = play_game(ensure_game("train", "medium", index, 0))  # the task's cached game
        with ENGINE_LOCK:
            game.reset()
        for _ in range(steps):
            command = rng.choice([c for c in info["admissible_commands"] if c != "help"])
            start = time.perf_counter()
            _, _, terminated, truncated, info = env.step(command)
            ours += time.perf_counter() - start
            start = time.perf_counter()
            game.step(command)
            engine += time.perf_counter() - start
            count += 1
            if terminated or truncated:
                break
        close_game(game)
    env.close()
    print(
        f"{count} steps: household/ALFWorld-v0 {count / ours:.1f} steps/s, "
        f"alfworld's PddlEnv {count / engine:.1f} steps/s, ratio {ours / engine:.2f}"
    )


if __name__ == "__main__":
    main()
