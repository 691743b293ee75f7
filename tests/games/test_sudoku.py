"""Sudoku: unique-solution generator, the constraint solver, placement rules and the oracle."""

import time

import numpy as np
import pytest

import agentgym
from agentgym.envs.games.puzzles.sudoku import SudokuEnv, SudokuWorld, count_solutions, solve_grid
from agentgym.task_env import InvalidAction

LEVELS = ("easy", "medium", "hard")

# The puzzle from Wikipedia's Sudoku article, and its solution.
PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"


def digits(text):
    return tuple(0 if ch == "." else int(ch) for ch in text)


def wiki():
    return SudokuWorld(digits(PUZZLE))


def generate(level, seed):
    return SudokuEnv.generate(np.random.default_rng(seed), **SudokuEnv.levels[level])


@pytest.mark.parametrize("level", LEVELS)
def test_the_same_seed_generates_the_same_puzzle(level):
    assert generate(level, 5).render() == generate(level, 5).render()


def test_different_seeds_generate_different_puzzles():
    assert len({generate("easy", seed).givens for seed in range(5)}) == 5


@pytest.mark.parametrize(
    ("level", "lowest", "highest"), [("easy", 40, 40), ("medium", 32, 32), ("hard", 26, 28)]
)
def test_puzzles_have_the_level_number_of_givens(level, lowest, highest):
    for seed in range(5):
        givens = sum(1 for v in generate(level, seed).givens if v)
        assert lowest <= givens <= highest


@pytest.mark.parametrize("level", LEVELS)
def test_generated_puzzles_have_exactly_one_solution(level):
    for seed in range(5):
        assert count_solutions(generate(level, seed).givens, limit=10) == 1


def test_the_hard_generator_takes_well_under_a_second():
    for seed in range(5):
        start = time.perf_counter()
        generate("hard", seed)
        assert time.perf_counter() - start < 1.0


def test_the_solver_finds_the_known_solution():
    assert solve_grid(digits(PUZZLE)) == list(digits(SOLUTION))


def test_count_solutions_stops_at_the_limit_and_sees_conflicting_clues():
    assert count_solutions([0] * 81, limit=2) == 2
    clash = [0] * 81
    clash[0] = clash[1] = 5
    assert count_solutions(clash) == 0 and solve_grid(clash) is None


def test_a_placement_is_written_and_listed_as_an_entry():
    world = wiki()
    assert world.apply("put 1 3 4") == "Put 4 at row 1, column 3. 50 empty cell(s) left."
    assert world.render().splitlines()[3] == "  1 | 5 3 4 | . 7 . | . . . |"
    assert "Your entries: r1c3=4" in world.render()


@pytest.mark.parametrize(
    "text",
    [
        "put 1 3 4",
        "Put 1,3,4.",
        "set (1, 3) 4",
        "place r1c3 4",
        "put 134",
        "put 4 at 1 3",
        "write 4 in r1c3",
        "I think so.\n`fill 1 3 4`",
    ],
)
def test_placement_spellings_are_read(text):
    world = wiki()
    world.apply(text)
    assert world.grid[2] == 4


def test_a_conflicting_digit_is_rejected_naming_the_cell_that_holds_it():
    world = wiki()
    before = world.key()
    with pytest.raises(InvalidAction, match=r"^5 is already in row 1, at row 1, column 1$"):
        world.apply("put 1 3 5")
    with pytest.raises(InvalidAction, match=r"^9 is already in column 2, at row 3, column 2$"):
        world.apply("put 5 2 9")
    with pytest.raises(InvalidAction, match=r"^6 is already in its box, at row 2, column 1$"):
        world.apply("put 1 3 6")
    assert world.key() == before


