"""The contract every multi-agent id keeps, run over the whole registry: a game registered
later is covered the moment it is registered, with nothing here naming it.

PettingZoo's own tests (``api_test`` or ``parallel_api_test``, then ``seed_test`` or
``parallel_seed_test``) through :func:`~agentgym.multiagent_checker.check_pettingzoo`, a few
cycles each (``tests/test_conformance.py`` runs the whole checker with 200); every game names a
``"random"`` reference player; and :func:`~agentgym.multiagent.play_game` with it in every seat
finishes, and replays to the same game from the same seed.
"""

import pytest

import agentgym
from agentgym.multiagent import play_game
from agentgym.multiagent_checker import check_pettingzoo

MULTIAGENT_IDS = [spec.id for spec in agentgym.list_envs() if spec.kind != "env"]
PETTINGZOO_CYCLES = 10
"""Cycles of each PettingZoo test here (random text forfeits within three moves, so a few
cycles already play whole games)."""
RANDOM_GAME_TURNS = 2_000
"""Turns a game of random legal moves must finish in."""


@pytest.mark.parametrize("env_id", MULTIAGENT_IDS)
def test_pettingzoos_api_and_seed_tests_pass(env_id):
    check_pettingzoo(lambda: agentgym.make_multi(env_id), env_id, cycles=PETTINGZOO_CYCLES)


@pytest.mark.parametrize("env_id", MULTIAGENT_IDS)
def test_random_players_finish_a_game_that_replays_from_its_seed(env_id):
    env = agentgym.make_multi(env_id)
    players = env.unwrapped.reference_players()
    assert "random" in players, f"{env_id} must name a 'random' reference player"
    seated = [{agent: players["random"]() for agent in env.possible_agents} for _ in range(2)]
    first = play_game(env, seated[0], seed=7, max_turns=RANDOM_GAME_TURNS)
    assert first.finished, f"{env_id}: random play did not end in {RANDOM_GAME_TURNS} turns"
    assert set(first.outcome) == set(env.possible_agents)
    assert first.invalid_actions == dict.fromkeys(env.possible_agents, 0)
    again = play_game(env, seated[1], seed=7, max_turns=RANDOM_GAME_TURNS)
    assert (again.moves, again.outcome, again.task_id) == (
        first.moves,
        first.outcome,
        first.task_id,
    )
    for players_of_a_game in seated:
        for player in players_of_a_game.values():
            player.close()
    env.close()
