"""The episode engine: many episodes at once, no per-turn barrier, failures kept apart.

Each episode is one asyncio task. Its blocking env calls (make, reset, step, close) run in a
thread pool; its agent's ``act`` is awaited, so while one episode waits on the model or on a
slow env step, every other episode moves on. There is no lock-step "all envs step, then the
model answers for all": a batching model backend gathers whatever requests are in flight.

Step timeouts cost nothing per step: each episode notes when its current env or agent call
began, and one watchdog task per run cancels the calls that ran over (checked a few times per
timeout period). A timer per call would be a heap push and a cancel per step, which with
hundreds of episodes is a measurable share of the event loop's time.

Failures are sorted, never scored: an exception from the env or the agent, or a step or
episode over its timeout, is an **infrastructure** failure. The episode is retried up to
``retries`` times from the start and then recorded with ``status="errored"`` and the error;
statistics exclude it and count it. A failure no retry can change (a
:class:`~agentgym.errors.ContextLengthError`: the same episode replayed with the same seeds
outgrows the context again) is not retried. A :class:`~agentgym.errors.UsageError` (the
caller's bug, e.g. an agent spec that cannot work) stops the run at once instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import agentgym
from agentgym.agents import Agent, AgentFactory, AgentReply, EpisodeContext
from agentgym.agents.users import AgentUser
from agentgym.errors import ContextLengthError, UsageError
from agentgym.eval.plan import EpisodePlan
from agentgym.eval.threads import DaemonThreadPool
from agentgym.frames import FrameStore, has_frames
from agentgym.ledger import EpisodeRecord, EpisodeSpec, StepRecord
from agentgym.spaces import ToolCall
from agentgym.task_env import clean_action, clean_text

__all__ = ["EngineLimits", "gather_or_cancel", "plan_env", "run_episodes"]

# info keys kept out of step records: the instructions are the record's, once per episode.
DROPPED_INFO_KEYS = ("instructions",)


@dataclass(frozen=True)
class EngineLimits:
    """How long things may take and how often an errored episode is retried."""

    step_timeout: float | None = 300.0
    episode_timeout: float | None = 3600.0
    retries: int = 2

    def __post_init__(self) -> None:
        # A negative timeout would error every episode: the caller's mistake, not theirs.
        for name in ("step_timeout", "episode_timeout"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value > 0):
                raise UsageError(f"{name} must be a positive number of seconds, got {value!r}")
        retries = self.retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise UsageError(f"retries must be a count (0 or more), got {retries!r}")


def check_num_envs(num_envs: Any) -> None:
    """How many episodes play at once: a positive int, or a :class:`UsageError`."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise UsageError(f"num_envs must be a positive int, got {num_envs!r}")


