"""BabyAI in text: follow a language mission in a partially observed grid world (``minigrid``).

**What the agent sees.** The mission, what it carries, and what lies in its 7x7 egocentric
view, in words, in the style of BabyAI-Text and BALROG: one line per visible object with its
offset from the agent, and the nearest wall straight ahead, to the left and to the right::

    Mission: pick up the red ball
    You carry nothing.
    You see:
    a wall 3 steps forward
    a wall 2 steps left
    a red ball 1 step left and 2 steps forward
    a closed blue door 3 steps right and 1 step forward

"left"/"right"/"forward" are relative to where the agent faces; walls and closed doors block
the view, so objects behind them are not listed. Doors are ``open``, ``closed`` or ``locked``.

**What it may do.** ``turn left``, ``turn right``, ``go forward``, ``pick up`` (the object
straight ahead), ``drop`` (onto the cell straight ahead), ``toggle`` (open/close the door, or
open the box, straight ahead; a locked door opens with a key of its colour in hand). A few
synonyms are read too (``forward``, ``move forward``, ``pickup``, ``open``...), and an action
wrapped in quotes, backticks or prose on earlier lines is read from its last line. Anything
else is an invalid action: the observation lists the six actions and nothing moves. Actions
that are legal but achieve nothing (walking into a wall, picking up thin air) take a step, as
in minigrid, and the feedback says what happened.

**Scoring.** Binary: score 1 and ``passed`` when minigrid's verifier reports the mission
accomplished (minigrid's own reward > 0), else 0. The episode terminates on success, and on
failure when the verifier fails the mission (e.g. a sequence done in the wrong order).
minigrid's per-level step budget is lifted: the time limit is the registry's
``max_episode_steps`` (128), which truncates. (minigrid's shaped reward
``1 - 0.9 * steps / max_steps`` is not used: it depends on a budget we do not impose.)

**Levels.** Each id maps to real BabyAI levels of minigrid 3.2, easiest first:

============= ========================== ========================== ===========================
id            easy                       medium                     hard
============= ========================== ========================== ===========================
GoTo          BabyAI-GoToLocalS6N3-v0    BabyAI-GoToLocal-v0        BabyAI-GoTo-v0's level at
              (6x6 room, 3 objects)      (8x8 room, 8 objects)      2x2 rooms (18 objects)
Pickup        BabyAI-PickupDist-v0       BabyAI-PickupLoc-v0        BabyAI-Pickup-v0's level at
              (7x7 room, 5 objects;      (8x8 room, 8 objects;      2x2 rooms (18 objects)
              may name type or colour)   may name where it is)
Open          BabyAI-OpenDoor-v0         BabyAI-OpenTwoDoors-v0     BabyAI-Open-v0's level at
              (a door of the agent's     (two doors of the agent's  2x2 rooms (18 objects)
              room, by colour or place)  room, one after the other)
PutNext       BabyAI-PutNextLocalS5N3-v0 BabyAI-PutNextLocal-v0     BabyAI-PutNextS7N4-v0
              (5x5 room, 3 objects)      (8x8 room, 8 objects)      (two 7x7 rooms, 4 objects
                                                                    each; move across the door)
PickUpSeqGoTo one 6x6 room, 3 objects    one 8x8 room, 8 objects    2x2 rooms of 7x7, 8 objects
============= ========================== ========================== ===========================

The medium GoTo, Pickup and PutNext levels are the single-room 8x8 settings BALROG uses.
Levels get longer to solve: the oracle's mean episode length over 100 seeds is, easy /
medium / hard, GoTo 3.4 / 5.5 / 23.6 steps, Pickup 5.4 / 6.3 / 22.7, Open 7.5 / 13.3 / 17.9,
PutNext 7.2 / 12.6 / 16.4, PickUpSeqGoTo 9.2 / 12.7 / 38.3.
The hard levels are minigrid's own level classes with a 2x2 instead of a 3x3 room grid:
at 3x3 the BabyAI bot needs more than the 128 steps of this id in 7% (GoTo, Pickup), 2%
(Open) and 24% (PickUpSeqGoTo) of seeds (measured over 200 seeds each), so the oracle
could not be trusted to reach the goal; at 2x2 it needs at most 75 / 76 / 58 / 99 steps over
400 seeds.

**PickUpSeqGoTo has no minigrid level**: BALROG takes it from BabyAI-Text's
``MixedTrainLocal`` ("pick up X, then go to Y"). minigrid 3.2's closest registered levels are
``BabyAI-GoToSeq-v0`` (go-to sequences only) and ``BabyAI-SynthSeq-v0`` (any instructions,
locked doors), neither of which is this task, so we build it from minigrid's own level
language as BabyAI-Text does: a ``RoomGridLevel`` whose mission is
``BeforeInstr(PickupInstr(a), GoToInstr(b))`` over distractors placed by minigrid
(``a`` and ``b`` have different descriptions), judged by minigrid's verifier and solved by the
BabyAI bot like every other level.

Task seeds drive ``reset(seed=task_seed)`` of the minigrid level, so a task id is one fixed
layout and mission.

**Oracle.** minigrid's ``BabyAIBot``. The bot is stateful (it remembers what it has seen and
keeps a plan), so the world records every action taken: the oracle advances the bot by the one
action taken since it was last asked, and when it was not asked for several steps it rebuilds
the bot by replaying the episode from reset on a fresh copy of the level (deterministic), then
continues from there, so it follows from any state reached by any actions. The bot gives up
once a box has been opened (it cannot tell whether that box mattered); then a bot started on
the current state with the part of the mission not yet done takes over, and the oracle
returns ``None`` only if that one gives up too. From reset, the oracle reached the goal
within 128 steps on every seed measured, on every level above (numbers under Levels); levels
where the bot is unreliable (3x3 room grids within 128 steps, the ``PutNext...Carrying``
variants, ``KeyInBox``) are not used.

**Snapshots.** ``get_state``/``set_state`` deep-copy the minigrid level, the verifier and the
bot; restoring gives the same future observations, rewards and oracle actions.

**Version history.** v0: first release.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium
import minigrid  # noqa: F401 - registers the BabyAI-* ids with Gymnasium
import numpy as np
from gymnasium.envs.registration import load_env_creator
from minigrid.core.world_object import Door, WorldObj
from minigrid.envs.babyai.core.roomgrid_level import RoomGridLevel
from minigrid.envs.babyai.core.verifier import (
    AfterInstr,
    AndInstr,
    BeforeInstr,
    GoToInstr,
    ObjDesc,
    PickupInstr,
)
from minigrid.utils.baby_ai_bot import BabyAIBot

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = [
    "BabyAIEnv",
    "BabyAIGoToEnv",
    "BabyAIOpenEnv",
    "BabyAIPickUpSeqGoToEnv",
    "BabyAIPickupEnv",
    "BabyAIPutNextEnv",
    "PickUpSeqGoToLevel",
]

ACTIONS = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")
"""The action language, in minigrid's action order (0..5); ``done`` (6) is not used."""

