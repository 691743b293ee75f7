"""``agentgym report``'s HTML page: which run is better and by how much, and what happened.

One self-contained file (plots inlined as PNG), so a report can be mailed or attached to a
leaderboard submission. It is built from the run directories alone (manifest and ledger):
the numbers are recomputed by :func:`agentgym.eval.stats.summarize`, never copied from a
run's own ``summary.json``.

* **headline**: each run's success as the mean of env means (:data:`~agentgym.eval.stats.
  HEADLINE`, the leaderboard's convention), the pooled figure beside it where it differs;
* **comparison** (two runs or more): for every pair, the sentence of
  :func:`~agentgym.eval.stats.difference_sentence` and the paired differences in success and
  reward with their 95% intervals, overall and per env; pairs that did not score the same
  episodes say on how many they were compared;
* **results**: per env and agent, and an ``ALL`` row (the mean of env means), success and
  reward with 95% intervals, pass@k / pass^k, errored episodes, tokens and seconds;
* **success by env**: bars with their intervals, agents side by side, an ``ALL`` bar last;
* **per task**: the success rate of every task for every agent, tasks in numeric order;
* **costs**: steps, tokens (only where recorded) and seconds per episode, per env;
* **time**: where an episode's seconds went: the agent, the env, or waiting;
* **transcripts**: a few episodes per env, the same tasks for every run, through
  :mod:`agentgym.eval.transcript` (the model's raw text beside the extracted action);
* **errored episodes**: which, and why (they are excluded from every rate above).

Tables never wrap a cell: a wide table scrolls in its own box.

Runs from different benchmarks (their manifests' hashes differ) are not comparable episode by
episode; the page says so at the top, and ``agentgym report`` and ``agentgym compare`` warn.

Needs the ``report`` extra (pandas, matplotlib).
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import itertools
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.errors import MissingExtraError, UsageError
from agentgym.eval import report_plots
from agentgym.eval.headline import percent_interval, points_interval, pooled_line, score_interval
from agentgym.eval.stats import (
    HEADLINE,
    compare,
    difference_sentence,
    episode_passed,
    episode_score,
    episode_tokens,
    iteration_curve,
    summarize,
)
from agentgym.eval.transcript import TRANSCRIPT_CSS, render_html, transcript
from agentgym.ledger import EpisodeRecord, read_episodes

__all__ = [
    "ALL",
    "Run",
    "benchmark_mismatch",
    "distinct_labels",
    "episodes_frame",
    "find_episode",
    "natural_key",
    "read_run",
    "results_frame",
    "write_html",
]

ALL = "ALL (mean of env means)"
"""The results' overall row: :data:`~agentgym.eval.stats.HEADLINE`'s figure."""
TRANSCRIPTS_PER_ENV = 2  # tasks shown per env, for every run
SHOWN_CHARS = 2_000  # of one text in a transcript
ERROR_CHARS = 300  # of one error in the errored episodes' table


@dataclass
class Run:
    """A run directory, read: its label (the agent), manifest and records."""

    directory: Path
    label: str
    manifest: dict[str, Any]
    records: list[EpisodeRecord]

    @property
    def summary(self) -> dict[str, Any]:
        """Statistics recomputed from the records."""
        return summarize(self.records)


def read_run(run_dir: str | Path) -> Run:
    """Read a run directory (its manifest and episodes)."""
    directory = Path(run_dir)
    episodes = directory / "episodes.jsonl"
    if not episodes.exists():
        raise UsageError(f"{run_dir} is not a run directory (no episodes.jsonl)")
    from agentgym.eval.run import read_manifest

    manifest = read_manifest(directory)
    label = str(manifest.get("agent", directory.name))
    return Run(directory, label, manifest, list(read_episodes(episodes)))


def benchmark_mismatch(runs: list[Run]) -> str | None:
    """A warning when ``runs`` come from different benchmarks (or one has no hash); None when
    they all ran the same suite."""
    hashes = {str(run.manifest.get("benchmark_hash", "")) for run in runs}
    if len(runs) < 2 or (len(hashes) == 1 and "" not in hashes):
        return None
    listed = ", ".join(
        f"{run.label} ({run.manifest.get('benchmark', {}).get('name', '?')} "
        f"{str(run.manifest.get('benchmark_hash', 'no hash'))[:12]})"
        for run in runs
    )
    return (
        f"these runs come from different benchmarks or one has no manifest: {listed}; "
        f"their rates are not measured on the same episodes"
    )


def distinct_labels(runs: list[Run]) -> list[Run]:
    """``runs``, those sharing a label (two runs of one agent) told apart by their directory's
    name, so that tables, plots and pairs name each run once."""
    counts = Counter(run.label for run in runs)
    return [
        dataclasses.replace(run, label=f"{run.label} ({run.directory.name})")
        if counts[run.label] > 1
        else run
        for run in runs
    ]


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key reading the digit runs of ``text`` as numbers: ``test/easy/2`` before
    ``test/easy/10``, ``0, 1, 2, 10`` in that order.

    >>> sorted(["t/10", "t/2", "s/1", "t/1"], key=natural_key)
    ['s/1', 't/1', 't/2', 't/10']
    """
    parts = re.split(r"(\d+)", text)
    return tuple(
        (1, int(part), "") if index % 2 else (0, 0, part) for index, part in enumerate(parts)
    )


