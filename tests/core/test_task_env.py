"""TaskEnv's behaviour, shown on the counter test double and Tower of Hanoi."""

import pickle

import pytest
from broken_envs import CounterEnv

import agentgym
from agentgym.errors import ResetNeeded, TaskError, UsageError


def test_reset_gives_instructions_state_key_and_verdict():
    env = CounterEnv()
    obs, info = env.reset(seed=1)
    assert obs.startswith("Count up to the target.")
    assert info["instructions"] == "Count up to the target."
    assert info["state_key"] == f"0/{6 + env.task.seed % 3}"
    assert info["verdict"].score == 0.0


def test_reward_is_the_change_in_score_and_success_terminates():
    env = CounterEnv()
    env.reset(seed=0, options={"task_id": "dev/easy/0"})
    total, terminated = 0.0, False
    while not terminated:
        _, reward, terminated, _, info = env.step(env.oracle_action())
        total += reward
    assert total == 1.0 and info["verdict"].passed


def test_a_bad_action_is_feedback_and_counted():
    env = CounterEnv(max_invalid_actions=2)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("jump")
    assert obs.startswith("Invalid action: type 'inc', 'dec' or 'zero'")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] and info["invalid_actions"] == 1
    _, _, _, truncated, info = env.step("jump")
    assert truncated and info["truncation_reason"] == "invalid_actions"


def test_wrong_types_raise_usage_errors_naming_the_value():
    env = CounterEnv()
    env.reset(seed=0)
    with pytest.raises(UsageError, match=r"takes the agent's action as a str, got int 3"):
        env.step(3)
    with pytest.raises(UsageError, match=r"reset\(seed=...\) takes an int or None, got str"):
        env.reset(seed="1")
    with pytest.raises(UsageError, match=r"unknown reset option\(s\) \['taskid'\]"):
        env.reset(options={"taskid": "x"})
    with pytest.raises(TaskError, match="unknown split 'validation'"):
        env.reset(options={"split": "validation"})


def test_step_before_reset_and_after_the_end_are_reset_needed():
    env = CounterEnv()
    with pytest.raises(ResetNeeded, match=r"call reset\(\) before step\(\)"):
        env.step("inc")
    env.reset(seed=0)
    while (action := env.oracle_action()) is not None:
        env.step(action)
    with pytest.raises(ResetNeeded, match="the episode has ended"):
        env.step("inc")


def test_same_seed_same_task_and_task_id_wins_over_seed():
    env = CounterEnv()
    assert env.reset(seed=5)[1]["task_id"] == env.reset(seed=5)[1]["task_id"]
    assert env.reset(seed=5, options={"task_id": "test/easy/3"})[1]["task_id"] == "test/easy/3"


def test_snapshot_restores_the_episode_and_pickles():
    env = agentgym.make("games/TowerOfHanoi-v0").unwrapped
    env.reset(seed=3)
    snapshot = pickle.loads(pickle.dumps(env.get_state()))
    first = env.step(env.oracle_action())
    env.step(env.oracle_action())
    env.set_state(snapshot)
    assert env.step(env.oracle_action())[0] == first[0]


def test_set_state_rejects_foreign_objects():
    env = CounterEnv()
    env.reset(seed=0)
    with pytest.raises(UsageError, match="takes what get_state\\(\\) returned, got dict"):
        env.set_state({})


def test_constructor_rejects_unknown_split_and_render_mode():
    with pytest.raises(TaskError):
        CounterEnv(split="holdout")
    with pytest.raises(UsageError, match="render_mode='rgb_array' is not supported"):
        CounterEnv(render_mode="rgb_array")


def test_long_observations_are_clipped_with_a_marker():
    class Wordy(CounterEnv):
        max_observation_length = 100

        def observe(self, world):
            return "word " * 1000

    obs, _ = Wordy().reset(seed=0)
    assert len(obs) == 100 and obs.endswith("\n[... observation cut to fit the limit ...]")


# ----------------------------------------------------------------------------- agent text


