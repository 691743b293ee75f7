"""The reference player of ``roguelike/Crafter-v0``: a scripted bot that reads crafter's world
(privileged: the whole map, not only the view) and works down the tech tree.

Each step it takes the first rule that applies: hit a zombie or skeleton next to it; sleep
when its energy is low; drink or eat when thirsty or hungry; craft what the table (and
furnace) beside it and its inventory allow; place a table, a furnace, a stone or a sapling
when it has what they use; else walk (breadth-first search over free ground) to the nearest
thing it still needs: trees for wood, grass for a sapling, water, a cow, stone, coal, iron,
diamond; with nothing in reach it wanders. It plays the same actions in the same game every
time (its wandering is seeded by the task). It is a yardstick, not a strong player: it
knows nothing of night-time shelter or arrows.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import crafter
import numpy as np

__all__ = ["CrafterBot", "bot_action"]

_MOVES = {(-1, 0): "Move West", (1, 0): "Move East", (0, -1): "Move North", (0, 1): "Move South"}
_TOOLS = (
    "wood_pickaxe",
    "wood_sword",
    "stone_pickaxe",
    "stone_sword",
    "iron_pickaxe",
    "iron_sword",
)
_PLACE = crafter.constants.place
_MAKE = crafter.constants.make
_WALKABLE = set(crafter.constants.walkable)


@dataclass
class CrafterBot:
    """The bot's memory: its wandering heading and the generator that turns it."""

    rng: np.random.Generator
    heading: tuple[int, int] = (1, 0)
    wander: int = 0
    tables: list[tuple[int, int]] = field(default_factory=list)


def bot_action(world: Any) -> str:
    """The bot's next action in a :class:`~.crafter_env.CrafterWorld`."""
    if world.bot is None:
        world.bot = CrafterBot(np.random.default_rng(world.seed))
    game, bot = world.game, world.bot
    player = game._player
    if player.sleeping:
        return "Noop"
    return (
        _fight(game)
        or _rest(game)
        or _craft(game)
        or _place(game)
        or _gather(game)
        or _wander(game, bot)
    )


def _position(game: Any) -> tuple[int, int]:
    x, y = game._player.pos
    return int(x), int(y)


def _cell(game: Any, pos: tuple[int, int]) -> tuple[str | None, Any]:
    material, obj = game._world[pos]
    return material, obj


