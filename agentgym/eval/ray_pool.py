"""Evaluation on a Ray cluster: ``agentgym eval --ray ADDRESS`` (``evaluate(..., ray=ADDRESS)``).

Why it is built this way:

* **One writer.** The driver (the process running the evaluation) keeps the queue of plans and
  is the only writer of ``episodes.jsonl``: ``--resume``, the ledger's durability and its
  final ordering work exactly as in a local run, and no two machines append to one file.
* **Async actors.** Episodes play on Ray actors (:class:`EpisodeActor`). Each resolves the
  agent spec itself (a model loads once per actor, not per episode) and plays every plan it
  is handed with :func:`~agentgym.eval.engine.run_episodes` on its own event loop, several
  at once, so a batching model backend in the actor batches its episodes' calls.
* **Actors pull.** The driver hands a plan only to an actor that has said it is up and has a
  free slot. An actor Ray cannot place yet (no node has room) is handed nothing, so a cluster
  smaller than asked runs the evaluation more slowly instead of queueing plans behind it.
* **Records come back.** An actor returns the record and its frames as PNG bytes; the driver
  writes the frames into the run's :class:`~agentgym.frames.FrameStore` and the record to the
  ledger, as a local run does.
* **Every episode exactly once.** At any moment a plan is in the queue or in one call to one
  actor, and a record is written only from the call that held it. An actor that dies (killed,
  out of memory, its node lost) fails its calls; their plans go back to the head of the queue
  whole, and the actor is replaced. An episode cut short is played again from its start,
  with the same seeds, so the ledger equals an uninterrupted run's but for timing.
* **Placement by resources.** An env id declares the share of a core an episode takes
  (:attr:`agentgym.registry.EnvSpec.episode_cpus`: a browser, a desktop or a repository's
  tests take one; a text env a small share). Each actor reserves that times its slots, for
  the benchmark's heaviest env, through Ray's ``num_cpus``, and actors are spread over the
  nodes (``SPREAD``): Ray puts them where there is room, and a lost node takes as few
  episodes with it as it can.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym.errors import InfrastructureError, MissingExtraError, UsageError
from agentgym.eval.engine import EngineLimits, run_episodes
from agentgym.eval.plan import EpisodePlan
from agentgym.frames import FrameStore, encode_png, frame_ref
from agentgym.ledger import EpisodeRecord

__all__ = ["EpisodeActor", "EpisodeJob", "Placement", "connect", "placement", "play_on_ray"]

START_TIMEOUT_S = 600.0
"""Seconds the run waits with no actor up (none placed, none started) before it gives up."""

Frames = list[tuple[dict[str, Any], bytes]]
"""An episode's frames as they travel back to the driver: (reference, PNG bytes) pairs."""

Deliver = Callable[[EpisodeRecord, EpisodePlan, Frames], Awaitable[None]]


@dataclass(frozen=True)
class EpisodeJob:
    """What it takes to play a run's episodes, wherever they play: the specs, not the
    resolved agent (an actor resolves them itself, once), and the Ray address."""

    agent: Any
    agent_options: dict[str, Any]
    agent_name: str
    limits: EngineLimits
    sampling: dict[str, Any]
    user: Any = None
    user_options: dict[str, Any] = field(default_factory=dict)
    env_servers: tuple[str, ...] = ()
    env_server_token: str | None = None
    ray: str | None = None


@dataclass(frozen=True)
class Placement:
    """How a run spreads: ``actors`` actors of ``slots`` episodes at once, each reserving
    ``cpus`` of a node's CPUs."""

    actors: int
    slots: int
    cpus: float


def placement(env_ids: Iterable[str], num_envs: int, slots: int | None = None) -> Placement:
    """The actors for ``num_envs`` episodes at once over ``env_ids``: by default an actor
    plays one core's worth of episodes of the heaviest env (eight text episodes, one browser
    episode), and reserves what they take."""
    from agentgym.registry import spec

    if slots is not None and (isinstance(slots, bool) or not isinstance(slots, int) or slots < 1):
        raise UsageError(f"episodes_per_actor must be a positive int, got {slots!r}")
    cpus = max(spec(env_id).episode_cpus for env_id in env_ids)
    slots = min(slots or max(1, int(1 / cpus)), num_envs)
    reserved = slots * cpus
    # Ray takes a share of one CPU, or whole CPUs, not 1.5.
    return Placement(
        math.ceil(num_envs / slots), slots, reserved if reserved < 1 else math.ceil(reserved)
    )


