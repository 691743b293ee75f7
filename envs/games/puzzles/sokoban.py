"""Sokoban: push every box onto a goal square in a walled room.

**What the agent sees.** The room in the standard Sokoban symbols, a legend and a count::

    ########
    #.  .  #
    ##@    #
    ## $   #
    #####  #
    ## ##$ #
    #      #
    ########
    Legend: # wall, @ you, $ box, . goal, * box on goal, + you on a goal, (space) floor.
    Boxes on goals: 0/2.

Rows run top to bottom, so ``up`` moves toward the first line.

**What it may do.** One step per action: ``up``, ``down``, ``left``, ``right`` (also ``u``,
``d``, ``l``, ``r``, ``north``, ``south``, ``west``, ``east``, ``n``, ``s``, ``w``, ``e``,
the arrows ``↑ ↓ ← →``, and phrases such as ``move up`` or ``I push the box left``; the
one-letter forms are read only in a bare command such as ``u`` or ``move u``). Walking into a box
pushes it one square. Walking into a wall, pushing a box into a wall or into another box, and
a line with no direction or with two different directions are invalid actions: the
observation says why (and which directions are open) and nothing moves. Boxes cannot be pulled.
``info["admissible_actions"]`` lists the directions that move (``up``, ``down``, ...).

**Scoring.** Reward 1 when every box is on a goal (the episode terminates), else 0.

**Lost states.** The episode also terminates, with reward 0, as soon as the level is provably
unsolvable: a box stands on a *dead square* (one from which no push sequence can bring a box to
any goal, such as a corner without a goal, or a stretch of wall with no goal along it), or a
2x2 block made only of walls and boxes holds a box that is not on a goal (those boxes can never
move again). Other deadlocks are not detected; the oracle then has no move (``None``).

**Levels.** A room is carved by a random walk inside a border of walls and the goals are
placed at random. A breadth-first search of *pulls* from the solved position (boxes on the
goals) then finds every position the level can be solved from, together with the fewest pushes
each one needs; the start is drawn from the deepest layer (preferring starts with no box on a
goal), so every level is solvable by construction and as deep as its room allows. The oracle
then solves it, and a start whose plan is too long is replaced by one a layer shallower.

* easy: 5x5 interior, 1 box, at least 3 pushes, at most 40 moves (typically 4 pushes, 10 moves);
* medium: 6x6 interior, 2 boxes, at least 6 pushes, at most 80 moves (typically 9 pushes,
  22 moves);
* hard: 7x7 interior, 3 boxes, at least 10 pushes, at most 120 moves (typically 16 pushes,
  40 moves).

A room too cramped for the minimum is redrawn; after 50 such rooms any depth is accepted.

**Oracle.** Weighted A* over push states (the player's square after a push, the box squares),
with the cost counted in single moves (walks are costed by breadth-first search) and the
priority ``moves + 2.5 x pushes still needed``, where the pushes still needed are a lower bound:
the cheapest assignment of boxes to distinct goals by lone-box push distance. Dead squares and
2x2 freezes are pruned. Plans are within a few moves of the shortest; on hard levels the solver
takes about 3 ms typically and ~0.1 s at worst.

**Version history.** v0: first release.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

__all__ = ["SokobanEnv", "SokobanWorld"]

# Directions, in the order used everywhere: (name, row delta, column delta).
DIRECTIONS = (("up", -1, 0), ("down", 1, 0), ("left", 0, -1), ("right", 0, 1))
NAMES = tuple(name for name, _, _ in DIRECTIONS)
_ALIASES = {
    "up": 0, "u": 0, "north": 0, "n": 0, "↑": 0,
    "down": 1, "d": 1, "south": 1, "s": 1, "↓": 1,
    "left": 2, "l": 2, "west": 2, "w": 2, "←": 2,
    "right": 3, "r": 3, "east": 3, "e": 3, "→": 3,
}  # fmt: skip
_TOKEN = re.compile(r"[a-z]+|[↑↓←→]")
_VERBS = frozenset({"move", "go", "push", "walk", "step", "action", "the", "to", "one"})
_SYNTAX_HINT = "write one of up, down, left, right (or u/d/l/r, north/south/west/east)"

LEGEND = "Legend: # wall, @ you, $ box, . goal, * box on goal, + you on a goal, (space) floor."


class SokobanWorld(PuzzleWorld):
    """A room as flat cell indices ``row * width + col``; the border is always wall."""

    def __init__(
        self,
        height: int,
        width: int,
        floor: Iterable[int],
        goals: Iterable[int],
        boxes: Iterable[int],
        player: int,
    ) -> None:
        self.height = height
        self.width = width
        self.floor = frozenset(floor)
        self.goals = frozenset(goals)
        self.boxes = set(boxes)
        self.player = player
        self.deltas = (-width, width, -1, 1)
        self.live = _live_squares(self.floor, self.goals, self.deltas)
        self.floor_mask = sum(1 << c for c in self.floor)
        self.goal_mask = sum(1 << c for c in self.goals)
        self.wall_mask = ((1 << (height * width)) - 1) & ~self.floor_mask

    @classmethod
    def from_text(cls, text: str) -> SokobanWorld:
        """A world from a map in the standard symbols (the rendering's grid lines).

        Lines are padded to the widest; cells outside the map's walls are read as walls.
        """
        lines = [ln for ln in text.splitlines() if ln.strip()]
        height, width = len(lines), max(len(ln) for ln in lines)
        floor, goals, boxes, player = [], [], [], -1
        for r, line in enumerate(lines):
            for c, ch in enumerate(line.ljust(width)):
                cell = r * width + c
                if ch == "#":
                    continue
                if ch not in " .$*@+":
                    raise ValueError(f"unknown symbol {ch!r} at row {r}, column {c}")
                if r in (0, height - 1) or c in (0, width - 1):
                    raise ValueError(
                        f"the map must be closed by walls; row {r}, column {c} is open"
                    )
                floor.append(cell)
                if ch in ".*+":
                    goals.append(cell)
                if ch in "$*":
                    boxes.append(cell)
                if ch in "@+":
                    player = cell
        if player < 0 or len(boxes) != len(goals) or not boxes:
            raise ValueError("a map needs one player and as many boxes as goals (at least one)")
        return cls(height, width, floor, goals, boxes, player)

    # ------------------------------------------------------------------ moves

    def apply(self, action: str) -> str:
        direction = _parse_direction(action)
        name, delta = NAMES[direction], self.deltas[direction]
        target = self.player + delta
        if target not in self.floor:
            raise InvalidAction(
                f"there is a wall {_where(name)} you; you can move {self._open_text()}"
            )
        if target in self.boxes:
            beyond = target + delta
            if beyond not in self.floor:
                raise InvalidAction(
                    f"the box {_where(name)} you cannot be pushed {name}: there is a wall behind "
                    f"it; you can move {self._open_text()}"
                )
            if beyond in self.boxes:
                raise InvalidAction(
                    f"the box {_where(name)} you cannot be pushed {name}: another box is behind "
                    f"it (you can push only one box at a time); you can move {self._open_text()}"
                )
            self.boxes.remove(target)
            self.boxes.add(beyond)
            self.player = target
            done = len(self.boxes & self.goals)
            feedback = f"You pushed a box {name}"
            feedback += (
                f"; it is on a goal ({done}/{len(self.goals)})." if beyond in self.goals else "."
            )
            if self.lost():
                feedback += " That box can never reach a goal now: the level is lost."
            return feedback
        self.player = target
        return f"You moved {name}."

    def legal_actions(self) -> list[str]:
        return [NAMES[d] for d in range(4) if self._can_move(d)]

    def _can_move(self, direction: int) -> bool:
        delta = self.deltas[direction]
        target = self.player + delta
        if target not in self.floor:
            return False
        if target in self.boxes:
            beyond = target + delta
            return beyond in self.floor and beyond not in self.boxes
        return True

    def _open_text(self) -> str:
        legal = self.legal_actions()
        return ", ".join(legal) if legal else "nowhere (every way is blocked)"

    # ------------------------------------------------------------------ state

    def render(self) -> str:
        rows = []
        for r in range(self.height):
            row = []
            for c in range(self.width):
                cell = r * self.width + c
                row.append(self._symbol(cell))
            rows.append("".join(row).rstrip())
        done = len(self.boxes & self.goals)
        return "\n".join([*rows, LEGEND, f"Boxes on goals: {done}/{len(self.goals)}."])

    def _symbol(self, cell: int) -> str:
        if cell not in self.floor:
            return "#"
        goal = cell in self.goals
        if cell == self.player:
            return "+" if goal else "@"
        if cell in self.boxes:
            return "*" if goal else "$"
        return "." if goal else " "

    def key(self) -> str:
        w = self.width
        player = f"{self.player // w},{self.player % w}"
        boxes = ";".join(f"{b // w},{b % w}" for b in sorted(self.boxes))
        return f"@{player}|${boxes}"

    def solved(self) -> bool:
        return self.boxes <= self.goals

    def lost(self) -> bool:
        if any(box not in self.live for box in self.boxes):
            return True
        return any(
            _frozen(box, self.boxes, self.floor, self.goals, self.width) for box in self.boxes
        )

    def status(self) -> str:
        done = len(self.boxes & self.goals)
        if self.solved():
            return f"solved: all {len(self.goals)} boxes are on goals"
        if self.lost():
            return f"lost: a box can never reach a goal ({done}/{len(self.goals)} on goals)"
        return f"{done}/{len(self.goals)} boxes on goals"

    def copy(self) -> SokobanWorld:
        clone = object.__new__(SokobanWorld)
        clone.__dict__.update(self.__dict__)
        clone.boxes = set(self.boxes)
        return clone


def _where(name: str) -> str:
    return {"up": "above", "down": "below", "left": "left of", "right": "right of"}[name]


def _parse_direction(action: str) -> int:
    line = last_line(action)
    tokens = _TOKEN.findall(line)
    # Single letters (u, d, l, r, n, s, e, w) count only in a bare command such as 'move u':
    # in other text they are too often parts of something else.
    bare = all(t in _ALIASES or t in _VERBS for t in tokens)
    found = {_ALIASES[t] for t in tokens if t in _ALIASES and (bare or len(t) > 1)}
    if not found:
        raise InvalidAction(
            f"could not read a direction from {action.strip()[:80]!r}: {_SYNTAX_HINT}"
        )
    if len(found) > 1:
        names = " and ".join(NAMES[d] for d in sorted(found))
        raise InvalidAction(
            f"found several directions ({names}) in {line[:80]!r}: make one move per action"
        )
    return found.pop()


def _live_squares(
    floor: frozenset[int], goals: frozenset[int], deltas: tuple[int, ...]
) -> frozenset[int]:
    """Squares from which a lone box can be pushed onto some goal (found by pulling from goals)."""
    return frozenset().union(*(_push_distances(floor, g, deltas) for g in goals))


def _push_distances(floor: frozenset[int], goal: int, deltas: tuple[int, ...]) -> dict[int, int]:
    """Fewest pushes that bring a lone box from each square onto ``goal`` (unreachable: absent)."""
    dist = {goal: 0}
    frontier = [goal]
    while frontier:
        nxt = []
        for cell in frontier:
            for delta in deltas:
                # A box at `prev`, pushed by a player standing at `prev - delta`, lands on `cell`.
                prev = cell - delta
                if prev in floor and prev not in dist and prev - delta in floor:
                    dist[prev] = dist[cell] + 1
                    nxt.append(prev)
        frontier = nxt
    return dist


def _frozen(
    box: int, boxes: set[int] | frozenset[int], floor: frozenset[int], goals: frozenset[int], w: int
) -> bool:
    """Whether ``box`` is in a 2x2 block of walls and boxes holding a box off its goal."""
    for corner in (box, box - 1, box - w, box - w - 1):
        block = (corner, corner + 1, corner + w, corner + w + 1)
        if all(c in boxes or c not in floor for c in block) and any(
            c in boxes and c not in goals for c in block
        ):
            return True
    return False


_INF = 1 << 30
# The push lower bound is weighted in A*'s priority: a single push costs about 2.5 moves on
# average, so this finds near-optimal plans (a few moves over optimal) ten times faster.
_WEIGHT = 2.5


class _Heuristic:
    """A lower bound on pushes: the cheapest assignment of boxes to distinct goals."""

    def __init__(self, world: SokobanWorld) -> None:
        goals = sorted(world.goals)
        self.tables = [_push_distances(world.floor, g, world.deltas) for g in goals]
        n = len(goals)
        self.orders = list(itertools.permutations(range(n))) if n <= 4 else None
        self.cache: dict[int, int] = {}

    def __call__(self, boxes: int) -> int:
        value = self.cache.get(boxes)
        if value is not None:
            return value
        cells = _bits(boxes)
        tables = self.tables
        if self.orders is None:  # many boxes: each to its nearest goal
            value = sum(min(t.get(c, _INF) for t in tables) for c in cells)
        else:
            value = _INF
            for order in self.orders:
                total = 0
                for cell, g in zip(cells, order, strict=True):
                    total += tables[g].get(cell, _INF)
                value = min(value, total)
        value = min(value, _INF)
        self.cache[boxes] = value
        return value


def _solve(world: SokobanWorld, max_expansions: int = 300_000) -> list[int] | None:
    """Weighted A* over push states; returns directions, or None if none was found.

    States are ``(player square, box mask)`` reached right after a push; the walk to the square
    behind a box is costed by a breadth-first flood, so the cost is the number of single moves.
    """
    w, deltas = world.width, world.deltas
    floor_mask, goal_mask, wall_mask = world.floor_mask, world.goal_mask, world.wall_mask
    boxes0 = sum(1 << b for b in world.boxes)
    if not boxes0 & ~goal_mask:
        return []
    if world.lost():
        return None
    heuristic = _Heuristic(world)
    h0 = heuristic(boxes0)
    if h0 >= _INF:
        return None
    start = (world.player, boxes0)
    best = {start: 0}
    parent: dict[tuple[int, int], tuple[tuple[int, int], int, int]] = {}
    heap: list[tuple[float, int, int, int, int]] = [(h0, 0, 0, world.player, boxes0)]
    blocks = _block_masks(world.height * world.width, w)
    expansions = 0
    goal_state = None
    while heap:
        _, g, _, player, boxes = heapq.heappop(heap)
        g = -g
        state = (player, boxes)
        if best[state] < g:
            continue
        if not boxes & ~goal_mask:
            goal_state = state
            break
        expansions += 1
        if expansions > max_expansions:
            return None
        free = floor_mask & ~boxes
        box_cells = _bits(boxes)
        # Squares the player must reach to push some box, and how far away each one is.
        need = 0
        for box in box_cells:
            for delta in deltas:
                need |= 1 << (box - delta)
        need &= free
        walk = {}
        region = frontier = 1 << player
        steps = 0
        if need & region:
            walk[player] = 0
            need &= ~region
        while frontier and need:
            steps += 1
            frontier = (frontier << 1 | frontier >> 1 | frontier << w | frontier >> w) & free
            frontier &= ~region
            region |= frontier
            hit = frontier & need
            if hit:
                for cell in _bits(hit):
                    walk[cell] = steps
                need &= ~hit
        for box in box_cells:
            for direction, delta in enumerate(deltas):
                distance = walk.get(box - delta)
                if distance is None:
                    continue
                target = box + delta
                if not free >> target & 1:
                    continue
                moved = boxes ^ (1 << box) | (1 << target)
                new_g = g + distance + 1
                new_state = (box, moved)
                if new_g >= best.get(new_state, _INF):
                    continue
                h = heuristic(moved)
                if h >= _INF or _frozen_mask(target, moved, wall_mask, goal_mask, blocks):
                    continue
                best[new_state] = new_g
                parent[new_state] = (state, box - delta, direction)
                # Ties on f go to the deeper state: far fewer expansions with a tight bound.
                heapq.heappush(heap, (new_g + _WEIGHT * h, -new_g, expansions, box, moved))
    if goal_state is None:
        return None
    pushes = []
    state = goal_state
    while state != start:
        prev, stand, direction = parent[state]
        pushes.append((prev, stand, direction))
        state = prev
    moves: list[int] = []
    for (player, boxes), stand, direction in reversed(pushes):
        moves.extend(_walk_path(player, stand, floor_mask & ~boxes, deltas))
        moves.append(direction)
    return moves


def _frozen_mask(box: int, boxes: int, walls: int, goals: int, blocks: list[list[int]]) -> bool:
    """:func:`_frozen` on bit masks; ``blocks[c]`` are the four 2x2 block masks holding ``c``."""
    blocked = boxes | walls
    return any(block & blocked == block and block & boxes & ~goals for block in blocks[box])


def _block_masks(size: int, w: int) -> list[list[int]]:
    """For each interior cell, the masks of the four 2x2 blocks that contain it."""
    blocks: list[list[int]] = [[] for _ in range(size)]
    for cell in range(w + 1, size - w - 1):
        for corner in (cell, cell - 1, cell - w, cell - w - 1):
            blocks[cell].append(
                (1 << corner) | (1 << (corner + 1)) | (1 << (corner + w)) | (1 << (corner + w + 1))
            )
    return blocks


def _walk_path(start: int, end: int, free: int, deltas: tuple[int, ...]) -> list[int]:
    """Directions of a shortest walk from ``start`` to ``end`` through the ``free`` mask."""
    came: dict[int, tuple[int, int]] = {start: (start, -1)}
    frontier = [start]
    while frontier and end not in came:
        nxt = []
        for cell in frontier:
            for direction, delta in enumerate(deltas):
                n = cell + delta
                if free >> n & 1 and n not in came:
                    came[n] = (cell, direction)
                    nxt.append(n)
        frontier = nxt
    path = []
    cell = end
    while cell != start:
        cell, direction = came[cell]
        path.append(direction)
    path.reverse()
    return path


# Room carving masks (3x3 around the walker, as (row, col) offsets); each holds the centre.
_MASKS = (
    ((0, -1), (0, 0), (0, 1)),
    ((-1, 0), (0, 0), (1, 0)),
    ((0, -1), (0, 0), (1, 0)),
    ((0, -1), (0, 0), (1, -1), (1, 0)),
    ((0, 0), (0, 1), (1, 0)),
    ((0, 0),),
)


def _carve_room(rng: np.random.Generator, rows: int, cols: int, steps: int) -> set[int]:
    """Floor cells of a connected room carved by a random walk inside a wall border."""
    width = cols + 2
    r, c = int(rng.integers(1, rows + 1)), int(rng.integers(1, cols + 1))
    direction = int(rng.integers(4))
    turns = rng.random(steps)
    new_dirs = rng.integers(4, size=steps)
    masks = rng.integers(len(_MASKS), size=steps)
    floor: set[int] = set()
    for i in range(steps):
        if turns[i] < 0.35:
            direction = int(new_dirs[i])
        _, dr, dc = DIRECTIONS[direction]
        r = min(max(r + dr, 1), rows)
        c = min(max(c + dc, 1), cols)
        for mr, mc in _MASKS[int(masks[i])]:
            rr, cc = r + mr, c + mc
            if 1 <= rr <= rows and 1 <= cc <= cols:
                floor.add(rr * width + cc)
    return floor


def _flood(start: int, free: int, width: int) -> int:
    """The cells (a bit mask) reachable from the ``start`` mask through the ``free`` mask."""
    region = start
    while True:
        grown = (region | region << 1 | region >> 1 | region << width | region >> width) & free
        if grown == region:
            return region
        region = grown


def _bits(mask: int) -> list[int]:
    cells = []
    while mask:
        low = mask & -mask
        cells.append(low.bit_length() - 1)
        mask ^= low
    return cells


def _pull_layers(
    floor: frozenset[int], goals: list[int], width: int, max_states: int
) -> list[list[tuple[int, int]]]:
    """Breadth-first search of pulls from the solved position.

    Layer ``k`` holds the states ``(boxes mask, player region mask)`` whose best solution needs
    exactly ``k`` pushes (pulls reversed are pushes). Stops after the layer that brings the
    count of states past ``max_states``.
    """
    floor_mask = sum(1 << c for c in floor)
    boxes0 = sum(1 << c for c in goals)
    free = floor_mask & ~boxes0
    seen: set[tuple[int, int]] = set()
    layer: list[tuple[int, int]] = []
    while free:  # the solved position, with the player in each part of the room
        region = _flood(free & -free, floor_mask & ~boxes0, width)
        free &= ~region
        seen.add((boxes0, region & -region))
        layer.append((boxes0, region))
    layers = [layer]
    total = len(layer)
    deltas = (-width, width, -1, 1)
    while layer and total < max_states:
        nxt = []
        for boxes, region in layer:
            for box in _bits(boxes):
                for delta in deltas:
                    stand, back = box + delta, box + 2 * delta
                    if (region >> stand) & 1 and (region >> back) & 1:
                        moved = boxes ^ (1 << box) | (1 << stand)
                        reach = _flood(1 << back, floor_mask & ~moved, width)
                        key = (moved, reach & -reach)
                        if key not in seen:
                            seen.add(key)
                            nxt.append((moved, reach))
        total += len(nxt)
        if nxt:
            layers.append(nxt)
        layer = nxt
    return layers


_MAX_PULL_STATES = 6_000  # the pull search stops after the layer that passes this many states


class SokobanEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "sokoban"
    # rows x cols: the interior; carve: random-walk steps that dig the room.
    levels = {
        "easy": dict(rows=5, cols=5, carve=30, boxes=1, min_pushes=3, max_moves=40),
        "medium": dict(rows=6, cols=6, carve=50, boxes=2, min_pushes=6, max_moves=80),
        "hard": dict(rows=7, cols=7, carve=60, boxes=3, min_pushes=10, max_moves=120),
    }
    syntax = (
        "Actions: one move per action, 'up', 'down', 'left' or 'right' (also u/d/l/r or "
        "north/south/west/east). Walking into a box pushes it; boxes cannot be pulled. Pushing "
        "a box where it can never reach a goal (such as a corner without a goal) loses."
    )

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> SokobanWorld:
        rows, cols, n_boxes = int(level["rows"]), int(level["cols"]), int(level["boxes"])
        min_pushes, max_moves = int(level["min_pushes"]), int(level["max_moves"])
        height, width = rows + 2, cols + 2
        attempt = 0
        while True:
            attempt += 1
            # After many unlucky rooms, accept shallower levels rather than loop for long.
            need = min_pushes if attempt <= 50 else 1
            floor = frozenset(_carve_room(rng, rows, cols, steps=int(level["carve"])))
            if len(floor) < 3 * n_boxes + 4:
                continue
            cells = sorted(floor)
            goals = [cells[int(i)] for i in rng.permutation(len(cells))[:n_boxes]]
            layers = _pull_layers(floor, goals, width, max_states=_MAX_PULL_STATES)
            goal_mask = sum(1 << g for g in goals)
            for depth in range(len(layers) - 1, need - 1, -1):
                # Prefer starts with no box on a goal; pick one at random, player anywhere.
                states = [s for s in layers[depth] if not s[0] & goal_mask] or layers[depth]
                boxes, region = states[int(rng.integers(len(states)))]
                spots = _bits(region)
                player = spots[int(rng.integers(len(spots)))]
                world = SokobanWorld(height, width, floor, goals, _bits(boxes), player)
                plan = _solve(world)
                if plan is not None and len(plan) <= max_moves:
                    return world

    @staticmethod
    def solve(world: PuzzleWorld) -> list[str]:
        assert isinstance(world, SokobanWorld)
        plan = _solve(world)
        return [NAMES[d] for d in plan] if plan else []

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, SokobanWorld)
        n = len(world.goals)
        if n == 1:
            boxes = "the box ($) onto the goal square (.)"
        else:
            boxes = f"all {n} boxes ($) onto the goal squares (.)"
        return (
            f"Sokoban: push {boxes}. You (@) move one square per action and push a box by "
            f"walking into it; you cannot pull boxes or push two at once."
        )
