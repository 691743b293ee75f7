"""NetHack's language observation on fixed states, and the action words."""

from __future__ import annotations

import numpy as np
import pytest
from nle import nethack

from agentgym.envs.roguelike.nethack_text import (
    KEYS,
    describe,
    glyph_name,
    language_observation,
    offset_words,
    parse_action,
)

CMAP = nethack.GLYPH_CMAP_OFF
STONE, VWALL, HWALL, FLOOR, STAIRS_DOWN, CLOSED_DOOR = 0, 1, 2, 19, 24, 15


def _room() -> tuple[np.ndarray, int, int]:
    """A 5x3 lit room (walls around) with the agent in its middle, on unexplored rock."""
    glyphs = np.full(nethack.DUNGEON_SHAPE, CMAP + STONE, dtype=np.int16)
    glyphs[4:9, 10:17] = CMAP + VWALL
    glyphs[4, 10:17] = glyphs[8, 10:17] = CMAP + HWALL
    glyphs[5:8, 11:16] = CMAP + FLOOR
    return glyphs, 13, 6


def test_offsets_are_worded_as_the_wrapper_words_them() -> None:
    assert offset_words(1, 0) == ("adjacent", "east")
    assert offset_words(-1, 1) == ("adjacent", "northwest")
    assert offset_words(0, -2) == ("very near", "south")
    assert offset_words(3, 1) == ("near", "eastnortheast")
    assert offset_words(-7, -2) == ("far", "westsouthwest")
    assert offset_words(25, 0) == ("very far", "east")


def test_a_room_is_told_far_to_near_with_directions_grouped() -> None:
    glyphs, x, y = _room()
    glyphs[7, 15] = CMAP + STAIRS_DOWN
    glyphs[6, 12] = nethack.GLYPH_PET_OFF + 16  # a pet west of the agent
    glyphs[5, 14] = nethack.GLYPH_MON_OFF + 16  # the same monster, wild, northeast
    glyphs[6, 16] = CMAP + CLOSED_DOOR
    dog = nethack.permonst(16).mname
    assert language_observation(glyphs, x, y).splitlines() == [
        # very far to adjacent, clockwise from north within a distance
        "vertical closed door near east",
        # as in the wrapper, a closed door is listed on the whole screen and so does not
        # stop the east ray, which goes on to the rock behind it
        "dark area near east",
        "vertical wall near west",
        "horizontal wall very near north, northeast, southeast, south, southwest, and northwest",
        "stairs down very near eastsoutheast",
        f"{dog} adjacent northeast",
        f"tame {dog} adjacent west",
    ]


def test_the_same_thing_twice_in_one_direction_is_plural() -> None:
    glyphs = np.full(nethack.DUNGEON_SHAPE, CMAP + FLOOR, dtype=np.int16)
    jackal = nethack.GLYPH_MON_OFF + 12
    glyphs[9, 23] = glyphs[9, 24] = glyphs[10, 19] = jackal
    name = nethack.permonst(12).mname
    assert name == "jackal"
    assert language_observation(glyphs, 20, 10).splitlines() == [
        f"{name}s near eastnortheast",
        f"{name} adjacent west",
    ]


def test_rays_stop_at_the_first_wall_and_skip_floor() -> None:
    glyphs, x, y = _room()
    lines = language_observation(glyphs, x, y).splitlines()
    assert all("rock" not in line and "floor" not in line for line in lines)
    assert "dark area" not in " ".join(lines)  # walls block the view of the rock behind


def test_every_glyph_has_a_name_and_floor_none() -> None:
    names = [glyph_name(g) for g in range(nethack.MAX_GLYPH + 1)]
    assert names[CMAP + FLOOR] == ("", "")
    assert names[nethack.MAX_GLYPH] == ("", "")  # NO_GLYPH
    assert names[CMAP + STAIRS_DOWN] == ("stairs down", "screen")
    assert names[CMAP + VWALL] == ("vertical wall", "ray")
    assert all(name for name, where in names if where)


def _observation() -> dict[str, np.ndarray]:
    glyphs, x, y = _room()
    blstats = np.zeros(nethack.BLSTATS_SHAPE, dtype=np.int64)
    blstats[nethack.NLE_BL_X], blstats[nethack.NLE_BL_Y] = x, y
    tty = np.full((24, 80), ord(" "), dtype=np.uint8)
    tty[1 + y, x] = ord("@")
    letters = np.zeros(55, dtype=np.uint8)
    strs = np.zeros((55, 80), dtype=np.uint8)
    letters[0] = ord("a")
    strs[0, :17] = np.frombuffer(b"a +0 katana (wie)", dtype=np.uint8)
    glyphs[y, x] = nethack.GLYPH_MON_OFF + 0
    return {
        "glyphs": glyphs,
        "blstats": blstats,
        "tty_chars": tty,
        "tty_cursor": np.array([1 + y, x]),
        "inv_letters": letters,
        "inv_strs": strs,
    }


def test_the_prompt_has_balrogs_hybrid_sections() -> None:
    text = describe(_observation(), "Hello Agent, welcome to NetHack!")
    titles = [line for line in text.splitlines() if line.endswith(":") and " " not in line[:-1]]
    assert titles == ["message:", "cursor:", "map:", "inventory:"]
    assert "language observation:\n" in text
    ant = nethack.permonst(0).mname
    assert f"cursor:\nYourself a {ant}\n(x=13, y=7)" in text
    assert text.endswith("inventory:\na: a +0 katana (wie)")
    assert "\n" + " " * 13 + "@" in text  # the map keeps columns


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("north", ord("k")),
        ("Far East", ord("L")),
        ("Action: pick up", ord(",")),
        ("I will go down.\n`down`", ord(">")),
        ("f", ord("f")),
        ("F", ord("F")),
        ("esc", 27),
        ("7", ord("7")),
        ("move southwest", ord("b")),
    ],
)
def test_action_words_become_nethack_keys(text: str, key: int) -> None:
    assert parse_action(text) == key


@pytest.mark.parametrize("text", ["", "dance", "north east", "ff", "?"])
def test_anything_else_is_not_an_action(text: str) -> None:
    assert parse_action(text) is None


def test_every_key_is_one_nle_takes() -> None:
    assert set(KEYS.values()) <= {int(a) for a in nethack.ACTIONS}
