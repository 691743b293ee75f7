"""Playing one arena match: reference players and agents in the seats of one game.

The whole game runs in a worker thread (:func:`~agentgym.multiagent.play_game`, so it is the
same game a test or a replay plays), while the agents stay on the arena's event loop: an
agent's turn hands its ``act`` to the loop (:func:`asyncio.run_coroutine_threadsafe`) and
the game thread waits for the answer. Many matches at once thus keep many agent requests in
flight together, and a batching model backend gathers them, as the evaluator's episodes do.

An agent seat is shown what a seated episode shows (:class:`~agentgym.seating.SeatedEnv`):
its own observation (with the game's feedback after an invalid move), its info with the
legal moves as ``admissible_actions``, and the game's rules with who sits where as its
instructions. Its moves become an :class:`~agentgym.ledger.EpisodeRecord` (tokens, logprobs,
the game's verdict for the seat, reward 0 until the end and then the seat's score), so
trainers and reports read arena games like any episode.

**An agent can only lose.** When an agent's ``reset`` or ``act`` raises an error of its own
(anything but the typed :class:`~agentgym.errors.InfrastructureError`, which a backend raises
when the model server fails, and :class:`~agentgym.errors.UsageError`, the caller's bug), or
its move runs past the step timeout, its seat forfeits: the game stops there and the match is
scored as :func:`~agentgym.arena.records.forfeit_scores` (the seat 0, every other seat 1),
with the moves before it. Only the infrastructure's failures (the env, a reference player, a
model server) leave a match errored.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pettingzoo

from agentgym.agents import Agent, AgentFactory, AgentReply, EpisodeContext
from agentgym.arena.records import Forfeit, forfeit_scores
from agentgym.core import Verdict
from agentgym.errors import InfrastructureError, UsageError
from agentgym.ledger import EpisodeRecord, EpisodeSpec, StepRecord
from agentgym.multiagent import GameResult, ReferencePlayer, Seat, play_game
from agentgym.task_env import clean_action, clean_text

__all__ = ["AgentSeat", "MatchPlay", "Played", "play_match"]

MAX_TURNS = 10_000
"""A game still going after this many turns stops unfinished (an errored match)."""


@dataclass
class AgentSeat:
    """One agent in one seat of one match: asks the agent from the game thread, records its
    moves as an episode."""

    agent: Agent
    player: str
    seat: str
    env_id: str
    match_id: str
    loop: asyncio.AbstractEventLoop
    timeout: float | None
    opponents: dict[str, str]
    sampling: dict[str, Any] = field(default_factory=dict)
    record: EpisodeRecord | None = None
    seed: int = 0
    started: float = field(default_factory=time.monotonic)

    def __call__(self, env: Any, agent: str) -> str:
        """The agent's move for its seat (called by :func:`play_game` in the game thread)."""
        observation, info = seat_view(env, agent)
        info["seat"], info["opponents"] = self.seat, dict(self.opponents)
        if self.record is None:  # its first move: the episode starts (a reset that
            self.record, context = self._start(env, observation, info)  # fails forfeits it)
            self._on_loop(self._reset(context), "its reset")
        else:
            self.record.steps[-1].observation = observation
        asked = time.monotonic()
        reply = self._ask(observation, info)
        action = clean_action(reply.action)
        text = action if isinstance(action, str) else json.dumps(action, default=str)
        kept = {k: v for k, v in info.items() if k != "instructions"}
        if reply.text is not None:
            kept["agent_text"] = clean_text(reply.text)
        if reply.usage:
            kept["usage"] = dict(reply.usage)
        self.record.steps.append(
            StepRecord(
                action=text,
                observation=None,
                reward=0.0,
                terminated=False,
                truncated=False,
                info=kept,
                agent_seconds=time.monotonic() - asked,
                tokens=reply.tokens,
            )
        )
        return text

    def _start(
        self, env: Any, observation: str, info: dict[str, Any]
    ) -> tuple[EpisodeRecord, EpisodeContext]:
        game = env.unwrapped
        against = ", ".join(f"{s}: {p}" for s, p in self.opponents.items())
        instructions = f"{game.rules()}\n\nYou play {self.seat}; the other seats are {against}."
        context = EpisodeContext(
            env_id=self.env_id,
            task_id=str(game.task.id),
            seed=self.seed,
            instructions=instructions,
            info=info,
            sampling=self.sampling,
        )
        record = EpisodeRecord(
            spec=EpisodeSpec(
                env_id=self.env_id,
                task_id=str(game.task.id),
                seed=self.seed,
                agent=self.player,
                split=str(game.task.split),
                sampling=self.sampling,
                env_kwargs={"seat": self.seat, "opponent": dict(self.opponents)},
            ),
            initial_observation=observation,
            episode_id=f"{self.match_id}/{self.seat}",
            instructions=instructions,
            started_at=time.time(),
        )
        return record, context

    async def _reset(self, context: EpisodeContext) -> None:
        self.agent.reset(context)

    def _ask(self, observation: str, info: dict[str, Any]) -> AgentReply:
        reply = self._on_loop(self.agent.act(observation, info), "its move")
        return reply if isinstance(reply, AgentReply) else AgentReply(action=reply)

    def _on_loop(self, coroutine: Any, doing: str) -> Any:
        """Run the agent's ``coroutine`` on the arena's loop and wait for it here (the game
        thread); the agent's own failure or slowness forfeits the seat (:class:`Forfeited`),
        an infrastructure or usage error goes up as it is."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        done, _ = concurrent.futures.wait([future], self.timeout)
        if not done:
            future.cancel()
            raise Forfeited(self.seat, f"{doing} took over the step timeout of {self.timeout:g} s")
        error = future.exception()
        if error is None:
            return future.result()
        if isinstance(error, InfrastructureError | UsageError):
            raise error
        raise Forfeited(self.seat, f"{doing} raised {type(error).__name__}: {error}") from error

    def finish(self, env: Any, result: GameResult) -> EpisodeRecord | None:
        """The seat's episode once the game is over (None if the agent was never asked to
        move; no steps if it forfeited on its first move)."""
        if self.record is None:
            return None
        verdict = result.verdicts.get(self.seat)
        self.record.verdict = verdict
        self.record.status = "ok" if isinstance(verdict, Verdict) else "truncated"
        self.record.seconds = time.monotonic() - self.started
        if self.record.steps:
            last = self.record.steps[-1]
            last.observation, _ = seat_view(env, self.seat)
            last.terminated = isinstance(verdict, Verdict)
            last.truncated = not last.terminated
            last.reward = verdict.score if isinstance(verdict, Verdict) else 0.0
        return self.record


class Forfeited(Exception):
    """Raised in the game thread by an agent seat whose agent failed: :func:`play_match`
    ends the game there and scores the forfeit."""

    def __init__(self, seat: str, reason: str) -> None:
        super().__init__(f"{seat} forfeits: {reason}")
        self.forfeit = Forfeit(seat, reason)


def seat_view(env: Any, agent: str) -> tuple[str, dict[str, Any]]:
    """What ``agent`` sees now: its observation and info (with ``admissible_actions``)."""
    game = env.unwrapped
    if hasattr(env, "observe"):  # a turn-based (AEC) game
        observation, info = str(env.observe(agent)), dict(game.infos.get(agent, {}))
    else:  # a simultaneous game: the agent's view of the world as it stands
        observation, info = str(game.describe(game.world, agent)), {}
        legal = game.legal_actions(game.world, agent) if game.world is not None else None
        if legal is not None:
            info["legal_actions"] = list(legal)
    if "legal_actions" in info:
        info["admissible_actions"] = list(info["legal_actions"])
    return observation, info


@dataclass
class MatchPlay:
    """What one match needs: the env, the players' makers and where agents run."""

    env_id: str
    references: Mapping[str, Any]
    """Reference player name -> factory of a :class:`ReferencePlayer`."""
    agents: Mapping[str, AgentFactory]
    """Agent player name -> factory of an agent."""
    loop: asyncio.AbstractEventLoop
    step_timeout: float | None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """What the game is made with besides its id (the split of its tasks)."""
    sampling: dict[str, Any] = field(default_factory=dict)


