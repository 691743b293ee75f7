"""Seating: one agent in one seat of a multi-agent game, the other seats played by the game's
reference players, as an ordinary single-agent Gymnasium env.

A seated game is what the whole single-agent stack plays: the evaluator, its ledger and
reports, the benchmarks, ``agentgym play`` for a person, the trainers. It is built by
:func:`agentgym.make` from a multi-agent id with an ``opponent``::

    env = agentgym.make("multiagent/Chess-v0", opponent="stockfish-skill-0")
    env = agentgym.make("multiagent/Taboo-v0", opponent="cautious", seat="defender_0")

:class:`SeatedEnv` keeps the single-agent contract:

* ``reset(seed=, options=)`` resets the game (the same seed and options: the game's own
  :class:`~agentgym.core.TaskSet`, so ``task_id``, splits and ``--tasks`` work) and plays the
  opponents until it is the seat's turn; ``step(action)`` plays the agent's action, then the
  opponents', until the seat's turn comes again or the game ends.
* The observation is the seat's own view, with the opponents' moves as the game shows them
  (a board after their move, a message they sent; nothing private of theirs).
* A game the opponents end before the seat's first turn (a midgame position they win in one
  move) ends at the seat's first step, whatever it writes: every episode has a step.
* An invalid action is the game's feedback, unchanged: the seat moves again, told why, and
  the game's mistake limit forfeits it.
* ``info`` is the seat's info from the game, its ``legal_actions`` (where the game lists
  them) under the single-agent name ``admissible_actions``, with ``seat``, ``opponents``
  and, every step, a ``verdict``: the game's verdict for the seat once the game is over,
  and before that a provisional one (score 0, not passed). Pass or fail is the game's own
  verdict: a win in the board games, chips won in poker, a deal the seat negotiated (its own
  proposal, accepted, worth at least its Nash share) in negotiation, a win of the attacker's
  or the defender's side in taboo.
* The reward is the change in the verdict's score, as in every single-agent env (0 until
  the end, then the seat's score in ``[0, 1]``), so an episode's return equals its score;
  the game's own reward for the seat (+1 win, -1 loss, 0 draw) is ``info["game_reward"]``.
* The opponents are deterministic given the reset seed: each is made afresh per game by the
  game's factory, and the reference players draw their randomness from the game's reset
  seed (:class:`~agentgym.multiagent.RandomPlayer`, the poker players), or play the
  position alone (engines, solvers, bots). A reset without a seed draws one from the env's
  generator, so the game is still replayable from ``info["game_seed"]``.

**The seat** is a seat name (``"player_0"``) or ``"alternate"`` (the default): the seat is
then chosen by the episode's task, so an evaluation plays every side equally. A task's
position is the number its id ends with (``test/empty/3``: 3, counted within each
difficulty, plus the difficulty's place among the task set's levels, so that the first tasks
of the levels do not all take the same side), or else its place in its split's list of ids
(chess's named openings), and the seat is ``possible_agents[position % len(possible_agents)]``:
consecutive tasks of a suite alternate sides, and the repeats of one task
(``episodes_per_task``) play the same side.

**The opponents** are one reference player's name for every other seat, or a dict
``{seat: name}`` naming one for each other seat (every seat, with ``"alternate"``). The
names are the game's :meth:`~agentgym.multiagent.TurnBasedEnv.reference_players`; an
unknown one is a :class:`~agentgym.errors.UsageError` that lists them.

Why not a full conformance check: the single-agent checker's ``oracle`` check asks the
oracle to reach the maximum score on every task, but a seated game against a reference
player is a contest, not a puzzle with a proven solution (the oracle is the game's own
engine for the seat, which may draw or lose). The API, info, determinism, bad-action and
close checks apply and pass (``tests/multiagent/test_seating.py``).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pettingzoo

from agentgym.core import Env, Task, Verdict
from agentgym.errors import ResetNeeded, UsageError
from agentgym.multiagent import ReferencePlayer
from agentgym.spaces import Text
from agentgym.task_env import RESET_OPTIONS, clean_text

__all__ = ["ALTERNATE", "SeatedEnv", "seat_kwargs"]

ALTERNATE = "alternate"
"""The seat that follows the episode's task, so that a suite plays every side equally."""

PENDING = Verdict(score=0.0, passed=False, details="the game is not over")
"""The verdict every step carries until the game ends."""


