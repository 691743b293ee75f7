"""NetHack in words: what the agent is told about an ``nle`` observation, and its action words.

A port to Python of the NetHack language wrapper BALROG uses (``nle-language-wrapper``'s
``NLELanguageObsv``, C++), rendered as BALROG's "hybrid" prompt: the message, the language
observation (what lies around the agent, with distance and direction), the cursor, the tty
screen as an ASCII map (which also carries the two bottom status lines) and the inventory.

The language observation follows the wrapper line for line:

* every monster, object, pet, corpse, statue, and the map features it lists on the whole screen
  (closed doors, stairs, ladders, altars, graves, thrones, sinks, fountains, water, ice, lava,
  bars, trees, raised drawbridges), anywhere on the level;
* along the eight compass rays from the agent, up to 9 squares, every other feature that is not
  floor (walls, doorways, open doors, dark area, traps...), the ray stopping at the first that
  blocks the view (walls, dark area, closed doors, raised drawbridges);
* each as ``<name> <distance> <direction>``: distance ``adjacent`` (1 square), ``very near``
  (2), ``near`` (3-5), ``far`` (6-19), ``very far`` (20+) by Chebyshev distance; direction one
  of 16 (``north``, ``northnortheast``, ...), as the wrapper's ``pos_to_str`` computes it;
* sorted from very far to adjacent and clockwise from north; the same name at the same distance
  is one line listing its directions (``dark area adjacent east, south, and west``), and a
  name seen several times in one direction at one distance becomes plural.

Where we depart from the wrapper: the cmap name ``alter`` is spelled ``altar``; plurals are
made by a small English rule on the head noun (the wrapper has its own table).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import numpy as np
from nle import nethack
from nle.nethack import actions as A

__all__ = [
    "ACTIONS",
    "KEYS",
    "describe",
    "glyph_name",
    "language_observation",
    "offset_words",
    "parse_action",
]

ROWS, COLUMNS = nethack.DUNGEON_SHAPE

# BALROG's NetHack action words and what its prompt says each does (balrog/environments/nle).
ACTIONS: dict[str, tuple[int, str]] = {
    "north": (A.CompassDirection.N, "move north"),
    "east": (A.CompassDirection.E, "move east"),
    "south": (A.CompassDirection.S, "move south"),
    "west": (A.CompassDirection.W, "move west"),
    "northeast": (A.CompassIntercardinalDirection.NE, "move northeast"),
    "southeast": (A.CompassIntercardinalDirection.SE, "move southeast"),
    "southwest": (A.CompassIntercardinalDirection.SW, "move southwest"),
    "northwest": (A.CompassIntercardinalDirection.NW, "move northwest"),
    "far north": (A.CompassCardinalDirectionLonger.N, "move far north"),
    "far east": (A.CompassCardinalDirectionLonger.E, "move far east"),
    "far south": (A.CompassCardinalDirectionLonger.S, "move far south"),
    "far west": (A.CompassCardinalDirectionLonger.W, "move far west"),
    "far northeast": (A.CompassIntercardinalDirectionLonger.NE, "move far northeast"),
    "far southeast": (A.CompassIntercardinalDirectionLonger.SE, "move far southeast"),
    "far southwest": (A.CompassIntercardinalDirectionLonger.SW, "move far southwest"),
    "far northwest": (A.CompassIntercardinalDirectionLonger.NW, "move far northwest"),
    "up": (A.MiscDirection.UP, "go up a staircase"),
    "down": (A.MiscDirection.DOWN, "go down a staircase (only when standing on the stairs)"),
    "wait": (A.MiscDirection.WAIT, "rest one move while doing nothing"),
    "more": (A.MiscAction.MORE, "display more of the message"),
    "annotate": (A.Command.ANNOTATE, "leave a note about the level"),
    "apply": (A.Command.APPLY, "apply (use) a tool"),
    "call": (A.Command.CALL, "name a monster or object, or add an annotation"),
    "cast": (A.Command.CAST, "cast a spell"),
    "close": (A.Command.CLOSE, "close an adjacent door"),
    "open": (A.Command.OPEN, "open an adjacent door"),
    "dip": (A.Command.DIP, "dip an object into something"),
    "drop": (A.Command.DROP, "drop an item"),
    "droptype": (A.Command.DROPTYPE, "drop specific item types"),
    "eat": (A.Command.EAT, "eat something (tip: replenish food when hungry)"),
    "esc": (A.Command.ESC, "exit menu or message"),
    "engrave": (A.Command.ENGRAVE, "engrave writing on the floor (tip: Elbereth)"),
    "enhance": (A.Command.ENHANCE, "advance or check weapons skills"),
    "fire": (A.Command.FIRE, "fire ammunition from quiver"),
    "fight": (A.Command.FIGHT, "fight a monster (even if you only guess one is there)"),
    "force": (A.Command.FORCE, "force a lock"),
    "inventory": (A.Command.INVENTORY, "show your inventory"),
    "invoke": (A.Command.INVOKE, "invoke an object's special powers"),
    "jump": (A.Command.JUMP, "jump to a location"),
    "kick": (A.Command.KICK, "kick an enemy or a locked door or chest"),
    "look": (A.Command.LOOK, "look at what is under you"),
    "loot": (A.Command.LOOT, "loot a box on the floor"),
    "monster": (A.Command.MONSTER, "use a monster's special ability (when polymorphed)"),
    "offer": (A.Command.OFFER, "offer a sacrifice to the gods (tip: on an aligned altar)"),
    "overview": (A.Command.OVERVIEW, "display an overview of the dungeon"),
    "pay": (A.Command.PAY, "pay your shopping bill"),
    "pickup": (A.Command.PICKUP, "pick up things at the current location"),
    "pray": (A.Command.PRAY, "pray to the gods for help"),
    "puton": (A.Command.PUTON, "put on an accessory"),
    "quaff": (A.Command.QUAFF, "quaff (drink) something"),
    "quiver": (A.Command.QUIVER, "select ammunition for quiver"),
    "read": (A.Command.READ, "read a scroll or spellbook"),
    "remove": (A.Command.REMOVE, "remove an accessory"),
    "rub": (A.Command.RUB, "rub a lamp or a stone"),
    "search": (A.Command.SEARCH, "search for hidden doors and passages"),
    "swap": (A.Command.SWAP, "swap wielded and secondary weapons"),
    "takeoff": (A.Command.TAKEOFF, "take off one piece of armor"),
    "takeoffall": (A.Command.TAKEOFFALL, "take off all armor"),
    "teleport": (A.Command.TELEPORT, "teleport to another level (if you have the ability)"),
    "throw": (A.Command.THROW, "throw something (e.g. a dagger or dart)"),
    "travel": (A.Command.TRAVEL, "travel to a location (then > or < for stairs)"),
    "twoweapon": (A.Command.TWOWEAPON, "toggle two-weapon combat"),
    "untrap": (A.Command.UNTRAP, "untrap something"),
    "wear": (A.Command.WEAR, "wear a piece of armor"),
    "wield": (A.Command.WIELD, "wield a weapon"),
    "wipe": (A.Command.WIPE, "wipe off your face"),
    "zap": (A.Command.ZAP, "zap a wand"),
    "minus": (A.TextCharacters.MINUS, "the key -"),
    "space": (A.TextCharacters.SPACE, "the space key"),
    "apos": (A.TextCharacters.APOS, "the key '"),
}
for _digit in range(10):
    ACTIONS[str(_digit)] = (ord(str(_digit)), f"the key {_digit}")

_SYNONYMS = {"pick up": "pickup", "escape": "esc", "rest": "wait", "put on": "puton"}
_SYNONYMS |= {f"move {w}": w for w, (_, what) in ACTIONS.items() if what == f"move {w}"}

KEYS: dict[str, int] = {word: int(key) for word, (key, _) in ACTIONS.items()}
"""Every action word (and single letter, answering a prompt or menu) to its NetHack key."""
KEYS |= {chr(c): c for c in range(ord("a"), ord("z") + 1)}
KEYS |= {chr(c): c for c in range(ord("A"), ord("Z") + 1)}
KEYS |= {"$": ord("$"), "<": ord("<"), ">": ord(">"), "*": ord("*")}
assert set(KEYS.values()) <= {int(a) for a in nethack.ACTIONS}, "a key nle does not take"

# The wrapper's cmap names, by NetHack 3.6's cmap index (0..63).
_CMAP = [
    "dark area",
    "vertical wall",
    "horizontal wall",
    "northwest room corner",
    "northeast room corner",
    "southwest corner",
    "southeast corner",
    "cross wall",
    "t up wall",
    "t down wall",
    "t west wall",
    "t east wall",
    "doorway",
    "vertical open door",
    "horizontal open door",
    "vertical closed door",
    "horizontal closed door",
    "bars",
    "tree",
    "room floor",
    "dark room floor",
    "corridor floor",
    "lit corridor floor",
    "stairs up",
    "stairs down",
    "ladder up",
    "ladder down",
    "altar",
    "grave",
    "throne",
    "sink",
    "fountain",
    "pool",
    "ice",
    "lava",
    "vertical lowered drawbridge",
    "horizontal lowered drawbridge",
    "vertical raised drawbridge",
    "horizontal raised drawbridge",
    "air floor",
    "cloud floor",
    "water floor",
    "arrow trap",
    "dart trap",
    "falling rock trap",
    "squeaky board",
    "bear trap",
    "land mine",
    "rolling boulder trap",
    "sleeping gas trap",
    "rust trap",
    "fire trap",
    "pit",
    "spiked pit",
    "hole",
    "trap door",
    "teleportation trap",
    "level teleporter",
    "magic portal",
    "web",
    "statue trap",
    "magic trap",
    "anti magic trap",
    "polymorph trap",
    "vibrating square",
]
_FLOOR = frozenset({"room floor", "dark room floor", "corridor floor", "lit corridor floor"})
_BLOCKING = frozenset(_CMAP[0:12]) | {
    "horizontal closed door",
    "vertical closed door",
    "horizontal raised drawbridge",
    "vertical raised drawbridge",
}
_ON_SCREEN = frozenset(
    [
        "horizontal closed door",
        "vertical closed door",
        "bars",
        "tree",
        "stairs up",
        "stairs down",
        "ladder up",
        "ladder down",
        "altar",
        "grave",
        "throne",
        "sink",
        "fountain",
        "pool",
        "ice",
        "lava",
        "vertical raised drawbridge",
        "horizontal raised drawbridge",
    ]
)
_DISTANCES = ("very far", "far", "near", "very near", "adjacent")
_DIRECTIONS = [
    "north",
    "northnortheast",
    "northeast",
    "eastnortheast",
    "east",
    "eastsoutheast",
    "southeast",
    "southsoutheast",
    "south",
    "southsouthwest",
    "southwest",
    "westsouthwest",
    "west",
    "westnorthwest",
    "northwest",
    "northnorthwest",
]
_DISTANCE_RANK = {name: rank for rank, name in enumerate(_DISTANCES)}
_DIRECTION_RANK = {name: rank for rank, name in enumerate(_DIRECTIONS)}


def _object_name(index: int) -> str:
    """An object glyph's name as the wrapper words it, by object class."""
    descr = nethack.objdescr.from_idx(index)
    name, look = descr.oc_name or "", descr.oc_descr or ""
    kind = ord(nethack.objclass(index).oc_class)  # a one-character str in nle
    if kind in (nethack.ARMOR_CLASS, nethack.TOOL_CLASS):
        return look or name
    if kind == nethack.RING_CLASS:
        return f"{look} ring"
    if kind == nethack.AMULET_CLASS:
        return look if "Amulet" in look else f"{look} amulet"
    if kind == nethack.FOOD_CLASS:
        return name + look
    suffix = {nethack.POTION_CLASS: "potion", nethack.SPBOOK_CLASS: "spellbook"}
    if kind in suffix or kind == nethack.WAND_CLASS:
        return f"{look} {suffix.get(kind, 'wand')}"
    if kind == nethack.SCROLL_CLASS:
        return f"scroll labeled {look}"
    if kind == nethack.GEM_CLASS:
        return name if look in name else f"{look} {name}"
    if kind == nethack.VENOM_CLASS:
        return f"splash of {name}"
    return name