_SYNONYMS = {
    "turn left": 0,
    "left": 0,
    "turn to the left": 0,
    "rotate left": 0,
    "turn right": 1,
    "right": 1,
    "turn to the right": 1,
    "rotate right": 1,
    "go forward": 2,
    "forward": 2,
    "move forward": 2,
    "go forwards": 2,
    "move forwards": 2,
    "step forward": 2,
    "pick up": 3,
    "pickup": 3,
    "pick it up": 3,
    "pick up object": 3,
    "drop": 4,
    "drop it": 4,
    "put down": 4,
    "toggle": 5,
    "open": 5,
    "open door": 5,
    "open the door": 5,
}

_BUDGET = 100_000
"""minigrid's own step budget, lifted: the registry's TimeLimit is the episode limit."""

VIEW = 7  # minigrid's default agent view size; the agent sits at (3, 6) facing "up"


class PickUpSeqGoToLevel(RoomGridLevel):
    """The mission "pick up X, then go to Y" (BabyAI-Text's), in minigrid's level language.

    Built like minigrid's ``GoToLocal``/``GoTo``: the agent and ``num_dists`` objects are
    placed at random (rooms connected when there are several), then two objects with different
    descriptions are drawn; the mission is ``BeforeInstr(PickupInstr(a), GoToInstr(b))``.
    """

    def __init__(
        self,
        room_size: int = 8,
        num_rows: int = 1,
        num_cols: int = 1,
        num_dists: int = 8,
        **kwargs: Any,
    ) -> None:
        self.num_dists = num_dists
        super().__init__(num_rows=num_rows, num_cols=num_cols, room_size=room_size, **kwargs)

    def gen_mission(self) -> None:
        self.place_agent()
        if self.num_rows * self.num_cols > 1:
            self.connect_all()
        objs = self.add_distractors(num_distractors=self.num_dists, all_unique=False)
        self.check_objs_reachable()
        first = self._rand_elem(objs)
        others = [o for o in objs if (o.type, o.color) != (first.type, first.color)]
        second = self._rand_elem(others)
        self.instrs = BeforeInstr(
            PickupInstr(ObjDesc(first.type, first.color)),
            GoToInstr(ObjDesc(second.type, second.color)),
        )


