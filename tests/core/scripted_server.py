"""A scripted OpenAI-compatible server: a test double for the openai agent's protocol tests.

It answers each ``POST .../chat/completions`` from a script, so tests can make the corners a
real small server cannot produce on demand (tool calls, 429s, malformed bodies).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedServer:
    """An HTTP server on 127.0.0.1 answering ``POST .../chat/completions`` from ``reply``.

    ``reply(body, index)`` returns ``(status, payload, headers)``; every request body is kept
    in ``requests`` and the most requests in flight at once in ``peak``.
    """

    def __init__(self, reply: Callable[[dict[str, Any], int], tuple[int, Any, dict[str, str]]]):
        self.requests: list[dict[str, Any]] = []
        self.in_flight = self.peak = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    index = len(server.requests)
                    server.requests.append(body)
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                try:
                    status, payload, headers = reply(body, index)
                finally:
                    with server.lock:
                        server.in_flight -= 1
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def scripted(reply: Callable[..., tuple[int, Any, dict[str, str]]]) -> Iterator[ScriptedServer]:
    server = ScriptedServer(reply)
    try:
        yield server
    finally:
        server.close()


def completion(content: str | None = "up", **message: Any) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    }
