"""Kuhn poker, Leduc and limit hold'em: private views, action words, deals, the CFR policies
and hold'em's equity player.

Strength claims are exact where they can be: OpenSpiel's ``expected_game_score`` gives a
policy pair's expected chips over every deal. Played hands then check that the env plays the
same game (their mean agrees with the exact value) and that the CFR player wins in play.
"""

import math
import re

import numpy as np
import pytest
from open_spiel.python.algorithms import expected_game_score

import agentgym
from agentgym.envs.multiagent.poker import (
    HOLDEM,
    KUHN,
    LEDUC,
    PLAYERS,
    DealTask,
    Hand,
    PokerEnv,
    cfr_table,
    duplicate_chips,
    equity_strategy,
    exploitability_of,
    hand_value,
    parse_action,
    random_table,
    table_from,
    to_tabular,
)
from agentgym.errors import UsageError
from agentgym.task_env import InvalidAction

IDS = {
    KUHN: "multiagent/KuhnPoker-v0",
    LEDUC: "multiagent/LeducHoldem-v0",
    HOLDEM: "multiagent/LimitHoldem-v0",
}
HOLDEM_PATH = ["call", "bet", "call"]  # pre-flop: player_1 completes, player_0 bets, a call
HOLDEM_PATH += ["check", "bet", "raise", "call", "bet", "call", "check", "check"]  # to the end
NAMES = {KUHN: "kuhn", LEDUC: "leduc", HOLDEM: "holdem"}
CARD_NAMES = {KUHN: r"\b[JQK]\b", LEDUC: r"\b[JQK]\b", HOLDEM: r"\b[2-9TJQKA][cdhs]\b"}


def deck_with(game, mine, theirs, public=()):
    """A deck (OpenSpiel card ids) dealing ``mine`` to player_0, ``theirs`` to player_1, then
    ``public``; the rest in order."""
    cards = [*mine, *theirs, *public]
    full = [c for c, _ in game.game.new_initial_state().chance_outcomes()]
    return cards + [c for c in full if c not in cards]


@pytest.mark.parametrize(
    ("game", "decks", "path"),
    [
        (KUHN, [deck_with(KUHN, [1], [0]), deck_with(KUHN, [1], [2])], ["check", "bet", "call"]),
        (
            LEDUC,
            [deck_with(LEDUC, [2], [t], [4]) for t in (0, 5, 3)],
            ["bet", "raise", "call", "check", "bet", "call"],
        ),
        (
            HOLDEM,
            [deck_with(HOLDEM, [48, 44], t, [0, 9, 22, 31, 50]) for t in ([49, 51], [1, 2])],
            HOLDEM_PATH,
        ),
    ],
)
def test_a_view_is_the_same_whatever_the_opponent_holds(game, decks, path):
    """player_0's observations while the hand is on never depend on player_1's cards."""
    env = PokerEnv(game=NAMES[game])
    hands = [Hand(game, deck) for deck in decks]
    for step, word in enumerate(path):
        views = {env.describe(hand, "player_0") for hand in hands}
        assert len(views) == 1, f"step {step}: player_0's view depends on player_1's card"
        agent = env.to_move(hands[0])
        for hand in hands:
            hand.play(agent, word)
    assert all(hand.state.is_terminal() for hand in hands)


@pytest.mark.parametrize("game", [KUHN, LEDUC, HOLDEM])
def test_no_observation_names_a_card_the_agent_cannot_see(game):
    for seed in range(30):
        env = agentgym.make_multi(IDS[game])
        env.reset(seed=seed)
        random = {a: env.unwrapped.reference_players()["random"]() for a in env.possible_agents}
        for agent in env.agent_iter():
            _, _, terminated, _, _ = env.last()
            hand = env.unwrapped.world
            visible = {game.cards[c] for c in hand.hole(agent) + hand.board()}
            assert set(re.findall(CARD_NAMES[game], env.observe(agent))) <= visible
            env.step(None if terminated else random[agent].act(env, agent))


OPEN = {"check": 1, "bet": 2}
FACING = {"fold": 0, "call": 1, "raise": 2}


