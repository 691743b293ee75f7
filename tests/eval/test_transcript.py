"""The transcript of an episode: what the model wrote beside what was sent, tool calls as calls,
patches as diffs, the user's turns, the instructions, and hostile text kept inert."""

from __future__ import annotations

import re

from hostile_text import ATTRIBUTE, SCRIPT  # tests/: script and an attribute break-out

from agentgym.core import Verdict
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark, BenchmarkEnv
from agentgym.eval.transcript import (
    Block,
    Instructions,
    Outcome,
    Step,
    TextAction,
    ToolCallAction,
    UserTurn,
    render_html,
    render_text,
    transcript,
)
from agentgym.ledger import EpisodeRecord, EpisodeSpec, StepRecord, UserTurnRecord, read_episodes

PATCH = (
    "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
)


def record(*steps: StepRecord, **fields) -> EpisodeRecord:
    spec = EpisodeSpec("swe/Repair-v1", "repo.abc123", seed=0, agent="a")
    verdict = fields.pop("verdict", Verdict(score=1.0, passed=True, details="tests pass"))
    return EpisodeRecord(spec, "the issue", list(steps), verdict=verdict, **fields)


def step(action, observation="ok", text=None, reward=0.0) -> StepRecord:
    info = {} if text is None else {"agent_text": text}
    return StepRecord(action, observation, reward, False, False, info=info)


def steps_of(items) -> list[Step]:
    return [item for item in items if isinstance(item, Step)]


def test_a_tool_call_is_a_call_with_pretty_arguments_and_code_as_code():
    call = {"name": "view", "arguments": {"path": "m.py", "start_line": 1, "end_line": 9}}
    bash = {"name": "bash", "arguments": {"command": "pytest -x tests/"}}
    first, second = steps_of(transcript(record(step(call), step(bash))))
    assert first.action == ToolCallAction(
        "view", '{\n  "path": "m.py",\n  "start_line": 1,\n  "end_line": 9\n}'
    )
    assert second.action == ToolCallAction(
        "bash", "", (Block("command", "code", "pytest -x tests/"),)
    )
    page = render_html(transcript(record(step(call), step({"name": "submit", "arguments": {}}))))
    assert '<div class="tx-call-name">view(…)</div>' in page and "{'path'" not in page
    assert '<div class="tx-call-name">submit()</div>' in page


def test_a_patch_argument_and_a_replacement_are_shown_as_diffs():
    patch = {"name": "apply_patch", "arguments": {"patch": PATCH}}
    replace = {
        "name": "str_replace",
        "arguments": {"path": "m.py", "old_str": "y = 2", "new_str": "y = 3"},
    }
    first, second = steps_of(transcript(record(step(patch), step(replace))))
    assert first.action.blocks == (Block("patch", "diff", PATCH),)
    (diff,) = second.action.blocks
    assert diff.kind == "diff" and diff.text.splitlines()[1:] == ["-y = 2", "+y = 3"]
    assert second.action.arguments == '{\n  "path": "m.py"\n}'
    page = render_html(transcript(record(step(patch))))
    assert '<span class="tx-del">-y = 2</span><span class="tx-add">+y = 3</span>' in page
    assert '<span class="tx-hunk">@@ -1,2 +1,2 @@</span>' in page
    text = render_text(transcript(record(step(patch))), color=True)
    assert "\x1b[31m    -y = 2\x1b[0m" in text and "\x1b[32m    +y = 3\x1b[0m" in text


def test_the_raw_model_text_is_shown_beside_the_extracted_action():
    extracted = step("<answer>11</answer>", text="The answer is 11.", reward=1.0)
    (shown,) = steps_of(transcript(record(extracted)))
    assert shown.model_text == "The answer is 11." and not shown.model_text_is_action
    assert shown.action == TextAction("<answer>11</answer>")
    page = render_html(transcript(record(extracted)))
    pair = page[page.index('<div class="tx-pair">') :]
    assert pair.index("The answer is 11.") < pair.index("&lt;answer&gt;11&lt;/answer&gt;")
    assert "model wrote" in pair and "action sent to the env" in pair
    text = render_text(transcript(record(extracted)))
    assert (
        "-- model wrote\n  The answer is 11.\n-- action (extracted)\n  <answer>11</answer>" in text
    )


