"""Crafter in text (``roguelike/Crafter-v0``): the real game (``crafter``), told in words,
scored by BALROG's progression metric.

**What the agent sees.** As BALROG's Crafter language wrapper tells it, rebuilt by
:mod:`.crafter_text`: the closest object of each kind in the local view (the 9 x 7 cells that
crafter's picture shows) with its offset in steps north/south and east/west, the direction the
player faces and what is there, whether it sleeps, its four vitals out of 9 and its inventory.
An achievement unlocked by the step is named in the feedback.

**What it may do.** The 17 actions by name (``Move West``, ``Do``, ``Make Wood Pickaxe``...;
case, spaces and underscores do not matter). Anything else is an invalid action: no game time
passes and the observation says what went wrong (BALROG plays ``Noop`` instead).

**Scoring.** BALROG's progression: the share of crafter's 22 achievements unlocked in the
episode, 0..1; each one is a component of the verdict. All 22 is the maximum and ends the
episode as passed; otherwise nothing "passes": the game is open-ended, and the env declares
``metadata["open_ended"]``: its reference player (:mod:`.crafter_bot`, the oracle) must beat
random actions by a margin (docs/contract.md, "Open-ended games").

**Episodes.** Crafter's default world (64 x 64 area, 9 x 9 view), made by crafter from a seed
that the task id determines; the episode ends when the player dies, at all 22 achievements, or
at the registry's step limit, 2,000 actions (BALROG's). The picture is not drawn (the agent
reads text), but the random numbers crafter's night-time picture draws are drawn all the same,
so a game plays as ``crafter.Env(seed=...)`` plays it with the same actions, but for one
fix: crafter chooses which creature a crowded chunk loses by its place in a set ordered by
memory address, so its games differ from one process to the next; ours keep each chunk's
creatures in the order they came into it.

**Snapshots.** ``get_state``/``set_state``: the game is plain Python objects and a NumPy
random state, so a deep copy of it is the whole game.

**Version history.** v0: first release.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import Any

import crafter

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.task_env import InvalidAction, TaskEnv

from .crafter_text import ACTIONS, NAMES, describe, parse_action

__all__ = [
    "ACHIEVEMENTS",
    "CrafterEnv",
    "CrafterTask",
    "CrafterWorld",
    "crafter_seed",
    "new_game",
    "progression",
]

ACHIEVEMENTS: tuple[str, ...] = tuple(crafter.constants.achievements)
"""Crafter's 22 achievements, in its own (alphabetical) order."""

WORLD_CACHE = 16
"""Freshly generated worlds kept per process: crafter's world generation takes about a second
(pure-Python simplex noise), and the checker and trainers reset the same tasks again."""

_fresh: OrderedDict[int, Any] = OrderedDict()


def progression(achievements: dict[str, int]) -> float:
    """BALROG's Crafter progression: the share of the 22 achievements unlocked."""
    return sum(1 for name in ACHIEVEMENTS if achievements.get(name, 0) > 0) / len(ACHIEVEMENTS)


