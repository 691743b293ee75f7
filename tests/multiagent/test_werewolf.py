"""Werewolf: the deal, nights and days, votes and ties, the doctor, forfeits, what each seat
sees (nothing private of another), replay from a seed, the bots, and fixed play."""

import copy

import numpy as np
import pytest

import agentgym
from agentgym.checker import chance_bound
from agentgym.envs.multiagent.werewolf_rules import (
    DISCUSSION,
    DOCTOR,
    SEER,
    SPEECH_LIMIT,
    VILLAGE,
    VILLAGER,
    VOTE,
    WOLF,
    WOLVES,
    read_player,
    seats,
    view,
)
from agentgym.errors import UsageError
from agentgym.multiagent import RandomPlayer, play_game
from agentgym.multiagent_checker import check_pettingzoo
from agentgym.task_env import InvalidAction

ID = "multiagent/Werewolf-v0"


def fresh(players=5, task=None, seed=0):
    env = agentgym.make_multi(ID, players=players)
    task = task or env.unwrapped.tasks.ids("dev")[0]
    env.reset(seed=seed, options={"task_id": task})
    return env


def role_of(env, role):
    return [a for a, r in env.unwrapped.world.roles.items() if r == role]


def drive(env, policy, turns=5_000):
    """Play until the game ends, ``policy(game, agent)`` choosing every move; returns each
    agent's final verdict score."""
    scores = {}
    for agent in env.agent_iter(turns):
        _, _, terminated, truncated, info = env.last()
        if "verdict" in info:
            scores[agent] = info["verdict"].score
        env.step(None if terminated or truncated else policy(env.unwrapped, agent))
    return scores


def scripted(night, speech="Hello.", ballot="abstain"):
    """A policy: ``night[role](game, agent)`` at night, ``speech`` by day, ``ballot`` to vote
    (a text or a function of the game and the agent)."""

    def policy(game, agent):
        world = game.world
        if world.phase == DISCUSSION:
            return speech
        if world.phase == VOTE:
            return ballot if isinstance(ballot, str) else ballot(game, agent)
        return night[world.roles[agent]](game, agent)

    return policy


def to_phase(env, phase, policy):
    while env.unwrapped.world.phase != phase:
        env.step(policy(env.unwrapped, env.agent_selection))


# ---------------------------------------------------------------------- the table


@pytest.mark.parametrize("players", [5, 8])
def test_other_tables_pass_pettingzoos_api_and_seed_tests(players):
    check_pettingzoo(lambda: agentgym.make_multi(ID, players=players), ID, cycles=4)


def test_a_table_has_5_to_8_players():
    with pytest.raises(UsageError, match="players=5 to 8"):
        agentgym.make_multi(ID, players=4)
    assert agentgym.make_multi(ID).possible_agents == list(seats(7))


@pytest.mark.parametrize(
    ("players", "level", "deal"),
    [
        (5, "one-wolf", {WOLF: 1, SEER: 1, DOCTOR: 1, VILLAGER: 2}),
        (6, "two-wolves", {WOLF: 2, SEER: 1, DOCTOR: 1, VILLAGER: 2}),
        (8, "one-wolf", {WOLF: 1, SEER: 1, DOCTOR: 1, VILLAGER: 5}),
        (8, "two-wolves", {WOLF: 2, SEER: 1, DOCTOR: 1, VILLAGER: 4}),
    ],
)
def test_the_deal_has_the_roles_of_its_level_on_every_seat_alike(players, level, deal):
    tasks = agentgym.make_multi(ID, players=players).unwrapped.tasks
    wolves = dict.fromkeys(seats(players), 0)
    ids = tasks.ids("dev", level)
    for task in ids:
        roles = tasks.get(task).roles()
        assert {r: list(roles.values()).count(r) for r in deal} == deal
        for agent, role in roles.items():
            wolves[agent] += role == WOLF
    share = deal[WOLF] / players
    sigma = np.sqrt(share * (1 - share) / len(ids))
    assert all(abs(n / len(ids) - share) < 4 * sigma for n in wolves.values()), wolves
    assert tasks.ids("dev") and not set(tasks.ids("train")[:50]) & set(tasks.ids("dev"))


