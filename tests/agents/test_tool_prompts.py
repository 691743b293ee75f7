"""An LLM agent's prompt describes the env's tools: each tool's name and its arguments, typed,
required or optional, rendered from the schemas that judge the calls (issue 29: a local model
had to guess that SWE's edit takes ``old_str`` and ``new_str``)."""

from __future__ import annotations

import pytest

import agentgym
from agentgym.agents.base import EpisodeContext
from agentgym.agents.chat import ChatAgent
from agentgym.agents.models import SMOLLM2_PROMPT
from agentgym.agents.prompting import Conversation, PromptConfig, tool_section
from agentgym.eval.engine import declared_tools
from agentgym.spaces import describe_tools, tool

EDIT = tool(
    "edit",
    "Replace text in a file.",
    {
        "path": {"type": "string", "description": "the file"},
        "old_str": {"type": "string", "description": "the text to replace"},
        "count": {"type": "integer"},
    },
    optional=("count",),
)


def system_prompt(env_id: str) -> str:
    """The system message a smollm2 agent starts an episode of ``env_id`` with, from the
    context the engine builds (the instructions of ``info``, the env's declared tools)."""
    env = agentgym.make(env_id)
    try:
        instructions = env.unwrapped.instructions("Do the task.")
        tools = declared_tools(env)
    finally:
        env.close()
    agent = ChatAgent(SMOLLM2_PROMPT, "smollm2")
    agent.reset(EpisodeContext(env_id, "test/0", 0, instructions, {}, tools=tools))
    return agent.conversation.system


@pytest.mark.parametrize("env_id", ["swe/Repair-v1", "reasoning/ToolUse-v1"])
def test_the_prompt_of_an_env_with_tools_names_each_tool_and_argument(env_id):
    env = agentgym.make(env_id)
    tools = declared_tools(env)
    env.close()
    prompt = system_prompt(env_id)
    assert tools
    for declared in tools:
        assert declared["name"] in prompt
        for argument in declared["parameters"]["properties"]:
            assert argument in prompt, (declared["name"], argument)


def test_swes_prompt_types_the_edit_arguments():
    prompt = system_prompt("swe/Repair-v1")
    assert "- old_str (string, required): the text to replace" in prompt
    assert "- start_line (integer, optional)" in prompt
    assert "- tests (array of string, optional)" in prompt


def test_instructions_that_do_not_describe_the_tools_get_their_schemas():
    conversation = Conversation.start("Fix the bug.", PromptConfig(format_hint="Be brief."), [EDIT])
    assert conversation.system == (
        "Fix the bug.\n\n"
        'Tools: call one per reply, as a JSON object {"name": ..., "arguments": {...}}.\n'
        "edit: Replace text in a file.\n"
        "  - path (string, required): the file\n"
        "  - old_str (string, required): the text to replace\n"
        "  - count (integer, optional)\n\n"
        "Be brief."
    )


def test_instructions_that_name_every_tool_and_argument_get_no_second_copy():
    listed = "Fix the bug with edit(path, old_str, count)."
    assert tool_section(listed, [EDIT]) == ""
    assert Conversation.start(listed, PromptConfig(), [EDIT]).system == listed
    # One argument missing is enough to add the schemas; a word inside another is no name.
    assert tool_section("Fix the bug with edit(path, old_str).", [EDIT]) != ""
    assert tool_section("Fix the bug with edit(path, old_strings, count).", [EDIT]) != ""
    assert tool_section("Anything.", None) == tool_section("Anything.", []) == ""


def test_describe_tools_renders_enums_nested_types_and_tools_without_arguments():
    tools = [
        tool("scroll", "Scroll.", {"direction": {"type": "string", "enum": ["up", "down"]}}),
        tool("pick", "Pick ids.", {"ids": {"type": "array", "items": {"type": "integer"}}}),
        tool("done", "Finish."),
    ]
    assert describe_tools(tools) == (
        "scroll: Scroll.\n"
        '  - direction (string, required): one of "up", "down"\n'
        "pick: Pick ids.\n"
        "  - ids (array of integer, required)\n"
        "done: Finish. (no arguments)"
    )


def test_every_registered_env_with_tools_describes_them_in_its_instructions():
    """So the prompt never carries a second copy (docs/evaluation.md says so): each env that
    takes tool calls names every tool and argument in the instructions it writes."""
    undescribed = []
    for spec in agentgym.list_envs():
        if spec.kind != "env":
            continue
        env = agentgym.make(spec.id)
        tools = declared_tools(env)
        if tools and tool_section(env.unwrapped.instructions("Do the task."), tools):
            undescribed.append(spec.id)
        env.close()
    assert undescribed == []