@pytest.mark.parametrize("text", ["put 1 1 4", "clear 1 1"])
def test_givens_cannot_be_changed(text):
    world = wiki()
    with pytest.raises(InvalidAction, match=r"row 1, column 1 is a given \(5\)"):
        world.apply(text)
    assert world.grid[0] == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("put 0 3 4", r"the row must be 1-9, got 0"),
        ("put 1 10 4", r"the column must be 1-9, got 10"),
        ("put 1 3 0", r"the digit must be 1-9, got 0; to empty a cell use 'clear R C'"),
        ("put 1 3 123456789012345678901234567890", r"the digit must be 1-9"),
        ("put 1 3", r"'put' takes 3 numbers, got 2"),
        ("clear 1", r"'clear' takes 2 numbers, got 1"),
        ("clear 1 3", r"row 1, column 3 is already empty"),
        ("", r"could not read '': write 'put R C V'"),
        ("🙂🙃", r"could not read"),
    ],
)
def test_invalid_actions_explain_and_change_nothing(text, message):
    world = wiki()
    before = world.key()
    with pytest.raises(InvalidAction, match=message):
        world.apply(text)
    assert world.key() == before


def test_writing_the_digit_a_cell_already_holds_is_invalid():
    world = wiki()
    world.apply("put 1 3 4")
    with pytest.raises(InvalidAction, match="already holds 4"):
        world.apply("put 1 3 4")


def test_a_put_over_an_entry_replaces_it_and_clear_empties_it():
    world = wiki()
    world.apply("put 1 3 4")
    assert (
        world.apply("put 1 3 1") == "Put 1 at row 1, column 3 (replacing 4). 50 empty cell(s) left."
    )
    assert world.apply("clear 1 3") == "Cleared row 1, column 3 (it held 1). 51 empty cell(s) left."
    assert world.grid[2] == 0


def test_solved_needs_every_cell_filled():
    world = wiki()
    assert not world.solved()
    for i, (clue, value) in enumerate(zip(PUZZLE, SOLUTION, strict=True)):
        if clue == ".":
            world.apply(f"put {i // 9 + 1} {i % 9 + 1} {value}")
    assert world.solved() and world.status().startswith("solved")


def test_the_key_holds_the_givens_and_the_entries():
    world = wiki()
    world.apply("put 1 3 4")
    givens, entries = world.key().split("|")
    assert givens == PUZZLE and entries == ".." + "4" + "." * 78


def test_legal_actions_are_exactly_the_valid_ones_in_a_new_list_each_call():
    world = wiki()
    world.apply("put 1 3 4")
    first, second = world.legal_actions(), world.legal_actions()
    assert first == second and first is not second
    assert "clear 1 3" in first and "put 1 3 4" not in first and "put 1 3 1" in first
    for action in first:
        world.copy().apply(action)
    listed = set(first)
    for r in range(1, 10):
        for c in range(1, 10):
            for v in range(1, 10):
                probe = world.copy()
                try:
                    probe.apply(f"put {r} {c} {v}")
                except InvalidAction:
                    continue
                assert f"put {r} {c} {v}" in listed


@pytest.mark.parametrize("level", LEVELS)
def test_the_solver_plan_solves_generated_puzzles(level):
    for seed in range(5):
        world = generate(level, seed)
        for action in SudokuEnv.solve(world):
            world.apply(action)
        assert world.solved()


def test_the_solver_first_clears_wrong_entries():
    world = wiki()
    world.apply("put 1 3 1")  # no conflict, but the solution has 4 there
    plan = SudokuEnv.solve(world)
    assert plan[0] == "clear 1 3" and "put 1 3 4" in plan
    for action in plan:
        world.apply(action)
    assert world.solved()


def test_the_solver_keeps_right_entries():
    world = wiki()
    world.apply("put 1 3 4")
    plan = SudokuEnv.solve(world)
    assert not any(action.startswith("clear") for action in plan) and len(plan) == 50


def test_the_oracle_takes_over_after_wrong_entries():
    env = agentgym.make("games/Sudoku-v0")
    env.reset(seed=0, options={"difficulty": "easy"})
    world = env.unwrapped.get_state().world
    solution = solve_grid(world.givens)
    # A digit that does not conflict but is not the solution's.
    legal = set(world.legal_actions())
    wrong = next(
        f"put {i // 9 + 1} {i % 9 + 1} {v}"
        for i in range(81)
        for v in range(1, 10)
        if v != solution[i] and f"put {i // 9 + 1} {i % 9 + 1} {v}" in legal
    )
    _, _, _, _, info = env.step(wrong)
    assert not info["invalid_action"]
    total, terminated = 0.0, False
    while not terminated:
        _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
        total += reward
    assert total == 1.0