def connect(address: str | None) -> tuple[Any, bool]:
    """Ray, connected to ``address`` as ``ray.init`` reads it (``"auto"``: the cluster this
    machine belongs to; ``"local"``: a new one on this machine; ``"ray://HOST:PORT"``; None:
    ``$RAY_ADDRESS`` or a new local one); and whether this call connected (and so must
    disconnect). A process already connected keeps its connection."""
    try:
        import ray
    except ImportError as error:
        raise MissingExtraError("--ray needs ray: pip install 'agentgym[train]'") from error
    if ray.is_initialized():
        return ray, False
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)  # fmt: skip
    except ConnectionError as error:
        raise UsageError(f"--ray {address!r}: no Ray cluster there ({error})") from None
    return ray, True


class PngFrames(FrameStore):
    """An episode's frames kept in memory as PNG bytes: an actor has no run directory, so
    they travel back with the record and the driver stores them."""

    def __init__(self) -> None:
        super().__init__(".")
        self.png: dict[str, tuple[dict[str, Any], bytes]] = {}

    def keep(self, frame: np.ndarray) -> dict[str, Any]:
        ref = frame_ref(frame)
        with self._lock:
            known = ref["path"] in self.png
        if not known:
            encoded = encode_png(frame)
            with self._lock:
                self.png[ref["path"]] = (ref, encoded)
        return ref


class EpisodeActor:
    """One Ray actor: the run's agent (and user) resolved here, episodes played on request."""

    def __init__(self, job: EpisodeJob) -> None:
        from agentgym.agents import resolve_agent, resolve_user
        from agentgym.eval.servers import EnvServers

        self.job = job
        self.factory, _ = resolve_agent(job.agent, job.agent_options)
        self.user_factory, self.user_name = resolve_user(
            job.user, job.user_options, job.agent, job.agent_options, self.factory, job.agent_name
        )
        self.make_env = (
            EnvServers(job.env_servers, token=job.env_server_token) if job.env_servers else None
        )

    def node(self) -> str:
        """The id of the node this actor runs on (it answers once it is up)."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    async def play(self, plan: EpisodePlan) -> tuple[EpisodeRecord, Frames]:
        """Play ``plan``'s episode, as a local run plays it; its record and frames."""
        frames = PngFrames()
        (record,) = await run_episodes(
            [plan],
            self.factory,
            self.job.agent_name,
            num_envs=1,
            limits=self.job.limits,
            sampling=self.job.sampling,
            make_env=self.make_env,
            user_factory=self.user_factory,
            user_name=self.user_name,
            frames=frames,
        )
        return record, list(frames.png.values())


@dataclass(eq=False)
class _Actor:
    """The driver's view of one actor: its handle, node, and episodes in its hands."""

    handle: Any
    node: str | None = None
    busy: int = 0


