"""A run whose stderr is not a terminal (a log, CI, ``make demo | tee``) still reports its
progress: a plain line every few seconds and one at the end. The clock is injected: no test
sleeps."""

from __future__ import annotations

import asyncio
import io

import pytest

from agentgym.eval import Benchmark, evaluate
from agentgym.eval.progress import LiveProgress, PlainProgress, start_progress

SUITE = {
    "name": "progress",
    "version": 1,
    "description": "Five Hanoi tasks: a run of a tenth of a second.",
    "seed": 0,
    "envs": [{"id": "games/TowerOfHanoi-v0", "split": "test", "difficulty": "easy", "tasks": 5}],
}


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    run = evaluate(Benchmark.from_dict(SUITE), "oracle", tmp_path_factory.mktemp("p") / "run")
    return run.records


class FakeClock:
    """Seconds that advance only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_few_seconds_with_rate_and_eta_and_one_at_the_end(records):
    stream, clock = io.StringIO(), FakeClock()
    progress = PlainProgress(7, 2, stream=stream, clock=clock, every=10.0)  # 2 resumed
    for record in records:
        clock.now += 4.0
        progress.update(record)
    progress.finish()
    assert stream.getvalue().splitlines() == [
        # at 12 s, 3 episodes done: 15 a minute, 2 left; then nothing for 8 s
        "episodes 5/7, success so far 100.0%, errored 0, 15.0 ep/min, eta 8s",
        "episodes 7/7, success so far 100.0%, errored 0, 15.0 ep/min",  # finish, at 20 s
    ]


def test_a_line_comes_while_no_episode_ends():
    stream, clock, slept = io.StringIO(), FakeClock(), []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds
        if len(slept) == 3:
            raise asyncio.CancelledError  # the run cancels it when its episodes are done

    progress = PlainProgress(4, 0, stream=stream, clock=clock, every=10.0, sleep=sleep)
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(progress.keep_alive())
    assert slept == [10.0, 10.0, 10.0]
    assert stream.getvalue().splitlines() == [
        "episodes 0/4, success so far 0.0%, errored 0, 0.0 ep/min",  # a model still loading
        "episodes 0/4, success so far 0.0%, errored 0, 0.0 ep/min",
    ]


def test_errored_episodes_are_counted_and_their_first_reason_shown(records):
    import dataclasses

    stream, clock = io.StringIO(), FakeClock()
    failed = [
        dataclasses.replace(r, status="errored", error=f"the agent raised ValueError: {i}")
        for i, r in enumerate(records[:2])
    ]
    progress = PlainProgress(2, 0, stream=stream, clock=clock, every=10.0)
    for record in failed:
        clock.now += 90.0
        progress.update(record)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[0].startswith("errored: games/TowerOfHanoi-v0 ")
    assert "the agent raised ValueError: 0 (further episodes" in lines[0]
    assert lines[1:] == [
        "episodes 1/2, success so far 0.0%, errored 1, 0.7 ep/min, eta 1m30s",
        "episodes 2/2, success so far 0.0%, errored 2, 0.7 ep/min",
    ]


def test_a_run_without_a_terminal_prints_plain_lines(tmp_path, capsys):
    assert isinstance(start_progress(3, 0, io.StringIO()), PlainProgress)
    evaluate(Benchmark.from_dict(SUITE), "oracle", tmp_path / "run", progress=True)
    err = capsys.readouterr().err  # pytest's capture is no terminal
    assert err.startswith("episodes 5/5, success so far 100.0%, errored 0, ")
    assert err.endswith(" ep/min\n")


def test_a_terminal_gets_the_live_bar():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    progress = start_progress(3, 0, Terminal())
    assert isinstance(progress, LiveProgress)
    progress.finish()
