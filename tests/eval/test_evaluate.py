"""The evaluator end to end: agents plug in, faults are kept apart, runs resume, runs reproduce."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ledger_lines import without_timing  # tests/: the ledger without its timing fields

from agentgym.agents import Agent, AgentReply
from agentgym.errors import ContextLengthError, UsageError
from agentgym.eval import EngineLimits, evaluate
from agentgym.eval.plan import Benchmark, BenchmarkEnv, load_benchmark
from agentgym.ledger import read_episodes

ROOT = Path(__file__).resolve().parents[2]


def suite(env_id: str = "games/TowerOfHanoi-v0", tasks: int = 4, repeats: int = 2, **env):
    return Benchmark(
        name="t",
        episodes_per_task=repeats,
        envs=(BenchmarkEnv(env_id, split="dev", difficulty="easy", tasks=tasks, **env),),
    )


# ----------------------------------------------------------------------------- agents plug in


def test_a_plain_function_is_an_agent(tmp_path):
    def always_up(observation, info):
        return "up"

    result = evaluate(suite("games/Maze-v0", max_steps=5), always_up, tmp_path / "run")
    assert result.summary["agent"] == "always_up"
    assert all(len(r.steps) == 5 for r in result.records)
    assert all(r.steps[0].action == "up" for r in result.records)


def test_an_agent_class_gets_instructions_and_keeps_state_per_episode(tmp_path):
    class Counting(Agent):
        name = "counting"

        def reset(self, context):
            assert "Tower of Hanoi" in context.instructions and context.task_id
            self.turns = 0

        async def act(self, observation, info):
            self.turns += 1
            return AgentReply(action="move A B", text=f"turn {self.turns}")

    result = evaluate(suite(max_steps=3), Counting, tmp_path / "run")
    for record in result.records:
        assert [s.info["agent_text"] for s in record.steps] == ["turn 1", "turn 2", "turn 3"]


def test_the_oracle_scores_one_and_random_scores_lower(tmp_path):
    oracle = evaluate(load_benchmark("quickstart"), "oracle", tmp_path / "oracle", num_envs=8)
    assert oracle.summary["overall"]["success"] == 1.0
    assert oracle.summary["overall"]["errored"] == 0
    random = evaluate(load_benchmark("quickstart"), "random", tmp_path / "random", num_envs=8)
    assert random.summary["overall"]["success"] < 0.5


def test_bad_agent_specs_are_usage_errors(tmp_path):
    for spec in ("gpt-nothing", "no.such.module:Agent", "json:nothing_here", 42):
        with pytest.raises(UsageError):
            evaluate(suite(), spec, tmp_path / f"run-{spec}")


# ----------------------------------------------------------------------------- faults


def test_an_env_that_raises_is_errored_retried_and_excluded(tmp_path):
    result = evaluate(
        suite("evaltest/RaiseOnStep-v0", tasks=2, repeats=1),
        "oracle",
        tmp_path / "run",
        limits=EngineLimits(retries=2),
    )
    assert [r.status for r in result.records] == ["errored", "errored"]
    assert "3 attempt(s) failed" in result.records[0].error
    assert "RuntimeError: simulated env crash" in result.records[0].error
    overall = result.summary["overall"]
    assert overall["errored"] == 2 and overall["scored"] == 0


def test_an_agent_out_of_context_is_errored_without_a_retry(tmp_path):
    calls = []

    def overflowing(observation, info):
        calls.append(1)
        raise ContextLengthError("the prompt (9000 tokens) and 64 more exceed the context (8192)")

    result = evaluate(
        suite(tasks=1, repeats=1), overflowing, tmp_path / "run", limits=EngineLimits(retries=2)
    )
    assert [r.status for r in result.records] == ["errored"]
    assert len(calls) == 1  # replaying the same episode would overflow again
    assert "1 attempt(s) failed" in result.records[0].error
    assert "ContextLengthError" in result.records[0].error


def test_a_hanging_env_times_out_and_the_run_completes(tmp_path):
    started = time.monotonic()
    result = evaluate(
        suite("evaltest/HangOnStep-v0", tasks=2, repeats=1),
        "oracle",
        tmp_path / "run",
        limits=EngineLimits(step_timeout=0.5, retries=0),
    )
    assert time.monotonic() - started < 20
    assert all(r.status == "errored" and "step timeout" in r.error for r in result.records)


HUNG = """
import sys
sys.path.insert(0, {tests!r})
import agentgym
agentgym.register("evaltest/Hang-v0", entry_point="faulty_envs:FaultyHanoi",
                  kwargs={{"fault": "hang_on_step"}}, max_episode_steps=50)
