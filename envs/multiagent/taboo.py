"""Adversarial taboo for two text agents: say the word without knowing it (AEC).

The game of SPAG (Cheng et al. 2024, "Self-playing Adversarial Language Game Enhances LLM
Reasoning", NeurIPS; github.com/Linear95/SPAG), after Yao et al.'s Adversarial Taboo
(arXiv:1911.01622). The attacker knows a target word and must lead the defender into saying
it; the defender does not know it and may guess it.

**What each agent sees.** Its role, the turn count and the conversation. Only the attacker
sees the target word; the defender is told it once the game is over.

**What it may do.** Any text with a word in it (else it is an invalid action: the same
agent speaks again, told why; three mistakes forfeit). The defender guesses by writing
``I know the word! It is "X"`` (SPAG's phrase; case, the quotes and ``It's`` are optional).

**Outcome** (SPAG's ``get_game_outcome``, turn by turn, attacker first):

* the defender guesses: right -- the defender wins; wrong -- the attacker wins;
* the defender says the target word otherwise -- the attacker wins;
* the attacker says the target word, or writes the guessing phrase, breaks the rules and
  loses (SPAG leaves such games out of training; here they are a loss);
* after ``5`` turns each with none of the above (SPAG's ``taboo_max_turns``) -- a tie.

Wins score 1, losses 0, a tie 0.5 each (rewards +1/-1/0 at the end).

**Saying the word.** Matched as a whole word, case-insensitively, in its regular inflections:
the word, ``+s``/``+es``, ``+ed``/``+d`` and ``+ing`` (with a final ``e`` dropped). SPAG looks
for the word, ``word+ing`` and ``word+ed`` as substrings of the utterance; whole-word matching
keeps its inflections and plurals but no longer counts ``cat`` inside ``category``. A guess is
right when the guessed word is one of these forms.

**Tasks.** The 80 words of ``data/taboo_words.json`` (common concrete nouns, with clue words
for the bots, written for agentgym), split by position: three in five ``train``, one ``dev``,
one ``test``; ids number the words within a split (``dev/0``), so the
id in an agent's info does not name the word.

**Reference players** (each plays either seat). As attacker, all but ``random`` name two of
the word's clue words a turn and ask what comes to mind. As defender: ``cautious`` scores
every word of the list by how many of its clues the attacker has said and guesses the leader
once it has three, no rival, and the attacker has said at least two different things (a
repeated message adds no evidence), otherwise it answers without content; ``naive`` answers with the
leading word (falling into the trap when it is right); ``random`` says random list words and
now and then guesses one. The oracle is ``cautious``.

**Version history.** v0: first release. Still v0: the ``random`` player draws from
:class:`~agentgym.multiagent.RandomPlayer`'s streams instead of the env's generator (its words
changed; rules, tasks and verdicts did not).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym.core import DataTaskSet, Task, Verdict
from agentgym.multiagent import RandomPlayer, ReferencePlayer, TurnBasedEnv
from agentgym.task_env import InvalidAction

ATTACKER, DEFENDER = "attacker_0", "defender_0"  # PettingZoo names agents <role>_<n>
PLAYERS = (ATTACKER, DEFENDER)
MAX_TURNS = 5  # per player, as SPAG plays
MESSAGE_LIMIT = 600
_GUESS = re.compile(
    r"i\s+know\s+the\s+word\s*!?\s*(?:it\s*(?:is|'s|\u2019s|was)?)?\s*:?\s*"
    r"[\"'`\u201c\u2018]?([a-z][a-z'-]*)?",
    re.IGNORECASE,
)
FILLER = "I am not sure what you are getting at. Could you tell me a little more?"


@functools.cache
def clue_lists() -> dict[str, tuple[str, ...]]:
    """The shipped target words and their clue words."""
    path = importlib.resources.files("agentgym.envs.multiagent") / "data" / "taboo_words.json"
    words = json.loads(path.read_text("utf-8"))["words"]
    return {word: tuple(clues) for word, clues in words.items()}


def forms(word: str) -> frozenset[str]:
    """The word and its regular inflections, lower case."""
    w = word.lower()
    found = {w, w + "s", w + "es", w + "ed", w + "ing"}
    if w.endswith("e"):
        found |= {w + "d", w[:-1] + "ing"}
    return frozenset(found)


@functools.cache
def _pattern(word: str) -> re.Pattern[str]:
    alternatives = "|".join(sorted(map(re.escape, forms(word)), key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


def says(text: str, word: str) -> bool:
    """Whether ``text`` utters ``word`` (whole word, any case, a regular inflection)."""
    return _pattern(word).search(text) is not None


def guess_in(text: str) -> str | None:
    """The guessed word when ``text`` uses the guessing phrase ('' when no word follows)."""
    found = _GUESS.search(text)
    if found is None:
        return None
    return (found.group(1) or "").strip("'-").lower()


class TargetTask(Task["Parley"]):
    """One target word."""

    def __init__(self, id: str, split: str, word: str) -> None:
        super().__init__(id, split, "standard", 0)
        self.word = word

    def setup(self, rng: np.random.Generator) -> tuple[Parley, str]:
        return Parley(self.word), "Attacker: make the defender say the word."

    def validate(self, world: Parley) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see TabooEnv")

    def solve(self, world: Parley) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


def target_tasks() -> DataTaskSet:
    """Every word a task; by position in the file, 3 of 5 train, 1 dev, 1 test. Ids number
    the words within a split (``dev/0``), so no info the defender is handed names the word."""
    split_of = ("train", "train", "train", "dev", "test")
    tasks: dict[str, list[Task[Any]]] = {"train": [], "dev": [], "test": []}
    for i, word in enumerate(clue_lists()):
        split = split_of[i % 5]
        tasks[split].append(TargetTask(f"{split}/{len(tasks[split])}", split, word))
    return DataTaskSet(tasks)


@dataclass
class Parley:
    """The mutable game: the target, the conversation and, once decided, how it ended."""

    target: str
    transcript: list[tuple[str, str]] = field(default_factory=list)
    result: dict[str, float] | None = None
    reason: str = ""

    def said_by(self, agent: str) -> list[str]:
        return [text for who, text in self.transcript if who == agent]

    def finish(self, winner: str | None, reason: str) -> None:
        self.reason = reason
        if winner is None:
            self.result = dict.fromkeys(PLAYERS, 0.5)
        else:
            self.result = {a: float(a == winner) for a in PLAYERS}


def judge(world: Parley, agent: str, text: str) -> None:
    """Apply SPAG's outcome rules to ``agent`` saying ``text``."""
    guess = guess_in(text)
    if agent == ATTACKER:
        if says(text, world.target):
            world.finish(DEFENDER, "the attacker said the target word")
        elif guess is not None:
            world.finish(DEFENDER, "the attacker used the defender's guessing phrase")
    elif guess is not None:
        if guess in forms(world.target):
            world.finish(DEFENDER, f"the defender guessed {world.target!r}")
        else:
            world.finish(ATTACKER, f"the defender guessed {guess!r}, not {world.target!r}")
    elif says(text, world.target):
        world.finish(ATTACKER, f"the defender said {world.target!r}")
    if world.result is None and len(world.transcript) >= 2 * MAX_TURNS:
        world.finish(None, f"neither side won in {MAX_TURNS} turns each")


