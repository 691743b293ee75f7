"""The math envs: generated problems, dataset files in their published formats, the tool."""

import json
from fractions import Fraction

import pytest

import agentgym
from agentgym.envs.reasoning.math_problems import LEVELS, format_number, generate
from agentgym.errors import UsageError


@pytest.mark.parametrize("level", list(LEVELS))
def test_generated_answers_are_what_the_expression_computes(level):
    for seed in range(200):
        problem = generate(level, seed)
        value = eval(problem.expression, {"Fraction": Fraction})  # the project's own code
        assert format_number(Fraction(value)) == problem.answer
        assert problem.answer in problem.solution


def test_number_format():
    assert format_number(Fraction(25, 2)) == "12.5"
    assert format_number(Fraction(7, 3)) == "7/3"
    assert format_number(Fraction(-4)) == "-4"


def test_single_turn_scores_equivalent_forms_and_asks_for_a_marked_answer():
    env = agentgym.make("reasoning/Math-v1")
    _, info = env.reset(options={"task_id": "dev/hard/5"})
    gold = env.unwrapped.task.gold
    _, reward, terminated, _, info = env.step(f"So it is \\boxed{{{gold}}}.")
    assert reward == 1.0 and terminated and info["verdict"].passed
    env.reset(options={"task_id": "dev/hard/5"})
    observation, reward, *_, info = env.step(f"maybe {gold}")
    assert info["invalid_action"] and reward == 0.0
    assert "no final answer found" in observation and "\\boxed{ANSWER}" in observation
    env.close()


def test_the_tool_runs_python_in_a_sandbox_then_the_answer_is_scored():
    env = agentgym.make("reasoning/MathTool-v1")
    observation, _ = env.reset(options={"task_id": "test/medium/2"})
    task = env.unwrapped.task
    observation, reward, terminated, *_ = env.step(
        "Let me compute.\n```python\nimport socket, os\nprint(6 * 7, os.getuid() != 0)\n```"
    )
    assert "42 True" in observation and not terminated and reward == 0.0
    observation, *_ = env.step("```python\nwhile True: pass\n```")
    assert "timed out" in observation
    _, reward, terminated, *_ = env.step(f"\\boxed{{{task.gold}}}")
    assert terminated and reward == 1.0
    env.close()


def test_dataset_files_in_their_published_formats(tmp_path):
    gsm8k = tmp_path / "gsm8k.jsonl"
    gsm8k.write_text(
        json.dumps({"question": "Tom has 3 + 4 apples. How many?", "answer": "3+4=7\n#### 7"})
        + "\n"
        + json.dumps({"question": "A big sum?", "answer": "#### 1,234"})
        + "\n"
    )
    math_file = tmp_path / "math.jsonl"
    math_file.write_text(
        json.dumps(
            {
                "problem": "What is $1/2 + 1/4$?",
                "solution": "We add: $\\boxed{\\frac{3}{4}}$.",
                "level": "Level 2",
                "type": "Prealgebra",
            }
        )
        + "\n"
    )
    aime = tmp_path / "aime.jsonl"
    aime.write_text(json.dumps({"problem": "Find N.", "answer": 204}) + "\n")
    for dataset, path, reply in (
        ("gsm8k", gsm8k, "The answer is 1234."),
        ("math", math_file, "\\boxed{0.75}"),
        ("aime", aime, "\\boxed{204}"),
    ):
        env = agentgym.make("reasoning/Math-v1", dataset=dataset, path=str(path))
        ids = env.unwrapped.tasks.ids("test")
        env.reset(options={"task_id": ids[-1]})
        *_, info = env.step(reply)
        assert info["verdict"].passed, (dataset, info["verdict"])
        env.close()
    env = agentgym.make("reasoning/Math-v1", dataset="math", path=str(math_file))
    assert env.unwrapped.tasks.difficulties == ("level2",)
    env.close()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q", "answer": "no hashes"}) + "\n")
    with pytest.raises(UsageError, match=r"bad.jsonl:1.*####"):
        agentgym.make("reasoning/Math-v1", dataset="gsm8k", path=str(bad))
    with pytest.raises(UsageError, match="both"):
        agentgym.make("reasoning/Math-v1", dataset="gsm8k")


def test_oracles_through_the_evaluator(tmp_path):
    from agentgym.eval import evaluate
    from agentgym.eval.plan import Benchmark

    benchmark = Benchmark.from_dict(
        {
            "name": "math",
            "seed": 0,
            "envs": [
                {"id": "reasoning/Math-v1", "split": "test", "tasks": 6},
                {"id": "reasoning/MathTool-v1", "split": "test", "tasks": 3},
            ],
        }
    )
    result = evaluate(benchmark, "oracle", tmp_path / "run", num_envs=4)
    assert result.summary["overall"]["success"] == 1.0
    assert result.summary["overall"]["errored"] == 0


def test_a_sandbox_that_dies_errors_the_episode_instead_of_scoring_it(tmp_path):
    """Fault injection: the agent's second move kills the episode's sandbox (its keeper
    process, SIGKILL) before asking for another run; the evaluator records the episode as
    errored, and the statistics count it apart from the scores."""
    import os
    import signal

    from agentgym.agents import Agent
    from agentgym.eval import EngineLimits, evaluate
    from agentgym.eval.plan import Benchmark

    class Saboteur(Agent):
        def reset(self, context):
            self.env, self.turn = context.env.unwrapped, 0

        def act_sync(self, observation, info):
            self.turn += 1
            if self.turn == 2:
                sandbox = self.env._world.python._sandbox
                os.kill(sandbox._keeper.pid, signal.SIGKILL)
                sandbox._keeper.wait()
            return "```python\nprint(6 * 7)\n```"

    benchmark = Benchmark.from_dict(
        {"name": "crash", "envs": [{"id": "reasoning/MathTool-v1", "split": "test", "tasks": 2}]}
    )
    result = evaluate(
        benchmark, Saboteur, tmp_path / "run", num_envs=2, limits=EngineLimits(retries=0)
    )
    assert [r.status for r in result.records] == ["errored", "errored"]
    assert "SandboxError" in result.records[0].error
    assert result.summary["overall"]["errored"] == 2 and result.summary["overall"]["scored"] == 0