@pytest.mark.parametrize(
    ("text", "legal", "facing", "word"),
    [
        ("I call", FACING, True, "call"),
        ("Raise.", FACING, True, "raise"),
        ("I think my jack is weak.\nI fold", FACING, True, "fold"),
        ("bet", FACING, True, "raise"),  # a bet facing a bet is a raise
        ("pass", FACING, True, "fold"),
        ("check", OPEN, False, "check"),
        ("call", OPEN, False, "check"),  # nothing to call: a check
        ("I'll raise", OPEN, False, "bet"),
        ("pass", OPEN, False, "check"),
        ("Should I check or BET? bet", OPEN, False, "bet"),
    ],
)
def test_actions_are_read_as_a_model_writes_them(text, legal, facing, word):
    assert parse_action(text, legal, facing) == word


@pytest.mark.parametrize(
    ("text", "legal", "facing", "message"),
    [
        ("check", FACING, True, "you cannot check now (there is a bet to face)"),
        ("banana", OPEN, False, "could not read an action from 'banana': write one word, fold"),
        ("raise", {"fold": 0, "call": 1}, True, "you cannot raise now"),
        ("", OPEN, False, "could not read an action"),
    ],
)
def test_unreadable_or_illegal_actions_say_why(text, legal, facing, message):
    with pytest.raises(InvalidAction, match=re.escape(message)):
        parse_action(text, legal, facing)


def test_an_illegal_action_is_feedback_and_the_same_player_acts_again():
    env = agentgym.make_multi("multiagent/KuhnPoker-v0")
    env.reset(seed=0)
    env.step("bet")
    env.step("check")  # player_1 faces a bet
    assert env.agent_selection == "player_1"
    assert env.infos["player_1"]["invalid_action"] is True
    assert env.observe("player_1").startswith(
        "Invalid action: you cannot check now (there is a bet to face) (2 mistakes left before "
        "you forfeit). Legal moves: fold, call."
    )
    assert env.infos["player_1"]["legal_actions"] == ["fold", "call"]
    assert env.infos["player_0"]["legal_actions"] == []


def test_three_illegal_actions_forfeit_whatever_the_cards():
    for seed in range(5):
        env = agentgym.make_multi("multiagent/LeducHoldem-v0")
        env.reset(seed=seed)
        for _ in range(3):
            env.step("all in!")
        assert env.infos["player_0"]["verdict"].score == 0.0
        assert env.infos["player_1"]["verdict"].score == 1.0
        assert env.infos["player_0"]["verdict"].details == "lost by forfeit"
        assert "payoff" not in env.infos["player_0"]


@pytest.mark.parametrize("game", [KUHN, LEDUC, HOLDEM])
def test_a_seed_fixes_the_deal(game):
    def deal(seed, task_id=None):
        env = agentgym.make_multi(IDS[game])
        env.reset(seed=seed, options={"task_id": task_id} if task_id else None)
        return env

    deals = {tuple(deal(seed).unwrapped.world.dealt) for seed in range(20)}
    assert len(deals) > 3, "different seeds deal different cards"
    for seed in range(5):
        assert deal(seed).unwrapped.world.dealt == deal(seed).unwrapped.world.dealt
    if game is LEDUC:  # the public card does not depend on the betting
        publics = set()
        for path in (["check", "check"], ["bet", "call"], ["bet", "raise", "call"]):
            env = deal(None, "dev/hand/7")
            for word in path:
                env.step(word)
            publics.add(env.unwrapped.world.dealt[2])
        assert len(publics) == 1


def test_payoff_maps_into_the_score_and_passed_means_chips_won():
    env = agentgym.make_multi("multiagent/KuhnPoker-v0")
    env.reset(options={"task_id": "dev/hand/0"})
    for word in ("bet", "call"):
        env.step(word)
    hand = env.unwrapped.world
    winner = "player_0" if hand.dealt[0] > hand.dealt[1] else "player_1"
    loser = "player_1" if winner == "player_0" else "player_0"
    assert env.infos[winner]["payoff"] == 2.0 and env.infos[loser]["payoff"] == -2.0
    assert env.infos[winner]["verdict"].score == 1.0 and env.infos[winner]["verdict"].passed
    assert env.infos[loser]["verdict"].score == 0.0 and not env.infos[loser]["verdict"].passed
    assert env.rewards == {winner: 1.0, loser: -1.0}
    assert env.infos[winner]["verdict"].details == "won 2 chips"


