"""Seating: one agent in one seat of a multi-agent game, as a single-agent env."""

import io
import json

import numpy as np
import pytest

import agentgym
from agentgym import cli
from agentgym.checker import check_env
from agentgym.errors import ResetNeeded, UsageError
from agentgym.eval.plan import load_benchmark
from agentgym.seating import SeatedEnv, seat_kwargs

TICTACTOE = "multiagent/TicTacToe-v0"


def seated(env_id=TICTACTOE, **kwargs):
    return agentgym.make(env_id, **kwargs)


def finish(env, info, policy):
    """Play ``policy(info)`` to the end; the last step's tuple and the sum of rewards."""
    total, step = 0.0, None
    while step is None or not (step[2] or step[3]):
        step = env.step(policy(info))
        info, total = step[4], total + step[1]
    return step, total


def test_the_second_seat_starts_after_the_opponents_first_move():
    env = seated(opponent="solver", seat="player_1")
    observation, info = env.reset(seed=0, options={"task_id": "test/empty/0"})
    game = agentgym.make_multi(TICTACTOE)
    game.reset(seed=0, options={"task_id": "test/empty/0"})
    game.step(game.unwrapped.oracle_action("player_0"))  # the solver's first move
    assert observation == game.observe("player_1")
    assert observation.count("X") == 1 and "You are O (player_1). Your turn." in observation
    assert info["seat"] == "player_1" and info["opponents"] == {"player_0": "solver"}
    assert len(info["admissible_actions"]) == 8
    assert (
        "You play player_1; the other seats are played by player_0: solver."
        in (info["instructions"])
    )
    assert info["instructions"].startswith("Tic-tac-toe on a 3x3 grid.")
    env.close()


def test_an_invalid_action_is_the_games_feedback_unchanged():
    env = seated(opponent="solver", seat="player_1")
    env.reset(seed=0, options={"task_id": "test/empty/0"})
    observation, reward, terminated, truncated, info = env.step("place 9 9")
    game = agentgym.make_multi(TICTACTOE)
    game.reset(seed=0, options={"task_id": "test/empty/0"})
    game.step(game.unwrapped.oracle_action("player_0"))
    game.step("place 9 9")
    assert observation == game.observe("player_1")
    assert observation.startswith("Invalid action:") and "Legal moves:" in observation
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] is True and info["invalid_actions"] == 1
    assert not info["verdict"].passed and info["verdict"].details == "the game is not over"
    for _ in range(2):  # the game's mistake limit forfeits the seat
        step = env.step("nonsense")
    assert step[2] and info["seat"] == "player_1"
    assert step[4]["verdict"].details == "lost" and step[1] == 0.0
    env.close()


def test_the_end_is_the_games_verdict_and_the_return_equals_the_score():
    env = seated(opponent="random")
    outcomes = set()
    for seed in range(6):
        _, info = env.reset(seed=seed, options={"task_id": f"test/empty/{seed}"})
        (_, _, terminated, truncated, last), total = finish(
            env, info, lambda _: env.unwrapped.oracle_action()
        )
        verdict = last["verdict"]
        assert terminated and not truncated
        assert total == verdict.score and last["game_reward"] == 2 * verdict.score - 1
        assert verdict.details in ("won", "drew") and verdict.passed == (verdict.score == 1.0)
        outcomes.add(verdict.details)
        with pytest.raises(ResetNeeded):
            env.step("place 1 1")
    assert "won" in outcomes  # the solver beats random from an empty board
    env.close()


def test_a_game_the_opponent_ends_before_the_seats_turn_ends_at_its_first_step():
    env = seated(opponent="solver", seat="player_1")  # X wins test/midgame/4 in one move
    observation, info = env.reset(seed=0, options={"task_id": "test/midgame/4"})
    assert "X X X" in observation and info["admissible_actions"] == []
    _, reward, terminated, truncated, info = env.step("anything")
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["verdict"].details == "lost" and info["game_reward"] == -1.0
    with pytest.raises(ResetNeeded):
        env.step("place 1 1")
    env.close()


