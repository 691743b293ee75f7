"""The text, chat and tool-call spaces are real Gymnasium spaces."""

import copy

import gymnasium
import pytest
from gymnasium.vector.utils import batch_space

from agentgym.spaces import ChatMessages, Text, ToolCall, tool

CALC = {
    "name": "add",
    "description": "add two numbers",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}


def test_text_holds_any_unicode_within_bounds():
    space = Text(5, min_length=1)
    assert space.contains("é✓中😀x")
    assert not space.contains("")
    assert not space.contains("toolong")
    assert not space.contains(b"bytes")


def test_text_samples_are_members_and_seeded():
    a, b = Text(100, seed=3), Text(100, seed=3)
    samples = [a.sample() for _ in range(20)]
    assert samples == [b.sample() for _ in range(20)]
    assert all(a.contains(s) for s in samples)


def test_text_rejects_impossible_bounds():
    with pytest.raises(ValueError, match="min_length=5, max_length=2"):
        Text(2, min_length=5)


def test_spaces_are_gymnasium_spaces_and_batch():
    for space in (Text(10), ChatMessages(), ToolCall([CALC])):
        assert isinstance(space, gymnasium.spaces.Space)
        assert isinstance(batch_space(space, 3), gymnasium.spaces.Tuple)


def test_chat_messages_checks_roles_and_contents():
    space = ChatMessages(max_messages=2, max_length=10)
    assert space.contains([{"role": "user", "content": "hi"}])
    assert not space.contains([{"role": "robot", "content": "hi"}])
    assert not space.contains([{"role": "user", "content": "x" * 11}])
    assert not space.contains([{"role": "user", "content": "a"}] * 3)
    assert space.contains(space.sample())


def test_tool_call_names_what_is_wrong():
    space = ToolCall([CALC])
    assert space.contains({"name": "add", "arguments": {"a": 1, "b": 2.5}})
    assert space.problems({"name": "mul", "arguments": {}}) == [
        "unknown tool 'mul'; available tools: add"
    ]
    assert space.problems({"name": "add", "arguments": {"a": "1"}}) == [
        "add: missing required argument 'b'",
        "add: argument 'a' must be number, got '1'",
    ]
    assert space.problems({"name": "add", "arguments": {"a": True, "b": 1}}) == [
        "add: argument 'a' must be number, got True"
    ]
    assert space.contains(space.sample())


def test_tool_call_rejects_duplicate_tool_names():
    with pytest.raises(ValueError, match="unique"):
        ToolCall([CALC, CALC])


def test_text_travels_through_gymnasiums_shared_memory():
    from gymnasium.vector.utils import (
        create_shared_memory,
        read_from_shared_memory,
        write_to_shared_memory,
    )

    space = Text(max_length=6)
    memory = create_shared_memory(space, n=3)
    view = read_from_shared_memory(space, memory, n=3)  # read once, as AsyncVectorEnv does
    for index, value in enumerate(("héllo✓", "", "up\ud800")):
        write_to_shared_memory(space, index, value, memory)
    assert tuple(view) == ("héllo✓", "", "up\ud800")  # the view follows the writes
    write_to_shared_memory(space, 1, "again", memory)
    assert view[1] == "again"
    assert copy.deepcopy(view) == ("héllo✓", "again", "up\ud800")
    with pytest.raises(ValueError, match="does not fit"):
        write_to_shared_memory(space, 0, "far too long", memory)


def test_async_vector_envs_of_text_envs_work_with_shared_memory():
    observations = {}
    for mode in ("sync", "async"):
        envs = gymnasium.make_vec("games/Maze-v0", num_envs=2, vectorization_mode=mode)
        try:
            first, _ = envs.reset(seed=3)
            then, *_ = envs.step(("up", "left"))
            observations[mode] = (tuple(first), tuple(then))
        finally:
            envs.close()
    assert observations["async"] == observations["sync"]
    assert all(isinstance(o, str) and o for batch in observations["async"] for o in batch)


def test_tool_declares_required_and_optional_arguments_and_refuses_extra_ones():
    declared = tool(
        "view",
        "show a file",
        {"path": {"type": "string"}, "line": {"type": "integer"}},
        optional=["line"],
    )
    assert declared == {
        "name": "view",
        "description": "show a file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "line": {"type": "integer"}},
            "required": ["path"],
            "additionalProperties": False,
        },
    }
    space = ToolCall([declared])
    assert space.contains({"name": "view", "arguments": {"path": "a.py"}})
    assert space.problems({"name": "view", "arguments": {"path": "a.py", "lines": 3}}) == [
        "view: unexpected argument 'lines'"
    ]
    assert tool("submit", "end the episode")["parameters"]["required"] == []


def test_tool_refuses_an_optional_name_that_is_not_a_parameter():
    with pytest.raises(ValueError, match="'lnie'"):
        tool("view", "show a file", {"line": {"type": "integer"}}, optional=["lnie"])
