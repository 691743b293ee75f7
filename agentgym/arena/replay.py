"""Re-score a match by playing its moves again: the arena's equivalent of the leaderboard's
replay re-scoring of single-agent runs.

A :class:`~agentgym.arena.MatchRecord` carries what started the game (``env_id``, ``seed``,
``task_id``) and every turn's moves (``{seat: action}``, as :class:`~agentgym.multiagent.
GameResult` records them). :func:`replay` plays those moves in a fresh env through
:func:`~agentgym.multiagent.play_game` itself, each seat served the recorded text, so the
scores it returns are the game's own verdicts, computed the way the arena computed them. A
record whose moves cannot be played as written (a seat moving out of turn, moves left over
after the game ended, the game unfinished when they run out) or whose claimed scores are not
the game's is refused with :class:`ReplayMismatch`, naming the match and the first turn
where the record and the game part.

A move the game calls invalid is not a mismatch: an invalid action is feedback inside the
game (counted, and a forfeit after the game's limit), so it replays the same way.

A record with a ``forfeit`` (an agent that failed: its seat forfeited and the match stopped,
:mod:`agentgym.arena.match`) replays its moves too, and must be what such a stop leaves: the
game still going after them, the forfeiting seat one the game asks to move next, that seat
not a reference player's (the replay checks a reference player's moves, so it cannot have
failed), and the scores :func:`~agentgym.arena.records.forfeit_scores`' (the seat 0, every
other seat 1). Otherwise a record could stop a game it was losing and call it the
opponent's forfeit.

A seat held by one of the game's reference players (``solver``, ``stockfish-skill-5``,
``random``: the arena seats a reference player under that name whenever the name is one)
must have played that player's moves: the replay asks the real player at each of its turns
and refuses the record where the recorded move differs. Otherwise a record could credit an
agent with a win over ``solver`` whose moves it wrote itself. The players are deterministic
given the game's seed, so an honest record passes as long as the reference player is the one
it was played with: a game that changes a player's moves under the same name (its version
history says so) leaves older records of that player unreplayable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pettingzoo

from agentgym.arena.records import MatchRecord, forfeit_scores
from agentgym.errors import AgentGymError, UsageError
from agentgym.multiagent import GameResult, ReferencePlayer, play_game
from agentgym.registry import make_multi

__all__ = ["ReplayMismatch", "replay"]


class ReplayMismatch(AgentGymError, ValueError):
    """A match record that its game does not bear out: ``turn`` (1-based) is the first turn
    where record and game part, ``None`` when the record cannot start a game at all."""

    def __init__(self, match_id: str, turn: int | None, reason: str) -> None:
        where = f"turn {turn}" if turn is not None else "the start"
        super().__init__(f"match {match_id!r} does not replay (at {where}): {reason}")
        self.match_id = match_id
        self.turn = turn
        self.reason = reason


def replay(record: MatchRecord, *, env: Any | None = None) -> MatchRecord:
    """Play ``record``'s moves again from its seed and task; the record with the scores the
    game gives. Raises :class:`ReplayMismatch` when the moves or the claimed scores are not
    what the game makes of them.

    ``env`` (a :func:`~agentgym.registry.make_multi` env of ``record.env_id``) is reused when
    given, and left in the game's final state so the caller can show it (``render()``); by
    default a fresh env is made and closed.
    """
    if record.seed is None:
        raise ReplayMismatch(record.match_id, None, "the record has no seed to start the game")
    if not record.moves and record.forfeit is None:  # a forfeit may come before any move
        raise ReplayMismatch(record.match_id, None, "the record has no moves")
    game = make_multi(record.env_id) if env is None else env
    try:
        result = _play(record, game, record.seed)
        to_move, references = _to_move(game), set(game.unwrapped.reference_players())
    finally:
        if env is None:
            game.close()
    _compare_moves(record, result)
    if record.forfeit is None:
        outcome = result.outcome
    else:
        _check_forfeit(record, references, to_move)
        outcome = forfeit_scores(record.seats, record.forfeit.seat)
    _compare_scores(record, outcome)
    return dataclasses.replace(record, scores=dict(outcome))


def _to_move(env: Any) -> list[str]:
    """The agents the game asks to move next: an AEC game's agent to move, every live
    agent of a simultaneous one."""
    game = env.unwrapped
    if isinstance(game, pettingzoo.ParallelEnv):
        return list(game.agents)
    return [str(game.agent_selection)] if game.agents else []


def _check_forfeit(record: MatchRecord, references: set[str], to_move: list[str]) -> None:
    """A forfeit stops a game that is still going, on the move of a seat that an agent, not a
    reference player, holds."""
    assert record.forfeit is not None
    seat, turn = record.forfeit.seat, len(record.moves) + 1
    player = record.seats[seat]
    if player in references:
        raise ReplayMismatch(
            record.match_id,
            turn,
            f"seat {seat} forfeits, but it is the reference player {player!r}: the replay "
            "checks that player's moves, so it cannot have failed",
        )
    if seat not in to_move:
        raise ReplayMismatch(
            record.match_id,
            turn,
            f"seat {seat} ({player}) forfeits, but the game asks {to_move} to move",
        )


def _play(record: MatchRecord, env: Any, seed: int) -> GameResult:
    agents = list(env.possible_agents)
    if sorted(record.seats) != sorted(agents):
        raise ReplayMismatch(
            record.match_id,
            None,
            f"its seats {sorted(record.seats)} are not {record.env_id}'s agents {agents}",
        )
    factories = env.unwrapped.reference_players()
    referees = {seat: factories[name]() for seat, name in record.seats.items() if name in factories}
    script = _Script(record.match_id, record.moves, referees, dict(record.seats))
    try:
        return play_game(
            env,
            dict.fromkeys(agents, script),
            seed,
            task_id=record.task_id or None,
            max_turns=len(record.moves),
        )
    except _Diverged as diverged:
        raise ReplayMismatch(record.match_id, diverged.turn, diverged.reason) from None
    except (AgentGymError, KeyError) as error:  # an unknown task id, a move the env refuses
        raise ReplayMismatch(record.match_id, script.turn, str(error)) from None
    finally:
        for player in referees.values():
            player.close()


def _compare_moves(record: MatchRecord, result: GameResult) -> None:
    """The game must have played exactly the recorded turns, ending on the last one."""
    for turn, (recorded, played) in enumerate(zip(record.moves, result.moves, strict=False), 1):
        if dict(recorded) != played:
            raise ReplayMismatch(
                record.match_id,
                turn,
                f"the record has {sorted(recorded)} moving, the game asked {sorted(played)}",
            )
    if len(result.moves) < len(record.moves):
        raise ReplayMismatch(
            record.match_id,
            len(result.moves) + 1,
            f"the game ended after turn {len(result.moves)} but the record has "
            f"{len(record.moves)} turns",
        )
    if record.forfeit is None and not result.finished:
        raise ReplayMismatch(
            record.match_id,
            len(record.moves),
            f"the game is not over after the record's {len(record.moves)} turns",
        )
    if record.forfeit is not None and result.finished:
        raise ReplayMismatch(
            record.match_id,
            len(record.moves),
            f"the game is over after the record's {len(record.moves)} turns, so seat "
            f"{record.forfeit.seat} cannot forfeit it",
        )


def _compare_scores(record: MatchRecord, outcome: Mapping[str, float]) -> None:
    source = "in the game" if record.forfeit is None else "by the forfeit"
    for seat in record.seats:
        if record.scores[seat] != outcome[seat]:
            raise ReplayMismatch(
                record.match_id,
                len(record.moves),
                f"seat {seat} ({record.seats[seat]}) scores {outcome[seat]:g} {source}, "
                f"the record claims {record.scores[seat]:g}",
            )


class _Diverged(Exception):
    def __init__(self, turn: int, reason: str) -> None:
        super().__init__(reason)
        self.turn = turn
        self.reason = reason


class _Script:
    """Every seat of the replayed game: hands the game the recorded text for the agent it
    asks. A turn is over once each of its recorded seats has moved (one in a turn-based
    game, every live one in a simultaneous round), or when a seat is asked twice. A seat in
    ``referees`` (a reference player's) must have recorded the move that player makes."""

    def __init__(
        self,
        match_id: str,
        moves: Sequence[Mapping[str, str]],
        referees: Mapping[str, ReferencePlayer] | None = None,
        names: Mapping[str, str] | None = None,
    ) -> None:
        self.match_id = match_id
        self.moves = moves
        self.referees = dict(referees or {})
        self.names = dict(names or {})
        self.turn = 1
        self._served: set[str] = set()

    def __call__(self, env: Any, agent: str) -> str:
        current = self.moves[self.turn - 1]
        if agent in self._served or self._served >= set(current):
            if self.turn == len(self.moves):
                raise _Diverged(self.turn + 1, f"the game asks {agent} to move; the record ends")
            self.turn, self._served = self.turn + 1, set()
            current = self.moves[self.turn - 1]
        if agent not in current:
            raise _Diverged(
                self.turn, f"the game asks {agent} to move; the record has {sorted(current)}"
            )
        action = current[agent]
        if not isinstance(action, str):
            raise UsageError(f"the recorded move of {agent} is not text: {action!r:.80}")
        referee = self.referees.get(agent)
        if referee is not None:
            played = referee.act(env, agent)
            if played != action:
                raise _Diverged(
                    self.turn,
                    f"seat {agent} is the reference player {self.names.get(agent)!r}, which "
                    f"plays {played!r:.80} here; the record has {action!r:.80}",
                )
        self._served.add(agent)
        return action
