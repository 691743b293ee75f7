"""BabyAI ids: real minigrid levels, text view, action parsing, the BabyAI bot as oracle."""

from __future__ import annotations

import pickle
import re
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

import agentgym

pytest.importorskip("minigrid")

from minigrid.core.grid import Grid
from minigrid.core.world_object import Ball, Door, Key

from agentgym.envs.games.babyai import (
    ACTIONS,
    BabyAIEnv,
    _make_level,
    describe_view,
)

IDS = ["GoTo", "Pickup", "Open", "PutNext", "PickUpSeqGoTo"]
DIFFICULTIES = ["easy", "medium", "hard"]


def make(name: str):
    return agentgym.make(f"games/BabyAI{name}-v0")


def play_oracle(env, seed: int, difficulty: str) -> tuple[dict, int]:
    _, info = env.reset(seed=seed, options={"difficulty": difficulty})
    steps = 0
    while True:
        action = env.unwrapped.oracle_action()
        assert action is not None, f"the oracle gave up after {steps} steps"
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        assert not info["invalid_action"]
        if terminated or truncated:
            return info, steps


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("name", IDS)
def test_oracle_reaches_score_one(name, difficulty):
    env = make(name)
    for seed in range(3):
        info, _ = play_oracle(env, seed, difficulty)
        assert info["verdict"].passed and info["verdict"].score == 1.0
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", IDS)
def test_oracle_succeeds_on_fifty_seeds_per_level_and_levels_get_longer(name):
    env = make(name)
    limit = env.spec.max_episode_steps
    mean_steps = []
    for difficulty in DIFFICULTIES:
        lengths = []
        for seed in range(100, 150):
            info, steps = play_oracle(env, seed, difficulty)
            assert info["verdict"].passed, (difficulty, seed, info["task_id"])
            assert steps <= limit
            lengths.append(steps)
        mean_steps.append(np.mean(lengths))
    env.close()
    assert mean_steps == sorted(mean_steps), mean_steps


@pytest.mark.parametrize("name", IDS)
def test_gymnasium_checker_passes_with_warnings_as_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(make(name).unwrapped)


def transcript(seed: int, actions: list[str]) -> list[tuple]:
    env = make("PickUpSeqGoTo")
    steps: list[tuple] = [env.reset(seed=seed, options={"difficulty": "medium"})]
    for action in actions:
        steps.append(env.step(action))
        if steps[-1][2] or steps[-1][3]:
            break
    env.close()
    return steps


def test_same_seed_and_actions_give_an_identical_episode():
    rng = np.random.default_rng(3)
    actions = [ACTIONS[i] for i in rng.integers(len(ACTIONS), size=40)]
    assert data_equivalence(transcript(11, actions), transcript(11, actions), exact=True)


def test_different_seeds_give_different_tasks():
    first, second = transcript(1, []), transcript(2, [])
    assert first[0][1]["task_id"] != second[0][1]["task_id"]


@pytest.mark.parametrize("text", ["", "   ", "fly away", "😀 go", "turn left please now", "\x00"])
def test_unknown_text_is_invalid_feedback_listing_the_actions(text):
    env = make("GoTo")
    _, info = env.reset(seed=0)
    key = info["state_key"]
    obs, reward, terminated, truncated, info = env.step(text)
    assert info["invalid_action"] and info["invalid_actions"] == 1
    assert obs.startswith("Invalid action:")
    assert all(action in obs for action in ACTIONS)
    assert info["state_key"] == key and reward == 0.0 and not (terminated or truncated)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("turn left", "You turn left."),
        ("`turn right`", "You turn right."),
        ("Action: TURN LEFT.", "You turn left."),
        ("I should look around first.\nturn right", "You turn right."),
        ("rotate left", "You turn left."),
    ],
)
def test_actions_are_read_from_wrapped_text(text, expected):
    env = make("GoTo")
    env.reset(seed=0)
    obs, *_, info = env.step(text)
    assert not info["invalid_action"]
    assert obs.startswith(expected)


def test_every_action_is_always_admissible_as_a_new_list():
    env = make("Open")
    _, first = env.reset(seed=0)
    _, *_, second = env.step("turn left")
    assert first["admissible_actions"] == second["admissible_actions"] == list(ACTIONS)
    assert first["admissible_actions"] is not second["admissible_actions"]


def test_observation_has_mission_inventory_and_view():
    env = make("GoTo")
    obs, _ = env.reset(seed=4, options={"difficulty": "medium"})
    mission = env.unwrapped._world.mission
    assert obs.startswith(f"Your mission: {mission}.")
    assert f"Mission: {mission}" in obs and "You carry nothing." in obs
    assert re.search(r"^a wall \d+ steps? (forward|left|right)$", obs, re.MULTILINE)


