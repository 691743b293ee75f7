"""Agents over any OpenAI-compatible chat endpoint (``openai:MODEL@URL``).

vLLM's and SGLang's servers, llama.cpp's server, ``transformers serve``, Ollama and the hosted
APIs all speak ``POST {base_url}/chat/completions``. One :class:`EndpointClient` per run is
shared by the run's agents (one :class:`OpenAIAgent` per episode, holding its chat), so the
run talks to the server over one connection pool with one limit:

* **concurrency**: at most ``max_concurrency`` requests in flight; the server batches what
  it gets (vLLM's continuous batching), so the limit is about not flooding it, not about
  taking turns;
* **retries with backoff** on transport errors (refused or dropped connections, timeouts) and
  on the statuses that mean "later" (408, 409, 429, 5xx): exponential backoff with jitter,
  ``Retry-After`` honoured. When the retries are spent the call raises
  :class:`~agentgym.errors.ModelError` and the evaluator records the episode as errored:
  never an empty action, never a reward of 0;
* **a per-request timeout** (the evaluator's step timeout also bounds the whole call);
* a refused key (401/403) or an unknown model or path (404) is the caller's mistake: it
  raises :class:`~agentgym.errors.UsageError`, which stops the run with the server's words.

**Tool calls.** When the env's actions are tool calls (it declares JSON-schema tools; see
:class:`~agentgym.spaces.ToolCall`), the tools go in the request's ``tools`` field and a
native ``tool_calls`` reply becomes the action ``{"name", "arguments"}``; the env's next
observation goes back as the ``tool`` message answering that call. Arguments that are not
valid JSON are passed on as the raw string, and the env says what is wrong with them. A
model that answers in text instead is read by the usual action extraction.

**Tokens.** Chat endpoints return text, plus token counts (``usage``). With
``token_ids=True`` the agent asks for the exact token ids and logprobs, which vLLM's server
returns (``return_token_ids``, vLLM >= 0.10.2), and the ledger records them for trainers; a
server that ignores the request is reported as a usage error rather than recorded without.

**Images.** An observation that holds frames (a GUI env's screenshot,
:mod:`agentgym.frames`) goes to a vision endpoint as OpenAI's image content parts, each a
PNG data URL (``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}``)
after the observation's text (the accessibility tree, or the env's feedback). Option
``vision``: ``None`` (the default) sends images for envs that declare
``metadata["multimodal"]``, ``True`` whenever an observation holds frames, ``False`` never
(a text-only model: it reads the text alone). Option ``max_images`` (default 3) keeps the
last N images in a request and writes the older ones as a line of text, so a long
episode's request stays bounded (an 800 x 600 screenshot is some 50-100 kB of base64).

Sampling follows ``EpisodeContext.sampling``; each call carries a ``seed`` derived from the
episode seed and the turn, which vLLM and most servers honour.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentgym.agents.base import AgentReply, EpisodeContext
from agentgym.agents.chat import ChatAgent, SharedBackendFactory
from agentgym.agents.prompting import PromptConfig, observation_text
from agentgym.backends.endpoint import EndpointClient, parse_spec
from agentgym.backends.sampling import SamplingParams
from agentgym.errors import UsageError
from agentgym.frames import png_data_url, split_frames
from agentgym.ledger import TokenRecord
from agentgym.task_env import clean_action, clean_text

__all__ = ["OpenAIAgent", "openai_factory"]


class OpenAIAgent(ChatAgent):
    """One episode's agent over a shared :class:`EndpointClient`."""

    def __init__(
        self,
        client: EndpointClient,
        prompt: PromptConfig,
        name: str,
        *,
        native_tools: bool = True,
        token_ids: bool = False,
        vision: bool | None = None,
        max_images: int = 3,
    ) -> None:
        super().__init__(prompt, name)
        self.client = client
        self.native_tools = native_tools
        self.token_ids = token_ids
        self.vision = vision
        self.max_images = check_image_options(vision, max_images)

    def tools_as_text(self, context: EpisodeContext) -> Sequence[Mapping[str, Any]] | None:
        """None when the tools go in the request's ``tools`` field: one description each."""
        return None if self.native_tools else context.tools

    def reset(self, context: EpisodeContext) -> None:
        super().reset(context)
        self.tools = context.tools if self.native_tools else None
        self._pending_call: str | None = None  # the id of the tool call awaiting its result
        self.conversation.max_images = self.max_images
        self.sends_images = context.multimodal if self.vision is None else self.vision

    async def act(self, observation: Any, info: dict[str, Any]) -> AgentReply:
        frames = split_frames(observation)[1] if self.sends_images else []
        self.conversation.add_observation(
            observation_text(observation, info),
            tool_call_id=self._pending_call,
            images=[png_data_url(frame) for frame in frames],
        )
        self._pending_call = None
        body = self._body(self.next_seed())
        payload = await self.client.chat(body)
        choice = payload["choices"][0]
        message = choice["message"]
        # Cleaned before the conversation keeps it: a lone surrogate (a server's "\ud800"
        # escape) would make the next request unencodable and error the episode.
        text = clean_text(str(message.get("content") or ""))
        call = _first_tool_call(message) if self.tools else None
        self.conversation.add_reply(text, call)
        if call is not None:
            self._pending_call = call["id"]
            action: Any = {"name": call["name"], "arguments": _arguments(call["arguments"])}
        else:
            action = self.read_action(text)
        usage = payload.get("usage") or {}
        return AgentReply(
            action=action,
            text=text,
            tokens=self._tokens(payload, choice) if self.token_ids else None,
            usage={k: int(usage[k]) for k in ("prompt_tokens", "completion_tokens") if k in usage},
        )

    def _body(self, seed: int) -> dict[str, Any]:
        params: SamplingParams = self.params
        body: dict[str, Any] = {
            "messages": self.conversation.prompt_messages(),
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "seed": seed,
        }
        if params.top_k:
            body["top_k"] = params.top_k  # not OpenAI's, but vLLM, SGLang and llama.cpp read it
        if self.tools:
            body["tools"] = [{"type": "function", "function": tool} for tool in self.tools]
        if self.token_ids:
            body.update(logprobs=True, return_token_ids=True)
        return body

    def _tokens(self, payload: dict[str, Any], choice: dict[str, Any]) -> TokenRecord:
        prompt_ids = payload.get("prompt_token_ids") or choice.get("prompt_token_ids")
        completion_ids = choice.get("token_ids")
        if not isinstance(prompt_ids, list) or not isinstance(completion_ids, list):
            raise UsageError(
                f"{self.client.base_url} returned no token ids: token_ids=True needs a server "
                f"that honours return_token_ids (vLLM >= 0.10.2); turn it off for this one"
            )
        content = (choice.get("logprobs") or {}).get("content") or []
        logprobs = [float(entry["logprob"]) for entry in content]
        return TokenRecord(
            prompt_ids=[int(i) for i in prompt_ids],
            completion_ids=[int(i) for i in completion_ids],
            logprobs=logprobs if len(logprobs) == len(completion_ids) else None,
        )


