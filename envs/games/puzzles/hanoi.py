"""Tower of Hanoi: move every disk onto the target peg, one at a time, never a larger on a smaller.

**What the agent sees.** Three pegs ``A``, ``B``, ``C`` listed bottom to top, disks numbered by
size (``1`` is the smallest), and the target peg::

    A: 3 2
    B:
    C: 1
    Target: every disk on peg C.

Instances start from a random legal configuration (not always one full tower), and the target
peg is random, so memorising the textbook sequence does not help.

**What it may do.** ``move X Y`` moves the top disk of peg ``X`` onto peg ``Y`` (``move A C``;
``A C`` and ``A -> C`` are read too). Moving from an empty peg or onto a smaller disk is an
invalid action: the observation says why and nothing moves.

**Scoring.** Reward 1 when every disk is on the target peg (the episode terminates), else 0.

**Levels.** easy: 3 disks, medium: 5, hard: 7 (up to 127 moves).

**Oracle.** The recursive optimal solver for an arbitrary start configuration.

**Version history.** v0: first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

PEGS = "ABC"


class HanoiWorld(PuzzleWorld):
    """Pegs as lists of disk sizes, bottom first."""

    def __init__(self, pegs: list[list[int]], target: int) -> None:
        self.pegs = pegs
        self.target = target
        self.disks = sum(len(p) for p in pegs)

    def apply(self, action: str) -> str:
        source, dest = _parse_move(action)
        if source == dest:
            raise InvalidAction(f"peg {PEGS[source]} is both source and destination")
        if not self.pegs[source]:
            raise InvalidAction(f"peg {PEGS[source]} is empty; there is no disk to move")
        disk = self.pegs[source][-1]
        if self.pegs[dest] and self.pegs[dest][-1] < disk:
            raise InvalidAction(
                f"disk {disk} cannot go onto the smaller disk {self.pegs[dest][-1]} on peg "
                f"{PEGS[dest]}"
            )
        self.pegs[source].pop()
        self.pegs[dest].append(disk)
        return f"Moved disk {disk} from {PEGS[source]} to {PEGS[dest]}."

    def render(self) -> str:
        rows = [f"{PEGS[i]}: {' '.join(map(str, peg))}".rstrip() for i, peg in enumerate(self.pegs)]
        return "\n".join([*rows, f"Target: every disk on peg {PEGS[self.target]}."])

    def key(self) -> str:
        return "|".join(",".join(map(str, peg)) for peg in self.pegs) + f">{PEGS[self.target]}"

    def solved(self) -> bool:
        return len(self.pegs[self.target]) == self.disks

    def legal_actions(self) -> list[str]:
        return [
            f"move {PEGS[s]} {PEGS[d]}"
            for s in range(3)
            for d in range(3)
            if s != d and self.pegs[s] and (not self.pegs[d] or self.pegs[d][-1] > self.pegs[s][-1])
        ]


def _parse_move(action: str) -> tuple[int, int]:
    text = last_line(action)
    text = re.sub(r"\b(move|from|to|peg|disk|top)\b", " ", text, flags=re.IGNORECASE)
    pegs = re.findall(r"(?<![A-Za-z])([ABCabc])(?![A-Za-z])", text)
    if len(pegs) != 2:
        raise InvalidAction(
            f"could not read a move from {action.strip()[:80]!r}: write 'move X Y' with X and Y "
            f"among A, B, C (e.g. 'move A C')"
        )
    return PEGS.index(pegs[0].upper()), PEGS.index(pegs[1].upper())


class TowerOfHanoiEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "hanoi"
    levels = {"easy": {"disks": 3}, "medium": {"disks": 5}, "hard": {"disks": 7}}
    syntax = "Actions: 'move X Y' moves the top disk of peg X onto peg Y (pegs A, B, C)."

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> HanoiWorld:
        disks = int(level["disks"])
        target = int(rng.integers(3))
        while True:
            where = rng.integers(3, size=disks)
            if not all(w == target for w in where):
                break
        pegs: list[list[int]] = [[], [], []]
        for disk in range(disks, 0, -1):  # largest first, so every peg is sorted
            pegs[int(where[disk - 1])].append(disk)
        return HanoiWorld(pegs, target)

    @staticmethod
    def solve(world: PuzzleWorld) -> list[str]:
        assert isinstance(world, HanoiWorld)
        position = {disk: i for i, peg in enumerate(world.pegs) for disk in peg}
        moves: list[str] = []

        def gather(k: int, target: int) -> None:
            """Move disks 1..k onto ``target`` (optimal from any legal configuration)."""
            if k == 0:
                return
            if position[k] == target:
                gather(k - 1, target)
                return
            spare = 3 - position[k] - target
            gather(k - 1, spare)
            moves.append(f"move {PEGS[position[k]]} {PEGS[target]}")
            position[k] = target
            gather(k - 1, target)

        gather(world.disks, world.target)
        return moves

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, HanoiWorld)
        return (
            f"Tower of Hanoi with {world.disks} disks: move every disk onto peg "
            f"{PEGS[world.target]}, one at a time, never placing a larger disk on a smaller one."
        )
