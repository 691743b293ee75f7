"""The browser pool: one Chromium and one site server per process, a clean context per episode.

**Why one pool.** Launching Chromium costs about half a second and a server process about as
much. So every web env of a process shares one :class:`BrowserPool` and each episode gets its
own browser context, as BrowserGym does per episode but without relaunching the browser.

**Recycled contexts.** A new context and its first tab cost about 0.3 s of CPU (a renderer
process starts), and loading a page in it another 0.3-0.4 s (a cold cache): 0.7 s of CPU per
reset, measured, against 0.19 s for a context that is reused. So a closed episode's context is
cleared and kept (:data:`IDLE_CONTEXTS` at most) for the next episode: its other tabs are
closed, its tab goes to ``about:blank`` (the old page's scripts stop), its cookies,
permissions, local and session storage, IndexedDB, cache storage and service workers are
deleted, and the next episode's tab starts with a navigation history of its start page
alone. What it keeps is the HTTP cache of the sites' static files. A context that cannot be
cleared in time, or whose tab died, is closed instead.

**Threads.** Playwright's sync API is bound to the thread that started it, while the evaluator
calls an env's ``step`` from whichever worker thread is free. The pool therefore runs
Playwright's *async* API on one event loop of its own thread; envs submit coroutines with
:meth:`BrowserPool.call` from any thread. Contexts of concurrent episodes run concurrently on
that loop.

**Lifetime.** :func:`acquire` hands out the shared pool and counts its users; when the last one
releases it, the pool lingers :data:`LINGER` seconds (an env made right after reuses it) and then
closes its browser, server and thread. :func:`shutdown` closes it at once.

**Faults.** Every Playwright error that leaves the pool becomes ours at one boundary,
:meth:`BrowserPool.call`: :class:`BrowserCrashedError`, an infrastructure error, which the
evaluator retries and then records as errored, never scored. An agent's mistake never gets
that far: the world turns it into feedback first (:func:`is_crash` and the world's own view of
its tab tell the two apart). A browser that disconnects (crashed, killed) fails the episodes
that were using it, and the next context relaunches it. A renderer that dies (a killed
``--type=renderer`` process, a page crash) fails its episode's step; while a reset opens its
start page, a tab whose renderer died is replaced and a navigation that fails while the tab
lives (an aborted or refused load on a busy machine) is tried again, a bounded number of
times. A server process that died is restarted.

The browser is the system's Chromium (Debian's ``chromium``; ``AGENTGYM_CHROMIUM`` names
another), launched through ``executable_path``: ``playwright install`` downloads a browser
build, which offline machines cannot.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Awaitable
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentgym.errors import EnvCrashedError, InfrastructureError

if TYPE_CHECKING:  # imported where used: the server pulls in Starlette
    from agentgym.envs.web.server import SiteServer

__all__ = [
    "LAUNCH_ARGS",
    "LINGER",
    "BrowserCrashedError",
    "BrowserPool",
    "BrowserUnavailableError",
    "acquire",
    "died",
    "find_chromium",
    "is_crash",
    "release",
    "shutdown",
]

T = TypeVar("T")

LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--mute-audio",
    # A wheel turn scrolls at once: smooth scrolling animates it, and what the next look
    # showed depended on how far the animation had got (a check of one seed saw two replays
    # of a scroll differ).
    "--disable-smooth-scrolling",
    # Nothing but the loopback resolves: a page cannot reach another host by name.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
)
"""Chromium flags that work headless, as root, offline (measured in ENVIRONMENT.md)."""

LINGER = float(os.environ.get("AGENTGYM_WEB_LINGER", "30"))
"""Seconds an unused pool stays up for the next env before closing. Longer than the leak
check's settling wait (``agentgym.checker.LEAK_SETTLE``, 5 s): with 5 s, a pool that closed
itself during that wait was relaunched by the next cycles, and the checker measured the
relaunch as a leak (seen once in a full run on a loaded machine)."""

IDLE_CONTEXTS = 4
"""How many cleared contexts the pool keeps for the next episodes (each holds a renderer, about
40 MB); more concurrent episodes than this get fresh contexts for the rest."""

RECYCLE_TIMEOUT_S = 5.0
"""How long clearing a context for reuse may take before it is closed instead."""

CALL_TIMEOUT = 60.0
"""The longest one browser operation may take before the pool calls the browser hung."""


class BrowserUnavailableError(InfrastructureError):
    """No Chromium to launch, or it would not start; the message says how to get one."""


class BrowserCrashedError(EnvCrashedError):
    """The browser, a page's renderer or the site server failed under an episode (not by the
    agent's action); that episode is errored, and retried by the evaluator."""