@cache
def glyph_name(glyph: int) -> tuple[str, str]:
    """``(name, where)`` of a glyph: ``where`` is ``"screen"`` (listed wherever it is on the
    level), ``"ray"`` (listed along the eight rays from the agent) or ``""`` (never: floor)."""
    mon = nethack.permonst
    if not 0 <= glyph < nethack.MAX_GLYPH:  # NO_GLYPH: nothing is drawn there
        return "", ""
    if glyph >= nethack.GLYPH_STATUE_OFF:
        return f"{mon(nethack.glyph_to_mon(glyph)).mname} statue", "screen"
    if glyph >= nethack.GLYPH_WARNING_OFF:
        return "warning", "screen"
    if glyph >= nethack.GLYPH_SWALLOW_OFF:
        return "swallowed", "screen"
    if glyph >= nethack.GLYPH_ZAP_OFF:
        return "zap beam", "screen"
    if glyph >= nethack.GLYPH_EXPLODE_OFF:
        return "explosion", "screen"
    if glyph >= nethack.GLYPH_CMAP_OFF:
        index = glyph - nethack.GLYPH_CMAP_OFF
        name = _CMAP[index] if index < len(_CMAP) else ""
        if not name or name in _FLOOR:
            return "", ""
        return name, "screen" if name in _ON_SCREEN else "ray"
    if glyph >= nethack.GLYPH_OBJ_OFF:
        return _object_name(glyph - nethack.GLYPH_OBJ_OFF), "screen"
    if glyph >= nethack.GLYPH_BODY_OFF and glyph < nethack.GLYPH_RIDDEN_OFF:
        return f"{mon(glyph - nethack.GLYPH_BODY_OFF).mname} corpse", "screen"
    if nethack.GLYPH_INVIS_OFF <= glyph < nethack.GLYPH_DETECT_OFF:
        return "invisible creature", "screen"
    monster = mon(nethack.glyph_to_mon(glyph)).mname
    if glyph >= nethack.GLYPH_RIDDEN_OFF:
        return f"ridden {monster}", "screen"
    if glyph >= nethack.GLYPH_DETECT_OFF:
        return f"detected {monster}", "screen"
    if glyph >= nethack.GLYPH_PET_OFF:
        return f"tame {monster}", "screen"
    return monster, "screen"


