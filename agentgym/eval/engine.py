"""The episode engine: many episodes at once, no per-turn barrier, failures kept apart.

Each episode is one asyncio task. Its blocking env calls (make, reset, step, close) run in a
thread pool; its agent's ``act`` is awaited, so while one episode waits on the model or on a
slow env step, every other episode moves on. There is no lock-step "all envs step, then the
model answers for all": a batching model backend gathers whatever requests are in flight.

Failures are sorted, never scored: an exception from the env or the agent, or a step or
episode over its timeout, is an **infrastructure** failure. The episode is retried up to
``retries`` times from the start and then recorded with ``status="errored"`` and the error;
statistics exclude it and count it. A :class:`~agentgym.errors.UsageError` (the caller's bug,
e.g. an agent spec that cannot work) stops the run at once instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import agentgym
from agentgym.agents import Agent, AgentFactory, AgentReply, EpisodeContext
from agentgym.benchmarks import EpisodePlan
from agentgym.errors import UsageError
from agentgym.eval.threads import DaemonThreadPool
from agentgym.ledger import EpisodeRecord, EpisodeSpec, StepRecord

__all__ = ["EngineLimits", "run_episodes"]

# info keys kept out of step records: the instructions are in the first step's context only.
DROPPED_INFO_KEYS = ("instructions",)


@dataclass(frozen=True)
class EngineLimits:
    """How long things may take and how often an errored episode is retried."""

    step_timeout: float | None = 300.0
    episode_timeout: float | None = 3600.0
    retries: int = 2


class EpisodeFailed(Exception):
    """An infrastructure failure inside one episode (carried to the retry logic)."""


async def run_episodes(
    plans: list[EpisodePlan],
    agent_factory: AgentFactory,
    agent_name: str,
    *,
    num_envs: int = 8,
    limits: EngineLimits | None = None,
    sampling: dict[str, Any] | None = None,
    on_record: Callable[[EpisodeRecord, EpisodePlan], Awaitable[None] | None] | None = None,
    make_env: Callable[[EpisodePlan], Any] | None = None,
) -> list[EpisodeRecord]:
    """Play every planned episode, ``num_envs`` at a time; records come back in plan order.

    ``on_record(record, plan)`` is called as each episode finishes (in completion order): the
    run directory appends it to the ledger there, so a crash loses only unfinished episodes.
    ``make_env(plan)`` builds the env (default: ``agentgym.make`` with the plan's kwargs).
    """
    if not isinstance(num_envs, int) or num_envs < 1:
        raise UsageError(f"num_envs must be a positive int, got {num_envs!r}")
    limits = limits or EngineLimits()
    build = make_env or _default_env
    # Threads for env calls: one per concurrent episode up to 64 (more only adds contention
    # for the GIL), plus spares so that a hung env step (its thread cannot be killed) does not
    # starve the rest of the run.
    pool = DaemonThreadPool(max_workers=min(num_envs, 64) + 8)
    gate = asyncio.Semaphore(num_envs)
    records: dict[int, EpisodeRecord] = {}

    async def one(plan: EpisodePlan) -> None:
        async with gate:
            record = await _with_retries(
                plan, agent_factory, agent_name, build, pool, limits, dict(sampling or {})
            )
        records[plan.index] = record
        if on_record is not None:
            maybe = on_record(record, plan)
            if asyncio.iscoroutine(maybe):
                await maybe

    try:
        tasks = [asyncio.create_task(one(plan)) for plan in plans]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return [records[plan.index] for plan in plans]


def _default_env(plan: EpisodePlan) -> Any:
    kwargs = dict(plan.env_kwargs)
    if plan.max_steps is not None:
        kwargs["max_episode_steps"] = plan.max_steps
    return agentgym.make(plan.env_id, **kwargs)


async def _with_retries(
    plan: EpisodePlan,
    agent_factory: AgentFactory,
    agent_name: str,
    build: Callable[[EpisodePlan], Any],
    pool: concurrent.futures.Executor,
    limits: EngineLimits,
    sampling: dict[str, Any],
) -> EpisodeRecord:
    errors: list[str] = []
    started_at = time.time()
    started = time.monotonic()
    for _attempt in range(limits.retries + 1):
        try:
            async with asyncio.timeout(limits.episode_timeout):
                record = await _play(plan, agent_factory, agent_name, build, pool, limits, sampling)
            record.started_at, record.seconds = started_at, time.monotonic() - started
            return record
        except UsageError:
            raise
        except EpisodeFailed as failure:
            errors.append(str(failure))
        except TimeoutError:
            errors.append(f"the episode ran over its timeout of {limits.episode_timeout} s")
    return EpisodeRecord(
        spec=_spec(plan, agent_name, sampling),
        initial_observation=None,
        status="errored",
        error=f"{len(errors)} attempt(s) failed; last: {errors[-1]}",
        episode_id=plan.episode_id,
        started_at=started_at,
        seconds=time.monotonic() - started,
    )


def _spec(plan: EpisodePlan, agent_name: str, sampling: dict[str, Any]) -> EpisodeSpec:
    return EpisodeSpec(
        env_id=plan.env_id,
        task_id=plan.task_id,
        seed=plan.seed,
        agent=agent_name,
        split=plan.split,
        sampling=sampling,
        env_kwargs=dict(plan.env_kwargs),
    )


async def _play(
    plan: EpisodePlan,
    agent_factory: AgentFactory,
    agent_name: str,
    build: Callable[[EpisodePlan], Any],
    pool: concurrent.futures.Executor,
    limits: EngineLimits,
    sampling: dict[str, Any],
) -> EpisodeRecord:
    loop = asyncio.get_running_loop()

    async def in_thread(what: str, call: Callable[[], Any]) -> Any:
        try:
            async with asyncio.timeout(limits.step_timeout):
                return await loop.run_in_executor(pool, call)
        except TimeoutError as error:
            raise EpisodeFailed(
                f"env {what} ran over the step timeout of {limits.step_timeout} s"
            ) from error
        except UsageError:
            raise
        except Exception as error:
            raise EpisodeFailed(f"env {what} raised {_describe(error)}") from error

    env = await in_thread("make", lambda: build(plan))
    agent: Agent | None = None
    try:
        observation, info = await in_thread(
            "reset", lambda: env.reset(seed=plan.seed, options={"task_id": plan.task_id})
        )
        record = EpisodeRecord(
            spec=_spec(plan, agent_name, sampling),
            initial_observation=observation,
            episode_id=plan.episode_id,
        )
        agent = agent_factory()
        agent.reset(
            EpisodeContext(
                env_id=plan.env_id,
                task_id=plan.task_id,
                seed=plan.seed,
                instructions=str(info.get("instructions", "")),
                info=info,
                env=env,
                sampling=sampling,
            )
        )
        while True:
            asked = time.monotonic()
            try:
                async with asyncio.timeout(limits.step_timeout):
                    reply = await agent.act(observation, info)
            except TimeoutError as error:
                raise EpisodeFailed(
                    f"the agent took over the step timeout of {limits.step_timeout} s"
                ) from error
            except UsageError:
                raise
            except Exception as error:
                raise EpisodeFailed(f"the agent raised {_describe(error)}") from error
            agent_seconds = time.monotonic() - asked
            reply = reply if isinstance(reply, AgentReply) else AgentReply(action=reply)
            stepped = time.monotonic()
            observation, reward, terminated, truncated, info = await in_thread(
                "step", lambda action=reply.action: env.step(action)
            )
            # Values are kept as the env gave them; the record turns them into JSON when it is
            # written (converting here as well would do the work twice).
            record.steps.append(
                StepRecord(
                    action=reply.action,
                    observation=observation,
                    reward=float(reward),
                    terminated=bool(terminated),
                    truncated=bool(truncated),
                    info=_step_info(info, reply),
                    env_seconds=time.monotonic() - stepped,
                    agent_seconds=agent_seconds,
                    tokens=reply.tokens,
                )
            )
            if terminated or truncated:
                break
        record.verdict = info.get("verdict")
        record.status = "ok" if terminated else "truncated"
        return record
    finally:
        if agent is not None:
            agent.close()
        # Closing may hang on a broken env: it runs in the pool and is not waited for long.
        closing = loop.run_in_executor(pool, env.close)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(closing), 10.0)


def _step_info(info: dict[str, Any], reply: AgentReply) -> dict[str, Any]:
    kept = {k: v for k, v in info.items() if k not in DROPPED_INFO_KEYS}
    if reply.text is not None:
        kept["agent_text"] = reply.text
    if reply.usage:
        kept["usage"] = dict(reply.usage)
    return kept


def _describe(error: BaseException) -> str:
    where = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    at = f" at {where[0].filename}:{where[0].lineno}" if where else ""
    return f"{type(error).__name__}: {error}{at}"