@dataclass
class Played:
    """One match as :func:`play_match` played it."""

    result: GameResult
    """The game: its moves and each seat's outcome (the forfeit's, when one forfeited)."""
    episodes: list[EpisodeRecord]
    """The agent seats' episodes."""
    forfeit: Forfeit | None = None


def play_match(
    how: MatchPlay, make_env: Any, seats: Mapping[str, str], seed: int, match_id: str
) -> Played:
    """Play one match to its end in this (worker) thread: the game's result and the agent
    seats' episodes, or the forfeit of a seat whose agent failed. Raises what the env or a
    reference player raised, and an agent's infrastructure or usage error; an unfinished
    game is an :class:`InfrastructureError`."""
    env = make_env(how.env_id, **how.env_kwargs)
    players: dict[str, ReferencePlayer | AgentSeat] = {}
    log = MoveLog()
    try:
        for seat, player in seats.items():
            if player in how.references:
                players[seat] = how.references[player]()
            else:
                others = {s: p for s, p in seats.items() if s != seat}
                players[seat] = AgentSeat(
                    how.agents[player](),
                    player,
                    seat,
                    how.env_id,
                    match_id,
                    how.loop,
                    how.step_timeout,
                    others,
                    dict(how.sampling),
                    seed=seed,
                )
        forfeit = None
        try:
            logged = {seat: log.seat(player) for seat, player in players.items()}
            result = play_game(env, logged, seed, max_turns=MAX_TURNS)
        except Forfeited as forfeited:
            forfeit = forfeited.forfeit
            result = forfeit_result(env, seed, log.turns(), forfeit)
        if not result.finished:
            raise InfrastructureError(f"the game did not end within {MAX_TURNS} turns")
        episodes = [p.finish(env, result) for p in players.values() if isinstance(p, AgentSeat)]
        return Played(result, [e for e in episodes if e is not None], forfeit)
    finally:
        for made in players.values():
            if isinstance(made, AgentSeat):
                made.agent.close()
            else:
                made.close()
        env.close()


