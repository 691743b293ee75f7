"""Maze and FrozenLake: walk a grid to the exit, one square at a time.

Two envs share one grid world. **Maze** (``games/Maze-v0``) is a maze carved from the seed; bumping
into a wall is an invalid action. **FrozenLake** (``games/FrozenLake-v0``) is an open, deterministic
(not slippery) frozen lake with holes; stepping into a hole loses the episode.

**What the agent sees.** The grid, a legend and where it stands, counted from the top-left
square (row 0, column 0)::

    #########
    #@..#...#
    ###.#.#.#
    #...#.#.#
    #.###.#.#
    #.....#E#
    #########
    Legend: @ = you, E = exit, # = wall, . = open floor
    You are at row 1, column 1; the exit is at row 5, column 7.

FrozenLake draws ``S`` for the start, ``G`` for the goal, ``O`` for a hole and ``.`` for ice
(``X``: you fell into a hole).

**What it may do.** One step in a direction: ``up``, ``down``, ``left``, ``right`` (also
``north``, ``south``, ``west``, ``east``, ``u``/``d``/``l``/``r``, ``n``/``s``/``w``/``e``, and
``move up``, ``go north``). One direction per action. Walking into a wall (Maze) or off the edge
of the lake (FrozenLake) is an invalid action: the observation names the open directions and
nothing moves. ``info["admissible_actions"]`` lists the moves that are not into a wall or off the
grid (in FrozenLake that includes stepping into a visible hole).

**Scoring.** Reward 1 on reaching the exit / goal (the episode terminates), else 0. FrozenLake:
stepping into a hole ends the episode with 0. The step limit is 200 for both.

**Levels.**

* Maze — a perfect maze (randomized depth-first search: exactly one path between any two
  squares), with loops added at the harder levels by opening extra walls. easy: 4x4 rooms (a 9x9
  grid), no loops; medium: 7x7 rooms (15x15), 3% of the remaining inner walls opened; hard:
  12x12 rooms (25x25), 5% opened. The start is a random room and the exit a random room whose
  distance from it is between 60% and 100% of the farthest room's, capped at 150 steps. Shortest
  paths average about 15, 37 and 71 steps.
* FrozenLake — easy: 4x4, 20% holes; medium: 7x7, 25%; hard: 10x10, 30%. Start and goal are
  random squares at least a grid side apart (Manhattan distance); the generator redraws until
  breadth-first search finds a path that avoids the holes.

**Oracle.** Breadth-first search from the current square: a shortest path to the exit.

**Version history.** v0: first release.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

Pos = tuple[int, int]

DIRECTIONS: dict[str, Pos] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
COMPASS = {"up": "north", "down": "south", "left": "west", "right": "east"}
_ALIASES = {
    **{d: d for d in DIRECTIONS},
    **{c: d for d, c in COMPASS.items()},
    **{d[0]: d for d in DIRECTIONS},
    **{c[0]: d for d, c in COMPASS.items()},
}
WALL, FLOOR, HOLE = "#", ".", "O"


class GridWorld(PuzzleWorld):
    """A grid of characters, the agent's square and the exit.

    Args:
        grid: rows of ``#`` (wall), ``.`` (floor) and ``O`` (hole).
        start: the agent's first square.
        exit: the square to reach.
        lake: draw and judge as FrozenLake (``S``/``G``, off-grid moves refused, holes lose).
    """

    def __init__(self, grid: list[str], start: Pos, exit: Pos, *, lake: bool) -> None:
        self.grid = grid
        self.start = start
        self.pos = start
        self.exit = exit
        self.lake = lake

    # ----------------------------------------------------------------- moves

    def apply(self, action: str) -> str:
        if self.lost():
            raise InvalidAction("you fell into a hole; the episode is over")
        direction = _parse(action)
        target = self._next(self.pos, direction)
        if not self._enterable(target):
            open_ = ", ".join(self.open_directions()) or "none"
            what = "the edge of the lake" if self._outside(target) else "a wall"
            raise InvalidAction(
                f"there is {what} to the {COMPASS[direction]} ({direction}); open directions: "
                f"{open_}"
            )
        self.pos = target
        if self.solved():
            return f"You move {direction} and reach the {'goal' if self.lake else 'exit'}!"
        if self.lost():
            return f"You move {direction} onto thin ice and fall into a hole. Game over."
        return f"You move {direction}."

    def open_directions(self) -> list[str]:
        """Directions that are not into a wall or off the grid, in up/down/left/right order."""
        return [d for d in DIRECTIONS if self._enterable(self._next(self.pos, d))]

    def _next(self, pos: Pos, direction: str) -> Pos:
        dr, dc = DIRECTIONS[direction]
        return pos[0] + dr, pos[1] + dc

    def _outside(self, pos: Pos) -> bool:
        return not (0 <= pos[0] < len(self.grid) and 0 <= pos[1] < len(self.grid[0]))

    def _enterable(self, pos: Pos) -> bool:
        return not self._outside(pos) and self.grid[pos[0]][pos[1]] != WALL

    # ----------------------------------------------------------------- views

    def render(self) -> str:
        rows = [list(row) for row in self.grid]
        if self.lake:
            rows[self.start[0]][self.start[1]] = "S"
            rows[self.exit[0]][self.exit[1]] = "G"
            legend = "Legend: @ = you, S = start, G = goal, O = hole, . = ice, X = you in a hole"
            goal = "the goal"
        else:
            rows[self.exit[0]][self.exit[1]] = "E"
            legend = "Legend: @ = you, E = exit, # = wall, . = open floor"
            goal = "the exit"
        rows[self.pos[0]][self.pos[1]] = "X" if self.lost() else "@"
        where = (
            f"You are at row {self.pos[0]}, column {self.pos[1]}; {goal} is at row "
            f"{self.exit[0]}, column {self.exit[1]} (row 0 is the top, column 0 the left)."
        )
        return "\n".join(["".join(r) for r in rows] + [legend, where])

    def key(self) -> str:
        return f"@{self.pos[0]},{self.pos[1]}"

    def solved(self) -> bool:
        return self.pos == self.exit

    def lost(self) -> bool:
        return self.grid[self.pos[0]][self.pos[1]] == HOLE

    def legal_actions(self) -> list[str]:
        if self.lost() or self.solved():
            return []
        return self.open_directions()

    def distances(self, source: Pos) -> dict[Pos, int]:
        """Steps from ``source`` to every square reachable without walls or holes."""
        seen = {source: 0}
        queue = deque([source])
        while queue:
            pos = queue.popleft()
            for direction in DIRECTIONS:
                nxt = self._next(pos, direction)
                if nxt not in seen and self._enterable(nxt) and self._safe(nxt):
                    seen[nxt] = seen[pos] + 1
                    queue.append(nxt)
        return seen

    def path(self) -> list[str] | None:
        """A shortest list of moves from the agent's square to the exit (BFS)."""
        parent: dict[Pos, tuple[Pos, str] | None] = {self.pos: None}
        queue = deque([self.pos])
        while queue:
            pos = queue.popleft()
            if pos == self.exit:
                moves: list[str] = []
                step = parent[pos]
                while step is not None:
                    pos, direction = step
                    moves.append(direction)
                    step = parent[pos]
                return moves[::-1]
            for direction in DIRECTIONS:
                nxt = self._next(pos, direction)
                if nxt not in parent and self._enterable(nxt) and self._safe(nxt):
                    parent[nxt] = (pos, direction)
                    queue.append(nxt)
        return None

    def _safe(self, pos: Pos) -> bool:
        return self.grid[pos[0]][pos[1]] != HOLE


