"""Blocks World: generator, moves and their errors, canonical keys, planners and oracle."""

import string

import numpy as np
import pytest

from agentgym import InvalidAction
from agentgym.envs.games.puzzles.blocksworld import (
    BlocksWorld,
    BlocksWorldEnv,
    bfs_plan,
    greedy_plan,
    random_config,
)

LEVELS = ("easy", "medium", "hard")


def world(stacks, goal):
    return BlocksWorld(tuple(tuple(s) for s in stacks), tuple(tuple(s) for s in goal))


@pytest.mark.parametrize("level", LEVELS)
def test_generation_is_deterministic_and_start_differs_from_goal(level):
    settings = BlocksWorldEnv.levels[level]
    for seed in range(5):
        first = BlocksWorldEnv.generate(np.random.default_rng(seed), **settings)
        second = BlocksWorldEnv.generate(np.random.default_rng(seed), **settings)
        assert first.key() == second.key()
        assert not first.solved()
        assert first.blocks == list(string.ascii_uppercase[: settings["blocks"]])


@pytest.mark.parametrize("level", LEVELS)
def test_solver_plan_solves_generated_instances(level):
    for seed in range(8):
        instance = BlocksWorldEnv.generate(
            np.random.default_rng(seed), **BlocksWorldEnv.levels[level]
        )
        for action in BlocksWorldEnv.solve(instance.copy()):
            instance.apply(action)
        assert instance.solved()


def test_greedy_planner_always_solves_and_is_never_shorter_than_optimal():
    rng = np.random.default_rng(0)
    blocks = list("ABCDE")
    for _ in range(40):
        start, goal = random_config(rng, blocks), random_config(rng, blocks)
        optimal, greedy = bfs_plan(start, goal), greedy_plan(start, goal)
        assert len(greedy) >= len(optimal)
        assert len(greedy) <= 2 * len(optimal)
        replay = world(start, goal)
        for block, dest in greedy:
            replay.apply(f"move {block} {dest}")
        assert replay.solved()


def test_greedy_planner_solves_large_worlds():
    rng = np.random.default_rng(1)
    blocks = list(string.ascii_uppercase[:12])
    for _ in range(20):
        start, goal = random_config(rng, blocks), random_config(rng, blocks)
        replay = world(start, goal)
        for block, dest in greedy_plan(start, goal):
            replay.apply(f"move {block} {dest}")
        assert replay.solved()


def test_bfs_plan_is_optimal_on_a_known_instance():
    # C sits on A; the goal is A on B on C: C to the table, B on C, A on B.
    assert len(bfs_plan((("A", "C"), ("B",)), (("C", "B", "A"),))) == 3


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("move A B", "A is not clear: C is on top of it"),
        ("move B A", "A is not clear: C is on top of it"),
        ("move C C", "cannot be put on itself"),
        ("move B table", "already on the table"),
        ("move C A", "C is already on A"),
        ("move Z B", "no block 'z'; the blocks are A, B, C"),
        ("move B from A to C", "B is on the table, not on A"),
        ("move C", "name one block to move"),
        ("", "could not read"),
        ("🙂🙃", "could not read"),
        ("((((]]]]", "could not read"),
    ],
)
def test_invalid_moves_explain_and_change_nothing(action, message):
    state = world([["A", "C"], ["B"]], [["C", "B", "A"]])
    before = state.key()
    with pytest.raises(InvalidAction, match=message):
        state.apply(action)
    assert state.key() == before


@pytest.mark.parametrize(
    "action",
    ["move C B", "Move c onto b", "put C on B", "move C to B", "C -> B", "move C from A to B",
     "I will do `move C B`."],
)  # fmt: skip
def test_action_forms_are_read(action):
    state = world([["A", "C"], ["B"]], [["C", "B", "A"]])
    state.apply(action)
    assert state.key().startswith("A|BC>")


@pytest.mark.parametrize("action", ["move C table", "put C on the table", "move C to the floor"])
def test_moves_to_the_table_are_read(action):
    state = world([["A", "C"], ["B"]], [["C", "B", "A"]])
    state.apply(action)
    assert state.key().startswith("A|B|C>")


def test_key_is_canonical_and_render_lists_bottom_to_top():
    first = world([["B"], ["A", "C"]], [["C", "B", "A"]])
    second = world([["A", "C"], ["B"]], [["C", "B", "A"]])
    assert first.key() == second.key() == "AC|B>CBA"
    assert first.render() == second.render()
    assert "  A C\n  B\n" in first.render() and "Clear blocks: B, C" in first.render()


def test_goal_counts_stacks_regardless_of_order():
    state = world([["B"], ["A"], ["C"]], [["A"], ["B", "C"]])
    state.apply("move C B")
    assert state.solved()


def test_legal_actions_are_fresh_lists_that_all_apply():
    state = world([["A", "C"], ["B"], ["D"]], [["D", "C", "B", "A"]])
    actions = state.legal_actions()
    assert actions is not state.legal_actions() and actions == state.legal_actions()
    assert "move A B" not in actions and "move C table" in actions and "move B table" not in actions
    for action in actions:
        state.copy().apply(action)
