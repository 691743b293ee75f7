"""roguelike/Crafter-v0: the text against crafter's own semantic view, the game against
crafter's own, actions, BALROG's progression, the bot, and an evaluation end to end.

(``agentgym check`` on the id runs in tests/test_conformance.py, as for every id.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import crafter
import numpy as np
import pytest

from agentgym.cli import main
from agentgym.envs.roguelike.crafter_env import (
    ACHIEVEMENTS,
    CrafterEnv,
    _order_chunks,
    crafter_seed,
    new_game,
    progression,
)
from agentgym.envs.roguelike.crafter_text import NAMES, VIEW, local_grid, parse_action

TASK = "test/standard/0"


@pytest.fixture
def env() -> Iterator[CrafterEnv]:
    made = CrafterEnv()
    yield made
    made.close()


def _semantic_names(game: object) -> np.ndarray:
    """crafter's own semantic map of the world (ids), as names."""
    ids = dict(game._world._mat_ids)  # type: ignore[attr-defined]
    ids.update({k.__name__.lower(): v for k, v in game._sem_view._obj_ids.items()})  # type: ignore[attr-defined]
    names = np.empty(max(ids.values()) + 1, dtype=object)
    for name, index in ids.items():
        names[index] = name
    return names[game._sem_view()]  # type: ignore[attr-defined]


def test_the_local_view_is_crafters_semantic_view(env: CrafterEnv) -> None:
    """Every cell of the text's 9 x 7 view is what crafter's semantic map holds there, with
    the player put in the world's corners and middle and stepping about (cells outside the
    world are None)."""
    env.reset(options={"task_id": TASK})
    game = env._world.game  # type: ignore[union-attr]
    world, rng = game._world, np.random.default_rng(1)
    compared = 0
    for corner in [(0, 0), (63, 63), (0, 63), (63, 0), (30, 34)]:
        if world[corner][1] is None:
            world.move(game._player, corner)
        for _ in range(8):
            env.step(NAMES[rng.integers(1, 6)])
            semantic = _semantic_names(game)
            px, py = (int(v) for v in game._player.pos)
            for x, column in enumerate(local_grid(game)):
                for y, name in enumerate(column):
                    cx, cy = px + x - VIEW[0] // 2, py + y - VIEW[1] // 2
                    inside = 0 <= cx < semantic.shape[0] and 0 <= cy < semantic.shape[1]
                    assert name == (semantic[cx, cy] if inside else None)
                    compared += inside
    assert 1000 < compared < 5 * 8 * 63  # some cells lay outside the world


def test_the_text_names_the_closest_of_each_kind(env: CrafterEnv) -> None:
    obs, _ = env.reset(options={"task_id": TASK})
    game = env._world.game  # type: ignore[union-attr]
    grid = local_grid(game)
    seen = obs.split("You see (the closest of each kind):\n")[1].split("\nYou face")[0]
    kinds = {name for column in grid for name in column if name not in (None, "player")}
    assert {line[2:].split(":")[0] for line in seen.splitlines()} == kinds
    assert "- grass: 1 step north" in seen.splitlines()
    assert "- tree: 3 steps north and 4 steps west" in seen.splitlines()
    assert "You face south, towards grass." in obs
    assert "- health: 9/9\n- food: 9/9\n- drink: 9/9\n- energy: 9/9" in obs
    assert "Your inventory is empty." in obs


def test_a_game_plays_as_crafters_own_env_plays_it() -> None:
    """200 random actions (night falls from step 147) in our picture-less game and in
    crafter's own env of the same seed, drawing its pictures: the same world at every step
    (crafter's env gets our fixed creature order too, the one departure in its dynamics)."""
    seed = crafter_seed(5)
    ours, theirs = new_game(seed), crafter.Env(seed=seed, length=None)
    theirs.reset()
    _order_chunks(theirs._world)
    rng = np.random.default_rng(0)
    for step in range(200):
        action = int(rng.integers(len(NAMES)))
        ours.step(action)
        image, _, _, info = theirs.step(action)
        assert image.shape == (64, 64, 3)
        assert (ours._sem_view() == info["semantic"]).all(), step
        assert ours._player.inventory == info["inventory"]
    assert ours._world.daylight < 0.5  # night: the picture drew its noise