class Encoding(CounterEnv):
    """A family that writes the agent's text where only UTF-8 goes (a file, a sandbox, a
    browser): before cleaning, a lone surrogate made it raise and the episode errored."""

    tools = [
        {
            "name": "say",
            "description": "say something",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        }
    ]

    def act(self, world, action):
        if action.lstrip().startswith(("{", "say")):
            _, arguments = self.parse_tool_call(action)
            action = arguments["text"]
        action.encode("utf-8")
        if "\x00" in action:
            raise ValueError("embedded null byte")  # as a process argument would
        return super().act(world, action)


def test_clean_text_replaces_what_no_encoder_takes_and_keeps_the_rest():
    from agentgym.task_env import clean_text

    assert clean_text("up\ud800") == "up\ufffd"
    assert clean_text("a\x00b") == "a\ufffdb"
    assert clean_text("\udfff\ud800") == "\ufffd\ufffd"
    assert clean_text("\ud83d\ude00") == "\U0001f600"  # a pair split in two is joined
    text = "déjà vu, 東京, \U0001f600, tabs\tand\nlines"
    assert clean_text(text) is text and clean_text("inc") == "inc"


@pytest.mark.parametrize(
    "action",
    [
        "inc\ud800",  # the raw reply of a server's \ud800 escape
        "inc\x00",
        '{"name": "say", "arguments": {"text": "inc\\ud800"}}',  # escapes the parser decodes
        'say(text="inc\\udc00")',
        'say(text="inc\\x00")',
        {"name": "say", "arguments": {"text": "inc\ud800"}},  # a native call
        {"name": "say", "arguments": '{"text": "inc\\ud800"}'},
    ],
)
def test_unencodable_agent_text_reaches_the_family_clean(action):
    env = Encoding()
    env.reset(seed=0)
    obs, _, _, _, info = env.step(action)
    assert obs.startswith("Invalid action: type 'inc'") and info["invalid_action"]


def nested(depth):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ('{"name": "say", "arguments": ' + "[" * 3000, "cannot be read as a tool call"),
        ('{"name": "say", "arguments": "' + "[" * 3000 + '"}', "not a JSON object"),
        ("say(text=" + "-" * 3000 + "1)", "write one tool call"),  # RecursionError in ast
        ("say(text={[1]: 2})", "literal values"),  # TypeError: unhashable
        ("say(text={1, [2]})", "literal values"),
        ({"name": "say", "arguments": {(1, 2): "x"}}, "cannot be read as JSON"),
        ({"name": "say", "arguments": {"text": nested(40)}}, "must be string"),
    ],
)
def test_tool_calls_that_break_a_parser_are_feedback(action, says):
    env = Encoding()
    env.reset(seed=0)
    obs, _, _, _, info = env.step(action)
    assert info["invalid_action"] and says in obs


def test_clean_action_cuts_nesting_and_keeps_what_it_cannot_clean():
    from agentgym.task_env import MAX_ACTION_NESTING, clean_action

    cut = clean_action({"name": "say", "arguments": {"text": nested(100)}})
    depth, node = 0, cut
    while isinstance(node, dict | list):
        node = node["arguments"] if depth == 0 else node["text"] if depth == 1 else node[0]
        depth += 1
    assert node == "[nested too deeply]" and depth == MAX_ACTION_NESTING
    assert clean_action(("a\ud800", 3, None, b"\xff")) == ("a\ufffd", 3, None, b"\xff")


@pytest.mark.parametrize(
    ("text", "is_call"),
    [
        ('{"name": "respond", "arguments": {}}', True),
        ('  \n```json\n{"name": "x"}\n```', True),
        ('```\n{"name": "x"}```', True),
        ('```python\n{"name": "x"}```', True),
        ('```JSON\n{"name": "x"}```', False),
        ("Sure, I can help with {that}.", False),
        ("respond(message='hi')", False),
        ("", False),
    ],
)
def test_looks_like_tool_call_is_a_json_object_maybe_fenced(text, is_call):
    assert agentgym.looks_like_tool_call(text) is is_call
