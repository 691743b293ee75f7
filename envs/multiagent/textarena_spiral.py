"""What the adapter knows of SPIRAL's three TextArena games beyond TextArena itself: their
legal moves, an oracle per seat and reference players, read from the game's state.

* ``TicTacToe-v0``: the free cells (``'[4]'``); the oracle is perfect play (the minimax of
  ``tictactoe.py``; TextArena's player 0 is ``O`` and moves first). Players ``random``,
  ``solver``.
* ``KuhnPoker-v0``: the moves of the betting tree (``'[check]'``, ``'[bet]'``, ``'[call]'``,
  ``'[fold]'``); the oracle bets and calls with a king, calls with a queen, checks or folds
  with a jack. Players ``random``, ``card-rule``.
* ``SimpleNegotiation-v0``: free text with bracketed moves, so no legal-move list. The game
  is won by the larger gain in inventory value, so the oracle accepts an offer it can pay that
  gains it more than the proposer can gain (whatever values TextArena drew for it: base
  values plus or minus 20%), and otherwise offers goods for one good where the other side
  gains at the base values and it gains more than the other side can. Players ``random`` (a
  random choice of deny, accept when it can pay, or an offer even at the base values) and
  ``trader`` (the oracle).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentgym.envs.multiagent.players import PolicyPlayer
from agentgym.envs.multiagent.tictactoe import minimax
from agentgym.multiagent import RandomPlayer, ReferencePlayer

__all__ = ["SPIRAL_RULES", "GameRules"]


@dataclass(frozen=True)
class GameRules:
    """One game's extras: ``legal(game, player)`` (``None`` for free text), ``oracle(game,
    player)``, the named reference players, the chance score a blind seat may reach, and a
    line for the instructions."""

    oracle: Callable[[Any, int], str]
    legal: Callable[[Any, int], list[str]] | None
    extra_players: dict[str, Callable[[Any, int], str]]
    chance_score: float
    hint: str = ""
    random_moves: Callable[[Any, int], list[str]] | None = None

    def players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        """``random`` and the game's own players, by name."""
        moves = self.random_moves
        random_player: Callable[[], ReferencePlayer] = (
            RandomPlayer if moves is None else lambda: RandomPlayer(legal_moves=_on_game(moves))
        )
        named = {name: _policy_player(name, policy) for name, policy in self.extra_players.items()}
        return {"random": random_player, **named}


def _seat(env: Any, agent: str) -> tuple[Any, int]:
    game = env.unwrapped
    return game.world.game, game.possible_agents.index(agent)


def _on_game(policy: Callable[[Any, int], Any]) -> Callable[[Any, str], Any]:
    return lambda env, agent: policy(*_seat(env, agent))


def _policy_player(name: str, policy: Callable[[Any, int], str]) -> Callable[[], ReferencePlayer]:
    return lambda: PolicyPlayer(name, _on_game(policy))


# ---------------------------------------------------------------- tic-tac-toe


def _board(game: Any) -> list[str]:
    return [cell for row in game.state.game_state["board"] for cell in row]


def _free_cells(game: Any, player: int) -> list[str]:
    return [f"[{i}]" for i, cell in enumerate(_board(game)) if cell == ""]


def _perfect_cell(game: Any, player: int) -> str:
    """Minimax over the board as ``tictactoe.py`` writes it: the first mover (TextArena's
    ``O``) as ``X``."""
    board = "".join({"": ".", "O": "X", "X": "O"}[cell] for cell in _board(game))
    return f"[{minimax(board)[1]}]"


# ---------------------------------------------------------------- Kuhn poker


def _betting_moves(game: Any, player: int) -> list[str]:
    tree = game.state.game_state["current_legal_action_tree"]
    return [f"[{move}]" for move in tree] if isinstance(tree, dict) else []


def _card_rule(game: Any, player: int) -> str:
    card = game.state.game_state["player_cards"][player]  # 0 J, 1 Q, 2 K
    tree = game.state.game_state["current_legal_action_tree"]
    if "call" in tree:
        return "[call]" if card >= 1 else "[fold]"
    return "[bet]" if card == 2 else "[check]"


# ---------------------------------------------------------------- simple negotiation


def _pending_offer(game: Any, player: int) -> dict[str, Any] | None:
    offer = game.state.game_state["current_offer"]
    return offer if offer and offer["from_player"] != player else None


