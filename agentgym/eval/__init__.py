"""The evaluator: run a benchmark with an agent, record every episode, report honest numbers.

    from agentgym.eval import evaluate, load_benchmark

    result = evaluate(load_benchmark("quickstart"), "oracle", "runs/oracle", num_envs=8)
    print(result.summary["overall"]["success"], result.summary["overall"]["success_ci"])

This package's public face: callers outside ``agentgym.eval`` (the leaderboard, the baselines,
the README) import from here, not from its submodules, so the modules can move without breaking
them. The face covers the four jobs: reading a benchmark (``load_benchmark``, ``Benchmark``,
``BenchmarkEnv``, ``EpisodePlan``, ``episode_seed``, ``parse_env_kwargs``), running episodes
(``evaluate``, ``run_episodes``, ``plan_env``, ``EngineLimits``, ``EnvServers``), reading a run back
(``read_manifest``, ``read_run``, ``write_html``, an episode's transcript: ``episode_transcript``,
``render_transcript``) and the statistics (``summarize``, ``bootstrap_ci``, ...), with
the headline as every terminal prints it (``percent_interval``, ``pooled_line``, ...).

See ``docs/evaluation.md``: agents, the engine, the run directory, statistics, resume.
"""

from agentgym.eval.engine import EngineLimits, plan_env, run_episodes
from agentgym.eval.headline import (
    convention_line,
    percent_interval,
    points_interval,
    pooled_line,
    score_interval,
)
from agentgym.eval.plan import (
    Benchmark,
    BenchmarkEnv,
    EpisodePlan,
    episode_seed,
    list_benchmarks,
    load_benchmark,
    parse_env_kwargs,
    strata_of,
)
from agentgym.eval.report import Run, read_run, write_html
from agentgym.eval.run import RunResult, evaluate, evaluate_async, read_manifest
from agentgym.eval.servers import EnvServers
from agentgym.eval.stats import (
    BOOTSTRAP_SAMPLES,
    CONFIDENCE,
    HEADLINE,
    bootstrap_ci,
    compare,
    episode_passed,
    episode_score,
    headline_of,
    iteration_curve,
    pass_at_k,
    pass_hat_k,
    rank_by_intervals,
    stratified_bootstrap_ci,
    stratified_bootstrap_rows,
    summarize,
)
from agentgym.eval.transcript import TRANSCRIPT_CSS
from agentgym.eval.transcript import Outcome as TranscriptOutcome
from agentgym.eval.transcript import render_html as render_transcript
from agentgym.eval.transcript import transcript as episode_transcript

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "CONFIDENCE",
    "HEADLINE",
    "TRANSCRIPT_CSS",
    "Benchmark",
    "BenchmarkEnv",
    "EngineLimits",
    "EnvServers",
    "EpisodePlan",
    "Run",
    "RunResult",
    "TranscriptOutcome",
    "bootstrap_ci",
    "compare",
    "convention_line",
    "episode_passed",
    "episode_score",
    "episode_seed",
    "episode_transcript",
    "evaluate",
    "evaluate_async",
    "headline_of",
    "iteration_curve",
    "list_benchmarks",
    "load_benchmark",
    "parse_env_kwargs",
    "pass_at_k",
    "pass_hat_k",
    "percent_interval",
    "plan_env",
    "points_interval",
    "pooled_line",
    "rank_by_intervals",
    "read_manifest",
    "read_run",
    "render_transcript",
    "run_episodes",
    "score_interval",
    "strata_of",
    "stratified_bootstrap_ci",
    "stratified_bootstrap_rows",
    "summarize",
    "write_html",
]
