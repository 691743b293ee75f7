"""What every native puzzle must do, run over all of them (new puzzles are covered on registration).

The conformance checker samples one task per split and difficulty; these tests go further on
the puzzles, whose episodes are cheap: several seeds per level, and fuzzed input.
"""

import itertools

import numpy as np
import pytest

import agentgym
from agentgym.spaces import Text
from agentgym.task_env import InvalidAction

PUZZLES = [s.id for s in agentgym.list_envs(family="games") if ".puzzles." in s.entry_point]
ALPHABET = [*"0123456789 -+*/=,()[]\n\t`'\"中😀é", "move", "up", "reveal", "put", "guess", "a"]


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
@pytest.mark.parametrize("env_id", PUZZLES)
def test_the_oracle_solves_every_level_through_make(env_id, difficulty):
    env = agentgym.make(env_id)
    for seed in range(4):
        env.reset(seed=seed, options={"difficulty": difficulty})
        total, terminated, truncated = 0.0, False, False
        while not (terminated or truncated):
            _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            total += reward
            assert not info["invalid_action"], info
        assert terminated and total == 1.0 and info["verdict"].passed
    env.close()


@pytest.mark.parametrize("env_id", PUZZLES)
def test_fuzzed_text_raises_nothing_but_invalid_action_with_a_reason(env_id):
    rng = np.random.default_rng(7)
    space = Text(4096, seed=0)
    env = agentgym.make(env_id).unwrapped
    env.reset(seed=0, options={"difficulty": "hard"})
    world = env.get_state().world
    tokens = ("".join(rng.choice(ALPHABET, size=int(rng.integers(0, 12)))) for _ in range(300))
    characters = (space.sample() for _ in range(300))
    for text in itertools.chain(tokens, characters):
        try:
            world.copy().apply(text)
        except InvalidAction as mistake:
            assert str(mistake), f"{env_id}: empty InvalidAction for {text!r}"