def _can_pay(game: Any, player: int, goods: dict[str, int]) -> bool:
    mine = game.state.game_state["player_resources"][player]
    return all(mine.get(name, 0) >= count for name, count in goods.items())


def _worth(game: Any, player: int, goods: dict[str, int]) -> int:
    values = game.state.game_state["player_values"][player]
    return sum(values[name] * count for name, count in goods.items())


def _trader(game: Any, player: int) -> str:
    offer = _pending_offer(game, player)
    if offer and _can_pay(game, player, offer["requested_resources"]):
        given, asked = offer["offered_resources"], offer["requested_resources"]
        gain = _worth(game, player, given) - _worth(game, player, asked)
        if gain > max(0, _their_best_gain(game, received=asked, paid=given)):
            return "[Accept]"
    best = _best_offer(game, player)
    return "[Deny]" if best is None else f"[Deny] [Offer: {best[0]} {best[1]} -> 1 {best[2]}]"


def _value_range(game: Any, name: str) -> tuple[int, int]:
    """The values TextArena may have drawn for a good: its base value, plus or minus 20%,
    within 5 to 40."""
    base = game.base_values[name]
    return max(base - int(0.2 * base), 5), min(base + int(0.2 * base), 40)


def _their_best_gain(game: Any, received: dict[str, int], paid: dict[str, int]) -> int:
    """The most the other side can gain from receiving ``received`` for ``paid``."""
    return sum(_value_range(game, name)[1] * n for name, n in received.items()) - sum(
        _value_range(game, name)[0] * n for name, n in paid.items()
    )


def _best_offer(game: Any, player: int) -> tuple[int, str, str] | None:
    """``(count, give, take)``: ``count`` of ``give`` for one ``take`` that the other side
    should take (it gains at the base values) and that gains us more than it can gain them
    whatever their values (the game is won by the larger gain); the one of the largest lead."""
    mine = game.state.game_state["player_resources"][player]
    values, base = game.state.game_state["player_values"][player], game.base_values
    best, best_lead = None, 0
    for give in game.resource_names:
        for take in game.resource_names:
            for count in range(1, min(5, mine[give]) + 1):
                if give == take or count * base[give] < base[take]:
                    continue
                theirs = _their_best_gain(game, received={give: count}, paid={take: 1})
                lead = values[take] - count * values[give] - theirs
                if lead > best_lead:
                    best, best_lead = (count, give, take), lead
    return best


def _negotiation_moves(game: Any, player: int) -> list[str]:
    """Moves the game takes from ``player`` now: deny, accept an offer it can pay, or an offer
    of goods for goods of another kind worth the same at TextArena's base values (3 Wood for 2
    Sheep), so that a random offer gives nothing away on average."""
    moves = ["[Deny]"]
    offer = _pending_offer(game, player)
    if offer and _can_pay(game, player, offer["requested_resources"]):
        moves.append("[Accept]")
    mine, base = game.state.game_state["player_resources"][player], game.base_values
    for give in game.resource_names:
        for take in game.resource_names:
            common = math.gcd(base[give], base[take])
            count, wanted = base[take] // common, base[give] // common
            if give != take and mine[give] >= count:
                moves.append(f"[Offer: {count} {give} -> {wanted} {take}]")
    return moves


SPIRAL_RULES: dict[str, GameRules] = {
    "TicTacToe-v0": GameRules(
        oracle=_perfect_cell,
        legal=_free_cells,
        extra_players={"solver": _perfect_cell},
        chance_score=0.0,
        hint=" Moves name a cell 0-8, e.g. '[4]' for the centre.",
    ),
    "KuhnPoker-v0": GameRules(
        oracle=_card_rule,
        legal=_betting_moves,
        extra_players={"card-rule": _card_rule},
        chance_score=0.5,
        hint=" Moves are '[check]', '[bet]', '[call]' and '[fold]'.",
    ),
    "SimpleNegotiation-v0": GameRules(
        oracle=_trader,
        legal=None,
        extra_players={"trader": _trader},
        chance_score=0.5,
        hint=" Talk freely; '[Offer: 2 Wood -> 1 Brick]' offers, '[Accept]' and '[Deny]' answer.",
        random_moves=_negotiation_moves,
    ),
}
"""The extras of SPIRAL's three games, by TextArena id."""
