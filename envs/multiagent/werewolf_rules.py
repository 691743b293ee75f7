"""Werewolf's rules: the deal, the village, the phases, reading actions, and what each seat
knows (:func:`view`). The env (``werewolf.py``) and the bots (``werewolf_bots.py``) build on
it; the rules themselves are described in ``werewolf.py``'s docstring.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.task_env import InvalidAction

WOLF, SEER, DOCTOR, VILLAGER = "werewolf", "seer", "doctor", "villager"
VILLAGE, WOLVES = "village", "werewolves"
NIGHT, DISCUSSION, VOTE, OVER = "night", "discussion", "vote", "over"
DISCUSSION_ROUNDS = 2
SPEECH_LIMIT = 300  # characters of one speech kept in the transcript
DEALS: Mapping[str, int] = {"one-wolf": 1, "two-wolves": 2}  # difficulty -> werewolves
NIGHT_VERBS: Mapping[str, str] = {WOLF: "kill", SEER: "inspect", DOCTOR: "protect"}
SILENT = "I have nothing to say yet."

_PLAYER = re.compile(r"\bplayer[\s_-]*(\d+)\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_ABSTAIN = re.compile(r"\b(abstain\w*|no\s*one|nobody|skip|pass)\b", re.IGNORECASE)


def seats(players: int) -> tuple[str, ...]:
    """The agents of a table of ``players``."""
    return tuple(f"player_{i}" for i in range(players))


def team(role: str) -> str:
    return WOLVES if role == WOLF else VILLAGE


# ---------------------------------------------------------------------- tasks


class DealTask(Task["Village"]):
    """One deal of the roles to the seats, drawn from the task seed."""

    def __init__(self, id: str, split: str, difficulty: str, seed: int, players: int) -> None:
        super().__init__(id, split, difficulty, seed)
        self.players = players

    def roles(self) -> dict[str, str]:
        wolves = DEALS[self.difficulty]
        deck = [WOLF] * wolves + [SEER, DOCTOR] + [VILLAGER] * (self.players - wolves - 2)
        order = np.random.default_rng(self.seed).permutation(len(deck))
        return {agent: deck[int(i)] for agent, i in zip(seats(self.players), order, strict=True)}

    def setup(self, rng: np.random.Generator) -> tuple[Village, str]:
        village = Village(seats(self.players), self.roles(), self.seed)
        start_night(village)
        return village, "Village: vote out every werewolf. Werewolves: outnumber the village."

    def validate(self, world: Village) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see WerewolfEnv")

    def solve(self, world: Village) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


def deal_tasks(players: int) -> GeneratedTaskSet:
    """The deals of a table: ``one-wolf`` everywhere, ``two-wolves`` from 6 players."""
    levels = ["one-wolf"] if players == 5 else list(DEALS)
    return GeneratedTaskSet(
        f"werewolf-{players}",
        lambda id, split, difficulty, seed: DealTask(id, split, difficulty, seed, players),
        levels,
        sizes={"train": 10_000, "dev": 500, "test": 500},
    )


# ---------------------------------------------------------------------- the game


@dataclass
class Village:
    """The mutable game: roles, who lives, the phase and who still acts in it, what each
    role has done at night, and the public transcript."""

    players: tuple[str, ...]
    roles: dict[str, str]
    seed: int
    alive: list[str] = field(default_factory=list)
    day: int = 0  # night N comes before day N
    phase: str = NIGHT
    round: int = 0  # the discussion round, from 1
    queue: list[str] = field(default_factory=list)  # who still acts in this phase, in order
    pack_picks: list[tuple[int, str, str]] = field(default_factory=list)  # night, wolf, victim
    kills: list[tuple[int, str]] = field(default_factory=list)  # night, the pack's victim
    inspections: list[tuple[int, str, bool]] = field(default_factory=list)  # night, who, wolf?
    protections: list[tuple[int, str]] = field(default_factory=list)  # night, who
    votes: dict[str, str | None] = field(default_factory=dict)
    speeches: list[tuple[int, str, str]] = field(default_factory=list)  # day, speaker, text
    revealed: dict[str, str] = field(default_factory=dict)  # the dead, with their roles
    public: list[str] = field(default_factory=list)
    forfeited: list[str] = field(default_factory=list)
    winner: str | None = None
    reason: str = ""
    turns: int = 0
    digest: str = ""  # a running digest of the public transcript, for the state key
    key_cache: tuple[tuple[int, int], str] = ((-1, -1), "")  # (turns, lines), the state key

    def __post_init__(self) -> None:
        self.alive = list(self.alive or self.players)

    def announce(self, line: str) -> None:
        self.public.append(line)
        self.digest = hashlib.sha256(f"{self.digest}\n{line}".encode()).hexdigest()[:16]

    def living(self, role: str) -> list[str]:
        return [a for a in self.alive if self.roles[a] == role]

    def tonight(self) -> list[tuple[str, str]]:
        """The werewolves' picks this night, in order."""
        return [(wolf, victim) for night, wolf, victim in self.pack_picks if night == self.day]


