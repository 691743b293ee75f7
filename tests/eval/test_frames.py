"""Frames through the evaluator: a GUI env's screenshots kept as PNG files beside the ledger,
referenced by hash and path, shown in the report.

``ScreenMaze`` is a test double standing in for the GUI envs (no browser, no desktop): the
real Maze env observed as a small image whose pixels are the bytes of Maze's text (so two
screens are equal exactly when the states are), the text in ``info["feedback"]`` as the
pixel envs put theirs. The tests measure the ledger, the frame store, resume and the
report, not the env.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import agentgym
from agentgym import registry
from agentgym.envs.games.puzzles.maze import MazeEnv
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark
from agentgym.eval.transcript import render_html, render_text, transcript
from agentgym.frames import FrameStore, encode_png, frame_ref, is_frame_ref
from agentgym.ledger import (
    EpisodeRecord,
    EpisodeSpec,
    EpisodeWriter,
    StepRecord,
    read_episodes,
)

Image = pytest.importorskip("PIL.Image")

WIDTH, HEIGHT = 16, 40  # a ScreenMaze frame's size in pixels


def screen_of(text: str) -> np.ndarray:
    """Maze's text as an RGB frame: its UTF-8 bytes row by row, zero-padded."""
    data = text.encode()
    pixels = np.zeros(HEIGHT * WIDTH * 3, np.uint8)
    assert len(data) <= pixels.size, "the text does not fit the screen"
    pixels[: len(data)] = np.frombuffer(data, np.uint8)
    return pixels.reshape(HEIGHT, WIDTH, 3)


class ScreenMaze(MazeEnv):
    """The Maze env with a screenshot for an observation (see the module docstring)."""

    metadata = {**MazeEnv.metadata, "multimodal": True}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.observation_space = gymnasium.spaces.Box(0, 255, (HEIGHT, WIDTH, 3), np.uint8)

    def reset(self, *, seed=None, options=None):
        text, info = super().reset(seed=seed, options=options)
        info["feedback"] = text
        return screen_of(text), info

    def step(self, action):
        text, reward, terminated, truncated, info = super().step(action)
        info["feedback"] = text
        return screen_of(text), reward, terminated, truncated, info


SCREEN_ID = "evaltest/ScreenMaze-v0"


@pytest.fixture(autouse=True)
def screen_maze():
    """The test double registered for this module's tests only: registered at import, it
    would be in the registry that the conformance and registry tests read."""
    agentgym.register(SCREEN_ID, entry_point=f"{__name__}:ScreenMaze", max_episode_steps=40)
    yield SCREEN_ID
    registry._registry.pop(SCREEN_ID, None)
    gymnasium.registry.pop(SCREEN_ID, None)


def screen_benchmark(tasks: int = 2) -> Benchmark:
    return Benchmark.from_dict(
        {
            "name": "screens",
            "seed": 5,
            "envs": [{"id": SCREEN_ID, "split": "test", "difficulty": "easy", "tasks": tasks}],
        }
    )


def decoded(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image)


def test_png_frames_decode_to_the_same_pixels():
    rng = np.random.default_rng(0)
    for shape in [(1, 1, 3), (7, 5, 3), (9, 4, 4), (64, 48, 3)]:
        frame = rng.integers(0, 256, shape, dtype=np.uint8)
        with Image.open(io.BytesIO(encode_png(frame))) as image:
            assert np.array_equal(np.asarray(image), frame)
    with pytest.raises(ValueError, match="not a frame"):
        encode_png(np.zeros((4, 4), np.uint8))


def test_the_ledger_holds_references_and_each_frame_is_stored_once(tmp_path):
    same = screen_of("the same screen")
    other = screen_of("another screen")
    steps = [
        StepRecord("a", {"screenshot": same, "text": "tree"}, 0.0, False, False),
        StepRecord("b", other, 0.0, False, False),
        StepRecord("c", same, 1.0, True, False),
    ]
    record = EpisodeRecord(EpisodeSpec("x/Y-v0", "t0", 0, "oracle"), same, steps)
    with EpisodeWriter(tmp_path / "episodes.jsonl") as writer:
        writer.write(record)
    line = (tmp_path / "episodes.jsonl").read_text()
    assert len(line) < 2_000  # references, not pixels
    back = next(read_episodes(tmp_path / "episodes.jsonl"))
    refs = [back.initial_observation, back.steps[0].observation["screenshot"]]
    refs += [step.observation for step in back.steps[1:]]
    assert all(is_frame_ref(ref) for ref in refs)
    assert back.steps[0].observation["text"] == "tree"
    assert refs[0] == refs[1] == refs[3] == frame_ref(same)
    assert refs[2] == frame_ref(other)
    assert sorted(p.name for p in (tmp_path / "frames").rglob("*.png")) == sorted(
        {f"{frame_ref(same)['sha256']}.png", f"{frame_ref(other)['sha256']}.png"}
    )
    assert np.array_equal(decoded(tmp_path / refs[0]["path"]), same)
    assert np.array_equal(decoded(tmp_path / refs[2]["path"]), other)
    assert back.schema_version == "1.4"