def forfeit_result(
    env: Any, seed: int, moves: list[dict[str, str]], forfeit: Forfeit
) -> GameResult:
    """The game that ``forfeit`` ended: the moves before it, and each seat's outcome and
    verdict as :func:`~agentgym.arena.records.forfeit_scores` has them."""
    outcome = forfeit_scores(env.possible_agents, forfeit.seat)
    verdicts = {
        seat: Verdict(
            score=score,
            passed=score >= 1.0,
            components={"result": score},
            details=f"forfeited: {forfeit.reason}"
            if seat == forfeit.seat
            else f"won: {forfeit.seat} forfeited",
        )
        for seat, score in outcome.items()
    }
    return GameResult(seed, str(env.unwrapped.task.id), moves, outcome, verdicts)


class MoveLog:
    """Every move the seats make, turn by turn as :class:`~agentgym.multiagent.GameResult`
    records them, so a match that a forfeit stops (its ``GameResult`` is lost with the
    exception) keeps the turns played before it."""

    def __init__(self) -> None:
        self._turns: list[tuple[dict[str, str], frozenset[str]]] = []

    def seat(self, player: Seat) -> Seat:
        """``player``, its moves logged."""

        def move(env: Any, agent: str) -> str:
            if isinstance(player, ReferencePlayer):
                action = player.act(env, agent)
            else:
                action = player(env, agent)
            self._note(env, agent, action)
            return action

        return move

    def _note(self, env: Any, agent: str, action: str) -> None:
        game = env.unwrapped
        # A turn of an AEC game is one agent's move; a round of a simultaneous game is
        # one move of every live agent, all asked before the env steps.
        movers = frozenset(game.agents if isinstance(game, pettingzoo.ParallelEnv) else [agent])
        if self._turns and set(self._turns[-1][0]) < self._turns[-1][1]:
            self._turns[-1][0][agent] = action
        else:
            self._turns.append(({agent: action}, movers))

    def turns(self) -> list[dict[str, str]]:
        """The complete turns so far (a simultaneous round the forfeit cut short is left
        out: the game never played it)."""
        return [dict(turn) for turn, movers in self._turns if set(turn) == movers]
