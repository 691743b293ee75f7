"""Adversarial taboo: SPAG's outcome rules, word matching, private target, bots, fixed play."""

import pytest
from random_player_moves import random_player_moves

import agentgym
from agentgym.envs.multiagent.taboo import (
    ATTACKER,
    DEFENDER,
    FILLER,
    MAX_TURNS,
    PLAYERS,
    TabooBot,
    clue_lists,
    guess_in,
    says,
)
from agentgym.multiagent import play_game


def fresh(task="train/3"):  # honey
    env = agentgym.make_multi("multiagent/Taboo-v0")
    env.reset(seed=0, options={"task_id": task})
    return env


def play(env, seats, task, seed=0):
    """Play a whole game; ``seats`` maps each agent to a reference player's name or a fixed
    text. Returns the verdicts."""
    players = env.unwrapped.reference_players()
    made = {
        a: players[s]() if s in players else (lambda _env, _agent, text=s: text)
        for a, s in seats.items()
    }
    return play_game(env, made, seed, task_id=task).verdicts


def test_saying_the_word_is_whole_word_any_case_and_regular_inflections():
    assert says("Cats are lovely", "cat") and says("my CAT's toy", "cat")
    assert not says("a category of things", "cat") and not says("concatenate", "cat")
    assert says("we danced", "dance") and says("dancing all night", "dance")
    assert says("two boxes", "box") and says("she walked", "walk")


def test_a_guess_is_read_in_spags_phrase_with_or_without_quotes():
    assert guess_in('Aha. I know the word! It is "Honey".') == "honey"
    assert guess_in("i know the word it's honey") == "honey"
    assert guess_in("I KNOW THE WORD! honey") == "honey"
    assert guess_in("I know the word!") == ""
    assert guess_in("I know a word: honey") is None


@pytest.mark.parametrize(
    ("moves", "winner", "reason"),
    [
        (["Bees make something.", 'I know the word! It is "honey".'], DEFENDER, "guessed 'honey'"),
        (["Bees make something.", "I know the word! It is sugar"], ATTACKER, "not 'honey'"),
        (["Bees make something.", "Honey, I guess?"], ATTACKER, "the defender said 'honey'"),
        (["I love honey.", "..."], DEFENDER, "the attacker said the target word"),
        (["I know the word! It is tea", "?"], DEFENDER, "the attacker used the defender's"),
        (["Hi.", "Hello."] * MAX_TURNS, None, "neither side won in 5 turns each"),
    ],
)
def test_spags_outcome_rules(moves, winner, reason):
    env = fresh()
    for move in moves:
        if any(env.terminations.values()):
            break
        env.step(move)
    world = env.unwrapped.world
    assert reason in world.reason
    expected = {a: 0.5 if winner is None else float(a == winner) for a in PLAYERS}
    assert world.result == expected
    assert all(env.terminations.values())


def test_an_empty_message_is_an_invalid_action():
    env = fresh()
    env.step("   ")
    assert env.agent_selection == ATTACKER
    assert env.observe(ATTACKER).startswith("Invalid action: say something")


def test_the_word_list_ships_with_clues_that_never_say_their_word():
    words = clue_lists()
    assert len(words) == 80
    bot_lines = [FILLER, "I keep thinking about  and  today. What comes to your mind?"]
    for word, clues in words.items():
        assert len(clues) == 6 and not any(says(c, word) for c in clues), word
        assert not any(says(line, word) for line in bot_lines), word
    tasks = agentgym.make_multi("multiagent/Taboo-v0").unwrapped.tasks
    splits = {s: {tasks.get(t).word for t in tasks.ids(s)} for s in ("train", "dev", "test")}
    assert [len(splits[s]) for s in splits] == [48, 16, 16]
    assert not (splits["train"] & splits["dev"]) and not (splits["dev"] & splits["test"])


def test_the_defender_never_sees_the_target_before_the_game_ends():
    env = agentgym.make_multi("multiagent/Taboo-v0")
    game = env.unwrapped
    for task in game.tasks.ids("dev"):
        env.reset(seed=0, options={"task_id": task})
        attacker, defender = TabooBot("cautious"), game.reference_players()["random"]()
        for agent in env.agent_iter():
            _, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            target = game.world.target
            assert f'"{target}"' in env.observe(ATTACKER)
            assert not says(env.observe(DEFENDER), target), task
            assert target not in str(info)
            env.step((attacker if agent == ATTACKER else defender).act(env, agent))
        assert f'The word was "{game.world.target}"' in game.describe(game.world, DEFENDER)


def test_the_bots_finish_and_the_same_seed_replays_the_same_game():
    env = agentgym.make_multi("multiagent/Taboo-v0")
    names = list(env.unwrapped.reference_players())
    for first in names:
        for second in names:
            for seed, task in enumerate(env.unwrapped.tasks.ids("dev")[:4]):
                assert set(play(env, {ATTACKER: first, DEFENDER: second}, task, seed)) == {
                    ATTACKER,
                    DEFENDER,
                }
                transcript = list(env.unwrapped.world.transcript)
                play(env, {ATTACKER: first, DEFENDER: second}, task, seed)
                assert env.unwrapped.world.transcript == transcript


def test_the_clue_attacker_traps_the_naive_defender_and_the_cautious_one_guesses():
    env = agentgym.make_multi("multiagent/Taboo-v0")
    for task in env.unwrapped.tasks.ids("dev"):
        trapped = play(env, {ATTACKER: "naive", DEFENDER: "naive"}, task)
        assert trapped[ATTACKER].passed, task
        guessed = play(env, {ATTACKER: "cautious", DEFENDER: "cautious"}, task)
        assert guessed[DEFENDER].passed, task


@pytest.mark.parametrize(
    ("seat", "text"),
    [
        (DEFENDER, "I have no idea."),
        (DEFENDER, 'I know the word! It is "apple".'),  # apple is a train word, not in dev
        (ATTACKER, "Hello there."),
        (ATTACKER, "Please say the secret word."),
        (ATTACKER, "Orchard, pie, fruit, cider: what do you say?"),  # a decoy: apple is not dev
    ],
)
def test_a_fixed_text_never_wins_against_the_bots(seat, text):
    env = agentgym.make_multi("multiagent/Taboo-v0")
    other = DEFENDER if seat == ATTACKER else ATTACKER
    for bot in ("cautious", "naive"):
        for seed, task in enumerate(env.unwrapped.tasks.ids("dev")):
            verdicts = play(env, {seat: text, other: bot}, task, seed)
            assert not verdicts[seat].passed, (bot, task)


def test_the_random_player_draws_its_own_seeded_stream_not_the_envs():
    """Its words come from its seed, the reset seed and the seat (RandomPlayer's streams):
    whatever else draws from the env's generator, the same seeds give the same words."""

    def words(draw_first, seed=7):
        return random_player_moves(
            "multiagent/Taboo-v0", "Tell me more.", seed=seed, draw_first=draw_first
        )

    assert words(False) == words(True)
    assert words(False) != words(False, seed=8)
