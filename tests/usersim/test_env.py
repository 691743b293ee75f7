"""The customer-service envs through Gymnasium's API and the evaluator: oracle, floor, bad
tool calls, the policy the env enforces, reruns byte for byte, and the docs' example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ledger_lines import without_timing  # tests/: the ledger without its timing fields

import agentgym
from agentgym.envs.usersim.domain import Move, db_diff
from agentgym.envs.usersim.env import DOMAINS, load_domain
from agentgym.eval.plan import Benchmark
from agentgym.eval.run import evaluate

IDS = [f"usersim/{name.capitalize()}-v2" for name in DOMAINS]


def play(env, actions):
    """Step through ``actions`` until the episode ends; the last step's results."""
    result = None
    for action in actions:
        result = env.step(action)
        if result[2] or result[3]:
            break
    return result


def oracle_episode(env, task_id: str, seed: int = 0):
    env.reset(seed=seed, options={"task_id": task_id})
    terminated = truncated = False
    steps = 0
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        steps += 1
    return info, steps


@pytest.mark.parametrize("env_id", IDS)
def test_the_oracle_scores_one_on_test_tasks_of_every_difficulty(env_id):
    env = agentgym.make(env_id)
    for difficulty in ("easy", "medium", "hard"):
        for index in (0, 1, 7):
            task_id = f"test/{difficulty}/{index}"
            info, _ = oracle_episode(env, task_id)
            verdict = info["verdict"]
            assert verdict.score == 1.0, (task_id, verdict.details)
            assert info["tool_errors"] == 0 and info["policy_violations"] == 0
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_doing_nothing_scores_zero(env_id):
    env = agentgym.make(env_id, max_episode_steps=12)
    for difficulty in ("easy", "hard"):
        env.reset(seed=1, options={"task_id": f"test/{difficulty}/3"})
        _, _, terminated, truncated, info = play(env, ["ok"] * 12)
        assert terminated or truncated
        assert info["verdict"].score == 0.0
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_bad_tool_calls_are_observations_and_are_counted(env_id):
    env = agentgym.make(env_id)
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    domain = env.unwrapped.domain
    write = next(t for t in domain.agent_tools() if t.writes)
    parameters = write.schema()["parameters"]
    typed = {"string": "x", "integer": 1, "number": 1.0, "boolean": False, "array": []}
    arguments = {
        name: typed.get(parameters["properties"][name].get("type"), {})
        for name in parameters["required"]
    }
    bad = [
        ('{"name": "no_such_tool", "arguments": {}}', "unknown tool"),
        ('{"name": "' + write.name + '", "arguments": 7}', "must be an object"),
        ('{"name": ', "not valid JSON"),
        ({"name": write.name, "arguments": {k: None for k in arguments}}, "must be"),
        ({"name": write.name, "arguments": arguments}, "not authenticated"),
    ]
    for count, (action, words) in enumerate(bad, 1):
        observation, reward, terminated, truncated, info = env.step(action)
        assert words in observation, (action, observation)
        assert not (terminated or truncated) and reward == 0.0
        assert info["tool_errors"] == count
    assert info["policy_violations"] == 1  # the write before authentication
    env.close()


def _retail_task_with_a_write(env):
    """A retail test task whose script writes, and the script."""
    for index in range(40):
        task = env.unwrapped.tasks.get(f"test/easy/{index}")
        tools = {t.name: t for t in env.unwrapped.domain.agent_tools()}
        if any(m.call and tools[m.call].writes for m in task.draft.moves):
            return task
    raise AssertionError("no easy retail test task writes")


def test_a_write_without_explicit_confirmation_breaks_the_policy():
    env = agentgym.make("usersim/Retail-v2")
    task = _retail_task_with_a_write(env)
    tools = {t.name: t for t in env.unwrapped.domain.agent_tools()}
    env.reset(seed=0, options={"task_id": task.id})
    moves = list(task.draft.moves)
    # The script without the confirmation request before its first write.
    first = next(i for i, m in enumerate(moves) if m.call and tools[m.call].writes)
    ask = max(i for i in range(first) if moves[i].say is not None)
    actions = [m.action() for i, m in enumerate(moves) if i != ask]
    _, _, _, _, info = play(env, [*actions, *["Is there anything else?"] * 12])
    verdict = info["verdict"]
    assert verdict.components["policy"] == 0.0 and verdict.score == 0.0
    assert "without the user's explicit confirmation" in verdict.details
    env.close()


