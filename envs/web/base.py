"""The web family's contract: a world is a browser context, a task is a goal over sites.

* :class:`WebWorld` — one episode's browser context, its tabs, the page as the agent last saw
  it (:class:`~agentgym.envs.web.observe.PageSnapshot`), and what the agent declared
  (``answer``, ``infeasible``). It carries the agent's actions out
  (:mod:`~agentgym.envs.web.actions`) and waits for the page to settle on real signals — the
  load event and the requests in flight — never a fixed sleep.
* :class:`WebTask` — the four verbs of BrowserGym's task, in ours: ``setup`` names the sites
  and start page, ``validate`` judges (the episode's databases, the answer, the URL),
  ``solve`` is the oracle, which drives the real page through the same action language,
  ``teardown`` closes the context.
* :class:`WebEnv` — a :class:`~agentgym.task_env.TaskEnv` whose worlds live in the shared
  :class:`~agentgym.envs.web.browser.BrowserPool`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

import numpy as np

from agentgym.core import Task
from agentgym.envs.web import actions
from agentgym.envs.web.browser import (
    BrowserCrashedError,
    BrowserPool,
    acquire,
    died,
    is_crash,
    release,
)
from agentgym.envs.web.observe import PageSnapshot, draw_marks, take_snapshot
from agentgym.envs.web.sites import EPISODE_HEADER
from agentgym.errors import ResetNeeded, UsageError
from agentgym.spaces import Text
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = ["WebEnv", "WebTask", "WebWorld"]

WEB_CORE_READY = True

ELEMENT_TIMEOUT_MS = 3_000
"""How long an element action waits for its element to become actionable (visible, enabled,
not covered) before it is the agent's mistake."""

LOAD_TIMEOUT_MS = 10_000
"""How long a page may take to load before it is observed as it is."""

START_ATTEMPTS = 3
"""How many times a reset tries to load its start page (a load aborted or refused on a busy
machine, or a tab whose renderer died as it loaded) before the browser has failed."""

NEW_TAB_TIMEOUT_S = 5.0
"""How long opening a tab may take: it takes milliseconds, but a renderer killed as the tab
opens can leave Playwright's ``new_page`` waiting forever."""

ActionDoer = Callable[[str, dict[str, Any]], Awaitable[str]]
"""Carries one parsed action out in the page (``WebWorld._do``), returns its feedback."""

PROBE_TIMEOUT_S = 2.0
"""How long a page has to answer a trivial script when an error leaves open whether its
renderer died (see ``WebWorld._broke``)."""


