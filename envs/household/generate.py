"""Household games in ALFWorld's format, generated from the floor plans alfworld ships.

ALFWorld's own games (``game.tw-pddl`` per ALFRED trajectory) are downloaded from a release our
machines cannot reach; the package does ship everything they are made of: ALFRED's PDDL domain
(``data/alfred.pddl``), the text grammar (``data/alfred.twl2``), each floor plan's objects and
receptacles with their poses (``gen/layouts/FloorPlan*-objects.json``, ``*-openable.json``),
which receptacle can hold which object and which objects can be cleaned, heated, cooled,
sliced or toggled (``gen/constants.py``), and each task type's PDDL goal and goal phrasings
(``gen/goal_library.py``). :func:`generate` draws a scene and a task from a seed with those,
and :func:`write_game` writes it as ALFWorld lays a game out (``game.tw-pddl`` +
``traj_data.json``), so alfworld's TextWorld environment and its hand-coded expert play it as
they play a published game.

A scene: the floor plan's receptacles (all of them, or a seeded subset at the easier levels;
the receptacles a task needs are always kept), the task's objects placed in receptacles that
can hold them (ALFRED's ``canContain``, never already in the goal's receptacle), and
distractor objects from the floor plan's own object list, placed the same way.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import alfworld.gen.constants as constants
import alfworld.gen.goal_library as goal_library
from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

__all__ = [
    "HELD_OUT_FLOOR_PLANS",
    "LEVELS",
    "TASK_TYPES",
    "Game",
    "floor_plans",
    "generate",
    "write_game",
]

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""ALFWorld's six task types (its ``TASK_TYPES`` 1-6), in its order."""

HELD_OUT_FLOOR_PLANS = (10, 219, 308, 424)
"""The floor plans of ALFRED's ``valid_unseen`` split (one kitchen, living room, bedroom and
bathroom), which ALFWorld's ``eval_out_of_distribution`` games use: the test split's only
floor plans, never in train or dev."""

LEVELS: dict[str, dict[str, int]] = {
    "easy": {"receptacles": 6, "distractors": 2},
    "medium": {"receptacles": 12, "distractors": 6},
    "hard": {"receptacles": 1_000, "distractors": 12},
}
"""Per level: at most this many receptacles (the floor plan's own count caps it) and distractor
objects (``hard``: every pickable object type of the floor plan, 1-3 instances each)."""

_LAMPS = ("DeskLamp", "FloorLamp")
_LAMP_HOLDERS = ("Desk", "SideTable", "Dresser", "CoffeeTable", "DiningTable", "Shelf")
_NEEDS = {
    "pick_clean_then_place_in_recep": ("SinkBasin", "Cleanable"),
    "pick_heat_then_place_in_recep": ("Microwave", "Heatable"),
    "pick_cool_then_place_in_recep": ("Fridge", "Coolable"),
}
_LAYOUTS = Path(constants.__file__).parent / "layouts"


@dataclass
class Game:
    """A generated task: its PDDL problem, goal text and the parameters ALFWorld records."""

    task_type: str
    floor_plan: int
    goal: str
    problem: str
    params: dict[str, Any] = field(default_factory=dict)


def mangle(name: str) -> str:
    """An ALFRED object id as ALFWorld's PDDL writes it (``alfworld.gen``'s fix_pddl_str_chars)."""
    for old, new in (("|", "_bar_"), ("-", "_minus_"), ("+", "_plus_"), (".", "_dot_")):
        name = name.replace(old, new)
    return name


@cache
def floor_plans() -> tuple[int, ...]:
    """Every floor plan the package ships a layout of, in number order."""
    names = (p.name.split("-")[0] for p in _LAYOUTS.glob("FloorPlan*-objects.json"))
    return tuple(sorted(int(n.removeprefix("FloorPlan")) for n in names))


@cache
def _layout(plan: int) -> tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]:
    """(object types, receptacles as (id, type, location)) of a floor plan."""
    objects = json.loads((_LAYOUTS / f"FloorPlan{plan}-objects.json").read_text())
    poses = json.loads((_LAYOUTS / f"FloorPlan{plan}-openable.json").read_text())
    receptacles = []
    for index, (rid, (x, z, rotation, horizon)) in enumerate(sorted(poses.items())):
        parts = rid.split("|")
        kind = parts[4] if len(parts) > 4 else parts[0]
        if kind not in constants.RECEPTACLES:
            continue
        # ALFRED's location: the pose in grid steps; the index keeps two receptacles seen
        # from the same spot apart.
        loc = f"loc|{round(x / 0.25)}|{round(z / 0.25)}|{int(rotation) // 90}|{int(horizon)}"
        receptacles.append((rid, kind, f"{loc}|{index}"))
    return tuple(sorted(set(objects))), tuple(receptacles)


def _holds(receptacle: str, obj: str) -> bool:
    return obj in constants.VAL_RECEPTACLE_OBJECTS.get(receptacle, ())


def _pickable(obj: str) -> bool:
    static = constants.RECEPTACLES - constants.MOVABLE_RECEPTACLES_SET
    return obj not in static and any(_holds(r, obj) for r in constants.VAL_RECEPTACLE_OBJECTS)


