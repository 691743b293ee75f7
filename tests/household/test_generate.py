"""The generator of household games: ALFWorld's task types, affordances, splits and levels,
without playing a game (fast)."""

import re

import alfworld.gen.goal_library as goal_library
import pytest

from agentgym.envs.household.alfworld_env import plans_for, task_type_of
from agentgym.envs.household.generate import (
    HELD_OUT_FLOOR_PLANS,
    LEVELS,
    TASK_TYPES,
    floor_plans,
    generate,
)

AFFORDANCE = {
    "pick_clean_then_place_in_recep": "cleanable",
    "pick_heat_then_place_in_recep": "heatable",
    "pick_cool_then_place_in_recep": "coolable",
}


def _receptacles(problem: str) -> int:
    return len(re.findall(r" - receptacle\n", problem))


@pytest.mark.parametrize("task_type", TASK_TYPES)
@pytest.mark.parametrize("split", ["train", "test"])
def test_every_type_is_generated_on_its_splits_floor_plans(task_type, split):
    for seed in range(5):
        game = generate(task_type, "medium", plans_for(split), seed)
        assert (game.floor_plan in HELD_OUT_FLOOR_PLANS) == (split == "test")
        templates = goal_library.gdict[task_type]["templates"]
        p = game.params
        phrasings = [
            t.format(
                obj=p["object_target"].lower(),
                recep=p["parent_target"].lower(),
                toggle=p["toggle_target"].lower(),
                mrecep="",
            )
            for t in templates
        ]
        assert game.goal in phrasings


def test_held_out_floor_plans_are_only_in_test():
    assert set(HELD_OUT_FLOOR_PLANS) <= set(floor_plans())
    assert not set(plans_for("train")) & set(HELD_OUT_FLOOR_PLANS)
    assert not set(plans_for("dev")) & set(HELD_OUT_FLOOR_PLANS)
    assert set(plans_for("test")) == set(HELD_OUT_FLOOR_PLANS)


@pytest.mark.parametrize("task_type", list(AFFORDANCE))
def test_the_target_has_the_affordance_its_task_needs(task_type):
    for seed in range(5):
        game = generate(task_type, "easy", plans_for("train"), seed)
        target = game.params["object_target"]
        ids = re.findall(rf"\(objectType ([^?\s]\S*) {target}Type\)", game.problem)
        assert ids
        for oid in ids:
            assert f"({AFFORDANCE[task_type]} {oid})" in game.problem


def test_the_target_never_starts_in_the_goals_receptacle_type():
    for seed in range(10):
        game = generate("pick_and_place_simple", "hard", plans_for("train"), seed)
        target, parent = game.params["object_target"], game.params["parent_target"]
        for oid in re.findall(rf"\(objectType ([^?\s]\S*) {target}Type\)", game.problem):
            (rid,) = re.findall(rf"\(inReceptacle {oid} (\S+)\)", game.problem)
            assert f"(receptacleType {rid} {parent}Type)" not in game.problem


def test_pick_two_has_two_targets_and_look_at_a_lamp():
    for seed in range(5):
        two = generate("pick_two_obj_and_place", "easy", plans_for("train"), seed)
        target = two.params["object_target"]
        assert len(re.findall(rf"\(objectType [^?\s]\S* {target}Type\)", two.problem)) >= 2
        look = generate("look_at_obj_in_light", "easy", plans_for("train"), seed)
        lamp = look.params["toggle_target"]
        assert lamp in ("DeskLamp", "FloorLamp")
        assert re.search(rf"\(toggleable {lamp}_bar_\S+\)", look.problem)


def test_a_seed_names_one_game_and_levels_grow():
    a = generate("pick_heat_then_place_in_recep", "hard", plans_for("train"), 7)
    b = generate("pick_heat_then_place_in_recep", "hard", plans_for("train"), 7)
    assert a == b
    sizes = {
        level: sum(
            _receptacles(generate(t, level, plans_for("train"), s).problem)
            for t in TASK_TYPES
            for s in range(3)
        )
        for level in LEVELS
    }
    assert sizes["easy"] < sizes["medium"] < sizes["hard"]


def test_task_types_are_balanced_by_index():
    ids = [f"train/easy/{i}" for i in range(60)]
    assert {t: sum(task_type_of(i) == t for i in ids) for t in TASK_TYPES} == dict.fromkeys(
        TASK_TYPES, 10
    )


def test_unknown_task_type_or_level_is_one_clear_line():
    with pytest.raises(ValueError, match="unknown task type 'cook'"):
        generate("cook", "easy", plans_for("train"), 0)
    with pytest.raises(ValueError, match="unknown level 'expert'"):
        generate("pick_and_place_simple", "expert", plans_for("train"), 0)