def _parse(action: str) -> str:
    line = last_line(action)
    words = [w.strip("`'\"*.,!?;:()[]") for w in line.split()]
    found = [_ALIASES[w] for w in words if w in _ALIASES]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise InvalidAction(
            f"{action.strip()[:80]!r} names more than one direction; take one step at a time "
            f"(e.g. 'up')"
        )
    raise InvalidAction(
        f"could not read {action.strip()[:80]!r}: write one direction: up, down, left or right "
        f"(or north, south, west, east), e.g. 'up'"
    )


# --------------------------------------------------------------------------- generators


def carve_maze(
    rng: np.random.Generator, rooms_high: int, rooms_wide: int, loops: float
) -> list[str]:
    """A perfect maze by randomized depth-first search, then ``loops`` of inner walls opened."""
    height, width = 2 * rooms_high + 1, 2 * rooms_wide + 1
    grid = [[WALL] * width for _ in range(height)]
    first = (int(rng.integers(rooms_high)), int(rng.integers(rooms_wide)))
    visited = {first}
    stack = [first]
    grid[2 * first[0] + 1][2 * first[1] + 1] = FLOOR
    while stack:
        r, c = stack[-1]
        options = [
            (r + dr, c + dc)
            for dr, dc in DIRECTIONS.values()
            if 0 <= r + dr < rooms_high
            and 0 <= c + dc < rooms_wide
            and (r + dr, c + dc) not in visited
        ]
        if not options:
            stack.pop()
            continue
        nr, nc = options[int(rng.integers(len(options)))]
        grid[r + nr + 1][c + nc + 1] = FLOOR  # the wall between (r, c) and (nr, nc)
        grid[2 * nr + 1][2 * nc + 1] = FLOOR
        visited.add((nr, nc))
        stack.append((nr, nc))
    if loops > 0:
        inner = [
            (r, c)
            for r in range(1, height - 1)
            for c in range(1, width - 1)
            if grid[r][c] == WALL and (r % 2) != (c % 2)  # a wall between two rooms
        ]
        for index in rng.permutation(len(inner))[: round(loops * len(inner))]:
            r, c = inner[int(index)]
            grid[r][c] = FLOOR
    return ["".join(row) for row in grid]


