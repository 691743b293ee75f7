"""Measure: what fixed, task-blind policies and the reference bots pass and score in the
seated negotiation game, under the pass rule (``verdict.passed``) and the rules it was chosen
over, and under v2's score (:func:`gain`) and v1's (the deal's utility).

Not a test (the suite plays a sample: tests/multiagent/test_negotiation.py). Each policy sits
in each seat of ``multiagent/Negotiation-v2`` against each reference player, over the test
split's tasks, through the seated env (``agentgym.make(..., opponent=, seat=)``). A blind
policy reads only what the game's mechanics show -- the turn count and whether an offer
stands -- and the pool where it names one; never its values. Printed per policy and bot:
the pass rate under each rule, the mean score and the mean utility (v1's score). The figures
in docs/envs/multiagent.md ("No reward without the task") come from this script.

    python tests/perf/negotiation_pass_rule.py [--tasks 1000]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

import numpy as np

import agentgym
from agentgym.envs.multiagent.negotiation import (
    PLAYERS,
    Bargain,
    best_offer,
    bundles,
    nash_share,
    pareto_optimal,
    rest,
    show,
    worth,
)

Policy = Callable[[str], str]
BOTS = ("greedy", "fair", "adaptive", "random")


def _turn(observation: str) -> tuple[int, int]:
    found = re.search(r"Turn (\d+) of (\d+)\.", observation)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def _pool(observation: str) -> tuple[int, int, int]:
    found = re.search(r"divide books=(\d+) hats=(\d+) balls=(\d+)", observation)
    assert found, observation
    a, b, c = (int(n) for n in found.groups())
    return a, b, c


def _offered(observation: str) -> bool:
    return "Standing offer from" in observation


def accept_after(talks: int) -> Policy:
    """Talk on the first ``talks`` own turns, then accept whenever an offer stands."""

    def policy(observation: str) -> str:
        turn, _ = _turn(observation)
        return "[Accept]" if turn > 2 * talks and _offered(observation) else "Let us talk."

    return policy


def accept_last(observation: str) -> str:
    turn, limit = _turn(observation)
    return "[Accept]" if turn >= limit - 1 and _offered(observation) else "Let us talk."


def propose(share: Callable[[tuple[int, int, int]], tuple[int, int, int]]) -> Policy:
    return lambda observation: f"[Propose] {show(share(_pool(observation)))}"


def propose_then_accept(observation: str) -> str:
    turn, _ = _turn(observation)
    if turn > 2 and _offered(observation):
        return "[Accept]"
    return "[Propose] books=1 hats=1 balls=1"


def less(pool: tuple[int, int, int], k: int) -> tuple[int, int, int]:
    """The pool less ``k`` items, taken a kind at a time in turn (books, hats, balls, ...)."""
    share = list(pool)
    for i in range(min(k, sum(pool))):
        kind = next(j % 3 for j in range(i, i + 3) if share[j % 3])
        share[kind] -= 1
    return share[0], share[1], share[2]


def concede(observation: str) -> str:
    """Ask for the pool, then one item fewer each own turn: a concession schedule, blind."""
    turn, _ = _turn(observation)
    return f"[Propose] {show(less(_pool(observation), turn // 2))}"


def alternate(observation: str) -> str:
    """The pool and the pool less one item, in turn: a changing offer that concedes nothing."""
    turn, _ = _turn(observation)
    return f"[Propose] {show(less(_pool(observation), (turn // 2) % 2))}"


def random_share(observation: str) -> str:
    """A share drawn from the turn and the pool: a lottery on the other's acceptance."""
    turn, _ = _turn(observation)
    pool = _pool(observation)
    rng = np.random.default_rng([turn, *pool])
    a, b, c = (int(rng.integers(n + 1)) for n in pool)
    return f"[Propose] {show((a, b, c))}"


def then_accept_last(policy: Policy) -> Policy:
    """``policy``, but accept a standing offer on the last turn."""

    def accepting(observation: str) -> str:
        turn, limit = _turn(observation)
        last = turn >= limit - 1 and _offered(observation)
        return "[Accept]" if last else policy(observation)

    return accepting