@cache
def offset_words(dx: int, dy: int) -> tuple[str, str]:
    """``(distance, direction)`` of a square ``dx`` east and ``dy`` north of the agent, as the
    wrapper's ``pos_to_str`` words it: the diagonal part names the last compass point."""
    diagonal_steps = min(abs(dx), abs(dy))
    diagonal = ""
    if diagonal_steps:
        diagonal = ("north" if dy > 0 else "south") + ("east" if dx > 0 else "west")
    x_rest = dx - diagonal_steps if dx > 0 else dx + diagonal_steps
    y_rest = dy - diagonal_steps if dy > 0 else dy + diagonal_steps
    vertical = "north" if y_rest > 0 else "south" if y_rest < 0 else ""
    horizontal = "east" if x_rest > 0 else "west" if x_rest < 0 else ""
    reach = max(abs(dx), abs(dy))
    distance = (
        "adjacent"
        if reach == 1
        else "very near"
        if reach == 2
        else "near"
        if reach < 6
        else "far"
        if reach < 20
        else "very far"
    )
    return distance, vertical + horizontal + diagonal


_RAYS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))  # (dx, drow)


@cache
def _listed_on_screen() -> np.ndarray:
    """For every glyph (and NO_GLYPH), whether it is listed wherever it is on the level: a
    table, so finding them on a 21x79 map is one numpy lookup, not 1,659 calls."""
    table = [glyph_name(g)[1] == "screen" for g in range(nethack.MAX_GLYPH + 1)]
    return np.array(table, dtype=bool)


