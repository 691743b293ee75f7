"""Blocks World: restack lettered blocks, one clear block at a time, into the goal towers.

**What the agent sees.** The stacks now and the goal stacks, each listed bottom to top, and the
blocks that are clear (nothing on top)::

    Stacks now (bottom to top):
      A C
      B
    Goal stacks (bottom to top):
      C B A
    Clear blocks: B, C

Stacks are listed in order of their bottom block, so equal states always look the same. The
table has room for any number of stacks.

**What it may do.** ``move X Y`` puts the clear block ``X`` on the clear block ``Y``;
``move X table`` puts it on the table. ``put X on Y``, ``put X on the table``, ``move X to Y``,
``move X onto Y`` and ``move X from Z to Y`` are read too (letters in either case). Moving a
block that has another on top, onto a block that has another on top, onto itself, or to where it
already is, is an invalid action: the observation says why and nothing moves.
``info["admissible_actions"]`` lists every legal move.

**Scoring.** Reward 1 when the stacks equal the goal stacks (the order of the stacks on the table
does not matter; the episode terminates), else 0. There is no losing state: any configuration can
be restacked, and the step limit (80) ends the episode.

**Levels.** By the number of blocks: easy 3, medium 5, hard 7. The start and the goal are drawn
independently from the seed (each block starts a new stack with probability 1/3, else goes on a
random stack) and differ; the goal needs at least 2 moves at easy and at least as many moves as
half the blocks (rounded up) above that.

**Oracle.** Up to 5 blocks, breadth-first search over every configuration: optimal plans. Above
that, the classic near-optimal planner (at most twice the optimum): repeatedly make a
constructive move — a block onto its goal support when that support is final and clear — and
when there is none, move a misplaced clear block to the table.

**Version history.** v0: first release.
"""

from __future__ import annotations

import re
import string
from collections import deque
from typing import Any

import numpy as np

from agentgym.envs.games.puzzles.base import PuzzleEnv, PuzzleWorld, last_line
from agentgym.task_env import InvalidAction

TABLE = "table"
Config = tuple[tuple[str, ...], ...]

_FILLER = frozenset({"to", "onto", "on", "the", "top", "of", "block", "into", "in", "at"})
_COMMANDS = ("move", "put", "stack", "place")
_BFS_LIMIT = 5  # blocks; above this the near-optimal planner is used


def canonical(stacks: Any) -> Config:
    """Stacks as a sorted tuple of tuples (bottom first), empty stacks dropped."""
    return tuple(sorted(tuple(s) for s in stacks if s))


