"""Negotiation: moves in free text, deals and no deals, private values, bots, fixed policies."""

import re
from types import SimpleNamespace

import numpy as np
import pytest
from random_player_moves import random_player_moves
from sampling import sample

import agentgym
from agentgym.checker import chance_bound
from agentgym.envs.multiagent.negotiation import (
    ADAPTIVE,
    PLAYERS,
    TOTAL_VALUE,
    Bargain,
    BargainTask,
    gain,
    negotiated,
    parse_move,
    show,
    worth,
)
from agentgym.multiagent import play_game
from agentgym.task_env import InvalidAction

TASK = "dev/long/0"


def fresh(task=TASK):
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    env.reset(seed=0, options={"task_id": task})
    return env


def play(env, seats, seed=0, task=None):
    """Play a whole game; ``seats`` maps each agent to a reference player's name or a callable
    ``(env, agent) -> text``. Returns the verdicts."""
    players = env.unwrapped.reference_players()
    made = {a: players[s]() if isinstance(s, str) else s for a, s in seats.items()}
    return play_game(env, made, seed, task_id=task).verdicts


def test_a_structured_move_is_read_inside_free_text():
    pool = (3, 1, 2)
    text = "I think this is fair.\n[propose]  Books = 1, hats: 0, ball 2 -- deal?\nThanks!"
    assert parse_move(text, pool) == ("propose", (1, 0, 2))
    assert parse_move("[Propose]\n  books=3 hats=1 balls=0\nok?", pool) == ("propose", (3, 1, 0))
    assert parse_move("Sounds good to me [ACCEPT] :)", pool) == ("accept", None)
    assert parse_move("No. [Walk  away]", pool) == ("walk", None)
    assert parse_move("What do you value most? books?", pool) == ("talk", None)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[Propose] books=1 hats=0 balls=2 [Accept]", "holds 2 moves"),
        ("[Propose] books=1 hats=1", "could not read a share of all three items"),
        ("[Propose] books=4 hats=0 balls=0", "the pool holds only books=3 hats=1 balls=2"),
    ],
)
def test_a_malformed_move_is_an_invalid_action_with_its_reason(text, reason):
    with pytest.raises(InvalidAction, match=reason):
        parse_move(text, (3, 1, 2))


def test_a_proposal_then_accept_is_a_deal_scored_by_private_values():
    env = fresh()
    world = env.unwrapped.world
    keep = (world.pool[0], 0, 0)
    env.step(f"I like books. [Propose] {show(keep)}")
    assert "Standing offer from player_0" in env.observe("player_1")
    env.step("OK. [Accept]")
    got = {"player_0": keep, "player_1": (0, world.pool[1], world.pool[2])}
    for agent in PLAYERS:
        utility = worth(world.values[agent], got[agent]) / TOTAL_VALUE
        verdict = env.infos[agent]["verdict"]
        assert verdict.components["utility"] == pytest.approx(utility)
        assert verdict.score == gain(world, agent)
        assert verdict.passed == negotiated(world, agent)
        assert env.rewards[agent] == pytest.approx(2 * verdict.score - 1)
    assert env.infos["player_1"]["verdict"].score == 0.0  # it accepted: nothing won