class WebWorld:
    """One episode in the browser: a context, its tabs, and what the agent saw and declared.

    Attributes:
        url: the active page's full URL.
        path: its path and query (``/shop/item/3?size=M``): what URL evaluators compare.
        snapshot: the page as the agent last saw it.
        answer: the agent's ``answer(...)``, once given (it ends the episode).
        infeasible: the reason of the agent's ``report_infeasible(...)``, once given.
        history: the actions carried out so far, as text.
    """

    def __init__(self, sites: Mapping[str, int], start_path: str) -> None:
        self.sites = dict(sites)
        self.start_path = start_path
        self.episode = uuid.uuid4().hex[:16]
        self.url = ""
        self.path = start_path
        self.snapshot = PageSnapshot(nodes=())
        self.answer: str | None = None
        self.infeasible: str | None = None
        self.history: list[str] = []
        self.allowed_paths: tuple[str, ...] = (
            *(f"/{site}/" for site in self.sites),
            start_path,
        )
        self._pool: BrowserPool | None = None
        self._context: Any = None
        self._context_options: dict[str, Any] = {}
        self._pages: list[Any] = []
        self._active = 0
        self._inflight = 0
        self._idle: asyncio.Event | None = None
        self._crashed: set[Any] = set()  # the tabs whose renderer died (their "crash" event)

    # ------------------------------------------------------------------ for tasks

    def db(self, site: str) -> sqlite3.Connection:
        """A read-only connection to this episode's database of ``site`` (close it after use)."""
        return self._live_pool().sites.connect(self.episode, site)

    def evaluate(self, expression: str, argument: Any = None) -> Any:
        """Evaluate JavaScript in the active page (for tasks that read the page's own state)."""
        return self._live_pool().call(self.page.evaluate(expression, argument))

    @property
    def page(self) -> Any:
        """The active Playwright page (a pool-thread object: use it only through the pool)."""
        return self._pages[self._active]

    @property
    def origin(self) -> str:
        """The server's origin, ``http://127.0.0.1:PORT``."""
        return self._live_pool().server.origin

    # ------------------------------------------------------------------ lifecycle

    def open(self, pool: BrowserPool, viewport: tuple[int, int]) -> None:
        """Give the episode its databases and a fresh context at the start page (not yet
        looked at: the task may prepare the page first)."""
        self._pool = pool
        pool.sites.prepare(self.episode, self.sites)
        origin = pool.server.origin
        pool.call(self._open(origin, viewport))

    async def _open(self, origin: str, viewport: tuple[int, int]) -> None:
        assert self._pool is not None
        self._idle = asyncio.Event()
        self._idle.set()
        self._context_options = {
            "viewport": {"width": viewport[0], "height": viewport[1]},
            "locale": "en-US",
            "timezone_id": "UTC",
            "reduced_motion": "reduce",
        }
        self._context, tab = await self._pool.open_context(
            {EPISODE_HEADER: self.episode}, **self._context_options
        )
        for event, handler in self._context_handlers():
            self._context.on(event, handler)
        if tab is not None:  # a recycled context (see browser.py): its tab is ours
            self._page_opened(tab)
        await self._load_start_page(origin + self.start_path, recycled=tab is not None)

    def _context_handlers(self) -> tuple[tuple[str, Any], ...]:
        return (
            ("request", self._request_started),
            ("requestfinished", self._request_ended),
            ("requestfailed", self._request_ended),
            ("page", self._page_opened),  # popups and target=_blank links
        )

    async def _load_start_page(self, url: str, recycled: bool = False) -> None:
        """Load the start page in the episode's tab (a fresh one, or the ``recycled`` context's)
        and let it settle, trying again a bounded number of times.

        On a busy machine a load can be aborted or refused while the tab lives: it is tried
        again after a short backoff. A tab whose renderer died is not tried again in place:
        a fresh tab replaces it. A load that timed out, or a browser that is gone, is not
        tried again; after :data:`START_ATTEMPTS` the browser has failed.
        """
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        assert self._context is not None
        dead_tab = not recycled
        failure: Exception | None = None
        for attempt in range(START_ATTEMPTS):
            if attempt:
                await asyncio.sleep(0.1 * 2**attempt)
            try:
                if dead_tab:
                    await self._fresh_tab()
                    recycled = False
                await self.page.goto(url, timeout=LOAD_TIMEOUT_MS)
                # A renderer killed just after the load shows only as it settles (a loaded
                # machine saw "Target crashed" there): that too is a dead tab to replace.
                await self._settle()
                if recycled:  # forget the pages of the episodes before this one
                    session = await self._context.new_cdp_session(self.page)
                    await session.send("Page.resetNavigationHistory")
                    await session.detach()
                return
            except BrowserCrashedError as error:
                if not self._context.browser.is_connected():
                    raise
                dead_tab, failure = True, error
            except PlaywrightError as error:
                if isinstance(error, PlaywrightTimeout) or not self._context.browser.is_connected():
                    raise
                dead_tab, failure = await self._broke(error), error
        raise BrowserCrashedError(
            f"the start page {url} did not load in {START_ATTEMPTS} attempts: {failure}"
        )

    async def _fresh_tab(self) -> None:
        """Make a new tab the only one (a dead tab stays in the context until it closes)."""
        self._pages, self._active = [], 0
        page = await self._new_page()
        self._pages, self._active = [page], 0
        # Requests of a dead tab may never finish: they must not hold up the new one.
        self._inflight = 0
        assert self._idle is not None
        self._idle.set()

    async def _new_page(self) -> Any:
        """A new tab of the context; the "page" event adds it to the tabs."""
        try:
            return await asyncio.wait_for(self._context.new_page(), NEW_TAB_TIMEOUT_S)
        except TimeoutError:
            raise BrowserCrashedError(
                f"a new tab did not open in {NEW_TAB_TIMEOUT_S:g} s: its renderer died"
            ) from None

    def close(self) -> None:
        """Hand the context back to the pool (which clears it for another episode, or closes
        it) and delete the episode's databases (idempotent)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        context, self._context = self._context, None
        pages, self._pages = self._pages, []
        if context is not None and pool.alive:
            # A browser that is gone took the context with it.
            with contextlib.suppress(BrowserCrashedError):
                pool.call(self._hand_back(pool, context, pages), timeout=10)
        pool.sites.release(self.episode)

    async def _hand_back(self, pool: BrowserPool, context: Any, pages: list[Any]) -> None:
        """Stop listening to ``context`` and give it to the pool to recycle, or close it."""
        for event, handler in self._context_handlers():
            context.remove_listener(event, handler)
        for page in pages:
            page.remove_listener("crash", self._page_crashed)
        tabs = [page for page in pages if page not in self._crashed and not page.is_closed()]
        if tabs:
            await pool.recycle(context, tabs[0], **self._context_options)
        else:
            await context.close()

    def _live_pool(self) -> BrowserPool:
        if self._pool is None:
            raise ResetNeeded("this web episode is closed; call reset()")
        return self._pool

    # ------------------------------------------------------------------ acting

    def perform(self, name: str, arguments: Mapping[str, Any], do: ActionDoer | None = None) -> str:
        """Carry one parsed action out, wait for the page to settle, and look at it again.

        ``do`` carries it out instead of :meth:`_do` (another action language over the same
        world: the pixel view's, ``agentgym.envs.gui.pixel``)."""
        pool = self._live_pool()
        feedback = pool.call(self._perform(name, dict(arguments), do or self._do))
        if not pool.server.alive:
            raise BrowserCrashedError("the site server died during the step")
        return feedback

    async def _perform(self, name: str, args: dict[str, Any], do: ActionDoer) -> str:
        from playwright.async_api import Error as PlaywrightError

        try:
            feedback = await do(name, args)
        except PlaywrightError as error:
            if await self._broke(error):
                raise died(error) from None
            first = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            raise InvalidAction(f"{name} failed: {first}") from None
        await self._settle()
        feedback = await self._keep_on_sites() or feedback
        self.snapshot = await self._look()
        return feedback

    async def _do(self, name: str, args: dict[str, Any]) -> str:
        page = self.page
        if "id" in args:
            node = self.snapshot.get(args["id"])
            if node is None:
                raise InvalidAction(
                    f"there is no element [{args['id']}] on the page; use an id in [brackets] "
                    f"from the latest observation"
                )
            target = self._locate(args["id"])
            described = f"[{node.id}] {node.role} {node.name!r}"
            timeout = ELEMENT_TIMEOUT_MS
            if name == "click":
                await target.click(timeout=timeout)
            elif name == "dblclick":
                await target.dblclick(timeout=timeout)
            elif name == "hover":
                await target.hover(timeout=timeout)
            elif name == "fill":
                await target.fill(args["text"], timeout=timeout)
            elif name == "check":
                await target.check(timeout=timeout)
            elif name == "uncheck":
                await target.uncheck(timeout=timeout)
            elif name == "select":
                await self._select(target, node, args["option"])
            return f"{name} {described}: done."
        if name == "press":
            await page.keyboard.press(args["key"])
        elif name == "type":
            await page.keyboard.type(args["text"])
        elif name == "scroll":
            dx, dy = _SCROLL.get(args["direction"], (None, None))
            if dx is None:
                raise InvalidAction("scroll direction must be 'up', 'down', 'left' or 'right'")
            before = await self._wait_in_page(SCROLL_POSITIONS_JS)
            await page.mouse.wheel(dx * args["pixels"], dy * args["pixels"])
            # The wheel scrolls after the event is handled, frames later: wait until the
            # page has moved and its scroll positions stand still, so the next look (and
            # the next click) finds the page where the scroll stopped.
            await self._wait_in_page(SCROLL_SETTLE_JS, before)
        elif name == "mouse_click":
            # The pointer arrives, the page reacts to the hover (styles, an image it swaps
            # in and loads), then the button goes down and up. Pressed at once, a hover that
            # resized the target between the press and the release sent the click to its
            # parent (social-media's "more" icon, on a context's first episode).
            await page.mouse.move(args["x"], args["y"])
            await self._wait_in_page(FRAMES_JS)
            await self._settle()
            await self._wait_in_page(FRAMES_JS)
            await page.mouse.down()
            await page.mouse.up()
        elif name == "goto":
            await page.goto(self._on_sites(args["url"]), timeout=LOAD_TIMEOUT_MS)
        elif name == "go_back":
            await page.go_back(timeout=LOAD_TIMEOUT_MS)
        elif name == "go_forward":
            await page.go_forward(timeout=LOAD_TIMEOUT_MS)
        elif name == "new_tab":
            url = self._on_sites(args["url"]) if args["url"] else None
            page = await self._new_page()
            self._active = self._pages.index(page)
            if url:
                await page.goto(url, timeout=LOAD_TIMEOUT_MS)
        elif name == "tab_focus":
            if not 0 <= args["index"] < len(self._pages):
                raise InvalidAction(
                    f"there is no tab {args['index']}; tabs are numbered 0 to "
                    f"{len(self._pages) - 1}"
                )
            self._active = args["index"]
            await self.page.bring_to_front()
        elif name == "tab_close":
            if len(self._pages) == 1:
                raise InvalidAction("this is the only tab; it cannot be closed")
            closing = self._pages.pop(self._active)
            self._active = max(0, self._active - 1)
            await closing.close()
        elif name == "answer":
            self.answer = args["text"]
            return "Answer recorded."
        elif name == "report_infeasible":
            self.infeasible = args["reason"] or "(no reason given)"
            return "Reported the task as infeasible."
        return f"{name}: done."

    async def _select(self, target: Any, node: Any, option: str) -> None:
        from playwright.async_api import Error as PlaywrightError

        try:
            await target.select_option(label=option, timeout=ELEMENT_TIMEOUT_MS)
        except PlaywrightError as by_label:
            if await self._broke(by_label):
                raise
            try:
                await target.select_option(value=option, timeout=ELEMENT_TIMEOUT_MS)
            except PlaywrightError as by_value:
                if await self._broke(by_value):
                    raise
                kids = [n.name for n in self.snapshot.nodes if n.parent == node.id]
                raise InvalidAction(
                    f"[{node.id}] has no option {option!r}"
                    + (f"; its options are {kids}" if kids else "; is it a drop-down list?")
                ) from None

    def _locate(self, node_id: str) -> Any:
        *frames, last = node_id.split(".")
        scope: Any = self.page
        for frame in frames:
            scope = scope.frame_locator(f'[data-agid="{frame}"]')
        return scope.locator(f'[data-agid="{last}"]')

    def _on_sites(self, url: str) -> str:
        """The full URL of ``url`` (a path, or a URL of the server) if it is on the task's sites."""
        assert self._pool is not None
        origin = self._pool.server.origin
        parts = urlsplit(url)
        if (parts.scheme or parts.netloc) and f"{parts.scheme}://{parts.netloc}" not in (
            origin,
            origin.replace("127.0.0.1", "localhost"),
        ):
            raise InvalidAction(
                f"goto is limited to the task's sites; {url!r} is elsewhere. Use a path "
                f"such as {self.allowed_paths[0]!r}"
            )
        path = parts.path or "/"
        if not path.startswith(self.allowed_paths):
            raise InvalidAction(
                f"goto is limited to the task's sites ({', '.join(self.allowed_paths)}); "
                f"{url!r} is not on them"
            )
        return origin + path + (f"?{parts.query}" if parts.query else "")

    async def _keep_on_sites(self) -> str | None:
        """Bring a tab that left the task's sites back (a link cannot take the agent away)."""
        page = self.page
        parts = urlsplit(page.url)
        assert self._pool is not None
        here = f"{parts.scheme}://{parts.netloc}"
        if page.url == "about:blank" or (
            here == self._pool.server.origin and parts.path.startswith(self.allowed_paths)
        ):
            return None
        await page.go_back(timeout=LOAD_TIMEOUT_MS)
        await self._settle()
        return f"Navigation to {page.url!r} was blocked: it is outside the task's sites."

    # ------------------------------------------------------------------ observing

    def _page_opened(self, page: Any) -> None:
        self._pages.append(page)
        page.on("crash", self._page_crashed)

    def _page_crashed(self, page: Any) -> None:
        self._crashed.add(page)

    def _tab_gone(self) -> bool:
        """Whether the active tab's renderer died (its "crash" event) or the tab closed."""
        return not self._pages or self.page in self._crashed or self.page.is_closed()

    async def _broke(self, error: BaseException) -> bool:
        """Whether ``error`` is the browser's failure rather than the agent's mistake.

        A crash sign in the message, a disconnected browser, or an active tab whose renderer
        died or that closed. A killed renderer can first show as an aborted navigation or a
        detached frame, its "crash" event a moment behind (an iframe that detaches is the page's
        own doing): then the page is asked for a trivial script, which a dead one cannot run.
        """
        from playwright.async_api import Error as PlaywrightError

        if self._context is None or is_crash(error, self._context) or self._tab_gone():
            return True
        message = str(error).lower()
        if not any(sign in message for sign in ("frame was detached", "net::err_aborted")):
            return False
        try:
            await asyncio.wait_for(self.page.evaluate("1"), PROBE_TIMEOUT_S)
        except TimeoutError:
            return True
        except PlaywrightError as probe:
            return is_crash(probe, self._context) or self._tab_gone()
        return self._tab_gone()

    def _request_started(self, request: Any) -> None:
        assert self._idle is not None
        self._inflight += 1
        self._idle.clear()

    def _request_ended(self, request: Any) -> None:
        assert self._idle is not None
        self._inflight = max(0, self._inflight - 1)
        if self._inflight == 0:
            self._idle.set()

    async def _wait_in_page(self, script: str, argument: Any = None) -> Any:
        """Run a waiting script in the page; a page that navigated meanwhile ends the wait
        (None), a page that died raises."""
        from playwright.async_api import Error as PlaywrightError

        try:
            return await self.page.evaluate(script, argument)
        except PlaywrightError as error:
            if await self._broke(error):
                raise died(error) from None
            return None

    async def _settle(self) -> None:
        """Wait for the real signals of a settled page: loaded, and no request in flight."""
        from playwright.async_api import Error as PlaywrightError

        page = self.page
        try:
            await page.wait_for_load_state("load", timeout=LOAD_TIMEOUT_MS)
            assert self._idle is not None
            await asyncio.wait_for(self._idle.wait(), LOAD_TIMEOUT_MS / 1000)
            # One task turn of the page's own event loop: handlers queued by the action run.
            await page.evaluate("() => new Promise(resolve => setTimeout(resolve, 0))")
        except (TimeoutError, PlaywrightError) as error:
            if await self._broke(error):
                raise died(error) from None
            # A page still loading after the limit, or one that navigated as we waited:
            # it is observed as it is.

    async def _look(self) -> PageSnapshot:
        page = self.page
        snapshot = await take_snapshot(page)
        self.url = page.url
        parts = urlsplit(page.url)
        self.path = parts.path + (f"?{parts.query}" if parts.query else "")
        return snapshot

    def screenshot(self, marks: bool = False) -> bytes:
        """A PNG of the active tab's viewport (with set-of-marks if ``marks``)."""
        png = self._live_pool().call(
            self.page.screenshot(animations="disabled", caret="hide", timeout=LOAD_TIMEOUT_MS)
        )
        return draw_marks(png, self.snapshot) if marks else png

    def header(self) -> str:
        """The lines above the page: tabs, title, URL path, scroll position."""
        lines = []
        if len(self._pages) > 1:
            tabs = ", ".join(
                f"[{i}]{' (active)' if i == self._active else ''}" for i in range(len(self._pages))
            )
            lines.append(f"Tabs: {tabs}")
        lines.append(f"Page: {self.snapshot.title!r} at {self.path}")
        return "\n".join(lines)


INFEASIBLE_HINT = "If the site cannot do what the task asks, say so with report_infeasible."
"""The last line of every web task's instructions (the env's, not the task's): feasible and
infeasible tasks read the same, so the wording gives nothing away."""

_SCROLL = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}