class SeatedEnv(Env[str, str]):
    """One seat of a multi-agent game against reference players; see the module docstring.

    Args:
        game: the multi-agent env (AEC or parallel, e.g. from
            :func:`~agentgym.registry.make_multi`); the seated env owns and closes it.
        opponent: a reference player's name for every other seat, or ``{seat: name}``.
        seat: the agent's seat, or ``"alternate"`` (by the task: see the module docstring).
        render_mode: ``"ansi"`` (``render()`` returns the seat's last observation) or None.
    """

    metadata: dict[str, Any] = dict(Env.metadata)  # no snapshot: the game holds engine processes

    def __init__(
        self,
        game: Any,
        opponent: str | Mapping[str, str],
        seat: str = ALTERNATE,
        render_mode: str | None = None,
    ) -> None:
        self.game = game
        self._game: Any = game.unwrapped
        self.seats: list[str] = list(self._game.possible_agents)
        if seat != ALTERNATE and seat not in self.seats:
            raise UsageError(
                f"seat={seat!r} is not a seat of {type(self._game).__name__}; its seats are "
                f"{self.seats}, or {ALTERNATE!r} (the side follows the task)"
            )
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode={render_mode!r} is not supported; use 'ansi' or None")
        self.seat_choice, self.render_mode = seat, render_mode
        self.metadata = dict(type(self).metadata)  # free_text_actions is set per game at reset
        if "chance_score" in game.unwrapped.metadata:  # what a guess earns in this game
            self.metadata["chance_score"] = game.unwrapped.metadata["chance_score"]
        self.opponents = self._opponent_names(opponent)
        self.tasks = self._game.tasks
        self.parallel = isinstance(self._game, pettingzoo.ParallelEnv)
        self.observation_space = Text(self._game.max_observation_length)
        self.action_space = Text(self._game.max_action_length)
        self.seat: str | None = None  # this episode's seat
        self._players: dict[str, ReferencePlayer] = {}
        self._observation = ""
        self._infos: dict[str, dict[str, Any]] = {}  # a parallel game's last infos
        self._done = True

    def _opponent_names(self, opponent: str | Mapping[str, str]) -> dict[str, str]:
        """``{seat: name}`` for every seat an opponent may sit in, each name checked."""
        available = sorted(self._game.reference_players())
        fixed = [] if self.seat_choice == ALTERNATE else [self.seat_choice]
        others = [s for s in self.seats if s not in fixed]
        if isinstance(opponent, str):
            names = dict.fromkeys(others, opponent)
        elif isinstance(opponent, Mapping):
            names = {str(s): n for s, n in opponent.items()}
            missing, unknown = sorted(set(others) - set(names)), sorted(set(names) - set(others))
            if missing or unknown:
                raise UsageError(
                    f"opponent={dict(opponent)!r} must name a player for each of the seats "
                    f"{others} (seat={self.seat_choice!r}); missing {missing}, unknown {unknown}"
                )
        else:
            raise UsageError(
                f"opponent must be a reference player's name or a dict seat -> name, got "
                f"{type(opponent).__name__} {opponent!r:.60}"
            )
        for name in names.values():
            if name not in available:
                raise UsageError(
                    f"{type(self._game).__name__} has no reference player {name!r}; "
                    f"its players are {', '.join(available)}"
                )
        return names

    # ------------------------------------------------------------------ the Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a game (``options``: the game's ``task_id`` or ``split``/``difficulty``) and
        play the opponents up to the seat's first turn."""
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise UsageError(f"reset(seed=...) takes an int or None, got {type(seed).__name__}")
        _check_options(options)
        super().reset(seed=seed)
        self._close_players()
        game_seed = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        reset = self.game.reset(seed=game_seed, options=dict(options) if options else None)
        self.seat = self._choose_seat(self._game.task)
        # A game that cannot list its moves (a negotiation's messages) takes free text.
        listed = self._game.legal_actions(self._game.world, self.seat)
        self.metadata["free_text_actions"] = listed is None
        factories = self._game.reference_players()
        self._players = {s: factories[self.opponents[s]]() for s in self.seats if s != self.seat}
        self._done = False
        if self.parallel:
            observations, self._infos = reset
            self._observation = observations[self.seat]
        else:
            self._play_opponents()
        observation, _, _, _, info = self._result()
        self._done = False  # a game over already still takes the seat's one step
        info["instructions"] = self._instructions(info)
        info["game_seed"] = game_seed
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play the agent's action, then the opponents' until the seat's turn or the end."""
        if self.seat is None:
            raise ResetNeeded("call reset() before step()")
        if self._done:
            raise ResetNeeded("the game has ended (terminated or truncated); call reset()")
        if self._over():  # the opponents ended the game before the seat's first turn
            return self._result()
        if not isinstance(action, str):
            raise UsageError(
                f"step() takes the agent's action as a str, got {type(action).__name__} "
                f"{action!r:.80}. Pass the text the agent wrote; the game parses it."
            )
        action = clean_text(action)
        if self.parallel:
            moves = {
                s: p.act(self.game, s) for s, p in self._players.items() if s in self.game.agents
            }
            observations, _, _, _, self._infos = self.game.step({self.seat: action, **moves})
            self._observation = observations[self.seat]
        else:
            self.game.step(action)
            self._play_opponents()
        return self._result()

    def render(self) -> str | None:
        """The seat's last observation (``ansi``)."""
        return self._observation if self.seat is not None else None

    def close(self) -> None:
        """Close the opponents' players and the game; idempotent."""
        self._close_players()
        self.game.close()
        self.seat, self._done = None, True

    def oracle_action(self) -> str | None:
        """The game's non-LLM policy for the seat (its engine, solver or bot)."""
        if self.seat is None:
            raise ResetNeeded("call reset() before oracle_action()")
        action: str | None = self._game.oracle_action(self.seat)
        return action

    # ------------------------------------------------------------------ the game

    def _choose_seat(self, task: Task[Any]) -> str:
        """The episode's seat: the fixed one, or the task's position's (``"alternate"``)."""
        if self.seat_choice != ALTERNATE:
            return self.seat_choice
        last = task.id.rsplit("/", 1)[-1]
        levels = list(self.tasks.difficulties)
        if last.isdigit():  # staggered by level: a suite's first task of each level differ
            position = int(last) + (
                levels.index(task.difficulty) if task.difficulty in levels else 0
            )
        else:
            ids = list(self.tasks.ids(task.split))
            position = ids.index(task.id) if task.id in ids else zlib.crc32(task.id.encode())
        return self.seats[position % len(self.seats)]

    def _play_opponents(self) -> None:
        """The opponents' turns of a turn-based game, until the seat's turn or the end."""
        assert self.seat is not None
        while not self._over() and self.game.agent_selection != self.seat:
            mover = self.game.agent_selection
            self.game.step(self._players[mover].act(self.game, mover))
        self._observation = self.game.observe(self.seat)

    def _over(self) -> bool:
        if self.parallel:
            return not self.game.agents
        return bool(self._game.terminations[self.seat] or self._game.truncations[self.seat])

    def _result(self) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """The step's tuple for the seat, from the game as it is now."""
        assert self.seat is not None
        game_info = self._infos if self.parallel else self._game.infos
        info = dict(game_info.get(self.seat, {}))
        found = info.get("verdict")
        over = self._over()
        terminated = over and isinstance(found, Verdict)
        truncated = over and not terminated
        verdict = found if terminated and isinstance(found, Verdict) else PENDING
        info["verdict"] = verdict
        if terminated:
            info["game_reward"] = 2.0 * verdict.score - 1.0
        self._done = over
        reward = verdict.score if over else 0.0
        task = self._game.task
        info.update(split=task.split, difficulty=task.difficulty, seat=self.seat)
        info["opponents"] = {s: self.opponents[s] for s in self._players}
        if "legal_actions" in info:  # the single-agent name for the same list
            info["admissible_actions"] = list(info.pop("legal_actions"))
        return str(self._observation), float(reward), terminated, truncated, info

    def _instructions(self, info: Mapping[str, Any]) -> str:
        rules = str(self._game.rules())
        against = ", ".join(f"{s}: {n}" for s, n in info["opponents"].items())
        return f"{rules}\n\nYou play {self.seat}; the other seats are played by {against}."

    def _close_players(self) -> None:
        players, self._players = self._players, {}
        for player in players.values():
            player.close()


