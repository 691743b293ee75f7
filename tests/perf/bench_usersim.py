"""Benchmark: the simulated-users family's costs, as ratios against references in the same run.

Not a test (these machines are noisy). Each figure is a median over ``--rounds`` rounds in
which a variant and its reference alternate, per domain:

* **a tool step**: ``env.step`` with the first tool call of a task's oracle script (parsed,
  checked against the tool-call space, run, the result as JSON, the verdict and the state
  key) vs calling the tool's function on a copy of the database directly;
* **a message step**: ``env.step`` with the script's first message (the scripted user's
  answer, the policy bookkeeping) vs the scripted user's ``reply`` alone;
* **a reset**: ``env.reset`` on a task (a fresh copy of the database, the dialogue, the
  user's opening) vs ``Domain.db()`` alone (the copy, which the reset is mostly made of);
* **an oracle episode**, absolute: reset and every step of a hard task's script, scored.

    python tests/perf/bench_usersim.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import agentgym
from agentgym.envs.usersim.env import DOMAINS
from agentgym.envs.usersim.scripted import ScriptedUser


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def alternate(rounds: int, variant: Callable[[], object], reference: Callable[[], object]):
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(timed(variant))
        theirs.append(timed(reference))
    return statistics.median(ours), statistics.median(theirs)


def report(name: str, ours: float, theirs: float | None = None) -> None:
    line = f"{name:<44} {ours * 1e3:9.3f} ms"
    if theirs is not None:
        line += f"   reference {theirs * 1e3:9.3f} ms   ratio {ours / theirs:6.2f}x"
    print(line)


def bench_domain(name: str, rounds: int) -> None:
    env = agentgym.make(f"usersim/{name.capitalize()}-v2")
    base = env.unwrapped
    task = base.tasks.get("test/easy/0")
    moves = task.draft.moves
    call = next(m for m in moves if m.call is not None)
    message = next(m for m in moves if m.say is not None)
    tool = {t.name: t for t in base.domain.agent_tools()}[call.call]

    def fresh() -> None:
        env.reset(seed=0, options={"task_id": task.id})

    ours, theirs = [], []
    for _ in range(rounds):
        fresh()
        ours.append(timed(lambda: env.step(call.action())))
        db = base.domain.db()
        theirs.append(timed(lambda: tool.function(db, **call.arguments)))  # noqa: B023
    report(f"{name}: tool step ({call.call})", statistics.median(ours), statistics.median(theirs))
    ours, theirs = [], []
    for _ in range(rounds):
        fresh()
        ours.append(timed(lambda: env.step(message.say)))
        user = ScriptedUser(task.draft.scenario)
        theirs.append(timed(lambda: user.reply(message.say)))  # noqa: B023
    report(f"{name}: message step", statistics.median(ours), statistics.median(theirs))
    report(f"{name}: reset", *alternate(rounds, fresh, base.domain.db))

    hard = base.tasks.get("test/hard/0")
    _ = hard.gold  # replayed once per task (cached), not part of an episode

    def episode() -> None:
        env.reset(seed=0, options={"task_id": hard.id})
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(base.oracle_action())
        assert info["verdict"].score == 1.0

    report(
        f"{name}: oracle episode ({len(hard.draft.moves)} moves)",
        statistics.median(timed(episode) for _ in range(rounds)),
    )
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    for name in DOMAINS:
        bench_domain(name, args.rounds)


if __name__ == "__main__":
    main()
