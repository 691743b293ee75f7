"""Prompting shared by the LLM agents: history, window, action extraction, chat templates."""

from __future__ import annotations

import itertools

import pytest

import agentgym
from agentgym.agents.base import EpisodeContext
from agentgym.agents.chat import ChatAgent
from agentgym.agents.prompting import (
    Conversation,
    PromptConfig,
    extract_action,
    flexible_answer,
    format_observation,
)
from agentgym.backends import render_prompt
from agentgym.errors import UsageError


def play(conversation: Conversation, turns: int) -> list[list[dict[str, str]]]:
    prompts = []
    for turn in range(turns):
        conversation.add_observation(f"observation {turn}")
        prompts.append(conversation.prompt_messages())
        conversation.add_reply(f"reply {turn}")
    return prompts


def test_instructions_become_the_system_message_with_the_format_hint():
    config = PromptConfig(format_hint="Reply with the action only.")
    conversation = Conversation.start("  Walk to the exit.\n", config)
    conversation.add_observation("#@E#")
    assert conversation.prompt_messages() == [
        {"role": "system", "content": "Walk to the exit.\n\nReply with the action only."},
        {"role": "user", "content": "#@E#"},
    ]


def test_history_is_append_only_so_each_prompt_extends_the_last():
    prompts = play(Conversation.start("Play.", PromptConfig()), 5)
    for before, after in itertools.pairwise(prompts):
        assert after[: len(before)] == before  # earlier turns never rewritten
        assert len(after) == len(before) + 2  # the reply, then the new observation
    assert prompts[-1][-2] == {"role": "assistant", "content": "reply 3"}


def test_history_window_keeps_the_system_message_and_the_last_turns():
    conversation = Conversation.start("Play.", PromptConfig(history_window=2))
    prompts = play(conversation, 4)
    assert [m["content"] for m in prompts[-1]] == [
        "Play.",
        "observation 2",
        "reply 2",
        "observation 3",
    ]
    assert [m["content"] for m in prompts[0]] == ["Play.", "observation 0"]
    # The full history is still kept; only what is sent is cut.
    assert len(conversation.messages) == 8
    one = Conversation.start("Play.", PromptConfig(history_window=1))
    assert [m["content"] for m in play(one, 3)[-1]] == ["Play.", "observation 2"]


def test_turns_must_alternate():
    conversation = Conversation.start("Play.", PromptConfig())
    with pytest.raises(UsageError):
        conversation.add_reply("nothing asked yet")
    conversation.add_observation("a")
    with pytest.raises(UsageError):
        conversation.add_observation("b")


@pytest.mark.parametrize(
    ("text", "style", "action"),
    [
        ("I think <action>up</action> then <action> left </action>", "auto", "left"),
        ("Going <action>move A C", "tags", "move A C"),  # unclosed: cut by the token limit
        ("Sure:\n```\nguess crane\n```\nGood luck", "auto", "guess crane"),
        ("```text\nfirst\n```\n```\nsecond\n```", "fenced", "second"),
        ("Let me think.\nThe exit is left.\n\nleft\n  \n", "auto", "left"),
        ("<action>up</action>\n```\ndown\n```", "auto", "up"),  # tags win over fences
        ("  up  ", "auto", "up"),
        ("line one\nline two", "raw", "line one\nline two"),
        ("no tags here\nup", "tags", "no tags here\nup"),  # nothing found: the raw reply
        ("no fence\nup", "fenced", "no fence\nup"),
        ("<action></action>", "tags", "<action></action>"),  # an empty action is not one
        ("", "auto", ""),
    ],
)
def test_extract_action(text, style, action):
    assert extract_action(text, style) == action


def test_bad_styles_and_windows_are_usage_errors():
    with pytest.raises(UsageError, match="action_style"):
        extract_action("up", "json")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="action_style"):
        PromptConfig(action_style="json")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="history_window"):
        PromptConfig(history_window=0)


def test_no_action_found_passes_the_raw_reply_and_the_env_gives_feedback():
    env = agentgym.make("games/Maze-v0")
    try:
        env.reset(seed=0)
        reply = "I am not sure where to go."
        action = extract_action(reply, "tags")
        assert action == reply
        observation, _, terminated, _, _ = env.step(action)
        assert not terminated
        assert observation.startswith("Invalid action")
        assert "up" in observation  # the feedback says what a valid action looks like
    finally:
        env.close()


def test_observations_that_are_not_text_become_json():
    assert format_observation("text") == "text"
    assert format_observation({"board": [1, 2], "turn": "x"}) == '{"board": [1, 2], "turn": "x"}'


