"""``agentgym eval`` and ``agentgym report``: run an evaluation, read a run directory.

agentgym eval --benchmark quickstart --agent random          a shipped suite
agentgym eval --env games/Maze-v0 --tasks 20 --agent oracle  an ad-hoc suite over one env
agentgym eval ... --out runs/mine --resume                   continue a killed run
agentgym eval ... --env-server http://HOST:PORT              envs on env servers
agentgym eval ... --ray auto --num-envs 64                   episodes on a Ray cluster
agentgym report runs/mine [runs/other ...]                   the tables, side by side
agentgym compare runs/a runs/b                               paired difference, with a CI
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agentgym.errors import UsageError
from agentgym.eval.headline import (
    ALL_ENVS,
    convention_line,
    overall_label,
    percent_interval,
    points_interval,
    pooled_line,
    score_interval,
)
from agentgym.eval.stats import HEADLINE

__all__ = ["ALL_ROW", "add_commands", "format_comparison", "format_pairs", "format_table"]


def add_commands(commands: Any) -> None:
    """Register ``eval`` and ``report`` on the main parser's subcommands."""
    run = commands.add_parser(
        "eval",
        help="evaluate an agent on a benchmark (or on one env)",
        description="Run every episode of a benchmark with an agent, many at once, record each "
        "in RUN_DIR/episodes.jsonl, and print success and reward with 95% confidence "
        "intervals (bootstrap over tasks). Agents: oracle, random, smollm2 (the embedded "
        "LLM), hf:PATH, openai:MODEL@URL, vllm:PATH, or package.module:name (an Agent "
        "subclass, a factory, or a function f(observation, info) -> action; the module is "
        "found as python -m finds it: on sys.path, else in the current directory).",
    )
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--benchmark",
        metavar="NAME",
        help="a shipped suite (" + ", ".join(_shipped()) + "; `agentgym benchmarks` says "
        "what each holds) or the path of a YAML file",
    )
    source.add_argument("--env", metavar="ID", help="evaluate on one env id instead")
    run.add_argument(
        "--agent",
        required=True,
        help="agent spec: oracle, random, smollm2, hf:PATH, openai:MODEL@URL, vllm:PATH, "
        "or package.module:name (a module on sys.path or in the current directory)",
    )
    run.add_argument(
        "--agent-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of an LLM agent (repeatable; VALUE is read as JSON when it parses): "
        "history_window=1, max_concurrency=64, token_ids=true, device=cuda, ...",
    )
    run.add_argument(
        "--user",
        metavar="SPEC",
        help="an agent spec that plays the user of conversation envs (usersim/*), e.g. "
        "smollm2 or openai:MODEL@URL (default: the env's scripted user); its messages are "
        "recorded apart from the agent's",
    )
    run.add_argument(
        "--user-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of an LLM --user (repeatable), as --agent-option",
    )
    run.add_argument(
        "--out", metavar="RUN_DIR", help="run directory (default: runs/NAME-AGENT-TIME)"
    )
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--num-envs", type=int, default=8, metavar="N", help="episodes at once")
    run.add_argument(
        "--step-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds one step (the agent's reply, or the env's step) may take; a try that "
        "runs over is retried (--retries), then recorded as errored",
    )
    run.add_argument(
        "--episode-timeout",
        type=float,
        default=3600.0,
        metavar="S",
        help="seconds a whole episode may take, retried and recorded as --step-timeout",
    )
    run.add_argument("--retries", type=int, default=2, help="retries of an errored episode")
    scale = run.add_argument_group("elsewhere (docs/evaluation.md, 'Scaling out')")
    scale.add_argument(
        "--env-server",
        action="append",
        default=[],
        metavar="URL",
        help="play every episode's env on this env server (agentgym serve-env; repeatable: "
        "each new episode goes to the server with the fewest of this run's episodes in "
        "flight); recorded in the manifest",
    )
    scale.add_argument(
        "--env-server-token",
        metavar="TOKEN",
        help="the env servers' bearer token (default: $AGENTGYM_SERVER_TOKEN); not recorded",
    )
    scale.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play the episodes on Ray actors across a cluster: auto (the cluster this machine "
        "belongs to), local (a new one here), HOST:PORT or ray://HOST:PORT; --num-envs is "
        "then the episodes at once over the whole cluster (needs ray: agentgym[train])",
    )
    scale.add_argument(
        "--episodes-per-actor",
        type=int,
        metavar="N",
        help="with --ray: episodes one actor plays at once (default: a core's worth of the "
        "heaviest env's: 8 text episodes, 1 browser or desktop episode)",
    )
    run.add_argument(
        "--seed",
        type=int,
        help="the base seed of every episode's seed (default: 0; with --benchmark it replaces "
        "the file's seed, and the manifest records the suite with it)",
    )
    one_env = run.add_argument_group("with --env (a benchmark file pins its own)")
    one_env.add_argument("--split", help="the split to draw tasks from (default: test)")
    one_env.add_argument("--difficulty", help="one difficulty (default: spread over all)")
    one_env.add_argument(
        "--tasks",
        type=int,
        metavar="N",
        help="N tasks, spread round-robin over the difficulties and the env's strata (SWE's "
        "repositories), the first of each in id order, the same for every seed; the manifest "
        "says how (default: up to 10); more than the env has is refused",
    )
    one_env.add_argument("--episodes-per-task", type=int, metavar="K", help="(default: 1)")
    one_env.add_argument(
        "--opponent",
        action="append",
        default=[],
        metavar="NAME",
        help="with a multi-agent id (multiagent/*): the agent plays one seat and this "
        "reference player every other seat (a wrong name lists the game's), or SEAT=NAME for "
        "each seat (repeatable); recorded in the manifest with the env",
    )
    one_env.add_argument(
        "--seat",
        metavar="SEAT",
        help="with --opponent: the agent's seat, such as player_0 (default: alternate, the "
        "side following the task, so that a run plays every side equally)",
    )
    one_env.add_argument(
        "--max-steps", type=int, metavar="N", help="the step limit (default: the env's own)"
    )
    one_env.add_argument(
        "--env-kwargs",
        metavar="JSON",
        help="the env's keyword arguments, a JSON object as a benchmark file's kwargs, e.g. "
        '\'{"prompt": "verl-agent"}\' (as agentgym train takes them); recorded in the '
        "manifest with the env",
    )
    one_env.add_argument(
        "--sampling",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a sampling setting for model agents (repeatable): temperature=0, top_p=0.95, "
        "top_k=50, max_tokens=128 (a benchmark file pins its own)",
    )
    run.set_defaults(run=_eval)

    report = commands.add_parser(
        "report",
        help="print the statistics of run directories and write an HTML report",
        description="Read RUN_DIR/episodes.jsonl and print per-env success, reward (95% CI, "
        "bootstrap over tasks), pass@k / pass^k, errored episodes and costs; write an HTML "
        "report with plots (needs the report extra: pandas, matplotlib).",
    )
    report.add_argument(
        "run_dirs", nargs="+", metavar="RUN_DIR", help="run directories, shown side by side"
    )
    report.add_argument(
        "--html", metavar="PATH", help="where to write the report (default: RUN_DIR/report.html)"
    )
    report.add_argument("--no-html", action="store_true", help="print the tables only")
    report.add_argument(
        "--episode",
        metavar="ID",
        help="print this episode's transcript (an episode id, or a task id for its first "
        "episode) from every RUN_DIR instead of the tables (default: none)",
    )
    report.set_defaults(run=_report)

    compare = commands.add_parser(
        "compare",
        help="paired comparison of two runs on the episodes both have",
        description="For every episode both runs scored (same benchmark, same episode ids), "
        "the difference B - A in success and reward, with a 95% interval from a bootstrap over "
        "tasks. An interval that excludes 0 is a difference the benchmark can see.",
    )
    compare.add_argument("run_a", metavar="RUN_A", help="the run compared against")
    compare.add_argument("run_b", metavar="RUN_B", help="the run whose difference is shown")
    compare.set_defaults(run=_compare)


