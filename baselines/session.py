"""A training run's moving parts: the policy, its optimizer and critic, the tasks and the
rollout source, opened (and restored on ``--resume``) by :func:`setup` and held by
:class:`Session` through every iteration of every trainer's loop.

Apart from :mod:`~agentgym.baselines.common` (the arguments, the run directory, the small loop
steps) because it stands above the update and rollout modules that ``common`` serves: it
holds their objects, they use ``common``'s steps.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentgym.agents import PromptConfig
from agentgym.baselines.common import (
    Progress,
    Run,
    TrainArgs,
    rollout_metrics,
    signal_warning,
)
from agentgym.baselines.update import ValueHead
from agentgym.errors import UsageError

if TYPE_CHECKING:
    import torch

    from agentgym.baselines.policy import Policy
    from agentgym.baselines.rollouts import Rollouts
    from agentgym.eval import BenchmarkEnv, EpisodePlan

__all__ = ["RolloutSource", "Session", "check_args", "make_rollouts", "setup"]


class RolloutSource(Protocol):
    """Where a trainer's episodes come from (:mod:`~agentgym.baselines.rollouts`: in process,
    a policy server, vLLM or Ray workers): it plays a plan and hears of new weights. It
    reports finished episodes to ``progress`` as they come, when set."""

    progress: Callable[[str, int, int], None] | None

    def collect(self, plans: list[EpisodePlan], groups: list[str]) -> Rollouts: ...

    def weights_changed(self) -> None: ...


@dataclasses.dataclass
class Session:
    """What every trainer's loop holds: the run directory, the policy and its optimizer
    (restored on ``--resume``), the tasks, the rollout source, and a critic if asked for."""

    args: TrainArgs
    run: Run
    policy: Policy
    optimizer: torch.optim.Optimizer
    start: int  # the first iteration to play (after a resumed checkpoint's)
    tasks: BenchmarkEnv
    task_ids: list[str]
    rollouts: RolloutSource
    critic: ValueHead | None = None
    progress: Progress = dataclasses.field(default_factory=lambda: Progress("train"))
    ahead: Future[Rollouts] | None = None  # --overlap: the next iteration's collection
    ahead_thread: ThreadPoolExecutor | None = None

    def plan(self, iteration: int) -> tuple[list[EpisodePlan], list[str]]:
        """Iteration ``iteration``'s episodes and the group of each (deterministic)."""
        from agentgym.baselines.rollouts import plan_groups

        return plan_groups(
            self.tasks,
            self.task_ids,
            iteration=iteration,
            groups=self.args.groups,
            group_size=self.args.group_size,
            seed=self.args.seed,
        )

    def collect(self, iteration: int) -> Rollouts:
        """Iteration ``iteration``'s episodes (the rollout source reports its progress to
        :attr:`progress`).

        Without ``--overlap`` they are played now, by the current policy. With it, they are
        the collection started during the last iteration's update, by the policy before that
        update (``staleness`` 1; the first iteration of a run or of a resume plays its own,
        ``staleness`` 0), and the next iteration's collection starts now, by the current
        policy, to run while this iteration's update does. ``waited`` is how long the
        trainer sat idle for them.
        """
        self.progress.start(iteration)
        if not self.args.overlap:
            return self.rollouts.collect(*self.plan(iteration))
        started = time.monotonic()
        if self.ahead is None:
            rollouts = self.rollouts.collect(*self.plan(iteration))
        else:
            rollouts, self.ahead = self.ahead.result(), None
            rollouts.staleness = 1
        rollouts.waited = time.monotonic() - started
        if iteration + 1 < self.args.iterations:
            self.ahead = self._start_ahead(iteration + 1)
        return rollouts

    def _start_ahead(self, iteration: int) -> Future[Rollouts]:
        """Give the rollout source the current weights, then play ``iteration``'s episodes
        in a thread. The source samples from its own copy of the weights (``--overlap``
        makes the in-process source keep one), so the update that runs meanwhile changes
        only the trainer's, and every episode of the collection comes from one policy."""
        self.rollouts.weights_changed()
        if self.ahead_thread is None:
            self.ahead_thread = ThreadPoolExecutor(1, thread_name_prefix="rollouts-ahead")
        progress = self.progress

        def report(what: str, done: int, total: int) -> None:
            progress(f"next iteration's {what}", done, total)

        self.rollouts.progress = report
        return self.ahead_thread.submit(self.rollouts.collect, *self.plan(iteration))

    def finish(
        self, iteration: int, began: float, rollouts: Rollouts, metrics: dict[str, float]
    ) -> None:
        """After the update: tell the rollout source (with ``--overlap``, the next
        :meth:`collect` does, once the collection in flight has ended), log the row,
        checkpoint when due."""
        if not self.args.overlap:
            self.rollouts.weights_changed()
        if rollouts.errors:  # counted in rollout/dropped_episodes; said here so it can be fixed
            print(
                f"[{self.run.algorithm}] iter {iteration}: dropped {rollouts.dropped} "
                f"episode(s); first: {rollouts.errors[0][:500]}",
                flush=True,
            )
        warning = signal_warning(rollouts, metrics)
        if warning is not None:
            print(f"[{self.run.algorithm}] iter {iteration}: warning: {warning}", flush=True)
        self.run.record([*rollouts.records, *rollouts.errored])
        row = {"iteration": iteration, **rollout_metrics(rollouts), **metrics}
        row["time/iteration_seconds"] = time.monotonic() - began
        waited = rollouts.seconds if rollouts.waited is None else rollouts.waited
        row["time/rollout_share"] = waited / row["time/iteration_seconds"]
        if self.args.overlap:
            row["rollout/staleness"] = rollouts.staleness
        self.run.log(row)
        last = iteration == self.args.iterations - 1
        if last or (iteration + 1) % self.args.checkpoint_every == 0:
            extra = {"critic": self.critic.state_dict()} if self.critic is not None else {}
            self.run.checkpoint(iteration, self.policy, self.optimizer, **extra)
        if last:
            self.close()

    def close(self) -> None:
        if self.ahead_thread is not None:  # a collection still in flight ends first
            self.ahead_thread.shutdown(wait=True, cancel_futures=True)
            self.ahead_thread = self.ahead = None
        self.run.close()
        close = getattr(self.rollouts, "close", None)
        if close is not None:
            close()


