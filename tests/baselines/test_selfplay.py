"""Self-play training: one trajectory per seat, SPIRAL's RAE, the opponent pool, an update,
and the seat-swapped match that measures a checkpoint against its start."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentgym.agents.base import FunctionAgent
from agentgym.arena import MatchRecord
from agentgym.baselines.advantages import role_conditioned
from agentgym.baselines.selfplay import (
    Args,
    OpponentPool,
    SelfPlayRollouts,
    advantages_for,
    plan_games,
    play_game,
    train,
)
from agentgym.baselines.selfplay_match import play_match, summarize
from agentgym.errors import UsageError

SEATS = ["player_0", "player_1"]


def first_legal(observation: Any, info: dict[str, Any]) -> str:
    return str(info["legal_actions"][0])


def last_legal(observation: Any, info: dict[str, Any]) -> str:
    return str(info["legal_actions"][-1])


@pytest.mark.parametrize("env_id", ["multiagent/TicTacToe-v0", "multiagent/KuhnPoker-v0"])
def test_each_seat_gets_its_own_turns_and_the_opposite_outcome(env_id: str) -> None:
    seats = {"player_0": FunctionAgent(first_legal), "player_1": FunctionAgent(last_legal)}
    names = {"player_0": "a", "player_1": "b"}
    records = asyncio.run(
        play_game(
            env_id, seats, names, seed=7, agent_seed=1, sampling={}, max_turns=20, iteration=3
        )
    )
    assert set(records) == set(SEATS)
    mine, theirs = records["player_0"], records["player_1"]
    assert mine.steps and theirs.steps
    # Turns alternate between the seats: together they are the game's moves.
    assert {s.action for s in mine.steps} <= {"check", "bet", "call", "fold"} or env_id.endswith(
        "TicTacToe-v0"
    )
    assert mine.total_reward == pytest.approx(-theirs.total_reward)  # zero-sum returns
    assert mine.verdict is not None and theirs.verdict is not None
    assert mine.verdict.score + theirs.verdict.score == pytest.approx(1.0)
    assert mine.spec.agent == "a" and theirs.spec.agent == "b"
    assert mine.spec.iteration == 3 and mine.spec.task_id == theirs.spec.task_id
    assert mine.steps[-1].terminated or theirs.steps[-1].terminated


def test_rae_follows_spirals_formula_by_hand() -> None:
    returns = [1.0, -1.0, 1.0, 0.5]
    roles = ["p0", "p1", "p0", "p1"]
    out, baselines = role_conditioned(returns, roles, {"p1": 0.2}, decay=0.9)
    # p0: b = 0.9*0 + 0.1*1 = 0.1, A = 0.9; then b = 0.9*0.1 + 0.1*1 = 0.19, A = 0.81
    # p1: b = 0.9*0.2 + 0.1*(-1) = 0.08, A = -1.08; then b = 0.9*0.08 + 0.1*0.5 = 0.122
    assert out == pytest.approx([0.9, -1.08, 0.81, 0.5 - 0.122])
    assert baselines == pytest.approx({"p0": 0.19, "p1": 0.122})
    with pytest.raises(ValueError, match="decay"):
        role_conditioned([1.0], ["p0"], {}, decay=1.5)


def test_rae_keys_baselines_by_game_and_seat_across_batches() -> None:
    args = Args(advantage="rae", rae_decay=0.5)
    returns = np.array([1.0, -1.0])
    first, state = advantages_for(args, returns, None, SEATS, np.ones(2), {})  # type: ignore[arg-type]
    assert first == pytest.approx([0.5, -0.5])
    second, state = advantages_for(args, returns, None, SEATS, np.ones(2), state)  # type: ignore[arg-type]
    assert second == pytest.approx([0.25, -0.25])  # the baselines carried over: 0.75, -0.75
    assert set(state) == {(args.env_id, "player_0"), (args.env_id, "player_1")}


def test_pool_games_seat_the_learner_alternately_against_one_sampled_copy() -> None:
    args = Args(opponents="pool", groups=6, group_size=3, seed=5)
    plans = plan_games(args, SEATS, iteration=2, pool_size=3)
    assert len(plans) == 18
    for number in range(6):
        group = plans[3 * number : 3 * number + 3]
        assert {p.learners for p in group} == {(SEATS[number % 2],)}
        assert len({p.opponent for p in group}) == 1  # one opponent per group
        assert len({p.seed for p in group}) == 1 and len({p.agent_seed for p in group}) == 3
    assert {p.opponent for p in plans} <= {0, 1, 2}
    assert plans == plan_games(args, SEATS, iteration=2, pool_size=3)  # deterministic
    self_play = plan_games(Args(groups=2, group_size=1), SEATS, iteration=0, pool_size=0)
    assert all(p.learners == tuple(SEATS) and p.opponent is None for p in self_play)


def test_the_pool_grows_every_k_updates_and_drops_the_oldest() -> None:
    from agentgym.baselines.policy import load_policy

    policy = load_policy("tiny", device="cpu")
    pool = OpponentPool(policy, every=2, size=2, max_batch=2)
    assert pool.added == [0]
    assert [pool.grow(n) for n in (1, 2, 3, 4)] == [False, True, False, True]
    assert pool.added == [2, 4] and len(pool.backends) == 2
    frozen = pool.backends[0].model
    assert all(not p.requires_grad for p in frozen.parameters())
    assert frozen is not policy.model


def test_rollouts_are_the_trainers_records_one_per_learner_seat(tmp_path: Path) -> None:
    from agentgym.baselines.policy import load_policy

    policy = load_policy("tiny", device="cpu")
    args = Args(model="tiny", groups=2, group_size=2, max_tokens=4, output_dir=str(tmp_path))
    rollouts, roles = SelfPlayRollouts(args, policy, SEATS).collect(0)
    assert rollouts.records and len(roles) == len(rollouts.records) == len(rollouts.groups)
    for record, group, role in zip(rollouts.records, rollouts.groups, roles, strict=True):
        assert group.startswith("0/") and group.endswith(role) and role in SEATS
        assert all(s.tokens is not None and s.tokens.logprobs for s in record.steps)


def test_one_update_changes_the_weights(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file

    from agentgym.baselines.policy import load_policy

    args = Args(
        model="tiny",
        iterations=1,
        groups=2,
        group_size=2,
        max_tokens=4,
        learning_rate=1e-3,
        output_dir=str(tmp_path / "run"),
    )
    run = train(args)
    checkpoint = run.latest_checkpoint()
    assert checkpoint is not None
    trained = load_file(str(next((checkpoint / "policy").glob("*.safetensors"))))
    start = load_policy("tiny", device="cpu", seed=args.seed).model.state_dict()
    changed = [k for k, v in trained.items() if not torch.equal(v, start[k])]
    assert changed  # the update moved the weights
    assert run.metrics()[0]["train/samples"] > 0
    state = torch.load(checkpoint / "trainer.pt", weights_only=False)
    assert set(state["rae_baselines"]) <= {f"{args.env_id}/{s}" for s in SEATS}


def test_bad_arguments_are_refused_naming_the_value(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--advantage 'ppo'"):
        train(Args(model="tiny", advantage="ppo", output_dir=str(tmp_path)))
    with pytest.raises(UsageError, match="two-player"):
        train(
            Args(model="tiny", env_id="multiagent/RockPaperScissors-v0", output_dir=str(tmp_path))
        )


def test_the_match_swaps_seats_and_scores_differences_by_hand() -> None:
    records = [
        MatchRecord(
            "0-0",
            "g",
            {"player_0": "new", "player_1": "old"},
            {"player_0": 1.0, "player_1": 0.0},
            "0",
        ),
        MatchRecord(
            "0-1",
            "g",
            {"player_0": "old", "player_1": "new"},
            {"player_0": 0.5, "player_1": 0.5},
            "0",
        ),
        MatchRecord(
            "1-0",
            "g",
            {"player_0": "new", "player_1": "old"},
            {"player_0": 0.25, "player_1": 0.75},
            "1",
        ),
        MatchRecord(
            "1-1",
            "g",
            {"player_0": "old", "player_1": "new"},
            {"player_0": 0.0, "player_1": 1.0},
            "1",
        ),
    ]
    summary = summarize(records, "new", "old")
    assert summary.score_difference[0] == pytest.approx((1 + 0 - 0.5 + 1) / 4)
    assert summary.win_minus_loss[0] == pytest.approx((1 + 0 - 1 + 1) / 4)
    assert summary.rating_difference[0] > 0


def test_a_match_between_two_policies_plays_each_start_from_both_seats() -> None:
    from agentgym.baselines.policy import load_policy

    policies = {
        "a": load_policy("tiny", device="cpu", seed=1),
        "b": load_policy("tiny", device="cpu", seed=2),
    }
    records = play_match(
        "multiagent/KuhnPoker-v0", policies, games=2, sampling={"max_tokens": 4}, num_envs=4
    )
    assert len(records) == 4
    for k in range(2):
        pair = [r for r in records if r.group == str(k)]
        assert [r.seats["player_0"] for r in pair] == ["a", "b"]
        assert all(sum(r.scores.values()) == pytest.approx(1.0) for r in pair)


def test_a_resumed_pool_run_has_the_pool_of_an_uninterrupted_one(tmp_path: Path) -> None:
    import torch

    def args(out: str, iterations: int, resume: bool = False) -> Args:
        return Args(
            model="tiny",
            opponents="pool",
            pool_every=1,
            pool_size=2,
            iterations=iterations,
            groups=2,
            group_size=1,
            max_tokens=4,
            learning_rate=1e-3,
            checkpoint_every=2,
            resume=resume,
            output_dir=str(tmp_path / out),
        )

    whole = train(args("whole", 3))
    train(args("cut", 2))  # stopped after iteration 1's checkpoint
    with pytest.raises(UsageError, match="has done 2 iterations already"):
        train(args("cut", 2, resume=True))
    resumed = train(args("cut", 3, resume=True))

    def saved(run: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        state = torch.load(run.latest_checkpoint() / "trainer.pt", weights_only=False)
        copies = {e["file"]: torch.load(run.dir / e["file"]) for e in state["opponent_pool"]}
        assert sorted(p.name for p in (run.dir / "pool").iterdir()) == sorted(
            Path(f).name for f in copies
        )  # the dropped copies' files are gone
        return state, copies

    (state, copies), (again, copies_again) = saved(whole), saved(resumed)
    assert state["opponent_pool"] == again["opponent_pool"]
    assert [e["added"] for e in state["opponent_pool"]] == [2, 3]
    for file, weights in copies.items():
        assert weights.keys() == copies_again[file].keys()
        assert all(torch.equal(v, copies_again[file][k]) for k, v in weights.items())
    assert state["rae_baselines"] == pytest.approx(again["rae_baselines"])
    assert state["rae_baselines"]  # RAE carried baselines, restored on the resume

    def untimed(run: Any) -> list[dict[str, float]]:
        timed = ("second", "time/")
        return [
            {k: v for k, v in r.items() if not any(t in k for t in timed)} for r in run.metrics()
        ]

    assert untimed(whole) == untimed(resumed)
