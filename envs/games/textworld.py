"""TextWorld: text adventures made by Microsoft TextWorld's own generators, played turn by turn.

**What the agent sees.** At reset, the quest's objective (as the game states it), the room the
player is in and what it carries. After each command, the game's reply, followed by the room
description and the inventory where the reply did not already show them (TextWorld computes
them each turn without spending a turn)::

    You take the chicken breast from the fridge.

    Your score has just gone up by one point.

    -= Kitchen =-
    Guess what, you are in a place we're calling a kitchen. [...]

    You are carrying: a roasted chicken breast.

The game's ASCII-art banner, prompt and status line are removed. ``info["admissible_actions"]``
lists the commands TextWorld knows to be valid in the current state (sorted).

**What it may do.** Type a command as in any text adventure: ``go north``, ``open fridge``,
``take apple from counter``, ``cook potato with stove``, ``examine cookbook``, ``inventory``.
One command per turn: text wrapped in quotes or backticks is unwrapped, and only the last
non-empty line is read. The command is sent to the game, and it is an **invalid action**
(``info["invalid_action"]``, the game's reply as the message) when the game takes no turn over
it: Inform's parser errors ("That's not a verb I recognise.", "You can't see any such
thing.", "I only understood you as far as...", "What do you want to take?") and out-of-world
commands (``score``). Commands the game understands but refuses ("That's already open.") take
a turn and are valid. We decided to step first and judge by the game's turn counter, rather
than to accept only the admissible commands, so that any phrasing the parser understands
("take the apple", "x cookbook") works as it would for a human player. Interpreter commands
that would desynchronise TextWorld's state tracking or touch files (``save``, ``restore``,
``restart``, ``undo``, ``quit``, ``script``, ``brief``/``verbose``, TextWorld's ``tw-*`` debug
commands), several commands at once (``.``, ``;``, ``then``), symbols other than ``'``,
``-`` and ``,`` (a leading backslash is an interpreter escape), non-ASCII text and commands over
100 characters are rejected before they reach the game.

**Scoring.** The game's own score: ``score = game score / max score`` in ``[0, 1]``
(components ``game_score`` and ``max_score``), so the step reward is the game's points scaled
by the maximum. ``passed`` = the game is won (TextWorld games are won exactly when the last
point is scored, so a win scores 1). Losing (e.g. burning or eating the wrong food in
Cooking) ends the episode. The time limit is the registry's (100 steps).

**Levels.** Games come from TextWorld's generators, from the task's seed:

* TreasureHunter (``tw-treasure_hunter``): easy ``--level 5`` (5 rooms, no doors, quest of 3
  steps), medium ``--level 15`` (10 rooms, closed doors and containers, 6 steps), hard
  ``--level 23`` (20 rooms, locked doors and containers with keys, 7 steps; higher levels
  only lengthen the quest, and take 5-13 s to generate).
* CoinCollector (``tw-coin_collector``): easy ``--level 5`` (a chain of 5 rooms), medium
  ``--level 110`` (quest of 10 moves, 20 rooms with dead ends along the chain), hard
  ``--level 215`` (quest of 15 moves, 45 rooms, dead ends placed at random).
* Cooking (``tw-cooking``, the First TextWorld Problems games): easy ``--recipe 1 --take 1
  --go 1`` (one room), medium ``--recipe 2 --take 2 --go 6 --open --cut``, hard ``--recipe 3
  --take 3 --go 9 --open --cook --cut``. The task's split picks TextWorld's own food split:
  ``train`` -> ``train``, ``dev`` -> ``valid``, ``test`` -> ``test``, so dev and test games
  use foods and preparations never seen in training.
* Custom (``tw-make custom``): easy ``--world-size 3 --nb-objects 5 --quest-length 3``, medium
  ``--world-size 6 --nb-objects 10 --quest-length 6``, hard ``--world-size 10 --nb-objects 20
  --quest-length 10`` (other settings at ``tw-make``'s defaults).

A task id is one game: its seed is TextWorld's ``--seed`` (the task seed modulo 2**32). When
TextWorld cannot build a quest for a seed (rare), the next seeds of a fixed sequence are
tried, so a task id still names one fixed game.

**Cache.** Generating a game takes 1-3 s (TreasureHunter hard 5-7 s), a few seconds more for
the first game of a fresh cache and about a second more for the first game a process makes
(TextWorld builds the world and quest, writes Inform 7 source and compiles it with the bundled
``ni`` and ``inform6``); loading a cached game takes 15-120 ms. Games are cached by
(challenge, level settings, seed) in
``$AGENTGYM_CACHE/textworld/<challenge>/<settings>/<seed>.z8`` (+ ``.json``), where
``$AGENTGYM_CACHE`` defaults to ``~/.cache/agentgym``. A game is generated in a private
temporary folder next to its destination and moved into place (``.json`` first, ``.z8``
last, each an atomic rename) under a per-game lock file, so concurrent processes never read
half-written files nor generate the same game twice. Generation runs in a child Python with
``PYTHONHASHSEED=0`` and TextWorld's data files read in sorted order: TextWorld's cooking
generator iterates over sets of strings, and TextWorld reads its data files in directory
order, so in-process generation gives different games for the same seed in different
processes and machines; the child makes a task id name the same game everywhere (with the
same TextWorld version). A child stays up for the next game (starting one costs about a
second) and exits after 30 s without one (``textworld_games.py``). The children keep
TextWorld's parsed text grammars in ``.text-grammars-<version>.pickle`` beside the games
(they take ~2 s a process to parse). Nothing is downloaded.

**State key.** The game's seed and a hash of TextWorld's facts about the world (every
proposition true now, sorted) and of won/lost: ``look`` or a refused command leaves it
unchanged, going north and back south restores it.

**Oracle.** TextWorld's ``policy_commands``: the first command of a winning policy recomputed
by TextWorld from the current state (whatever the agent did before), falling back to the
game's walkthrough while the agent has followed it exactly.

**Resources.** Each episode runs the game in Jericho's Z-machine interpreter (in-process: a
private copy of ``libfrotz.so`` loaded with ``dlopen``; no child process, no thread, no open
file once started; a reset that had to generate its game leaves the generator child
waiting 30 s for the next, under "Cache"). ``teardown`` (on reset and ``close()``) shuts the
interpreter down and drops the last reference to it, which unloads the library copy; an env
dropped without ``close()`` frees its game as soon as its last reference goes (no reference
cycle, and the game's ``.json`` is parsed in a short-lived thread so that TextWorld's parser,
which keeps its last traceback, cannot keep our frames and the env alive). Snapshots are not
supported.

**Version history.** v0: first release.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import jericho
import numpy as np
import textworld
from textworld.envs.wrappers.tw_inform7 import TWInform7
from textworld.envs.zmachine.jericho import JerichoEnv
from textworld.generator.game import Game

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.games.textworld_games import cache_dir, ensure_game, game_path
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = [
    "TextWorldCoinCollectorEnv",
    "TextWorldCookingEnv",
    "TextWorldCustomEnv",
    "TextWorldEnv",
    "TextWorldTreasureHunterEnv",
    "cache_dir",
    "ensure_game",
    "game_path",
]

REQUEST_INFOS = textworld.EnvInfos(
    admissible_commands=True,
    policy_commands=True,
    won=True,
    lost=True,
    score=True,
    max_score=True,
    description=True,
    inventory=True,
    objective=True,
    facts=True,
)

MAX_COMMAND_LENGTH = 100

_META_WORDS = frozenset(
    [
        "save",
        "restore",
        "restart",
        "undo",
        "quit",
        "q",
        "script",
        "unscript",
        "transcript",
        "noscript",
        "brief",
        "verbose",
        "superbrief",
        "normal",
        "long",
        "short",
        "notify",
        "nouns",
        "pronouns",
        "version",
        "verify",
        "purloin",
        "abstract",
        "gonear",
        "tree",
        "showme",
        "scope",
        "actions",
        "rules",
        "trace",
    ]
)
_COMMAND = re.compile(r"[a-z0-9 ',-]+")
_SPLIT_TO_COOKING = {"train": "train", "dev": "valid", "test": "test"}


# --------------------------------------------------------------------------- cleaning text

_PROMPT = re.compile(r"\n?>[ \t]*(-=.*?=-\s*-?\d+/\d+)?\s*$", re.DOTALL)
_BANNER_LINE = re.compile(r"^[\s$|\\/_<>]*$")


def clean(text: str | None, objective: str = "") -> str:
    """The game's text without banner, prompt, status line and end-of-game menu."""
    if not text:
        return ""
    text = text.replace("\r", "")
    text = text.split("Would you like to RESTART", 1)[0]
    text = _PROMPT.sub("", text)
    if objective and objective in text:
        text = text.split(objective, 1)[1]
    lines = text.split("\n")
    while lines and _BANNER_LINE.match(lines[0]):
        lines.pop(0)
    text = "\n".join(_unindent(line.rstrip()) for line in lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def _unindent(line: str) -> str:
    """Centred lines ("*** The End ***") lose their padding; short indents are kept."""
    return line.lstrip() if line.startswith(" " * 8) else line


def normalize(action: str) -> str:
    """The command to send, or InvalidAction for text that must not reach the game."""
    lines = [ln.strip() for ln in action.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("```")]
    command = lines[-1] if lines else ""
    command = re.sub(r"^(action|command|next command)\s*:\s*", "", command, flags=re.IGNORECASE)
    command = command.strip().strip("`'\"*").strip()
    command = command.rstrip(".!?").strip()
    command = " ".join(command.split()).lower()
    if not command:
        raise InvalidAction("the command is empty; type a command such as 'look' or 'go north'")
    if not command.isascii() or not command.isprintable():
        raise InvalidAction(f"{command[:60]!r} is not plain text; use plain English words")
    if len(command) > MAX_COMMAND_LENGTH:
        raise InvalidAction(
            f"the command is {len(command)} characters long; the limit is {MAX_COMMAND_LENGTH}"
        )
    words = re.findall(r"[a-z0-9-]+", command)
    if ";" in command or "." in command or "then" in words:
        raise InvalidAction(f"{command!r} holds several commands; give one command per turn")
    if not _COMMAND.fullmatch(command):
        # The interpreter reads a leading backslash as one of its own escape commands, and
        # game commands never need other symbols.
        raise InvalidAction(
            f"{command!r} holds symbols a game command never needs; use words, digits, "
            "spaces, hyphens, apostrophes and commas"
        )
    if (words and words[0] in _META_WORDS) or any(w.startswith("tw-") for w in words):
        raise InvalidAction(
            f"{command!r} is an interpreter command, not available here; play the game with "
            "commands such as 'look', 'inventory', 'go north', 'take ...'"
        )
    return command


# --------------------------------------------------------------------------- tasks


def start_game(path: Path) -> Any:
    """Start a cached game in Jericho with TextWorld's wrappers (``textworld.start``'s path).

    The game's ``.json`` is parsed once, in a short-lived thread, and handed to the wrappers.
    Parsing runs TextWorld's module-level logic parser (TatSu), which keeps its last internal
    exception, whose traceback holds every frame that was on the stack, and so every object
    those frames referenced (the env, the world, the interpreter), until the next parse. In a
    thread of its own, the stack it keeps is the thread's, which holds nothing of ours; and
    handing the parsed game over spares each wrapper its own parse (``textworld.start`` parses
    the same file twice).

    The parser is one module-level object that is not thread-safe (concurrent parses fail
    with TatSu ``IndexError``/``FailedToken``, as the evaluator's worker threads found), so
    parsing and loading hold :data:`_PARSER_LOCK`; the game itself then runs lock-free.
    """
    with _PARSER_LOCK:
        game = _parse_game(str(path.with_suffix(".json")))
        core = JerichoEnv(REQUEST_INFOS)
        core._game = game
        env = TWInform7(core)
        with warnings.catch_warnings():
            # Jericho has no bindings for TextWorld games and says so (expected; TextWorld
            # itself silences this warning globally, which "-W error" or pytest can override).
            warnings.simplefilter("ignore", jericho.UnsupportedGameWarning)
            env.load(str(path))
    return env


_PARSER_LOCK = threading.Lock()


def _parse_game(json_path: str) -> Game:
    box: dict[str, Any] = {}

    def parse() -> None:
        try:
            box["game"] = Game.load(json_path)
        except BaseException as error:  # re-raised in the caller's thread
            box["error"] = error

    worker = threading.Thread(target=parse, name="agentgym-textworld-parse", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box.pop("error")
    return box.pop("game")


@dataclass
class TextWorldWorld:
    """One running game: the TextWorld environment and its latest state."""

    env: Any
    state: Any
    objective: str
    walkthrough: list[str]
    path: str
    reply: str = ""
    commands: list[str] = field(default_factory=list)

    @property
    def won(self) -> bool:
        return bool(self.state["won"])

    @property
    def lost(self) -> bool:
        return bool(self.state["lost"])


class TextWorldTask(Task[TextWorldWorld]):
    """One generated game; ``setup`` generates it (or loads it from the cache) and starts it."""

    def __init__(
        self,
        challenge: str,
        settings: dict[str, Any],
        id: str,
        split: str,
        difficulty: str,
        seed: int,
    ) -> None:
        super().__init__(id, split, difficulty, seed)
        self.challenge = challenge
        self.settings = settings
        self.game_seed = seed % 2**32

    def setup(self, rng: np.random.Generator) -> tuple[TextWorldWorld, str]:
        path = ensure_game(self.challenge, self.settings, self.game_seed)
        env = start_game(path)
        try:
            env.seed(1 + self.game_seed % 65_521)  # Z-machine RNG: fixed per task
            state = env.reset()
        except BaseException:
            env.close()
            raise
        objective = str(state["objective"] or "").strip()
        walkthrough = list(state.get("extra.walkthrough") or [])
        world = TextWorldWorld(env, state, objective, walkthrough, str(path))
        goal = objective or "Win the game."
        return world, goal

    def validate(self, world: TextWorldWorld) -> Verdict:
        score = float(world.state["score"] or 0)
        most = float(world.state["max_score"] or 0)
        won = world.won
        fraction = min(max(score / most, 0.0), 1.0) if most > 0 else float(won)
        if won:
            details = f"won the game with {score:g}/{most:g} points"
        elif world.lost:
            details = f"lost the game with {score:g}/{most:g} points"
        else:
            details = f"{score:g}/{most:g} points so far"
        return Verdict(
            score=1.0 if won else fraction,
            passed=won,
            components={"game_score": score, "max_score": most},
            details=details,
        )

    def solve(self, world: TextWorldWorld) -> str | None:
        if world.won or world.lost:
            return None
        policy = world.state.get("policy_commands") or []
        if policy:
            return str(policy[0])
        done = len(world.commands)
        if world.commands == world.walkthrough[:done] and done < len(world.walkthrough):
            return world.walkthrough[done]
        return None

    def teardown(self, world: TextWorldWorld) -> None:
        """Shut the Z-machine down and drop Jericho's interpreter (unloading its library)."""
        env, world.env = world.env, None
        if env is not None:
            with contextlib.suppress(Exception):
                env.close()


# --------------------------------------------------------------------------- the env


class TextWorldEnv(TaskEnv[TextWorldWorld]):
    """Base class of the TextWorld ids; subclasses set ``challenge`` and ``levels``."""

    metadata: dict[str, Any] = {**TaskEnv.metadata, "supports_state_snapshot": False}
    challenge: ClassVar[str]
    levels: ClassVar[dict[str, dict[str, Any]]]
    max_observation_length = 16_384

    max_invalid_default = 50

    def __init__(self, **options: Any) -> None:
        """``options``: as for :class:`~agentgym.task_env.TaskEnv`."""
        # The task factory is a class method, not a bound one: no env <-> task set cycle, so an
        # env dropped without close() frees its game at once (not at the next GC pass).
        self.tasks = GeneratedTaskSet(
            f"textworld-{self.challenge}", type(self)._make_task, tuple(self.levels)
        )
        super().__init__(**options)

    @classmethod
    def _make_task(cls, id: str, split: str, difficulty: str, seed: int) -> TextWorldTask:
        return TextWorldTask(
            cls.challenge, cls.settings_for(split, difficulty), id, split, difficulty, seed
        )

    @classmethod
    def settings_for(cls, split: str, difficulty: str) -> dict[str, Any]:
        """The generator settings of a level (``tw-make`` arguments)."""
        return dict(cls.levels[difficulty])

    def action_syntax(self) -> str:
        return (
            "Type one command per turn, as in a text adventure: 'look', 'inventory', "
            "'go north', 'open door', 'take apple', 'take apple from counter', "
            "'put apple on table', 'examine cookbook'. The observation lists what is "
            "around you."
        )

    def act(self, world: TextWorldWorld, action: str) -> str:
        if world.env is None:  # pragma: no cover - the game is only closed by teardown
            raise InvalidAction("the game is closed")
        command = normalize(action)
        before = world.state["moves"]
        world.state, _, _ = world.env.step(command)
        world.reply = clean(world.state["feedback"], world.objective)
        if world.state["moves"] == before and not (world.won or world.lost):
            reply = world.reply or "The game did not respond."
            raise InvalidAction(f"{reply} (The game took no turn for {command!r}.)")
        world.commands.append(command)
        return world.reply or "(no reply)"

    def observe(self, world: TextWorldWorld) -> str:
        parts = []
        for key in ("description", "inventory"):
            text = clean(world.state.get(key), world.objective)
            if text and text not in world.reply:
                parts.append(text)
        return "\n\n".join(parts)

    def state_key(self, world: TextWorldWorld) -> str:
        facts = sorted(str(fact) for fact in world.state.get("_facts") or [])
        digest = hashlib.blake2b("\n".join(facts).encode(), digest_size=16).hexdigest()
        status = "won" if world.won else "lost" if world.lost else "playing"
        return f"{Path(world.path).stem}:{digest}:{status}"

    def admissible_actions(self, world: TextWorldWorld) -> list[str]:
        return [str(c) for c in world.state.get("admissible_commands") or []]

    def is_over(self, world: TextWorldWorld) -> bool:
        return world.lost


class TextWorldTreasureHunterEnv(TextWorldEnv):
    __doc__ = __doc__
    challenge = "tw-treasure_hunter"
    levels = {"easy": {"level": 5}, "medium": {"level": 15}, "hard": {"level": 23}}


class TextWorldCoinCollectorEnv(TextWorldEnv):
    __doc__ = __doc__
    challenge = "tw-coin_collector"
    levels = {"easy": {"level": 5}, "medium": {"level": 110}, "hard": {"level": 215}}


class TextWorldCookingEnv(TextWorldEnv):
    __doc__ = __doc__
    challenge = "tw-cooking"
    _base: ClassVar[dict[str, Any]] = {
        "recipe": 1,
        "take": 0,
        "go": 1,
        "open": False,
        "cook": False,
        "cut": False,
        "drop": False,
        "recipe_seed": 0,
    }
    levels = {
        "easy": {**_base, "recipe": 1, "take": 1, "go": 1},
        "medium": {**_base, "recipe": 2, "take": 2, "go": 6, "open": True, "cut": True},
        "hard": {
            **_base,
            "recipe": 3,
            "take": 3,
            "go": 9,
            "open": True,
            "cook": True,
            "cut": True,
        },
    }

    @classmethod
    def settings_for(cls, split: str, difficulty: str) -> dict[str, Any]:
        return {**cls.levels[difficulty], "split": _SPLIT_TO_COOKING.get(split)}


class TextWorldCustomEnv(TextWorldEnv):
    __doc__ = __doc__
    challenge = "custom"
    levels = {
        "easy": {"world_size": 3, "nb_objects": 5, "quest_length": 3},
        "medium": {"world_size": 6, "nb_objects": 10, "quest_length": 6},
        "hard": {"world_size": 10, "nb_objects": 20, "quest_length": 10},
    }
