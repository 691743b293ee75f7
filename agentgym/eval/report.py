"""``agentgym report``'s HTML page: the tables, the plots, the per-task grid and the errors.

One self-contained file (plots inlined as PNG), so a report can be mailed or attached to a
leaderboard submission. It is built from the run directories alone (manifest and ledger):
the numbers are recomputed by :func:`agentgym.eval.stats.summarize`, never copied from a
run's own ``summary.json``.

* **results**: per env and agent, success and reward with 95% CIs (bootstrap over tasks),
  pass@k / pass^k, errored episodes, tokens and seconds per episode;
* **success by env**: bars with their CIs, agents side by side;
* **per task**: the success rate of every task for every agent (which tasks separate them);
* **costs**: steps, tokens and seconds per episode, per agent;
* **transcripts**: a few episodes per env and agent, step by step (action, reward,
  observation), folded;
* **errored episodes**: which, and why (they are excluded from every rate above).

Runs from different benchmarks (their manifests' hashes differ) are not comparable episode by
episode; the page says so at the top, and ``agentgym report`` and ``agentgym compare`` warn.

Needs the ``report`` extra (pandas, matplotlib).
"""

from __future__ import annotations

import base64
import html
import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.errors import MissingExtraError, UsageError
from agentgym.eval.stats import (
    episode_passed,
    episode_score,
    episode_tokens,
    iteration_curve,
    summarize,
)
from agentgym.ledger import EpisodeRecord, read_episodes

__all__ = ["Run", "benchmark_mismatch", "episodes_frame", "read_run", "write_html"]

TRANSCRIPTS_PER_ENV = 2  # episodes shown per env and agent
SHOWN_CHARS = 2_000  # of one observation or action in a transcript


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


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as error:
        raise MissingExtraError("reports need pandas: pip install 'agentgym[report]'") from error
    return pandas


def episodes_frame(runs: list[Run]) -> Any:
    """One row per episode of every run: the columns a report groups and plots."""
    rows = []
    for run in runs:
        for record in run.records:
            prompt, completion = episode_tokens(record)
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
                    "error": record.error or "",
                }
            )
    return _pandas().DataFrame(rows)


def results_frame(runs: list[Run]) -> Any:
    """Per env (and ALL) and agent: the summary statistics, one row each."""
    rows = []
    for run in runs:
        summary = run.summary
        for env_id, stats in [*summary["envs"].items(), ("ALL", summary["overall"])]:
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
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display on a server
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise MissingExtraError(
            "reports need matplotlib: pip install 'agentgym[report]'"
        ) from error
    episodes = episodes_frame(runs)
    results = results_frame(runs)
    scored = episodes[episodes["status"] != "errored"]
    sections = [
        ("Runs", _runs_table(runs)),
        ("Results", _results_table(results)),
        ("Success by env (95% CI, bootstrap over tasks)", _img(_success_plot(plt, results))),
        ("Per task: success rate", _task_grid(scored)),
        ("Costs per episode", _img(_cost_plot(plt, scored))),
        ("Transcripts", _transcripts(runs)),
        ("Errored episodes (excluded from every rate)", _errors_table(episodes)),
    ]
    curves = {run.label: iteration_curve(run.records) for run in runs}
    if any(curves.values()):
        sections.insert(1, ("Training: success by iteration", _img(_curve_plot(plt, curves))))
    body = "\n".join(f"<h2>{html.escape(title)}</h2>\n{content}" for title, content in sections)
    warning = benchmark_mismatch(runs)
    if warning:
        body = f'<p class="warning">Warning: {html.escape(warning)}</p>\n{body}'

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_PAGE.format(when=time.strftime("%Y-%m-%d %H:%M:%S"), body=body))
    return target


def _curve_plot(plt: Any, curves: dict[str, list[dict[str, float]]]) -> Any:
    figure, axis = plt.subplots(figsize=(7, 3.5))
    for label, curve in curves.items():
        if curve:
            axis.plot([r["iteration"] for r in curve], [r["success"] for r in curve], label=label)
    axis.set_xlabel("iteration")
    axis.set_ylabel("success rate")
    axis.set_ylim(0, 1)
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return figure