def test_the_score_is_what_the_deal_wins_beyond_the_best_offer_and_a_blind_split():
    # player_0 values books (4 each) and the hat; player_1 the hat and the ball (5 each).
    def deal(keep, proposals):
        world = Bargain((2, 1, 1), {"player_0": (4, 2, 0), "player_1": (0, 5, 5)}, 12)
        world.deal = {"player_0": keep, "player_1": (2 - keep[0], 1 - keep[1], 1 - keep[2])}
        world.proposals = proposals
        return world

    # player_1 offered player_0 the books (0.8) and asked for the hat and ball (1.0 to it):
    # at that ask, the books are the most player_0 can get, so 0.8 is its reach and its base.
    asked = [("player_1", (0, 1, 1))]
    assert gain(deal((2, 0, 0), asked), "player_0") == 0.0  # exactly what it was offered
    # No offer: the base is a blind split (0.5) and the reach everything (1.0).
    assert gain(deal((2, 0, 0), [("player_0", (2, 0, 0))]), "player_0") == pytest.approx(0.6)
    assert gain(deal((2, 1, 0), [("player_0", (2, 1, 0))]), "player_0") == 1.0
    assert gain(deal((1, 0, 1), [("player_0", (1, 0, 1))]), "player_0") == 0.0  # 0.4 < 0.5
    # player_1 conceded to a book and the ball (0.5 to it; player_0 offered a book and the
    # hat, 0.6): leaving it 0.5, player_0 could get 1.0, so 0.8 is halfway from the base 0.6.
    ask = [("player_1", (1, 1, 1)), ("player_1", (1, 0, 1)), ("player_0", (2, 0, 0))]
    assert gain(deal((2, 0, 0), ask), "player_0") == pytest.approx(0.5)
    no_deal = deal((0, 0, 0), [])
    no_deal.deal = None
    assert gain(no_deal, "player_0") == 0.0


def test_accepting_without_an_offer_is_feedback_and_the_same_player_moves_again():
    env = fresh()
    env.step("[Accept]")
    assert env.agent_selection == "player_0"
    assert env.infos["player_0"]["invalid_action"] is True
    assert env.observe("player_0").startswith("Invalid action: there is no offer from player_1")


def test_walking_away_and_the_turn_limit_end_with_no_deal_for_both():
    env = fresh()
    env.step("[Propose] books=0 hats=0 balls=0")
    env.step("Never. [Walk away]")
    assert {a: env.infos[a]["verdict"].score for a in PLAYERS} == {"player_0": 0, "player_1": 0}
    assert env.infos["player_0"]["verdict"].details == "No deal: player_1 walked away."
    env = fresh("dev/short/0")
    for _ in range(6):
        env.step("Let us talk.")
    assert all(env.terminations.values())
    assert not env.infos["player_1"]["verdict"].passed
    assert env.rewards == {"player_0": -1.0, "player_1": -1.0}


def test_values_are_drawn_as_lewis_et_al_constrain_them():
    for index in range(50):
        pool, values = BargainTask(f"dev/long/{index}", "dev", "long", index).draw()
        assert 5 <= sum(pool) <= 7 and all(1 <= n <= 4 for n in pool)
        assert all(worth(values[a], pool) == TOTAL_VALUE for a in PLAYERS)
        mine, theirs = values["player_0"], values["player_1"]
        assert all(a or b for a, b in zip(mine, theirs, strict=True))


@pytest.mark.parametrize("seed", range(5))
def test_an_agent_never_sees_the_other_players_values(seed):
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    game = env.unwrapped
    env.reset(seed=seed)
    bots = {a: game.reference_players()["random"]() for a in PLAYERS}
    world = game.world

    def line(agent):
        vals = world.values[agent]
        return f"Your private values per item: book {vals[0]}, hat {vals[1]}, ball {vals[2]}"

    for agent in env.agent_iter():
        for me, other in (PLAYERS, PLAYERS[::-1]):
            if me not in env.agents:
                continue
            assert line(me) in env.observe(me)
            assert line(other).split(": ")[1] not in env.observe(me)
            assert str(world.values[other]) not in str(env.infos[me])
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else bots[agent].act(env, agent))


def test_every_pair_of_bots_finishes_and_the_same_seed_replays_the_same_game():
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    names = list(env.unwrapped.reference_players())
    assert names == ["greedy", "fair", "adaptive", "random"]
    for first in names:
        for second in names:
            for seed in range(3):
                verdicts = play(env, {"player_0": first, "player_1": second}, seed=seed)
                assert set(verdicts) == set(PLAYERS)
                transcript = list(env.unwrapped.world.transcript)
                play(env, {"player_0": first, "player_1": second}, seed=seed)
                assert env.unwrapped.world.transcript == transcript