def start_night(village: Village) -> None:
    village.day += 1
    village.phase = NIGHT
    village.queue = village.living(WOLF) + village.living(SEER) + village.living(DOCTOR)
    village.announce(f"Night {village.day} falls.")


def resolve_night(village: Village) -> None:
    picks = [victim for _, victim in village.tonight()]
    victim = max(picks, key=picks.count) if picks else None  # max keeps the first on a tie
    saved = any(n == village.day and who == victim for n, who in village.protections)
    if victim is not None:
        village.kills.append((village.day, victim))
    if victim is None or saved or victim not in village.alive:
        village.announce(f"Day {village.day}: nobody died in the night.")
    else:
        village.announce(f"Day {village.day}: {victim} was killed in the night.")
        remove(village, victim)
    if not decide(village):
        start_day(village)


def start_day(village: Village) -> None:
    village.phase, village.round = DISCUSSION, 1
    village.queue = speaking_order(village)


def speaking_order(village: Village) -> list[str]:
    """The living players in seat order, starting one seat later each day."""
    start = (village.day - 1) % len(village.alive)
    return village.alive[start:] + village.alive[:start]


def end_discussion_round(village: Village) -> None:
    if village.round < DISCUSSION_ROUNDS:
        village.round += 1
        village.queue = speaking_order(village)
        return
    village.phase, village.votes = VOTE, {}
    village.queue = speaking_order(village)
    village.announce(f"Day {village.day}: the vote.")


def resolve_vote(village: Village) -> None:
    cast = ", ".join(f"{a} -> {v or 'abstain'}" for a, v in village.votes.items())
    named = [v for v in village.votes.values() if v is not None and v in village.alive]
    counts = {v: named.count(v) for v in named}
    top = max(counts.values(), default=0)
    leaders = sorted(v for v, n in counts.items() if n == top)
    if not named:
        result = "nobody voted for anyone: nobody is eliminated."
    elif len(leaders) > 1:
        result = f"a tie between {', '.join(leaders)} ({top} each): nobody is eliminated."
    else:
        result = f"{leaders[0]} is eliminated with {top} votes."
    village.announce(f"Votes: {cast}. Result: {result}")
    if named and len(leaders) == 1:
        remove(village, leaders[0])
    if decide(village):
        return
    if village.day >= len(village.players):
        finish(village, WOLVES, f"the werewolves survived {village.day} days")
    else:
        start_night(village)


def remove(village: Village, agent: str) -> None:
    """``agent`` dies: out of the living and of the phase's queue, its role revealed."""
    village.alive.remove(agent)
    if agent in village.queue:
        village.queue.remove(agent)
    village.revealed[agent] = village.roles[agent]
    village.announce(f"{agent} is dead; they were a {village.roles[agent]}.")


def decide(village: Village) -> bool:
    """End the game if a team has won; returns whether it has."""
    wolves = len(village.living(WOLF))
    if wolves == 0:
        finish(village, VILLAGE, "every werewolf is dead")
    elif wolves >= len(village.alive) - wolves:
        finish(village, WOLVES, "the werewolves are as many as the rest")
    return village.winner is not None


def finish(village: Village, winner: str, reason: str) -> None:
    village.winner, village.reason, village.phase, village.queue = winner, reason, OVER, []
    village.announce(f"Game over: the {winner} win ({reason}).")


def advance(village: Village) -> None:
    """Resolve every phase whose players have all acted (a forfeit may empty one)."""
    while village.winner is None and not village.queue:
        if village.phase == NIGHT:
            resolve_night(village)
        elif village.phase == DISCUSSION:
            end_discussion_round(village)
        else:
            resolve_vote(village)


def forfeit(village: Village, agent: str) -> None:
    """``agent`` made too many mistakes: it dies and the game goes on without it."""
    village.forfeited.append(agent)
    village.announce(f"{agent} forfeits after too many invalid actions.")
    remove(village, agent)
    if not decide(village):
        advance(village)


# ---------------------------------------------------------------------- actions


def targets(village: Village, agent: str) -> list[str]:
    """Whom ``agent`` may name in its current phase."""
    role = village.roles[agent]
    if village.phase == NIGHT and role == WOLF:
        return [a for a in village.alive if village.roles[a] != WOLF]
    if village.phase == NIGHT and role == DOCTOR:
        return list(village.alive)
    return [a for a in village.alive if a != agent]