def _neighbours(pos: tuple[int, int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    return [((pos[0] + dx, pos[1] + dy), (dx, dy)) for dx, dy in _MOVES]


def _face_and(game: Any, direction: tuple[int, int], action: str) -> str:
    """``action`` if the player faces ``direction``, else the move that turns it there."""
    return action if tuple(game._player.facing) == direction else _MOVES[direction]


def _fight(game: Any) -> str | None:
    pos = _position(game)
    for cell, direction in _neighbours(pos):
        _, obj = _cell(game, cell)
        if type(obj).__name__ in ("Zombie", "Skeleton"):
            return _face_and(game, direction, "Do")
    return None


def _rest(game: Any) -> str | None:
    inventory = game._player.inventory
    if inventory["drink"] < 5 and (step := _toward(game, _is_material("water"))):
        return step
    if inventory["food"] < 5 and (step := _toward(game, _is_object("Cow"))):
        return step
    if inventory["energy"] < 3:
        return "Sleep"
    return None


def _near(game: Any, name: str) -> bool:
    materials, _ = game._world.nearby(game._player.pos, 1)
    return name in materials


def _craft(game: Any) -> str | None:
    inventory = game._player.inventory
    for tool in _TOOLS:
        need = _MAKE[tool]
        affordable = all(inventory[item] >= count for item, count in need["uses"].items())
        if inventory[tool] or not affordable:
            continue
        if all(_near(game, place) for place in need["nearby"]):
            return "Make " + tool.replace("_", " ").title()
        if step := _toward(game, _is_material(*need["nearby"]), limit=12):
            return step if not _near(game, need["nearby"][0]) else None
    return None


def _wood_needed(game: Any) -> int:
    inventory = game._player.inventory
    needed = sum(1 for tool in _TOOLS[:4] if not inventory[tool])
    if not _reachable(game, "table", 12):
        needed += _PLACE["table"]["uses"]["wood"]
    return needed


def _stone_needed(game: Any) -> int:
    inventory, achievements = game._player.inventory, game._player.achievements
    needed = sum(1 for tool in ("stone_pickaxe", "stone_sword") if not inventory[tool])
    needed += 0 if achievements["place_stone"] else 1
    if not _reachable(game, "furnace", 12):
        needed += _PLACE["furnace"]["uses"]["stone"]
    return needed


def _place(game: Any) -> str | None:
    inventory, achievements = game._player.inventory, game._player.achievements
    wood = inventory["wood"]
    if wood >= _PLACE["table"]["uses"]["wood"] + 1 and not _reachable(game, "table", 12):
        return _place_here(game, "table")
    furnace = _PLACE["furnace"]["uses"]["stone"]
    if (
        inventory["stone"] >= furnace
        and _near(game, "table")
        and not _reachable(game, "furnace", 12)
    ):
        return _place_here(game, "furnace")
    if inventory["stone"] and not achievements["place_stone"]:
        return _place_here(game, "stone")
    if inventory["sapling"] and not achievements["place_plant"]:
        return _place_here(game, "plant")
    return None


def _place_here(game: Any, name: str) -> str | None:
    """Place ``name`` on the faced cell if it may go there, else turn to a cell where it may."""
    allowed = _PLACE[name]["where"]
    pos = _position(game)
    for cell, direction in _neighbours(pos):
        material, obj = _cell(game, cell)
        if material in allowed and obj is None:
            return _face_and(game, direction, "Place " + name.title())
    return None


def _gather(game: Any) -> str | None:
    inventory, achievements = game._player.inventory, game._player.achievements
    wants: list[tuple[bool, Any]] = [
        (inventory["wood"] < min(_wood_needed(game), 9), _is_material("tree")),
        (not achievements["collect_drink"], _is_material("water")),
        (not achievements["collect_sapling"] and not inventory["sapling"], _is_material("grass")),
        (not achievements["eat_cow"], _is_object("Cow")),
        (
            inventory["wood_pickaxe"] > 0 and inventory["stone"] < _stone_needed(game),
            _is_material("stone"),
        ),
        (inventory["wood_pickaxe"] > 0 and not inventory["coal"], _is_material("coal")),
        (inventory["stone_pickaxe"] > 0 and not inventory["iron"], _is_material("iron")),
        (inventory["iron_pickaxe"] > 0, _is_material("diamond")),
        (inventory["wood"] < 9, _is_material("tree")),
    ]
    for wanted, target in wants:
        if wanted and (step := _toward(game, target)):
            return step
    return None


def _is_material(*names: str) -> Any:
    def test(game: Any, cell: tuple[int, int]) -> bool:
        return _cell(game, cell)[0] in names

    return test


def _is_object(kind: str) -> Any:
    def test(game: Any, cell: tuple[int, int]) -> bool:
        return type(_cell(game, cell)[1]).__name__ == kind

    return test


def _reachable(game: Any, material: str, limit: int) -> bool:
    return _path(game, _is_material(material), limit) is not None


def _toward(game: Any, target: Any, limit: int = 40) -> str | None:
    """The action that brings the player toward the nearest cell ``target`` accepts: ``Do``
    when it faces one, a turn when one is beside it, else the first step of the shortest
    path over free ground; ``None`` when none lies within ``limit`` steps."""
    found = _path(game, target, limit)
    if found is None:
        return None
    first, direction = found
    if first is None:
        return _face_and(game, direction, "Do")
    return _MOVES[first]


def _path(
    game: Any, target: Any, limit: int
) -> tuple[tuple[int, int] | None, tuple[int, int]] | None:
    """``(first move, direction of the target from the path's end)`` of the shortest walk
    to a cell beside a target cell (first move ``None``: the player is beside one)."""
    start = _position(game)
    seen = {start: None}
    queue: deque[tuple[tuple[int, int], tuple[int, int] | None, int]] = deque([(start, None, 0)])
    while queue:
        pos, first, distance = queue.popleft()
        for cell, direction in _neighbours(pos):
            if target(game, cell):
                return first, direction
            if cell in seen or distance >= limit:
                continue
            material, obj = _cell(game, cell)
            if material in _WALKABLE and obj is None:
                seen[cell] = None
                queue.append((cell, first or direction, distance + 1))
    return None


def _wander(game: Any, bot: CrafterBot) -> str:
    """A step in the bot's heading, which it turns (seeded) now and then or when blocked."""
    pos = _position(game)
    ahead = (pos[0] + bot.heading[0], pos[1] + bot.heading[1])
    material, obj = _cell(game, ahead)
    bot.wander += 1
    if material not in _WALKABLE or obj is not None or bot.wander % 12 == 0:
        bot.heading = list(_MOVES)[int(bot.rng.integers(4))]
    return _MOVES[bot.heading]
