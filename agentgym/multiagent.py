"""Multi-agent text envs: they ARE PettingZoo envs.

:class:`TurnBasedEnv` is a :class:`pettingzoo.AECEnv` (agents act in turn) and
:class:`SimultaneousEnv` a :class:`pettingzoo.ParallelEnv` (agents act at once). Both keep the
single-agent contract where it carries over:

* observations and actions are text (:class:`~agentgym.spaces.Text`), one space object per
  agent, so PettingZoo's space seeding works;
* episodes come from a :class:`~agentgym.core.TaskSet` (``reset(seed=, options={"task_id":})``);
* a malformed or illegal action is feedback in that agent's next observation (naming the legal
  moves where the game lists them: :meth:`~_TextAgents.legal_actions`), counted in its
  ``info["invalid_actions"]``; after ``max_invalid_actions`` mistakes (a class attribute a game
  may set) the agent forfeits;
* every agent's ``info`` carries ``state_key``, ``invalid_action``, and at reset
  ``instructions``; the ``state_key`` there is a digest of that agent's information state
  (its seat and its view), never of the canonical state, which holds every seat's private
  information (cards, values, a target word, roles) and is small enough to guess from a
  digest; when the game ends, each agent's ``info["verdict"]`` says how it did;
* ``oracle_action(agent)`` is a non-LLM policy for the agent (perfect play where the game is
  small enough, else a strong heuristic), and ``reference_players()`` names the players a seat
  can be given (engines, solvers, bots; :class:`RandomPlayer` at least).

:func:`play_game` plays one whole game with a player in every seat: the one place the games'
tests ("Stockfish beats random") and the arena play games.

PettingZoo's ``api_test`` passes arbitrary keys in ``reset(options=...)``, so these envs read
the keys they know (``task_id``, ``split``, ``difficulty``) and ignore others, as PettingZoo
envs do. Subclasses write the rules: see :class:`TurnBasedEnv` and
``envs/multiagent/tictactoe.py``.
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, runtime_checkable

import numpy as np
import pettingzoo
from gymnasium.utils import seeding

from agentgym.core import TaskSet, Verdict
from agentgym.errors import ResetNeeded, UsageError
from agentgym.spaces import Text, TextObservation
from agentgym.task_env import InvalidAction

__all__ = [
    "GameResult",
    "RandomPlayer",
    "ReferencePlayer",
    "Seat",
    "SimultaneousEnv",
    "TurnBasedEnv",
    "play_game",
]

WorldT = TypeVar("WorldT")


@runtime_checkable
class ReferencePlayer(Protocol):
    """A non-LLM player for a seat at a set strength: an engine (Stockfish, GNU Go), a solver
    (perfect play, a CFR policy) or a rule-based bot. The arena seats them beside agents, and
    a game's tests measure them (the strongest must beat random by a stated margin).

    ``act`` reads the env's current state (it may keep its own, e.g. an engine process) and
    returns a legal action text for ``agent``, the one to move; ``close`` frees what it holds.
    A player is made per game by the factory of :meth:`_TextAgents.reference_players`.
    """

    name: str

    def act(self, env: Any, agent: str) -> str: ...

    def close(self) -> None: ...


class _TextAgents(Generic[WorldT]):
    """What both bases share: agents, text spaces, tasks, seeding and the info contract."""

    possible_agents: list[str]
    tasks: TaskSet
    max_invalid_actions = 3
    max_observation_length = 16_384
    max_action_length = 4_096

    def _setup_agents(self, split: str, difficulty: str | None, render_mode: str | None) -> None:
        self.tasks.check_split(split)
        self.tasks.check_difficulty(difficulty)
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode={render_mode!r} is not supported; use 'ansi' or None")
        self.split, self.difficulty, self.render_mode = split, difficulty, render_mode
        self.observation_spaces = {
            a: Text(self.max_observation_length) for a in self.possible_agents
        }
        self.action_spaces = {a: Text(self.max_action_length) for a in self.possible_agents}
        self.world: WorldT | None = None
        self.task: Any = None
        self.episode_seed: int | None = None  # the seed of the last reset, None when unseeded
        self.np_random, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> Text:
        """The agent's observation space (the same object every call, as PettingZoo asks)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Text:
        """The agent's action space (the same object every call)."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ hooks for games

    @abstractmethod
    def new_world(self, task: Any, rng: np.random.Generator) -> WorldT:
        """A fresh game for ``task``."""

    @abstractmethod
    def describe(self, world: WorldT, agent: str) -> str:
        """What ``agent`` sees now (its private view)."""

    @abstractmethod
    def state_key(self, world: WorldT) -> str:
        """The canonical game state, without history."""

    @abstractmethod
    def outcome(self, world: WorldT) -> Mapping[str, float] | None:
        """Final scores in ``[0, 1]`` per agent when the game is over, else ``None``."""

    @abstractmethod
    def rules(self) -> str:
        """The rules and action syntax, for every agent's instructions."""

    @abstractmethod
    def oracle_action(self, agent: str) -> str | None:
        """A non-LLM policy's action for ``agent`` in the current state."""

    def legal_actions(self, world: WorldT, agent: str) -> list[str] | None:
        """The actions ``agent`` may take now, each a text :meth:`act` accepts (an empty list
        when it is not the agent's turn or the game is over), or ``None`` where the game cannot
        list them (free text: a negotiation's offers). Default ``None``.

        A game that lists them gets, from the base: ``info["legal_actions"]`` for every agent
        at every step (the text form of PettingZoo's ``action_mask``), the list in the feedback
        of an invalid action, and :class:`RandomPlayer` as its ``"random"`` reference player.
        """
        return None

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        """The game's reference players by name (e.g. ``"stockfish-skill-5"``, ``"random"``),
        each a factory of a fresh :class:`ReferencePlayer`; names are stable ids the arena and
        the docs use. Default: ``"random"`` (:class:`RandomPlayer`, which needs
        :meth:`legal_actions`); a game that overrides this keeps ``"random"`` in its dict."""
        return {"random": RandomPlayer}

    # ------------------------------------------------------------------ shared machinery

    def _begin(self, seed: int | None, options: Any) -> None:
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise UsageError(f"reset(seed=...) takes an int or None, got {type(seed).__name__}")
        if options is not None and not isinstance(options, Mapping):
            raise UsageError(
                f"reset(options=...) takes a dict or None, got {type(options).__name__}"
            )
        options = dict(options or {})
        if seed is not None:
            self.np_random, _ = seeding.np_random(int(seed))
        self.episode_seed = None if seed is None else int(seed)
        if isinstance(options.get("task_id"), str):
            self.task = self.tasks.get(options["task_id"])
        else:
            split = options.get("split", self.split)
            difficulty = options.get("difficulty", self.difficulty)
            self.task = self.tasks.sample(self.np_random, split, difficulty)
        self.world = self.new_world(self.task, self.np_random)
        self.agents = list(self.possible_agents)
        self._invalid = dict.fromkeys(self.agents, 0)
        self._feedback = dict.fromkeys(self.agents, "")

    def _forfeits(self) -> dict[str, float] | None:
        losers = [a for a, n in self._invalid.items() if n >= self.max_invalid_actions]
        if not losers:
            return None
        return {a: 0.0 if a in losers else 1.0 for a in self.possible_agents}

    def _agent_info(self, agent: str, invalid: bool = False) -> dict[str, Any]:
        assert self.world is not None
        info: dict[str, Any] = {
            "task_id": self.task.id,
            "state_key": _digest(agent, self.describe(self.world, agent)),
            "invalid_action": invalid,
            "invalid_actions": self._invalid[agent],
        }
        legal = self.legal_actions(self.world, agent)
        if legal is not None:
            info["legal_actions"] = list(legal)
        return info

    def _text(self, agent: str) -> str:
        assert self.world is not None
        feedback = self._feedback.get(agent, "")
        text = (
            f"{feedback}\n\n{self.describe(self.world, agent)}"
            if feedback
            else self.describe(self.world, agent)
        )
        return TextObservation(text[: self.max_observation_length])

    def _apply(self, agent: str, action: Any) -> bool:
        """Run ``act``; returns whether the action was invalid (and records feedback)."""
        if not isinstance(action, str):
            raise UsageError(
                f"step() takes the agent's action as a str, got {type(action).__name__} "
                f"{action!r:.80}"
            )
        try:
            if len(action) > self.max_action_length:
                raise InvalidAction(
                    f"the action is longer than {self.max_action_length} characters"
                )
            assert self.world is not None  # step() is refused before reset()
            self._feedback[agent] = self.act(self.world, agent, action)
            return False
        except InvalidAction as mistake:
            self._invalid[agent] += 1
            left = self.max_invalid_actions - self._invalid[agent]
            assert self.world is not None
            legal = self.legal_actions(self.world, agent)
            listed = f" Legal moves: {', '.join(legal)}." if legal else ""
            self._feedback[agent] = (
                f"Invalid action: {mistake} ({left} mistakes left before you forfeit).{listed}"
            )
            return True

    @abstractmethod
    def act(self, world: WorldT, agent: str, action: str) -> str:
        """Apply ``agent``'s text; return feedback or raise InvalidAction."""

    def _verdict(self, score: float) -> Verdict:
        return Verdict(
            score=score,
            passed=score >= 1.0,
            components={"result": score},
            details={1.0: "won", 0.5: "drew", 0.0: "lost"}.get(score, f"scored {score}"),
        )

    def render(self) -> str | None:
        """The first agent's view of the game (``ansi``)."""
        if self.world is None:
            return None
        return self.describe(self.world, self.possible_agents[0])

    def close(self) -> None:
        """Drop the game; idempotent."""
        self.world = None


