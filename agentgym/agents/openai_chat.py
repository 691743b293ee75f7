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

Sampling follows ``EpisodeContext.sampling``; each call carries a ``seed`` derived from the
episode seed and the turn, which vLLM and most servers honour.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass
from typing import Any

import httpx

from agentgym.agents.base import AgentReply, EpisodeContext
from agentgym.agents.chat import ChatAgent, SharedBackendFactory
from agentgym.agents.prompting import PromptConfig, extract_action
from agentgym.agents.sampling import SamplingParams
from agentgym.errors import ModelError, UsageError
from agentgym.ledger import TokenRecord

__all__ = ["EndpointClient", "EndpointStats", "OpenAIAgent", "openai_factory"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
USAGE_STATUSES = {
    401: "the endpoint refused the API key (set OPENAI_API_KEY)",
    403: "the endpoint refused the API key (set OPENAI_API_KEY)",
    404: "no such model or path (is the base URL the one ending in /v1?)",
}


@dataclass
class EndpointStats:
    """What the client has done, for reports and tests."""

    requests: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class EndpointClient:
    """An OpenAI-compatible chat endpoint, shared by every agent of a run.

    Args:
        model: the model name the server knows.
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: sent as a bearer token (default: ``$OPENAI_API_KEY``, or none).
        max_concurrency: the most requests in flight at once.
        timeout: seconds one request may take (connecting: 10 s at most).
        max_retries: retries of a request after a transport error or a "later" status.
        backoff: the first retry's delay in seconds; each next one doubles, up to
            ``max_backoff``, with jitter (a random 50 to 100% of it).
        extra_body: more fields for every request (server-specific options).
    """

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str | None = None,
        max_concurrency: int = 32,
        timeout: float = 120.0,
        max_retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if not model:
            raise UsageError("an OpenAI-compatible agent needs a model name (openai:MODEL@URL)")
        if not base_url.startswith(("http://", "https://")):
            raise UsageError(f"base URL {base_url!r} must start with http:// or https://")
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise UsageError(f"max_concurrency must be a positive int, got {max_concurrency!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise UsageError(f"max_retries must be an int >= 0, got {max_retries!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.extra_body = dict(extra_body or {})
        self.stats = EndpointStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: httpx.AsyncClient | None = None
        self._gate: asyncio.Semaphore | None = None

    @property
    def headers(self) -> dict[str, str]:
        """The headers every request to the endpoint carries (the bearer token, if any)."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _session(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        # The connection pool and the gate belong to the running loop; a new loop (a second
        # evaluate() with the same factory) gets its own.
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._http is None or self._gate is None:
            limits = httpx.Limits(max_connections=self.max_concurrency)
            self._http = httpx.AsyncClient(
                headers=self.headers,
                timeout=httpx.Timeout(self.timeout, connect=min(10.0, self.timeout)),
                limits=limits,
            )
            self._gate = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
        return self._http, self._gate

    async def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST a chat completion; the parsed response. Retries as the module docstring says."""
        http, gate = self._session()
        url = f"{self.base_url}/chat/completions"
        body = {"model": self.model, **self.extra_body, **body}
        async with gate:
            for attempt in range(self.max_retries + 1):
                self.stats.requests += 1
                delay, problem = None, ""
                try:
                    response = await http.post(url, json=body)
                except httpx.TransportError as error:
                    problem = f"{type(error).__name__}: {error or 'connection failed'}"
                else:
                    if response.status_code == 200:
                        return self._parse(response)
                    problem = f"HTTP {response.status_code}: {_server_message(response)}"
                    if response.status_code in USAGE_STATUSES:
                        raise UsageError(
                            f"{url} (model {self.model!r}): "
                            f"{USAGE_STATUSES[response.status_code]}; the server said: {problem}"
                        )
                    if response.status_code not in RETRY_STATUSES:
                        self.stats.failures += 1
                        raise ModelError(f"{url} rejected the request: {problem}")
                    delay = _retry_after(response)
                if attempt == self.max_retries:
                    break
                self.stats.retries += 1
                if delay is None:
                    delay = self.backoff * 2**attempt * random.uniform(0.5, 1.0)
                await asyncio.sleep(min(delay, self.max_backoff))
        self.stats.failures += 1
        raise ModelError(f"{url} failed {self.max_retries + 1} time(s); last: {problem}")

    def _parse(self, response: httpx.Response) -> dict[str, Any]:
        try:
            payload = response.json()
            choice = payload["choices"][0]
            if not isinstance(choice.get("message"), dict):
                raise TypeError("choices[0].message is not an object")
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise ModelError(
                f"{self.base_url}: not a chat completion ({error}): {response.text[:300]!r}"
            ) from error
        usage = payload.get("usage") or {}
        self.stats.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.stats.completion_tokens += int(usage.get("completion_tokens") or 0)
        return payload

    async def aclose(self) -> None:
        """Close the connection pool (the run's loop must be the one that opened it)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def _server_message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error", response.text)
    except ValueError:
        return response.text[:300]
    if isinstance(error, dict):
        error = error.get("message", error)
    return str(error)[:300]


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None


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
    ) -> None:
        super().__init__(prompt, name)
        self.client = client
        self.native_tools = native_tools
        self.token_ids = token_ids

    def reset(self, context: EpisodeContext) -> None:
        super().reset(context)
        self.tools = context.tools if self.native_tools else None
        self._pending_call: str | None = None  # the id of the tool call awaiting its result

    async def act(self, observation: Any, info: dict[str, Any]) -> AgentReply:
        self.conversation.add_observation(observation, tool_call_id=self._pending_call)
        self._pending_call = None
        body = self._body(self.next_seed())
        payload = await self.client.chat(body)
        choice = payload["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
        call = _first_tool_call(message) if self.tools else None
        self.conversation.add_reply(text, call)
        if call is not None:
            self._pending_call = call["id"]
            action: Any = {"name": call["name"], "arguments": _arguments(call["arguments"])}
        else:
            action = extract_action(text, self.action_style)
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


def _first_tool_call(message: dict[str, Any]) -> dict[str, Any] | None:
    """The first native tool call of a reply as ``{"id", "name", "arguments": str}``."""
    calls = message.get("tool_calls") or []
    if not calls:
        return None
    function = calls[0].get("function") or {}
    arguments = function.get("arguments", "{}")
    return {
        "id": str(calls[0].get("id") or "call_0"),
        "name": str(function.get("name", "")),
        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
    }


def _arguments(raw: str) -> Any:
    """Parsed tool-call arguments; the raw string when they are not JSON (the env explains)."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse_spec(spec: str) -> tuple[str, str]:
    """``(model, base_url)`` from ``MODEL@URL`` or ``MODEL`` (then ``$OPENAI_BASE_URL``)."""
    model, at, url = spec.rpartition("@") if "@" in spec else (spec, "", "")
    if not at:
        url = os.environ.get("OPENAI_BASE_URL", DEFAULT_BASE_URL)
    if not model:
        raise UsageError(f"agent spec 'openai:{spec}' names no model; use openai:MODEL@URL")
    return model, url


def openai_factory(
    spec: str,
    prompt: PromptConfig | None = None,
    *,
    native_tools: bool = True,
    token_ids: bool = False,
    **client_options: Any,
) -> SharedBackendFactory[EndpointClient]:
    """The factory for ``openai:MODEL@URL``; ``client_options`` go to :class:`EndpointClient`."""
    model, base_url = parse_spec(spec)
    client = EndpointClient(model, base_url, **client_options)  # checked now, not at episode 1

    def make_agent(backend: EndpointClient, config: PromptConfig, name: str) -> OpenAIAgent:
        return OpenAIAgent(backend, config, name, native_tools=native_tools, token_ids=token_ids)

    return SharedBackendFactory(lambda: client, f"openai:{spec}", prompt, make_agent)