def test_the_random_player_draws_its_own_seeded_stream_not_the_envs():
    """Its moves come from its seed, the reset seed and the seat (RandomPlayer's streams):
    whatever else draws from the env's generator, the same seeds give the same moves."""

    def moves(draw_first, seed=7):
        return random_player_moves(
            "multiagent/Negotiation-v2",
            "Let us talk.",
            seed=seed,
            draw_first=draw_first,
            task_id=TASK,
        )

    assert moves(False) == moves(True)
    assert moves(False) != moves(False, seed=8)


def test_the_oracle_bot_reaches_the_best_deals_against_the_field():
    """Adaptive gets the most utility; v2's score puts it level with greedy, whose hard asks
    win more when accepted (docs/envs/multiagent.md: 0.32 and 0.33 over 100 seeds)."""
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    names = ["greedy", "fair", "adaptive", "random"]
    utility, score = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
    for first in names:
        for second in names:
            for seed in range(25):
                verdicts = play(env, {"player_0": first, "player_1": second}, seed=seed)
                for agent, name in zip(PLAYERS, (first, second), strict=True):
                    utility[name] += verdicts[agent].components.get("utility", 0.0)
                    score[name] += verdicts[agent].score
    assert max(utility, key=utility.__getitem__) == "adaptive"
    assert score["adaptive"] > max(score["fair"], score["random"])


def _fixed(text):
    def policy(env, agent):
        return text.replace("EVERYTHING", show(env.unwrapped.world.pool))

    return policy


@pytest.mark.parametrize(
    "text", ["[Walk away]", "[Propose] EVERYTHING", "Hello, what do you want?", "banana"]
)
def test_fixed_texts_earn_nothing_against_the_bots(text):
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    for bot in ("greedy", "fair", "adaptive"):
        for seat, other in (PLAYERS, PLAYERS[::-1]):
            for seed in range(10):
                verdicts = play(env, {seat: _fixed(text), other: bot}, seed=seed)
                assert verdicts[seat].score == 0.0, (bot, seat, seed)


def test_always_accepting_earns_less_than_negotiating():
    """Accepting gets exactly the offer, so v2 scores it 0 (v1's utility: 0.29 against greedy,
    0.38 against adaptive over 100 seeds); negotiating in that seat scores more."""
    env = agentgym.make_multi("multiagent/Negotiation-v2")
    for bot in ("greedy", "adaptive"):
        accepted = negotiated = 0.0
        for seed in range(30):
            accepted += play(env, {"player_0": bot, "player_1": _fixed("[Accept]")}, seed=seed)[
                "player_1"
            ].score
            negotiated += play(env, {"player_0": bot, "player_1": "adaptive"}, seed=seed)[
                "player_1"
            ].score
        assert accepted / 30 <= 0.45 and accepted < negotiated - 3, (bot, accepted, negotiated)
    verdicts = play(env, {"player_0": _fixed("[Accept]"), "player_1": "greedy"}, seed=0)
    assert verdicts["player_0"].score == 0.0  # no offer to accept: three mistakes forfeit


def test_adaptive_settles_on_its_last_chance_only_for_an_offer_worth_its_deadline_floor():
    """Its last-chance discount stops at 0.4 of its maximum: taking any positive offer let a
    blind seat alternating the pool and the pool less one item score 0.22 to 0.30."""

    def answer(kept_by_player_0):  # adaptive, player_1, on its last turn
        values = {"player_0": (2, 0, 2), "player_1": (2, 2, 1)}
        world = Bargain((3, 1, 2), values, 12, turn=11)
        world.proposals = [("player_0", (3, 1, 2)), ("player_0", kept_by_player_0)]
        world.offer = ("player_0", kept_by_player_0)
        return ADAPTIVE.act(SimpleNamespace(world=world), "player_1")

    assert "[Accept]" not in answer((2, 1, 2))  # a book: 0.2 to it, more than no deal
    assert "[Accept]" in answer((2, 0, 2))  # a book and the hat: 0.4, under its demand 0.5


