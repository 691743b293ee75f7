"""Kuhn poker, Leduc hold'em and limit Texas hold'em for two text agents (PettingZoo AEC over
OpenSpiel's games).

OpenSpiel (``pyspiel``) keeps the rules: who acts, what is legal, the pot and the payoffs. This
module deals the cards, writes each agent's private view in words and reads the actions a model
writes.

**Games.** *Kuhn poker*: a deck of J, Q, K; each player antes 1 chip and gets one card; one
betting round with bets of 1 chip and no raises; at a showdown the higher card wins the pot.
*Leduc hold'em*: a deck of two J, two Q and two K; each player antes 1 and gets one private
card; two betting rounds (bets of 2 chips in the first, 4 in the second, at most two bets or
raises a round); a public card is dealt between them; at a showdown a pair with the public card
wins, else the higher card, and equal ranks split the pot. *Limit hold'em*: heads-up limit
Texas hold'em (OpenSpiel's ``universal_poker``): blinds 10 (player_0) and 5 (player_1), two
private cards, the flop, turn and river, bets of 10 then 20, at most 3 raises pre-flop and 4
a round after; the best five cards of seven win.

**What each agent sees.** Its own cards, the public cards dealt so far, the betting so far in
words (``you check, the opponent bets``), the pot and what each player has put in, and the
actions it may take now. Never the opponent's cards: a showdown is reported as the chips won.

**What it may do.** ``fold``, ``check``, ``call``, ``bet`` or ``raise``, whichever are legal now;
the last such word in the reply's last line is read, so ``I call`` and ``Raise.`` work. Poker's
synonyms are read by the situation: with no bet to face, ``call`` checks, ``raise`` bets and
``pass`` checks; facing a bet, ``bet`` raises and ``pass`` folds. Anything else (``check`` facing a
bet, a raise when the round's raises are used up) is an invalid action with the legal actions
listed; three mistakes forfeit.

**Scoring.** The hand's chip result (OpenSpiel's returns) maps into ``[0, 1]`` as
``(payoff + M) / (2 M)`` with ``M`` the most a hand can win (Kuhn 2, Leduc 13, hold'em 240), so
breaking even is 0.5; the env's reward is ``payoff / M`` and ``info["payoff"]`` is the raw chip
result. ``verdict.passed`` means the agent won chips (``payoff > 0``). A forfeit scores 0 (and
1 for the other player) without a payoff.

**Tasks.** A task is one deal: its seed shuffles the deck, and the cards are dealt from the top
(player_0's, player_1's, then the public cards), so a task id fixes every card whatever the
betting, and ``reset(seed=)`` picks a task, so the same seed gives the same deal. One hand says
little: measure a player over many tasks, in both seats on each (duplicate poker, which cancels
the luck of the cards). Tasks have one difficulty, ``hand``.

**Reference players.** ``random`` (the base's: uniform over the legal actions); for Kuhn and
Leduc ``cfr``, OpenSpiel's CFR+ average policy: Kuhn's is solved on first use (200 iterations,
well under a second), Leduc's read from ``data/leduc_cfr.json``, written by ``python -m
agentgym.envs.multiagent.poker leduc``; for hold'em (far too big for CFR here) ``equity``, which
estimates its hand's chance against a random hand by sampling the unseen cards and bets,
calls on pot odds or folds. They draw from their own seeded generators. The oracle is the
strongest of them, its chance drawn from the task seed and what the seat knows, so the same
situation gets the same action.

**Version history.** v0: first release.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as spiel_policy
from open_spiel.python.algorithms import cfr, exploitability

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.errors import UsageError
from agentgym.multiagent import ReferencePlayer, Seat, TurnBasedEnv, play_game
from agentgym.task_env import InvalidAction

PLAYERS = ("player_0", "player_1")
DATA = Path(__file__).parent / "data"
Table = dict[str, dict[int, float]]
"""A policy: information-state string -> {OpenSpiel action id: probability}."""


def _kuhn_chips(state: Any) -> tuple[float, float]:
    """Kuhn's ante of 1 plus each 1-chip bet (action 1; player_0 acts at even turns)."""
    bets = [0, 0]
    for i, action in enumerate(state.history()[2:]):
        bets[i % 2] += action
    return 1.0 + bets[0], 1.0 + bets[1]


