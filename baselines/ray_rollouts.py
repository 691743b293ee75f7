"""Rollout workers on Ray: the same episodes, spread over processes and machines.

``--rollout-workers N`` starts ``N`` Ray actors, each holding its own copy of the policy and
an ``hf`` backend (:class:`~agentgym.baselines.rollouts.LocalRollouts`). Each iteration the
trainer puts the current weights in Ray's object store once, every worker loads them and
plays its share of the groups (whole groups, so a group's episodes batch together), and the
records come back to the trainer, which learns from them as from local ones.

**A worker that dies** (killed, out of memory, its machine gone) loses only its share of
that iteration: those episodes are dropped and counted (``rollout/dropped_episodes``), the
worker is replaced, and training goes on with what the others played.

Ray connects to ``--ray ADDRESS``, else to ``RAY_ADDRESS`` when it is set (a cluster), else
starts a local one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from agentgym.agents import PromptConfig
from agentgym.baselines.rollouts import Rollouts
from agentgym.errors import MissingExtraError
from agentgym.eval import EpisodePlan

__all__ = ["RayRollouts"]


class _Worker:
    """One rollout process: a policy copy and a local rollout source."""

    def __init__(
        self, model: str, lora_rank: int, seed: int, prompt: dict[str, Any], options: dict[str, Any]
    ) -> None:
        from agentgym.baselines.policy import load_policy
        from agentgym.baselines.rollouts import LocalRollouts

        self.policy = load_policy(model, device="cpu", seed=seed, lora_rank=lora_rank)
        self.rollouts = LocalRollouts(self.policy, PromptConfig(**prompt), **options)

    def pid(self) -> int:
        return os.getpid()

    def collect(
        self, weights: dict[str, Any], plans: list[EpisodePlan], groups: list[str]
    ) -> Rollouts:
        self.policy.model.load_state_dict(weights)
        self.rollouts.weights_changed()
        return self.rollouts.collect(plans, groups)


class RayRollouts:
    """``args.rollout_workers`` Ray actors playing each iteration's groups."""

    def __init__(self, args: Any, policy: Any, prompt: PromptConfig) -> None:
        try:
            import ray
        except ImportError as error:
            raise MissingExtraError(
                "--rollout-workers needs ray: pip install 'agentgym[train]'"
            ) from error
        self._ray = ray
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            ray.init(
                address=args.ray or os.environ.get("RAY_ADDRESS"),
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        self._policy = policy
        self._remote = ray.remote(num_cpus=0)(_Worker)
        self._spec = (
            args.model,
            args.lora_rank,
            args.seed,
            {"format_hint": prompt.format_hint, "history_window": prompt.history_window},
            {
                "sampling": args.sampling(),
                "num_envs": args.num_envs,
                "env_servers": args.env_server,
            },
        )
        self.workers = [self._start() for _ in range(args.rollout_workers)]
        self.crashed = 0  # workers lost (and replaced) so far
        self.progress: Callable[[str, int, int], None] | None = None  # told per worker share

    def _start(self) -> Any:
        return self._remote.remote(*self._spec)

    def worker_pids(self) -> list[int]:
        """The process ids of the live workers (for tests and fault injection)."""
        return self._ray.get([w.pid.remote() for w in self.workers])

    def collect(self, plans: list[EpisodePlan], groups: list[str]) -> Rollouts:
        """Play ``plans`` on the workers, whole groups each; a dead worker's share is dropped."""
        ray = self._ray
        started = time.monotonic()
        weights = ray.put({k: v.detach().cpu() for k, v in self._policy.model.state_dict().items()})
        order = list(dict.fromkeys(groups))
        shares: list[tuple[list[EpisodePlan], list[str]]] = [([], []) for _ in self.workers]
        for plan, group in zip(plans, groups, strict=True):
            share = shares[order.index(group) % len(self.workers)]
            share[0].append(plan)
            share[1].append(group)
        pending = {
            worker.collect.remote(weights, share_plans, share_groups): index
            for index, (worker, (share_plans, share_groups)) in enumerate(
                zip(self.workers, shares, strict=True)
            )
            if share_plans
        }
        result = Rollouts([], [])
        for future, index in pending.items():
            try:
                result = result.merge(ray.get(future))
                if self.progress is not None:
                    self.progress("episodes", len(result.records) + result.dropped, len(plans))
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as error:
                result.dropped += len(shares[index][0])
                result.errors.append(f"rollout worker {index} died: {type(error).__name__}")
                self.crashed += 1
                self.workers[index] = self._start()
        result.seconds = time.monotonic() - started
        return result

    def weights_changed(self) -> None:
        """Nothing to do: each collection sends the current weights."""

    def close(self) -> None:
        for worker in self.workers:
            self._ray.kill(worker)
        self.workers = []
        if self._owns_ray:
            self._ray.shutdown()