# ---------------------------------------------------------------------- reading actions


@pytest.mark.parametrize(
    ("text", "player"),
    [
        ("player_3", "player_3"),
        ("Player 3", "player_3"),
        ("3", "player_3"),
        ("kill player3", "player_3"),
        ("I vote for player_3. He is at 100 percent a wolf.", "player_3"),
        ("abstain", None),
        ("I vote for nobody today", None),
    ],
)
def test_a_player_is_read_forgivingly(text, player):
    assert read_player(text, seats(5), abstain=True) == player


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("player_1 or player_2", "names several players"),
        ("player_9", "there is no player_9"),
        ("the quiet one", "could not read a player"),
    ],
)
def test_a_text_naming_no_single_player_is_refused(text, why):
    with pytest.raises(InvalidAction, match=why):
        read_player(text, seats(5), abstain=True)


def test_an_illegal_target_is_feedback_listing_the_legal_ones():
    env = fresh(players=8, task="dev/two-wolves/0")
    first, second = role_of(env, WOLF)
    assert env.agent_selection == first
    env.step(f"kill {second}")
    assert env.agent_selection == first and env.infos[first]["invalid_actions"] == 1
    feedback = env.observe(first)
    assert feedback.startswith(f"Invalid action: {second} may not be chosen by you")
    assert "Legal moves: kill " in feedback and f"kill {second}" not in feedback


# ---------------------------------------------------------------------- night and day


@pytest.mark.parametrize("protect_victim", [True, False])
def test_the_doctor_saves_the_victim_it_protects(protect_victim):
    env = fresh()
    victim = role_of(env, VILLAGER)[0]
    night = {
        WOLF: lambda game, agent: victim,
        SEER: lambda game, agent: game.legal_actions(game.world, agent)[0],
        DOCTOR: lambda game, agent: victim if protect_victim else agent,
    }
    to_phase(env, DISCUSSION, scripted(night))
    world = env.unwrapped.world
    assert (victim in world.alive) is protect_victim
    said = "nobody died" if protect_victim else f"{victim} was killed"
    assert said in "\n".join(world.public)


def test_two_werewolves_who_disagree_kill_the_first_ones_choice():
    env = fresh(players=8, task="dev/two-wolves/0")
    first, second = role_of(env, WOLF)
    villagers = role_of(env, VILLAGER)
    env.step(villagers[0])
    assert f"{first} chose to kill {villagers[0]}" in env.observe(second)
    assert "chose to kill" not in env.observe(villagers[1])
    env.step(villagers[1])
    night = {SEER: lambda g, a: villagers[2], DOCTOR: lambda g, a: a}
    to_phase(env, DISCUSSION, scripted(night))
    assert env.unwrapped.world.alive.count(villagers[0]) == 0
    assert villagers[1] in env.unwrapped.world.alive


def vote_script(targets):
    """Night: the werewolf kills the doctor, who protects itself (nobody dies); the vote:
    ``targets[agent]`` or abstain."""
    night = {
        WOLF: lambda game, agent: role_of_world(game.world, DOCTOR)[0],
        SEER: lambda game, agent: game.legal_actions(game.world, agent)[0],
        DOCTOR: lambda game, agent: agent,
    }
    return scripted(night, ballot=lambda game, agent: targets.get(agent, "abstain"))


def role_of_world(world, role):
    return [a for a, r in world.roles.items() if r == role]


def test_a_tie_eliminates_nobody_and_a_plurality_eliminates_with_the_role_shown():
    env = fresh()
    wolf, seer, doctor = (role_of(env, r)[0] for r in (WOLF, SEER, DOCTOR))
    a, b = role_of(env, VILLAGER)
    tie = {wolf: a, seer: a, a: b, b: wolf, doctor: b}  # a 2, b 2, the werewolf 1
    to_phase(env, VOTE, vote_script(tie))
    to_phase(env, "night", vote_script(tie))
    world = env.unwrapped.world
    assert len(world.alive) == 5 and f"a tie between {a}, {b} (2 each)" in world.public[-2]
    to_phase(env, VOTE, vote_script({}))
    to_phase(env, "night", vote_script({wolf: a, seer: a, doctor: b}))
    assert a not in world.alive and f"{a} is dead; they were a villager." in world.public