def _shipped() -> list[str]:
    """The names of the shipped suites, for the help (reads a folder; imports no env)."""
    from agentgym.eval.plan import list_benchmarks

    return list_benchmarks()


ONE_ENV_OPTIONS = (
    "split",
    "difficulty",
    "tasks",
    "episodes_per_task",
    "max_steps",
    "sampling",
    "opponent",
    "seat",
    "env_kwargs",
)
"""The options that describe an ``--env`` run's suite; a benchmark file pins its own."""


def _eval(args: argparse.Namespace) -> int:
    from agentgym.eval.engine import EngineLimits
    from agentgym.eval.run import default_run_dir, evaluate

    if args.user_option and args.user is None:
        raise UsageError(
            "--user-option goes with --user SPEC (a model playing the user); without it the "
            "env's scripted user plays, which takes no options"
        )
    if args.out is not None and not args.out.strip():
        raise UsageError("--out is empty; give a run directory, or leave --out out for one")
    benchmark = _benchmark_of(args)
    if args.resume and not args.out:
        raise UsageError("--resume needs --out RUN_DIR (the run to continue)")
    out = args.out or default_run_dir(benchmark.name, args.agent)
    limits = EngineLimits(args.step_timeout, args.episode_timeout, args.retries)
    result = evaluate(
        benchmark,
        args.agent,
        out,
        agent_options=parse_options(args.agent_option, "--agent-option"),
        num_envs=args.num_envs,
        resume=args.resume,
        limits=limits,
        progress=True,
        user=args.user,
        user_options=parse_options(args.user_option, "--user-option"),
        env_servers=args.env_server or None,
        env_server_token=args.env_server_token,
        ray=args.ray,
        episodes_per_actor=args.episodes_per_actor,
    )
    print(format_table([(args.agent, result.summary)]))
    print(f"run directory: {result.run_dir}")
    return 0