def test_alternate_plays_every_side_equally_and_is_fixed_by_the_task():
    env = seated(opponent="random")
    suite = ["test/empty/0", "test/empty/1", "test/opening/0", "test/opening/1"]
    suite += ["test/midgame/0", "test/midgame/1"]
    seats = [env.reset(seed=s, options={"task_id": t})[1]["seat"] for s, t in enumerate(suite)]
    assert seats.count("player_0") == seats.count("player_1") == 3
    again = [env.reset(seed=99, options={"task_id": t})[1]["seat"] for t in suite]
    assert again == seats  # the task decides, not the seed
    drawn = {env.reset(seed=seed)[1]["seat"] for seed in range(12)}  # tasks drawn by seed
    assert drawn == {"player_0", "player_1"}
    chess = SeatedEnv(agentgym.make_multi("multiagent/Chess-v0"), "random")
    named = ["test/standard", "test/slav", "test/scotch", "test/nimzo-indian"]
    sides = [chess.reset(seed=0, options={"task_id": t})[1]["seat"] for t in named]
    assert sides == ["player_0", "player_1", "player_0", "player_1"]
    chess.close()
    env.close()


@pytest.mark.parametrize(
    ("env_id", "opponent"), [(TICTACTOE, "random"), ("multiagent/KuhnPoker-v0", "cfr")]
)
def test_the_same_seed_plays_the_same_episode(env_id, opponent):
    def episode(seed):
        env = seated(env_id, opponent=opponent)
        rng = np.random.default_rng(seed)
        observation, info = env.reset(seed=seed)
        seen = [(observation, info["state_key"], info["seat"])]
        done = False
        while not done:
            actions = info["admissible_actions"]
            observation, reward, terminated, truncated, info = env.step(
                actions[int(rng.integers(len(actions)))]
            )
            seen.append((observation, reward, info["state_key"]))
            done = terminated or truncated
        env.close()
        return seen, info["verdict"]

    assert episode(3) == episode(3)
    assert any(episode(3)[0] != episode(seed)[0] for seed in range(4, 8))


def test_unknown_players_and_seats_are_one_clear_line():
    with pytest.raises(
        UsageError, match="no reference player 'nobody'; its players are random, solver"
    ):
        seated(opponent="nobody")
    with pytest.raises(UsageError, match=r"seats are \['player_0', 'player_1'\], or 'alternate'"):
        seated(opponent="random", seat="player_9")
    with pytest.raises(UsageError, match="must name a player for each of the seats"):
        seated(opponent={"player_1": "random"})  # alternate: both seats need a player
    with pytest.raises(UsageError, match=r"opponent=NAME.*NAME one of random, solver"):
        seated()
    env = seated(opponent={"player_0": "solver"}, seat="player_1")
    assert env.reset(seed=0)[1]["opponents"] == {"player_0": "solver"}
    env.close()


def test_make_gives_the_standard_wrappers_and_records_the_kwargs():
    env = seated(opponent="solver", seat="player_0", max_episode_steps=3)
    assert repr(env).startswith("<TimeLimit<OrderEnforcing<PassiveEnvChecker<SeatedEnv<")
    assert env.spec.kwargs == {"opponent": "solver", "seat": "player_0"}
    env.reset(seed=0, options={"task_id": "test/empty/0"})
    with pytest.raises(UsageError, match="unknown reset option"):
        env.reset(options={"seat": "player_1"})
    env.close()


def test_seat_kwargs_reads_the_command_line():
    assert seat_kwargs([], None) == {}
    assert seat_kwargs(["cfr"], "player_1") == {"opponent": "cfr", "seat": "player_1"}
    assert seat_kwargs(["player_0=a", "player_1=b"], None) == {
        "opponent": {"player_0": "a", "player_1": "b"}
    }
    for bad, seat in ((["a", "b"], None), (["a", "player_1=b"], None), ([], "player_0")):
        with pytest.raises(UsageError):
            seat_kwargs(bad, seat)