def test_only_a_pareto_optimal_proposal_of_the_agents_own_worth_its_nash_share_passes():
    # player_0 values books, player_1 hats and balls; the Nash solution gives player_0 the
    # books alone (0.8 x 1.0 beats 1.0 x 0.5), so 0.8 is player_0's Nash share.
    def deal(keep, proposer="player_0"):
        world = Bargain((2, 1, 1), {"player_0": (4, 2, 0), "player_1": (0, 5, 5)}, 12)
        world.deal = {"player_0": keep, "player_1": (2 - keep[0], 1 - keep[1], 1 - keep[2])}
        world.proposals = [(proposer, world.deal[proposer])]  # the share its proposer keeps
        return world

    assert negotiated(deal((2, 0, 0)), "player_0")  # the Nash solution, proposed by player_0
    assert not negotiated(deal((2, 0, 0)), "player_1")  # it accepted exactly what it was offered
    assert negotiated(deal((2, 1, 0)), "player_0")  # more than its Nash share, Pareto-optimal
    assert not negotiated(deal((2, 1, 0)), "player_1")  # less than its Nash share (1.0)
    assert not negotiated(deal((1, 0, 1)), "player_0")  # 0.4 + a ball it does not value
    assert not negotiated(deal((2, 0, 0), proposer="player_1"), "player_0")  # accepted it


def _turn(observation):
    return int(re.search(r"Turn (\d+) of", observation).group(1))


def _last_turn(observation):
    turn, limit = re.search(r"Turn (\d+) of (\d+)", observation).groups()
    return int(turn) >= int(limit) - 1


def _accept_after(talks):
    def policy(observation):
        offered = "Standing offer" in observation
        return "[Accept]" if offered and _turn(observation) > 2 * talks else "Let us talk."

    return policy


def _pool(observation):
    return tuple(
        int(n)
        for n in re.search(r"divide books=(\d+) hats=(\d+) balls=(\d+)", observation).groups()
    )


def _propose_then_accept(observation):
    if "Standing offer" in observation and _turn(observation) > 2:
        return "[Accept]"
    return "[Propose] books=1 hats=1 balls=1"


def _less(pool, k):
    """The pool less ``k`` items, a kind at a time in turn."""
    share = list(pool)
    for i in range(min(k, sum(pool))):
        kind = next(j % 3 for j in range(i, i + 3) if share[j % 3])
        share[kind] -= 1
    return tuple(share)


def _concede(observation):
    return f"[Propose] {show(_less(_pool(observation), _turn(observation) // 2))}"


def _alternate(observation):
    return f"[Propose] {show(_less(_pool(observation), (_turn(observation) // 2) % 2))}"


def _random_share(observation):
    rng = np.random.default_rng([_turn(observation), *_pool(observation)])
    return f"[Propose] {show(tuple(int(rng.integers(n + 1)) for n in _pool(observation)))}"


def _then_accept_last(policy):
    def accepting(observation):
        last = "Standing offer" in observation and _last_turn(observation)
        return "[Accept]" if last else policy(observation)

    return accepting


BLIND = {
    "always accept": lambda _obs: "[Accept]",
    "talk once, then accept": _accept_after(1),
    "talk twice, then accept": _accept_after(2),
    "accept on the last turn": lambda obs: (
        "[Accept]" if "Standing offer" in obs and _last_turn(obs) else "Hmm."
    ),
    "walk away": lambda _obs: "[Walk away]",
    "propose 1/1/1": lambda _obs: "[Propose] books=1 hats=1 balls=1",
    "propose the pool": lambda obs: f"[Propose] {show(_pool(obs))}",
    "propose half": lambda obs: f"[Propose] {show(tuple(n // 2 for n in _pool(obs)))}",
    "propose 1/1/1, then accept": _propose_then_accept,
    "concede an item a turn": _concede,
    "concede, accept on the last turn": _then_accept_last(_concede),
    "alternate the pool and the pool less one": _alternate,
    "random shares": _random_share,
    "random shares, accept on the last turn": _then_accept_last(_random_share),
    "no word (invalid)": lambda _obs: "...",
}
"""Policies an RL agent finds without reading its values: they read only the turn, whether
an offer stands and the pool (tests/perf/negotiation_pass_rule.py measures them on 200)."""