def _benchmark_of(args: argparse.Namespace) -> Any:
    """The suite an ``eval`` command line asks for: a benchmark file (with ``--seed``, its
    seed replaced), or one env's suite from the ``--env`` options."""
    import dataclasses

    from agentgym.eval.plan import load_benchmark
    from agentgym.eval.run import one_env_benchmark

    if args.benchmark:
        for name in ONE_ENV_OPTIONS:
            if getattr(args, name) not in (None, []):
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"{flag} goes with --env; a benchmark file pins its own {name}")
        benchmark = load_benchmark(args.benchmark)
        if args.seed is not None:
            benchmark = dataclasses.replace(benchmark, seed=args.seed)
        return benchmark
    return one_env_benchmark(
        args.env,
        tasks=args.tasks,
        split=args.split or "test",
        difficulty=args.difficulty,
        episodes_per_task=1 if args.episodes_per_task is None else args.episodes_per_task,
        max_steps=args.max_steps,
        seed=args.seed,
        sampling=parse_options(args.sampling, "--sampling"),
        flag="--tasks ",
        kwargs=_env_kwargs(args),
    )


def _env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``--env-kwargs`` with the seating of ``--opponent``/``--seat``, which it must not set
    as well."""
    from agentgym.eval.plan import parse_env_kwargs
    from agentgym.seating import seat_kwargs

    kwargs = parse_env_kwargs(args.env_kwargs)
    seating = seat_kwargs(args.opponent, args.seat)
    both = sorted(set(kwargs) & set(seating))
    if both:
        raise UsageError(
            f"--env-kwargs sets {', '.join(both)}, which --opponent and --seat set; give one"
        )
    return {**kwargs, **seating}


def _read_run(run_dir: str) -> Any:
    """:func:`~agentgym.eval.report.read_run`, with a file that cannot be read (not UTF-8, a
    directory, no permission) named in a :class:`UsageError` instead of a traceback."""
    from agentgym.eval.report import read_run

    try:
        return read_run(run_dir)
    except UnicodeDecodeError as error:
        raise UsageError(
            f"cannot read the run directory {run_dir}: a file in it is not UTF-8 text "
            f"({error.reason} at byte {error.start}); it is not a run agentgym wrote"
        ) from None
    except OSError as error:
        name = error.filename or run_dir
        raise UsageError(f"cannot read {name} in the run {run_dir}: {error.strerror}") from None


def _report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from agentgym.eval.report import benchmark_mismatch, write_html
    from agentgym.eval.stats import iteration_curve

    runs = [_read_run(run_dir) for run_dir in args.run_dirs]
    if args.episode is not None:
        return _print_episode(runs, args.episode)
    warning = benchmark_mismatch(runs)
    if warning:
        print(f"agentgym: warning: {warning}", file=sys.stderr)
    print(
        format_table(list(zip(_distinct_labels(runs), (run.summary for run in runs), strict=True)))
    )
    if len(runs) > 1:
        print("\n" + format_pairs(runs))
    for run in runs:
        curve = iteration_curve(run.records)
        if curve:
            print(f"\n{run.label}: training curve ({run.directory})")
            print(format_curve(curve))
    if not args.no_html:
        target = Path(args.html or runs[0].directory / "report.html")
        if target.is_dir():
            raise UsageError(f"--html {target} is a directory; give the path of a file to write")
        blocker = next((parent for parent in target.parents if parent.is_file()), None)
        if blocker is not None:
            raise UsageError(f"--html {target} lies under {blocker}, which is a file")
        try:
            path = write_html(runs, target)
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            raise UsageError(
                f"cannot write the report to {target} ({where}{error.strerror})"
            ) from None
        print(f"report: {path}")
    return 0


def _print_episode(runs: list[Any], wanted: str) -> int:
    """``report --episode``: the episode's transcript from every run, for the terminal."""
    from agentgym.eval.report import find_episode
    from agentgym.eval.transcript import render_text, transcript

    for run in runs:
        record = find_episode(run, wanted)
        print(f"### {run.label}: {record.episode_id} ({run.directory})")
        print(render_text(transcript(record, limit=None), color=sys.stdout.isatty()))
    return 0