class BlocksWorld(PuzzleWorld):
    """Stacks of single-letter blocks, bottom first, and the goal stacks."""

    def __init__(self, stacks: Config, goal: Config) -> None:
        self.stacks: list[list[str]] = [list(s) for s in canonical(stacks)]
        self.goal: Config = canonical(goal)
        self.blocks = sorted(b for s in self.stacks for b in s)

    # ----------------------------------------------------------------- moves

    def apply(self, action: str) -> str:
        block, dest = self._parse(action)
        source = self._stack_of(block)
        if source[-1] != block:
            above = source[source.index(block) + 1]
            raise InvalidAction(
                f"{block} is not clear: {above} is on top of it. Clear blocks: {self._clear()}"
            )
        if dest == block:
            raise InvalidAction(f"{block} cannot be put on itself")
        if dest == TABLE:
            if len(source) == 1:
                raise InvalidAction(f"{block} is already on the table")
        else:
            target = self._stack_of(dest)
            if target is source and source[-2:-1] == [dest]:
                raise InvalidAction(f"{block} is already on {dest}")
            if target[-1] != dest:
                above = target[target.index(dest) + 1]
                raise InvalidAction(
                    f"{dest} is not clear: {above} is on top of it. Clear blocks: {self._clear()}"
                )
        below = source[-2] if len(source) > 1 else TABLE
        source.pop()
        if dest == TABLE:
            self.stacks.append([block])
        else:
            self._stack_of(dest).append(block)
        self.stacks = [list(s) for s in canonical(self.stacks)]
        where = "the table" if dest == TABLE else dest
        done = " The stacks match the goal!" if self.solved() else ""
        return f"Moved {block} from {'the table' if below == TABLE else below} onto {where}.{done}"

    def _parse(self, action: str) -> tuple[str, str]:
        example = self._example()
        line = " ".join(last_line(action).split())
        line = re.sub(r"\s*(->|=>|→)\s*", " to ", line)
        words = [w.strip("`'\"*.,!?;:()[]") for w in line.split()]
        words = [w for w in words if w]
        starts = [i for i, w in enumerate(words) if w in _COMMANDS]
        if starts:
            words = words[starts[-1] + 1 :]
        elif not (len(words) in (2, 3) and all(len(w) == 1 or w == TABLE for w in words[::2])):
            # without a command word only a bare 'X Y' or 'X -> Y' is read
            raise InvalidAction(
                f"could not read {action.strip()[:80]!r}: write 'move X Y' to put block X on "
                f"block Y, or 'move X table' (e.g. '{example}')"
            )
        stated_source = None
        if "from" in words:
            at = words.index("from")
            if at + 1 < len(words):
                stated_source = words[at + 1]
                del words[at : at + 2]
        args = [w for w in words if w not in _FILLER]
        if len(args) != 2:
            raise InvalidAction(
                f"could not read {action.strip()[:80]!r}: name one block to move and where to "
                f"put it: 'move X Y' or 'move X table' (e.g. '{example}')"
            )
        block = self._block(args[0])
        dest = TABLE if args[1] in (TABLE, "floor", "ground") else self._block(args[1])
        if stated_source is not None:
            source = self._stack_of(block)
            index = source.index(block)
            actual = source[index - 1] if index else TABLE
            stated = TABLE if stated_source in (TABLE, "floor", "ground") else stated_source.upper()
            if stated != actual:
                where = "the table" if actual == TABLE else actual
                raise InvalidAction(f"{block} is on {where}, not on {stated_source.upper()}")
        return block, dest

    def _block(self, word: str) -> str:
        name = word.upper()
        if name not in self.blocks:
            raise InvalidAction(
                f"there is no block {word[:20]!r}; the blocks are {', '.join(self.blocks)} "
                f"(and 'table' for the table)"
            )
        return name

    def _stack_of(self, block: str) -> list[str]:
        for stack in self.stacks:
            if block in stack:
                return stack
        raise AssertionError(block)  # pragma: no cover - _block checked it

    # ----------------------------------------------------------------- views

    def render(self) -> str:
        now = "\n".join(f"  {' '.join(s)}" for s in self.stacks)
        goal = "\n".join(f"  {' '.join(s)}" for s in self.goal)
        return (
            f"Stacks now (bottom to top):\n{now}\n"
            f"Goal stacks (bottom to top):\n{goal}\n"
            f"Clear blocks: {self._clear()}"
        )

    def _clear(self) -> str:
        return ", ".join(sorted(s[-1] for s in self.stacks))

    def _example(self) -> str:
        clear = sorted(s[-1] for s in self.stacks)
        if len(clear) >= 2:
            return f"move {clear[0]} {clear[1]}"
        return f"move {clear[0]} table"

    def config(self) -> Config:
        return canonical(self.stacks)

    def key(self) -> str:
        now = "|".join("".join(s) for s in self.stacks)
        goal = "|".join("".join(s) for s in self.goal)
        return f"{now}>{goal}"

    def solved(self) -> bool:
        return self.config() == self.goal

    def legal_actions(self) -> list[str]:
        return [f"move {x} {y}" for x, y in moves(self.config())]


def moves(config: Config) -> list[tuple[str, str]]:
    """Every legal ``(block, destination)`` from a configuration."""
    clear = sorted(s[-1] for s in config)
    found: list[tuple[str, str]] = []
    for stack in sorted(config, key=lambda s: s[-1]):
        x = stack[-1]
        found.extend((x, y) for y in clear if y != x)
        if len(stack) > 1:
            found.append((x, TABLE))
    return found


def after(config: Config, block: str, dest: str) -> Config:
    """The configuration after a legal move."""
    stacks = [list(s) for s in config]
    for stack in stacks:
        if stack[-1] == block:
            stack.pop()
            break
    if dest == TABLE:
        stacks.append([block])
    else:
        for stack in stacks:
            if stack and stack[-1] == dest:
                stack.append(block)
                break
    return canonical(stacks)