def test_the_werewolves_win_when_the_village_has_not_won_in_as_many_days_as_players():
    env = fresh()
    scores = drive(env, vote_script({}))
    world = env.unwrapped.world
    assert world.winner == WOLVES and world.day == 5 and len(world.alive) == 5
    assert "survived 5 days" in world.reason
    assert scores == {a: float(r == WOLF) for a, r in world.roles.items()}


def test_speeches_are_cut_and_a_wordless_speech_is_refused():
    env = fresh()
    to_phase(env, DISCUSSION, vote_script({}))
    speaker = env.agent_selection
    env.step("  ...  ")
    assert env.agent_selection == speaker and env.infos[speaker]["invalid_action"]
    env.step("word " * 200)
    assert env.observe(speaker).startswith(f"You spoke (cut to {SPEECH_LIMIT} characters).")
    assert len(env.unwrapped.world.speeches[-1][2]) == SPEECH_LIMIT


def test_a_long_game_keeps_the_latest_transcript_and_the_prompt_within_the_limit():
    env = fresh(players=8, task="dev/one-wolf/0")
    quiet = vote_script({})

    def long_speeches(game, agent):
        return "x" * SPEECH_LIMIT if game.world.phase == DISCUSSION else quiet(game, agent)

    drive(env, long_speeches)
    text = env.observe("player_0")
    assert len(text) <= env.unwrapped.max_observation_length
    assert "earlier lines omitted" in text and text.endswith(("You won.", "You lost."))


# ---------------------------------------------------------------------- forfeits


def test_a_forfeiting_player_dies_scores_0_and_the_game_goes_on():
    env = fresh(players=7, task="dev/two-wolves/0")
    first = env.agent_selection
    for _ in range(env.unwrapped.max_invalid_actions):
        env.step("!!!")
    world = env.unwrapped.world
    assert first not in world.alive and world.winner is None
    assert env.agent_selection == first and env.terminations[first]
    assert env.infos[first]["verdict"].score == 0.0
    env.step(None)  # PettingZoo's dead step: it leaves the game
    assert first not in env.agents and env.agent_selection in world.queue
    heuristic = env.unwrapped.reference_players()["heuristic"]()
    drive(env, lambda game, agent: heuristic.act(game, agent))
    assert world.winner is not None and first in world.forfeited


def test_the_last_werewolf_forfeiting_hands_the_village_the_win():
    env = fresh()
    wolf = env.agent_selection
    for _ in range(env.unwrapped.max_invalid_actions):
        env.step("")
    assert env.unwrapped.world.winner == VILLAGE and all(env.terminations.values())
    assert env.infos[wolf]["verdict"].score == 0.0
    assert all(env.infos[a]["verdict"].passed for a in env.agents if a != wolf)


# ---------------------------------------------------------------------- what a seat sees


def mid_game(players, task, turns, seed=0):
    env = fresh(players, task, seed)
    bot = env.unwrapped.reference_players()["heuristic"]()
    for _ in range(turns):
        if env.unwrapped.world.winner:
            break
        env.step(bot.act(env, env.agent_selection))
    return env


@pytest.mark.parametrize(("players", "turns"), [(5, 9), (7, 40), (8, 60)])
def test_no_seat_sees_another_roles_secret(players, turns):
    for task in agentgym.make_multi(ID, players=players).unwrapped.tasks.ids("dev")[:6]:
        env = mid_game(players, task, turns)
        game = env.unwrapped
        world = game.world
        wolves = role_of(env, WOLF)
        for agent in world.players:
            seen = game.describe(world, agent)
            role = world.roles[agent]
            assert ("The werewolves are" in seen) is (role == WOLF)
            assert ("chose to kill" in seen) is (role == WOLF)
            assert ("you inspected" in seen) is (role == SEER and bool(world.inspections))
            for night, who, found in world.inspections:
                result = f"Night {night}: you inspected {who}: {'a' if found else 'not a'} wer"
                assert (result in seen) is (role == SEER)
            assert ("you protected" in seen) is (role == DOCTOR)
            assert f"role: {role}" in seen
            assert not any(r in str(env.infos[agent]) for r in (WOLF, SEER, DOCTOR, VILLAGER))
            if world.winner is None:
                for other in world.alive:
                    assert f"{other} ({world.roles[other]})" not in seen
            # a living werewolf and a living villager swapped: only the pack can tell (the
            # seer's results are what it learnt at night, kept as it learnt them)
            villagers = [a for a in world.alive if world.roles[a] == VILLAGER and a != agent]
            living_wolves = [w for w in wolves if w in world.alive and w != agent]
            if not villagers or not living_wolves or world.winner:
                continue
            swapped = copy.deepcopy(world)
            pair = (living_wolves[0], villagers[0])
            swapped.roles[pair[0]], swapped.roles[pair[1]] = VILLAGER, WOLF
            assert (game.describe(swapped, agent) != seen) == (role == WOLF), (task, agent)
            # and so can the bots, which read the seat's view alone
            assert (view(swapped, agent) != view(world, agent)) == (role == WOLF), (task, agent)