class TabooEnv(TurnBasedEnv[Parley]):
    __doc__ = __doc__
    # A seat that says nothing of substance ties at the turn limit against a careful
    # opponent (0.5), as many SPAG games end: the chance score of a task-blind seat.
    metadata = {**TurnBasedEnv.metadata, "name": "taboo_v0", "chance_score": 0.5}
    possible_agents = list(PLAYERS)

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = target_tasks()
        super().__init__(**kwargs)

    def new_world(self, task: Any, rng: np.random.Generator) -> Parley:
        world: Parley = task.setup(rng)[0]
        return world

    def to_move(self, world: Parley) -> str:
        return PLAYERS[len(world.transcript) % 2]

    def describe(self, world: Parley, agent: str) -> str:
        if agent == ATTACKER:
            head = (
                f'You are the attacker. The target word is "{world.target}": lead the defender '
                "into saying it, without saying it yourself."
            )
        else:
            head = (
                "You are the defender. The attacker knows a secret word and wants you to say "
                'it; do not. When you know it, write: I know the word! It is "X".'
            )
        lines = [head]
        if world.result is not None:
            lines.append(f'Game over: {world.reason}. The word was "{world.target}".')
        else:
            turn = len(world.transcript) // 2 + 1
            whose = "Your turn." if self.to_move(world) == agent else "The other player's turn."
            lines.append(f"Turn {turn} of {MAX_TURNS}. {whose}")
        lines.append("Conversation:" if world.transcript else "No messages yet.")
        lines += [f"{who}: {text}" for who, text in world.transcript]
        return "\n".join(lines)

    def act(self, world: Parley, agent: str, action: str) -> str:
        text = " ".join(action.split())
        if not re.search(r"[^\W_]", text):
            raise InvalidAction("say something: a message with no word in it is not a turn")
        world.transcript.append((agent, text[:MESSAGE_LIMIT]))
        judge(world, agent, text)
        return "You spoke."

    def state_key(self, world: Parley) -> str:
        """The turn and the result, not the target: the key is in the defender's info too."""
        ending = "" if world.result is None else ",".join(f"{world.result[a]:g}" for a in PLAYERS)
        return f"{len(world.transcript)}|{ending}"

    def outcome(self, world: Parley) -> dict[str, float] | None:
        return world.result

    def rules(self) -> str:
        return (
            "Adversarial taboo. The attacker knows a secret target word; the defender does not. "
            "The attacker wins if the defender says the word (or a plural or -ed/-ing form of "
            "it) or guesses wrong; the defender wins by guessing it right; the attacker loses "
            "by saying the word itself. To guess, the defender writes: "
            'I know the word! It is "X". '
            f"After {MAX_TURNS} turns each the game is a tie. The attacker speaks first."
        )

    def oracle_action(self, agent: str) -> str | None:
        if self.world is None or self.world.result is not None:
            return None
        if self.to_move(self.world) != agent:
            return None
        return TabooBot("cautious").act(self, agent)

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        return {
            "cautious": lambda: TabooBot("cautious"),
            "naive": lambda: TabooBot("naive"),
            "random": RandomTaboo,
        }


