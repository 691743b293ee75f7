"""The action language: one call with literal arguments, read with ast, never evaluated."""

import hashlib
import json

import pytest

from agentgym.envs.web import actions
from agentgym.task_env import InvalidAction


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('click("12")', ("click", {"id": "12"})),
        ("click(12)", ("click", {"id": "12"})),
        ("click(id='3.4')", ("click", {"id": "3.4"})),
        ('fill("9", "red shirt")', ("fill", {"id": "9", "text": "red shirt"})),
        ("select('14', option='Large')", ("select", {"id": "14", "option": "Large"})),
        ('press("Control+a")', ("press", {"key": "Control+a"})),
        ('scroll("down")', ("scroll", {"direction": "down", "pixels": 400})),
        ("scroll('up', 100)", ("scroll", {"direction": "up", "pixels": 100})),
        ("mouse_click(10, 20.5)", ("mouse_click", {"x": 10.0, "y": 20.5})),
        ("go_back()", ("go_back", {})),
        ("new_tab()", ("new_tab", {"url": ""})),
        ('answer("42")', ("answer", {"text": "42"})),
        ('```\nclick("5")\n```', ("click", {"id": "5"})),
        ('`click("5")`', ("click", {"id": "5"})),
        (
            'I will search first.\nfill("3", "red")\nThat should work.',
            ("fill", {"id": "3", "text": "red"}),
        ),
        ("Thought: go back.\nAction: `go_back()`", ("go_back", {})),
        (
            '{"name": "fill", "arguments": {"id": "2", "text": "x"}}',
            ("fill", {"id": "2", "text": "x"}),
        ),
        ('{"name": "click", "arguments": "{\\"id\\": \\"7\\"}"}', ("click", {"id": "7"})),
    ],
)
def test_valid_actions_parse_to_a_name_and_checked_arguments(text, expected):
    assert actions.parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("click(", "is not a call"),
        ("hello there", "is not a call"),
        ("click", "is not a call"),
        ('os.system("ls")', "is not a call"),
        ('exec("print(1)")', "unknown action 'exec'"),
        ('__import__("os")', "unknown action '__import__'"),
        ('click(__import__("os").getcwd())', "must be literal values"),
        ("click(x)", "must be literal values"),
        ('click("1"); click("2")', "is not a call"),
        ('click("1", "2")', "takes 1 argument"),
        ("fill('3')", "needs its 'text' argument"),
        ("click(name='3')", "has no argument 'name'"),
        ("click('1', id='1')", "given twice"),
        ("scroll(5)", "direction must be a string"),
        ("tab_focus('first')", "index must be a integer"),
        ("click(True)", "id must be a string"),
        ("click(**{'id': '1'})", "'**' arguments are not allowed"),
        ('{"name": "click"}', "missing required argument 'id'"),
        ('{"name": "rm", "arguments": {}}', "unknown tool 'rm'"),
        ("{not json", "is not valid JSON"),
        ('fill({[1]: 2}, "x")', "literal values"),  # an unhashable literal: a TypeError
        ("click(" + "[" * 400 + "]" * 400 + ")", "not a call"),  # nested past the parser
        ("click(" * 2000 + ")" * 2000, "is not a call"),  # past the parser's stack
    ],
)
def test_anything_else_is_an_invalid_action_that_says_what_would_work(text, message):
    with pytest.raises(InvalidAction, match=message.replace("(", r"\(").replace("*", r"\*")):
        actions.parse(text)


def test_an_env_can_offer_a_subset_of_the_language():
    assert actions.parse('click("1")', allowed=("click", "noop")) == ("click", {"id": "1"})
    with pytest.raises(InvalidAction, match="the actions are: click, noop"):
        actions.parse('goto("/")', allowed=("click", "noop"))


def test_format_action_quotes_any_text_so_that_it_parses_back():
    tricky = 'say "hi"\nthen \\ leave'
    text = actions.format_action("fill", "9", tricky)
    assert actions.parse(text) == ("fill", {"id": "9", "text": tricky})
    with pytest.raises(ValueError, match="unknown action 'exec'"):
        actions.format_action("exec", "x")


def test_every_action_is_a_json_schema_tool_and_a_line_of_the_prompt():
    assert [t["name"] for t in actions.TOOLS] == list(actions.ACTIONS)
    fill = next(t for t in actions.TOOLS if t["name"] == "fill")
    assert fill["parameters"]["required"] == ["id", "text"]
    assert fill["parameters"]["additionalProperties"] is False
    described = actions.describe_actions()
    assert "fill(id, text)" in described and "scroll(direction, pixels=400)" in described


def test_an_escaped_lone_surrogate_in_an_argument_is_cleaned():
    assert actions.parse('fill("12", "up\\ud800")') == actions.parse('fill("12", "up\ufffd")')


def test_the_tools_agents_see_are_pinned():
    # The JSON of TOOLS is what a function-calling agent reads: a change to it can change
    # scores, so it changes only with a version bump (docs/envs/web.md). Declared through
    # agentgym.tool since issue 28; these bytes are the ones the hand-written dicts gave.
    text = json.dumps(actions.TOOLS)
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "84f4cb8c024e82319c4e9cebfe05d6fb42eab2fcd7002234f6e0f6fac45ed82f"
    )
    scroll = next(t for t in actions.TOOLS if t["name"] == "scroll")["parameters"]
    assert scroll["required"] == ["direction"]
    assert scroll["properties"]["pixels"] == {
        "type": "integer",
        "description": "how far",
        "default": 400,
    }