TEST_IDS = [f"test/{level}/{i}" for level in ("long", "short") for i in range(500)]
TEST_TASKS = sample(TEST_IDS, 16)
ENV_V1 = "multiagent/Negotiation-v1"


def _seated(bot, seat, policy, tasks, env_id="multiagent/Negotiation-v2"):
    """How many of ``tasks`` ``policy`` passes in ``seat`` against ``bot``, seated, and its
    mean score."""
    env = agentgym.make(env_id, opponent=bot, seat=seat)
    game = env.unwrapped.game
    passes = score = 0
    for seed, task in enumerate(tasks):
        observation, _ = env.reset(seed=seed, options={"task_id": task})
        done = False
        while not done:
            action = policy(observation) if callable(policy) else policy.act(game, seat)
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        passes += info["verdict"].passed
        score += info["verdict"].score
    env.close()
    return passes, score / len(tasks)


def _seated_passes(bot, seat, policy, tasks):
    return _seated(bot, seat, policy, tasks)[0]


@pytest.mark.sampled
@pytest.mark.parametrize("bot", ["greedy", "fair", "adaptive"])
def test_no_fixed_policy_passes_or_scores_more_than_chance(bot):
    """Under v0's rule (a deal worth half) always accepting passed 28% against greedy and 66%
    against fair; under v1's score (the utility) it earned 0.29 and 0.62. Now every blind
    policy passes and scores within the checker's bound of the declared chance, in both seats
    (tests/perf/negotiation_pass_rule.py, 200 tasks: at most 8% and 0.09)."""
    chance = agentgym.make_multi("multiagent/Negotiation-v2").unwrapped.metadata["chance_score"]
    for name, policy in BLIND.items():
        for seat in PLAYERS:
            passes, score = _seated(bot, seat, policy, TEST_TASKS)
            bound = chance_bound(chance, len(TEST_TASKS))  # a lottery's luck on a sample
            assert passes <= bound * len(TEST_TASKS), (name, seat, passes)
            assert score <= bound, (name, seat, score)


def test_v1_is_kept_deprecated_with_its_utility_score_which_paid_a_blind_accept():
    """Negotiation-v1 scores the deal's utility: accepting whatever fair offers earns over 0.4
    there (its declared chance is 0.1) and 0 under v2, on the same tasks."""
    accept = BLIND["always accept"]
    v1 = _seated("fair", "player_1", accept, TEST_TASKS[:5], ENV_V1)[1]
    assert v1 > 0.4 and _seated("fair", "player_1", accept, TEST_TASKS[:5])[1] == 0.0
    env = agentgym.make_multi(ENV_V1).unwrapped
    assert env.metadata["name"] == "negotiation_v1"
    assert "Your score is the value of what you get" in env.rules()
    assert "Accepting an offer, or no deal, scores 0" in (
        agentgym.make_multi("multiagent/Negotiation-v2").unwrapped.rules()
    )


@pytest.mark.sampled
def test_the_oracle_still_passes_against_greedy_and_fair():
    """The adaptive bot, negotiating, passes a fair share (measured on 200 test tasks:
    docs/envs/multiagent.md); a stated floor over both seats."""
    tasks = sample(TEST_IDS, 30, seed=1)
    for bot, floor in (("greedy", 0.1), ("fair", 0.2)):
        passes = sum(_seated_passes(bot, seat, ADAPTIVE, tasks) for seat in PLAYERS)
        assert passes >= floor * 2 * len(tasks), (bot, passes)