def _check_options(options: Any) -> None:
    """The reset options a single-agent env takes: ``task_id``, ``split``, ``difficulty``
    (a multi-agent game ignores keys it does not know; a single-agent env refuses them)."""
    if options is None:
        return
    if not isinstance(options, Mapping):
        raise UsageError(f"reset(options=...) takes a dict or None, got {type(options).__name__}")
    unknown = sorted(set(options) - set(RESET_OPTIONS))
    if unknown:
        raise UsageError(
            f"unknown reset option(s) {unknown}; a seated game accepts {list(RESET_OPTIONS)}"
        )


def seat_kwargs(opponents: Sequence[str], seat: str | None) -> dict[str, Any]:
    """The env kwargs of the command line's ``--opponent`` and ``--seat`` (``agentgym eval``,
    ``agentgym play``): ``--opponent NAME`` once for every other seat, or ``--opponent
    SEAT=NAME`` once per seat; none at all for a single-agent env."""
    if not opponents:
        if seat is not None:
            raise UsageError("--seat goes with --opponent (the players in the other seats)")
        return {}
    pairs = [value.partition("=") for value in opponents]
    if not any(equals for _, equals, _ in pairs):
        if len(opponents) > 1:
            raise UsageError(
                f"--opponent {' --opponent '.join(opponents)}: give one NAME for every other "
                f"seat, or SEAT=NAME for each seat"
            )
        opponent: str | dict[str, str] = opponents[0]
    elif all(equals and name and player for name, equals, player in pairs):
        opponent = {name.strip(): player.strip() for name, _, player in pairs}
    else:
        raise UsageError(
            f"--opponent {' --opponent '.join(opponents)}: write either one NAME or SEAT=NAME "
            f"for each seat, not both"
        )
    return {"opponent": opponent} | ({} if seat is None else {"seat": seat})
