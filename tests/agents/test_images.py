"""Image observations and the LLM agents: a vision endpoint gets the frames as image parts,
a text model gets the text beside them and never the pixels.

The endpoint is the **scripted server** (tests/core), a test double that records each
request and answers from a script: these tests measure the requests the agent builds, not a
model. The frames are small arrays made here, standing in for a GUI env's screenshots.
"""

from __future__ import annotations

import asyncio
import base64
import io
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from scripted_server import completion, scripted  # tests/core: the scripted server double

from agentgym.agents import EpisodeContext, OpenAIAgent, PromptConfig, TokenAgent, resolve_agent
from agentgym.agents.prompting import DROPPED_IMAGE, format_observation, observation_text
from agentgym.backends import EndpointClient
from agentgym.errors import UsageError

Image = pytest.importorskip("PIL.Image")

TAP = {
    "name": "click",
    "description": "Click a point.",
    "parameters": {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
    },
}


def screen(seed: int, shape: tuple[int, ...] = (6, 8, 3)) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def context(multimodal: bool = True, tools: list[dict[str, Any]] | None = None) -> EpisodeContext:
    return EpisodeContext(
        "gui/x-v0", "t0", 1, "Click the button.", {}, tools=tools, multimodal=multimodal
    )


def pixels_of(part: dict[str, Any]) -> np.ndarray:
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
        return np.asarray(image)


def run_agent(agent: OpenAIAgent, observations: list[Any], replies: list[dict[str, Any]]):
    with scripted(lambda body, i: (200, replies[i], {})) as server:
        agent.client = EndpointClient("m", server.url)
        for observation in observations:
            asyncio.run(agent.act(observation, {"feedback": "click: done."}))
    return server.requests


def agent(**options: Any) -> OpenAIAgent:
    return OpenAIAgent(EndpointClient("m", "http://127.0.0.1:9/v1"), PromptConfig(), "m", **options)


def test_a_vision_endpoint_gets_the_frame_as_a_png_image_part_after_the_text():
    frame = screen(0)
    vision = agent()
    vision.reset(context())
    sent = run_agent(vision, [{"screenshot": frame, "text": "[1] button OK"}], [completion("x")])
    text, image = sent[0]["messages"][-1]["content"]
    assert text == {"type": "text", "text": "[1] button OK"}
    assert image["type"] == "image_url"
    assert np.array_equal(pixels_of(image), frame)


def test_a_screenshot_alone_goes_with_the_envs_feedback_as_its_text():
    vision = agent()
    vision.reset(context())
    sent = run_agent(vision, [screen(0)], [completion("x")])
    text, image = sent[0]["messages"][-1]["content"]
    assert text["text"] == "click: done."
    assert image["type"] == "image_url"


def test_a_tool_results_frame_follows_it_in_a_user_message_of_the_same_turn():
    call = {"id": "c1", "type": "function", "function": {"name": "click", "arguments": "{}"}}
    replies = [completion(None, tool_calls=[call]), completion("done")]
    vision = agent(max_images=1)
    vision.reset(context(tools=[TAP]))
    vision.conversation.history_window = 1
    sent = run_agent(vision, [screen(0), screen(1)], replies)
    *_, assistant, result, images = sent[1]["messages"]
    assert assistant["tool_calls"][0]["id"] == "c1"
    assert result == {"role": "tool", "tool_call_id": "c1", "content": "click: done."}
    assert images["role"] == "user"
    assert np.array_equal(pixels_of(images["content"][0]), screen(1))
    # The window of one turn keeps the tool call, its result and the result's images.
    assert [m["role"] for m in sent[1]["messages"]] == ["system", "assistant", "tool", "user"]


def test_only_the_last_images_are_sent_and_older_ones_become_a_line_of_text():
    vision = agent(max_images=2)
    vision.reset(context())
    frames = [screen(seed) for seed in range(4)]
    sent = run_agent(vision, frames, [completion(f"r{i}") for i in range(4)])
    last = sent[-1]["messages"]
    images = [p for m in last if isinstance(m["content"], list) for p in m["content"]]
    shown = [p for p in images if p["type"] == "image_url"]
    assert [pixels_of(p).tolist() for p in shown] == [f.tolist() for f in frames[2:]]
    assert sum(p == {"type": "text", "text": DROPPED_IMAGE} for p in images) == 2
    # The conversation keeps every frame: only the request leaves the old ones out.
    kept = [m for m in vision.conversation.messages if m["role"] == "user"]
    assert all(m["content"][1]["type"] == "image_url" for m in kept)


@pytest.mark.parametrize(
    ("vision", "multimodal", "sends"),
    [(None, True, True), (None, False, False), (False, True, False), (True, False, True)],
)
def test_the_vision_option_and_the_envs_metadata_decide_who_gets_images(vision, multimodal, sends):
    endpoint = agent(vision=vision)
    endpoint.reset(context(multimodal=multimodal))
    content = run_agent(endpoint, [screen(0)], [completion("x")])[0]["messages"][-1]["content"]
    if sends:
        assert [part["type"] for part in content] == ["text", "image_url"]
    else:
        assert content == "click: done."


class RecordingBackend:
    """A token backend double that records the messages it is asked to encode."""

    def __init__(self) -> None:
        self.encoded: list[list[dict[str, Any]]] = []

    def encode(self, messages: list[dict[str, Any]]) -> list[int]:
        self.encoded.append(messages)
        return [1, 2, 3]

    def decode(self, ids: list[int]) -> str:
        return "click(1, 2)"

    async def generate(self, prompt_ids: list[int], params: Any, seed: int) -> Any:
        return SimpleNamespace(completion_ids=[4], logprobs=[-0.5])


def test_a_text_model_reads_the_text_view_and_never_the_pixels():
    backend = RecordingBackend()
    text_agent = TokenAgent(backend, PromptConfig(), "hf:tiny")  # type: ignore[arg-type]
    text_agent.reset(context())
    big = screen(0, (60, 80, 3))
    for observation in ({"screenshot": big, "text": "[3] link Home"}, big):
        reply = asyncio.run(text_agent.act(observation, {"feedback": "click: done."}))
        assert reply.action == "click(1, 2)"
    user = [m["content"] for m in backend.encoded[-1] if m["role"] == "user"]
    assert user == ["[3] link Home", "click: done."]


def test_text_views_of_frames():
    frame = screen(0, (600, 800, 3))
    assert observation_text(frame, {}) == "(a screenshot, 800 x 600)"
    assert observation_text({"screenshot": frame, "page": 2}, {}) == '{"page": 2}'
    assert observation_text("plain", {"feedback": "x"}) == "plain"
    shown = format_observation({"screenshot": frame, "text": "t"})
    assert shown == '{"screenshot": "(a screenshot, 800 x 600)", "text": "t"}'


@pytest.mark.parametrize(
    ("options", "message"),
    [({"max_images": 0}, "max_images must be a positive int"), ({"vision": "yes"}, "vision")],
)
def test_bad_image_options_are_refused_with_the_value(options, message):
    with pytest.raises(UsageError, match=message):
        resolve_agent("openai:m@http://127.0.0.1:9/v1", options)