def _leduc_chips(state: Any) -> tuple[float, float]:
    """Each player's 100-chip stack less the money left, from the public information."""
    money = re.search(r"\[Money: (\d+) (\d+)\]", state.information_state_string(0))
    assert money, "OpenSpiel's Leduc information state names each player's money"
    return 100.0 - float(money[1]), 100.0 - float(money[2])


def _holdem_chips(state: Any) -> tuple[float, float]:
    """universal_poker prints what each player has spent (blinds included)."""
    spent = re.search(r"Spent: \[P0: (\d+)\s+P1: (\d+)", str(state))
    assert spent, "OpenSpiel's universal_poker state prints each player's spending"
    return float(spent[1]), float(spent[2])


@dataclass(frozen=True, eq=False)  # hashed by identity: one object per game
class PokerGame:
    """What differs between the poker games: OpenSpiel's game, its cards, chips and words."""

    spiel_name: str
    title: str
    max_payoff: float  # the most a hand can win
    cards: tuple[str, ...]  # OpenSpiel's card id -> its name
    hole_cards: int  # dealt to player_0, then player_1; the board comes after
    rounds: tuple[str, ...]  # betting rounds' names ("" for a game of one round)
    chips: Callable[[Any], tuple[float, float]]  # what each player has put in (not at the end)
    open_words: Mapping[str, int]  # action ids with no bet to face
    facing_words: Mapping[str, int]  # action ids facing a bet
    rules: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def game(self) -> Any:
        return pyspiel.load_game(self.spiel_name, dict(self.params))


KUHN = PokerGame(
    "kuhn_poker",
    "Kuhn poker",
    2.0,
    ("J", "Q", "K"),
    1,
    ("",),
    _kuhn_chips,
    {"check": 0, "bet": 1},
    {"fold": 0, "call": 1},
    "Kuhn poker, two players. The deck is J, Q, K (K highest). Each player antes 1 chip and "
    "gets one card. player_0 acts first: check or bet 1 chip. Facing a bet, fold (the bettor "
    "takes the pot) or call. If both check or a bet is called, the higher card wins the pot. "
    "No raises.",
)
LEDUC = PokerGame(
    "leduc_poker",
    "Leduc hold'em",
    13.0,
    ("J", "J", "Q", "Q", "K", "K"),
    1,
    ("Round 1", "Round 2"),
    _leduc_chips,
    {"check": 1, "bet": 2},
    {"fold": 0, "call": 1, "raise": 2},
    "Leduc hold'em, two players. The deck is two each of J, Q, K (K highest). Each player "
    "antes 1 chip and gets one private card. Round 1: player_0 acts first; bets and raises "
    "are 2 chips, at most two a round. Then one public card is dealt and round 2 is played "
    "the same way with 4-chip bets and raises. Facing a bet you fold, call or raise. At the "
    "showdown a private card that pairs the public card wins; otherwise the higher private "
    "card wins; equal ranks split the pot.",
)
HOLDEM = PokerGame(
    "universal_poker",
    "Limit Texas hold'em",
    240.0,
    tuple(rank + suit for rank in "23456789TJQKA" for suit in "cdhs"),
    2,
    ("Pre-flop", "Flop", "Turn", "River"),
    _holdem_chips,
    {"check": 1, "bet": 2},
    {"fold": 0, "call": 1, "raise": 2},
    "Heads-up limit Texas hold'em, a 52-card deck. player_0 posts the big blind (10 chips), "
    "player_1 the small blind (5). Each gets two private cards. Pre-flop betting starts with "
    "player_1; then three public cards (the flop), a fourth (the turn) and a fifth (the "
    "river), each followed by a betting round that player_0 starts. Bets and raises are 10 "
    "chips before the turn and 20 from it; at most 3 raises pre-flop (the big blind counts "
    "as the first bet) and 4 a round after. At the showdown the best five-card poker hand "
    "from your two cards and the five public cards wins; equal hands split the pot.",
    {
        "betting": "limit",
        "numPlayers": 2,
        "numRounds": 4,
        "blind": "10 5",
        "raiseSize": "10 10 20 20",
        "firstPlayer": "2 1 1 1",
        "maxRaises": "3 4 4 4",
        "numSuits": 4,
        "numRanks": 13,
        "numHoleCards": 2,
        "numBoardCards": "0 3 1 1",
    },
)
GAMES = {"kuhn": KUHN, "leduc": LEDUC, "holdem": HOLDEM}