def test_actions_are_named_in_words_and_a_wrong_one_is_feedback(env: CrafterEnv) -> None:
    assert [parse_action(name) for name in NAMES] == list(range(17))
    assert parse_action("move_left") == parse_action("MOVE WEST") == 1
    _, info = env.reset(options={"task_id": TASK})
    assert info["admissible_actions"] == list(NAMES)
    obs, reward, terminated, truncated, info2 = env.step("fly north")
    assert info2["invalid_action"] and not (terminated or truncated) and reward == 0.0
    assert obs.startswith("Invalid action: 'fly north' is not an action. Write one of: Noop,")
    assert info2["state_key"] == info["state_key"]  # no game time passed
    assert env._world.steps == 0  # type: ignore[union-attr]


def test_progression_is_the_share_of_22_achievements(env: CrafterEnv) -> None:
    assert len(ACHIEVEMENTS) == 22
    assert progression({}) == 0.0
    assert progression({"collect_wood": 3, "place_table": 1, "eat_cow": 0}) == 2 / 22
    assert progression(dict.fromkeys(ACHIEVEMENTS, 1)) == 1.0
    env.reset(options={"task_id": TASK})
    for action in ["Move West"] * 4 + ["Move North"] * 2 + ["Do"] * 2:  # to the tree, chop
        obs, reward, *_, info = env.step(action)
        if reward:
            break
    assert obs.startswith("Achievement unlocked: collect wood.")
    verdict = info["verdict"]
    assert reward == verdict.score == 1 / 22 and not verdict.passed
    assert verdict.components["collect_wood"] == 1.0 and verdict.components["eat_cow"] == 0.0


def test_a_task_is_one_world_and_snapshots_restore_it(env: CrafterEnv) -> None:
    first, _ = env.reset(options={"task_id": TASK})
    other, _ = env.reset(options={"task_id": "test/standard/1"})
    again, _ = env.reset(options={"task_id": TASK})
    assert first == again != other
    snapshot = env.get_state()
    after = [env.step(a)[0] for a in ("Move West", "Do", "Move North", "Do")]
    env.set_state(snapshot)
    assert [env.step(a)[0] for a in ("Move West", "Do", "Move North", "Do")] == after


def test_the_bot_beats_random_actions_on_a_task(env: CrafterEnv) -> None:
    """On one task, 150 steps: the bot crafts, random keys do not (the comparison over many
    tasks, with an interval, is the checker's, and the docs' figures)."""
    scores = {}
    for player in ("bot", "random"):
        env.reset(options={"task_id": TASK})
        rng = np.random.default_rng(0)
        for _ in range(150):
            action = env.oracle_action() if player == "bot" else NAMES[rng.integers(17)]
            *_, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        scores[player] = info["verdict"]
    assert scores["bot"].components["make_wood_pickaxe"] == 1.0
    assert scores["bot"].score >= scores["random"].score + 4 / 22


def test_agentgym_eval_runs_random_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``agentgym eval --env roguelike/Crafter-v0 --agent random --tasks 2`` (50 steps each):
    two episodes recorded, none errored."""
    out = tmp_path / "run"
    args = ["eval", "--env", "roguelike/Crafter-v0", "--agent", "random", "--tasks", "2"]
    assert main([*args, "--max-steps", "50", "--out", str(out), "--retries", "0"]) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert {r["spec"]["env_id"] for r in records} == {"roguelike/Crafter-v0"}
    assert [r["status"] for r in records] == ["truncated", "truncated"]  # at 50 steps
    assert "roguelike/Crafter-v0" in capsys.readouterr().out
