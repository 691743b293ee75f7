"""``agentgym.remote.make_multi(URL, ID)``: a multi-agent game on an env server, as PettingZoo.

The game is served whole (every agent's moves come from this client, as with
:func:`agentgym.make_multi`), so an arena, a self-play trainer or the multi-agent checker can
use a remote game as a local one. It is a PettingZoo ``AECEnv`` (under PettingZoo's
order-enforcing wrapper, as locally) or ``ParallelEnv``, the id's kind; the same checker
passes on it.

Every reset and step answers with the game's view (agents, whose turn, rewards,
terminations, truncations, infos, the task's id), which this side keeps as the attributes
PettingZoo's API reads, so reading them costs no round trip; an observation is asked for by
agent. Faults are the single-agent client's (:mod:`agentgym.remote.client`): numbered
requests, reattach after a dropped connection, typed errors.

Reference players (Stockfish, solvers) read the game's state where it lives, so they are not
offered here: seat an agent against them on the server instead
(``remote.make(URL, ID, opponent=NAME)``). The random player works on this side, as locally:
the infos carry every agent's legal moves and the view the episode's seed, which is all it
reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pettingzoo

from agentgym.remote.client import Link, RemoteTaskSet
from agentgym.remote.wire import decode, encode, space_from

__all__ = ["RemoteAECEnv", "RemoteParallelEnv", "make_multi"]


def make_multi(
    url: str,
    env_id: str,
    *,
    token: str | None = None,
    reply_timeout_s: float = 300.0,
    reconnect_s: float = 10.0,
    **kwargs: Any,
) -> Any:
    """A session of the multi-agent game ``env_id`` on the env server at ``url``, whole, as
    :func:`agentgym.make_multi` builds it locally: an AEC game under PettingZoo's
    order-enforcing wrapper, or a parallel game. ``kwargs`` go to the server's
    ``make_multi(env_id, **kwargs)``; ``token`` is the server's bearer token."""
    link = Link(url, token, reply_timeout_s, reconnect_s)
    described = link.open(env_id, kwargs, multi=True)
    if described["kind"] == "parallel":
        return RemoteParallelEnv(link, described)
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    return OrderEnforcingWrapper(RemoteAECEnv(link, described))


@dataclass(frozen=True)
class RemoteTask:
    """The task being played on the server (its id: the task itself stays there)."""

    id: str


class RemoteWorld:
    """Stands for the game being played on the server: a new one at each reset (what a
    player that keeps state per game, such as the random player, watches for)."""


class _RemoteGame:
    """What both kinds share: agents, spaces, tasks, calls."""

    possible_agents: list[str]
    agents: list[str]

    def _setup(self, link: Link, described: dict[str, Any]) -> None:
        self._link = link
        self.env_id: str = described["env_id"]
        self.possible_agents = list(described["possible_agents"])
        self.agents = []
        self.observation_spaces = {
            a: space_from(d) for a, d in described["observation_spaces"].items()
        }
        self.action_spaces = {a: space_from(d) for a, d in described["action_spaces"].items()}
        self.metadata = decode(described["metadata"])
        self.render_mode = described["render_mode"]
        self.max_invalid_actions: int | None = described["max_invalid_actions"]
        self.task: RemoteTask | None = None
        self.world: RemoteWorld | None = None
        self.episode_seed: int | None = None
        self._infos: dict[str, Any] = {}
        tasks = described.get("tasks")
        if tasks is not None:
            self.tasks = RemoteTaskSet(self._page_of_ids, tasks["splits"], tasks["difficulties"])

    def _call(self, method: str, *args: Any) -> Any:
        data = {"method": method, "args": encode(list(args))}
        return decode(self._link.request("call", data)["value"])

    def _page_of_ids(
        self, split: str, difficulty: str | None, start: int, stop: int
    ) -> dict[str, Any]:
        page: dict[str, Any] = self._call("task_ids", split, difficulty, start, stop)
        return page

    def _played(self, method: str, *args: Any) -> Any:
        """A reset or step: what the game returned, its view taken in."""
        result = self._call(method, *args)
        view = result["view"]
        if method == "reset":
            self.world = RemoteWorld()
        self.agents = list(view["agents"])
        self.task = None if view["task_id"] is None else RemoteTask(view["task_id"])
        self.episode_seed = view["episode_seed"]
        self._take(view)
        returned = result["returned"]  # a parallel game's infos come last; an AEC's in its view
        self._infos = view["infos"] if "infos" in view else returned[-1]
        return returned

    def legal_actions(self, world: Any, agent: str) -> list[str] | None:
        """``agent``'s legal moves now, as the game lists them (None where it does not):
        what :class:`~agentgym.multiagent.RandomPlayer` draws from, here as locally."""
        moves: list[str] | None = self._infos.get(agent, {}).get("legal_actions")
        return moves

    def _take(self, view: dict[str, Any]) -> None:
        """Keep the view's attributes (an AEC game has more than its agents)."""

    def observation_space(self, agent: str) -> Any:
        """The agent's observation space (the same object every call, as PettingZoo asks)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        """The agent's action space (the same object every call)."""
        return self.action_spaces[agent]

    def oracle_action(self, agent: str) -> Any:
        """The game's non-LLM policy's action for ``agent`` now (asked of the server)."""
        return self._call("oracle", agent)

    def render(self) -> Any:
        return self._call("render")

    def close(self) -> None:
        """End the session on the server (best effort: its lease ends it otherwise)."""
        self._link.close()

    def __str__(self) -> str:
        return f"RemoteGame<{self.env_id} at {self._link.url}>"


class RemoteAECEnv(_RemoteGame, pettingzoo.AECEnv):  # type: ignore[misc]  # untyped base
    """A turn-based game on an env server (see :func:`make_multi`)."""

    def __init__(self, link: Link, described: dict[str, Any]) -> None:
        super().__init__()
        self._setup(link, described)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._played("reset", seed, options)

    def step(self, action: Any) -> None:
        self._played("step", action)

    def observe(self, agent: str) -> Any:
        return self._call("observe", agent)

    def _take(self, view: dict[str, Any]) -> None:
        self.agent_selection = view["agent_selection"]
        self.rewards = view["rewards"]
        self._cumulative_rewards = view["cumulative_rewards"]
        self.terminations = view["terminations"]
        self.truncations = view["truncations"]
        self.infos = view["infos"]


class RemoteParallelEnv(_RemoteGame, pettingzoo.ParallelEnv):  # type: ignore[misc]
    """A game whose agents act at once, on an env server (see :func:`make_multi`)."""

    def __init__(self, link: Link, described: dict[str, Any]) -> None:
        self._setup(link, described)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        observations, infos = self._played("reset", seed, options)
        return observations, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        return tuple(self._played("step", actions))
