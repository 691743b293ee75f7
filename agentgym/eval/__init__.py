"""The evaluator: run a benchmark with an agent, record every episode, report honest numbers.

    from agentgym.eval import evaluate
    from agentgym.eval.plan import load_benchmark

    result = evaluate(load_benchmark("quickstart"), "oracle", "runs/oracle", num_envs=8)
    print(result.summary["overall"]["success"], result.summary["overall"]["success_ci"])

See ``docs/evaluation.md``: agents, the engine, the run directory, statistics, resume.
"""

from agentgym.eval.engine import EngineLimits, run_episodes
from agentgym.eval.run import RunResult, evaluate, evaluate_async
from agentgym.eval.stats import bootstrap_ci, pass_at_k, pass_hat_k, summarize

__all__ = [
    "EngineLimits",
    "RunResult",
    "bootstrap_ci",
    "evaluate",
    "evaluate_async",
    "pass_at_k",
    "pass_hat_k",
    "run_episodes",
    "summarize",
]
