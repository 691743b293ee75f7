"""Minesweeper: no-guess generator, reveal/flag rules, feedback, losing and the oracle."""

import numpy as np
import pytest

import agentgym
from agentgym.envs.games.puzzles.minesweeper import (
    MinesweeperEnv,
    MinesweeperWorld,
    _solvable_by_logic,
)
from agentgym.task_env import InvalidAction

LEVELS = ("easy", "medium", "hard")


def generate(level, seed):
    return MinesweeperEnv.generate(np.random.default_rng(seed), **MinesweeperEnv.levels[level])


def corner_mine():
    """4x4, one mine in the top-left corner, nothing revealed."""
    return MinesweeperWorld(4, 4, frozenset({0}))


@pytest.mark.parametrize("level", LEVELS)
def test_the_same_seed_generates_the_same_board(level):
    first, second = generate(level, 3), generate(level, 3)
    assert first.mines == second.mines and first.render() == second.render()


def test_different_seeds_generate_different_boards():
    assert len({generate("medium", seed).mines for seed in range(5)}) == 5


@pytest.mark.parametrize("level", LEVELS)
def test_boards_have_the_level_size_and_mine_count(level):
    spec = MinesweeperEnv.levels[level]
    world = generate(level, 0)
    assert (world.rows, world.cols, len(world.mines)) == (spec["rows"], spec["cols"], spec["mines"])


@pytest.mark.parametrize("level", LEVELS)
def test_a_safe_opening_around_a_zero_is_revealed_and_at_most_half_the_safe_cells(level):
    for seed in range(5):
        world = generate(level, seed)
        safe = world.rows * world.cols - len(world.mines)
        assert not world.revealed & world.mines
        assert any(world.numbers[c] == 0 for c in world.revealed)
        assert 0 < len(world.revealed) <= safe / 2
        assert not world.solved() and not world.lost()


@pytest.mark.parametrize("level", LEVELS)
def test_generated_boards_can_be_cleared_without_guessing(level):
    assert all(_solvable_by_logic(generate(level, seed)) for seed in range(5))


def test_the_logic_check_rejects_a_board_that_needs_a_guess():
    # 1x2 with one mine and nothing revealed: either cell could be the mine.
    assert not _solvable_by_logic(MinesweeperWorld(1, 2, frozenset({0})))


def test_revealing_a_zero_opens_the_connected_region():
    world = corner_mine()
    feedback = world.apply("reveal 4 4")
    assert feedback == "Revealed row 4, column 4: no mine around it, which opened 15 cell(s)."
    assert world.solved()


def test_revealing_a_number_reveals_only_that_cell():
    world = corner_mine()
    assert world.apply("reveal 1 2") == "Revealed row 1, column 2: 1 mine(s) around it."
    assert world.revealed == {1}


def test_revealing_a_mine_loses_and_shows_the_mines():
    world = corner_mine()
    assert world.apply("reveal 1 1") == "BOOM: row 1, column 1 was a mine. You lost."
    assert world.lost() and not world.solved()
    assert world.render().splitlines()[2].split()[1] == "X"
    with pytest.raises(InvalidAction, match="the game is over"):
        world.apply("reveal 4 4")


@pytest.mark.parametrize(
    "text", ["reveal 2 3", "Reveal (2, 3).", "open r2c3", "click row 2, col 3", "dig 2,3"]
)
def test_coordinate_spellings_are_read_one_based(text):
    world = corner_mine()
    world.apply(text)
    assert 1 * 4 + 2 in world.revealed


def test_flag_and_unflag_toggle_a_flag_shown_as_f():
    world = corner_mine()
    assert world.apply("flag 1 1") == "Flagged row 1, column 1."
    assert world.render().splitlines()[2].split()[1] == "F"
    assert world.apply("unflag 1 1") == "Removed the flag from row 1, column 1."
    assert world.flags == set()


def test_a_flagged_cell_cannot_be_revealed_and_nothing_changes():
    world = corner_mine()
    world.apply("flag 1 1")
    before = world.key()
    with pytest.raises(InvalidAction, match=r"row 1, column 1 is flagged; 'unflag 1 1' first"):
        world.apply("reveal 1 1")
    assert world.key() == before and not world.lost()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reveal 0 3", r"row 0 is off the board: rows run 1-4"),
        ("reveal 3 5", r"column 5 is off the board: columns run 1-4"),
        ("reveal -1 2", r"row -1 is off the board"),
        ("reveal 99999999999999999999 1", r"is off the board"),
        ("reveal 3", r"'reveal' needs a row and a column, got 1 number"),
        ("", r"could not read '': write 'reveal R C'"),
        ("hello there", r"could not read 'hello there'"),
        ("unflag 2 2", r"row 2, column 2 has no flag to remove"),
    ],
)
def test_invalid_actions_explain_and_change_nothing(text, message):
    world = corner_mine()
    before = world.key()
    with pytest.raises(InvalidAction, match=message):
        world.apply(text)
    assert world.key() == before


def test_revealing_or_flagging_a_revealed_cell_is_invalid():
    world = corner_mine()
    world.apply("reveal 1 2")
    with pytest.raises(InvalidAction, match=r"already revealed \(it shows 1\)"):
        world.apply("reveal 1 2")
    with pytest.raises(InvalidAction, match=r"only hidden cells can be flagged"):
        world.apply("flag 1 2")


def test_an_opening_removes_flags_from_the_safe_cells_it_reveals():
    world = corner_mine()
    world.apply("flag 3 3")
    world.apply("reveal 4 4")
    assert world.flags == set() and world.solved()


def test_the_key_is_the_agents_view_without_the_hidden_mines():
    elsewhere = MinesweeperWorld(4, 4, frozenset({15}))
    assert corner_mine().key() == elsewhere.key() == "####/####/####/####"


def test_the_key_marks_flags_numbers_and_a_loss():
    world = corner_mine()
    world.apply("flag 2 2")
    world.apply("reveal 1 2")
    assert world.key() == "#1##/#F##/####/####"
    world.apply("reveal 1 1")
    assert world.key().endswith("!")


def test_legal_actions_are_all_valid_and_a_new_list_each_call():
    world = generate("easy", 0)
    world.apply(f"flag {sorted(world.mines)[0] // 6 + 1} {sorted(world.mines)[0] % 6 + 1}")
    first, second = world.legal_actions(), world.legal_actions()
    assert first == second and first is not second
    hidden = world.rows * world.cols - len(world.revealed) - len(world.flags)
    assert len(first) == 2 * hidden + len(world.flags)
    for action in first:
        world.copy().apply(action)


@pytest.mark.parametrize("level", LEVELS)
def test_the_solver_reveals_only_safe_cells_and_clears_the_board(level):
    for seed in range(5):
        world = generate(level, seed)
        plan = MinesweeperEnv.solve(world)
        for action in plan:
            world.apply(action)
            assert not world.lost()
        assert world.solved()


def test_the_solver_unflags_a_wrongly_flagged_safe_cell_first():
    world = corner_mine()
    world.apply("flag 1 2")
    plan = MinesweeperEnv.solve(world)
    assert plan[:2] == ["unflag 1 2", "reveal 1 2"]


def test_revealing_a_mine_ends_the_episode_with_reward_zero():
    env = agentgym.make("games/Minesweeper-v0")
    env.reset(seed=0, options={"difficulty": "medium"})
    world = env.unwrapped.get_state().world
    mine = min(world.mines)
    _, reward, terminated, _, info = env.step(f"reveal {mine // 8 + 1} {mine % 8 + 1}")
    assert terminated and reward == 0.0
    assert info["verdict"].details.startswith("lost") and not info["invalid_action"]
