"""``agentgym serve``: an OpenAI-compatible server over the in-process ``hf`` backend.

Why a server of our own: a trainer that samples its rollouts from a server must get back the
exact token ids it sampled and their logprobs (token in, token out), and must be able to put
its updated weights into the server between iterations. vLLM's server returns token ids but
syncs weights only over NCCL or CUDA IPC (GPUs); this one does both on any machine, so a
policy can be served from a separate process or machine (``--device cuda`` on a GPU box) and
trained against, and anything that speaks the OpenAI API (the ``openai:`` agent, the
``openai`` client) can use it.

Routes:

* ``POST /v1/chat/completions`` — OpenAI's chat completion, not streamed, one choice. The
  messages go through the tokenizer's chat template exactly as the in-process ``hf`` agent
  renders them; concurrent requests are decoded together in batches (:class:`HFBackend`).
  ``temperature`` (0: greedy), ``top_p``, ``top_k`` (vLLM's extension), ``max_tokens`` (or
  ``max_completion_tokens``) and ``seed`` are honoured: the same seed samples the same
  tokens, whatever else shares the batch. With ``return_token_ids`` the response carries
  ``prompt_token_ids`` and ``choices[0].token_ids`` in vLLM's shape, and with ``logprobs``
  each sampled token's logprob under the distribution it was sampled from (after the
  temperature: the logprob a policy-gradient ratio needs).
* ``POST /update_weights_from_disk`` — ``{"model_path": DIR}`` (SGLang's shape): load the
  weights of a ``save_pretrained`` directory into the served model. It waits for the batch
  being decoded; every later one uses the new weights. The directory must be visible to
  the server (the same machine or a shared file system).
* ``GET /v1/models``, ``GET /health``.

What it refuses, with a 400 that says why: streaming, ``n`` > 1, ``stop`` strings, top
logprobs and native tool calls (the env's text action syntax works: run the agent with
``native_tools=False``). An unknown model name is a 404, as OpenAI's API answers it.
With ``--api-key`` every route but ``/health`` needs ``Authorization: Bearer KEY``.
"""

import argparse
import hmac
import time
import uuid
from pathlib import Path
from typing import Any

from agentgym.backends.hf import HFBackend
from agentgym.backends.sampling import SamplingParams
from agentgym.errors import ContextLengthError, ModelError, UsageError

__all__ = ["add_commands", "create_app", "load_backend"]

REFUSED = {
    "stream": "streaming is not supported; ask without stream",
    "stop": "stop strings are not supported; replies end at the end-of-turn token",
    "tools": (
        "native tool calls are not supported; use the env's text action syntax "
        "(the openai agent with native_tools=False)"
    ),
    "top_logprobs": "top logprobs are not supported; logprobs=true gives each sampled token's",
}


