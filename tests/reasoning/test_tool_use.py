"""The tool-use env: text and native calls, tool errors as feedback, the state gate, and
native tool calls end to end through the evaluator and the openai agent."""

import hashlib
import json

import pytest

import agentgym
from agentgym.envs.reasoning.tool_use import TOOLS, calculate
from agentgym.task_env import InvalidAction


@pytest.fixture
def env():
    made = agentgym.make("reasoning/ToolUse-v1")
    yield made
    made.close()


def start(env, task_id):
    env.reset(options={"task_id": task_id})
    return env.unwrapped.task.plan()


def test_the_tools_agents_see_are_pinned():
    # The JSON of TOOLS is what a function-calling agent reads: a change to it can change
    # scores, so it changes only with a version bump (docs/contract.md). Declared through
    # agentgym.tool since issue 28; these bytes are the ones the module's own _tool() gave.
    text = json.dumps(TOOLS)
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "f38852bd11e5aed25ddb295174d992c8446710e60cb85a3be2cb93b5513191c8"
    )
    order = next(t for t in TOOLS if t["name"] == "order")["parameters"]
    assert order["required"] == ["name", "quantity"] and order["additionalProperties"] is False


def test_text_and_native_calls_reach_the_same_tools(env):
    start(env, "dev/easy/0")
    by_text = env.step('get_item(name="lamp")')[0]
    by_json = env.step('{"name": "get_item", "arguments": {"name": "lamp"}}')[0]
    native = env.step({"name": "get_item", "arguments": {"name": "lamp"}})[0]
    assert by_text == by_json == native and '"price"' in native


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ('get_item(name="unicorn")', "no item named 'unicorn'"),
        ("get_item()", "missing required argument 'name'"),
        ('order(name="lamp", quantity="3")', "argument 'quantity' must be integer"),
        ('order(name="lamp", quantity=100000)', "the balance is"),
        ('teleport(to="home")', "unknown tool 'teleport'"),
        ('get_item(name=open("/etc/passwd"))', "literal values"),
        ("just some words", "write one tool call"),
    ],
)
def test_bad_calls_come_back_as_the_tools_error(env, call, says):
    start(env, "dev/medium/0")
    observation, _, terminated, _, info = env.step(call)
    assert info["invalid_action"] and says in observation and not terminated


def test_the_calculator_is_exact_and_runs_nothing_else():
    assert str(calculate("2*(3+4)/3")) == "14/3"
    for evil in ("__import__('os').system('id')", "9**9**9", "1/0", "x + 1"):
        with pytest.raises(InvalidAction):
            calculate(evil)


def test_the_state_gates_the_answer(env):
    plan = start(env, "test/medium/4")
    item, level = plan["target"]
    stock = env.unwrapped._world.stock[item]
    other = next(n for n in sorted(env.unwrapped._world.prices) if n != item)
    env.step(f'order(name="{other}", quantity=1)')  # buys something it was not asked to
    env.step(f'order(name="{item}", quantity={level - stock})')
    *_, info = env.step(f'answer(value="{plan["answer"]}")')
    assert info["verdict"].score == 0.0 and "nothing_else" in info["verdict"].details
    plan = start(env, "test/medium/4")
    env.step(f'order(name="{item}", quantity={level - stock})')
    _, reward, terminated, _, info = env.step(
        {"name": "answer", "arguments": {"value": plan["answer"]}}
    )
    assert terminated and reward == 1.0


def test_native_tool_calls_through_the_evaluator_and_the_openai_agent(tmp_path):
    """A scripted server (test double) plays the oracle's calls as native tool calls: the
    engine hands the env's tools to the agent, which sends them and turns the calls into
    actions; the episode is scored 1."""
    from scripted_server import completion, scripted

    from agentgym.eval import evaluate
    from agentgym.eval.plan import Benchmark

    benchmark = Benchmark.from_dict(
        {
            "name": "tools",
            "seed": 0,
            "envs": [
                {"id": "reasoning/ToolUse-v1", "split": "test", "difficulty": "medium", "tasks": 1}
            ],
        }
    )
    plan = benchmark.plan()[0]
    oracle_env = agentgym.make(plan.env_id)
    oracle_env.reset(seed=plan.seed, options={"task_id": plan.task_id})
    calls = []
    while (action := oracle_env.unwrapped.oracle_action()) is not None:
        calls.append(json.loads(action))
        if oracle_env.step(action)[2]:
            break
    oracle_env.close()

    def reply(body, index):
        call = calls[index]
        tool_call = {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
        }
        return 200, completion(None, tool_calls=[tool_call]), {}

    with scripted(reply) as server:
        result = evaluate(benchmark, f"openai:m@{server.url}", tmp_path / "run", num_envs=1)
    assert result.records[0].verdict.passed, result.records[0].error
    sent = server.requests
    assert [t["function"]["name"] for t in sent[0]["tools"]] == [t["name"] for t in TOOLS]
    assert sent[1]["messages"][-1]["role"] == "tool"
    assert sent[1]["messages"][-1]["tool_call_id"] == "call_0"


@pytest.mark.parametrize(
    "call",
    [
        '{"name": "get_balance"}',  # no arguments at all: before, a KeyError crashed the step
        '```json\n{"name": "get_balance", "arguments": {}}\n```',
        '{"name": "get_balance", "arguments": "{}"} and that is my call',
        "get_balance()",
        {"name": "get_balance"},
    ],
)
def test_every_way_of_writing_a_call_reaches_the_tool(env, call):
    start(env, "dev/easy/0")
    observation, _, _, _, info = env.step(call)
    assert not info["invalid_action"] and observation.startswith("get_balance -> ")


def test_an_answer_that_is_no_number_is_wrong_but_a_broken_checker_is_an_error(monkeypatch):
    from agentgym.envs.reasoning import tool_use
    from agentgym.errors import VerifierError

    assert not tool_use._numeric_equal("lots of apples", "12")
    assert not tool_use._numeric_equal("9^{9^{9}}", "12")  # too large to evaluate: just wrong

    def broken(prediction, gold):  # a double: the math worker could not start
        raise VerifierError("the math worker did not start")

    monkeypatch.setattr(tool_use, "math_equal", broken)
    with pytest.raises(VerifierError):  # was caught and scored 0 as a wrong answer
        tool_use._numeric_equal("12", "12")
