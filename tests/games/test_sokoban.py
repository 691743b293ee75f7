"""Sokoban: generator, rules, feedback, lost states and the A* oracle."""

import time

import numpy as np
import pytest

import agentgym
from agentgym.envs.games.puzzles.sokoban import NAMES, SokobanEnv, SokobanWorld, _solve
from agentgym.task_env import InvalidAction

LEVELS = ("easy", "medium", "hard")

CORRIDOR = """
#######
#@ $ .#
#######
"""

CORNER = """
######
# $@.#
#    #
######
"""

ROOM = """
######
#    #
# $$ #
# @. #
#  . #
######
"""


def generate(level, seed):
    return SokobanEnv.generate(np.random.default_rng(seed), **SokobanEnv.levels[level])


def play(world, plan):
    for action in plan:
        world.apply(action)
    return world


def count_pushes(world, plan):
    walker, pushes = world.copy(), 0
    for action in plan:
        direction = NAMES.index(action)
        pushes += walker.player + walker.deltas[direction] in walker.boxes
        walker.apply(action)
    return pushes


@pytest.mark.parametrize("level", LEVELS)
def test_the_same_seed_generates_the_same_level(level):
    assert generate(level, 7).render() == generate(level, 7).render()


def test_different_seeds_generate_different_levels():
    assert len({generate("medium", seed).render() for seed in range(5)}) == 5


@pytest.mark.parametrize("level", LEVELS)
def test_levels_have_the_advertised_boxes_and_start_unsolved(level):
    for seed in range(5):
        world = generate(level, seed)
        assert len(world.boxes) == len(world.goals) == SokobanEnv.levels[level]["boxes"]
        assert not world.solved() and not world.lost()


@pytest.mark.parametrize("level", LEVELS)
def test_the_solver_solves_generated_levels_within_the_level_bounds(level):
    bounds = SokobanEnv.levels[level]
    for seed in range(8):
        world = generate(level, seed)
        plan = SokobanEnv.solve(world)
        assert len(plan) <= bounds["max_moves"]
        assert count_pushes(world, plan) >= bounds["min_pushes"]
        assert play(world.copy(), plan).solved()


def test_the_solver_plans_the_shortest_walk_in_a_corridor():
    assert SokobanEnv.solve(SokobanWorld.from_text(CORRIDOR)) == ["right", "right", "right"]


def test_the_solver_has_no_plan_when_solved_or_lost():
    solved = SokobanWorld.from_text("######\n#@*  #\n######")
    assert solved.solved() and SokobanEnv.solve(solved) == []
    stuck = SokobanWorld.from_text("#####\n#$ .#\n# @ #\n#####")
    assert stuck.lost() and _solve(stuck) is None and SokobanEnv.solve(stuck) == []


def test_the_hard_solver_and_generator_take_well_under_a_second():
    for seed in range(5):
        start = time.perf_counter()
        world = generate("hard", seed)
        generated = time.perf_counter()
        SokobanEnv.solve(world)
        assert generated - start < 1.0
        assert time.perf_counter() - generated < 1.0


def test_walking_moves_the_player():
    world = SokobanWorld.from_text(CORRIDOR)
    assert world.apply("right") == "You moved right."
    assert world.render().splitlines()[1] == "# @$ .#"


def test_walking_into_a_box_pushes_it_and_a_box_on_a_goal_is_shown_as_star():
    world = SokobanWorld.from_text(CORRIDOR)
    play(world, ["right", "right"])
    feedback = world.apply("right")
    assert feedback == "You pushed a box right; it is on a goal (1/1)."
    assert world.render().splitlines()[1] == "#   @*#"
    assert world.solved()


@pytest.mark.parametrize(
    "text",
    ["left", "l", "west", "w", "move left", "Move Left.", "←", "Action: `left`", "I see\nleft"],
)
def test_direction_spellings_are_read(text):
    world = SokobanWorld.from_text(ROOM)
    start = world.player
    world.apply(text)
    assert world.player == start - 1


def test_walking_into_a_wall_is_invalid_names_the_open_directions_and_changes_nothing():
    world = SokobanWorld.from_text(CORRIDOR)
    before = world.key()
    with pytest.raises(InvalidAction, match=r"there is a wall above you; you can move right"):
        world.apply("up")
    assert world.key() == before


def test_pushing_a_box_into_a_wall_is_invalid_and_changes_nothing():
    world = SokobanWorld.from_text("######\n#  .##\n# @$##\n######")
    before = world.key()
    with pytest.raises(InvalidAction, match=r"box right of you cannot be pushed right: .*wall"):
        world.apply("right")
    assert world.key() == before


def test_pushing_two_boxes_at_once_is_invalid_and_changes_nothing():
    world = SokobanWorld.from_text("#######\n#@$$..#\n#     #\n#######")
    before = world.key()
    with pytest.raises(InvalidAction, match=r"another box is behind it"):
        world.apply("right")
    assert world.key() == before


@pytest.mark.parametrize("text", ["", "   ", "jump", "\\u0000;DROP TABLE", "🙂", "e.g. nothing"])
def test_text_without_a_direction_is_invalid_with_the_syntax(text):
    with pytest.raises(InvalidAction, match=r"write one of up, down, left, right"):
        SokobanWorld.from_text(ROOM).apply(text)


def test_two_directions_in_one_action_are_invalid():
    with pytest.raises(InvalidAction, match=r"several directions \(up and left\)"):
        SokobanWorld.from_text(ROOM).apply("up then left")


def test_pushing_a_box_into_a_corner_without_a_goal_loses():
    world = SokobanWorld.from_text(CORNER)
    assert not world.lost()
    feedback = world.apply("left")
    assert feedback.endswith("That box can never reach a goal now: the level is lost.")
    assert world.lost() and world.status().startswith("lost")


def test_pushing_a_box_against_a_wall_without_goals_loses():
    world = SokobanWorld.from_text("#######\n#     #\n#  $ .#\n#  @  #\n#######")
    assert not world.lost()
    world.apply("up")
    assert world.lost()


def test_a_2x2_block_of_boxes_off_goals_loses():
    world = SokobanWorld.from_text(
        "#########\n#       #\n#  $$   #\n#  $  ..#\n#   $ ..#\n#   @   #\n#########"
    )
    assert not world.lost()
    world.apply("up")
    assert world.lost()


def test_the_key_is_canonical_player_and_sorted_boxes():
    world = SokobanWorld.from_text(ROOM)
    start = world.key()
    play(world, ["left", "right"])
    assert world.key() == start == "@3,2|$2,2;2,3"


def test_legal_actions_are_the_possible_moves_in_a_new_list_each_call():
    world = SokobanWorld.from_text("#######\n#@$$..#\n#     #\n#######")
    first, second = world.legal_actions(), world.legal_actions()
    assert first == ["down"] and first is not second


def test_a_lost_level_terminates_the_episode_with_reward_zero():
    env = agentgym.make("games/Sokoban-v0")
    env.reset(seed=0, options={"difficulty": "easy"})
    state = env.unwrapped.get_state()
    state.world = SokobanWorld.from_text(CORNER)
    env.unwrapped.set_state(state)
    _, reward, terminated, truncated, info = env.step("left")
    assert terminated and not truncated and reward == 0.0
    assert info["verdict"].details.startswith("lost")