def _reset_level(env: RoomGridLevel, seed: int) -> None:
    """Reset with the task seed; minigrid prints its rejection-sampling retries, we do not."""
    with contextlib.redirect_stdout(io.StringIO()):
        env.reset(seed=seed)


def _make_level(level: tuple[str, dict[str, Any]]) -> RoomGridLevel:
    """A fresh, unseeded minigrid level: a registered ``BabyAI-*`` id or our own level."""
    name, kwargs = level
    if name == "PickUpSeqGoTo":
        return PickUpSeqGoToLevel(max_steps=_BUDGET, **kwargs)
    spec = gymnasium.spec(name)
    entry = spec.entry_point
    creator = load_env_creator(entry) if isinstance(entry, str) else entry
    env = creator(**{**spec.kwargs, **kwargs, "max_steps": _BUDGET}) if creator else None
    if not isinstance(env, RoomGridLevel):  # pragma: no cover - every BabyAI id is one
        raise TypeError(f"{name}: its entry point {entry!r} does not make a BabyAI level")
    return env


def _instructions(env: RoomGridLevel) -> Any:
    """The level's mission as minigrid's verifier tree (``BeforeInstr(...)``...)."""
    return env.instrs  # type: ignore[attr-defined]  # set by each level's gen_mission, undeclared


def _succeeded(done: object) -> bool:
    """Whether a sequence's ``a_done``/``b_done`` says its part succeeded. minigrid starts
    them at ``False`` and then stores the verifier's status string, so its inferred type
    (``bool``) is wrong."""
    return done == "success"


@dataclass
class BabyAIWorld:
    """One episode: the minigrid level, what was done, and the oracle's bookkeeping."""

    level: tuple[str, dict[str, Any]]
    seed: int
    env: RoomGridLevel
    history: list[int] = field(default_factory=list)
    status: str = "continue"  # minigrid's verifier: continue / success / failure
    feedback: str = ""
    bot: Any = None
    bot_at: int = -1  # len(history) when the bot last planned
    suggestion: int | None = None

    @property
    def mission(self) -> str:
        return str(self.env.mission)


class BabyAITask(Task[BabyAIWorld]):
    """A BabyAI level instance: a minigrid level reset with the task's seed."""

    def __init__(
        self, level: tuple[str, dict[str, Any]], id: str, split: str, difficulty: str, seed: int
    ) -> None:
        super().__init__(id, split, difficulty, seed)
        self.level = level

    def setup(self, rng: np.random.Generator) -> tuple[BabyAIWorld, str]:
        env = _make_level(self.level)
        _reset_level(env, self.seed)
        world = BabyAIWorld(self.level, self.seed, env)
        return world, f"Your mission: {world.mission}."

    def validate(self, world: BabyAIWorld) -> Verdict:
        passed = world.status == "success"
        if passed:
            details = f"mission accomplished: {world.mission}"
        elif world.status == "failure":
            details = f"mission failed: {world.mission}"
        else:
            details = f"mission not accomplished yet: {world.mission}"
        return Verdict(
            score=1.0 if passed else 0.0,
            passed=passed,
            components={"success": float(passed)},
            details=details,
        )

    def solve(self, world: BabyAIWorld) -> str | None:
        if world.status != "continue":
            return None
        try:
            action = _bot_action(world)
        except Exception:  # the bot gives up on some states (e.g. once any box was opened)
            try:
                action = _fresh_bot_action(world)
            except Exception:
                world.bot = None  # its plan may be half-updated: rebuild it if asked again
                return None
        if action is None or not 0 <= action < len(ACTIONS):
            return None  # "done": the bot believes the mission is over
        return ACTIONS[action]

    def teardown(self, world: BabyAIWorld) -> None:
        world.env.close()
        world.bot = None