def env_kwargs(args: TrainArgs) -> dict[str, Any]:
    """``--env-kwargs`` read: the env's keyword arguments (none when it is not given)."""
    from agentgym.eval import parse_env_kwargs

    return parse_env_kwargs(args.env_kwargs)


def check_args(args: TrainArgs) -> None:
    """Refuse arguments that could only fail later, naming the value."""
    from agentgym.baselines.losses import AGGREGATIONS

    env_kwargs(args)  # a bad --env-kwargs fails before the model loads
    counts = ("iterations", "groups", "group_size", "max_tokens", "minibatch_size")
    for name in (*counts, "update_epochs", "num_envs", "max_steps", "checkpoint_every"):
        value = getattr(args, name)
        if not isinstance(value, int) or value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be a positive int, got {value!r}")
    aggregation = getattr(args, "aggregation", None)
    if aggregation is not None and aggregation not in AGGREGATIONS:
        raise UsageError(f"--aggregation {aggregation!r}: use one of {list(AGGREGATIONS)}")
    if args.ray is not None and args.rollout_workers < 1:
        raise UsageError(
            f"--ray {args.ray}: the rollouts run on Ray with --rollout-workers N (N >= 1)"
        )
    if args.rollout_endpoint and args.rollout_workers > 0:
        raise UsageError(
            "--rollout-endpoint and --rollout-workers both choose where rollouts are sampled; "
            "give one"
        )
    if args.rollout_backend not in ("hf", "vllm"):
        raise UsageError(f"--rollout-backend {args.rollout_backend!r}: use 'hf' or 'vllm'")
    if args.overlap and args.rollout_workers > 0:
        raise UsageError(
            "--overlap with --rollout-workers is not built: the Ray workers take the "
            "trainer's weights as their collection starts, while the overlapped update is "
            "changing them; overlap in process or with --rollout-endpoint"
        )
    if args.overlap and args.rollout_backend == "vllm":
        raise UsageError(
            "--overlap with --rollout-backend vllm is not built: vLLM's engine runs on this "
            "process's one event loop, never yet from a collection thread (and no session has "
            "had vLLM on a GPU to check it); overlap with the hf backend or --rollout-endpoint"
        )
    if args.rollout_backend == "vllm":
        from agentgym.backends import require_vllm

        if args.rollout_endpoint or args.rollout_workers > 0:
            raise UsageError(
                "--rollout-backend vllm samples in this process; it cannot be combined with "
                "--rollout-endpoint or --rollout-workers"
            )
        if not 0 < args.vllm_gpu_memory < 1:
            raise UsageError(
                f"--vllm-gpu-memory must be a share between 0 and 1, got {args.vllm_gpu_memory!r}"
            )
        require_vllm()
    clip_ratio_c = getattr(args, "clip_ratio_c", None)
    if clip_ratio_c is not None and clip_ratio_c <= 1:
        raise UsageError(
            f"--clip-ratio-c must be > 1 (dual-clip PPO; none: off), got {clip_ratio_c!r}"
        )
    if args.temperature <= 0:
        raise UsageError(
            f"--temperature must be > 0 for policy-gradient rollouts, got {args.temperature!r}"
        )