FRAMES_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
"""Resolves after the page has drawn two frames (style and layout caught up)."""

SCROLL_POSITIONS_JS = """() => JSON.stringify([window.scrollX, window.scrollY, ...[...document.all]
  .filter((e) => e.scrollTop || e.scrollLeft).map((e) => [e.scrollTop, e.scrollLeft])])"""
"""The scroll positions of a page and of its scrolled elements, as one string."""

SCROLL_SETTLE_JS = (
    """(before) => new Promise((done) => {
  const positions = POSITIONS;
  let last = before, still = 0, frames = 0, moved = false;
  const look = () => {
    const now = positions();
    moved = moved || now !== before;
    still = now === last ? still + 1 : 0;
    last = now;
    // moved and still for 3 frames; or never moved in 20 (the wheel had nowhere to go)
    if ((moved && still >= 3) || (!moved && still >= 20) || ++frames > 120) done();
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})"""
).replace("POSITIONS", SCROLL_POSITIONS_JS)
"""After a wheel turn (given the positions from before it): resolves once the page has
scrolled and its positions have stood still for three frames, or after twenty frames
without a move (a wheel at the end of a list scrolls nothing), two seconds at most."""


class WebTask(Task[WebWorld]):
    """A goal over sites; subclasses set :attr:`sites` and :attr:`start_path` and write
    :meth:`goal`, :meth:`validate` and :meth:`solve` (see the module docstring)."""

    sites: Mapping[str, int] = {}
    """The sites whose databases the episode gets, with the seed of each one's data."""
    start_path: str = "/"
    """Where the browser opens."""

    def goal(self) -> str:
        """The instruction the agent is given."""
        raise NotImplementedError

    def prepare(self, world: WebWorld) -> None:
        """After the start page has loaded, before the agent's first look (MiniWoB seeds its
        page here). Most tasks need nothing."""

    def setup(self, rng: np.random.Generator) -> tuple[WebWorld, str]:
        return WebWorld(self.sites, self.start_path), self.goal()

    def teardown(self, world: WebWorld) -> None:
        world.close()