def find_episode(run: Run, wanted: str) -> EpisodeRecord:
    """The episode of ``run`` whose id is ``wanted``, or else the first episode of the task
    ``wanted`` (a task id, when one env has it); a :class:`UsageError` naming a few ids when
    neither matches."""
    for record in run.records:
        if record.episode_id == wanted:
            return record
    of_task = [record for record in run.records if record.spec.task_id == wanted]
    envs = sorted({record.spec.env_id for record in of_task})
    if len(envs) == 1:
        return of_task[0]
    if envs:
        raise UsageError(
            f"--episode {wanted!r}: several envs of {run.directory} have that task "
            f"({', '.join(envs)}); give an episode id such as {of_task[0].episode_id!r}"
        )
    some = ", ".join(repr(record.episode_id) for record in run.records[:3])
    raise UsageError(
        f"--episode {wanted!r}: {run.directory} has no such episode or task; its episode ids "
        f"look like {some or '(none: the run is empty)'}"
    )


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as error:
        raise MissingExtraError("reports need pandas: pip install 'agentgym[report]'") from error
    return pandas


def episodes_frame(runs: list[Run]) -> Any:
    """One row per episode of every run: the columns a report groups and plots. ``waiting``
    is the part of the episode's seconds spent in neither the agent nor the env (a free slot,
    a thread, the event loop)."""
    rows = []
    for run in runs:
        for record in run.records:
            prompt, completion = episode_tokens(record)
            agent_seconds = sum(step.agent_seconds for step in record.steps)
            env_seconds = sum(step.env_seconds for step in record.steps)
            rows.append(
                {
                    "agent": run.label,
                    "env": record.spec.env_id,
                    "task": record.spec.task_id,
                    "episode": record.episode_id,
                    "status": record.status,
                    "passed": episode_passed(record) if record.status != "errored" else None,
                    "reward": episode_score(record) if record.status != "errored" else None,
                    "steps": len(record.steps),
                    "tokens": prompt + completion,
                    "seconds": record.seconds,
                    "agent_seconds": agent_seconds,
                    "env_seconds": env_seconds,
                    "waiting": max(record.seconds - agent_seconds - env_seconds, 0.0),
                    "error": record.error or "",
                }
            )
    return _pandas().DataFrame(rows)


def results_frame(runs: list[Run]) -> Any:
    """Per env (and :data:`ALL`) and agent: the summary statistics, one row each."""
    rows = []
    for run in runs:
        summary = run.summary
        for env_id, stats in [*summary["envs"].items(), (ALL, summary["overall"])]:
            passes = {k: v for k, v in stats.items() if k.startswith(("pass@", "pass^"))}
            rows.append(
                {
                    "env": env_id,
                    "agent": run.label,
                    "success": stats["success"],
                    "success_low": stats["success_ci"][0],
                    "success_high": stats["success_ci"][1],
                    "reward": stats["reward"],
                    "reward_low": stats["reward_ci"][0],
                    "reward_high": stats["reward_ci"][1],
                    **passes,
                    "errored": stats["errored"],
                    "episodes": stats["episodes"],
                    "tokens/ep": (stats["prompt_tokens"] + stats["completion_tokens"])
                    / max(stats["scored"], 1),
                    "s/ep": stats["seconds_mean"],
                }
            )
    return _pandas().DataFrame(rows)


