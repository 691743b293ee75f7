"""Episodes on env servers: ``evaluate(..., env_servers=[URL, ...])`` and ``--env-server``.

An :class:`EnvServers` is the engine's ``make_env``: each episode's env is a session on one of
the servers (:func:`agentgym.remote.make`), made with the plan's id, kwargs and step limit
exactly as :func:`~agentgym.eval.engine.plan_env` makes the local one, so a remote run's
records equal a local run's but for timing. A new episode goes to the server with the fewest
of this run's episodes in flight (ties: the one given the fewest so far), which spreads a run
over servers of equal speed and keeps a slow one from piling up work. A server that just
failed (could not be reached, or lost an episode) is passed over for :data:`DOWN_S` seconds
while another is up: a dead server has nothing in flight, and would otherwise draw every
retry.

A server that dies mid-episode makes the client raise
:class:`~agentgym.errors.RemoteEnvError`, an infrastructure error: the engine retries the
episode (on whichever server then has the fewest in flight) and records it as errored only
after its last try, never as a score.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, SupportsFloat

import gymnasium

from agentgym.errors import RemoteEnvError, UsageError
from agentgym.eval.plan import EpisodePlan

__all__ = ["DOWN_S", "TOKEN_VARIABLE", "EnvServers", "server_token"]

DOWN_S = 30.0
"""Seconds a server that failed is passed over while another is up."""

TOKEN_VARIABLE = "AGENTGYM_SERVER_TOKEN"
"""The environment variable holding the env servers' bearer token (the server reads it too)."""


def server_token(token: str | None) -> str | None:
    """The bearer token to send: ``token`` when given, else ``$AGENTGYM_SERVER_TOKEN``."""
    return token if token is not None else os.environ.get(TOKEN_VARIABLE) or None


class EnvServers:
    """``make_env(plan)`` for :func:`~agentgym.eval.engine.run_episodes` over env servers.

    Called from the engine's env threads at once, so the choice of server and the counts
    are under a lock. An episode counts as in flight from its make until its env is closed
    (the engine always closes what it made)."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        token: str | None = None,
        reply_timeout_s: float = 300.0,
        reconnect_s: float = 10.0,
    ) -> None:
        self.urls = check_urls(urls)
        self.token = server_token(token)
        self.reply_timeout_s, self.reconnect_s = reply_timeout_s, reconnect_s
        self.in_flight = dict.fromkeys(self.urls, 0)
        self.given = dict.fromkeys(self.urls, 0)
        self.down_until = dict.fromkeys(self.urls, 0.0)
        self._lock = threading.Lock()

    def __call__(self, plan: EpisodePlan, **extra: Any) -> gymnasium.Env[Any, Any]:
        """The env of ``plan``'s episode, on the least busy server."""
        from agentgym.remote import make

        if extra:  # the model playing a user is an object in this process
            raise UsageError(
                f"an env server cannot take {sorted(extra)}: --user (a model playing the "
                f"user) needs local envs; leave out --env-server or --user"
            )
        url = self._take()
        kwargs = dict(plan.env_kwargs)
        if plan.max_steps is not None:
            kwargs["max_episode_steps"] = plan.max_steps
        try:
            env = make(url, plan.env_id, token=self.token, reply_timeout_s=self.reply_timeout_s,
                       reconnect_s=self.reconnect_s, **kwargs)  # fmt: skip
        except BaseException as error:
            if isinstance(error, RemoteEnvError):
                self._failed(url)
            self._release(url)
            raise
        return _Released(env, lambda: self._release(url), lambda: self._failed(url))

    def _take(self) -> str:
        now = time.monotonic()
        with self._lock:
            url = min(
                self.urls,
                key=lambda u: (self.down_until[u] > now, self.in_flight[u], self.given[u]),
            )
            self.in_flight[url] += 1
            self.given[url] += 1
        return url

    def _release(self, url: str) -> None:
        with self._lock:
            self.in_flight[url] -= 1

    def _failed(self, url: str) -> None:
        with self._lock:
            self.down_until[url] = time.monotonic() + DOWN_S


def check_urls(urls: Sequence[str]) -> list[str]:
    """The servers as a list: at least one, each ``http(s)://`` or ``ws(s)://HOST:PORT``
    (a bare string would be taken as a list of one-letter URLs), no duplicates."""
    from urllib.parse import urlsplit

    if isinstance(urls, str):
        raise UsageError(f"env_servers is a list of URLs, got the string {urls!r}; use [{urls!r}]")
    found = [str(url).rstrip("/") for url in urls]
    if not found:
        raise UsageError("env_servers is empty; give at least one http://HOST:PORT")
    for url in found:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
            raise UsageError(
                f"--env-server {url!r} is not a server's URL; it looks like http://HOST:PORT "
                f"(what agentgym serve-env prints)"
            )
    if len(set(found)) != len(found):
        raise UsageError(f"--env-server names a server twice: {found}")
    return found


class _Released(gymnasium.Wrapper[Any, Any, Any, Any]):
    """A remote env that tells its :class:`EnvServers` when it is closed (once) and when
    its server failed it (a :class:`~agentgym.errors.RemoteEnvError`)."""

    def __init__(
        self, env: gymnasium.Env[Any, Any], release: Callable[[], None], failed: Callable[[], None]
    ) -> None:
        super().__init__(env)
        self._release: Callable[[], None] | None = release
        self._failed = failed

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        try:
            return self.env.reset(**kwargs)
        except RemoteEnvError:
            self._failed()
            raise

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        try:
            return self.env.step(action)
        except RemoteEnvError:
            self._failed()
            raise

    def close(self) -> None:
        release, self._release = self._release, None
        try:
            super().close()
        finally:
            if release is not None:
                release()
