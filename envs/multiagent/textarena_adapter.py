"""TextArena's games as PettingZoo AEC envs: one adapter for every offline game of the
``textarena`` package (0.7.4), ids ``textarena/<Game>-v0``.

Which games it plays and why the others are left out: :mod:`.textarena_games` (network,
downloads, data the wheel lacks, one-player puzzles). SPIRAL's three games
(``TicTacToe-v0``, ``KuhnPoker-v0``, ``SimpleNegotiation-v0``) are registered ids with legal
moves, an oracle and reference players (:mod:`.textarena_spiral`); any other covered game
is reached by name.

**How TextArena maps onto the contract.**

* Seats: TextArena's player ids ``0..n-1`` are ``player_0..player_{n-1}``; the agent to move
  is TextArena's ``current_player_id``.
* Observations: each seat sees only its own messages, as TextArena's
  ``LLMObservationWrapper`` (the wrapper SPIRAL trains with) writes them: the game's prompt,
  then every message sent to the seat, one ``[GAME] ...`` or ``[Player 1] ...`` line each.
  The adapter asks ``get_observation()`` once per turn, as TextArena's own loop does; a
  history longer than the observation space keeps the prompt and the latest messages.
* Moves: the text goes to the game's ``step()`` unchanged (no action rewriting, as SPIRAL
  played it); text with no word in it is refused before it gets there.
* Mistakes: the game's ``set_invalid_move(reason)`` is the invalid action, with the reason
  as feedback; the game's own allowance is raised so the adapter's per-game
  ``max_invalid_actions`` (default 3; SPIRAL's ``error_allowance = 0`` is
  ``max_invalid_actions=1``) forfeits. An exception the game raises on a move rolls the game
  back to before it and counts as an invalid move: nothing an agent writes crashes a game.
  A game that fails to build or reset raises :class:`~agentgym.errors.EnvCrashedError`.
* Results: TextArena's rewards rank the seats; each seat's score is the share of the other
  seats it finished above (ties count half): 1 win, 0.5 draw, 0 loss in a two-player game.
  A game still going after ``max_turns`` valid moves (default 200) ends as a draw for all.
* Seeds: a task is a deal, ``reset(seed=...)`` picks it, and its seed is TextArena's reset
  seed (TextArena's ``State`` seeds the global ``random`` from it). The game is built
  afresh at each reset, and its ``random`` state is kept apart from the process's (swapped in
  around each of its calls, under a lock), so other code's draws between moves do not change
  the game: same seed, same game.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import random
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import textarena as ta

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.multiagent.textarena_games import check_game
from agentgym.envs.multiagent.textarena_spiral import SPIRAL_RULES, GameRules
from agentgym.errors import EnvCrashedError, UsageError
from agentgym.multiagent import RandomPlayer, ReferencePlayer, Seat, TurnBasedEnv
from agentgym.task_env import InvalidAction

__all__ = ["Match", "TextArenaEnv", "observation_seat"]

Message = tuple[int, str, Any]
_RANDOM_LOCK = threading.RLock()
_INVALID_ECHO = "attempted an invalid move"
"""TextArena's own note of an invalid move, left out of the seat's history: the adapter's
feedback says it (with the mistakes left)."""


class DealTask(Task[None]):
    """One deal: the task's seed is TextArena's reset seed."""

    def setup(self, rng: np.random.Generator) -> tuple[None, str]:
        raise NotImplementedError("TextArenaEnv.new_world builds the game from the task seed")

    def validate(self, world: None) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see TextArenaEnv")

    def solve(self, world: None) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


class Match:
    """One TextArena game in play: the game, each seat's messages so far, the valid moves
    made, and the game's own ``random`` state."""

    def __init__(self, game: Any, seed: int) -> None:
        self.game = game
        self.rng_state = random.Random(seed).getstate()
        self.logs: dict[int, list[Message]] = {}
        self.turns = 0
        self.mistake: str | None = None

    @property
    def state(self) -> Any:
        """TextArena's ``State`` of the game."""
        return self.game.state

    @contextlib.contextmanager
    def own_random(self) -> Iterator[None]:
        """Run game code with the game's ``random`` state in the global generator."""
        with _RANDOM_LOCK:
            outer = random.getstate()
            random.setstate(self.rng_state)
            try:
                yield
            finally:
                self.rng_state = random.getstate()
                random.setstate(outer)

    def watch_mistakes(self, allowance: int) -> None:
        """Record each ``set_invalid_move`` reason, and raise the game's own allowance so the
        adapter's limit is the one that forfeits."""
        state = self.state
        original = functools.partial(type(state).set_invalid_move, state)

        def flagged(*args: Any, **kwargs: Any) -> Any:
            reason = kwargs.get("reason", args[0] if args else None)
            self.mistake = str(reason or "the game refused the move")
            return original(*args, **kwargs)

        state.set_invalid_move = flagged
        state.error_allowance = max(allowance, int(getattr(state, "error_allowance", 0) or 0))

    def next_turn(self) -> None:
        """TextArena's per-turn ``get_observation()``: the messages for the seat to move."""
        with self.own_random():
            player, messages = self.game.get_observation()
        self.logs.setdefault(int(player), []).extend(_messages(messages))

    def messages(self, player: int) -> list[Message]:
        """Everything ``player`` has been sent: its history and what waits for its turn."""
        waiting = self.state.observations.get(player, [])
        return [*self.logs.get(player, []), *_messages(waiting)]