def check_image_options(vision: Any, max_images: Any) -> int:
    """``max_images`` once both image options are valid; a :class:`UsageError` naming the
    bad one otherwise."""
    if vision is not None and not isinstance(vision, bool):
        raise UsageError(f"vision must be true, false or unset (auto), got {vision!r}")
    if isinstance(max_images, bool) or not isinstance(max_images, int) or max_images < 1:
        raise UsageError(f"max_images must be a positive int, got {max_images!r}")
    return max_images


def _first_tool_call(message: dict[str, Any]) -> dict[str, Any] | None:
    """The first native tool call of a reply as ``{"id", "name", "arguments": str}``."""
    calls = message.get("tool_calls") or []
    if not calls:
        return None
    function = calls[0].get("function") or {}
    arguments = function.get("arguments", "{}")
    if not isinstance(arguments, str):
        try:
            arguments = json.dumps(arguments)
        except (TypeError, ValueError, RecursionError):
            arguments = str(arguments)
    return {
        "id": clean_text(str(calls[0].get("id") or "call_0")),
        "name": clean_text(str(function.get("name", ""))),
        "arguments": clean_text(arguments),
    }


def _arguments(raw: str) -> Any:
    """Parsed tool-call arguments; the raw string when they are not JSON (the env explains)."""
    try:
        return clean_action(json.loads(raw))  # "\ud800" escapes decode to lone surrogates
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's stack
        return raw


def openai_factory(
    spec: str,
    prompt: PromptConfig | None = None,
    *,
    native_tools: bool = True,
    token_ids: bool = False,
    vision: bool | None = None,
    max_images: int = 3,
    **client_options: Any,
) -> SharedBackendFactory[EndpointClient]:
    """The factory for ``openai:MODEL@URL``; ``client_options`` go to :class:`EndpointClient`."""
    model, base_url = parse_spec(spec)
    check_image_options(vision, max_images)  # a bad option fails now, not at episode 1
    client = EndpointClient(model, base_url, **client_options)  # checked now, not at episode 1

    def make_agent(backend: EndpointClient, config: PromptConfig, name: str) -> OpenAIAgent:
        return OpenAIAgent(
            backend,
            config,
            name,
            native_tools=native_tools,
            token_ids=token_ids,
            vision=vision,
            max_images=max_images,
        )

    return SharedBackendFactory(lambda: client, f"openai:{spec}", prompt, make_agent)