class _Pool:
    """The driver's side: starts actors, hands them plans, re-queues a dead one's plans."""

    def __init__(self, ray: Any, job: EpisodeJob, where: Placement) -> None:
        self.ray, self.job, self.where = ray, job, where
        self.remote = ray.remote(
            num_cpus=where.cpus,
            max_restarts=0,  # a dead actor's plans go back to the queue: never played twice
            max_concurrency=where.slots + 1,
            scheduling_strategy="SPREAD",
        )(EpisodeActor)
        self.actors: list[_Actor] = []
        self.calls: dict[asyncio.Future[Any], tuple[_Actor, EpisodePlan | None]] = {}
        self.lost = 0
        self.lost_errors = self._lost_errors()

    def _lost_errors(self) -> tuple[type[BaseException], ...]:
        """What a call raises when its actor, its node or its result is gone."""
        errors = self.ray.exceptions
        return (errors.RayActorError, errors.WorkerCrashedError, errors.ObjectLostError,
                errors.NodeDiedError)  # fmt: skip

    def _call(self, actor: _Actor, method: str, plan: EpisodePlan | None) -> None:
        ref = getattr(actor.handle, method).remote(*([] if plan is None else [plan]))
        self.calls[asyncio.wrap_future(ref.future())] = (actor, plan)

    def start(self) -> None:
        """Start an actor; it gets plans once it answers where it runs."""
        actor = _Actor(self.remote.remote(self.job))
        self.actors.append(actor)
        self._call(actor, "node", None)

    def hand_out(self, queue: deque[EpisodePlan]) -> None:
        """Give queued plans to the actors that are up and have a free slot."""
        for actor in self.actors:
            while actor.node is not None and actor.busy < self.where.slots and queue:
                actor.busy += 1
                self._call(actor, "play", queue.popleft())

    def in_flight(self) -> bool:
        return any(plan is not None for _, plan in self.calls.values())

    def replace(self, actor: _Actor, error: BaseException) -> None:
        """``actor`` is gone (its first failed call says so): say so, start another."""
        if actor not in self.actors:
            return  # its other calls failing too
        self.actors.remove(actor)
        self.lost += 1
        where = f"on node {actor.node[:12]}" if actor.node else "before it started"
        print(
            f"agentgym: ray: an actor died {where} ({type(error).__name__}); its "
            f"{actor.busy} episode(s) go back to the queue and a new actor starts",
            file=sys.stderr,
        )
        if self.lost > max(8, 4 * self.where.actors):
            raise InfrastructureError(
                f"{self.lost} Ray actors died in this run; the last: {error}"
            ) from error
        self.kill(actor)
        self.start()

    def kill(self, actor: _Actor) -> None:
        with contextlib.suppress(Exception):  # already dead, or its node gone
            self.ray.kill(actor.handle, no_restart=True)

    async def run(self, plans: list[EpisodePlan], deliver: Deliver) -> None:
        """Play every plan once, each record delivered as it comes back."""
        queue = deque(plans)
        for _ in range(self.where.actors):
            self.start()
        while queue or self.in_flight():
            self.hand_out(queue)
            done, _ = await asyncio.wait(
                self.calls, timeout=START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
            )
            if not done and not any(actor.node for actor in self.actors):
                raise InfrastructureError(self._unplaced())
            for future in done:
                await self._settle(future, queue, deliver)

    async def _settle(
        self, future: asyncio.Future[Any], queue: deque[EpisodePlan], deliver: Deliver
    ) -> None:
        """One call came back: an actor is up, an episode's record, or an actor lost."""
        actor, plan = self.calls.pop(future)
        try:
            value = future.result()
        except self.lost_errors as error:
            if plan is not None:
                queue.appendleft(plan)
            self.replace(actor, error)
            return
        if plan is None:
            actor.node = str(value)
            return
        actor.busy -= 1
        record, frames = value
        await deliver(record, plan, frames)

    def _unplaced(self) -> str:
        return (
            f"no Ray actor started in {START_TIMEOUT_S:g} s: each needs {self.where.cpus:g} "
            f"CPU(s) free on one node ({self.where.slots} episode(s) at once); give the "
            f"cluster room, or lower --episodes-per-actor"
        )

    def close(self) -> None:
        for actor in self.actors:
            self.kill(actor)
        self.actors = []


async def play_on_ray(
    plans: list[EpisodePlan],
    job: EpisodeJob,
    *,
    where: Placement,
    frames: FrameStore,
    on_record: Callable[[EpisodeRecord, EpisodePlan], None],
) -> None:
    """Play ``plans`` on Ray actors at ``job.ray``, spread as ``where`` says
    (:func:`placement`); each record goes to ``on_record`` (the run's ledger) as it comes
    back, its frames first into ``frames``."""
    if not plans:
        return
    ray, owned = connect(job.ray)
    pool = _Pool(ray, job, where)

    async def deliver(record: EpisodeRecord, plan: EpisodePlan, png: Frames) -> None:
        for ref, data in png:
            frames.keep_encoded(ref, data)
        on_record(record, plan)

    try:
        await pool.run(plans, deliver)
    finally:
        pool.close()
        if owned:
            ray.shutdown()
