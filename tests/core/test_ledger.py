"""Episode records: round trips, crash-safe appends, clear errors on bad files."""

import json

import numpy as np
import pytest

from agentgym.core import Verdict
from agentgym.errors import LedgerError
from agentgym.ledger import (
    EpisodeRecord,
    EpisodeSpec,
    EpisodeWriter,
    StepRecord,
    TokenRecord,
    jsonable,
    read_episodes,
)


def record(task="dev/easy/0", tokens=True):
    step = StepRecord(
        action="move A C",
        observation="ok",
        reward=1.0,
        terminated=True,
        truncated=False,
        info={"state_key": "x", "verdict": Verdict(1.0, True), "n": np.int64(3)},
        env_seconds=0.001,
        tokens=TokenRecord([1, 2], [3, 4], [-0.1, -0.2], [1, 1]) if tokens else None,
    )
    spec = EpisodeSpec("games/TowerOfHanoi-v0", task, seed=0, agent="oracle")
    return EpisodeRecord(spec, "start", [step], Verdict(1.0, True), episode_id=task)


def test_a_record_round_trips_through_jsonl(tmp_path):
    path = tmp_path / "episodes.jsonl"
    with EpisodeWriter(path) as writer:
        writer.write(record())
    (back,) = read_episodes(path)
    assert back.spec.env_version == 0 and back.spec.agentgym_version
    assert back.steps[0].tokens.completion_ids == [3, 4]
    assert back.steps[0].info == {"state_key": "x", "verdict": Verdict(1.0, True).to_dict(), "n": 3}
    assert back.verdict == Verdict(1.0, True) and back.total_reward == 1.0


def test_a_torn_last_line_is_skipped_and_cut_before_the_next_append(tmp_path):
    path = tmp_path / "episodes.jsonl"
    with EpisodeWriter(path) as writer:
        writer.write(record("a"))
    with open(path, "a") as file:
        file.write('{"schema_version": "1.0", "spe')  # a crash mid-write
    with pytest.warns(UserWarning, match="skipping a torn last line"):
        assert [r.episode_id for r in read_episodes(path)] == ["a"]
    with EpisodeWriter(path) as writer:
        writer.write(record("b"))
    assert [r.episode_id for r in read_episodes(path)] == ["a", "b"]


def test_a_corrupt_middle_line_names_its_number(tmp_path):
    path = tmp_path / "episodes.jsonl"
    line = json.dumps(record().to_dict())
    path.write_text(f"{line}\nnot json\n{line}\n")
    with pytest.raises(LedgerError, match=r"episodes.jsonl:2: not valid JSON"):
        list(read_episodes(path))


def test_a_newer_major_schema_is_refused(tmp_path):
    path = tmp_path / "episodes.jsonl"
    data = record().to_dict() | {"schema_version": "2.0"}
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(LedgerError, match=r":1: episode record has schema version '2.0'"):
        list(read_episodes(path))


def test_token_fields_must_align():
    with pytest.raises(LedgerError, match="logprobs has 1 entries for 2 completion tokens"):
        TokenRecord([1], [2, 3], logprobs=[-1.0])


def test_jsonable_keeps_unusual_values_writable():
    assert jsonable({"a": (1, 2), "b": float("nan"), "c": object}) == {
        "a": [1, 2],
        "b": "nan",
        "c": "<class 'object'>",
    }


def test_rewriting_a_ledger_replaces_it_whole_and_leaves_no_scratch_file(tmp_path):
    from agentgym.ledger import EpisodeWriter, rewrite_episodes

    path = tmp_path / "episodes.jsonl"
    first, second = record(), record(task="dev/easy/1")
    with EpisodeWriter(path) as writer:
        writer.write(first)
        writer.write(second)
    rewrite_episodes(path, [second])
    assert [r.spec.task_id for r in read_episodes(path)] == ["dev/easy/1"]
    assert [p.name for p in tmp_path.iterdir()] == ["episodes.jsonl"]


def odd_record(task="dev/easy/1"):
    """A record holding what UTF-8 and str() refuse: a lone surrogate an env echoed from a
    program's output, a NUL, and a 5,000-digit int in an info entry."""
    step = StepRecord(
        action="say up\ud800",
        observation="echo: up\ud800 and \x00",
        reward=0.0,
        terminated=True,
        truncated=False,
        info={"answer": 10**5000, "text": "\udfff", "fine": "東京"},
    )
    spec = EpisodeSpec("reasoning/ToolUse-v1", task, seed=0, agent="a\ud800")
    return EpisodeRecord(spec, "start \ud800", [step], Verdict(0.0, False), episode_id=task)


def test_a_record_with_unencodable_text_is_written_and_reads_back_the_same(tmp_path):
    """The writer raised UnicodeEncodeError: the run crashed, and --resume crashed again on
    the same episode, so the run could never finish."""
    path = tmp_path / "episodes.jsonl"
    with EpisodeWriter(path) as writer:
        writer.write(odd_record())
        writer.write(record("dev/easy/2"))  # the records after it are kept too
    first, second = read_episodes(path)
    assert first.steps[0].observation == "echo: up\ud800 and \x00"  # escapes: nothing lost
    assert first.spec.agent == "a\ud800" and first.initial_observation == "start \ud800"
    assert first.steps[0].info["text"] == "\udfff" and first.steps[0].info["fine"] == "東京"
    assert first.steps[0].info["answer"] == hex(10**5000)  # str() refuses it; hex does not
    assert second.spec.task_id == "dev/easy/2"
    path.read_bytes().decode("utf-8")  # the file is valid UTF-8 throughout


def test_rewriting_a_ledger_keeps_records_with_unencodable_text(tmp_path):
    from agentgym.ledger import rewrite_episodes

    path = tmp_path / "episodes.jsonl"
    rewrite_episodes(path, [odd_record(), record()])
    assert [r.spec.task_id for r in read_episodes(path)] == ["dev/easy/1", "dev/easy/0"]


def test_ordinary_non_ascii_text_is_written_as_itself():
    step = StepRecord("移動", "été", 0.0, True, False)
    line = EpisodeRecord(EpisodeSpec("games/Maze-v0", "t", 0, "x"), "東京", [step]).to_line()
    assert "東京" in line and "移動" in line and "\\u" not in line