class TurnBasedEnv(_TextAgents[WorldT], pettingzoo.AECEnv):
    """A PettingZoo AEC env for turn-based text games.

    A game writes ``new_world``, ``describe``, ``act``, ``state_key``, ``outcome``,
    ``to_move`` (whose turn it is), ``rules`` and ``oracle_action``. An invalid action leaves
    the turn with the same agent, with the reason in its next observation. Rewards are given
    when the game ends: +1 win, -1 loss, 0 draw (``verdict.score`` is 1, 0, 0.5).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi"],
        "name": "turn_based_text",
        "is_parallelizable": False,
    }

    def __init__(
        self, *, split: str = "train", difficulty: str | None = None, render_mode: str | None = None
    ) -> None:
        super().__init__()
        self._setup_agents(split, difficulty, render_mode)
        self.agents = []

    @abstractmethod
    def to_move(self, world: WorldT) -> str:
        """The agent whose turn it is."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._begin(seed, options)
        assert self.world is not None
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {**self._agent_info(a), "instructions": self.rules()} for a in self.agents}
        self.agent_selection = self.to_move(self.world)

    def observe(self, agent: str) -> str:
        if self.world is None:
            raise ResetNeeded("call reset() before observe()")
        return self._text(agent)

    def step(self, action: Any) -> None:
        if self.world is None:
            raise ResetNeeded("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        invalid = self._apply(agent, action)
        result = self._forfeits() or self.outcome(self.world)
        for a in self.agents:
            self.infos[a] = self._agent_info(a, invalid=invalid and a == agent)
        if result is not None:
            for a in self.agents:
                self.rewards[a] = 2.0 * result[a] - 1.0
                self.terminations[a] = True
                self.infos[a]["verdict"] = self._verdict(result[a])
        else:
            self.agent_selection = self.to_move(self.world)
        self._accumulate_rewards()


class SimultaneousEnv(_TextAgents[WorldT], pettingzoo.ParallelEnv):
    """A PettingZoo parallel env for games where every agent acts at once each round.

    A game writes ``new_world``, ``describe``, ``act`` (called per agent; invalid actions are
    feedback), ``resolve`` (applies the round once every action is in), ``state_key``,
    ``outcome``, ``round_rewards``, ``rules`` and ``oracle_action``.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "name": "simultaneous_text"}

    def __init__(
        self, *, split: str = "train", difficulty: str | None = None, render_mode: str | None = None
    ) -> None:
        self._setup_agents(split, difficulty, render_mode)
        self.agents = []

    @abstractmethod
    def resolve(self, world: WorldT, valid: Mapping[str, bool]) -> Mapping[str, float]:
        """Play the round from the actions ``act`` recorded; return each agent's reward."""

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        self._begin(seed, options)
        infos = {a: {**self._agent_info(a), "instructions": self.rules()} for a in self.agents}
        return {a: self._text(a) for a in self.agents}, infos

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[
        dict[str, str],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        if self.world is None or not self.agents:
            raise ResetNeeded("call reset() before step()")
        if not isinstance(actions, Mapping):
            raise UsageError(
                f"step() takes a dict of agent -> action, got {type(actions).__name__}"
            )
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise UsageError(f"step() needs an action for every live agent; missing {missing}")
        valid = {a: not self._apply(a, actions[a]) for a in self.agents}
        rewards = dict(self.resolve(self.world, valid))
        result = self._forfeits() or self.outcome(self.world)
        infos = {a: self._agent_info(a, invalid=not valid[a]) for a in self.agents}
        done = result is not None
        if result is not None:
            for a in self.agents:
                infos[a]["verdict"] = self._verdict(result[a])
        observations = {a: self._text(a) for a in self.agents}
        terminations = dict.fromkeys(self.agents, done)
        truncations = dict.fromkeys(self.agents, False)
        rewards = {a: float(rewards.get(a, 0.0)) for a in self.agents}
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos


class RandomPlayer:
    """The ``"random"`` reference player: a uniformly random legal move, from the game's
    :meth:`~_TextAgents.legal_actions`. The baseline every game's strongest player is
    measured against.

    Its draws are seeded by ``seed``, the env's reset seed and the seat together (new streams
    at each new game; the env's own generator is left alone), so the same seeds replay the
    same game, different games' seeds give different games, and two random seats differ.
    A game whose random player draws otherwise (weighted moves, free text) subclasses it and
    overrides :meth:`choose`, keeping these streams.
    """

    name = "random"

    def __init__(
        self, legal_moves: Callable[[Any, str], list[str]] | None = None, seed: int | None = None
    ) -> None:
        """``legal_moves(game, agent)`` lists the moves where the game's own
        ``legal_actions`` does not; ``seed`` (default 0) varies the player itself."""
        self.seed = seed or 0
        self._legal_moves = legal_moves
        self._world: object = None
        self._rngs: dict[str, np.random.Generator] = {}

    def act(self, env: Any, agent: str) -> str:
        game = env.unwrapped
        return self.choose(game, agent, self.generator(game, agent))

    def generator(self, game: Any, agent: str) -> np.random.Generator:
        """``agent``'s stream in ``game`` (the env under its wrappers)."""
        if game.world is not self._world:  # a new game: new streams
            self._world, self._rngs = game.world, {}
        if agent not in self._rngs:  # one stream per seat: two random seats differ
            seat = game.possible_agents.index(agent)
            self._rngs[agent] = np.random.default_rng([self.seed, game.episode_seed or 0, seat])
        return self._rngs[agent]

    def choose(self, game: Any, agent: str, rng: np.random.Generator) -> str:
        """A uniformly random legal move for ``agent``, drawn from ``rng``."""
        if self._legal_moves is not None:
            legal: list[str] | None = self._legal_moves(game, agent)
        else:
            legal = game.legal_actions(game.world, agent)
        if legal is None:
            raise UsageError(
                f"{type(game).__name__} lists no legal actions (legal_actions() is None), so "
                f"RandomPlayer cannot play it; the game must define its own 'random' player"
            )
        if not legal:
            raise UsageError(f"{agent} has no legal action now: it is not its turn to move")
        return str(legal[int(rng.integers(len(legal)))])

    def close(self) -> None:
        """Nothing to free."""


Seat: TypeAlias = Callable[[Any, str], str] | ReferencePlayer
"""Who plays a seat in :func:`play_game`: a :class:`ReferencePlayer`, or a function
``(env, agent) -> action text`` (an agent's policy, a scripted line)."""


@dataclass
class GameResult:
    """One whole game played by :func:`play_game`.

    Attributes:
        seed, task_id: the reset that started it (replaying ``moves`` from it plays it again).
        moves: every turn in order, each ``{agent: action}`` (one agent in a turn-based game,
            every live agent in a simultaneous one), as the seats wrote them.
        outcome: each agent's final score, its ``verdict.score`` (1 win, 0.5 draw, 0 loss for
            two-player games); empty when the game did not finish within ``max_turns``.
        verdicts: each agent's final :class:`~agentgym.core.Verdict`.
        returns: each agent's sum of rewards.
        invalid_actions: each agent's count of invalid actions.
    """

    seed: int
    task_id: str
    moves: list[dict[str, str]] = field(default_factory=list)
    outcome: dict[str, float] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    returns: dict[str, float] = field(default_factory=dict)
    invalid_actions: dict[str, int] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """Whether the game ended (every agent has a verdict)."""
        return bool(self.outcome)


def play_game(
    env: Any,
    seats: Mapping[str, Seat],
    seed: int,
    *,
    task_id: str | None = None,
    max_turns: int = 10_000,
) -> GameResult:
    """Play one whole game of ``env`` (an AEC or parallel env, e.g. from
    :func:`~agentgym.registry.make_multi`) with ``seats[agent]`` moving for each agent.

    ``reset(seed=seed)`` starts it (``task_id`` picks the task; else the seed does). A seat is
    asked for an action only on its agent's turn, and is handed the env itself (a reference
    player reads its state there). Players are the caller's: this function closes none of them.
    A game still going after ``max_turns`` turns stops unfinished (``result.outcome`` empty).
    Errors a seat raises propagate: an agent's bad move is feedback inside the game, but a
    player that crashes is the caller's to handle.

    >>> import agentgym
    >>> env = agentgym.make_multi("multiagent/TicTacToe-v0")
    >>> players = env.unwrapped.reference_players()
    >>> seats = {agent: players["random"]() for agent in env.possible_agents}
    >>> result = play_game(env, seats, seed=3)
    >>> result.finished, sorted(result.outcome.values()) in ([0.0, 1.0], [0.5, 0.5])
    (True, True)
    """
    missing = sorted(set(env.possible_agents) - set(seats))
    unknown = sorted(set(seats) - set(env.possible_agents))
    if missing or unknown:
        raise UsageError(
            f"play_game() needs one seat per agent {env.possible_agents}; "
            f"missing {missing}, unknown {unknown}"
        )
    env.reset(seed=seed, options=None if task_id is None else {"task_id": task_id})
    result = GameResult(seed, env.unwrapped.task.id)
    result.returns = dict.fromkeys(env.possible_agents, 0.0)
    parallel = isinstance(env.unwrapped, pettingzoo.ParallelEnv)
    (_play_rounds if parallel else _play_turns)(env, seats, result, max_turns)
    if all(agent in result.verdicts for agent in env.possible_agents):
        result.outcome = {agent: result.verdicts[agent].score for agent in env.possible_agents}
    return result


def _move(seat: Seat, env: Any, agent: str) -> str:
    return seat.act(env, agent) if isinstance(seat, ReferencePlayer) else seat(env, agent)


def _play_turns(env: Any, seats: Mapping[str, Seat], result: GameResult, max_turns: int) -> None:
    """The turns of an AEC game, into ``result``."""
    for agent in env.agent_iter():
        _, reward, terminated, truncated, info = env.last()
        result.returns[agent] += float(reward)
        result.invalid_actions[agent] = int(info.get("invalid_actions", 0))
        if isinstance(info.get("verdict"), Verdict):
            result.verdicts[agent] = info["verdict"]
        if terminated or truncated:
            env.step(None)
            continue
        if len(result.moves) >= max_turns:
            break
        action = _move(seats[agent], env, agent)
        result.moves.append({agent: action})
        env.step(action)


def _play_rounds(env: Any, seats: Mapping[str, Seat], result: GameResult, max_turns: int) -> None:
    """The rounds of a parallel game, into ``result``."""
    while env.agents and len(result.moves) < max_turns:
        actions = {agent: _move(seats[agent], env, agent) for agent in env.agents}
        result.moves.append(actions)
        _, rewards, _, _, infos = env.step(actions)
        for agent, info in infos.items():
            result.returns[agent] += float(rewards[agent])
            result.invalid_actions[agent] = int(info.get("invalid_actions", 0))
            if isinstance(info.get("verdict"), Verdict):
                result.verdicts[agent] = info["verdict"]


def _digest(agent: str, view: str) -> str:
    """An agent's ``info["state_key"]``: a digest of its information state (its seat and its
    view of the game, :meth:`~_TextAgents.describe`), not of the canonical state. Equal keys
    mean the agent faces the same situation; and since the digest is of nothing the agent
    does not already see, no guessing of hidden cards or roles can be checked against it (a
    digest of the canonical state, a small space, could be inverted by trying them all)."""
    return hashlib.sha256(f"{agent}\0{view}".encode()).hexdigest()[:32]