class WebEnv(TaskEnv[WebWorld]):
    """Base class of the web envs: text (or text and screenshot) in, one action out.

    Args:
        observation_mode: ``"text"`` (the observation is the page's accessibility-tree text)
            or ``"multimodal"`` (a dict of that text and a ``screenshot`` array).
        set_of_marks: draw each element's box and id on the screenshot.
        viewport: ``(width, height)`` of the browser window, in CSS pixels.
        **kwargs: :class:`~agentgym.task_env.TaskEnv`'s (split, difficulty, ...).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 4,
        "supports_state_snapshot": False,
        "multimodal": True,
        "needs_sandbox": False,
        "needs_browser": True,
        "action_style": "raw",
    }
    max_observation_length = 24_000
    max_invalid_default = 20
    tools = actions.TOOLS
    action_names: ClassVar[tuple[str, ...] | None] = None
    """The actions this env offers (``None``: all of :data:`~.actions.ACTIONS`)."""

    def __init__(
        self,
        *,
        observation_mode: Literal["text", "multimodal"] = "text",
        set_of_marks: bool = False,
        viewport: tuple[int, int] = (1024, 768),
        **kwargs: Any,
    ) -> None:
        if observation_mode not in ("text", "multimodal"):
            raise UsageError(
                f"observation_mode must be 'text' or 'multimodal', got {observation_mode!r}"
            )
        if not (
            isinstance(viewport, (tuple, list))
            and len(viewport) == 2
            and all(isinstance(v, int) and 100 <= v <= 4096 for v in viewport)
        ):
            raise UsageError(f"viewport must be (width, height) in 100..4096, got {viewport!r}")
        if self.action_names is not None:
            self.tools = [t for t in actions.TOOLS if t["name"] in self.action_names]
        super().__init__(**kwargs)
        self.observation_mode = observation_mode
        self.set_of_marks = set_of_marks
        self.viewport = (int(viewport[0]), int(viewport[1]))
        if observation_mode == "multimodal":
            from gymnasium import spaces

            # A dict observation, where TaskEnv (an Env[str, str]) types every observation as
            # text: the core has no type for a multimodal observation yet.
            self.observation_space = spaces.Dict(  # type: ignore[assignment]
                {
                    "text": Text(self.max_observation_length),
                    "screenshot": spaces.Box(
                        0, 255, (self.viewport[1], self.viewport[0], 3), np.uint8
                    ),
                }
            )
        self._pool: BrowserPool | None = None

    # ------------------------------------------------------------------ TaskEnv hooks

    def start(self, task: Task[WebWorld]) -> tuple[WebWorld, str]:
        if not isinstance(task, WebTask):
            raise UsageError(f"a web env runs WebTasks, got {type(task).__name__}")
        world, goal = task.setup(self.np_random)
        if self._pool is None or not self._pool.alive:
            self._pool = acquire()
        try:
            world.open(self._pool, self.viewport)
            task.prepare(world)
            world.snapshot = self._pool.call(world._look())
        except BaseException:
            world.close()
            raise
        return world, goal

    def act(self, world: WebWorld, action: str) -> str:
        name, arguments = actions.parse(action, self.action_names)
        feedback = world.perform(name, arguments)
        world.history.append(actions.format_action(name, *arguments.values()))
        return feedback

    def observe(self, world: WebWorld) -> str:
        return f"{world.header()}\n\n{world.snapshot.text or '(the page shows nothing)'}"

    def state_key(self, world: WebWorld) -> str:
        digest = hashlib.blake2b(world.snapshot.text.encode(), digest_size=8).hexdigest()
        return f"{world.path}#{digest}"

    def is_over(self, world: WebWorld) -> bool:
        return world.answer is not None or world.infeasible is not None

    def action_syntax(self) -> str:
        syntax = (
            "Act with one call per turn, using the ids in [brackets] from the page:\n"
            + actions.describe_actions(self.action_names)
            + '\nExample: click("12"). Arguments are literals: strings in quotes, numbers.'
        )
        if self.action_names is None or "report_infeasible" in self.action_names:
            # Said to every task alike: were it said only where the task cannot be done, the
            # sentence itself would be the answer.
            syntax += f"\n{INFEASIBLE_HINT}"
        return syntax

    # ------------------------------------------------------------------ Gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observation, info = super().reset(seed=seed, options=options)
        return self._observation_of(observation), info

    def step(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = super().step(action)
        return self._observation_of(observation), reward, terminated, truncated, info

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            return self._screenshot_array(marks=self.set_of_marks)
        return super().render()

    def close(self) -> None:
        super().close()
        pool, self._pool = self._pool, None
        if pool is not None:
            release(pool)

    def _observation_of(self, text: str) -> Any:
        if self.observation_mode == "text":
            return text
        return {"text": text, "screenshot": self._screenshot_array(marks=self.set_of_marks)}

    def _screenshot_array(self, marks: bool) -> np.ndarray:
        import io

        from PIL import Image

        if self._world is None:
            raise ResetNeeded(f"{self._name()}: call reset() before render()")
        png = self._world.screenshot(marks=marks)
        image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.uint8)
        return _fit(image, self.viewport)


def _fit(image: np.ndarray, viewport: tuple[int, int]) -> np.ndarray:
    """The screenshot at exactly the viewport's size (device scale can differ by a pixel)."""
    height, width = viewport[1], viewport[0]
    out = np.full((height, width, 3), 255, np.uint8)
    h, w = min(height, image.shape[0]), min(width, image.shape[1])
    out[:h, :w] = image[:h, :w]
    return out