def setup(args: TrainArgs, algorithm: str, *, critic: bool = False) -> Session:
    """Open the run, load the policy (and a zero-initialized critic), restore a checkpoint
    on ``--resume``, resolve the tasks and start the rollout source."""
    import torch

    from agentgym.baselines.policy import load_policy
    from agentgym.eval import BenchmarkEnv

    check_args(args)
    run = Run(args, algorithm)
    progress = Progress(algorithm)
    torch.manual_seed(args.seed)
    policy = load_policy(args.model, device=args.device, seed=args.seed, lora_rank=args.lora_rank)
    head = None
    parameters = policy.trainable()
    if critic:
        head = ValueHead(int(policy.model.config.hidden_size)).to(policy.device)
        parameters = parameters + list(head.parameters())
    optimizer = torch.optim.AdamW(parameters, lr=args.learning_rate)
    start = 0
    if args.resume:
        try:
            start, state = run.restore(policy, optimizer)
            if start >= args.iterations:
                raise UsageError(
                    f"--resume: the run in {run.dir} has done {start} iterations already; "
                    f"ask for more with --iterations"
                )
        except UsageError:
            run.close()
            raise
        if head is not None:
            head.load_state_dict(state["critic"])
    tasks = BenchmarkEnv(
        args.env_id, args.split, args.difficulty, args.tasks, args.max_steps, env_kwargs(args)
    )
    task_ids = tasks.task_ids()
    if not task_ids:
        raise UsageError(
            f"{args.env_id} has no {args.split!r} tasks at difficulty {args.difficulty!r}"
        )
    source = make_rollouts(args, policy)
    source.progress = progress
    return Session(args, run, policy, optimizer, start, tasks, task_ids, source, head, progress)


def make_rollouts(args: Any, policy: Any) -> Any:
    """The rollout source ``args`` ask for: this process (the ``hf`` backend or vLLM), a
    server, or Ray workers (imported only when asked for: Ray is an optional extra)."""
    from agentgym.baselines.rollouts import EndpointRollouts, LocalRollouts, VLLMRollouts

    prompt = PromptConfig(format_hint=args.format_hint, history_window=args.history_window)
    if args.rollout_endpoint:
        return EndpointRollouts(
            args.rollout_endpoint,
            policy,
            prompt,
            sync_dir=Path(args.output_dir) / "served-policy",
            sampling=args.sampling(),
            num_envs=args.num_envs,
            env_servers=args.env_server,
        )
    if args.rollout_workers > 0:
        from agentgym.baselines.ray_rollouts import RayRollouts

        return RayRollouts(args, policy, prompt)
    if args.rollout_backend == "vllm":
        return VLLMRollouts(
            policy,
            prompt,
            sync_dir=Path(args.output_dir) / "served-policy",
            engine_options={"gpu_memory_utilization": args.vllm_gpu_memory},
            sampling=args.sampling(),
            num_envs=args.num_envs,
            env_servers=args.env_server,
        )
    return LocalRollouts(
        policy, prompt, sampling=args.sampling(), num_envs=args.num_envs,
        env_servers=args.env_server, snapshot=getattr(args, "overlap", False),
    )  # fmt: skip