def test_picking_up_the_target_shows_it_carried_and_passes():
    env = make("Pickup")
    info, _ = play_oracle(env, 0, "easy")
    world = env.unwrapped._world
    carried = world.env.carrying
    assert info["verdict"].passed
    assert f"You carry a {carried.color} {carried.type}." in env.unwrapped.render()


def test_view_names_offsets_relative_to_where_the_agent_faces():
    level = _make_level(("BabyAI-GoToLocal-v0", {}))
    level.reset(seed=0)
    level.grid = Grid(8, 8)
    level.grid.wall_rect(0, 0, 8, 8)
    level.agent_pos, level.agent_dir = (3, 5), 3  # facing "up" (north)
    level.carrying = None
    level.grid.set(2, 3, Ball("red"))
    level.grid.set(5, 5, Key("blue"))
    level.grid.set(3, 2, Door("green", is_locked=True))
    assert describe_view(level) == [
        "a wall 3 steps left",  # the wall ahead is hidden by the door
        "a blue key 2 steps right",
        "a red ball 1 step left and 2 steps forward",
        "a locked green door 3 steps forward",
    ]
    level.agent_dir = 0  # facing east: the ball is behind, out of view
    assert describe_view(level) == [
        "a wall 4 steps forward",
        "a wall 2 steps right",
        "a blue key 2 steps forward",
        "a locked green door 3 steps left",
    ]


def test_state_key_is_canonical_not_history():
    env = make("GoTo")
    _, info = env.reset(seed=2)
    start = info["state_key"]
    for _ in range(4):
        _, *_, info = env.step("turn left")
    assert info["state_key"] == start
    _, *_, info = env.step("turn right")
    assert info["state_key"] != start


@pytest.mark.parametrize("name", IDS)
def test_oracle_resyncs_after_the_agent_acted_on_its_own(name):
    env = make(name)
    rng = np.random.default_rng(0)
    for seed in range(3):
        _, info = env.reset(seed=seed, options={"difficulty": "medium"})
        env.unwrapped.oracle_action()  # the bot starts tracking the episode here
        for _ in range(6):  # several steps it is not told about, without pick up/drop/toggle
            _, _, terminated, truncated, info = env.step(ACTIONS[int(rng.integers(3))])
        assert not (terminated or truncated) or info["verdict"].passed
        steps = 0
        while not (terminated or truncated):
            _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            steps += 1
            assert steps <= 128
        assert info["verdict"].passed


def test_oracle_keeps_answering_after_random_play_that_opens_boxes():
    rng = np.random.default_rng(1)
    boxes_opened = 0
    for name in IDS:
        env = make(name)
        for seed in range(10):
            env.reset(seed=seed)
            terminated = truncated = False
            for _ in range(30):  # random play, pick up / drop / toggle included
                obs, _, terminated, truncated, _ = env.step(ACTIONS[int(rng.integers(6))])
                boxes_opened += "it was empty and is gone" in obs
                if terminated or truncated:
                    break
            while not (terminated or truncated):
                action = env.unwrapped.oracle_action()
                assert action is not None, (name, seed, env.unwrapped._world.status)
                _, _, terminated, truncated, _ = env.step(action)
        env.close()
    assert boxes_opened > 0  # the case where minigrid's bot alone gives up was exercised


def test_snapshot_restores_the_episode_and_pickles():
    env = make("PickUpSeqGoTo")
    env.reset(seed=5, options={"difficulty": "hard"})
    base = env.unwrapped
    for _ in range(3):
        env.step(base.oracle_action())
    snapshot = pickle.loads(pickle.dumps(base.get_state()))
    actions = ["turn left", "go forward", "pick up", "toggle", "go forward", "drop"]
    first = [base.step(a) for a in actions] + [base.oracle_action()]
    base.set_state(snapshot)
    again = [base.step(a) for a in actions] + [base.oracle_action()]
    assert data_equivalence(first, again, exact=True)
    assert BabyAIEnv.metadata["supports_state_snapshot"] is True


def test_pickupseqgoto_missions_are_pick_up_then_go_to():
    env = make("PickUpSeqGoTo")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert re.fullmatch(
            r"Your mission: pick up (a|the) \w+ \w+, then go to (a|the) \w+ \w+\.", info["goal"]
        )


def test_every_id_documents_its_levels():
    for name in IDS:
        env = make(name).unwrapped
        for level, _ in env.levels.values():
            assert level.split("-v0")[0] in type(env).__doc__
