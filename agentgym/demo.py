"""``make demo``: a real evaluation on the shipped ``quickstart`` benchmark, after a short tour.

The tour plays a few games with their oracles (instructions, first and last observation,
verdict) and runs the conformance checker on one env. Then the evaluator runs ``quickstart``
(three games and two reasoning-gym arithmetic sets) with the embedded LLM
(SmolLM2-135M-Instruct, shipped in a wheel, on the CPU, its requests batched across episodes)
and the two reference agents, the oracle (the ceiling) and random (the floor), into
``runs/demo-*/``, and prints success and reward with 95% confidence intervals (the mean of
env means, tasks resampled within envs, as ``agentgym report`` and the leaderboard print it),
the paired difference between SmolLM2 and random with the sentence saying which is better,
and writes ``runs/demo-*/report.html`` with the plots. The 135M model loses every game but
answers a fifth of the chain sums right: its interval clears random's (``docs/evaluation.md``,
"Measured").
Everything is offline and seeded.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import agentgym
from agentgym.checker import check_env
from agentgym.errors import MissingExtraError

SHOWCASE = (
    ("games/Sokoban-v0", "dev/easy/0"),
    ("games/TowerOfHanoi-v0", "dev/easy/0"),
    ("games/Wordle-v0", "dev/easy/0"),
    ("games/Minesweeper-v0", "dev/easy/0"),
    ("games/TextWorldCoinCollector-v0", "dev/easy/0"),
    ("games/BabyAIGoTo-v0", "dev/easy/0"),
)


def show(env_id: str, task_id: str) -> None:
    """Play one task with its oracle, printing the first and last observations."""
    print("=" * 78)
    try:
        env = agentgym.make(env_id)
    except MissingExtraError as error:
        print(f"{env_id}: skipped ({error})")
        return
    started = time.perf_counter()
    observation, info = env.reset(seed=0, options={"task_id": task_id})
    print(f"{env!r}\ntask {info['task_id']}\n")
    print(textwrap.indent(info["instructions"], "  | "))
    print("\nfirst observation:\n" + textwrap.indent(observation, "    "))
    actions, total = [], 0.0
    ours: Any = env.unwrapped  # the agentgym env: Gymnasium's type has no oracle_action
    while (action := ours.oracle_action()) is not None:
        observation, reward, terminated, truncated, info = env.step(action)
        actions.append(action)
        total += float(reward)
        if terminated or truncated:
            break
    env.close()
    shown = ", ".join(actions[:12]) + (" ..." if len(actions) > 12 else "")
    print(f"\noracle played {len(actions)} actions: {shown}")
    print("last observation:\n" + textwrap.indent(observation, "    "))
    verdict = info["verdict"]
    print(
        f"return {total:g}; verdict: score {verdict.score:g}/{verdict.max_score:g}, "
        f"passed={verdict.passed} ({verdict.details}); {time.perf_counter() - started:.2f}s"
    )


def main() -> None:
    """Run the showcase."""
    ids = [s.id for s in agentgym.list_envs(family="games")]
    print(f"agentgym {agentgym.__version__}: {len(ids)} game envs registered\n")
    for env_id, task_id in SHOWCASE:
        show(env_id, task_id)
    print("=" * 78)
    print("conformance check of games/Sokoban-v0:")
    print("  " + check_env("games/Sokoban-v0", leak_cycles=50).summary())
    print("=" * 78)
    evaluate_references()


def evaluate_references() -> None:
    """Evaluate the reference agents on ``quickstart`` and print the comparison table."""
    from agentgym.eval import evaluate
    from agentgym.eval.plan import load_benchmark

    benchmark = load_benchmark("quickstart")
    out = Path("runs") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}"
    print(f"evaluating on {benchmark.name}: {benchmark.description}\n")
    runs, directories, records = [], [], {}
    for agent in ("smollm2", "oracle", "random"):
        started = time.perf_counter()
        try:
            result = evaluate(benchmark, agent, out / agent, num_envs=16, progress=True)
        except MissingExtraError as error:  # installed without the hf extra
            print(f"  {agent}: skipped ({error})")
            continue
        episodes = len(result.records)
        print(f"  {agent}: {episodes} episodes in {time.perf_counter() - started:.1f}s")
        runs.append((agent, result.summary))
        directories.append(result.run_dir)
        records[agent] = result.records
    print("\n" + format_results(runs, records))
    print(f"\nrun directories: {out}/*  (agentgym compare {out}/random {out}/smollm2)")
    try:
        from agentgym.eval.report import read_run, write_html

        report = write_html([read_run(d) for d in directories], out / "report.html")
        print(f"HTML report: {report}")
    except MissingExtraError as error:  # installed without the report extra
        print(f"HTML report skipped ({error})")


def format_results(runs: list[tuple[str, dict[str, Any]]], records: dict[str, Any]) -> str:
    """What the demo prints after its runs: the table of every agent (the headline row, its
    convention, pooled figures where they differ) and, when SmolLM2 ran, its paired difference
    with random and the sentence that says which is better, as ``agentgym report`` and
    ``agentgym compare`` print them."""
    from agentgym.eval.cli import format_comparison, format_table
    from agentgym.eval.stats import compare

    text = format_table(runs)
    if "smollm2" in records and "random" in records:
        # Paired by episode, the interval a bootstrap over tasks within envs: above 0, the
        # benchmark sees the model do better than chance.
        difference = compare(records["random"], records["smollm2"])
        text += "\n\n" + format_comparison(difference, "random", "smollm2")
    return text


if __name__ == "__main__":
    main()