def _sightings(glyphs: np.ndarray, x: int, y: int) -> list[tuple[str, str, str]]:
    """``(name, distance, direction)`` of everything the wrapper lists, unsorted."""
    seen: list[tuple[str, str, str]] = []
    rows, columns = np.nonzero(_listed_on_screen()[glyphs])
    for row, column in zip(rows.tolist(), columns.tolist(), strict=True):
        if (row, column) != (y, x):
            name, _ = glyph_name(int(glyphs[row, column]))
            seen.append((name, *offset_words(column - x, y - row)))
    for dx, drow in _RAYS:
        for step in range(1, 10):
            column, row = x + dx * step, y + drow * step
            if not (0 <= column < COLUMNS and 0 <= row < ROWS):
                break
            name, where = glyph_name(int(glyphs[row, column]))
            if where == "ray":
                seen.append((name, *offset_words(column - x, y - row)))
                if name in _BLOCKING:
                    break
    return seen


def _plural(name: str) -> str:
    head, sep, tail = name.partition(" of ")
    if head.endswith(("s", "x", "ch", "sh")):
        head += "es"
    elif head.endswith("y") and head[-2:-1] not in tuple("aeiou"):
        head = head[:-1] + "ies"
    else:
        head += "s"
    return head + sep + tail


def _listed(directions: Sequence[str]) -> str:
    if len(directions) <= 2:
        return " and ".join(directions)
    return ", ".join(directions[:-1]) + ", and " + directions[-1]