def _bot_action(world: BabyAIWorld) -> int | None:
    """The bot's next action, keeping it in step with every action the world has taken."""
    steps = len(world.history)
    if world.bot is not None and world.bot_at == steps:
        return world.suggestion
    if world.bot is not None and world.bot_at == steps - 1:
        world.suggestion = int(world.bot.replan(world.history[-1]))
        world.bot_at = steps
        return world.suggestion
    # Out of step (first call, or several actions since the last call): replay the episode
    # on a fresh copy of the level with a fresh bot, then adopt that copy as the world's level.
    replay = _make_level(world.level)
    _reset_level(replay, world.seed)
    bot = BabyAIBot(replay)
    suggestion = int(bot.replan())
    for action in world.history:
        replay.step(action)
        suggestion = int(bot.replan(action))
    if _grid_key(replay) != _grid_key(world.env):  # pragma: no cover - minigrid is deterministic
        raise RuntimeError("replaying the episode did not reproduce the state")
    old, world.env = world.env, replay
    old.close()
    world.bot, world.bot_at, world.suggestion = bot, steps, suggestion
    return suggestion


def _fresh_bot_action(world: BabyAIWorld) -> int | None:
    """A bot started on the current state, for what is left of the mission.

    The replayed bot refuses to go on once a box has been opened (it cannot tell whether the
    box mattered) and trips on a few other states; a bot that starts now, with an empty memory
    and only the part of the mission not yet done, usually can still finish.
    """
    bot = BabyAIBot(world.env)
    bot.stack = []
    bot._process_instr(_remaining(_instructions(world.env)))
    world.bot, world.bot_at = bot, len(world.history)
    world.suggestion = int(bot.replan())
    return world.suggestion


def _remaining(instr: Any) -> Any:
    """The part of a (sequence) instruction the verifier has not seen done yet."""
    if isinstance(instr, BeforeInstr) and _succeeded(instr.a_done):
        return _remaining(instr.instr_b)
    if isinstance(instr, AfterInstr) and _succeeded(instr.b_done):
        return _remaining(instr.instr_a)
    return instr


def _grid_key(env: RoomGridLevel) -> str:
    carrying = env.carrying
    held = f"{carrying.color} {carrying.type}" if carrying is not None else "-"
    digest = hashlib.blake2b(env.grid.encode().tobytes(), digest_size=12).hexdigest()
    return f"{int(env.agent_pos[0])},{int(env.agent_pos[1])}|{int(env.agent_dir)}|{held}|{digest}"


def _progress(instr: Any) -> str:
    """The verifier's memory that the grid does not show (which parts of a sequence are done)."""
    if isinstance(instr, (BeforeInstr, AfterInstr, AndInstr)):
        first, second = _progress(instr.instr_a), _progress(instr.instr_b)
        return f"({first}{instr.a_done}:{second}{instr.b_done})"
    return ""


def _name(obj: Any) -> str:
    if isinstance(obj, Door):
        state = "open" if obj.is_open else "locked" if obj.is_locked else "closed"
        return f"{'an' if state == 'open' else 'a'} {state} {obj.color} door"
    if obj.type in ("wall", "goal", "lava"):
        return f"a {obj.type}" if obj.type != "goal" else f"a {obj.color} goal"
    return f"a {obj.color} {obj.type}"


def _steps(n: int, direction: str) -> str:
    return f"{n} step{'s' if n != 1 else ''} {direction}"


