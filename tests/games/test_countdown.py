"""Game24 and Countdown: generator, exact arithmetic, parsing, undo, solver and oracle."""

from fractions import Fraction

import numpy as np
import pytest

import agentgym
from agentgym import InvalidAction
from agentgym.envs.games.puzzles.countdown import (
    CountdownEnv,
    CountdownWorld,
    Game24Env,
    count_solutions,
    game24_level,
    plan,
    solve_world,
)

LEVELS = ("easy", "medium", "hard")
GARBAGE = ["", "   ", "🙂🙃", "((((]]]]", "1/0", "8 / 0", "4 ** 7", "4.5 + 1", "8 + 8 + 8",
           "9" * 400 + " + 4", "combine 8", "\x00\x01", "undo undo undo 4"]  # fmt: skip


def game24(*numbers):
    return CountdownWorld(numbers, 24, use_all=True, integers_only=False)


def countdown(numbers, target):
    return CountdownWorld(numbers, target, use_all=False, integers_only=True)


def play(world, actions):
    for action in actions:
        world.apply(action)
    return world


@pytest.mark.parametrize("env_cls", [Game24Env, CountdownEnv])
@pytest.mark.parametrize("level", LEVELS)
def test_generation_is_deterministic(env_cls, level):
    first = env_cls.generate(np.random.default_rng(7), **env_cls.levels[level])
    second = env_cls.generate(np.random.default_rng(7), **env_cls.levels[level])
    assert (first.start, first.target) == (second.start, second.target)


@pytest.mark.parametrize("level", LEVELS)
def test_game24_instances_have_the_level_the_solver_measures(level):
    for seed in range(8):
        world = Game24Env.generate(np.random.default_rng(seed), level=level)
        assert len(world.start) == 4 and all(1 <= n <= 13 for n in world.start)
        assert game24_level([int(n) for n in world.start]) == level


@pytest.mark.parametrize("env_cls", [Game24Env, CountdownEnv])
@pytest.mark.parametrize("level", LEVELS)
def test_solver_plan_solves_generated_instances(env_cls, level):
    for seed in range(6):
        world = env_cls.generate(np.random.default_rng(seed), **env_cls.levels[level])
        actions = env_cls.solve(world.copy())
        assert actions and "undo" not in actions
        assert play(world, actions).solved()


@pytest.mark.parametrize("level", LEVELS)
def test_countdown_targets_need_the_levels_count_of_numbers(level):
    settings = CountdownEnv.levels[level]
    for seed in range(6):
        world = CountdownEnv.generate(np.random.default_rng(seed), **settings)
        low, high = settings["targets"]
        assert len(world.start) == settings["count"]
        assert low <= world.target <= high and world.target not in world.start
        steps = plan(world.start, world.target, use_all=False, integers_only=True)
        assert len(steps) >= settings["min_used"] - 1  # the solver uses the fewest numbers


def test_known_hard_game24_needs_fractions():
    assert count_solutions([Fraction(n) for n in (1, 5, 5, 5)], Fraction(24)) == (1, 0)
    assert game24_level([5, 5, 5, 1]) == "hard"
    assert game24_level([1, 1, 1, 1]) is None


def test_game24_allows_fractions_along_the_way():
    world = play(game24(1, 5, 5, 5), ["1 / 5", "5 - (1/5)", "(24/5) * 5"])
    assert world.solved()


def test_game24_is_solved_only_when_every_number_is_used():
    world = play(game24(8, 3, 1, 1), ["8 * 3"])
    assert Fraction(24) in world.numbers and not world.solved()


def test_countdown_is_solved_when_any_number_is_the_target():
    world = play(countdown([100, 3, 7, 2], 300), ["100 * 3"])
    assert world.solved()


@pytest.mark.parametrize("action", ["3 - 7", "7 / 2", "7 - 7"])
def test_countdown_refuses_results_that_are_not_positive_whole_numbers(action):
    world = countdown([100, 3, 7, 2, 7], 293)
    with pytest.raises(InvalidAction, match="positive whole number"):
        world.apply(action)
    assert world.numbers == [100, 3, 7, 2, 7] and not world.history