def test_a_reply_sent_unchanged_is_shown_once():
    same = step("move A C", text="move A C\n")
    (shown,) = steps_of(transcript(record(same)))
    assert shown.model_text_is_action
    assert render_html(transcript(record(same))).count("move A C") == 1


def test_a_json_call_written_as_text_is_a_call():
    text = '```json\n{"name": "get_user", "arguments": {"user_id": "u1"}}\n```'
    (shown,) = steps_of(transcript(record(step(text, text=text))))
    assert shown.action == ToolCallAction("get_user", '{\n  "user_id": "u1"\n}')
    assert not shown.model_text_is_action  # the call is shown as a call beside the text


def test_instructions_user_turns_and_the_verdict_come_in_reading_order():
    turns = [UserTurnRecord(1, "it is order 7"), UserTurnRecord(0, "hi, I need a refund")]
    episode = record(
        step("which order?", text="which order?"),
        step("done", text="done", reward=1.0),
        instructions="You are a retail agent.",
        user_turns=turns,
    )
    kinds = [type(item).__name__ for item in transcript(episode)]
    assert kinds == [
        "Instructions",
        "Observation",
        "UserTurn",
        "Step",
        "UserTurn",
        "Step",
        "Outcome",
    ]
    items = transcript(episode)
    assert items[0] == Instructions("You are a retail agent.")
    assert [i.text for i in items if isinstance(i, UserTurn)] == [
        "hi, I need a refund",
        "it is order 7",
    ]
    assert items[-1] == Outcome("ok", True, 1.0, "tests pass", None)
    text = render_text(items)
    assert (
        text.index("== instructions") < text.index("hi, I need a refund") < text.index("== step 1")
    )
    assert "== outcome: passed, score 1 (ok)" in text


def test_long_texts_are_cut_with_a_count():
    (shown,) = steps_of(transcript(record(step("x" * 50)), limit=10))
    assert shown.action == TextAction("x" * 10 + "\n… (40 more characters)")


def test_hostile_text_is_inert_in_html_and_in_the_terminal():
    hostile = f"{SCRIPT}{ATTRIBUTE}"
    call = {"name": hostile, "arguments": {hostile: hostile, "patch": f"@@ -1 +1 @@\n-{SCRIPT}"}}
    episode = record(
        step(call, observation=hostile, text=hostile),
        step(hostile, text="\x1b[2J\x1b[31mred\rover"),
        instructions=hostile,
        user_turns=[UserTurnRecord(1, hostile)],
        verdict=Verdict(score=0.0, passed=False, details=hostile),
    )
    page = render_html(transcript(episode))
    assert "<script" not in page and "<img" not in page and 'onerror="' not in page
    assert page.count("&lt;script&gt;window.__pwned = 1") >= 7
    text = render_text(transcript(episode))
    assert "\x1b" not in text and "\r" not in text
    assert "\\x1b[2J\\x1b[31mred\\rover" in text


def test_the_engine_records_the_instructions_once_per_episode(tmp_path):
    suite = Benchmark(
        name="t",
        episodes_per_task=1,
        envs=(BenchmarkEnv("games/Maze-v0", split="dev", difficulty="easy", tasks=2, max_steps=2),),
    )
    result = evaluate(suite, lambda observation, info: "up", tmp_path / "run")
    records = list(read_episodes(tmp_path / "run" / "episodes.jsonl"))
    assert [r.instructions for r in records] == [r.instructions for r in result.records]
    assert all(r.instructions and "maze" in r.instructions.lower() for r in records)
    assert all("instructions" not in s.info for r in records for s in r.steps)
    assert isinstance(transcript(records[0])[0], Instructions)
    old = records[0].to_dict()
    del old["instructions"]
    old["schema_version"] = "1.2"  # a record from before: no instructions, still read
    assert EpisodeRecord.from_dict(old).instructions is None
    assert re.search(r"== step 2 \(reward 0, truncated\)", render_text(transcript(records[0])))