def _runs_table(runs: list[Run]) -> str:
    pandas = _pandas()
    frame = pandas.DataFrame(
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
    """A wide table scrolls inside its own box instead of overflowing the page."""
    return f'<div class="table">{table}</div>'


def _results_table(results: Any) -> str:
    frame = results.copy()
    for name in ("success", "reward"):
        frame[name] = [
            "-" if v != v else f"{v:.2f} [{lo:.2f}, {hi:.2f}]"
            for v, lo, hi in zip(
                frame[name], frame[f"{name}_low"], frame[f"{name}_high"], strict=True
            )
        ]
        frame = frame.drop(columns=[f"{name}_low", f"{name}_high"])
    return _scrolling(
        frame.to_html(index=False, border=0, float_format=lambda v: f"{v:.2f}", na_rep="-")
    )


def _task_grid(scored: Any) -> str:
    if scored.empty:
        return "<p>No scored episode.</p>"
    grid = scored.pivot_table(
        index=["env", "task"], columns="agent", values="passed", aggfunc="mean"
    ).astype(float)
    styled = grid.style.format("{:.2f}", na_rep="-").background_gradient(
        cmap="RdYlGn", vmin=0.0, vmax=1.0
    )
    return _scrolling(styled.to_html())


def _errors_table(episodes: Any) -> str:
    errored = episodes[episodes["status"] == "errored"]
    if errored.empty:
        return "<p>None.</p>"
    return _scrolling(errored[["agent", "env", "episode", "error"]].to_html(index=False, border=0))


def _transcripts(runs: list[Run]) -> str:
    """The first few scored episodes of every env and agent, folded, step by step."""
    parts = []
    for run in runs:
        shown: dict[str, int] = {}
        for record in run.records:
            env = record.spec.env_id
            if record.status == "errored" or shown.get(env, 0) >= TRANSCRIPTS_PER_ENV:
                continue
            shown[env] = shown.get(env, 0) + 1
            parts.append(_transcript(run.label, record))
    return "\n".join(parts) or "<p>No scored episode.</p>"


def _transcript(label: str, record: EpisodeRecord) -> str:
    def text(value: Any) -> str:
        shown = str(value)
        cut = (
            f"... ({len(shown) - SHOWN_CHARS} more characters)" if len(shown) > SHOWN_CHARS else ""
        )
        return f"<pre>{html.escape(shown[:SHOWN_CHARS] + cut)}</pre>"

    verdict = record.verdict
    outcome = "-" if verdict is None else f"score {verdict.score:g}, passed={verdict.passed}"
    rows = [f"<tr><td>start</td><td></td><td></td><td>{text(record.initial_observation)}</td></tr>"]
    for number, step in enumerate(record.steps, 1):
        rows.append(
            f"<tr><td>{number}</td><td>{text(step.action)}</td><td>{step.reward:g}</td>"
            f"<td>{text(step.observation)}</td></tr>"
        )
    summary = html.escape(
        f"{label} · {record.spec.env_id} · {record.spec.task_id} · {record.status} · {outcome}"
    )
    return (
        f'<details><summary>{summary}</summary><div class="table"><table>'
        f"<tr><th>step</th><th>action</th><th>reward</th><th>observation</th></tr>"
        f"{''.join(rows)}</table></div></details>"
    )


def _success_plot(plt: Any, results: Any) -> Any:
    frame = results[results["env"] != "ALL"]
    envs = list(dict.fromkeys(frame["env"]))
    agents = list(dict.fromkeys(frame["agent"]))
    figure, axes = plt.subplots(figsize=(max(6.0, 1.2 * len(envs) * max(len(agents), 1)), 3.6))
    width = 0.8 / max(len(agents), 1)
    for index, agent in enumerate(agents):
        rows = frame[frame["agent"] == agent].set_index("env").reindex(envs)
        success = rows["success"].fillna(0.0)
        errors = [
            (success - rows["success_low"].fillna(0.0)).clip(lower=0),
            (rows["success_high"].fillna(0.0) - success).clip(lower=0),
        ]
        positions = [i + (index - (len(agents) - 1) / 2) * width for i in range(len(envs))]
        axes.bar(positions, success, width, yerr=errors, capsize=3, label=agent)
    axes.set_xticks(range(len(envs)), [e.split("/")[-1] for e in envs], rotation=20, ha="right")
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("success")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")  # off the bars
    figure.tight_layout()
    return figure


def _cost_plot(plt: Any, scored: Any) -> Any:
    agents = list(dict.fromkeys(scored["agent"])) or ["-"]
    figure, panels = plt.subplots(1, 3, figsize=(12, 3.4))
    for axes, column in zip(panels, ("steps", "tokens", "seconds"), strict=True):
        data = [scored[scored["agent"] == a][column].to_numpy() for a in agents]
        axes.boxplot(data, tick_labels=agents, showfliers=True)
        axes.set_ylabel(f"{column} per episode")
        axes.tick_params(axis="x", labelrotation=15)
    figure.tight_layout()
    return figure


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
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.9em; margin-bottom: 1em; }}
th, td {{ padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: left; }}
th {{ background: #f4f4f4; }}
img {{ max-width: 100%; }}
div.table {{ overflow-x: auto; max-width: 100%; }}
td {{ max-width: 48em; overflow-wrap: anywhere; vertical-align: top; }}
pre {{ white-space: pre-wrap; margin: 0; font-size: 0.85em; }}
details {{ margin: 0.3em 0; }}
p.warning {{ background: #fff3cd; padding: 0.6em; border-left: 4px solid #e0a800; }}
</style></head>
<body><h1>agentgym report</h1><p>written {when}</p>
{body}
</body></html>
"""
