"""The NetHack reference bot's rules, on fixed states."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from nle import nethack

from agentgym.envs.roguelike.nethack_bot import bot_action

CMAP = nethack.GLYPH_CMAP_OFF
STONE, VWALL, HWALL, CLOSED_DOOR, FLOOR, STAIRS_DOWN = 0, 1, 2, 15, 19, 24


@dataclass
class World:
    """What the bot reads of a NetHackWorld."""

    obs: dict[str, np.ndarray]
    message: str = ""
    steps: int = 0
    seed: int = 0
    depth: int = 1
    time: int = 1
    bot: Any = None


def _world(hunger: int = 1, hp: int = 15) -> World:
    """The agent at (13, 6) in a 5x3 lit room with walls around, on unexplored rock."""
    glyphs = np.full(nethack.DUNGEON_SHAPE, CMAP + STONE, dtype=np.int16)
    glyphs[4:9, 10:17] = CMAP + VWALL
    glyphs[4, 10:17] = glyphs[8, 10:17] = CMAP + HWALL
    glyphs[5:8, 11:16] = CMAP + FLOOR
    glyphs[6, 13] = nethack.GLYPH_MON_OFF  # the agent's own glyph
    blstats = np.zeros(nethack.BLSTATS_SHAPE, dtype=np.int64)
    blstats[nethack.NLE_BL_X], blstats[nethack.NLE_BL_Y] = 13, 6
    blstats[nethack.NLE_BL_HUNGER], blstats[nethack.NLE_BL_HP] = hunger, hp
    blstats[nethack.NLE_BL_HPMAX] = 15
    letters, classes = np.zeros(55, dtype=np.uint8), np.zeros(55, dtype=np.uint8)
    letters[:2], classes[:2] = [ord("a"), ord("f")], [nethack.WEAPON_CLASS, nethack.FOOD_CLASS]
    tty = np.full((24, 80), ord(" "), dtype=np.uint8)
    obs = {"glyphs": glyphs, "blstats": blstats, "tty_chars": tty}
    return World(obs | {"inv_letters": letters, "inv_oclasses": classes})


def _prompt(world: World, text: str) -> None:
    world.obs["tty_chars"][0, : len(text)] = np.frombuffer(text.encode(), dtype=np.uint8)


def test_it_walks_to_stairs_it_has_seen_and_goes_down_on_them() -> None:
    world = _world()
    world.obs["glyphs"][7, 14] = CMAP + STAIRS_DOWN
    assert bot_action(world) == "southeast"
    world.steps = 1
    world.obs["blstats"][nethack.NLE_BL_X], world.obs["blstats"][nethack.NLE_BL_Y] = 14, 7
    world.obs["glyphs"][6, 13] = CMAP + FLOOR
    world.obs["glyphs"][7, 14] = nethack.GLYPH_MON_OFF  # standing on them hides them
    assert bot_action(world) == "down"


def test_it_attacks_a_hostile_neighbour_and_spares_its_pet() -> None:
    world = _world()
    world.obs["glyphs"][6, 12] = nethack.GLYPH_PET_OFF + 16
    world.obs["glyphs"][5, 14] = nethack.GLYPH_MON_OFF + 12  # a jackal, northeast
    assert bot_action(world) == "northeast"


def test_it_eats_when_hungry_and_names_its_food() -> None:
    world = _world(hunger=2)
    assert bot_action(world) == "eat"
    world.steps = 1
    _prompt(world, "What do you want to eat? [f or ?*]")
    assert bot_action(world) == "f"


def test_it_opens_a_door_in_its_way_and_answers_the_direction() -> None:
    world = _world()
    world.obs["glyphs"][5:8, 11:16] = CMAP + STONE  # nothing to explore but through the door
    world.obs["glyphs"][6, 12] = CMAP + FLOOR
    world.obs["glyphs"][6, 13] = nethack.GLYPH_MON_OFF
    world.obs["glyphs"][6, 14] = CMAP + CLOSED_DOOR
    assert bot_action(world) == "open"
    world.steps = 1
    _prompt(world, "In what direction?")
    assert bot_action(world) == "east"


def test_it_prays_when_nearly_dead_once_prayer_is_safe() -> None:
    world = _world(hp=2)
    world.time = 50
    assert bot_action(world) != "pray"  # too early: NetHack's prayer timeout
    world.steps, world.time = 1, 400
    assert bot_action(world) == "pray"


def test_asking_twice_gives_the_same_action() -> None:
    world = _world()
    assert bot_action(world) == bot_action(world)
