"""The human agent, fed typed lines: it plays what is typed and shows what a player needs."""

import io

import pytest

import agentgym
from agentgym.agents import HumanAgent
from agentgym.errors import UsageError
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark

BENCHMARK = Benchmark.from_dict(
    {
        "name": "human",
        "seed": 5,
        "envs": [{"id": "games/TowerOfHanoi-v0", "split": "dev", "difficulty": "easy", "tasks": 1}],
    }
)


def oracle_moves() -> list[str]:
    plan = BENCHMARK.plan()[0]
    env = agentgym.make(plan.env_id)
    env.reset(seed=plan.seed, options={"task_id": plan.task_id})
    moves = []
    while (move := env.unwrapped.oracle_action()) is not None:
        moves.append(move)
        if env.step(move)[2]:
            break
    env.close()
    return moves


def test_typed_moves_solve_the_task_and_the_player_sees_the_game(tmp_path):
    lines = iter(["nonsense\n"] + [m + "\n" for m in oracle_moves()])
    screen = io.StringIO()
    result = evaluate(
        BENCHMARK,
        lambda: HumanAgent(lambda: next(lines, ""), screen),
        tmp_path / "run",
        num_envs=1,
    )
    assert result.records[0].verdict.passed
    shown = screen.getvalue()
    assert "Tower of Hanoi" in shown and "(actions: move" in shown and "Invalid action" in shown


def test_end_of_input_stops_the_run(tmp_path):
    with pytest.raises(UsageError, match="no more input"):
        evaluate(BENCHMARK, lambda: HumanAgent(lambda: "", io.StringIO()), tmp_path / "run")