def write_html(runs: list[Run], path: str | Path) -> Path:
    """Write the report for ``runs`` to ``path``; the path written."""
    if not runs:
        raise UsageError("a report needs at least one run directory")
    plt = _pyplot()
    runs = distinct_labels(runs)
    episodes = episodes_frame(runs)
    scored = episodes[episodes["status"] != "errored"]
    envs = sorted(set(episodes["env"]), key=natural_key)
    agents = [run.label for run in runs]
    results = results_frame(runs)
    sections = [
        ("Runs", _runs_table(runs)),
        ("Headline", _headline(runs)),
        ("Results", _results_table(results, envs)),
        (
            "Success by env (95% CI, bootstrap over tasks)",
            _img(report_plots.success_plot(plt, results, [*envs, ALL], agents)),
        ),
        ("Per task: success rate", _task_grid(scored, envs)),
        ("Costs per episode, by env", _costs(plt, scored, envs, agents)),
        ("Time per episode: agent, env, waiting", _times(plt, scored, envs, agents)),
        ("Transcripts", _transcripts(runs, envs)),
        ("Errored episodes (excluded from every rate)", _errors_table(episodes)),
    ]
    if len(runs) > 1:
        sections.insert(
            2, ("Comparison (paired, on the episodes both runs scored)", _comparisons(runs))
        )
    curves = {run.label: iteration_curve(run.records) for run in runs}
    if any(curves.values()):
        sections.insert(
            2, ("Training: success by iteration", _img(report_plots.curve_plot(plt, curves)))
        )
    body = "\n".join(
        f'<h2 id="{_anchor(title)}">{html.escape(title)}</h2>\n{content}'
        for title, content in sections
    )
    warning = benchmark_mismatch(runs)
    if warning:
        body = f'<p class="warning">Warning: {html.escape(warning)}</p>\n{body}'
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    page = _PAGE.format(
        when=time.strftime("%Y-%m-%d %H:%M:%S"), body=body, transcript_css=TRANSCRIPT_CSS
    )
    target.write_text(page, encoding="utf-8")
    return target


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display on a server
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise MissingExtraError(
            "reports need matplotlib: pip install 'agentgym[report]'"
        ) from error
    return plt


def _anchor(title: str) -> str:
    return title.split(" ")[0].split(":")[0].lower()


def _runs_table(runs: list[Run]) -> str:
    frame = _pandas().DataFrame(
        [
            {
                "agent": run.label,
                "benchmark": run.manifest.get("benchmark", {}).get("name", "?"),
                "benchmark sha256": str(run.manifest.get("benchmark_hash", "?"))[:12],
                "episodes": len(run.records),
                "directory": str(run.directory),
                "agentgym": run.manifest.get("agentgym_version", "?"),
            }
            for run in runs
        ]
    )
    return _scrolling(frame.to_html(index=False, border=0))


def _scrolling(table: str) -> str:
    """A wide table scrolls inside its own box instead of wrapping or overflowing the page."""
    return f'<div class="table">{table}</div>'


def _signed_score(value: float, interval: list[float]) -> str:
    """A difference of mean rewards: ``+0.143 [+0.061, +0.224]``; ``-`` for nan."""
    if value != value:
        return "-"
    return f"{value:+.3f} [{interval[0]:+.3f}, {interval[1]:+.3f}]"


def _headline(runs: list[Run]) -> str:
    """Each run's headline success, the convention named, the pooled figure where it differs
    (as the terminal prints them: :mod:`agentgym.eval.headline`)."""
    lines = []
    for run in runs:
        overall = run.summary["overall"]
        line = (
            f"<b>{html.escape(run.label)}</b>: success "
            f"{percent_interval(overall['success'], overall['success_ci'])}, reward "
            f"{score_interval(overall['reward'], overall['reward_ci'])} (mean of env means)"
        )
        pooled = pooled_line(overall)
        if pooled is not None:
            line += f"; {html.escape(pooled)}"
        lines.append(f"<li>{line}</li>")
    return f'<p class="convention">{html.escape(HEADLINE)}.</p><ul>{"".join(lines)}</ul>'