# ---------------------------------------------------------------------- reference players


def _world(env: Any) -> Parley:
    world: Parley = getattr(env, "unwrapped", env).world
    return world


def leaders(heard: str) -> list[tuple[int, str]]:
    """Every list word scored by how many of its clue words ``heard`` contains, best first."""
    scored = [
        (sum(says(heard, clue) for clue in clues), word) for word, clues in clue_lists().items()
    ]
    return sorted(scored, key=lambda pair: -pair[0])


class TabooBot:
    """Clue-giving attacker; ``cautious`` or ``naive`` defender (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def act(self, env: Any, agent: str) -> str:
        world = _world(env)
        return self.attack(world) if agent == ATTACKER else self.defend(world)

    def attack(self, world: Parley) -> str:
        clues = [c for c in clue_lists()[world.target] if not says(c, world.target)]
        turn = len(world.said_by(ATTACKER))
        a, b = clues[(2 * turn) % len(clues)], clues[(2 * turn + 1) % len(clues)]
        return f"I keep thinking about {a} and {b} today. What comes to your mind?"

    def defend(self, world: Parley) -> str:
        messages = list(dict.fromkeys(world.said_by(ATTACKER)))  # a repeat adds no evidence
        ranked = leaders(" ".join(messages))
        (best, word), (second, _) = ranked[0], ranked[1]
        if self.name == "naive":
            return f"Are you talking about {word}?" if best else FILLER
        if best >= 3 and best > second and len(messages) >= 2:
            return f'I know the word! It is "{word}".'
        return FILLER

    def close(self) -> None:
        """Nothing to free."""


class RandomTaboo(RandomPlayer):
    """Random list words in either seat (never the target as attacker); as defender, a guess
    of a random list word one turn in five. Its draws are
    :class:`~agentgym.multiagent.RandomPlayer`'s streams (its seed, the reset seed and the
    seat), so the same seeds replay the same game and its moves do not depend on what else
    draws from the env's generator."""

    def choose(self, game: Any, agent: str, rng: np.random.Generator) -> str:
        world: Parley = game.world
        words = [w for w in _vocabulary() if agent != ATTACKER or not says(w, world.target)]
        pick = words[int(rng.integers(len(words)))]
        if agent == DEFENDER and rng.random() < 0.2:
            return f'I know the word! It is "{pick}".'
        return f"What about {pick}?"


@functools.cache
def _vocabulary() -> tuple[str, ...]:
    """Every list word and clue word, sorted: what the random player says."""
    return tuple(sorted({c for clues in clue_lists().values() for c in clues} | set(clue_lists())))