def describe_view(env: RoomGridLevel) -> list[str]:
    """What the agent sees, one line per visible thing, nearest first (BabyAI-Text style)."""
    grid, vis = env.gen_obs_grid()
    ax, ay = VIEW // 2, VIEW - 1
    walls: list[str] = []
    for direction, cells in (
        ("forward", [(ax, ay - k) for k in range(1, VIEW)]),
        ("left", [(ax - k, ay) for k in range(1, ax + 1)]),
        ("right", [(ax + k, ay) for k in range(1, ax + 1)]),
    ):
        for distance, (i, j) in enumerate(cells, start=1):
            if not vis[i, j]:
                break
            cell = grid.get(i, j)
            if cell is not None and cell.type == "wall":
                walls.append(f"a wall {_steps(distance, direction)}")
                break
            if cell is not None and not cell.see_behind():  # a closed door hides what is behind
                break
    things: list[tuple[int, int, int, str]] = []
    for i in range(VIEW):
        for j in range(VIEW):
            if (i, j) == (ax, ay) or not vis[i, j]:
                continue
            cell = grid.get(i, j)
            if cell is None or cell.type == "wall":
                continue
            side, ahead = i - ax, ay - j
            parts = []
            if side:
                parts.append(_steps(abs(side), "left" if side < 0 else "right"))
            if ahead:
                parts.append(_steps(ahead, "forward"))
            things.append((abs(side) + ahead, ahead, side, f"{_name(cell)} {' and '.join(parts)}"))
    return walls + [text for *_, text in sorted(things)]


@dataclass(frozen=True)
class _Before:
    """What an action's feedback compares with: the agent's state before the action."""

    pos: tuple[int, ...]
    carrying: WorldObj | None
    front: WorldObj | None
    door: tuple[bool, bool] | None  # the front door's (is_open, is_locked)

    @classmethod
    def of(cls, env: RoomGridLevel) -> _Before:
        front = env.grid.get(*env.front_pos)
        return cls(
            pos=tuple(int(v) for v in env.agent_pos),
            carrying=env.carrying,
            front=front,
            door=(front.is_open, front.is_locked) if isinstance(front, Door) else None,
        )


def _describe_step(env: RoomGridLevel, action: int, before: _Before) -> str:
    """One sentence on what the action did, from the state before and after it."""
    front_before = before.front
    if action == 0:
        return "You turn left."
    if action == 1:
        return "You turn right."
    if action == 2:
        if tuple(env.agent_pos) != before.pos:
            return "You go forward."
        blocker = "the edge of the world" if front_before is None else _name(front_before)
        return f"You cannot go forward: {blocker} is in the way."
    if action == 3:
        if env.carrying is not None and before.carrying is None:
            return f"You pick up {_name(env.carrying)}."
        if before.carrying is not None:
            return f"You cannot pick anything up: you already carry {_name(before.carrying)}."
        if front_before is None:
            return "There is nothing in front of you to pick up."
        return f"You cannot pick up {_name(front_before)}."
    if action == 4:
        if before.carrying is not None and env.carrying is None:
            return f"You drop {_name(before.carrying)} in front of you."
        if before.carrying is None:
            return "You are not carrying anything to drop."
        return "You cannot drop it here: the cell in front of you is not empty."
    # toggle
    front = env.grid.get(*env.front_pos)
    if front_before is None:
        return "There is nothing in front of you to toggle."
    if isinstance(front_before, Door) and isinstance(front, Door):  # a door stays in its cell
        if before.door == (front.is_open, front.is_locked):
            if front.is_locked:
                return f"The {front.color} door is locked; you need a {front.color} key."
            return "Nothing happens."
        return f"You {'open' if front.is_open else 'close'} the {front.color} door."
    if front_before.type == "box" and front is not front_before:
        return f"You open {_name(front_before)}; it was empty and is gone."
    return f"Nothing happens when you toggle {_name(front_before)}."


def parse_action(text: str) -> int:
    """The minigrid action for the agent's text, or InvalidAction listing the actions."""
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    candidates = [text, lines[-1]] if lines else [text]
    for candidate in candidates:
        words = re.sub(r"^\s*(action|next action|answer)\s*[:=]\s*", "", candidate.lower())
        words = " ".join(w.strip("`'\"*.!?,;:()[]<>") for w in words.split())
        words = " ".join(w for w in words.split() if w)
        if words in _SYNONYMS:
            return _SYNONYMS[words]
    shown = text.strip()[:60]
    raise InvalidAction(
        f"{shown!r} is not an action. Write exactly one of: {', '.join(ACTIONS)}."
        if shown
        else f"the action is empty. Write exactly one of: {', '.join(ACTIONS)}."
    )


