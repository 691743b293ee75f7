"""A client of an OpenAI-compatible chat endpoint, shared by every agent of a run.

vLLM's and SGLang's servers, llama.cpp's server, ``transformers serve``, Ollama and the hosted
APIs all speak ``POST {base_url}/chat/completions``. One :class:`EndpointClient` per run talks
to the server over one connection pool with one limit on requests in flight, retries with
backoff the failures that mean "later", and raises typed errors for the rest (see
:class:`EndpointClient`). The per-episode agent over it is
:class:`~agentgym.agents.openai_chat.OpenAIAgent`.
"""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import dataclass
from typing import Any

import httpx

from agentgym.errors import ModelError, UsageError

__all__ = ["DEFAULT_BASE_URL", "EndpointClient", "EndpointStats", "parse_spec"]

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
            payload: dict[str, Any] = response.json()
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


def parse_spec(spec: str) -> tuple[str, str]:
    """``(model, base_url)`` from ``MODEL@URL`` or ``MODEL`` (then ``$OPENAI_BASE_URL``)."""
    model, at, url = spec.rpartition("@") if "@" in spec else (spec, "", "")
    if not at:
        url = os.environ.get("OPENAI_BASE_URL", DEFAULT_BASE_URL)
    if not model:
        raise UsageError(f"agent spec 'openai:{spec}' names no model; use openai:MODEL@URL")
    return model, url