def _afford(obj: str, affordance: str) -> bool:
    return obj in constants.VAL_ACTION_OBJECTS[affordance]


def _candidates(task_type: str, plan: int) -> list[tuple[str, str, str]]:
    """(object, parent receptacle type, lamp) triples the floor plan can host for a type."""
    objects, receptacles = _layout(plan)
    kinds = {kind for _, kind, _ in receptacles}
    pickable = [o for o in objects if _pickable(o) and any(_holds(k, o) for k in kinds)]
    if task_type == "look_at_obj_in_light":
        lamps = [lamp for lamp in _LAMPS if lamp in objects]
        holders = kinds & set(_LAMP_HOLDERS)
        if not lamps or not holders:
            return []
        return [(o, "", lamp) for o in pickable for lamp in lamps]
    helper, affordance = _NEEDS.get(task_type, ("", ""))
    if helper and helper not in kinds:
        return []
    return [
        (o, parent, "")
        for o in pickable
        if not affordance or _afford(o, affordance)
        for parent in sorted(kinds)
        if _holds(parent, o)
        and parent != helper
        # the target must start somewhere other than a receptacle of the goal's type
        and any(_holds(k, o) for k in kinds - {parent})
    ]


def generate(task_type: str, level: str, plans: tuple[int, ...], seed: int) -> Game:
    """The game of ``seed``: a floor plan of ``plans`` that can host ``task_type``, a task on
    it and a scene of ``level``. Raises ValueError when no floor plan of ``plans`` can."""
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task type {task_type!r}; expected one of {TASK_TYPES}")
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; expected one of {tuple(LEVELS)}")
    rng = random.Random(f"{task_type}/{level}/{seed}")
    hosts = [p for p in plans if _candidates(task_type, p)]
    if not hosts:
        raise ValueError(f"no floor plan of {plans} can host a {task_type} task")
    plan = rng.choice(hosts)
    obj, parent, lamp = rng.choice(_candidates(task_type, plan))
    return _scene(task_type, level, plan, obj, parent, lamp, rng)


def _scene(
    task_type: str, level: str, plan: int, obj: str, parent: str, lamp: str, rng: random.Random
) -> Game:
    """Lay out the scene of a chosen task and write its PDDL problem."""
    objects, all_receptacles = _layout(plan)
    limits = LEVELS[level]
    helper = _NEEDS.get(task_type, ("", ""))[0]
    receptacles = _pick_receptacles(all_receptacles, limits["receptacles"], rng, parent, helper)
    if lamp:
        holders = [r for r in receptacles if r[1] in _LAMP_HOLDERS]
        if not holders:  # keep one lamp holder of the floor plan
            holders = [r for r in all_receptacles if r[1] in _LAMP_HOLDERS]
            receptacles.append(rng.choice(holders))
    placed: list[tuple[str, str]] = []  # (object type, receptacle id)
    count = 2 if task_type == "pick_two_obj_and_place" else 1
    sources = [r for r in receptacles if _holds(r[1], obj) and r[1] != parent]
    if len(sources) == 0:  # the receptacle holding the target was cut: bring one back
        sources = [r for r in all_receptacles if _holds(r[1], obj) and r[1] != parent]
        receptacles.append(rng.choice(sources))
        sources = [receptacles[-1]]
    placed += [(obj, rng.choice(sources)[0]) for _ in range(count + rng.randrange(2))]
    if lamp:
        placed.append((lamp, rng.choice([r for r in receptacles if r[1] in _LAMP_HOLDERS])[0]))
    placed += _distractors(objects, receptacles, limits["distractors"], {obj, *_LAMPS}, rng)
    params = {
        "object_target": obj,
        "parent_target": parent,
        "toggle_target": lamp,
        "mrecep_target": "",
        "object_sliced": False,
    }
    template = rng.choice(goal_library.gdict[task_type]["templates"])
    goal = template.format(obj=obj.lower(), recep=parent.lower(), toggle=lamp.lower(), mrecep="")
    problem = _problem(task_type, plan, receptacles, placed, params, rng)
    return Game(task_type, plan, goal, problem, params)


def _pick_receptacles(
    receptacles: tuple[tuple[str, str, str], ...],
    most: int,
    rng: random.Random,
    *kinds: str,
) -> list[tuple[str, str, str]]:
    """A seeded subset of at most ``most`` receptacles keeping one of each kind in ``kinds``."""
    kept: list[tuple[str, str, str]] = []
    for kind in filter(None, kinds):
        kept.append(rng.choice([r for r in receptacles if r[1] == kind]))
    rest = [r for r in receptacles if r not in kept]
    rng.shuffle(rest)
    return sorted(kept + rest[: max(most - len(kept), 0)])