class BabyAIEnv(TaskEnv[BabyAIWorld]):
    """Base class of the BabyAI ids; subclasses set ``name`` and ``levels``."""

    metadata: dict[str, Any] = {**TaskEnv.metadata, "supports_state_snapshot": True}
    name: ClassVar[str]
    levels: ClassVar[dict[str, tuple[str, dict[str, Any]]]]
    syntax = (
        "Actions (write exactly one per turn): turn left, turn right, go forward, pick up "
        "(the object straight ahead), drop (onto the cell straight ahead), toggle (open or "
        "close the door straight ahead; a locked door needs a key of its colour). Positions "
        "are relative to where you face: 'left', 'right', 'forward'."
    )

    max_invalid_default = 50

    def __init__(self, **options: Any) -> None:
        """``options``: as for :class:`~agentgym.task_env.TaskEnv`."""
        levels = type(self).levels
        self.tasks = GeneratedTaskSet(
            f"babyai-{self.name}",
            lambda id, split, difficulty, seed: BabyAITask(
                levels[difficulty], id, split, difficulty, seed
            ),
            tuple(levels),
        )
        super().__init__(**options)

    def action_syntax(self) -> str:
        return self.syntax

    def act(self, world: BabyAIWorld, action: str) -> str:
        code = parse_action(action)
        env = world.env
        before = _Before.of(env)
        _, reward, terminated, _, _ = env.step(code)
        world.history.append(code)
        if terminated:
            world.status = "success" if reward > 0 else "failure"
        world.feedback = _describe_step(env, code, before)
        if world.status == "failure":
            world.feedback += " The mission has failed."
        return world.feedback

    def observe(self, world: BabyAIWorld) -> str:
        env = world.env
        held = f"You carry {_name(env.carrying)}." if env.carrying else "You carry nothing."
        seen = describe_view(env)
        lines = [f"Mission: {world.mission}", held, "You see:" if seen else "You see nothing."]
        return "\n".join(lines + seen)

    def state_key(self, world: BabyAIWorld) -> str:
        return f"{_grid_key(world.env)}|{_progress(_instructions(world.env))}|{world.status}"

    def admissible_actions(self, world: BabyAIWorld) -> list[str]:
        return list(ACTIONS)

    def is_over(self, world: BabyAIWorld) -> bool:
        return world.status == "failure"


_ROOMS2 = {"num_rows": 2, "num_cols": 2}


class BabyAIGoToEnv(BabyAIEnv):
    __doc__ = __doc__
    name = "goto"
    levels = {
        "easy": ("BabyAI-GoToLocalS6N3-v0", {}),
        "medium": ("BabyAI-GoToLocal-v0", {}),
        "hard": ("BabyAI-GoTo-v0", _ROOMS2),
    }


class BabyAIPickupEnv(BabyAIEnv):
    __doc__ = __doc__
    name = "pickup"
    levels = {
        "easy": ("BabyAI-PickupDist-v0", {}),
        "medium": ("BabyAI-PickupLoc-v0", {}),
        "hard": ("BabyAI-Pickup-v0", _ROOMS2),
    }


class BabyAIOpenEnv(BabyAIEnv):
    __doc__ = __doc__
    name = "open"
    levels = {
        "easy": ("BabyAI-OpenDoor-v0", {}),
        "medium": ("BabyAI-OpenTwoDoors-v0", {}),
        "hard": ("BabyAI-Open-v0", _ROOMS2),
    }


class BabyAIPutNextEnv(BabyAIEnv):
    __doc__ = __doc__
    name = "putnext"
    levels = {
        "easy": ("BabyAI-PutNextLocalS5N3-v0", {}),
        "medium": ("BabyAI-PutNextLocal-v0", {}),
        "hard": ("BabyAI-PutNextS7N4-v0", {}),
    }


class BabyAIPickUpSeqGoToEnv(BabyAIEnv):
    __doc__ = __doc__
    name = "pickupseqgoto"
    levels = {
        "easy": ("PickUpSeqGoTo", {"room_size": 6, "num_dists": 3}),
        "medium": ("PickUpSeqGoTo", {"room_size": 8, "num_dists": 8}),
        "hard": ("PickUpSeqGoTo", {"room_size": 7, "num_dists": 8, **_ROOMS2}),
    }
