"""Rock-paper-scissors for two text agents, all moves at once (PettingZoo parallel).

**What each agent sees.** The round, the score, and the history of both players' throws.

**What it may do.** ``rock``, ``paper`` or ``scissors`` (``throw rock`` and the initials
``r``/``p``/``s`` are read too). Anything else is an invalid action: that agent's throw is void
for the round (the other wins it if its throw was valid) and it is told why; three mistakes
forfeit the match.

**Scoring.** +1/-1 per round won/lost. The match ends when a player has won a majority of the
rounds or the rounds run out; ``verdict.score`` is 1 for the match winner, 0 for the loser,
0.5 each for a tie.

**Tasks.** ``best_of_3``, ``best_of_5`` and ``best_of_9`` matches.

**Oracle.** Frequency play: throw what beats the opponent's most frequent throw so far (rock
at first). Against a uniform random player no strategy does better than even, which is why
this oracle is a sparring partner, not a proof of optimality.

**Reference players.** ``random`` (a uniformly random throw: no strategy beats it on
average) and the oracle.

**Version history.** v0: first release; the throws listed in ``info["legal_actions"]`` and in
invalid-action feedback since issue 30 (before any published v0 score).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.multiagent import SimultaneousEnv
from agentgym.task_env import InvalidAction

THROWS = ("rock", "paper", "scissors")
BEATS = {"rock": "scissors", "paper": "rock", "scissors": "paper"}
PLAYERS = ("player_0", "player_1")


class MatchTask(Task[int]):
    """A match of ``rounds`` rounds."""

    ROUNDS: Mapping[str, int] = {"best_of_3": 3, "best_of_5": 5, "best_of_9": 9}

    def setup(self, rng: np.random.Generator) -> tuple[int, str]:
        rounds = self.ROUNDS[self.difficulty]
        return rounds, f"Win the majority of {rounds} rounds of rock-paper-scissors."

    def validate(self, world: int) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see the env")

    def solve(self, world: int) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


class Match:
    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.history: list[dict[str, str | None]] = []
        self.wins = dict.fromkeys(PLAYERS, 0)
        self.pending: dict[str, str | None] = {}


class RockPaperScissorsEnv(SimultaneousEnv[Match]):
    __doc__ = __doc__
    metadata = {**SimultaneousEnv.metadata, "name": "rockpaperscissors_v0"}
    possible_agents = list(PLAYERS)

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet(
            "rockpaperscissors",
            MatchTask,
            tuple(MatchTask.ROUNDS),
            sizes={"train": 1000, "dev": 100, "test": 100},
        )
        super().__init__(**kwargs)

    def new_world(self, task: Any, rng: np.random.Generator) -> Match:
        return Match(task.setup(rng)[0])

    def describe(self, world: Match, agent: str) -> str:
        other = PLAYERS[1 - PLAYERS.index(agent)]
        lines = [
            f"You are {agent}. Round {min(len(world.history) + 1, world.rounds)} of "
            f"{world.rounds}. Score: you {world.wins[agent]}, opponent {world.wins[other]}."
        ]
        for number, throws in enumerate(world.history, start=1):
            lines.append(
                f"  round {number}: you {throws[agent] or '(void)'}, opponent "
                f"{throws[other] or '(void)'}"
            )
        return "\n".join(lines)

    def act(self, world: Match, agent: str, action: str) -> str:
        words = action.strip().lower().replace(".", " ").split()
        picked = [t for w in words for t in THROWS if w in (t, t[0])]
        if len(set(picked)) != 1:
            world.pending[agent] = None
            raise InvalidAction(
                f"could not read one throw from {action.strip()[:60]!r}: write rock, paper or "
                f"scissors"
            )
        world.pending[agent] = picked[0]
        return f"You threw {picked[0]}."

    def resolve(self, world: Match, valid: Mapping[str, bool]) -> dict[str, float]:
        throws = {a: world.pending.get(a) if valid[a] else None for a in PLAYERS}
        world.history.append(throws)
        world.pending = {}
        first, second = (throws[a] for a in PLAYERS)
        if first == second:
            return dict.fromkeys(PLAYERS, 0.0)
        first_wins = second is None or (first is not None and BEATS[first] == second)
        winner = PLAYERS[0] if first_wins else PLAYERS[1]
        world.wins[winner] += 1
        return {a: 1.0 if a == winner else -1.0 for a in PLAYERS}

    def legal_actions(self, world: Match, agent: str) -> list[str]:
        return [] if self.outcome(world) is not None else list(THROWS)

    def state_key(self, world: Match) -> str:
        return f"{world.rounds}:" + "|".join(
            ",".join(t[a] or "-" for a in PLAYERS) for t in world.history
        )

    def outcome(self, world: Match) -> dict[str, float] | None:
        needed = world.rounds // 2 + 1
        over = len(world.history) >= world.rounds or max(world.wins.values()) >= needed
        if not over:
            return None
        a, b = (world.wins[p] for p in PLAYERS)
        if a == b:
            return dict.fromkeys(PLAYERS, 0.5)
        return {PLAYERS[0]: float(a > b), PLAYERS[1]: float(b > a)}

    def rules(self) -> str:
        return (
            "Rock-paper-scissors: both players throw at once; rock beats scissors, scissors "
            "beats paper, paper beats rock. Win the majority of the rounds.\n"
            "Actions: rock, paper or scissors."
        )

    def oracle_action(self, agent: str) -> str | None:
        if self.world is None or self.outcome(self.world) is not None:
            return None
        other = PLAYERS[1 - PLAYERS.index(agent)]
        seen = Counter(t[other] for t in self.world.history if t[other])
        if not seen:
            return "rock"
        favourite = max(THROWS, key=lambda t: (seen[t], -THROWS.index(t)))
        return next(t for t in THROWS if BEATS[t] == favourite)