POLICIES: dict[str, Policy] = {
    "always [Accept]": lambda _obs: "[Accept]",
    **{f"talk {k} then accept": accept_after(k) for k in range(5)},
    "accept on the last turn": accept_last,
    "walk away": lambda _obs: "[Walk away]",
    "talk": lambda _obs: "Let us talk.",
    "propose 1/1/1": propose(lambda _pool: (1, 1, 1)),
    "propose the pool": propose(lambda pool: pool),
    "propose half": propose(lambda pool: (pool[0] // 2, pool[1] // 2, pool[2] // 2)),
    "propose nothing": propose(lambda _pool: (0, 0, 0)),
    "propose 1/1/1, then accept": propose_then_accept,
    "concede an item a turn": concede,
    "concede, accept the last": then_accept_last(concede),
    "alternate pool, pool-1": alternate,
    "random shares": random_share,
    "random, accept the last": then_accept_last(random_share),
    "no word (invalid)": lambda _obs: "...",
}


def rules(world: Bargain, seat: str) -> dict[str, bool]:
    """The rules the verdict's was chosen over, for ``seat`` in a finished game: v0's (a deal
    worth half the maximum), and the verdict's without one of its clauses each."""
    if world.deal is None:
        return dict.fromkeys(("v0", "pareto+nash", "beats offers+nash"), False)
    utility = world.utility(seat)
    nash = utility >= nash_share(world, seat)
    return {
        "v0": utility >= 0.5,
        "pareto+nash": nash and pareto_optimal(world),
        "beats offers+nash": nash and utility > best_offer(world, seat),
    }


def nash_proposer(world: Bargain, seat: str, _observation: str) -> str:
    """A player that knows BOTH players' values and always proposes its side of the Nash
    bargaining solution (its best such division): what passing needs, shown reachable."""
    other = PLAYERS[1 - PLAYERS.index(seat)]

    def key(share: tuple[int, int, int]) -> tuple[int, int]:
        mine = worth(world.values[seat], share)
        return mine * worth(world.values[other], rest(world.pool, share)), mine

    return f"[Propose] {show(max(bundles(world.pool), key=key))}"


def play(bot: str, seat: str, tasks: list[str], act: Callable[[Bargain, str, str], str]):
    env = agentgym.make("multiagent/Negotiation-v2", opponent=bot, seat=seat)
    game = env.unwrapped.game.unwrapped
    counts: dict[str, int] = {}
    passed = score = utility = 0.0
    for seed, task in enumerate(tasks):  # the seed draws the random player's moves
        observation, info = env.reset(seed=seed, options={"task_id": task})
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(
                act(game.world, seat, observation)
            )
            done = terminated or truncated
        for name, ok in rules(game.world, seat).items():
            counts[name] = counts.get(name, 0) + ok
        passed += info["verdict"].passed
        score += info["verdict"].score
        utility += info["verdict"].components.get("utility", 0.0)  # none at a forfeit
    env.close()
    n = len(tasks)
    return {name: c / n for name, c in counts.items()}, passed / n, score / n, utility / n


def report(name: str, act: Callable[[Bargain, str, str], str], tasks: list[str]) -> None:
    for bot in BOTS:
        for seat in PLAYERS:
            rates, passed, score, utility = play(bot, seat, tasks, act)
            shown = "  ".join(f"{k} {v:4.0%}" for k, v in rates.items())
            head = (
                f"  {name:<26} {seat} vs {bot:<8} passed {passed:4.0%}  score {score:.2f}  "
                f"utility {utility:.2f}"
            )
            print(f"{head}  {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000, help="test tasks (1000: all)")
    count = parser.parse_args().tasks
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    tasks = list(env.unwrapped.tasks.ids("test"))[:: max(1, 1000 // count)][:count]
    players = env.unwrapped.reference_players()
    started = time.perf_counter()
    print(f"blind policies, {len(tasks)} test tasks per seat")
    for name, policy in POLICIES.items():
        report(name, lambda _world, _seat, obs, policy=policy: policy(obs), tasks)
    print("the Nash proposer (knows both players' values) in the agent's seat")
    report("Nash proposer", nash_proposer, tasks)
    print("reference players in the agent's seat")
    for name in ("adaptive", "fair", "greedy"):
        player = players[name]()
        report(name, lambda world, seat, _obs, player=player: player.act(_Game(world), seat), tasks)
    print(f"{time.perf_counter() - started:.0f} s")


class _Game:
    """What a reference player reads: the game's world."""

    def __init__(self, world: Bargain) -> None:
        self.world = world


if __name__ == "__main__":
    main()