# ---------------------------------------------------------------------- the bots


def test_the_same_seed_replays_the_same_game_and_other_seeds_differ():
    env = agentgym.make_multi(ID)
    made = env.unwrapped.reference_players()
    for name in ("heuristic", "random"):
        games = [
            play_game(env, {a: made[name]() for a in env.possible_agents}, seed, task_id=task)
            for seed, task in (
                (1, "dev/two-wolves/3"),
                (1, "dev/two-wolves/3"),
                (2, "dev/two-wolves/3"),
            )
        ]
        assert games[0].finished and games[0].moves == games[1].moves
        assert games[0].outcome == games[1].outcome
        if name == "random":
            assert games[0].moves != games[2].moves


def village_rate(env, village, wolves, games, seat_policy=None):
    """The village's win rate over dev deals; ``seat_policy`` plays the first plain
    villager's seat; returns (village rate, that seat's mean score)."""
    game = env.unwrapped
    tasks = game.tasks.ids("dev")
    wins, seat_scores = 0, []
    for seed in range(games):
        task = tasks[seed % len(tasks)]
        roles = game.tasks.get(task).roles()
        made = game.reference_players()
        seats_ = {a: made[wolves if r == WOLF else village]() for a, r in roles.items()}
        seat = next(a for a, r in roles.items() if r == VILLAGER)
        if seat_policy is not None:
            seats_[seat] = seat_policy
        result = play_game(env, seats_, seed, task_id=task)
        wins += game.world.winner == VILLAGE
        seat_scores.append(result.outcome[seat])
    return wins / games, float(np.mean(seat_scores))


GAMES = 40


@pytest.fixture(scope="module")
def heuristic_village():
    """The village's win rate, every seat heuristic, over the fixed-seat tests' deals."""
    return village_rate(agentgym.make_multi(ID), "heuristic", "heuristic", GAMES)[0]


def test_the_heuristic_team_beats_the_random_one_from_either_side():
    env = agentgym.make_multi(ID)
    assert village_rate(env, "heuristic", "random", GAMES)[0] >= 0.85
    assert village_rate(env, "random", "heuristic", GAMES)[0] <= 0.45


@pytest.mark.parametrize(
    "policy",
    [
        lambda game, agent: "I have nothing to say yet.",
        lambda game, agent: "vote player_0",
        lambda game, agent: "abstain",
        RandomPlayer(seed=5),
    ],
    ids=["same-text", "vote-player_0", "abstain", "random"],
)
def test_a_fixed_villager_does_not_help_the_village_beyond_chance(policy, heuristic_village):
    """A team game's seat wins when its team does, so a blind seat's chance is not 0: the
    village among heuristic players wins about half its games whatever one villager does
    (``metadata['chance_score']``). A fixed seat must not lift the village above what a
    heuristic villager in the same seat achieves on the same deals, nor above the chance."""
    env = agentgym.make_multi(ID)
    chance = env.unwrapped.metadata["chance_score"]
    rate, seat_score = village_rate(env, "heuristic", "heuristic", GAMES, policy)
    noise = 3 * np.sqrt(heuristic_village * (1 - heuristic_village) / GAMES)
    assert rate <= heuristic_village + noise
    assert seat_score <= chance_bound(chance, GAMES)