def create_app(backend: HFBackend, model_name: str, *, api_key: str | None = None) -> Any:
    """The FastAPI app serving ``backend`` under the name ``model_name``."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    app = FastAPI(title="agentgym policy server", docs_url=None, redoc_url=None)

    def error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
        return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)

    @app.middleware("http")
    async def authorize(request: Request, call_next: Any) -> Any:
        if api_key and request.url.path != "/health":
            given = request.headers.get("authorization", "")
            if not hmac.compare_digest(given, f"Bearer {api_key}"):
                return error(401, "missing or wrong API key", "authentication_error")
        return await call_next(request)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        entry = {"id": model_name, "object": "model", "created": 0, "owned_by": "agentgym"}
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return error(400, "the body must be a JSON object")
        if body.get("model") != model_name:
            return error(404, f"no model {body.get('model')!r}; this server has {model_name!r}")
        try:
            messages, params, seed = _parse(body)
            prompt_ids = backend.encode(messages)
            result = await backend.generate(prompt_ids, params, seed)
        except (UsageError, ContextLengthError) as problem:
            return error(400, str(problem))
        except ModelError as problem:
            return error(500, str(problem), "server_error")
        return _completion(backend, model_name, body, prompt_ids, result)

    @app.post("/update_weights_from_disk")
    async def update_weights(request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            body = None
        path = body.get("model_path") if isinstance(body, dict) else None
        if not isinstance(path, str) or not path:
            return JSONResponse(
                {"success": False, "message": 'give {"model_path": DIR}'}, status_code=400
            )
        started = time.monotonic()
        try:
            await backend.load_weights(path)
        except UsageError as problem:
            return JSONResponse({"success": False, "message": str(problem)}, status_code=400)
        seconds = time.monotonic() - started
        return {"success": True, "message": f"loaded {path} in {seconds:.2f} s"}

    return app


def _parse(body: dict[str, Any]) -> tuple[list[dict[str, Any]], SamplingParams, int]:
    """The messages, sampling settings and seed of a chat request; UsageError if unusable."""
    for key, why in REFUSED.items():
        if body.get(key):
            raise UsageError(f"{key}: {why}")
    if body.get("n", 1) != 1:
        raise UsageError(f"n must be 1, got {body.get('n')!r}")
    messages = body.get("messages")
    if (
        not isinstance(messages, list)
        or not messages
        or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
    ):
        raise UsageError("messages must be a non-empty list of {role, content} objects")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    sampling = {
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "top_k": body.get("top_k") or None,
        "max_tokens": max_tokens,
    }
    params = SamplingParams.from_dict(sampling)
    seed = body.get("seed")
    if seed is None:
        seed = uuid.uuid4().int & (2**63 - 1)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise UsageError(f"seed must be an int, got {seed!r}")
    return messages, params, seed


def _completion(
    backend: HFBackend, model_name: str, body: dict[str, Any], prompt_ids: list[int], result: Any
) -> dict[str, Any]:
    """The chat completion object, with vLLM's token-id fields when asked for."""
    ids = list(result.completion_ids)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": backend.decode(ids)},
        "finish_reason": result.finish_reason,
    }
    if body.get("logprobs"):
        tokens = backend.tokenizer.convert_ids_to_tokens(ids)
        choice["logprobs"] = {
            "content": [
                {"token": token, "logprob": float(logprob), "bytes": None, "top_logprobs": []}
                for token, logprob in zip(tokens, result.logprobs, strict=True)
            ]
        }
    payload: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_name,
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(ids),
            "total_tokens": len(prompt_ids) + len(ids),
        },
    }
    if body.get("return_token_ids"):
        payload["prompt_token_ids"] = list(prompt_ids)
        choice["token_ids"] = ids
    return payload


def load_backend(model: str, *, device: str | None, max_batch: int) -> HFBackend:
    """The backend for ``agentgym serve MODEL``: ``smollm2`` (the embedded model), a model
    directory, or a trainer's run directory or checkpoint (its latest policy)."""
    from agentgym.backends.hf import checkpoint_policy

    if model == "smollm2":
        from agentgym.backends.smollm2 import model_dir

        directory = model_dir()
    else:
        directory = checkpoint_policy(Path(model).expanduser())
        if not (directory / "config.json").is_file():
            raise UsageError(
                f"agentgym serve {model!r}: not 'smollm2' nor a model directory "
                f"(save_pretrained output, or a trainer's run directory)"
            )
    return HFBackend.load(directory, device=device, max_batch=max_batch)


def add_commands(commands: Any) -> None:
    """``agentgym serve``."""
    serve = commands.add_parser(
        "serve",
        help="serve a model over an OpenAI-compatible API (token ids, logprobs, weight reload)",
        description=__doc__.split("\n\n")[0] + " Trainers sample from it with "
        "--rollout-endpoint MODEL@http://HOST:PORT/v1.",
    )
    serve.add_argument("model", help="'smollm2', a model directory, or a trainer's run directory")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument("--name", help="the model name clients ask for (default: MODEL's)")
    serve.add_argument("--device", help="'cpu' or 'cuda' (default: CUDA when available)")
    serve.add_argument("--max-batch", type=int, default=32, help="most requests decoded at once")
    serve.add_argument("--api-key", help="require this bearer token (default: none)")
    serve.set_defaults(run=_serve)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    backend = load_backend(args.model, device=args.device, max_batch=args.max_batch)
    name = args.name or Path(args.model).name or args.model
    app = create_app(backend, name, api_key=args.api_key)
    print(f"agentgym serve: {name!r} on http://{args.host}:{args.port}/v1", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