from agentgym.eval.plan import Benchmark, BenchmarkEnv
from agentgym.eval import EngineLimits, evaluate
suite = Benchmark(name="t", envs=(BenchmarkEnv("evaltest/Hang-v0", split="dev", tasks=2),))
result = evaluate(suite, "oracle", {out!r}, limits=EngineLimits(step_timeout=0.5, retries=0))
print(result.summary["overall"]["errored"])
"""


def test_a_hung_env_call_does_not_keep_the_process_alive(tmp_path):
    # The hung call's thread cannot be killed; it must not be joined at interpreter exit
    # (a ThreadPoolExecutor's would be, and the evaluation would never end).
    code = HUNG.format(tests=str(Path(__file__).parents[1] / "core"), out=str(tmp_path / "run"))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_a_flaky_env_succeeds_on_retry(tmp_path):
    result = evaluate(suite("evaltest/FlakyReset-v0", tasks=3, repeats=1), "oracle", tmp_path / "r")
    assert [r.status for r in result.records] == ["ok", "ok", "ok"]
    assert result.summary["overall"]["success"] == 1.0


def test_an_agent_that_times_out_or_raises_is_errored(tmp_path):
    import asyncio

    async def slow(observation, info):
        await asyncio.sleep(30)

    def broken(observation, info):
        raise ConnectionResetError("the model server dropped the connection")

    limits = EngineLimits(step_timeout=0.3, retries=1)
    slow_run = evaluate(suite(tasks=1, repeats=1), slow, tmp_path / "slow", limits=limits)
    assert "the agent took over the step timeout" in slow_run.records[0].error
    broken_run = evaluate(suite(tasks=1, repeats=1), broken, tmp_path / "broken", limits=limits)
    assert "ConnectionResetError" in broken_run.records[0].error
    assert broken_run.summary["overall"]["errored"] == 1


def test_mixed_errored_and_scored_episodes_keep_errors_out_of_the_rates(tmp_path):
    calls = {"n": 0}

    def sometimes_broken(observation, info):
        calls["n"] += 1
        if "dev/easy/0" in info.get("state_key", "") or calls["n"] % 7 == 0:
            raise RuntimeError("boom")
        return "move A C"

    result = evaluate(
        suite(tasks=3, repeats=2, max_steps=4),
        sometimes_broken,
        tmp_path / "run",
        limits=EngineLimits(retries=0),
    )
    overall = result.summary["overall"]
    assert overall["scored"] + overall["errored"] == overall["episodes"] == 6
    assert overall["errored"] >= 1


# ----------------------------------------------------------------------------- run directory


def test_the_run_directory_holds_manifest_ledger_and_summary(tmp_path):
    benchmark = suite()
    result = evaluate(benchmark, "oracle", tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["benchmark_hash"] == benchmark.digest() and manifest["episodes"] == 8
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["overall"]["success"] == 1.0 and summary["overall"]["pass^2"] == 1.0
    ids = [r.episode_id for r in read_episodes(tmp_path / "run" / "episodes.jsonl")]
    assert ids == [p.episode_id for p in benchmark.plan()] == [r.episode_id for r in result.records]


def test_an_existing_run_needs_resume_and_a_matching_manifest(tmp_path):
    evaluate(suite(tasks=1, repeats=1), "oracle", tmp_path / "run")
    with pytest.raises(UsageError, match="resume"):
        evaluate(suite(tasks=1, repeats=1), "oracle", tmp_path / "run")
    with pytest.raises(UsageError, match="agent"):
        evaluate(suite(tasks=1, repeats=1), "random", tmp_path / "run", resume=True)
    with pytest.raises(UsageError, match="benchmark_hash"):
        evaluate(suite(tasks=2, repeats=1), "oracle", tmp_path / "run", resume=True)
    again = evaluate(suite(tasks=1, repeats=1), "oracle", tmp_path / "run", resume=True)
    assert again.resumed == 1


# Episodes of over a second each, so a loaded CI machine still signals the run mid-way.
KILLABLE = """
import signal, sys
# Ctrl-C as in a terminal, even when the tests run in the background (SIGINT ignored there).
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {tests!r})
import agentgym
agentgym.register("evaltest/SlowStep-v0", entry_point="faulty_envs:FaultyHanoi",
                  kwargs={{"fault": "slow_step", "delay": 0.1}}, max_episode_steps=50)
from agentgym.eval.plan import Benchmark, BenchmarkEnv
from agentgym.eval import evaluate
suite = Benchmark(name="t", episodes_per_task=2,
                  envs=(BenchmarkEnv("evaltest/SlowStep-v0", split="dev", difficulty="medium",
                                     tasks=6),))
evaluate(suite, "oracle", {out!r}, num_envs=2, resume={resume})
"""


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
    out = tmp_path / "run"
    tests = str(Path(__file__).parents[1] / "core")
    code = KILLABLE.format(tests=tests, out=str(out), resume=False)
    process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    ledger = out / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if ledger.exists() and ledger.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    written = ledger.read_text().count("\n")
    assert 3 <= written < 12, written  # killed mid-run
    resumed = subprocess.run(
        [sys.executable, "-c", KILLABLE.format(tests=tests, out=str(out), resume=True)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    ids = [r.episode_id for r in read_episodes(ledger)]
    assert len(ids) == len(set(ids)) == 12
    assert all(r.status == "ok" for r in read_episodes(ledger))


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_the_run_resumes(tmp_path):
    out = tmp_path / "run"
    tests = str(Path(__file__).parents[1] / "core")
    process = subprocess.Popen(
        [sys.executable, "-c", KILLABLE.format(tests=tests, out=str(out), resume=False)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    ledger = out / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (ledger.exists() and ledger.read_text()):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)  # stops promptly, does not hang
    assert process.returncode != 0 and "KeyboardInterrupt" in stderr
    finished = [r.episode_id for r in read_episodes(ledger)]
    assert 1 <= len(finished) < 12
    resumed = subprocess.run(
        [sys.executable, "-c", KILLABLE.format(tests=tests, out=str(out), resume=True)],
        cwd=ROOT,
        capture_output=True,
        timeout=300,
    )
    assert resumed.returncode == 0
    ids = [r.episode_id for r in read_episodes(ledger)]
    assert len(ids) == len(set(ids)) == 12


# ----------------------------------------------------------------------------- reproducibility


def test_same_seeds_and_a_deterministic_agent_give_an_identical_ledger(tmp_path):
    benchmark = load_benchmark("quickstart")
    lines = []
    for name, num_envs in (("a", 8), ("b", 3)):
        evaluate(benchmark, "random", tmp_path / name, num_envs=num_envs)
        text = (tmp_path / name / "episodes.jsonl").read_text()
        lines.append([without_timing(line) for line in text.splitlines()])
    assert lines[0] == lines[1] and len(lines[0]) == 98