def test_calls_can_be_written_as_json_as_python_or_natively_and_respond_talks():
    env = agentgym.make("usersim/Retail-v2")
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    native = env.step({"name": "list_all_product_types", "arguments": {}})[0]
    written = env.step('{"name": "list_all_product_types", "arguments": {}}')[0]
    python = env.step("list_all_product_types()")[0]
    assert native == written == python and native.startswith("Tool list_all_product_types")
    said = env.step({"name": "respond", "arguments": {"message": "Hello! How can I help?"}})[0]
    assert said.startswith("User: ")
    env.close()


def test_a_call_in_a_fence_with_a_lowercase_tag_is_a_call_and_prose_is_a_message():
    # One detector for the agent and for a model playing the user (agentgym's
    # looks_like_tool_call): a fenced JSON object is a call under any lowercase tag, as it was
    # for the v1 ids' agents; ```JSON stays a message so that their scores do not move.
    env = agentgym.make("usersim/Retail-v2")
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    call = '{"name": "list_all_product_types", "arguments": {}}'
    for fenced in (f"```python\n{call}\n```", f"```json\n{call}\n```", f"```\n{call}\n```"):
        assert env.step(fenced)[0].startswith("Tool list_all_product_types returned")
    assert env.step(f"```JSON\n{call}\n```")[0].startswith("User: ")
    assert env.step("I will check {the products} for you.")[0].startswith("User: ")
    env.close()


@pytest.mark.parametrize(
    "action",
    [
        'find_user_id_by_emial(email="mia@example.com")',  # a typo of a tool: snake_case
        "find_user_id_by_emial(email=mia@example.com)",  # its arguments do not even parse
        'lookup(order_id="#W2043135")',  # one word, but keyword arguments: code
        '```python\nget_order(order_id="#W2043135")\n```',  # in a fence
        "get_order_status()",
    ],
)
def test_a_python_style_call_of_an_unknown_tool_is_an_invalid_action(action):
    env = agentgym.make("usersim/Retail-v2")
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation.startswith("Invalid action: unknown tool"), observation
    assert "find_user_id_by_email" in observation and "respond" in observation  # the tools
    assert info["invalid_action"] and info["tool_errors"] == 1 and reward == 0.0
    assert not (terminated or truncated)
    assert [role for role, _ in env.unwrapped._world.transcript] == ["user"]  # nothing said
    env.close()


@pytest.mark.parametrize(
    "message",
    [
        "Sure (one moment) I will look it up.",
        "Thanks(really)",
        "Sure (1)",
        "Could you confirm your email address (the one on the account)?",
        "I have cancelled it (order #W2043135)",
    ],
)
def test_prose_with_parentheses_is_a_message_to_the_user(message):
    env = agentgym.make("usersim/Retail-v2")
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    observation, _, _, _, info = env.step(message)
    assert observation.startswith("User: ") and not info["invalid_action"], observation
    env.close()


def test_the_instructions_hold_the_role_the_policy_and_every_tool():
    env = agentgym.make("usersim/Airline-v2")
    observation, info = env.reset(seed=0, options={"task_id": "test/medium/2"})
    domain = env.unwrapped.domain
    assert observation.startswith("User: ")
    assert domain.policy.strip()[:200] in info["instructions"]
    for tool in domain.agent_tools():
        assert f"- {tool.name}(" in info["instructions"]
    env.close()


def test_the_state_key_follows_the_database_and_the_conversation():
    env = agentgym.make("usersim/Retail-v2")
    _, first = env.reset(seed=0, options={"task_id": "test/easy/0"})
    _, again = env.reset(seed=5, options={"task_id": "test/easy/0"})
    assert first["state_key"] == again["state_key"]
    keys = {first["state_key"]}
    terminated = False
    while not terminated:
        *_, terminated, _, info = env.step(env.unwrapped.oracle_action())
        keys.add(info["state_key"])
    assert len(keys) > 3
    env.close()