def _distractors(
    objects: tuple[str, ...],
    receptacles: list[tuple[str, str, str]],
    most: int,
    exclude: set[str],
    rng: random.Random,
) -> list[tuple[str, str]]:
    """Other pickable objects of the floor plan, 1-3 instances a type (ALFRED's
    MAX_NUM_OF_OBJ_INSTANCES), each in a receptacle that can hold it."""
    placed: list[tuple[str, str]] = []
    kinds = [o for o in objects if _pickable(o) and o not in exclude]
    rng.shuffle(kinds)
    for kind in kinds:
        holders = [r for r in receptacles if _holds(r[1], kind)]
        for _ in range(rng.randint(1, constants.MAX_NUM_OF_OBJ_INSTANCES)):
            if holders and len(placed) < most:
                placed.append((kind, rng.choice(holders)[0]))
    return placed


def _problem(
    task_type: str,
    plan: int,
    receptacles: list[tuple[str, str, str]],
    placed: list[tuple[str, str]],
    params: dict[str, Any],
    rng: random.Random,
) -> str:
    """The PDDL problem in the shape of ALFWorld's games (objects, init facts, goal)."""
    location = {rid: mangle(loc) for rid, _, loc in receptacles}
    ids = []
    for kind, _ in placed:  # ALFRED-style ids: type and a made-up position
        while (
            oid := f"{kind}|{rng.uniform(-3, 3):+06.2f}|{rng.uniform(0, 2):+06.2f}|"
            f"{rng.uniform(-3, 3):+06.2f}"
        ) in ids:
            pass
        ids.append(oid)
    otypes = sorted({k for k, _ in placed} | {"Knife", "ButterKnife"})
    rtypes = sorted({k for _, k, _ in receptacles} | {"SinkBasin", "Microwave", "Fridge"})
    start = "loc|0|0|0|30"
    declared = [("agent1", "agent")]
    declared += [(f"{t}Type", "otype") for t in otypes] + [(f"{t}Type", "rtype") for t in rtypes]
    declared += [(mangle(oid), "object") for oid in ids]
    declared += [(mangle(rid), "receptacle") for rid, _, _ in receptacles]
    declared += [(loc, "location") for loc in sorted(set(location.values()) | {mangle(start)})]
    facts = [f"(atLocation agent1 {mangle(start)})"]
    for rid, kind, _ in receptacles:
        facts.append(f"(receptacleType {mangle(rid)} {kind}Type)")
        facts.append(f"(receptacleAtLocation {mangle(rid)} {location[rid]})")
        if kind in constants.OPENABLE_CLASS_SET:
            facts.append(f"(openable {mangle(rid)})")
    for oid, (kind, rid) in zip(ids, placed, strict=True):
        facts += _object_facts(mangle(oid), kind, mangle(rid), location[rid])
    facts += [f"(canContain {r}Type {o}Type)" for r in rtypes for o in otypes if _holds(r, o)]
    template: str = goal_library.gdict[task_type]["pddl"]
    goal = template.format(
        obj=params["object_target"],
        recep=params["parent_target"],
        toggle=params["toggle_target"],
        mrecep="",
    ).replace("#", "-")
    return (
        f"; generated by agentgym's envs/household/generate.py from FloorPlan{plan}\n"
        f"(define (problem plan_{task_type}_{plan})\n(:domain alfred)\n(:objects\n"
        + "".join(f"{name} - {kind}\n" for name, kind in declared)
        + ")\n(:init\n"
        + "".join(f"{fact}\n" for fact in facts)
        + ")\n"
        + goal.strip()
        + "\n"
    )


def _object_facts(oid: str, kind: str, rid: str, loc: str) -> list[str]:
    """An object's type, affordances and place."""
    facts = [f"(objectType {oid} {kind}Type)"]
    if kind in _LAMPS:
        facts.append(f"(toggleable {oid})")
    else:
        facts.append(f"(pickupable {oid})")
    for affordance, predicate in (
        ("Cleanable", "cleanable"),
        ("Heatable", "heatable"),
        ("Coolable", "coolable"),
        ("Sliceable", "sliceable"),
    ):
        if _afford(kind, affordance):
            facts.append(f"({predicate} {oid})")
    if kind in constants.MOVABLE_RECEPTACLES_SET:
        facts.append(f"(isReceptacleObject {oid})")
    facts += [f"(inReceptacle {oid} {rid})", f"(objectAtLocation {oid} {loc})"]
    return facts


def write_game(game: Game, folder: Path) -> Path:
    """Write ``game`` as ALFWorld lays one out: ``folder/game.tw-pddl`` (domain, grammar with
    the goal, problem) and ``folder/traj_data.json`` (what ALFWorld's expert reads)."""
    folder.mkdir(parents=True, exist_ok=True)
    grammar = Path(ALFRED_TWL2_PATH).read_text().replace("UNKNOWN GOAL", game.goal)
    data = {
        "pddl_domain": Path(ALFRED_PDDL_PATH).read_text(),
        "grammar": grammar,
        "pddl_problem": game.problem,
        "solvable": True,
    }
    traj = {
        "task_type": game.task_type,
        "pddl_params": game.params,
        "scene": {"floor_plan": f"FloorPlan{game.floor_plan}"},
        "goal": game.goal,
    }
    (folder / "traj_data.json").write_text(json.dumps(traj, indent=1) + "\n")
    path = folder / "game.tw-pddl"
    path.write_text(json.dumps(data) + "\n")
    return path
