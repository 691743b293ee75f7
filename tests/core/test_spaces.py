"""The text, chat and tool-call spaces are real Gymnasium spaces."""

import gymnasium
import pytest
from gymnasium.vector.utils import batch_space

from agentgym.spaces import ChatMessages, Text, ToolCall

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