# ---------------------------------------------------------------------------- the hand


class DealTask(Task["Hand"]):
    """One deal: the task seed orders the deck; cards are dealt from the top."""

    def deck(self, game: PokerGame) -> list[int]:
        outcomes = [card for card, _ in game.game.new_initial_state().chance_outcomes()]
        order = np.random.default_rng(self.seed).permutation(len(outcomes))
        return [outcomes[i] for i in order]

    def setup(self, rng: np.random.Generator) -> tuple[Hand, str]:
        raise NotImplementedError("a deal needs its game; PokerEnv.new_world builds the hand")

    def validate(self, world: Hand) -> Verdict:
        raise NotImplementedError("multi-agent verdicts are per agent; see PokerEnv")

    def solve(self, world: Hand) -> str | None:
        raise NotImplementedError("multi-agent oracles are per agent; see oracle_action")


class Hand:
    """The game in play: OpenSpiel's state, the deck order and the betting in words."""

    def __init__(self, game: PokerGame, deck: list[int]) -> None:
        self.game, self.deck = game, deck
        self.state = game.game.new_initial_state()
        self.dealt: list[int] = []
        self.events: list[tuple[str, str]] = []  # (agent, action word) or ("", public card)
        self._final = (0.0, 0.0)
        self._deal()

    def _deal(self) -> None:
        """Deal the top cards of the deck while the game waits on chance."""
        while self.state.is_chance_node():
            legal = set(self.state.legal_actions())
            card = next(c for c in self.deck if c in legal and c not in self.dealt)
            if len(self.dealt) >= 2 * self.game.hole_cards:
                self.events.append(("", self.game.cards[card]))
            self.dealt.append(card)
            self.state.apply_action(card)

    def hole(self, agent: str) -> list[int]:
        """``agent``'s private cards."""
        n = self.game.hole_cards
        return self.dealt[PLAYERS.index(agent) * n : (PLAYERS.index(agent) + 1) * n]

    def board(self) -> list[int]:
        """The public cards dealt so far."""
        return self.dealt[2 * self.game.hole_cards :]

    def words(self) -> dict[str, int]:
        """The legal actions now, as words -> OpenSpiel action ids."""
        legal = set(self.state.legal_actions())
        table = self.game.facing_words if facing_bet(self) else self.game.open_words
        return {word: a for word, a in table.items() if a in legal}

    def play(self, agent: str, word: str) -> None:
        before = self.contributions()
        self.state.apply_action(self.words()[word])
        self.events.append((agent, word))
        if self.state.is_terminal():  # some games pay the pot out: keep what was put in
            self._final = (max(before), max(before)) if word == "call" else before
        self._deal()

    def contributions(self) -> tuple[float, float]:
        """Chips each player has put in the pot."""
        return self._final if self.state.is_terminal() else self.game.chips(self.state)

    def payoffs(self) -> dict[str, float]:
        returns = self.state.returns()
        return {a: float(returns[i]) for i, a in enumerate(PLAYERS)}


def facing_bet(hand: Hand) -> bool:
    player = hand.state.current_player()
    put = hand.contributions()
    return player in (0, 1) and put[player] < max(put)


# ---------------------------------------------------------------------------- policies


def table_from(game: PokerGame, choose: Callable[[Any], Mapping[int, float]]) -> Table:
    """A policy table over every information state of ``game``; ``choose(state)`` gives the
    probabilities at a state (the same for all states of one information state)."""
    states = spiel_policy.TabularPolicy(game.game).states
    return {s.information_state_string(): dict(choose(s)) for s in states}


def uniform(state: Any) -> dict[int, float]:
    legal = state.legal_actions()
    return {a: 1.0 / len(legal) for a in legal}