def _messages(raw: Any) -> list[Message]:
    kept = []
    for message in raw or []:
        sender, text = int(message[0]), str(message[1])
        kind = message[2] if len(message) > 2 else None
        if kind == ta.ObservationType.GAME_ADMIN and _INVALID_ECHO in text:
            continue
        kept.append((sender, text, kind))
    return kept


class TextArenaEnv(TurnBasedEnv[Match]):
    __doc__ = __doc__
    metadata = {**TurnBasedEnv.metadata, "name": "textarena"}

    def __init__(
        self,
        game: str,
        *,
        num_players: int | None = None,
        max_turns: int = 200,
        max_invalid_actions: int = 3,
        game_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """``game`` is TextArena's id (``"TicTacToe-v0"``); ``num_players`` defaults to the
        game's; ``game_kwargs`` go to the game's constructor (``{"max_rounds": 5}``)."""
        players = num_players or check_game(game)
        if not isinstance(players, int) or players < 2:
            raise UsageError(f"num_players must be an int of 2 or more, got {players!r}")
        if not isinstance(max_invalid_actions, int) or max_invalid_actions < 1:
            raise UsageError(
                f"max_invalid_actions must be a positive int, got {max_invalid_actions!r}"
            )
        self.game_id, self.num_players = game, players
        self.game_kwargs = dict(game_kwargs or {})
        self.max_turns, self.max_invalid_actions = max_turns, max_invalid_actions
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.game_rules: GameRules | None = SPIRAL_RULES.get(game)
        chance = self.game_rules.chance_score if self.game_rules else 0.5
        name = f"textarena_{game.replace('-', '_').lower()}"
        self.metadata = {**self.metadata, "name": name, "chance_score": chance}
        self.tasks = GeneratedTaskSet(
            f"textarena/{game}",
            DealTask,
            ("deal",),
            sizes={"train": 100_000, "dev": 1_000, "test": 1_000},
        )
        super().__init__(**kwargs)

    # ------------------------------------------------------------------ the game

    def new_world(self, task: Any, rng: np.random.Generator) -> Match:
        match = Match(self._build(), task.seed)
        try:
            with match.own_random():
                match.game.reset(num_players=self.num_players, seed=task.seed)
            match.watch_mistakes(self.max_invalid_actions)
            match.next_turn()
        except Exception as error:
            message = (
                f"TextArena's {self.game_id} failed to reset for {self.num_players} players "
                f"(seed {task.seed}): {type(error).__name__}: {error}"
            )
            if self.num_players != check_game(self.game_id):  # the caller's player count
                raise UsageError(f"{message}; does the game allow {self.num_players}?") from error
            raise EnvCrashedError(message) from error
        return match

    def _build(self) -> Any:
        """The bare game, without TextArena's default wrappers: the adapter observes itself."""
        try:
            game = ta.make(self.game_id, **self.game_kwargs)
        except Exception as error:
            raise EnvCrashedError(
                f"TextArena could not build {self.game_id} with {self.game_kwargs}: "
                f"{type(error).__name__}: {error}"
            ) from error
        while isinstance(game, ta.Wrapper):
            game = game.env
        return game

    def act(self, world: Match, agent: str, action: str) -> str:
        if not re.search(r"\w", action):
            raise InvalidAction("the action has no word in it: write your move, e.g. '[4]'")
        before = copy.deepcopy(world.game), world.rng_state
        world.mistake = None
        try:
            with world.own_random():
                world.game.step(action)
        except Exception as error:  # the game's own failure on this text: undo, refuse
            world.game, world.rng_state = before
            world.watch_mistakes(self.max_invalid_actions)
            raise InvalidAction(
                f"the game could not take this move ({type(error).__name__}: {error})"
            ) from error
        if world.mistake is None:
            world.turns += 1
        if not world.state.done:
            world.next_turn()
        if world.mistake is not None:
            raise InvalidAction(world.mistake)
        return ""

    def to_move(self, world: Match) -> str:
        return f"player_{int(world.state.current_player_id)}"

    def outcome(self, world: Match) -> dict[str, float] | None:
        if world.state.done:
            rewards = world.state.rewards or {}
            return _rank_scores([float(rewards.get(i, 0.0)) for i in range(self.num_players)])
        if world.turns >= self.max_turns:
            return dict.fromkeys(self.possible_agents, 0.5)
        return None

    def describe(self, world: Match, agent: str) -> str:
        player = self.possible_agents.index(agent)
        lines = [self._line(world, message) for message in world.messages(player)]
        return _fit(lines, self.max_observation_length - 1_024)

    @staticmethod
    def _line(world: Match, message: Message) -> str:
        sender, text, _ = message
        name = (
            "GAME"
            if sender == ta.GAME_ID
            else world.state.role_mapping.get(sender, f"Player {sender}")
        )
        return f"[{name}] {text}"

    def state_key(self, world: Match) -> str:
        state = world.state
        parts = (self.game_id, state.current_player_id, state.done, state.rewards, state.game_state)
        return re.sub(r" at 0x[0-9a-f]+", "", repr(parts))

    def rules(self) -> str:
        hint = self.game_rules.hint if self.game_rules else ""
        return (
            f"TextArena's {self.game_id} for {self.num_players} players. Your observation is "
            f"the game's own prompt and every message sent to you; reply with your move in "
            f"the game's syntax (usually in square brackets, e.g. '[4]').{hint} An invalid "
            f"move is explained and you move again; {self.max_invalid_actions} invalid moves "
            f"forfeit the game."
        )

    def legal_actions(self, world: Match, agent: str) -> list[str] | None:
        if self.game_rules is None or self.game_rules.legal is None:
            return None
        if world.state.done or self.to_move(world) != agent:
            return []
        return self.game_rules.legal(world.game, self.possible_agents.index(agent))

    def oracle_action(self, agent: str) -> str | None:
        world = self.world
        if world is None or self.game_rules is None or self.outcome(world) is not None:
            return None
        if self.to_move(world) != agent:
            return None
        return self.game_rules.oracle(world.game, self.possible_agents.index(agent))

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        if self.game_rules is None:
            return {"random": lambda: RandomPlayer(legal_moves=_bracketed_options)}
        return self.game_rules.players()


def _rank_scores(rewards: list[float]) -> dict[str, float]:
    """Each seat's share of the other seats it finished above (ties half)."""
    count = len(rewards)
    return {
        f"player_{i}": sum(
            1.0 if mine > other else 0.5 if mine == other else 0.0
            for j, other in enumerate(rewards)
            if j != i
        )
        / (count - 1)
        for i, mine in enumerate(rewards)
    }


def _fit(lines: list[str], budget: int) -> str:
    """The lines within ``budget`` characters: the first (the game's prompt) and the latest."""
    text = "\n".join(lines)
    if len(text) <= budget or len(lines) < 2:
        return text[-budget:] if len(text) > budget else text
    kept: list[str] = []
    room = budget - len(lines[0]) - 80
    for line in reversed(lines[1:]):
        if len(line) + 1 > room:
            break
        kept.append(line)
        room -= len(line) + 1
    left_out = len(lines) - 1 - len(kept)
    return "\n".join([lines[0], f"[... {left_out} earlier messages left out ...]", *reversed(kept)])


def _bracketed_options(env: Any, agent: str) -> list[str]:
    """The bracketed moves the seat's latest messages name (``'[0]'``, ``'[check]'``): the
    ``"random"`` player's guesses in a game whose legal moves the adapter cannot list."""
    game: TextArenaEnv = env.unwrapped
    assert game.world is not None
    messages = game.world.messages(game.possible_agents.index(agent))
    for _, text, _ in reversed(messages):
        options = [
            o for o in re.findall(r"\[[^\[\]\n]{1,40}\]", text) if not o.startswith("[Player")
        ]
        if options:
            return list(dict.fromkeys(options))
    return ["[pass]"]


def observation_seat(reply: Callable[[str], str]) -> Seat:
    """A :func:`~agentgym.multiagent.play_game` seat from ``reply(observation) -> move``: a
    model prompted with the seat's own observation (its instructions are in it)."""

    def seat(env: Any, agent: str) -> str:
        return reply(str(env.observe(agent)))

    return seat