def language_observation(glyphs: np.ndarray, x: int, y: int) -> str:
    """The wrapper's ``text_glyphs``: one line per (name, distance), far to near, clockwise."""
    seen = sorted(
        _sightings(glyphs, x, y),
        key=lambda s: (_DISTANCE_RANK[s[1]], _DIRECTION_RANK[s[2]]),
    )
    groups: dict[tuple[str, str], list[str]] = {}
    for name, distance, direction in seen:
        groups.setdefault((name, distance), []).append(direction)
    lines: list[tuple[int, int, str]] = []
    for (name, distance), directions in groups.items():
        single = [d for d in dict.fromkeys(directions) if directions.count(d) == 1]
        several = [d for d in dict.fromkeys(directions) if directions.count(d) > 1]
        rank = _DISTANCE_RANK[distance]
        for label, where in ((name, single), (_plural(name), several)):
            if where:
                lines.append((rank, len(lines), f"{label} {distance} {_listed(where)}"))
    return "\n".join(text for *_, text in sorted(lines))


def _cursor(obs: Mapping[str, np.ndarray]) -> str:
    """The wrapper's ``text_cursor`` and BALROG's ``(x=.., y=..)`` after it."""
    row, column = (int(v) for v in obs["tty_cursor"])
    x, y = int(obs["blstats"][nethack.NLE_BL_X]), int(obs["blstats"][nethack.NLE_BL_Y])
    where = ""
    if 1 <= row <= ROWS and 0 <= column < COLUMNS:
        name, _ = glyph_name(int(obs["glyphs"][row - 1, column]))
        if (column, row - 1) == (x, y):
            where = f"Yourself a {name}"
        else:
            distance, direction = offset_words(column - x, y - (row - 1))
            where = f"{distance} {direction} {name}"
    return f"{where}\n(x={column}, y={row})"


def _inventory(obs: Mapping[str, np.ndarray]) -> str:
    lines = []
    for letter, text in zip(obs["inv_letters"], obs["inv_strs"], strict=True):
        if not letter:
            break
        lines.append(f"{chr(int(letter))}: {_bytes(text)}")
    return "\n".join(lines)


def _bytes(array: np.ndarray) -> str:
    return bytes(array).split(b"\0", 1)[0].decode("latin-1").rstrip()


def describe(obs: Mapping[str, np.ndarray], message: str) -> str:
    """BALROG's hybrid NetHack prompt for one observation: message, language observation,
    cursor, map (the tty screen below its message line) and inventory."""
    x, y = int(obs["blstats"][nethack.NLE_BL_X]), int(obs["blstats"][nethack.NLE_BL_Y])
    screen = "\n".join(bytes(row).decode("latin-1").rstrip() for row in obs["tty_chars"][1:])
    parts = (
        ("message", message),
        ("language observation", language_observation(obs["glyphs"], x, y)),
        ("cursor", _cursor(obs)),
        ("map", screen.rstrip("\n")),
        ("inventory", _inventory(obs)),
    )
    return "\n\n".join(f"{title}:\n{text}" for title, text in parts)


def parse_action(text: str) -> int | None:
    """The NetHack key for the agent's text, ``None`` when it names no action.

    A word (``north``, ``far east``, ``pickup``...) is read in any case, with quotes, a
    trailing full stop or an ``Action:`` label around it, from the whole text or its last
    line; a single letter answers a prompt or menu and keeps its case."""
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    for candidate in [text, lines[-1]] if lines else [text]:
        stripped = candidate.strip().strip("`'\"*")
        if stripped.lower().startswith(("action:", "action =")):
            stripped = stripped.split(":", 1)[-1].split("=", 1)[-1].strip().strip("`'\"*")
        if len(stripped) == 1 and stripped in KEYS:
            return KEYS[stripped]
        words = " ".join(stripped.lower().rstrip(".!").split())
        words = _SYNONYMS.get(words, words)
        if words in KEYS and len(words) > 1:
            return KEYS[words]
    return None