def test_render_prompt_uses_the_tokenizers_own_chat_template(tiny_model_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    messages = [{"role": "system", "content": "Play."}, {"role": "user", "content": "#@E#"}]
    ids = render_prompt(tokenizer, messages)
    assert tokenizer.decode(ids) == (
        "<|im_start|>system\nPlay.<|im_end|>\n<|im_start|>user\n#@E#<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    tokenizer.chat_template = None
    with pytest.raises(UsageError, match="chat template"):
        render_prompt(tokenizer, messages)


def test_auto_keeps_a_multi_line_answer_block_whole():
    reply = "Let me think.\n<answer>\n1 2\n3 4\n</answer>\nDone."
    assert extract_action(reply) == "<answer>\n1 2\n3 4\n</answer>\nDone."
    assert extract_action("<action>up</action> <answer>x</answer>") == "up"


def test_the_answer_tag_is_found_in_any_case():
    assert extract_action("Thinking.\n<Answer>\n1 2\n</Answer>") == "<Answer>\n1 2\n</Answer>"


TAGS = "<answer>{answer}</answer>"
BOXED = "\\boxed{{answer}}"


@pytest.mark.parametrize(
    ("reply", "form", "action"),
    [
        ("4 + 3 = 7", TAGS, "<answer>7</answer>"),  # the last number
        ("The answer is -2.", TAGS, "<answer>-2</answer>"),  # stated, before the last number
        ("First 12, then #### 30", BOXED, "\\boxed{30}"),
        ("I think <answer>5</answer> but maybe 6", TAGS, None),  # in the format: left alone
        ("so \\boxed{6}", BOXED, None),
        ("no number here", TAGS, None),
    ],
)
def test_flexible_answer_reads_a_final_answer_into_the_envs_format(reply, form, action):
    assert flexible_answer(reply, form) == action


def test_an_answer_format_needs_its_slot_and_extraction_its_name():
    with pytest.raises(UsageError, match="slot"):
        flexible_answer("7", "<answer></answer>")
    with pytest.raises(UsageError, match="answer_extraction"):
        PromptConfig(answer_extraction="lenient")  # type: ignore[arg-type]


def unformatted(oracle_reply: str) -> str:
    """The oracle's answer out of its answer tags or its last box."""
    import re

    found = re.findall(r"<answer>(.*?)</answer>|\\boxed\{([^{}]*)\}", oracle_reply)
    return "".join(found[-1]).strip()


@pytest.mark.parametrize("env_id", ["reasoning-gym/chain_sum-v1", "reasoning/Math-v1"])
def test_flexible_extraction_scores_what_strict_extraction_calls_invalid(env_id):
    """The same unformatted right answer: strictly the env's invalid action (0), flexibly
    written in the format the env declares (1). The env and its scoring are the same."""
    pytest.importorskip("reasoning_gym")
    scores = {}
    for extraction in ("strict", "flexible"):
        env = agentgym.make(env_id)
        try:
            _, info = env.reset(seed=0, options={"task_id": "test/easy/0"})
            agent = ChatAgent(PromptConfig(answer_extraction=extraction), "llm")
            agent.reset(
                EpisodeContext(
                    env_id,
                    "test/easy/0",
                    0,
                    info["instructions"],
                    info,
                    action_style=env.metadata["action_style"],
                    answer_format=env.metadata["answer_format"],
                )
            )
            right = unformatted(env.unwrapped.oracle_action())
            reply = f"Adding them up gives {right}."
            _, reward, _, _, step_info = env.step(agent.read_action(reply))
            scores[extraction] = (reward, step_info.get("invalid_action", False))
        finally:
            env.close()
    assert scores == {"strict": (0.0, True), "flexible": (1.0, False)}


def test_a_trained_policys_sampling_fills_what_the_benchmark_leaves_unset(tmp_path):
    import json

    from agentgym.agents import TRAINED_PROMPT_FILE
    from agentgym.agents.models import trained_prompt

    saved = {"history_window": 1, "sampling": {"temperature": 0.3, "max_tokens": 40}}
    (tmp_path / TRAINED_PROMPT_FILE).write_text(json.dumps(saved))
    prompt = trained_prompt(tmp_path)
    assert prompt.default_sampling == {"temperature": 0.3, "max_tokens": 40}
    agent = ChatAgent(prompt, "hf:policy")
    agent.reset(EpisodeContext("e", "t", 1, "", {}, sampling={"temperature": 0.9}))
    assert (agent.params.temperature, agent.params.max_tokens) == (0.9, 40)  # benchmark wins
    (tmp_path / TRAINED_PROMPT_FILE).write_text(json.dumps({"sampling": {"temp": 1}}))
    with pytest.raises(UsageError, match="temp"):
        trained_prompt(tmp_path)