def find_chromium() -> str:
    """The Chromium executable: ``$AGENTGYM_CHROMIUM``, else ``chromium`` on PATH."""
    named = os.environ.get("AGENTGYM_CHROMIUM")
    if named:
        if not (Path(named).is_file() and os.access(named, os.X_OK)):
            raise BrowserUnavailableError(f"AGENTGYM_CHROMIUM={named!r} is not an executable file")
        return named
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    raise BrowserUnavailableError(
        "no Chromium found on PATH: install Debian's package (apt-get install chromium) or set "
        "AGENTGYM_CHROMIUM to a Chromium or Chrome executable. (`playwright install` is not "
        "needed and does not work offline.)"
    )


class BrowserPool:
    """One Playwright, one Chromium and one site server, driven from one event-loop thread."""

    def __init__(self, *, headless: bool = True) -> None:
        from agentgym.envs.web.sites import SITES, SiteState, load_sites

        self.headless = headless
        self.executable = find_chromium()
        self.state_dir = Path(tempfile.mkdtemp(prefix="agentgym-web-"))
        self._site_table = dict(SITES)
        self.sites = SiteState(self.state_dir, load_sites(self._site_table))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="agentgym-web-browser", daemon=True
        )
        self._thread.start()
        self._server: SiteServer | None = None
        self._server_lock = threading.Lock()
        self._browser: Any = None
        self._launching: asyncio.Lock | None = None
        self._idle: list[tuple[tuple[tuple[str, str], ...], Any, Any]] = []
        """Cleared contexts with their one tab, and the options they were made with."""
        self.closed = False
        """Whether :meth:`close` has finished: browser, server, thread and files are gone."""
        self._closing = False
        try:
            self._playwright = self.call(self._start_playwright())
        except BaseException:
            self._stop_loop()
            shutil.rmtree(self.state_dir, ignore_errors=True)
            raise

    @property
    def alive(self) -> bool:
        """Whether the pool takes work (it has not begun to close)."""
        return not self._closing

    # ------------------------------------------------------------------ running coroutines

    def call(self, coroutine: Awaitable[T], timeout: float = CALL_TIMEOUT) -> T:
        """Run ``coroutine`` on the pool's loop and wait for its result (from any thread)."""
        if self._closing:
            raise BrowserCrashedError("the browser pool was closed")
        future = asyncio.run_coroutine_threadsafe(_translated(coroutine), self._loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise BrowserCrashedError(
                f"a browser operation took more than {timeout:.0f} s; the browser is hung"
            ) from None

    # ------------------------------------------------------------------ browser and server

    @property
    def server(self) -> SiteServer:
        """The site server, started on first use and restarted if it died."""
        from agentgym.envs.web.server import SiteServer

        with self._server_lock:
            if self._server is None or not self._server.alive:
                if self._server is not None:
                    self._server.close()
                self._server = SiteServer(self.state_dir, self._site_table)
            return self._server

    async def new_context(self, **options: Any) -> Any:
        """A fresh browser context (launching or relaunching the browser if needed)."""
        browser = await self._live_browser()
        return await browser.new_context(**options)

    async def open_context(self, headers: dict[str, str], **options: Any) -> tuple[Any, Any]:
        """A clean context made with ``options`` that sends ``headers``, for an episode, and its
        tab if it is a recycled one (``None`` for a fresh context: the episode opens its tab).
        See the module docstring."""
        from playwright.async_api import Error as PlaywrightError

        key = _options_key(options)
        browser = await self._live_browser()
        for index in range(len(self._idle) - 1, -1, -1):
            if self._idle[index][0] != key:
                continue
            _, context, page = self._idle.pop(index)
            try:
                if context.browser is browser and not page.is_closed():
                    await context.set_extra_http_headers(headers)
                    await asyncio.wait_for(page.evaluate("1"), RECYCLE_TIMEOUT_S)  # it lives
                    return context, page
            except (TimeoutError, PlaywrightError):  # its renderer died while it was idle
                pass
            with contextlib.suppress(PlaywrightError):
                await context.close()
        return await self.new_context(extra_http_headers=headers, **options), None

    async def recycle(self, context: Any, page: Any, **options: Any) -> None:
        """Clear ``context`` (made with ``options``) and keep it with its tab ``page`` for a
        later episode; close it if it cannot be cleared, or if enough are kept already."""
        from playwright.async_api import Error as PlaywrightError

        server = self._server
        if len(self._idle) < IDLE_CONTEXTS and server is not None:
            try:
                await asyncio.wait_for(self._clear(context, page, server.origin), RECYCLE_TIMEOUT_S)
            except (TimeoutError, PlaywrightError):
                pass
            else:
                self._idle.append((_options_key(options), context, page))
                return
        with contextlib.suppress(PlaywrightError):
            await context.close()

    async def _clear(self, context: Any, page: Any, origin: str) -> None:
        """Leave ``context`` as a new one would be, but for its tab and HTTP cache (``origin``:
        the site server's, whose storage is cleared)."""
        for other in context.pages:
            if other is not page:
                await other.close()
        if page.url.startswith(origin):
            await page.evaluate("() => sessionStorage.clear()")  # per tab: survives navigation
        await page.goto("about:blank")  # the old page's timers and requests stop
        await context.set_extra_http_headers({})
        await context.clear_cookies()
        await context.clear_permissions()
        session = await context.new_cdp_session(page)
        try:
            await session.send(
                "Storage.clearDataForOrigin",
                {"origin": origin, "storageTypes": "all"},
            )
        finally:
            await session.detach()

    def browser_pids(self) -> list[int]:
        """The process ids of the browser's processes (for tests and fault injection)."""
        import psutil

        pids = []
        for child in psutil.Process().children(recursive=True):
            try:
                if "chrom" in child.name().lower() or "headless_shell" in child.name():
                    pids.append(child.pid)
            except psutil.NoSuchProcess:
                continue
        return pids

    def renderer_pids(self) -> list[int]:
        """The process ids of the browser's renderers, the processes that run the pages (for
        fault injection: killing one crashes its pages, not the browser)."""
        import psutil

        pids = []
        for pid in self.browser_pids():
            with contextlib.suppress(psutil.NoSuchProcess):
                if "--type=renderer" in psutil.Process(pid).cmdline():
                    pids.append(pid)
        return pids

    async def _start_playwright(self) -> Any:
        from playwright.async_api import async_playwright

        self._launching = asyncio.Lock()
        return await async_playwright().start()

    async def _live_browser(self) -> Any:
        assert self._launching is not None
        async with self._launching:
            if self._browser is None or not self._browser.is_connected():
                self._browser = await self._launch()
            return self._browser

    async def _launch(self) -> Any:
        from playwright.async_api import Error as PlaywrightError

        try:
            return await self._playwright.chromium.launch(
                executable_path=self.executable,
                headless=self.headless,
                args=list(LAUNCH_ARGS),
                timeout=30_000,
            )
        except PlaywrightError as error:
            raise BrowserUnavailableError(
                f"Chromium ({self.executable}) did not start: {str(error).strip()[:1500]}"
            ) from None

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Close the browser, Playwright, the server and the loop thread (idempotent)."""
        if self._closing:
            return
        self._closing = True  # from here on, call() refuses
        shutdown = asyncio.run_coroutine_threadsafe(_translated(self._shutdown()), self._loop)
        # A browser that is already gone closes as well as it can.
        with contextlib.suppress(InfrastructureError, FutureTimeout):
            shutdown.result(30)
        self._stop_loop()
        with self._server_lock:
            if self._server is not None:
                self._server.close()
                self._server = None
        shutil.rmtree(self.state_dir, ignore_errors=True)
        self.closed = True

    async def _shutdown(self) -> None:
        from playwright.async_api import Error as PlaywrightError

        self._idle = []  # closed with the browser
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError):
                await self._browser.close()
        await self._playwright.stop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()


def _options_key(options: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, repr(value)) for name, value in options.items()))


async def _translated(coroutine: Awaitable[T]) -> T:
    """Run ``coroutine``; any Playwright error that escapes it becomes ours.

    This is the web family's one boundary between Playwright's errors and ours. What reaches
    it is never the agent's mistake (the world turns those into feedback before), so it is
    the browser's failure: a dead browser or renderer, or a page that would not load.
    """
    from playwright.async_api import Error as PlaywrightError

    try:
        return await coroutine
    except PlaywrightError as error:
        if is_crash(error):
            raise died(error) from None
        raise BrowserCrashedError(
            f"a browser operation failed: {str(error).strip()[:500]}"
        ) from None


def died(error: BaseException) -> BrowserCrashedError:
    """The typed error for a Playwright error met because the browser or a renderer died."""
    return BrowserCrashedError(
        f"the browser or the page's renderer died: {str(error).strip()[:500]}"
    )


def is_crash(error: BaseException, context: Any = None) -> bool:
    """Whether a Playwright error means the browser or the page's renderer (not the agent's
    action) failed.

    The message is the first sign: the ``disconnected`` and ``crash`` events can arrive after
    the error of the operation that met the dead browser or renderer. ``context`` adds the
    connection's state. (The world adds what it knows of its own tabs: ``WebWorld._broke``.)
    """
    if any(sign in str(error) for sign in _CRASH_SIGNS):
        return True
    return context is not None and not context.browser.is_connected()


_CRASH_SIGNS = (
    "has been closed",  # "Target page, context or browser has been closed"
    "Target closed",
    "Connection closed",
    "Browser closed",
    "crashed",  # "Page crashed", "Target crashed": a renderer died
    "disconnected",
)


# ---------------------------------------------------------------------- the shared pool

_lock = threading.Lock()
_pool: BrowserPool | None = None
_users = 0
_generation = 0


def acquire() -> BrowserPool:
    """The process's shared pool (started if need be); pair every call with :func:`release`."""
    global _pool, _users, _generation
    with _lock:
        if _pool is None or not _pool.alive:
            _pool = BrowserPool()
        _users += 1
        _generation += 1
        return _pool


def release(pool: BrowserPool) -> None:
    """One user fewer; the last one leaves the pool to close after :data:`LINGER` seconds."""
    global _users
    with _lock:
        if pool is not _pool or not pool.alive:
            return
        _users -= 1
        if _users > 0:
            return
        if LINGER <= 0:
            _close_shared()
            return
        generation = _generation
    pool._loop.call_soon_threadsafe(
        lambda: pool._loop.call_later(LINGER, _close_if_idle, generation)
    )


def shutdown() -> None:
    """Close the shared pool now, whoever still uses it (their next call errors)."""
    with _lock:
        _close_shared()


def _close_if_idle(generation: int) -> None:
    # Runs on the pool's own loop: closing must happen on another thread, since it stops the loop.
    if _users or generation != _generation:
        return

    def close() -> None:
        with _lock:
            if _users == 0 and generation == _generation:
                _close_shared()

    threading.Thread(target=close, name="agentgym-web-closer", daemon=True).start()


def _close_shared() -> None:
    global _pool, _users
    pool, _pool, _users = _pool, None, 0
    if pool is not None:
        pool.close()


atexit.register(shutdown)