def shortest_path(world: PuzzleWorld) -> list[str]:
    """The oracle of both grid games: a shortest path to the exit (BFS)."""
    assert isinstance(world, GridWorld)
    return world.path() or []


class MazeEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "maze"
    levels = {
        "easy": {"rooms": 4, "loops": 0.0},
        "medium": {"rooms": 7, "loops": 0.03},
        "hard": {"rooms": 12, "loops": 0.05},
    }
    max_path = 150
    syntax = (
        "Actions: 'up', 'down', 'left' or 'right' (or north, south, west, east) moves one "
        "square; walls (#) block the way."
    )

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> GridWorld:
        rooms = int(level["rooms"])
        grid = carve_maze(rng, rooms, rooms, float(level["loops"]))
        start = (2 * int(rng.integers(rooms)) + 1, 2 * int(rng.integers(rooms)) + 1)
        world = GridWorld(grid, start, start, lake=False)
        distances = world.distances(start)
        room_distances = {p: d for p, d in distances.items() if p[0] % 2 and p[1] % 2}
        farthest = min(max(room_distances.values()), MazeEnv.max_path)
        low = max(1, int(0.6 * farthest))
        exits = sorted(p for p, d in room_distances.items() if low <= d <= farthest)
        world.exit = exits[int(rng.integers(len(exits)))]
        return world

    solve = staticmethod(shortest_path)

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, GridWorld)
        return (
            f"Maze: walk from your square (@) to the exit (E) at row {world.exit[0]}, column "
            f"{world.exit[1]}, one square at a time; walls (#) block the way."
        )


class FrozenLakeEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "frozenlake"
    levels = {
        "easy": {"size": 4, "holes": 0.2},
        "medium": {"size": 7, "holes": 0.25},
        "hard": {"size": 10, "holes": 0.3},
    }
    syntax = (
        "Actions: 'up', 'down', 'left' or 'right' (or north, south, west, east) moves one "
        "square; stepping into a hole (O) ends the game."
    )

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> GridWorld:
        size, density = int(level["size"]), float(level["holes"])
        while True:
            start = (int(rng.integers(size)), int(rng.integers(size)))
            goal = (int(rng.integers(size)), int(rng.integers(size)))
            if abs(start[0] - goal[0]) + abs(start[1] - goal[1]) < size:
                continue
            holes = rng.random((size, size)) < density
            holes[start] = holes[goal] = False
            grid = ["".join(HOLE if h else FLOOR for h in row) for row in holes]
            world = GridWorld(grid, start, goal, lake=True)
            if goal in world.distances(start):
                return world

    solve = staticmethod(shortest_path)

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, GridWorld)
        return (
            f"FrozenLake: walk across the ice from the start (S) to the goal (G) at row "
            f"{world.exit[0]}, column {world.exit[1]}, one square at a time, without stepping "
            f"into a hole (O)."
        )