def read_player(text: str, players: tuple[str, ...], abstain: bool) -> str | None:
    """The one player ``text`` names (``player_3``, ``player 3``, ``3``), or ``None`` for an
    abstention where ``abstain``; raises InvalidAction otherwise."""
    numbers = list(dict.fromkeys(_PLAYER.findall(text))) or list(
        dict.fromkeys(_NUMBER.findall(text))
    )
    quoted = text.strip()[:60]
    if len(numbers) > 1:
        named = ", ".join(f"player_{n}" for n in numbers)
        raise InvalidAction(f"{quoted!r} names several players ({named}): name exactly one")
    if numbers:
        name = f"player_{int(numbers[0])}"
        if name not in players:
            raise InvalidAction(f"there is no {name}: the players are {', '.join(players)}")
        return name
    if abstain and _ABSTAIN.search(text):
        return None
    choice = "a player or 'abstain'" if abstain else "a player"
    raise InvalidAction(f"could not read a player from {quoted!r}: name {choice}, e.g. player_1")


def night_action(village: Village, agent: str, text: str) -> str:
    role = village.roles[agent]
    target = read_player(text, village.players, abstain=False)
    assert target is not None
    if target not in targets(village, agent):
        why = "is dead" if target not in village.alive else "may not be chosen by you"
        raise InvalidAction(f"{target} {why}")
    if role == WOLF:
        village.pack_picks.append((village.day, agent, target))
        return f"You chose to kill {target}."
    if role == SEER:
        found = village.roles[target] == WOLF
        village.inspections.append((village.day, target, found))
        return f"{target} is {'' if found else 'not '}a werewolf."
    village.protections.append((village.day, target))
    return f"You protect {target} tonight."


def speak(village: Village, agent: str, text: str) -> str:
    speech = " ".join(text.split())
    if not re.search(r"[^\W_]", speech):
        raise InvalidAction("say something: a speech with no word in it is not a turn")
    kept = speech[:SPEECH_LIMIT]
    village.speeches.append((village.day, agent, kept))
    village.announce(f"{agent}: {kept}")
    cut = f" (cut to {SPEECH_LIMIT} characters)" if len(speech) > SPEECH_LIMIT else ""
    return f"You spoke{cut}."


def vote(village: Village, agent: str, text: str) -> str:
    target = read_player(text, village.players, abstain=True)
    if target is not None and target not in targets(village, agent):
        why = "is dead" if target not in village.alive else "is you"
        raise InvalidAction(f"{target} {why}: vote for another living player or abstain")
    village.votes[agent] = target
    return f"You voted for {target}." if target else "You abstained."


PHASE_ACTIONS: Mapping[str, Callable[[Village, str, str], str]] = {
    NIGHT: night_action,
    DISCUSSION: speak,
    VOTE: vote,
}


def options(village: Village, agent: str) -> list[str]:
    """The listed actions of ``agent``, whose turn it is."""
    others = targets(village, agent)
    if village.phase == NIGHT:
        verb = NIGHT_VERBS[village.roles[agent]]
        return [f"{verb} {t}" for t in others]
    if village.phase == VOTE:
        return [f"vote {t}" for t in others] + ["abstain"]
    return [SILENT] + [f"I suspect {t}." for t in others]


# ---------------------------------------------------------------------- what a seat knows


@dataclass(frozen=True)
class SeatView:
    """Everything one seat knows: the only input of its observation and of the bots."""

    agent: str
    role: str
    players: tuple[str, ...]
    alive: tuple[str, ...]
    day: int
    phase: str
    round: int
    to_act: str | None
    revealed: Mapping[str, str]
    speeches: tuple[tuple[int, str, str], ...]
    public: tuple[str, ...]
    pack: tuple[str, ...] = ()  # the werewolves, for a werewolf
    pack_picks: tuple[tuple[int, str, str], ...] = ()
    kills: tuple[tuple[int, str], ...] = ()
    inspections: tuple[tuple[int, str, bool], ...] = ()
    protections: tuple[tuple[int, str], ...] = ()
    options: tuple[str, ...] = ()
    seed: int = 0
    winner: str | None = None


def view(village: Village, agent: str, seed: int = 0) -> SeatView:
    """What ``agent`` knows of ``village``: its role's private knowledge and the public."""
    role = village.roles[agent]
    wolf = role == WOLF
    to_act = village.queue[0] if village.queue else None
    return SeatView(
        agent=agent,
        role=role,
        players=village.players,
        alive=tuple(village.alive),
        day=village.day,
        phase=village.phase,
        round=village.round,
        to_act=to_act,
        revealed=dict(village.roles if village.winner else village.revealed),
        speeches=tuple(village.speeches),
        public=tuple(village.public),
        pack=tuple(a for a in village.players if village.roles[a] == WOLF) if wolf else (),
        pack_picks=tuple(village.pack_picks) if wolf else (),
        kills=tuple(village.kills) if wolf else (),
        inspections=tuple(village.inspections) if role == SEER else (),
        protections=tuple(village.protections) if role == DOCTOR else (),
        options=tuple(options(village, agent)) if to_act == agent else (),
        seed=seed,
        winner=village.winner,
    )