def test_the_kuhn_cfr_policy_is_nearly_unexploitable():
    value = exploitability_of(KUHN, cfr_table(KUHN))
    print(f"Kuhn CFR+ exploitability: {value:.6f} chips per hand")
    assert value <= 0.01


def test_the_shipped_leduc_table_is_nearly_unexploitable():
    value = exploitability_of(LEDUC, cfr_table(LEDUC))
    print(f"Leduc CFR+ exploitability: {value:.6f} chips per hand")
    assert value <= 0.001
    assert exploitability_of(LEDUC, random_table(LEDUC)) > 1.0  # the measure can fail


def fixed(game, pick):
    """A table that always takes ``pick(legal actions)``."""
    return table_from(game, lambda state: {pick(state.legal_actions()): 1.0})


def value_against_cfr(game, table):
    """Exact expected chips per hand of ``table`` against CFR, averaged over both seats."""
    mine, cfr = to_tabular(game, table), to_tabular(game, cfr_table(game))
    first = expected_game_score.policy_value(game.game.new_initial_state(), [mine, cfr])[0]
    second = expected_game_score.policy_value(game.game.new_initial_state(), [cfr, mine])[1]
    return (first + second) / 2


@pytest.mark.parametrize("game", [KUHN, LEDUC])
@pytest.mark.parametrize(
    ("name", "pick"),
    [("always fold or check", min), ("always raise or call", max), ("random", None)],
)
def test_fixed_strategies_lose_chips_to_cfr_exactly(game, name, pick):
    table = random_table(game) if pick is None else fixed(game, pick)
    value = value_against_cfr(game, table)
    print(f"{game.title}, {name} vs CFR: {value:+.4f} chips per hand (exact)")
    assert value < -0.1


def duplicate_match(game, players, deals):
    """``players[0]``'s chips per hand over ``deals`` dev deals, each from both seats."""
    env = agentgym.make_multi(IDS[game])
    made = env.unwrapped.reference_players()
    seats = [made[p]() if isinstance(p, str) else p for p in players]
    return duplicate_chips(env, seats, [f"dev/hand/{index}" for index in range(deals)])


def mean_and_error(values):
    mean = sum(values) / len(values)
    spread = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(spread / len(values))


@pytest.mark.parametrize(("game", "deals"), [(KUHN, 600), (LEDUC, 400)])
def test_cfr_wins_chips_from_random_in_play(game, deals):
    mean, error = mean_and_error(duplicate_match(game, ["cfr", "random"], deals))
    exact = -value_against_cfr(game, random_table(game))
    print(f"{game.title}: CFR vs random {mean:+.3f} ± {error:.3f} chips/hand, exact {exact:+.3f}")
    assert mean - 2 * error > 0
    assert abs(mean - exact) < 4 * error  # the env plays the game OpenSpiel evaluates


@pytest.mark.parametrize("game", [KUHN, LEDUC])
@pytest.mark.parametrize("text", ["I call", "raise", "fold", "banana"])
def test_the_same_text_every_turn_does_not_beat_cfr(game, text):
    """No reward without the task, played through the env: a fixed reply loses chips on
    average (an illegal one forfeits). The margin is two standard errors of the mean."""
    deals = 150 if game is KUHN else 250
    mean, error = mean_and_error(duplicate_match(game, [lambda env, a: text, "cfr"], deals))
    print(f"{game.title}: {text!r} every turn vs CFR {mean:+.3f} ± {error:.3f} chips/hand")
    assert mean + 2 * error < 0


def test_the_oracle_samples_the_cfr_policy_the_same_way_each_time():
    env = agentgym.make_multi("multiagent/KuhnPoker-v0")
    seen: dict[str, list[int]] = {}
    for index in range(300):
        env.reset(options={"task_id": f"dev/hand/{index}"})
        hand = env.unwrapped.world
        action = env.unwrapped.oracle_action("player_0")
        assert action == env.unwrapped.oracle_action("player_0")
        assert env.unwrapped.oracle_action("player_1") is None  # not its turn
        seen.setdefault(hand.state.information_state_string(), []).append(hand.words()[action])
    for key, actions in seen.items():
        bet = cfr_table(KUHN)[key][1]
        error = math.sqrt(max(bet * (1 - bet), 0.01) / len(actions))
        print(f"{key}: bets {sum(actions) / len(actions):.3f}, CFR {bet:.3f}")
        assert abs(sum(actions) / len(actions) - bet) < 4 * error


