"""Wordle: word lists, feedback with duplicate letters, guesses, losing, solver and oracle."""

import re

import numpy as np
import pytest

import agentgym
from agentgym import InvalidAction
from agentgym.envs.games.puzzles.wordle import (
    MAX_GUESSES,
    WordleEnv,
    WordleWorld,
    allowed,
    answers,
    answers_at,
    candidates,
    feedback,
    pattern,
    solve_world,
)

LEVELS = ("easy", "medium", "hard")


def test_word_lists_are_shipped_and_consistent():
    assert len(answers()) >= 400 and len(allowed()) > 10_000
    assert set(answers()) <= allowed()
    assert all(re.fullmatch(r"[a-z]{5}", w) for w in allowed())
    assert set(answers().values()) == set(LEVELS)
    assert sum(len(answers_at(level)) for level in LEVELS) == len(answers())
    assert all(len(answers_at(level)) >= 400 for level in LEVELS)


@pytest.mark.parametrize(
    ("secret", "guess", "expected"),
    [
        ("abbey", "babes", "Y Y G G ."),
        ("abbey", "bobby", "Y . G . G"),
        ("hello", "lolly", ". Y G G ."),
        ("crane", "eerie", ". . Y . G"),  # the green E uses the only E
        ("crane", "crane", "G G G G G"),
        ("crane", "moist", ". . . . ."),
    ],
)
def test_feedback_handles_duplicate_letters(secret, guess, expected):
    assert pattern(feedback(guess, secret)) == expected


@pytest.mark.parametrize("level", LEVELS)
def test_generation_is_deterministic_and_draws_from_the_level(level):
    for seed in range(5):
        first = WordleEnv.generate(np.random.default_rng(seed), level=level)
        second = WordleEnv.generate(np.random.default_rng(seed), level=level)
        assert first.secret == second.secret
        assert first.secret in answers_at(level)


def test_a_guess_records_feedback_and_the_key_is_the_history():
    world = WordleWorld("abbey")
    assert world.apply("guess babes").startswith("BABES -> Y Y G G .")
    assert world.key() == "babes:11220"
    assert "Guess 1/6: BABES -> Y Y G G ." in world.render()


def test_letters_gray_only_as_an_extra_copy_are_not_listed_absent():
    world = WordleWorld("abbey")
    world.apply("bobby")
    absent, present = world.letters()
    assert absent == {"o"} and "b" in present
    assert "Letters not in the word: O\n" in world.render()


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("guess zzzzz", "not in the word list"),
        ("guess cranes", "has 6 letters"),
        ("guess", "could not read"),
        ("hello world", "could not read"),
        ("", "could not read"),
        ("🙂🙃", "letters a-z"),
        ("guess cr4ne", "letters a-z"),
    ],
)
def test_invalid_guesses_explain_and_cost_nothing(action, message):
    world = WordleWorld("abbey")
    with pytest.raises(InvalidAction, match=message):
        world.apply(action)
    assert world.guesses == []


def test_repeating_a_guess_is_invalid():
    world = WordleWorld("abbey")
    world.apply("crane")
    with pytest.raises(InvalidAction, match="already guessed"):
        world.apply("CRANE")
    assert len(world.guesses) == 1


@pytest.mark.parametrize("action", ["ABBEY", "guess abbey", "Guess: `abbey`", "My guess is abbey."])
def test_action_forms_are_read(action):
    world = WordleWorld("abbey")
    world.apply(action)
    assert world.solved()


def test_six_wrong_guesses_lose():
    world = WordleWorld("abbey")
    for word in ["crane", "moist", "pluck", "dough", "fizzy", "whelp"][: MAX_GUESSES - 1]:
        world.apply(word)
        assert not world.lost()
    world.apply("whelp")
    assert world.lost() and not world.solved()
    with pytest.raises(InvalidAction, match="over"):
        world.apply("abbey")


def test_solver_guesses_only_candidates_and_wins_on_a_sample():
    for secret in sorted(answers())[::97]:
        world = WordleWorld(secret)
        for action in solve_world(world):
            word = action.split()[1]
            if len(world.guesses) < MAX_GUESSES - 1:
                assert word in candidates(world.guesses)
            world.apply(action)
        assert world.solved() and len(world.guesses) <= MAX_GUESSES


def test_solver_uses_the_secret_only_on_a_last_ambiguous_guess():
    world = WordleWorld("hatch")
    for word in ["latch", "match", "watch", "patch", "batch"]:
        world.apply(word)
    assert len(candidates(world.guesses)) > 1
    assert solve_world(world) == ["guess hatch"]


def test_solver_plays_on_from_any_history():
    world = WordleWorld("knoll")
    world.apply("fuzzy")
    world.apply("champ")
    for action in solve_world(world):
        world.apply(action)
    assert world.solved()


def test_legal_actions_are_not_listed():
    assert WordleWorld("abbey").legal_actions() is None


def test_losing_through_make_terminates_with_zero():
    env = agentgym.make("games/Wordle-v0")
    env.reset(seed=0)
    secret = env.unwrapped._world.secret
    words = [
        w for w in ["crane", "moist", "pluck", "dough", "fizzy", "whelp", "abbey"] if w != secret
    ]
    total = 0.0
    for word in words[:MAX_GUESSES]:
        _, reward, terminated, _, info = env.step(word)
        total += reward
    assert terminated and total == 0.0 and not info["verdict"].passed
    env.close()