def test_division_by_zero_is_invalid_and_changes_nothing():
    world = play(game24(5, 5, 7, 2), ["5 - 5"])
    before = world.key()
    with pytest.raises(InvalidAction, match="divides by zero"):
        world.apply("7 / 0")
    assert world.key() == before and len(world.history) == 1


def test_unavailable_or_reused_numbers_are_invalid():
    world = game24(4, 7, 8, 1)
    with pytest.raises(InvalidAction, match="not one of the numbers left"):
        world.apply("8 * 3")
    with pytest.raises(InvalidAction, match="only once"):
        world.apply("8 + 8")
    assert world.numbers == [4, 7, 8, 1]


def test_a_wrong_stated_result_is_invalid():
    world = game24(4, 7, 8, 1)
    with pytest.raises(InvalidAction, match="is 28, not 27"):
        world.apply("4 * 7 = 27")
    assert not world.history


@pytest.mark.parametrize(
    ("action", "result"),
    [
        ("8 - 3", 5),
        ("8-3", 5),
        ("combine 8 3 -", 5),
        ("combine 3 and 8 with -", -5),
        ("8 x 3", 24),
        ("8 \u00d7 3", 24),
        ("8 times 3", 24),
        ("8 divided by 3", Fraction(8, 3)),
        ("Action: 8 + 3", 11),
        ("I will play `8 + 3` now.", 11),
        ("**8 * 3**", 24),
        ("8 / 3 = 8/3", Fraction(8, 3)),
    ],
)
def test_action_forms_are_read(action, result):
    world = game24(8, 3, 1, 1)
    world.apply(action)
    assert world.numbers[-1] == result


def test_fraction_operands_are_read_in_both_forms():
    world = play(game24(8, 3, 9, 1), ["8 / 3"])
    assert play(world.copy(), ["(8/3) * 9"]).numbers[-1] == 24
    assert play(world.copy(), ["combine 8/3 9 *"]).numbers[-1] == 24


@pytest.mark.parametrize("action", GARBAGE)
def test_garbage_is_an_invalid_action_with_an_example(action):
    world = game24(4, 7, 8, 8)
    with pytest.raises(InvalidAction) as caught:
        world.apply(action)
    assert str(caught.value)
    assert world.numbers == [4, 7, 8, 8] and not world.history


def test_undo_restores_the_previous_numbers():
    world = play(game24(4, 7, 8, 8), ["8 * 8", "64 - 7"])
    world.apply("undo")
    assert world.numbers == [4, 7, 64]
    world.apply("undo")
    assert world.numbers == [4, 7, 8, 8]
    with pytest.raises(InvalidAction, match="no step to undo"):
        world.apply("undo")


def test_using_every_number_without_24_says_to_undo():
    world = play(game24(1, 2, 3, 4), ["1 + 2", "3 + 3"])
    assert "undo" in world.apply("6 + 4")
    assert not world.solved() and not world.lost()


def test_oracle_undoes_out_of_a_dead_end():
    world = play(game24(1, 5, 5, 5), ["5 + 5"])
    assert plan(world.numbers, world.target, use_all=True, integers_only=False) is None
    actions = solve_world(world)
    assert actions[0] == "undo"
    assert play(world, actions).solved()


def test_key_ignores_the_order_of_the_numbers():
    assert game24(4, 7, 8, 8).key() == game24(8, 4, 8, 7).key()
    assert game24(4, 7, 8, 8).key() != game24(4, 7, 8, 9).key()


def test_legal_actions_are_fresh_lists_of_valid_moves():
    world = countdown([100, 3, 7, 7], 293)
    first = world.legal_actions()
    assert first is not world.legal_actions() and first == world.legal_actions()
    assert "7 - 7" not in first and "7 / 3" not in first and "100 * 7" in first
    for action in first:
        world.copy().apply(action)


def test_an_invalid_step_through_make_is_feedback():
    env = agentgym.make("games/Countdown-v0")
    obs, info = env.reset(seed=3)
    obs, reward, terminated, _, info = env.step("1/0")
    assert info["invalid_action"] and reward == 0.0 and not terminated
    assert obs.startswith("Invalid action:") and "Target:" in obs
    env.close()