@pytest.mark.parametrize(
    ("env_id", "opponent"),
    [(TICTACTOE, "solver"), ("multiagent/RockPaperScissors-v0", "random")],
)
def test_the_single_agent_checks_pass_on_a_seated_game(env_id, opponent):
    # The oracle, random-agent and task-blind checks ask for an oracle at the maximum score:
    # a game against a reference player is a contest, not a puzzle (seating's docstring).
    report = check_env(
        lambda: seated(env_id, opponent=opponent),
        skip=("oracle", "random_agent", "task_blind"),
        leak_cycles=10,
    )
    checks = {"gymnasium", "info_contract", "determinism", "bad_actions", "close", "leaks"}
    assert checks <= set(report.passed)


def test_eval_seats_an_agent_and_the_ledger_records_the_opponent(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["eval", "--env", TICTACTOE, "--opponent", "random", "--agent", "random"]
    assert cli.main([*args, "--tasks", "2", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["status"] == "ok" for r in records)
    assert {r["spec"]["env_kwargs"]["opponent"] for r in records} == {"random"}
    assert {r["steps"][-1]["info"]["seat"] for r in records} == {"player_0", "player_1"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["benchmark"]["envs"][0]["kwargs"] == {"opponent": "random"}
    capsys.readouterr()
    resumed = ["eval", "--env", TICTACTOE, "--opponent", "solver", "--agent", "random"]
    assert cli.main([*resumed, "--tasks", "2", "--out", str(out), "--resume"]) == 2
    assert "benchmark_hash" in capsys.readouterr().err  # another opponent: another suite


def test_play_seats_a_person(monkeypatch, capsys):
    lines = io.StringIO("place 2 2\n:quit\n")
    monkeypatch.setattr("sys.stdin", lines)
    argv = ["play", TICTACTOE, "--opponent", "solver", "--seat", "player_1"]
    assert cli.main([*argv, "--task-id", "test/empty/0", "--seed", "0"]) == 0
    shown = capsys.readouterr().out
    assert "You play player_1; the other seats are played by player_0: solver." in shown
    assert "You are O (player_1). Your turn." in shown


BLIND = {
    "first legal move": lambda info: (info["admissible_actions"] or ["pass"])[0],
    "last legal move": lambda info: (info["admissible_actions"] or ["pass"])[-1],
    "the same text": lambda info: "I guess the word is apple. [Accept]",
}
"""Policies that read nothing of the game (an illegal text forfeits after the game's limit)."""

CHEAP_GAMES = (
    TICTACTOE,
    "multiagent/ConnectFour-v0",
    "multiagent/Taboo-v0",
    "multiagent/Negotiation-v2",
)
"""The games whose benchmark opponent plays fast enough for the suite. Poker is left out
(one hand is luck: a blind policy wins some)."""


@pytest.mark.parametrize("env_id", CHEAP_GAMES)
def test_a_task_blind_policy_does_not_pass_against_the_benchmark_opponent(env_id):
    (entry,) = [e for e in load_benchmark("multiagent-v0").envs if e.id == env_id]
    env = seated(env_id, **entry.kwargs)
    for task_id in entry.task_ids()[:4]:
        for name, policy in BLIND.items():
            _, info = env.reset(seed=0, options={"task_id": task_id})
            if "admissible_actions" not in info and name != "the same text":
                continue
            (_, _, terminated, _, last), _ = finish(env, info, policy)
            assert terminated and not last["verdict"].passed, (task_id, name, last["verdict"])
    env.close()


def test_agentgym_benchmarks_names_the_opponents_of_multiagent_v0(capsys):
    assert cli.main(["benchmarks", "multiagent-v0", "--no-counts"]) == 0
    shown = capsys.readouterr().out
    assert "multiagent/ConnectFour-v0  6 test tasks (at most), against solver-depth-4" in shown


def test_a_seated_game_declares_the_games_chance_score():
    """A guess earns what the game says it does, seated or not (the checkers read it)."""
    env = agentgym.make("multiagent/Taboo-v0", opponent="cautious")
    try:
        assert env.unwrapped.metadata["chance_score"] == 0.5
    finally:
        env.close()
