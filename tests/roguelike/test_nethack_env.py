"""roguelike/NetHack-v0's game: seeded games, text actions, BALROG's progression, the bot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agentgym.envs.roguelike.nethack_env import NetHackEnv, game_seeds, progression
from agentgym.envs.roguelike.nethack_text import KEYS
from agentgym.eval import evaluate


@pytest.fixture
def env() -> Iterator[NetHackEnv]:
    made = NetHackEnv()
    yield made
    made.close()


def test_progression_is_balrogs_table() -> None:
    assert progression(1, 1) == 0.0
    assert progression(2, 1) == pytest.approx(0.015392269075361172)
    assert progression(2, 5) == pytest.approx(0.029108986017138745)  # Xp:5 beats Dlvl:2
    assert progression(10, 1) == pytest.approx(0.12558597019922987)
    assert progression(60, 40) == 0.0  # outside BALROG's table


def test_a_task_is_one_game(env: NetHackEnv) -> None:
    first, info = env.reset(options={"task_id": "test/standard/0"})
    again, _ = env.reset(options={"task_id": "test/standard/0"})
    other, _ = env.reset(options={"task_id": "test/standard/1"})
    assert first == again != other
    assert "welcome to NetHack!" in first
    assert "\n\ninventory:\na: " in first
    assert "Dlvl:1 " in first  # the status lines, in the map
    assert info["verdict"].score == 0.0
    assert game_seeds(0) != game_seeds(1)


def test_the_same_actions_replay_the_same_game(env: NetHackEnv) -> None:
    rng = np.random.default_rng(3)
    actions = [str(a) for a in rng.choice(["north", "south", "east", "west", "search"], 40)]
    runs = []
    for _ in range(2):
        env.reset(options={"task_id": "train/standard/7"})
        runs.append([env.step(a)[0] for a in actions])
    assert runs[0] == runs[1]


def test_a_word_that_is_no_action_is_feedback(env: NetHackEnv) -> None:
    env.reset(options={"task_id": "test/standard/0"})
    obs, reward, terminated, truncated, info = env.step("dance a jig")
    assert info["invalid_action"] and not (terminated or truncated)
    assert obs.startswith("Invalid action: 'dance a jig' is not an action.")
    assert reward == 0.0


def test_a_prompt_is_answered_with_a_letter(env: NetHackEnv) -> None:
    env.reset(options={"task_id": "test/standard/0"})
    obs, *_ = env.step("eat")
    assert "What do you want to eat?" in obs
    obs, *_, info = env.step("esc")
    assert not info["invalid_action"]
    assert "What do you want to eat?" not in obs.split("language observation:")[0]


def test_the_bot_goes_down_where_random_keys_do_not(env: NetHackEnv) -> None:
    """On test/standard/1 the bot finds the stairs down in 32 actions; random keys do not in
    100 (the measured comparison over many games is in docs/envs/roguelike.md)."""
    scores = {}
    for player in ("bot", "random"):
        env.reset(options={"task_id": "test/standard/1"})
        rng = np.random.default_rng(0)
        keys = list(KEYS)
        for _ in range(100):
            action = env.oracle_action() if player == "bot" else keys[rng.integers(len(keys))]
            *_, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        scores[player] = info["verdict"].score
    assert scores["bot"] > scores["random"] == 0.0


def test_the_random_agent_runs_end_to_end(tmp_path: Path) -> None:
    """Through the evaluator on 2 test tasks: episodes end at the step cap, none errored."""
    result = evaluate(
        env="roguelike/NetHack-v0", agent="random", tasks=2, max_steps=30, out=tmp_path
    )
    assert len(result.records) == 2
    assert result.summary["overall"]["errored"] == 0
    assert {r.spec.env_id for r in result.records} == {"roguelike/NetHack-v0"}