def to_tabular(game: PokerGame, table: Table) -> spiel_policy.TabularPolicy:
    """``table`` as OpenSpiel's policy object (for exploitability and exact expected values)."""
    tabular = spiel_policy.TabularPolicy(game.game)
    for key, probs in table.items():
        row = tabular.policy_for_key(key)
        row[:] = 0.0
        for action, p in probs.items():
            row[action] = p
        row /= row.sum()
    return tabular


def solve_cfr(game: PokerGame, iterations: int) -> Table:
    """CFR+'s average policy after ``iterations``: OpenSpiel's C++ solver (Leduc's tree takes
    seconds per hundred iterations in Python), its Python one for Kuhn."""
    solver = (cfr.CFRPlusSolver if game is KUHN else pyspiel.CFRPlusSolver)(game.game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    return table_from(game, average.action_probabilities)


def exploitability_of(game: PokerGame, table: Table) -> float:
    """OpenSpiel's exploitability (mean gain of a best response over both seats, in chips)."""
    return float(exploitability.exploitability(game.game, to_tabular(game, table)))


@functools.cache
def cfr_table(game: PokerGame) -> Table:
    """The CFR reference policy: Kuhn solved now, Leduc read from the shipped table."""
    if game is KUHN:
        return solve_cfr(KUHN, 200)
    data = json.loads((DATA / "leduc_cfr.json").read_text())
    return {k: {int(a): p for a, p in v.items()} for k, v in data["policy"].items()}


Strategy = Callable[["Hand", np.random.Generator], str]
"""A player's rule: the action word for the player to move at ``hand``, drawing any chance
from the generator. It reads only what that player sees (its information state)."""


def cfr_strategy(game: PokerGame) -> Strategy:
    """Sample the CFR policy at the player's information state."""
    return lambda hand, rng: _sample(
        hand, cfr_table(game)[hand.state.information_state_string()], rng
    )


class StrategyPlayer:
    """A :class:`Strategy` in a seat, drawing as :class:`~agentgym.multiagent.RandomPlayer`
    does: a stream per game and seat, seeded by ``seed``, the env's reset seed, the deal and
    the seat (the env's own generator is left alone), so the same seeds replay a game."""

    def __init__(self, name: str, strategy: Strategy, seed: int | None = None) -> None:
        self.name, self._strategy, self.seed = name, strategy, seed or 0
        self._world: object = None
        self._rngs: dict[str, np.random.Generator] = {}

    def act(self, env: Any, agent: str) -> str:
        poker: PokerEnv = env.unwrapped
        hand = poker.hand()
        if hand is not self._world:  # a new game: new streams
            self._world, self._rngs = hand, {}
        if agent not in self._rngs:
            seat = PLAYERS.index(agent)
            seeds = [self.seed, poker.episode_seed or 0, poker.task.seed, seat]
            self._rngs[agent] = np.random.default_rng(seeds)
        return self._strategy(hand, self._rngs[agent])

    def close(self) -> None:
        """Nothing to free."""


def _sample(hand: Hand, probs: Mapping[int, float], rng: np.random.Generator) -> str:
    """A policy's action at ``hand``'s state, as its word."""
    actions = sorted(probs)
    weights = np.array([probs[a] for a in actions])
    action = actions[int(rng.choice(len(actions), p=weights / weights.sum()))]
    return next(w for w, a in hand.words().items() if a == action)


# ---------------------------------------------------------------------------- the env


class PokerEnv(TurnBasedEnv[Hand]):
    __doc__ = __doc__
    # Breaking even scores 0.5, and against an equilibrium no play, blind or not, expects more
    # than that over both seats: the checker's bound for a seat that ignores its cards.
    metadata = {**TurnBasedEnv.metadata, "name": "poker_v0", "chance_score": 0.5}
    possible_agents = list(PLAYERS)

    def __init__(self, game: str = "kuhn", **kwargs: Any) -> None:
        if game not in GAMES:
            raise UsageError(f"PokerEnv(game={game!r}) is not a poker game here; use {list(GAMES)}")
        self.poker = GAMES[game]
        self.metadata = {**self.metadata, "name": f"{self.poker.spiel_name}_v0"}
        self.tasks = GeneratedTaskSet(
            self.poker.spiel_name,
            DealTask,
            ("hand",),
            sizes={"train": 100_000, "dev": 1_000, "test": 1_000},
        )
        super().__init__(**kwargs)

    def hand(self) -> Hand:
        assert self.world is not None, "call reset() first"
        return self.world

    def new_world(self, task: Any, rng: np.random.Generator) -> Hand:
        return Hand(self.poker, task.deck(self.poker))

    def to_move(self, world: Hand) -> str:
        player = world.state.current_player()
        return PLAYERS[player if player in (0, 1) else 0]

    def describe(self, world: Hand, agent: str) -> str:
        seat = PLAYERS.index(agent)
        hole, board = world.hole(agent), world.board()
        lines = [f"{self.poker.title}. You are {agent}. {_cards('Your card', hole, self.poker)}"]
        if board:
            lines.append(_cards("Public card", board, self.poker))
        lines.append("Betting so far: " + (_history(world, agent) or "none."))
        put = world.contributions()
        lines.append(
            f"Pot: {sum(put):g} chips (you put in {put[seat]:g}, the opponent {put[1 - seat]:g})."
        )
        if world.state.is_terminal():
            payoff = world.payoffs()[agent]
            result = "broke even" if payoff == 0 else f"{_won(payoff)} {_chips(abs(payoff))}"
            lines.append(f"The hand is over: you {result}.")
        elif self.to_move(world) == agent:
            lines.append(f"Your turn. Legal actions: {', '.join(world.words())}.")
        else:
            lines.append("The opponent's turn.")
        return "\n".join(lines)

    def act(self, world: Hand, agent: str, action: str) -> str:
        word = parse_action(action, world.words(), facing_bet(world))
        world.play(agent, word)
        return f"You {_verb(word, 'you')}."

    def state_key(self, world: Hand) -> str:
        return str(world.state.history())

    def outcome(self, world: Hand) -> dict[str, float] | None:
        if not world.state.is_terminal():
            return None
        m = self.poker.max_payoff
        return {a: (p + m) / (2 * m) for a, p in world.payoffs().items()}

    def _agent_info(self, agent: str, invalid: bool = False) -> dict[str, Any]:
        info = super()._agent_info(agent, invalid)
        if self.world is not None and self.world.state.is_terminal():
            info["payoff"] = self.world.payoffs()[agent]
        return info

    def _verdict(self, score: float) -> Verdict:
        payoff = round(score * 2 * self.poker.max_payoff - self.poker.max_payoff, 9)
        details = f"{_won(payoff)} {_chips(abs(payoff))}" if payoff else "broke even"
        if self.world is not None and not self.world.state.is_terminal():  # a forfeit ended it
            details = "won: the opponent forfeited" if payoff > 0 else "lost by forfeit"
        return Verdict(
            score=score, passed=payoff > 0, components={"result": score}, details=details
        )

    def rules(self) -> str:
        return (
            f"{self.poker.rules}\nActions: one word on the last line: fold, check, call, bet or "
            "raise (the legal ones are listed each turn), e.g. 'call'."
        )

    def oracle_action(self, agent: str) -> str | None:
        """The strongest reference player's action (CFR, or equity for hold'em), its chance
        drawn from the task seed and what ``agent`` knows, so the same situation gets the same
        action (a pure "most likely action" would be exploitable: it never bluffs)."""
        if self.world is None or self.world.state.is_terminal():
            return None
        if self.to_move(self.world) != agent:
            return None
        seen = self.world.state.information_state_string()
        rng = np.random.default_rng([self.task.seed, zlib.crc32(seen.encode())])
        return self._strongest()[1](self.world, rng)

    def _strongest(self) -> tuple[str, Strategy]:
        if self.poker is HOLDEM:
            return "equity", equity_strategy
        return "cfr", cfr_strategy(self.poker)

    def legal_actions(self, world: Hand, agent: str) -> list[str]:
        if world.state.is_terminal() or self.to_move(world) != agent:
            return []
        return list(world.words())

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        name, strategy = self._strongest()
        return {
            **super().reference_players(),
            name: lambda: StrategyPlayer(name, strategy),
        }


@functools.cache
def random_table(game: PokerGame) -> Table:
    """The ``random`` player's policy as a table (uniform over the legal actions), for exact
    expected values."""
    return table_from(game, uniform)


def _cards(label: str, cards: list[int], game: PokerGame) -> str:
    """``Your card: J.`` or ``Public cards: Kc 6s 5c.``"""
    return _named(label, [game.cards[c] for c in cards])


def _named(label: str, names: list[str]) -> str:
    return f"{label}{'s' if len(names) > 1 else ''}: {' '.join(names)}."


def _history(world: Hand, agent: str) -> str:
    """The betting in words, round by round with the public cards between, e.g. ``Round 1:
    you check, the opponent bets, you call. Public card: K. Round 2: ...`` (Kuhn's one round
    has no name)."""
    rounds: list[tuple[list[str], list[str]]] = [([], [])]  # (cards dealt before, actions)
    for who, what in world.events:
        if not who:  # a public card: a new round, unless it is the same deal's next card
            if rounds[-1][1] or len(rounds) == 1:
                rounds.append(([], []))
            rounds[-1][0].append(what)
            continue
        subject = "you" if who == agent else "the opponent"
        rounds[-1][1].append(f"{subject} {_verb(what, subject)}")
    text = []
    for name, (cards, actions) in zip(world.game.rounds, rounds, strict=False):
        if cards:
            text.append(_named("Public card", cards))
        said = ", ".join(actions) or "no action yet"
        text.append(f"{name}: {said}." if name else f"{said}." if actions else "")
    return " ".join(t for t in text if t)


def _won(payoff: float) -> str:
    return "won" if payoff > 0 else "lost"


def _chips(n: float) -> str:
    return f"{n:g} chip" + ("" if n == 1 else "s")


def _verb(word: str, subject: str) -> str:
    return word if subject == "you" else word + ("es" if word.endswith("h") else "s")


ALIASES = {"pass": ("check", "fold"), "call": ("check", "call"), "raise": ("bet", "raise")}
ALIASES["bet"] = ("bet", "raise")


def parse_action(action: str, legal: Mapping[str, int], facing: bool) -> str:
    """The last action word of the reply's last line, read for the situation."""
    lines = [line for line in action.strip().splitlines() if line.strip()]
    found = re.findall(r"\b(fold|check|call|bet|raise|pass)\b", lines[-1].lower() if lines else "")
    if not found:
        raise InvalidAction(
            f"could not read an action from {action.strip()[:60]!r}: write one word, "
            "fold, check, call, bet or raise, on the last line"
        )
    word = found[-1]
    word = ALIASES[word][facing] if word in ALIASES else word
    if word not in legal:
        why = "there is a bet to face" if facing else "there is no bet to face"
        raise InvalidAction(f"you cannot {word} now ({why})")
    return word


# ---------------------------------------------------------------------------- hold'em equity

EQUITY_SAMPLES = 64
"""Random completions per equity estimate: a standard error of about 0.06, in about 10 ms."""


def hand_value(cards: list[int]) -> tuple[int, ...]:
    """The best five-card poker hand among ``cards`` (universal_poker's ids: rank ``c // 4``
    from 2 to A, suit ``c % 4``), as a tuple that compares like hands do: the category
    (0 high card ... 8 straight flush), then the ranks that break ties."""
    ranks = sorted((c // 4 for c in cards), reverse=True)
    suits = [c % 4 for c in cards]
    flush = next((s for s in range(4) if suits.count(s) >= 5), None)
    if flush is not None:
        flush_ranks = sorted((c // 4 for c in cards if c % 4 == flush), reverse=True)
        high = _straight_high(flush_ranks)
        if high is not None:
            return (8, high)
    groups = sorted(Counter(ranks).items(), key=lambda group: (group[1], group[0]), reverse=True)
    (top, count), (second, second_count) = groups[0], [*groups, (-1, 0)][1]
    if count == 4:
        return (7, top, max(r for r in ranks if r != top))
    if count == 3 and second_count >= 2:
        return (6, top, second)
    if flush is not None:
        return (5, *flush_ranks[:5])
    high = _straight_high(ranks)
    if high is not None:
        return (4, high)
    if count == 3:
        return (3, top, *[r for r in ranks if r != top][:2])
    if count == 2 and second_count == 2:
        return (2, top, second, max(r for r in ranks if r not in (top, second)))
    if count == 2:
        return (1, top, *[r for r in ranks if r != top][:3])
    return (0, *ranks[:5])


def _straight_high(ranks: list[int]) -> int | None:
    present = set(ranks) | ({-1} if 12 in ranks else set())  # the ace plays low in A-2-3-4-5
    return next((h for h in range(12, 2, -1) if all(h - i in present for i in range(5))), None)


def equity(hole: list[int], board: list[int], rng: np.random.Generator) -> float:
    """The chance ``hole`` beats a random hand once the board is complete (ties count half),
    by sampling the unseen cards: only what the player sees goes in."""
    unseen = np.array([c for c in range(52) if c not in hole and c not in board])
    missing = 5 - len(board)
    score = 0.0
    for _ in range(EQUITY_SAMPLES):
        drawn = rng.choice(unseen, 2 + missing, replace=False).tolist()
        full = board + drawn[2:]
        mine, theirs = hand_value(hole + full), hand_value(drawn[:2] + full)
        score += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
    return score / EQUITY_SAMPLES


def equity_strategy(hand: Hand, rng: np.random.Generator) -> str:
    """Bet or raise a strong hand (equity against a random hand of 0.6 / 0.75 and up), call
    when the equity beats the pot odds, else check or fold."""
    agent = PLAYERS[hand.state.current_player()]
    strength = equity(hand.hole(agent), hand.board(), rng)
    words = hand.words()
    put = hand.contributions()
    if not facing_bet(hand):
        return "bet" if strength >= 0.6 and "bet" in words else "check"
    if strength >= 0.75 and "raise" in words:
        return "raise"
    to_call = max(put) - min(put)
    return "call" if strength >= to_call / (sum(put) + to_call) else "fold"


# ---------------------------------------------------------------------------- duplicate play


def duplicate_chips(env: Any, seats: Sequence[Seat], task_ids: Iterable[str]) -> list[float]:
    """``seats[0]``'s chips per hand against ``seats[1]``, each task (deal) played twice with
    the seats swapped, so both players get the same cards: what separates them is play, not
    luck. Chips come from the verdict's score, so a forfeit counts as losing the most a hand
    can lose. ``env`` is a poker env from :func:`~agentgym.registry.make_multi`."""
    poker: PokerEnv = env.unwrapped
    chips = []
    for index, task_id in enumerate(task_ids):
        for first in PLAYERS:
            order = [first, *(a for a in PLAYERS if a != first)]
            result = play_game(env, dict(zip(order, seats, strict=True)), index, task_id=task_id)
            chips.append(poker.poker.max_payoff * (2 * result.outcome[first] - 1))
    return chips


# ---------------------------------------------------------------------------- the Leduc table


def write_leduc_table(iterations: int = 2000) -> float:
    """Solve Leduc with CFR+ and write ``data/leduc_cfr.json``; returns its exploitability."""
    table = solve_cfr(LEDUC, iterations)
    rounded = {k: {str(a): round(p, 6) for a, p in v.items()} for k, v in sorted(table.items())}
    value = exploitability_of(
        LEDUC, {k: {int(a): p for a, p in v.items()} for k, v in rounded.items()}
    )
    DATA.mkdir(exist_ok=True)
    (DATA / "leduc_cfr.json").write_text(
        json.dumps(
            {
                "game": LEDUC.spiel_name,
                "solver": "open_spiel pyspiel.CFRPlusSolver, average policy",
                "iterations": iterations,
                "exploitability": value,
                "command": "python -m agentgym.envs.multiagent.poker leduc",
                "policy": rounded,
            },
            indent=0,
        )
        + "\n"
    )
    return value


if __name__ == "__main__":
    if sys.argv[1:] != ["leduc"]:
        sys.exit("usage: python -m agentgym.envs.multiagent.poker leduc")
    print(f"Leduc CFR+ table written; exploitability {write_leduc_table():.6f} chips")