class EpisodeFailed(Exception):
    """An infrastructure failure inside one episode (carried to the retry logic)."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


async def run_episodes(
    plans: list[EpisodePlan],
    agent_factory: AgentFactory,
    agent_name: str,
    *,
    num_envs: int = 8,
    limits: EngineLimits | None = None,
    sampling: dict[str, Any] | None = None,
    on_record: Callable[[EpisodeRecord, EpisodePlan], Awaitable[None] | None] | None = None,
    make_env: Callable[..., Any] | None = None,
    user_factory: AgentFactory | None = None,
    user_name: str | None = None,
    frames: FrameStore | None = None,
) -> list[EpisodeRecord]:
    """Play every planned episode, ``num_envs`` at a time; records come back in plan order.

    ``on_record(record, plan)`` is called as each episode finishes (in completion order): the
    run directory appends it to the ledger there, so a crash loses only unfinished episodes.
    ``make_env(plan)`` builds the env (default: ``agentgym.make`` with the plan's kwargs).

    ``user_factory`` makes an agent per episode that plays the env's user (conversation
    envs: ``make(id, user=...)`` gets it as an :class:`~agentgym.agents.users.AgentUser` on
    this run's event loop, so its model calls batch with the rest); its messages go to the
    record's ``user_turns`` and its spec, ``user_name``, to the record's spec.

    ``frames`` (the run directory's :class:`~agentgym.frames.FrameStore`) stores each
    observation's frames (a GUI env's screenshots) as the step is taken, so a record holds
    their references, not megabytes of pixels per step; the agent still gets the pixels.
    """
    check_num_envs(num_envs)
    run = _Run(
        agent_factory,
        agent_name,
        limits or EngineLimits(),
        dict(sampling or {}),
        make_env or plan_env,
        # Threads for env calls: one per concurrent episode up to 64 (more only adds
        # contention for the GIL), plus spares so that hung env calls (their threads cannot
        # be killed) do not starve the rest of the run.
        DaemonThreadPool(min(num_envs, len(plans), 64) + 8),
        user_factory,
        user_name,
        frames,
    )
    gate = asyncio.Semaphore(num_envs)
    records: dict[int, EpisodeRecord] = {}

    async def one(plan: EpisodePlan) -> None:
        async with gate:
            record = await run.episode(plan)
        records[plan.index] = record
        if on_record is not None:
            maybe = on_record(record, plan)
            if asyncio.iscoroutine(maybe):
                await maybe

    watchdog = asyncio.create_task(run.watch())
    try:
        await gather_or_cancel([one(plan) for plan in plans])
    finally:
        watchdog.cancel()
        run.pool.shutdown()
    return [records[plan.index] for plan in plans]


async def gather_or_cancel(coroutines: list[Awaitable[Any]]) -> None:
    """Run ``coroutines`` as tasks and wait for all; if one raises (a caller's bug, an
    interrupt), cancel the rest and wait until they have unwound before raising, so no
    episode or match is left running behind a failed run."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def plan_env(plan: EpisodePlan, **extra: Any) -> Any:
    """The env an episode of ``plan`` plays in: its id, kwargs and step limit (what the
    evaluator makes, and what the leaderboard's replay makes again); ``extra`` are kwargs
    that are not data (the model playing the user)."""
    kwargs = {**plan.env_kwargs, **extra}
    if plan.max_steps is not None:
        kwargs["max_episode_steps"] = plan.max_steps
    return agentgym.make(plan.env_id, **kwargs)


@dataclass
class _Call:
    """What an episode is waiting on, since when (loop time), and whether it was cut off."""

    what: str = ""
    since: float = 0.0
    expired: bool = False


@dataclass
class _Run:
    """What every episode of one run shares."""

    agent_factory: AgentFactory
    agent_name: str
    limits: EngineLimits
    sampling: dict[str, Any]
    build: Callable[..., Any]
    pool: DaemonThreadPool
    user_factory: AgentFactory | None = None
    user_name: str | None = None
    frames: FrameStore | None = None

    def __post_init__(self) -> None:
        self.calls: dict[asyncio.Task[Any], _Call] = {}

    async def watch(self) -> None:
        """Cancel every call that has run over the step timeout (the watchdog task)."""
        timeout = self.limits.step_timeout
        if timeout is None:
            return
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(1.0, timeout / 4))
            now = loop.time()
            for task, call in list(self.calls.items()):
                if call.what and not call.expired and now - call.since > timeout:
                    call.expired = True
                    task.cancel()

    async def episode(self, plan: EpisodePlan) -> EpisodeRecord:
        """Play one episode, retrying infrastructure failures; errored after the last try."""
        errors: list[str] = []
        started_at, started = time.time(), time.monotonic()
        for _attempt in range(self.limits.retries + 1):
            try:
                async with asyncio.timeout(self.limits.episode_timeout):
                    record = await self._play(plan)
                record.started_at, record.seconds = started_at, time.monotonic() - started
                return record
            except EpisodeFailed as failure:
                errors.append(str(failure))
                if not failure.retryable:
                    break
            except TimeoutError:
                errors.append(
                    f"the episode ran over its timeout of {self.limits.episode_timeout} s"
                )
        return EpisodeRecord(
            spec=self._spec(plan),
            initial_observation=None,
            status="errored",
            error=f"{len(errors)} attempt(s) failed; last: {errors[-1]}",
            episode_id=plan.episode_id,
            started_at=started_at,
            seconds=time.monotonic() - started,
        )

    def _spec(self, plan: EpisodePlan) -> EpisodeSpec:
        return EpisodeSpec(
            env_id=plan.env_id,
            task_id=plan.task_id,
            seed=plan.seed,
            agent=self.agent_name,
            split=plan.split,
            sampling=self.sampling,
            env_kwargs=dict(plan.env_kwargs),
            iteration=plan.iteration,
            user=self.user_name,
        )

    async def _play(self, plan: EpisodePlan) -> EpisodeRecord:
        task = asyncio.current_task()
        assert task is not None
        call = self.calls[task] = _Call()
        loop = asyncio.get_running_loop()
        env: Any = None
        agent: Agent | None = None
        user: AgentUser | None = None

        async def guarded(what: str, awaitable: Awaitable[Any]) -> Any:
            call.what, call.since = what, loop.time()
            try:
                return await awaitable
            except asyncio.CancelledError:
                if call.expired and task.uncancel() == 0:
                    verb = "took" if what == "the agent" else "ran"
                    raise EpisodeFailed(
                        f"{what} {verb} over the step timeout of {self.limits.step_timeout} s"
                    ) from None
                raise
            except (UsageError, EpisodeFailed):
                raise
            except Exception as error:
                raise EpisodeFailed(
                    f"{what} raised {_describe(error)}",
                    retryable=not isinstance(error, ContextLengthError),
                ) from error
            finally:
                call.what = ""

        try:
            if self.user_factory is not None:
                user = AgentUser(
                    self.user_factory(),
                    loop,
                    env_id=plan.env_id,
                    task_id=plan.task_id,
                    sampling=self.sampling,
                    timeout=self.limits.step_timeout,
                )
            extra = {} if user is None else {"user": user}
            env = await guarded("env make", self.pool.run(lambda: self.build(plan, **extra)))
            observation, info = await guarded(
                "env reset",
                self.pool.run(lambda: env.reset(seed=plan.seed, options={"task_id": plan.task_id})),
            )
            instructions = str(info.get("instructions", ""))
            record = EpisodeRecord(
                spec=self._spec(plan),
                initial_observation=await guarded("the frame store", self._stored(observation)),
                episode_id=plan.episode_id,
                instructions=instructions or None,
            )
            agent = self.agent_factory()
            agent.reset(
                EpisodeContext(
                    env_id=plan.env_id,
                    task_id=plan.task_id,
                    seed=plan.seed if plan.agent_seed is None else plan.agent_seed,
                    instructions=instructions,
                    info=info,
                    env=env,
                    sampling=self.sampling,
                    tools=declared_tools(env),
                    action_style=env.metadata.get("action_style"),
                    answer_format=env.metadata.get("answer_format"),
                    multimodal=bool(env.metadata.get("multimodal", False)),
                )
            )
            while True:
                asked = time.monotonic()
                reply = await guarded("the agent", agent.act(observation, info))
                stepped = time.monotonic()
                reply = _cleaned(reply)
                if user is not None:
                    user.steps = len(record.steps) + 1
                observation, reward, terminated, truncated, info = await guarded(
                    "env step", self.pool.run(partial(env.step, reply.action))
                )
                # Values are kept as the env gave them; the record turns them into JSON when
                # it is written (converting here as well would do the work twice).
                kept = await guarded("the frame store", self._stored(observation))
                record.steps.append(
                    StepRecord(
                        action=reply.action,
                        observation=kept,
                        reward=float(reward),
                        terminated=bool(terminated),
                        truncated=bool(truncated),
                        info=_step_info(info, reply),
                        env_seconds=time.monotonic() - stepped,
                        agent_seconds=stepped - asked,
                        tokens=reply.tokens,
                    )
                )
                if terminated or truncated:
                    break
        finally:
            del self.calls[task]
            if agent is not None:
                agent.close()
            if user is not None:
                user.close()
            if env is not None:
                # Closing may hang on a broken env: it runs on a worker, waited for 10 s at most.
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(10.0):
                        await self.pool.run(env.close)
        record.verdict = info.get("verdict")
        record.status = "ok" if terminated else "truncated"
        if user is not None:
            record.user_turns = list(user.turns)
        return record

    async def _stored(self, observation: Any) -> Any:
        """``observation`` as the record keeps it: its frames stored (on an env worker: PNG
        encoding takes milliseconds) and replaced by their references."""
        if self.frames is None or not has_frames(observation):
            return observation
        return await self.pool.run(partial(self.frames.externalize, observation))


def declared_tools(env: Any) -> list[dict[str, Any]] | None:
    """The env's tool declarations when its action space is a :class:`ToolCall` space."""
    space = getattr(env, "action_space", None)
    return [dict(tool) for tool in space.tools] if isinstance(space, ToolCall) else None


def _cleaned(reply: Any) -> AgentReply:
    """The agent's reply as the env and the ledger may see it: where agent text enters a run.

    A model's text can hold what no encoder takes (a lone surrogate, from a server's
    ``\\ud800`` escape); left in, it would make the env's parser or the ledger's write
    raise, and the agent could error its own episode or crash the run. The action (every
    string of a tool call) and the text are cleaned here, once, before anything reads them
    (:func:`agentgym.task_env.clean_action`).
    """
    if not isinstance(reply, AgentReply):
        return AgentReply(action=clean_action(reply))
    action = clean_action(reply.action)
    text = clean_text(reply.text) if isinstance(reply.text, str) else reply.text
    if action is reply.action and text is reply.text:  # clean already: the common case
        return reply
    return dataclasses.replace(reply, action=action, text=text)


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