def bfs_plan(start: Config, goal: Config) -> list[tuple[str, str]]:
    """An optimal plan, by breadth-first search over configurations."""
    if start == goal:
        return []
    parent: dict[Config, tuple[Config, tuple[str, str]] | None] = {start: None}
    queue = deque([start])
    while queue:
        config = queue.popleft()
        for move in moves(config):
            child = after(config, *move)
            if child in parent:
                continue
            parent[child] = (config, move)
            if child == goal:
                path = []
                node: Config = child
                while parent[node] is not None:
                    node, step = parent[node]  # type: ignore[misc]
                    path.append(step)
                return path[::-1]
            queue.append(child)
    raise AssertionError("every configuration of the same blocks is reachable")  # pragma: no cover


def greedy_plan(start: Config, goal: Config) -> list[tuple[str, str]]:
    """The classic near-optimal planner: constructive moves first, else a misplaced block down."""
    goal_below = {b: (s[i - 1] if i else TABLE) for s in goal for i, b in enumerate(s)}
    config, plan = start, []
    while config != goal:
        below = {b: (s[i - 1] if i else TABLE) for s in config for i, b in enumerate(s)}
        placed: dict[str, bool] = {}

        def final(
            block: str, below: dict[str, str] = below, placed: dict[str, bool] = placed
        ) -> bool:
            """In its goal position, with everything under it too."""
            if block not in placed:
                support = below[block]
                placed[block] = support == goal_below[block] and (
                    support == TABLE or final(support)
                )
            return placed[block]

        clear = sorted(s[-1] for s in config)
        move = None
        for x in clear:
            if final(x):
                continue
            support = goal_below[x]
            if support == TABLE or (support in clear and final(support)):
                move = (x, support)
                break
        if move is None:
            move = next((x, TABLE) for x in clear if not final(x) and below[x] != TABLE)
        plan.append(move)
        config = after(config, *move)
    return plan


def plan_for(start: Config, goal: Config) -> list[tuple[str, str]]:
    """Optimal for small worlds, near-optimal above."""
    blocks = sum(len(s) for s in start)
    return bfs_plan(start, goal) if blocks <= _BFS_LIMIT else greedy_plan(start, goal)


def random_config(rng: np.random.Generator, blocks: list[str]) -> Config:
    """A random configuration: blocks in random order, each on a new or a random stack."""
    stacks: list[list[str]] = []
    for i in rng.permutation(len(blocks)):
        if not stacks or rng.random() < 1 / 3:
            stacks.append([blocks[int(i)]])
        else:
            stacks[int(rng.integers(len(stacks)))].append(blocks[int(i)])
    return canonical(stacks)


class BlocksWorldEnv(PuzzleEnv):
    __doc__ = __doc__
    name = "blocksworld"
    levels = {"easy": {"blocks": 3}, "medium": {"blocks": 5}, "hard": {"blocks": 7}}
    syntax = (
        "Actions: 'move X Y' puts the clear block X on the clear block Y; 'move X table' puts "
        "it on the table ('put X on Y' works too)."
    )

    @staticmethod
    def generate(rng: np.random.Generator, **level: Any) -> BlocksWorld:
        count = int(level["blocks"])
        blocks = list(string.ascii_uppercase[:count])
        least = 2 if count <= 3 else (count + 1) // 2
        while True:
            start, goal = random_config(rng, blocks), random_config(rng, blocks)
            if len(plan_for(start, goal)) >= least:
                return BlocksWorld(start, goal)

    @staticmethod
    def solve(world: PuzzleWorld) -> list[str]:
        assert isinstance(world, BlocksWorld)
        return [f"move {x} {y}" for x, y in plan_for(world.config(), world.goal)]

    @staticmethod
    def goal(world: PuzzleWorld) -> str:
        assert isinstance(world, BlocksWorld)
        towers = "; ".join(" ".join(s) for s in world.goal)
        return (
            f"Blocks World with {len(world.blocks)} blocks: restack them into the goal stacks "
            f"(bottom to top: {towers}), moving one clear block at a time onto another clear "
            f"block or the table."
        )