def format_curve(curve: list[dict[str, float]]) -> str:
    """A training run's curve (:func:`~agentgym.eval.stats.iteration_curve`) as text."""
    rows: list[tuple[str, ...]] = [("iteration", "episodes", "errored", "success", "score")]
    for row in curve:
        counts = (str(int(row[name])) for name in ("iteration", "episodes", "errored"))
        rows.append((*counts, f"{row['success']:.3f}", f"{row['score']:.3f}"))
    return _aligned(rows)


def _compare(args: argparse.Namespace) -> int:
    from agentgym.eval.report import benchmark_mismatch
    from agentgym.eval.stats import compare

    run_a, run_b = _read_run(args.run_a), _read_run(args.run_b)
    warning = benchmark_mismatch([run_a, run_b])
    if warning:
        print(f"agentgym: warning: {warning}", file=sys.stderr)
    result = compare(run_a.records, run_b.records, strata=run_a.strata)
    if not result["shared_episodes"]:
        raise UsageError(f"{args.run_a} and {args.run_b} share no scored episode")
    print(format_comparison(result, run_a.label, run_b.label))
    return 0


def format_comparison(result: dict[str, Any], label_a: str, label_b: str) -> str:
    """A paired comparison (:func:`~agentgym.eval.stats.compare`) of run B against run A:
    the differences with their intervals, then the sentence that says which is better
    (:func:`~agentgym.eval.stats.difference_sentence`)."""
    from agentgym.eval.stats import difference_sentence

    lines = [
        f"{label_b} - {label_a} on {result['shared_episodes']} shared episodes of "
        f"{result['tasks']} tasks (mean of {result.get('strata', 'env')} means; 95% intervals "
        f"resample tasks within each {result.get('strata', 'env')}):",
        "  success "
        + points_interval(result["success_difference"], result["success_difference_ci"]),
        "  reward  " + _signed_score(result["reward_difference"], result["reward_difference_ci"]),
    ]
    if result["only_in_a"] or result["only_in_b"]:
        lines.append(
            f"  (not paired: {result['only_in_a']} only in A, {result['only_in_b']} only in B)"
        )
    lines.append(difference_sentence(result, label_a, label_b))
    return "\n".join(lines)


def _signed_score(value: float, interval: Sequence[float]) -> str:
    """A difference of mean rewards, signed: ``+0.143 [+0.061, +0.224]``."""
    return f"{value:+.3f} [{interval[0]:+.3f}, {interval[1]:+.3f}]"