def _comparisons(runs: list[Run]) -> str:
    """Every pair of runs: the sentence, then the paired differences overall and per env;
    runs of different benchmarks are not paired (their episodes are not the same ones)."""
    parts = []
    for run_a, run_b in itertools.combinations(runs, 2):
        hashes = [str(run.manifest.get("benchmark_hash", "")) for run in (run_a, run_b)]
        if not hashes[0] or hashes[0] != hashes[1]:
            sentence = (
                f"{run_a.label} and {run_b.label} are not paired: they ran different "
                f"benchmarks ({hashes[0][:12] or 'no hash'}, {hashes[1][:12] or 'no hash'}), "
                f"so their episodes are not the same"
            )
            parts.append(f'<div class="pair"><p class="sentence">{html.escape(sentence)}</p></div>')
            continue
        result = compare(run_a.records, run_b.records)
        sentence = difference_sentence(result, run_a.label, run_b.label)
        rows = [_difference_row(ALL, result)]
        for env in sorted({r.spec.env_id for r in run_a.records}, key=natural_key):
            of_env = compare(
                [r for r in run_a.records if r.spec.env_id == env],
                [r for r in run_b.records if r.spec.env_id == env],
            )
            if of_env["shared_episodes"]:
                rows.append(_difference_row(env, of_env))
        table = _pandas().DataFrame(rows).to_html(index=False, border=0)
        parts.append(
            f'<div class="pair"><p class="sentence">{html.escape(sentence)}</p>'
            f"{_episode_set_note(result, run_a, run_b)}"
            f"<p>{html.escape(run_b.label)} - {html.escape(run_a.label)}:</p>"
            f"{_scrolling(table)}</div>"
        )
    return "\n".join(parts)


def _episode_set_note(result: dict[str, Any], run_a: Run, run_b: Run) -> str:
    """Says so when two runs did not score the same episodes (errored on one side)."""
    if not result["only_in_a"] and not result["only_in_b"]:
        return ""
    return (
        f'<p class="note">Different episode sets: compared on the {result["shared_episodes"]} '
        f"episodes both scored; {result['only_in_a']} scored only by "
        f"{html.escape(run_a.label)}, {result['only_in_b']} only by "
        f"{html.escape(run_b.label)}.</p>"
    )


def _difference_row(env: str, result: dict[str, Any]) -> dict[str, Any]:
    success = result["success_difference"]
    return {
        "env": env,
        "paired episodes": result["shared_episodes"],
        "tasks": result["tasks"],
        "success difference [95% CI]": "-"
        if success != success
        else points_interval(success, result["success_difference_ci"]),
        "reward difference [95% CI]": _signed_score(
            result["reward_difference"], result["reward_difference_ci"]
        ),
    }


def _results_table(results: Any, envs: list[str]) -> str:
    frame = results.copy()
    for name in ("success", "reward"):
        frame[name] = [
            (percent_interval if name == "success" else score_interval)(v, [lo, hi])
            for v, lo, hi in zip(
                frame[name], frame[f"{name}_low"], frame[f"{name}_high"], strict=True
            )
        ]
        frame = frame.drop(columns=[f"{name}_low", f"{name}_high"])
    order = {env: index for index, env in enumerate([*envs, ALL])}
    frame = frame.sort_values("env", key=lambda column: column.map(order), kind="stable")
    table = frame.to_html(index=False, border=0, float_format=lambda v: f"{v:.2f}", na_rep="-")
    return f'<p class="convention">{html.escape(HEADLINE)}.</p>{_scrolling(table)}'


def _task_grid(scored: Any, envs: list[str]) -> str:
    if scored.empty:
        return "<p>No scored episode.</p>"
    grid = scored.pivot_table(
        index=["env", "task"], columns="agent", values="passed", aggfunc="mean"
    ).astype(float)
    rank = {env: index for index, env in enumerate(envs)}
    grid = grid.loc[sorted(grid.index, key=lambda key: (rank[key[0]], natural_key(key[1])))]
    styled = grid.style.format("{:.2f}", na_rep="-").background_gradient(
        cmap="RdYlGn", vmin=0.0, vmax=1.0
    )
    return _scrolling(styled.to_html())