def benchmark(env_id: str, tasks: int = 3, episodes: int = 1) -> Benchmark:
    return Benchmark.from_dict(
        {
            "name": "usersim-test",
            "seed": 4,
            "episodes_per_task": episodes,
            "sampling": {"temperature": 0.0, "max_tokens": 24},
            "envs": [{"id": env_id, "split": "test", "tasks": tasks}],
        }
    )


def test_reruns_with_the_scripted_user_are_byte_identical(tmp_path):
    """Same seeds, the scripted user and a deterministic agent (the oracle on one env, a
    fixed reply on another): the same ledger, timing aside."""
    for env_id, agent in (("usersim/Telecom-v2", "oracle"), ("usersim/Retail-v2", "random")):
        lines = []
        for run in ("a", "b"):
            out = tmp_path / f"{env_id.replace('/', '-')}-{run}"
            evaluate(benchmark(env_id, tasks=3, episodes=2), agent, out, num_envs=3)
            lines.append(
                [without_timing(x) for x in (out / "episodes.jsonl").read_text().split("\n") if x]
            )
        assert lines[0] == lines[1] and len(lines[0]) == 6


def test_the_oracle_scores_pass_hat_4_of_one_through_the_evaluator(tmp_path):
    result = evaluate(benchmark("usersim/Airline-v2", tasks=3, episodes=4), "oracle", tmp_path)
    overall = result.summary["overall"]
    assert overall["pass^4"] == 1.0 and overall["pass^1"] == 1.0


def test_the_docs_example_runs(capsys):
    doc = (Path(__file__).parents[2] / "docs" / "envs" / "usersim.md").read_text()
    block = re.findall(r"```python\n(.*?)```", doc, flags=re.DOTALL)[0]
    exec(compile(block, "docs/envs/usersim.md", "exec"), {})
    assert "{'database': 1.0, 'outputs': 1.0, 'policy': 1.0}" in capsys.readouterr().out


def test_every_domain_has_twenty_templates_over_three_difficulties():
    for name in DOMAINS:
        templates = load_domain(name).templates()
        assert len(templates) >= 20, name
        assert {t.difficulty for t in templates} == {"easy", "medium", "hard"}, name


def test_a_move_is_a_message_or_a_call():
    with pytest.raises(ValueError, match="not both or neither"):
        Move(say="hi", call="x")


def test_a_verdict_diff_shows_where_two_long_values_differ():
    # The same 200-character prefix: a cut of both at 120 characters printed two equal texts.
    prefix = "Gift wrap, please. " * 11
    got = {"orders": {"#W1": {"note": prefix + "Leave it at the door.", "items": [1, 2, 3]}}}
    want = {"orders": {"#W1": {"note": prefix + "Ring the bell twice.", "items": [1, 5, 3]}}}
    items, note = db_diff(got, want)
    assert items == "orders/#W1/items/1: 2 (want 5)"  # the item that differs, not the lists
    shown, wanted = re.fullmatch(r"orders/#W1/note: (.*) \(want (.*)\)", note).groups()
    assert shown != wanted and shown.startswith("...") and wanted.startswith("...")
    assert "Leave it at the door" in shown and "Ring the bell twice" in wanted
    assert len(shown) < 130 and len(wanted) < 130


def test_a_verdict_diff_names_the_keys_of_a_record_that_differ():
    got = {"users": {"u1": {"address": {"city": "Oslo", "zip": "0150"}, "name": "Mia"}}}
    want = {"users": {"u1": {"address": {"city": "Bergen", "zip": "0150"}, "name": "Mia"}}}
    want["users"]["u1"]["phone"] = "555"
    assert db_diff(got, want) == [
        'users/u1/address/city: "Oslo" (want "Bergen")',
        'users/u1/phone: absent (want "555")',
    ]
