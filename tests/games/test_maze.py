"""Maze and FrozenLake: generators, moves, walls and holes, BFS oracle."""

import numpy as np
import pytest

import agentgym
from agentgym import InvalidAction
from agentgym.envs.games.puzzles.maze import FrozenLakeEnv, GridWorld, MazeEnv

LEVELS = ("easy", "medium", "hard")

SMALL = ["#######", "#.#...#", "#.#.#.#", "#...#.#", "#######"]


def open_squares(world):
    return {(r, c) for r, row in enumerate(world.grid) for c, ch in enumerate(row) if ch != "#"}


@pytest.mark.parametrize("env_cls", [MazeEnv, FrozenLakeEnv])
@pytest.mark.parametrize("level", LEVELS)
def test_generation_is_deterministic(env_cls, level):
    first = env_cls.generate(np.random.default_rng(3), **env_cls.levels[level])
    second = env_cls.generate(np.random.default_rng(3), **env_cls.levels[level])
    assert (first.grid, first.start, first.exit) == (second.grid, second.start, second.exit)


@pytest.mark.parametrize("level", LEVELS)
def test_mazes_are_connected_and_the_exit_is_in_reach(level):
    for seed in range(6):
        world = MazeEnv.generate(np.random.default_rng(seed), **MazeEnv.levels[level])
        distances = world.distances(world.start)
        assert set(distances) == open_squares(world)
        assert 0 < distances[world.exit] <= MazeEnv.max_path


def test_easy_mazes_are_perfect():
    for seed in range(6):
        world = MazeEnv.generate(np.random.default_rng(seed), **MazeEnv.levels["easy"])
        squares = open_squares(world)
        edges = sum((r + 1, c) in squares for r, c in squares) + sum(
            (r, c + 1) in squares for r, c in squares
        )
        assert edges == len(squares) - 1  # connected with no cycle: a tree


def test_hard_mazes_have_loops():
    world = MazeEnv.generate(np.random.default_rng(0), **MazeEnv.levels["hard"])
    squares = open_squares(world)
    edges = sum((r + 1, c) in squares for r, c in squares) + sum(
        (r, c + 1) in squares for r, c in squares
    )
    assert edges > len(squares) - 1


@pytest.mark.parametrize("level", LEVELS)
def test_frozen_lakes_always_have_a_safe_path(level):
    settings = FrozenLakeEnv.levels[level]
    for seed in range(10):
        world = FrozenLakeEnv.generate(np.random.default_rng(seed), **settings)
        assert len(world.grid) == settings["size"]
        assert world.exit in world.distances(world.start)
        assert sum(map(abs, np.subtract(world.start, world.exit))) >= settings["size"]


@pytest.mark.parametrize("env_cls", [MazeEnv, FrozenLakeEnv])
@pytest.mark.parametrize("level", LEVELS)
def test_solver_finds_a_shortest_path(env_cls, level):
    for seed in range(5):
        world = env_cls.generate(np.random.default_rng(seed), **env_cls.levels[level])
        moves = env_cls.solve(world.copy())
        assert len(moves) == world.distances(world.start)[world.exit]
        for move in moves:
            world.apply(move)
        assert world.solved() and not world.lost()


def test_bumping_a_wall_names_the_open_directions_and_stays():
    world = GridWorld(SMALL, (1, 1), (1, 5), lake=False)
    with pytest.raises(InvalidAction, match=r"wall to the east \(right\); open directions: down$"):
        world.apply("right")
    with pytest.raises(InvalidAction, match="wall to the north"):
        world.apply("up")
    assert world.pos == (1, 1)


@pytest.mark.parametrize(
    "action", ["down", "DOWN", "south", "s", "d", "move down", "Go south.", "I go `down`"]
)
def test_direction_forms_are_read(action):
    world = GridWorld(SMALL, (1, 1), (1, 5), lake=False)
    world.apply(action)
    assert world.pos == (2, 1)


@pytest.mark.parametrize(
    ("action", "message"),
    [("up and left", "more than one direction"), ("", "could not read"), ("🙂", "could not read"),
     ("jump", "could not read")],
)  # fmt: skip
def test_unreadable_actions_explain(action, message):
    world = GridWorld(SMALL, (1, 1), (1, 5), lake=False)
    with pytest.raises(InvalidAction, match=message):
        world.apply(action)
    assert world.pos == (1, 1)


def test_legal_actions_are_fresh_lists_of_open_directions():
    world = GridWorld(SMALL, (3, 3), (1, 5), lake=False)
    assert world.legal_actions() == ["up", "left"]
    assert world.legal_actions() is not world.legal_actions()


def test_render_marks_agent_and_exit_with_a_legend():
    text = GridWorld(SMALL, (1, 1), (1, 5), lake=False).render()
    assert text.splitlines()[1] == "#@#..E#"
    assert "Legend:" in text and "row 1, column 1" in text


def test_stepping_into_a_hole_loses():
    lake = GridWorld(["..O", "...", "..."], (0, 0), (2, 2), lake=True)
    lake.apply("right")
    assert not lake.lost()
    lake.apply("right")
    assert lake.lost() and not lake.solved()
    assert lake.legal_actions() == []
    assert "X" in lake.render().splitlines()[0]


def test_walking_off_the_lake_is_invalid():
    lake = GridWorld(["..O", "...", "..."], (0, 0), (2, 2), lake=True)
    with pytest.raises(InvalidAction, match="edge of the lake to the north"):
        lake.apply("north")
    assert lake.legal_actions() == ["down", "right"]


def test_oracle_avoids_holes():
    lake = GridWorld([".O.", "...", ".O."], (0, 0), (0, 2), lake=True)
    assert FrozenLakeEnv.solve(lake) == ["down", "right", "right", "up"]


def test_falling_through_make_terminates_with_zero():
    env = agentgym.make("games/FrozenLake-v0")
    for seed in range(50):
        env.reset(seed=seed, options={"difficulty": "hard"})
        world = env.unwrapped._world
        into_hole = [
            d
            for d in world.legal_actions()
            if world.grid[world._next(world.pos, d)[0]][world._next(world.pos, d)[1]] == "O"
        ]
        if into_hole:
            _, reward, terminated, _, info = env.step(into_hole[0])
            assert terminated and reward == 0.0 and not info["verdict"].passed
            break
    else:
        pytest.fail("no start next to a hole in 50 hard lakes")
    env.close()
