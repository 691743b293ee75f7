"""swe/Repair-v1's instructions list every tool with its arguments, rendered from the tool
schemas (issue 29: they named the tools only, so a model without native tool declarations
had to guess ``old_str``). No sandbox: the instructions are text."""

from __future__ import annotations

import agentgym
from agentgym.envs.swe.env import TOOLS
from agentgym.spaces import describe_tools


def instructions() -> str:
    env = agentgym.make("swe/Repair-v1")
    try:
        return env.unwrapped.instructions("Resolve this issue: ...")
    finally:
        env.close()


def test_every_tool_and_argument_is_listed_typed_with_its_meaning():
    text = instructions()
    assert describe_tools(TOOLS) in text
    for declared in TOOLS:
        assert f"\n{declared['name']}: {declared['description']}" in text
        schema = declared["parameters"]
        for name, argument in schema["properties"].items():
            need = "required" if name in schema["required"] else "optional"
            assert argument.get("description"), f"{declared['name']}.{name} has no meaning"
            assert f"  - {name} (" in text and f", {need}): {argument['description']}" in text
    assert "  - old_str (string, required): the text to replace" in text
    assert "  - tests (array of string, optional)" in text


def test_the_list_follows_the_schemas_not_a_copy(monkeypatch):
    env = agentgym.make("swe/Repair-v1").unwrapped
    renamed = [dict(t, name="edit") if t["name"] == "str_replace" else t for t in TOOLS]
    monkeypatch.setattr(env, "tools", renamed)
    text = env.instructions("Resolve this issue: ...")
    assert "\nedit: Replace the one occurrence" in text
    assert "\nstr_replace:" not in text
    env.close()