def _costs(plt: Any, scored: Any, envs: list[str], agents: list[str]) -> str:
    if scored.empty:
        return "<p>No scored episode.</p>"
    columns = ["steps", "tokens", "seconds"]
    note = ""
    if not (scored["tokens"] > 0).any():
        columns.remove("tokens")
        note = "<p>No token counts recorded (the agents reported none): no tokens plot.</p>"
    return note + _img(report_plots.cost_plot(plt, scored, columns, envs, agents))


def _times(plt: Any, scored: Any, envs: list[str], agents: list[str]) -> str:
    if scored.empty:
        return "<p>No scored episode.</p>"
    times = scored.groupby(["env", "agent"])[["agent_seconds", "env_seconds", "waiting"]].mean()
    times.columns = ["agent", "env", "waiting"]
    order = [(env, agent) for env in envs for agent in agents if (env, agent) in times.index]
    return (
        "<p>Mean seconds per episode: in the agent's calls, in the env's steps, and the rest "
        "(waiting for a free slot, a thread or the event loop; env make, reset and close).</p>"
        + _img(report_plots.time_plot(plt, times.loc[order]))
    )


def _errors_table(episodes: Any) -> str:
    errored = episodes[episodes["status"] == "errored"][["agent", "env", "episode", "error"]]
    if errored.empty:
        return "<p>None.</p>"
    errored = errored.assign(
        error=[e if len(e) <= ERROR_CHARS else e[:ERROR_CHARS] + " …" for e in errored["error"]]
    )
    return _scrolling(errored.to_html(index=False, border=0))


def _transcripts(runs: list[Run], envs: list[str]) -> str:
    """Per env, the first few tasks any run scored (numeric order), each shown for every run
    that scored it, folded: a reader compares the runs on the same task."""
    parts = []
    for env in envs:
        tasks = sorted(
            {
                r.spec.task_id
                for run in runs
                for r in run.records
                if r.spec.env_id == env and r.status != "errored"
            },
            key=natural_key,
        )[:TRANSCRIPTS_PER_ENV]
        for task, run in itertools.product(tasks, runs):
            record = next(
                (
                    r
                    for r in run.records
                    if (r.spec.env_id, r.spec.task_id) == (env, task) and r.status != "errored"
                ),
                None,
            )
            if record is not None:
                parts.append(_transcript(run.label, record))
    return "\n".join(parts) or "<p>No scored episode.</p>"


def _transcript(label: str, record: EpisodeRecord) -> str:
    verdict = record.verdict
    outcome = "no verdict" if verdict is None else ("passed" if verdict.passed else "not passed")
    summary = html.escape(
        f"{label} · {record.spec.env_id} · {record.spec.task_id} · "
        f"{len(record.steps)} step{'' if len(record.steps) == 1 else 's'} · {outcome}"
    )
    items = render_html(transcript(record, limit=SHOWN_CHARS))
    return f'<details class="episode"><summary>{summary}</summary>{items}</details>'


def _img(figure: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")  # legends outside fit
    plt.close(figure)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="plot" src="data:image/png;base64,{data}">'


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>agentgym report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }}
table {{ border-collapse: collapse; font-size: 0.9em; margin-bottom: 1em; }}
th, td {{ padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: left;
  white-space: nowrap; vertical-align: top; }}
th {{ background: #f4f4f4; }}
img {{ max-width: 100%; }}
div.table {{ overflow-x: auto; max-width: 100%; }}
details.episode {{ margin: 0.3em 0; border: 1px solid #e4e4e4; border-radius: 4px;
  padding: 0.2em 0.6em; }}
details.episode summary {{ cursor: pointer; }}
p.warning {{ background: #fff3cd; padding: 0.6em; border-left: 4px solid #e0a800; }}
p.convention, p.note {{ color: #555; font-size: 0.9em; }}
p.sentence {{ font-weight: bold; margin-bottom: 0.2em; }}
{transcript_css}
</style></head>
<body><h1>agentgym report</h1><p>written {when}</p>
{body}
</body></html>
"""