def crafter_seed(seed: int) -> int:
    """The seed crafter's ``Env`` gets for a task seed (31 bits, as crafter draws its own)."""
    digest = hashlib.blake2b(f"crafter:{seed}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % (2**31 - 1)


def _night_noise(game: Any) -> None:
    """crafter's observation without the picture, drawing what the picture draws: at night
    (daylight below 0.5) its darkness noise takes one uniform number per pixel of the local
    view from the world's generator, which zombies and cows then draw from too."""
    if game._world.daylight < 0.5:
        unit = game._size // game._view
        game._world.random.uniform(32, 127, tuple(game._local_view._grid * unit))


def new_game(seed: int) -> Any:
    """A reset ``crafter.Env`` of crafter seed ``seed`` that draws no picture and keeps its
    creatures in a fixed order (a copy of the cached one where this process made it before)."""
    if seed in _fresh:
        _fresh.move_to_end(seed)
    else:
        game = crafter.Env(seed=seed, length=None)
        game._obs = _NoPicture(game)
        game.reset()
        _order_chunks(game._world)
        _fresh[seed] = game
        while len(_fresh) > WORLD_CACHE:
            _fresh.popitem(last=False)
    cached = _fresh[seed]
    return copy.deepcopy(cached, {id(cached._textures): cached._textures})  # images: shared


class _Chunk(dict[Any, None]):
    """A chunk's creatures in the order they came into it, with the ``add``/``remove`` of
    the ``set`` crafter keeps them in. crafter picks the creature a chunk loses by its place
    in that set, which is ordered by memory address: the same seed and actions then play out
    differently from one process to the next."""

    def add(self, obj: Any) -> None:
        self[obj] = None

    def remove(self, obj: Any) -> None:
        del self[obj]


def _order_chunks(world: Any) -> None:
    """Keep each chunk of the generated world in a :class:`_Chunk`, its creatures in the
    order they were added to the world."""
    chunks: defaultdict[Any, _Chunk] = defaultdict(_Chunk)
    for key, objs in world._chunks.items():
        chunks[key].update(dict.fromkeys(sorted(objs, key=lambda o: world._obj_map[tuple(o.pos)])))
    world._chunks = chunks


class _NoPicture:
    """Stands for ``crafter.Env._obs`` (a callable attribute that pickles, unlike a lambda)."""

    def __init__(self, game: Any) -> None:
        self.game = game

    def __call__(self) -> None:
        _night_noise(self.game)


@dataclass
class CrafterWorld:
    """One game: crafter's env and what the episode has come to."""

    game: Any
    seed: int
    steps: int = 0
    over: bool = False
    end: str = ""
    bot: Any = None  # the reference player's memory (crafter_bot.CrafterBot)
    history: list[str] = field(default_factory=list)  # achievements in the order unlocked

    @property
    def achievements(self) -> dict[str, int]:
        counts: dict[str, int] = self.game._player.achievements
        return counts


class CrafterTask(Task[CrafterWorld]):
    """A Crafter game: the world that the task seed's crafter seed generates."""

    def setup(self, rng: Any) -> tuple[CrafterWorld, str]:
        world = CrafterWorld(new_game(crafter_seed(self.seed)), self.seed)
        goal = (
            "You are playing Crafter, a 2D survival game. Your goal is to unlock as many of "
            "its 22 achievements as you can: "
            + ", ".join(name.replace("_", " ") for name in ACHIEVEMENTS)
            + ". Stay alive: keep your food, drink and energy up, and beware of zombies "
            "(on grass, mostly at night), skeletons (in caves) and lava."
        )
        return world, goal

    def validate(self, world: CrafterWorld) -> Verdict:
        counts = world.achievements
        score = progression(counts)
        unlocked = [name for name in ACHIEVEMENTS if counts.get(name, 0) > 0]
        details = f"{len(unlocked)} of {len(ACHIEVEMENTS)} achievements: " + (
            ", ".join(unlocked) or "none"
        )
        if world.end:
            details += f"; {world.end}"
        components = {name: float(counts.get(name, 0) > 0) for name in ACHIEVEMENTS}
        return Verdict(
            score=score,
            passed=len(unlocked) == len(ACHIEVEMENTS),
            components={"progression": score, **components},
            details=details,
        )

    def solve(self, world: CrafterWorld) -> str | None:
        if world.over:
            return None
        from .crafter_bot import bot_action  # the bot needs only the world

        return bot_action(world)


def play(world: CrafterWorld, action: int) -> list[str]:
    """One game step of action index ``action``; the achievements it unlocked."""
    before = {name for name, count in world.achievements.items() if count > 0}
    _, _, done, _ = world.game.step(action)
    world.steps += 1
    new = [n for n in ACHIEVEMENTS if world.achievements.get(n, 0) > 0 and n not in before]
    world.history += new
    if world.game._player.health <= 0:
        world.over, world.end = True, "the player died"
    elif done:  # pragma: no cover - crafter's own length is off (length=None)
        world.over, world.end = True, "crafter ended the game"
    return new


class CrafterEnv(TaskEnv[CrafterWorld]):
    __doc__ = __doc__

    metadata: dict[str, Any] = {
        **TaskEnv.metadata,
        "open_ended": {
            "reference": "the scripted bot of envs/roguelike/crafter_bot.py",
            "margin": 0.1,
            "episodes": 10,
            "steps": 300,
        },
    }
    max_invalid_default = 50

    def __init__(self, **options: Any) -> None:
        """``options``: as for :class:`~agentgym.task_env.TaskEnv`."""
        self.tasks = GeneratedTaskSet("crafter", CrafterTask, ("standard",))
        super().__init__(**options)

    def action_syntax(self) -> str:
        described = "\n".join(f"{name}: {what}" for name, what in ACTIONS.items())
        return (
            "Write exactly one action per turn, by its name. The actions:\n"
            f"{described}\n"
            "'Nearby' means within one cell, diagonals included. You face the direction you "
            "last moved or turned in; Do and Place act on the cell you face."
        )

    def act(self, world: CrafterWorld, action: str) -> str:
        index = parse_action(action)
        if index is None:
            shown = action.strip()[:60]
            raise InvalidAction(
                f"{shown!r} is not an action. Write one of: {', '.join(NAMES)}."
                if shown
                else f"the action is empty. Write one of: {', '.join(NAMES)}."
            )
        new = play(world, index)
        named = ", ".join(name.replace("_", " ") for name in new)
        return f"Achievement unlocked: {named}." if new else ""

    def observe(self, world: CrafterWorld) -> str:
        text = describe(world.game)
        return f"{text}\n\nThe game is over: {world.end}." if world.over else text

    def state_key(self, world: CrafterWorld) -> str:
        game = world.game
        digest = hashlib.blake2b(digest_size=16)
        digest.update(game._world._mat_map.tobytes())
        for obj in game._world.objects:
            digest.update(f"{type(obj).__name__}{tuple(obj.pos)}{obj.health};".encode())
        player = game._player
        digest.update(repr((sorted(player.inventory.items()), tuple(player.facing))).encode())
        digest.update(repr((player.sleeping, player._hunger, player._thirst)).encode())
        digest.update(repr((player._fatigue, player._recover, game._step % 300)).encode())
        unlocked = "".join("1" if world.achievements[n] else "0" for n in ACHIEVEMENTS)
        return f"{digest.hexdigest()}|{unlocked}|{world.over}"

    def admissible_actions(self, world: CrafterWorld) -> list[str]:
        return list(NAMES)

    def is_over(self, world: CrafterWorld) -> bool:
        return world.over