def test_a_task_orders_the_whole_deck():
    task = DealTask("dev/hand/0", "dev", "hand", seed=11)
    assert sorted(task.deck(LEDUC)) == list(range(6)) and task.deck(LEDUC) == task.deck(LEDUC)


def test_hand_values_agree_with_openspiels_showdowns():
    """The equity player's evaluator ranks hands as universal_poker pays them."""
    for index in range(300):
        hand = Hand(HOLDEM, DealTask("dev/hand/0", "dev", "hand", seed=index).deck(HOLDEM))
        while not hand.state.is_terminal():
            words = hand.words()
            hand.play(PLAYERS[hand.state.current_player()], "call" if "call" in words else "check")
        mine, theirs = (hand_value(hand.hole(a) + hand.board()) for a in PLAYERS)
        payoff = hand.payoffs()["player_0"]
        assert (mine > theirs) - (mine < theirs) == (payoff > 0) - (payoff < 0), (
            hand.hole("player_0"),
            hand.hole("player_1"),
            hand.board(),
        )


def cards(text):
    return ["23456789TJQKA".index(c[0]) * 4 + "cdhs".index(c[1]) for c in text.split()]


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("2c 3d 4h 5s 6c Kd Kh", "Ac 2d 3h 4s 5c Kd Kh"),  # 6-high straight over the wheel
        ("Ac 2d 3h 4s 5c 9d 8h", "9c 9s 9d 7h Kc Qd 2h"),  # the wheel over three of a kind
        ("2h 7h 9h Jh Kh Ac Ad", "Tc Jd Qh Ks Ac 2d 3d"),  # a flush over a straight
        ("Kc Kd Kh 2s 2c 3d 4d", "Ac Ad Ah Qs Jc 9d 3h"),  # a full house over three aces
        ("Qc Qd 5h 5s Ac 3d 2h", "Qh Qs 5c 5d Kc 3h 2c"),  # two pair: the kicker decides
        ("9h Th Jh Qh Kh 2c 3d", "5c 5d 5h 5s 2c 3d 4h"),  # straight flush over four of a kind
    ],
)
def test_hand_values_order_the_hands_poker_players_know(better, worse):
    assert hand_value(cards(better)) > hand_value(cards(worse))


def test_the_equity_player_reads_only_its_own_cards():
    """Its decision, from the same generator, is the same whatever player_1 holds."""
    hands = [Hand(HOLDEM, deck_with(HOLDEM, [48, 44], t, [0, 9, 22])) for t in ([49, 51], [1, 2])]
    for hand in hands:
        for word in ("call", "check"):  # to the flop; player_0 to act
            hand.play(PLAYERS[hand.state.current_player()], word)
    for seed in range(5):
        actions = {equity_strategy(hand, np.random.default_rng(seed)) for hand in hands}
        assert len(actions) == 1


def test_the_equity_player_wins_chips_from_random_in_play():
    mean, error = mean_and_error(duplicate_match(HOLDEM, ["equity", "random"], 60))
    print(f"Limit hold'em: equity vs random {mean:+.2f} ± {error:.2f} chips/hand")
    assert mean - 2 * error > 0


@pytest.mark.parametrize("text", ["I call", "raise", "fold"])
def test_the_same_text_every_turn_does_not_beat_the_equity_player(text):
    mean, error = mean_and_error(duplicate_match(HOLDEM, [lambda env, a: text, "equity"], 60))
    print(f"Limit hold'em: {text!r} every turn vs equity {mean:+.2f} ± {error:.2f} chips/hand")
    assert mean + 2 * error < 0


def test_an_unknown_game_is_a_usage_error():
    with pytest.raises(UsageError, match=r"PokerEnv\(game='omaha'\) is not a poker game here"):
        PokerEnv(game="omaha")
