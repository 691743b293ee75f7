"""Crafter told in words: the action names, the local view as objects with their offsets,
the player's status and inventory (BALROG's Crafter language wrapper is the reference for
what the agent is told; the words and the code are ours, departures in docs/envs/roguelike.md).

Crafter's coordinates are ``(x, y)`` with x growing east and y growing south (its picture is
drawn transposed); the local view is the 9 x 7 cells around the player that crafter's own
picture shows (its 9 x 9 view less the two rows of the inventory bar).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "ACTIONS",
    "NAMES",
    "VIEW",
    "VITALS",
    "describe",
    "local_grid",
    "parse_action",
]

ACTIONS: dict[str, str] = {
    "Noop": "do nothing",
    "Move West": "step west, or turn west if the cell there is not free ground",
    "Move East": "step east, or turn east if the cell there is not free ground",
    "Move North": "step north, or turn north if the cell there is not free ground",
    "Move South": "step south, or turn south if the cell there is not free ground",
    "Do": "act on the cell you face: collect a material, drink water, hit a creature, eat",
    "Sleep": "sleep (only when your energy is below its maximum)",
    "Place Stone": "put a stone on the cell you face (uses 1 stone)",
    "Place Table": "build a table on the cell you face (uses wood)",
    "Place Furnace": "build a furnace on the cell you face, near a table (uses stone)",
    "Place Plant": "plant a sapling on the grass you face",
    "Make Wood Pickaxe": "craft a wood pickaxe: a table nearby, 1 wood",
    "Make Stone Pickaxe": "craft a stone pickaxe: a table nearby, 1 wood and 1 stone",
    "Make Iron Pickaxe": "craft an iron pickaxe: a table and furnace nearby, 1 wood, coal, iron",
    "Make Wood Sword": "craft a wood sword: a table nearby, 1 wood",
    "Make Stone Sword": "craft a stone sword: a table nearby, 1 wood and 1 stone",
    "Make Iron Sword": "craft an iron sword: a table and furnace nearby, 1 wood, coal, iron",
}
"""The 17 actions in crafter's order (``crafter.constants.actions``), with what each does."""

NAMES = tuple(ACTIONS)
VIEW = (9, 7)
"""The local view's width (west to east) and height (north to south), in cells."""
VITALS = ("health", "food", "drink", "energy")

_FOLDED = {re.sub(r"[\s_]+", " ", name.lower()): index for index, name in enumerate(NAMES)}
_CRAFTER_NAMES = {
    "move left": "move west",
    "move right": "move east",
    "move up": "move north",
    "move down": "move south",
}


def parse_action(text: str) -> int | None:
    """The index of the action ``text`` names (case, spaces and underscores do not matter;
    crafter's own names such as ``move_left`` are read too), else ``None``.

    >>> parse_action("Move West"), parse_action("  make_wood_pickaxe "), parse_action("jump")
    (1, 11, None)
    """
    folded = re.sub(r"[\s_]+", " ", text.strip().lower()).strip(" .")
    return _FOLDED.get(_CRAFTER_NAMES.get(folded, folded))


def _object_name(obj: Any) -> str:
    return type(obj).__name__.lower()


def local_grid(game: Any) -> list[list[str | None]]:
    """What each cell of the local view holds, ``grid[dx + 4][dy + 3]`` for the cell ``dx``
    east and ``dy`` south of the player: a creature or plant where one stands, else the
    material, ``None`` outside the world. The player's own cell says ``"player"``."""
    world, (px, py) = game._world, game._player.pos
    half_w, half_h = VIEW[0] // 2, VIEW[1] // 2
    grid: list[list[str | None]] = []
    for dx in range(-half_w, half_w + 1):
        column: list[str | None] = []
        for dy in range(-half_h, half_h + 1):
            material, obj = world[(px + dx, py + dy)]
            column.append(_object_name(obj) if obj is not None else material)
        grid.append(column)
    return grid


def _offset(dx: int, dy: int) -> str:
    """``"2 steps north and 1 step east"`` for a cell ``dx`` east and ``dy`` south."""
    parts = []
    if dy:
        parts.append(f"{abs(dy)} step{'s' if abs(dy) > 1 else ''} {'north' if dy < 0 else 'south'}")
    if dx:
        parts.append(f"{abs(dx)} step{'s' if abs(dx) > 1 else ''} {'west' if dx < 0 else 'east'}")
    return " and ".join(parts)


_FACING = {(-1, 0): "west", (1, 0): "east", (0, -1): "north", (0, 1): "south"}


def _seen(grid: list[list[str | None]]) -> list[str]:
    """The closest cell of each kind in view (nearest first; ties in reading order)."""
    half_w, half_h = VIEW[0] // 2, VIEW[1] // 2
    closest: dict[str, tuple[int, int, int]] = {}
    for y in range(VIEW[1]):
        for x in range(VIEW[0]):
            name = grid[x][y]
            dx, dy = x - half_w, y - half_h
            if name is None or (dx, dy) == (0, 0):
                continue
            distance = abs(dx) + abs(dy)
            if name not in closest or distance < closest[name][0]:
                closest[name] = (distance, dx, dy)
    ordered = sorted(closest.items(), key=lambda item: item[1][0])
    return [f"- {name}: {_offset(dx, dy)}" for name, (_, dx, dy) in ordered]


def describe(game: Any) -> str:
    """The observation: the view, what the player faces, its status and its inventory."""
    player = game._player
    grid = local_grid(game)
    seen = _seen(grid)
    facing = _FACING[(int(player.facing[0]), int(player.facing[1]))]
    fx, fy = VIEW[0] // 2 + player.facing[0], VIEW[1] // 2 + player.facing[1]
    faced = grid[fx][fy] or "the edge of the world"
    lines = ["You see (the closest of each kind):", *seen] if seen else ["You see nothing."]
    lines.append(f"You face {facing}, towards {faced}.")
    if player.sleeping:
        lines.append("You are asleep: you will wake when your energy is full, or when hurt.")
    inventory = player.inventory
    lines += ["", "Your status:", *(f"- {name}: {inventory[name]}/9" for name in VITALS)]
    items = [f"- {name}: {count}" for name, count in inventory.items() if name not in VITALS]
    held = [line for line in items if not line.endswith(": 0")]
    lines += ["", "Your inventory:", *held] if held else ["", "Your inventory is empty."]
    return "\n".join(lines)