def test_a_frame_store_names_frames_by_their_pixels(tmp_path):
    store = FrameStore(tmp_path)
    frame = screen_of("pixels")
    ref = store.keep(frame)
    assert re.fullmatch(r"frames/([0-9a-f]{2})/\1[0-9a-f]{62}\.png", ref["path"])
    assert ref["shape"] == list(frame.shape)
    assert store.keep(frame.copy()) == ref  # equal pixels, same name: stored once
    flipped = store.keep(frame[:, ::-1].copy())
    assert flipped["sha256"] != ref["sha256"]
    assert not list(tmp_path.rglob(".*"))  # no scratch file left behind


def test_an_evaluation_writes_frames_to_disk_and_the_agent_sees_pixels(tmp_path):
    seen = []

    def agent(observation, info):
        seen.append(observation)
        return info["admissible_actions"][0]

    result = evaluate(screen_benchmark(tasks=2), agent, tmp_path / "run", num_envs=2)
    assert all(isinstance(o, np.ndarray) and o.dtype == np.uint8 for o in seen)
    lines = (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 2
    for record, line in zip(result.records, lines, strict=True):
        assert "[[[" not in line  # no pixel array written inline
        observations = [record.initial_observation] + [s.observation for s in record.steps]
        assert observations and all(is_frame_ref(o) for o in observations)
        expected = [record.steps[0].info["feedback"]]  # the env's text: the screen's content
        frame = decoded(tmp_path / "run" / record.steps[0].observation["path"])
        assert np.array_equal(frame, screen_of(expected[0]))


def test_a_resumed_run_keeps_its_frames_and_finishes(tmp_path):
    run = tmp_path / "run"
    evaluate(screen_benchmark(tasks=2), "oracle", run)
    ledger = run / "episodes.jsonl"
    first, _second = ledger.read_text().splitlines()
    ledger.write_text(first + "\n")  # the second episode "was in flight" when the run died
    frames_before = {p.name for p in run.rglob("*.png")}
    result = evaluate(screen_benchmark(tasks=2), "oracle", run, resume=True)
    assert result.resumed == 1
    assert {p.name for p in run.rglob("*.png")} == frames_before
    assert ledger.read_text().splitlines()[0] == first
    for record in result.records:
        assert record.verdict is not None and record.verdict.passed
        for step in record.steps:
            assert (run / step.observation["path"]).is_file()


def test_the_transcript_and_the_report_show_the_frames(tmp_path):
    pytest.importorskip("matplotlib")
    from agentgym.eval.report import read_run, write_html

    run = tmp_path / "run"
    result = evaluate(screen_benchmark(tasks=1), "oracle", run)
    record = result.records[0]
    items = transcript(record)
    text = render_text(items)
    paths = [record.initial_observation["path"]] + [s.observation["path"] for s in record.steps]
    assert all(path in text for path in paths)
    assert record.steps[0].info["feedback"].splitlines()[0] in text  # the text beside it
    assert "frame 16 x 40" in render_html(items)  # without a page: a line naming each file

    page = write_html([read_run(run)], tmp_path / "pages" / "report.html").read_text()
    links = re.findall(r'<a href="([^"]+\.png)"><img alt="frame 16 x 40"', page)
    assert links == ["../run/" + path for path in paths]  # in order, relative to the page
    assert page.count("data:image/png;base64,") >= len(paths)  # thumbnails inlined


def test_a_missing_frame_file_is_said_in_the_report(tmp_path):
    pytest.importorskip("matplotlib")
    from agentgym.eval.report import read_run, write_html

    run = tmp_path / "run"
    result = evaluate(screen_benchmark(tasks=1), "oracle", run)
    gone = run / result.records[0].steps[0].observation["path"]
    gone.unlink()
    page = write_html([read_run(run)], run / "report.html").read_text()
    assert f"{result.records[0].steps[0].observation['path']} (missing)" in page


def test_an_openai_agent_in_a_run_sends_the_screens_as_images(tmp_path):
    """The engine tells the agent the env is multimodal; the scripted server (tests/core, a
    test double recording requests) shows what the agent sent."""
    import base64

    from scripted_server import completion, scripted

    with scripted(lambda body, i: (200, completion("up"), {})) as server:
        result = evaluate(
            env=SCREEN_ID,
            agent=f"openai:m@{server.url}",
            out=tmp_path / "run",
            tasks=1,
            max_steps=2,
            difficulty="easy",
        )
    first = server.requests[0]["messages"][-1]["content"]
    assert [part["type"] for part in first] == ["text", "image_url"]
    png = base64.b64decode(first[1]["image_url"]["url"].split(",", 1)[1])
    with Image.open(io.BytesIO(png)) as image:
        shown = np.asarray(image)
    initial = result.records[0].initial_observation
    assert np.array_equal(shown, decoded(tmp_path / "run" / initial["path"]))


def test_a_frame_as_json_is_its_reference_so_a_replayed_screen_matches_the_record(tmp_path):
    """The leaderboard's replay compares observations as the ledger writes them."""
    from agentgym.ledger import jsonable

    frame = screen_of("a screen")
    with EpisodeWriter(tmp_path / "episodes.jsonl") as writer:
        writer.write(EpisodeRecord(EpisodeSpec("x/Y-v0", "t0", 0, "oracle"), frame))
    recorded = next(read_episodes(tmp_path / "episodes.jsonl")).initial_observation
    assert json.loads(json.dumps(jsonable(frame.copy()))) == recorded
    assert json.loads(json.dumps(jsonable(frame[:, ::-1].copy()))) != recorded