def format_pairs(runs: Sequence[Any]) -> str:
    """Every pair of runs (:class:`~agentgym.eval.report.Run`), one line each: the sentence
    of their paired comparison, or why they are not paired (different benchmarks)."""
    from agentgym.eval.stats import compare, difference_sentence

    labels = _distinct_labels(runs)
    lines = ["paired comparisons (success, mean of env means of the paired differences):"]
    for (i, a), (j, b) in itertools.combinations(enumerate(runs), 2):
        hash_a, hash_b = (str(run.manifest.get("benchmark_hash", "")) for run in (a, b))
        if not hash_a or hash_a != hash_b:
            why = "they ran different benchmarks" if hash_a and hash_b else "one has no manifest"
            lines.append(
                f"  {labels[i]} and {labels[j]} are not paired: {why} "
                f"({_benchmark_name(a)} {hash_a[:12] or 'no hash'}, {_benchmark_name(b)} "
                f"{hash_b[:12] or 'no hash'}), so their episodes are not the same"
            )
            continue
        lines.append(
            "  "
            + difference_sentence(
                compare(a.records, b.records, strata=a.strata), labels[i], labels[j]
            )
        )
    return "\n".join(lines)


def _distinct_labels(runs: Sequence[Any]) -> list[str]:
    """Each run's label (its agent), with its directory's name where two runs share one."""
    counts = Counter(run.label for run in runs)
    return [
        f"{run.label} ({run.directory.name})" if counts[run.label] > 1 else run.label
        for run in runs
    ]


def _benchmark_name(run: Any) -> str:
    return str((run.manifest.get("benchmark") or {}).get("name", "?"))


def parse_options(pairs: list[str], flag: str = "--agent-option") -> dict[str, Any]:
    """``KEY=VALUE`` strings (of the option ``flag``) as a dict; a VALUE that parses as JSON
    is taken as JSON."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"{flag} {pair!r} is not KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


ALL_ROW = ALL_ENVS
"""The label of a run's headline row: the figure :data:`~agentgym.eval.stats.HEADLINE` names
(:data:`~agentgym.eval.headline.ALL_GROUPS` for a suite with groups)."""


def format_table(runs: list[tuple[str, dict[str, Any]]]) -> str:
    """One row per env and agent, then each agent's headline row (:data:`ALL_ROW`): success
    and reward with their 95% CIs, pass^k, errors, tokens and seconds per scored episode.
    Under the table, the convention's line and, for a run whose pooled figures differ from
    its headline, those labelled (:mod:`agentgym.eval.headline`)."""
    header = (
        "env",
        "agent",
        "success [95% CI]",
        "reward [95% CI]",
        "pass^k",
        "errored",
        "n",
        "tokens/ep",
        "s/ep",
    )
    rows = [header]
    headlines = dict.fromkeys(summary.get("headline", HEADLINE) for _, summary in runs)
    notes = [convention_line(text) for text in headlines]
    for agent, summary in runs:
        groups = [(f"group {name}", stats) for name, stats in summary.get("groups", {}).items()]
        overall = (overall_label(summary), summary["overall"])
        for env_id, stats in [*summary["envs"].items(), *groups, overall]:
            rows.append((env_id, agent, *_table_cells(stats)))
        pooled = pooled_line(summary["overall"])
        if pooled:
            notes.append(f"{agent}: {pooled}")
    return "\n".join([_aligned(rows), *notes])


def _table_cells(stats: dict[str, Any]) -> tuple[str, ...]:
    """A row's cells after its env and agent."""
    hats = sorted(k for k in stats if k.startswith("pass^"))
    scored = max(stats["scored"], 1)
    seconds = stats["seconds_mean"]
    return (
        percent_interval(stats["success"], stats["success_ci"]),
        score_interval(stats["reward"], stats["reward_ci"]),
        f"{hats[-1]}={stats[hats[-1]]:.2f}" if hats else "-",
        str(stats["errored"]),
        str(stats["episodes"]),
        f"{(stats['prompt_tokens'] + stats['completion_tokens']) / scored:.0f}",
        "-" if seconds != seconds else f"{seconds:.1f}",
    )


def _aligned(rows: Sequence[Sequence[str]]) -> str:
    """Rows of cells as text, each column as wide as its widest cell."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)
