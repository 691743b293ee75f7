"""What an agent writes cannot error its episodes or crash the run: end to end, through
``agentgym eval`` and ``--resume``.

The agent here replies with lone surrogates (what an OpenAI-compatible server's ``\\ud800``
escape decodes to), raw, escaped in a tool call's JSON and in a native call, and submits a
program whose function returns ``10**5000``. Before the fixes the first made the tool-use env
and the ledger's write raise (the run crashed, and ``--resume`` crashed again on the same
episode), and the second errored every code episode (left out of the success rate).
"""

from __future__ import annotations

import re
import time

import pytest

from agentgym.agents import Agent, AgentReply
from agentgym.cli import main
from agentgym.eval.engine import _cleaned
from agentgym.ledger import read_episodes

BENCHMARK = """\
name: agent-input
seed: 0
episodes_per_task: 1
envs:
  - {id: reasoning/Code-v0, split: test, difficulty: easy, tasks: 2}
  - {id: reasoning/ToolUse-v1, split: test, difficulty: easy, tasks: 2, max_steps: 4}
  - {id: games/Maze-v0, split: test, difficulty: easy, tasks: 1, max_steps: 2}
"""


class Adversary(Agent):
    """Loses every episode in a way that once errored it."""

    name = "adversary"

    def reset(self, context):
        self.env_id, self.turn = context.env_id, 0

    def act_sync(self, observation, info):
        self.turn += 1
        if self.env_id == "reasoning/Code-v0":
            function = re.search(r"def (\w+)\(", observation)[1]
            program = f"def {function}(*args, **kwargs):\n    return 10**5000\n"
            return AgentReply(action=f"```python\n{program}```", text="Huge\ud800")
        if self.env_id == "reasoning/ToolUse-v1" and self.turn == 1:
            call = {"name": "search_items", "arguments": {"query": "lamp\ud800"}}
            return AgentReply(action=call, text="searching\ud800")
        if self.env_id == "reasoning/ToolUse-v1" and self.turn == 2:
            return '{"name": "calculator", "arguments": {"expression": "1\\ud800"}}'
        if self.env_id == "reasoning/ToolUse-v1":
            return 'answer(value="up\ud800")'
        return "up\ud800"


def evaluate(out, benchmark, *more):
    args = ["eval", "--benchmark", str(benchmark), "--agent", f"{__name__}:Adversary"]
    return main([*args, "--out", str(out), "--num-envs", "2", "--retries", "0", *more])


def test_an_adversarial_agent_is_scored_zero_never_errored_and_its_run_resumes(tmp_path, capsys):
    benchmark, out = tmp_path / "bench.yaml", tmp_path / "run"
    benchmark.write_text(BENCHMARK)
    assert evaluate(out, benchmark) == 0
    records = list(read_episodes(out / "episodes.jsonl"))
    assert [r.status for r in records] == ["ok", "ok", "ok", "ok", "truncated"]
    assert all(r.error is None and not r.verdict.passed for r in records)
    code, tool = records[0], records[2]
    assert "returned <an int of about 5001 digits>" in code.verdict.details
    assert tool.steps[0].action["arguments"]["query"] == "lamp\ufffd"
    assert tool.steps[0].info["agent_text"] == "searching\ufffd"
    assert tool.steps[-1].action == 'answer(value="up\ufffd")'
    assert "\ufffd" in tool.steps[1].observation  # the decoded escape, cleaned too

    # A run interrupted after its first episode: --resume plays the rest, crash-free.
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "episodes.jsonl").write_text(lines[0], encoding="utf-8")
    (out / "summary.json").unlink()
    assert evaluate(out, benchmark, "--resume") == 0
    again = list(read_episodes(out / "episodes.jsonl"))
    assert [r.episode_id for r in again] == [r.episode_id for r in records]
    assert all(r.status != "errored" for r in again)
    assert (out / "summary.json").exists()


@pytest.mark.browser
def test_the_web_shop_takes_a_lone_surrogate_as_text(tmp_path):
    """The shop env typed the raw reply into the browser, which raised UnicodeEncodeError."""
    benchmark, out = tmp_path / "bench.yaml", tmp_path / "run"
    benchmark.write_text(
        "name: shop\nseed: 0\nepisodes_per_task: 1\nenvs:\n"
        "  - {id: web/Shop-v1, split: test, tasks: 1, max_steps: 2}\n"
    )

    class Typist(Agent):
        def act_sync(self, observation, info):
            box = re.search(r"\[(\d+)\] searchbox", observation)
            return f'fill("{box[1]}", "lamp\ud800")' if box else "up\ud800"

    from agentgym.eval import EngineLimits
    from agentgym.eval import evaluate as evaluate_api
    from agentgym.eval.plan import load_benchmark

    limits = EngineLimits(retries=0)
    result = evaluate_api(load_benchmark(str(benchmark)), Typist, out, limits=limits)
    (record,) = result.records
    assert record.status == "truncated" and record.error is None
    assert "value='lamp\ufffd'" in record.steps[0].observation


def test_cleaning_a_reply_costs_microseconds():
    """The cost per step of cleaning, measured (docs/contract.md quotes it)."""
    reply = AgentReply(action="move A C " * 400, text="I think " * 500 + "déjà")
    started, n = time.perf_counter(), 20_000
    for _ in range(n):
        _cleaned(reply)
    assert (time.perf_counter() - started) / n < 50e-6
