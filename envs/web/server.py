"""The server process of a browser pool: every site, one port on 127.0.0.1, a database per episode.

Run as ``python -m agentgym.envs.web.server --state-dir DIR``. It binds an ephemeral port on
127.0.0.1 (never another address), prints ``listening on PORT`` on its first line of output,
and serves until stdin closes or it is killed: when the pool's process dies, the server goes
with it. :class:`SiteServer` is the env process's handle on it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentgym.envs.web.sites.base import EPISODE_HEADER, Site, episode_db

__all__ = ["SiteServer", "make_app", "miniwob_html"]

_EPISODE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HEADER = EPISODE_HEADER.lower().encode()


class _EpisodeDatabase:
    """ASGI middleware: opens the requesting episode's database of one site as ``state.db``."""

    def __init__(self, app: Any, state_dir: Path, site: str) -> None:
        self.app, self.state_dir, self.site = app, state_dir, site

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.responses import PlainTextResponse

        episode = dict(scope["headers"]).get(_HEADER, b"").decode("latin-1")
        path = episode_db(self.state_dir, episode, self.site) if _EPISODE.match(episode) else None
        if path is None or not path.exists():
            response = PlainTextResponse(
                f"no episode database for {self.site!r}: requests must come from an episode's "
                f"browser context (header {EPISODE_HEADER})",
                status_code=404,
            )
            await response(scope, receive, send)
            return
        db = sqlite3.connect(path, check_same_thread=False, timeout=5)
        db.row_factory = sqlite3.Row
        scope.setdefault("state", {})["db"] = db
        try:
            await self.app(scope, receive, send)
        finally:
            db.close()


def make_app(state_dir: Path, sites: Mapping[str, Site]) -> Any:
    """The ASGI app: each site mounted at ``/{name}/``, its ``static/`` at ``/{name}/static/``."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Mount, Route, Router
    from starlette.staticfiles import StaticFiles

    mounts: list[Any] = []
    for name, site in sites.items():
        routes = list(site.routes())
        static = site.folder / "static"
        if static.is_dir():
            routes.insert(0, Mount("/static", app=StaticFiles(directory=static), name="static"))
        mounts.append(
            Mount(f"/{name}", app=_EpisodeDatabase(Router(routes), Path(state_dir), name))
        )

    html = miniwob_html()
    if html is not None:  # MiniWoB++'s pages, from the installed wheel
        mounts.append(Mount("/miniwob", app=StaticFiles(directory=html), name="miniwob"))

    links = "".join(f'<li><a href="/{n}/">{s.title}</a></li>' for n, s in sites.items())

    async def index(request: Any) -> HTMLResponse:
        return HTMLResponse(f"<!doctype html><title>Sites</title><ul>{links}</ul>")

    return Starlette(routes=[Route("/", index), *mounts])


def miniwob_html() -> Path | None:
    """The folder of the ``miniwob`` wheel's task pages, if it is installed (not imported:
    its ``__init__`` registers Selenium envs we do not use)."""
    import importlib.util

    spec = importlib.util.find_spec("miniwob")
    if spec is None or not spec.submodule_search_locations:
        return None
    html = Path(next(iter(spec.submodule_search_locations))) / "html"
    return html if html.is_dir() else None


class SiteServer:
    """A running server process (see the module docstring); ``close()`` stops it."""

    def __init__(
        self, state_dir: Path, sites: Mapping[str, str], *, start_timeout: float = 30.0
    ) -> None:
        from agentgym.errors import EnvCrashedError

        self.state_dir = Path(state_dir)
        command = [sys.executable, "-m", "agentgym.envs.web.server", "--state-dir", str(state_dir)]
        # The server imports the same sites from the same places as this process.
        environ = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._process = subprocess.Popen(
            [*command, "--sites", json.dumps(dict(sites))],
            env=environ,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line: list[str] = []
        stdout = self._process.stdout
        assert stdout is not None  # stdout=PIPE above
        reader = threading.Thread(target=lambda: line.append(stdout.readline()))
        reader.daemon = True
        reader.start()
        reader.join(start_timeout)
        match = re.match(r"listening on (\d+)", line[0]) if line else None
        if match is None:
            self._process.kill()
            _, err = self._process.communicate(timeout=5)
            raise EnvCrashedError(
                f"the web site server did not start within {start_timeout:.0f} s: "
                f"{(line[0] if line else '').strip()} {err.strip()[-2000:]}"
            )
        self.port = int(match.group(1))
        self.origin = f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self._process.poll() is None

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    def close(self) -> None:
        """Stop the process (idempotent)."""
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()


def main(argv: list[str] | None = None) -> None:
    """Serve every site on an ephemeral 127.0.0.1 port until stdin closes."""
    import uvicorn

    from agentgym.clihelp import HelpFormatter
    from agentgym.envs.web.sites import load_sites

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument(
        "--state-dir", type=Path, required=True, help="the folder the sites keep their state in"
    )
    parser.add_argument(
        "--sites", type=json.loads, help="JSON: name -> module:Class (default: the shipped sites)"
    )
    args = parser.parse_args(argv)
    app = make_app(args.state_dir, load_sites(args.sites))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))

    def stop_when_parent_goes() -> None:
        sys.stdin.read()  # EOF: the pool closed us, or its process died
        server.should_exit = True

    threading.Thread(target=stop_when_parent_goes, daemon=True).start()
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
