"""MiniWoB++ through our browser layer: the ``miniwob`` wheel's task pages, seeded and scored
by the page's own reward, with scripted oracles for all but seven of them.

The wheel is used for its files only (its ``__init__`` registers Selenium envs): the site
server serves its ``html`` folder at ``/miniwob/``, so a task page is
``/miniwob/miniwob/click-test.html``. After the page has loaded, :meth:`MiniWoBTask.prepare`
does what BrowserGym's ``miniwob/base.py`` does, in our own words: hide the human display,
lift the episode clock, seed ``Math.random`` and start the episode (see :data:`SETUP_JS`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.web.actions import format_action
from agentgym.envs.web.base import WebEnv, WebTask, WebWorld
from agentgym.envs.web.browser import BrowserCrashedError, died
from agentgym.envs.web.miniwob_ids import EXCLUDED, PAGES, TASKS, register_all
from agentgym.envs.web.observe import Node
from agentgym.envs.web.server import miniwob_html
from agentgym.errors import MissingExtraError, UsageError

__all__ = [
    "EXCLUDED",
    "ORACLES",
    "PAGES",
    "TASKS",
    "MiniWoBEnv",
    "MiniWoBTask",
    "MiniWoBWorld",
    "register_all",
]

FULL_REWARD = 1.0 - 1e-9
"""The raw reward a page pays a success in full: the only one that scores (and passes)."""

EPISODE_MAX_MS = 1_000_000_000
"""The page's episode clock, raised from MiniWoB's 10-30 s to about 11 days: an LLM agent
thinks for seconds per step, and the page must not time it out (BrowserGym raises it too).
It stays below 2**31 ms, past which ``setTimeout`` fires at once."""

CLOCK_START_MS = 1_500_000_000_000
"""The instant the page's clock starts from (2017-07-14 02:40 UTC, MiniWoB++'s era)."""

SETUP_JS = """(seed) => {
  // The human display (last reward, time left, episodes done), the click tracker and the
  // START cover are for people: hidden, they neither leak the reward nor tick in the text.
  const style = document.createElement('style');
  style.textContent = '#reward-display, #click-canvas, #sync-task-cover, #attention-canvas '
    + '{ display: none !important; }';
  document.head.appendChild(style);
  core.countdownTimer = function () {};
  core.EPISODE_MAX_TIME = EPISODE_MAX_MS;
  // The page's clock starts at a fixed instant and runs at the real rate: pages that show
  // "today" (the terminal's last login, a date picker's month) show the same day on every
  // run, while pages that time the agent (ascending-numbers) still measure real durations.
  const RealDate = Date;
  const shift = CLOCK_START_MS - RealDate.now();
  window.Date = class extends RealDate {
    constructor(...args) { super(...(args.length ? args : [RealDate.now() + shift])); }
    static now() { return RealDate.now() + shift; }
  };
  // jQuery animations end at once, so the page observed after an action is settled, not a
  // frame of a slide that depends on how fast the machine is.
  if (window.jQuery) window.jQuery.fx.off = true;
  Math.seedrandom(seed);
  core.startEpisodeReal();
  return new Promise((resolve) => {
    // Pages worded in natural language return {utterance, fields}: the fields are the
    // parse of the sentence (the task, the sender, the message), for scoring, not for the
    // agent, who gets the sentence alone (as MiniWoB's and BrowserGym's agents do).
    const said = () => {
      const u = core.getUtterance();
      return typeof u === 'string' ? u : u.utterance;
    };
    const ready = () => (WOB_TASK_READY ? resolve(said()) : setTimeout(ready, 10));
    ready();
  });
}""".replace("EPISODE_MAX_MS", str(EPISODE_MAX_MS)).replace("CLOCK_START_MS", str(CLOCK_START_MS))

SETTLE_JS: dict[str, str] = {
    # The terminal focuses its hidden input 200 ms after the episode starts and blinks its
    # caret every 800 ms: whether the first keys typed reached the terminal, and whether the
    # caret was in the text, depended on how fast the agent acted (a CI run saw two runs of
    # one seed differ). The first observation waits for the focus; the caret stays shown.
    "terminal": """() => {
      clearInterval(flicker);
      $('#input-flicker').removeClass('hide');
      return new Promise((resolve) => setTimeout(resolve, 250));
    }""",
}
"""Per page, what runs after the episode starts so that the first observation is of a page
whose own start-up timers have fired (the page's name → a function for ``evaluate``)."""

REWARD_JS = """() => (typeof WOB_DONE_GLOBAL === 'undefined') ? null
  : [WOB_RAW_REWARD_GLOBAL, WOB_DONE_GLOBAL, String(WOB_REWARD_REASON || '')]"""


class MiniWoBWorld(WebWorld):
    """A web world that also holds the task's instruction as the page generated it."""

    utterance: str = ""

    def page_reward(self) -> tuple[float, bool, str]:
        """``(raw reward, done, reason)`` from the page's globals (``(0, False, "")`` before
        the page has an episode, or after it left the task page)."""
        found = self._live_pool().call(self._read_reward())
        if found is None:
            return 0.0, False, ""
        raw, done, reason = found
        return float(raw), bool(done), reason

    async def _read_reward(self) -> Any:
        from playwright.async_api import Error as PlaywrightError

        try:
            return await self.page.evaluate(REWARD_JS)
        except PlaywrightError as error:
            if await self._broke(error):
                raise died(error) from None
            return None  # the page is navigating: it has not ended the episode


Oracle = Callable[["MiniWoBTask", MiniWoBWorld], "str | None"]

ORACLES: dict[str, Oracle] = {}
"""Task name -> its oracle: the next action, decided from the current page."""


def oracle(*names: str) -> Callable[[Oracle], Oracle]:
    """Register a function as the oracle of the named tasks."""

    def add(function: Oracle) -> Oracle:
        for name in names:
            ORACLES[name] = function
        return function

    return add


class MiniWoBTask(WebTask):
    """One seeded episode of a MiniWoB++ task page; the seed of the task id seeds the page
    (no site database: :attr:`sites` stays empty)."""

    def __init__(self, id: str, split: str, difficulty: str, seed: int, *, name: str) -> None:
        super().__init__(id, split, difficulty, seed)
        self.name = name
        self.start_path = f"/miniwob/miniwob/{name}.html"

    def setup(self, rng: np.random.Generator) -> tuple[WebWorld, str]:
        return MiniWoBWorld(self.sites, self.start_path), self.goal()

    def goal(self) -> str:
        # The instruction is generated by the page; this stands in until it is read (the env
        # gives the agent the page's own utterance, see MiniWoBEnv.start).
        return f"Do the MiniWoB++ task {self.name!r} shown on the page."

    def prepare(self, world: WebWorld) -> None:
        assert isinstance(world, MiniWoBWorld)
        try:
            world.utterance = str(world.evaluate(SETUP_JS, str(self.seed)))
            if self.name in SETTLE_JS:
                world.evaluate(SETTLE_JS[self.name])
        except BrowserCrashedError as error:
            raise BrowserCrashedError(
                f"the MiniWoB page {self.start_path} did not start an episode: {error}"
            ) from None

    def validate(self, world: WebWorld) -> Verdict:
        assert isinstance(world, MiniWoBWorld)
        raw, done, reason = world.page_reward()
        passed = done and raw >= FULL_REWARD
        score = 1.0 if passed else 0.0
        if not done:
            details = "the page has not ended the episode"
        else:
            details = f"the page ended the episode with raw reward {raw:g}" + (
                f" ({reason})" if reason else ""
            )
        return Verdict(
            score,
            passed=passed,
            components={"raw_reward": raw, "done": float(done)},
            details=details,
        )

    def solve(self, world: WebWorld) -> str | None:
        assert isinstance(world, MiniWoBWorld)
        function = ORACLES.get(self.name)
        if function is None:
            raise UsageError(
                f"MiniWoB task {self.name!r} has no oracle (its env's metadata['oracle'] is "
                f"False); tasks with one: {sorted(ORACLES)}"
            )
        if world.page_reward()[1]:
            return None
        return function(self, world)


class MiniWoBEnv(WebEnv):
    """MiniWoB++ (``miniwob/<task>-v0``): the wheel's small web tasks in a real Chromium, scored
    by the page's own reward.

    **Tasks.** One env per task page (``task="click-test"`` names ``click-test.html``); its
    ids are ``train|dev|test/default/N`` of a :class:`~agentgym.core.GeneratedTaskSet`, and the
    seed of an id seeds the page (``Math.seedrandom``), so an id always names the same episode:
    the same instruction, the same page, the same observation text.

    **What the agent sees.** The goal is the page's own instruction (its "utterance", e.g.
    ``Click on the "ok" button.``). The observation is the page's accessibility-tree text, in
    which every element has an id in [brackets]; the yellow instruction box is part of the
    page and shows too. With ``observation_mode="multimodal"`` it is a dict of that text and a
    ``screenshot`` (uint8, 210 x 160 x 3: the viewport is MiniWoB's 160 x 210 task area; pass
    ``viewport=`` for another size). MiniWoB's human display (last reward, time left, episodes
    done, the click tracker and the START cover) is hidden: it would leak the reward and tick.

    **What it may do.** ``click``, ``dblclick``, ``hover``, ``fill``, ``select``, ``check``,
    ``uncheck``, ``press``, ``type``, ``scroll``, ``mouse_click(x, y)`` (CSS pixels of the
    viewport: the pixel agent's action, and the way to reach SVG shapes, which have no line in
    the text) and ``noop`` (look again). A wrong action is feedback, never a crash.

    **Time.** MiniWoB ends an episode after 10-30 s; an LLM agent is slower, so the page's
    episode clock is raised to about 11 days (:data:`EPISODE_MAX_MS`). The page's ``Date``
    starts at a fixed instant (:data:`CLOCK_START_MS`) and runs at the real rate, so "today"
    on a page is the same day on every run. jQuery animations are switched off, so the page
    observed after an action is settled, not a frame of a slide. A page whose start-up runs
    its own timers (the terminal focuses its input after 200 ms and blinks its caret) is
    settled before the first observation (:data:`SETTLE_JS`), so what the agent's first keys
    do does not depend on how fast it acts.

    **Scoring.** The page's raw reward ``r`` (in [-1, 1], without MiniWoB's time discount) is
    read from its globals after every step. While the page has not ended the episode the score
    is 0; once it has, the episode terminates and the score is 1 when the page paid its full
    reward (``r >= 1``), else 0; ``passed`` is the same. This departs from MiniWoB++ and
    BrowserGym, whose reward is ``r`` and whose success is ``r > 0``: pages that pay partial
    credit pay it to answers that never read the task (``use-colorwheel`` pays about 0.5 for
    any colour, ``click-checkboxes-large`` counts 9 of 10 boxes right as a success), which the
    conformance checker's task-blind policies found. The verdict's components carry
    ``raw_reward`` (``r``) and ``done``.

    **Oracle.** Scripted solvers for every registered task (101), which read the instruction,
    the page and (where the page keeps the answer to itself) its JavaScript state, and act
    only through the action language; each reaches score 1 on every split. Tasks with an
    oracle:

    ascending-numbers, book-flight, book-flight-nodelay, buy-ticket, choose-date,
    choose-date-easy, choose-date-medium, choose-date-nodelay, choose-list, click-button,
    click-button-sequence, click-checkboxes, click-checkboxes-large, click-checkboxes-soft,
    click-checkboxes-transfer, click-collapsible, click-collapsible-2,
    click-collapsible-2-nodelay, click-collapsible-nodelay, click-color, click-dialog,
    click-dialog-2, click-link, click-menu, click-menu-2, click-option, click-scroll-list,
    click-shades, click-shape, click-tab, click-tab-2, click-tab-2-easy, click-tab-2-hard,
    click-tab-2-medium, click-test, click-test-2, click-test-transfer, click-widget, copy-paste,
    copy-paste-2, count-shape, count-sides, email-inbox, email-inbox-delete,
    email-inbox-forward, email-inbox-forward-nl, email-inbox-forward-nl-turk,
    email-inbox-important, email-inbox-nl-turk, email-inbox-noscroll, email-inbox-reply,
    email-inbox-star-reply, enter-date, enter-password, enter-text, enter-text-2,
    enter-text-dynamic, enter-time, find-greatest, find-word, focus-text, focus-text-2,
    form-sequence, form-sequence-2, form-sequence-3, generate-number, grid-coordinate,
    guess-number, identify-shape, login-user, login-user-popup, multi-layouts, multi-orderings,
    navigate-tree, number-checkboxes, odd-or-even, order-food, phone-book, read-table,
    read-table-2, scroll-text, scroll-text-2, search-engine, sign-agreement, simple-algebra,
    simple-arithmetic, social-media, social-media-all, social-media-some, terminal, text-editor,
    text-transform, unicode-test, use-autocomplete, use-autocomplete-nodelay, use-colorwheel,
    use-colorwheel-2, use-slider, use-slider-2, use-spinner, visual-addition.

    **Not registered for want of an oracle** (7; no script reaches score 1 on every seed):

    * bisect-angle, circle-center, find-midpoint, right-angle: scored continuously by how
      far a click is from a point (or angle) the page computes in fractions of a pixel,
      while a click lands on a whole pixel (the page reads ``pageX``/``pageY``). For any
      agent, 1 is out of reach on every seed of circle-center (the best is about 0.98) and
      on about three seeds in four of find-midpoint; bisect-angle and right-angle score an
      angle the same way (not measured seed by seed). A close click passes.
    * click-pie, click-pie-nodelay: the wheel's first item starts selected, and wheelnav
      ignores clicks on the selected item; when the page asks for it (one seed in four to
      eight), no action scores.
    * tic-tac-toe: the opponent starts half the games and, on 45% of its moves, takes a
      win or blocks one, so a win cannot be forced; a draw or a loss scores 0. An oracle
      would have to search the page's seeded draws (not tried).

    **Not registered for other reasons** (all 130 pages load and generate seeded episodes
    headless and offline; these cannot be played through the action language, or not
    reproducibly; the reasons are in :data:`EXCLUDED`):

    * button-delay: scores how closely the wait between two clicks matches a delay in
      seconds; a step-wise agent cannot time its actions.
    * chase-circle, hover-shape, moving-items: real time: the page moves and scores on its
      own clock while the agent thinks, so the outcome depends on how fast the agent acts
      and an episode is not reproducible.
    * daily-calendar, drag-box, drag-circle, drag-cube, drag-items, drag-items-grid,
      drag-shapes, drag-shapes-2, drag-single-shape, drag-sort-numbers, draw-circle,
      draw-line, resize-textarea: needs a mouse drag (press, move, release); the action
      language has no drag.
    * highlight-text, highlight-text-2: needs a text selection made by dragging the mouse;
      the action language has no drag.
    * hot-cold: needs free mouse movement to read the hot/cold feedback; the action language
      moves the mouse only to click a point or to hover an element.
    * simon-says: shows the sequence to repeat as timed flashes, so what the agent sees
      depends on when it looks.
    * stock-market: the price moves every 100 ms of the page's own timer, so what the agent
      sees depends on when it looks and an episode is not reproducible.

    **Versions.** v0: first version (miniwob 1.1.0's pages). Within v0: oracles for 51 more
    pages (none of which changes what the agent sees or how it is scored); a scroll step now
    returns once the page has stopped scrolling, and a ``mouse_click`` lets the page react
    to the pointer before pressing, so neither depends on timing; the seven pages without
    an oracle are no longer registered. v1 of the pages worded in natural language
    (``email_inbox_nl_turk-v1``, ``email_inbox_forward_nl-v1``, ``-nl_turk-v1``, 2026-11):
    the instruction is their sentence, where it was the text of a dict that also held its
    parse (the task, the sender, the message).
    """

    action_names = (
        "click",
        "dblclick",
        "hover",
        "fill",
        "select",
        "check",
        "uncheck",
        "press",
        "type",
        "scroll",
        "mouse_click",
        "noop",
    )
    max_invalid_default = 10
    pages: ClassVar[tuple[str, ...]] = TASKS
    """The pages this env plays (a subclass may play others: the gui family's drag pages)."""
    # ``task`` only chooses the page: one page's conformance run proves the class's own code.
    # "replay": "verdict": the pages run their own timers and animations, so a replay of the
    # same actions can see other observations (agentgym.leaderboard.rescore).
    metadata: dict[str, Any] = {
        **WebEnv.metadata,
        "task_kwargs": ("task",),
        "replay": "verdict",
    }

    def __init__(
        self, *, task: str = "click-test", viewport: tuple[int, int] = (160, 210), **kwargs: Any
    ) -> None:
        if task not in self.pages:
            near = [t for t in self.pages if t.split("-")[0] == str(task).split("-")[0]]
            raise UsageError(
                f"unknown MiniWoB task {task!r}"
                + (f"; similar: {near}" if near else f"; tasks: {sorted(self.pages)}")
                + (f". It is excluded: {EXCLUDED[task]}" if task in EXCLUDED else "")
            )
        if miniwob_html() is None:
            raise MissingExtraError(
                "MiniWoB++ envs serve the task pages of the 'miniwob' wheel, which is not "
                "installed: pip install --no-deps miniwob==1.1.0 (its selenium is not needed)"
            )
        self.task_name = task
        self.metadata = {**type(self).metadata, "oracle": task in ORACLES}
        self.tasks = GeneratedTaskSet(
            f"miniwob-{task}",
            lambda id, split, difficulty, seed: MiniWoBTask(id, split, difficulty, seed, name=task),
            ("default",),
        )
        super().__init__(viewport=viewport, **kwargs)

    def start(self, task: Task[WebWorld]) -> tuple[WebWorld, str]:
        world, _ = super().start(task)
        assert isinstance(world, MiniWoBWorld)
        return world, world.utterance

    def is_over(self, world: WebWorld) -> bool:
        assert isinstance(world, MiniWoBWorld)
        return super().is_over(world) or world.page_reward()[1]


# ---------------------------------------------------------------------- oracles
#
# Each oracle reads the instruction (``world.utterance``), the page as the agent sees it
# (``world.snapshot``) and, where the page keeps the answer to itself, the page's own state
# (``world.evaluate``); it acts only through the action language, naming elements by the ids
# of the snapshot. Each one is stateless: it looks at the page and says the next step.


def _expect(found: re.Match[str] | None, pattern: str, text: str) -> re.Match[str]:
    """A match the oracle needs; a LookupError naming the pattern and the text when the page
    words its task otherwise (as a missing element is one, :meth:`PageSnapshot.find`)."""
    if found is None:
        raise LookupError(f"the oracle expected {pattern!r} in {text!r}")
    return found


def _match(pattern: str, text: str) -> re.Match[str]:
    return _expect(re.match(pattern, text), pattern, text)


def _search(pattern: str, text: str) -> re.Match[str]:
    return _expect(re.search(pattern, text), pattern, text)


def _fullmatch(pattern: str, text: str) -> re.Match[str]:
    return _expect(re.fullmatch(pattern, text), pattern, text)


def _quoted(text: str) -> list[str]:
    return re.findall(r'"([^"]*)"', text)


def _click(node: Node) -> str:
    return format_action("click", node.id)


def _agid(world: MiniWoBWorld, selector: str) -> str | None:
    """The snapshot id of the first element matching a CSS selector, if the agent sees it."""
    found = world.evaluate(
        "(s) => { const e = document.querySelector(s); return e && e.getAttribute('data-agid'); }",
        selector,
    )
    return found if found is not None and world.snapshot.get(found) is not None else None


def _node(world: MiniWoBWorld, selector: str) -> Node:
    """The snapshot node of the first element matching a CSS selector; a LookupError when the
    agent does not see it (as :meth:`PageSnapshot.find` raises)."""
    agid = _agid(world, selector)
    node = None if agid is None else world.snapshot.get(agid)
    if node is None:
        raise LookupError(f"the page shows no element {selector!r}")
    return node


def _submit(world: MiniWoBWorld, name: str = "Submit") -> str:
    return _click(world.snapshot.find("button", name))


@oracle("click-test")
def _click_test(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    return _click(world.snapshot.find("button"))


def _click_uncovered(world: MiniWoBWorld, node: Node) -> str:
    """Click ``node``; where another element covers its middle (MiniWoB places buttons at
    random, overlapping), click a point of it that is on top."""
    point = world.evaluate(
        """(id) => {
          const e = document.querySelector(`[data-agid="${id}"]`);
          const r = e.getBoundingClientRect();
          const mid = [r.left + r.width / 2, r.top + r.height / 2];
          let best = null;
          for (let y = Math.ceil(r.top); y < r.bottom; y++)
            for (let x = Math.ceil(r.left); x < r.right; x++) {
              const hit = document.elementFromPoint(x, y);
              const far = Math.abs(x - mid[0]) + Math.abs(y - mid[1]);
              if ((hit === e || e.contains(hit)) && (best === null || far < best[2]))
                best = [x, y, far];
            }
          return best && best.slice(0, 2);
        }""",
        node.id,
    )
    return _click(node) if point is None else format_action("mouse_click", *point)


@oracle("click-test-2", "click-test-transfer", "click-button", "unicode-test")
def _click_named_button(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    quoted = _quoted(world.utterance)
    name = quoted[0] if quoted else _search(r"button (\w+)", world.utterance).group(1)
    return _click_uncovered(world, world.snapshot.find("button", name))


@oracle("click-button-sequence")
def _click_button_sequence(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    pushed = world.evaluate("() => buttonsPushed.length")
    return _click_uncovered(world, world.snapshot.find("button", "ONE" if pushed == 0 else "TWO"))


@oracle("click-link")
def _click_link(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    word = _quoted(world.utterance)[0]
    return _click(next(n for n in world.snapshot.find_all(name=word) if n.parent is not None))


@oracle("click-dialog")
def _click_dialog(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    return _click(world.snapshot.find("button", contains="close"))


@oracle("click-tab")
def _click_tab(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    tab = _search(r"Tab #\d", world.utterance).group(0)
    return _click(world.snapshot.find(name=tab))


@oracle("click-option")
def _click_option(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = _match(r"Select (.*) and click Submit\.", world.utterance).group(1)
    radio = world.snapshot.find("radio", wanted)
    return format_action("check", radio.id) if not radio.checked else _submit(world)


@oracle("click-checkboxes", "click-checkboxes-large", "click-checkboxes-transfer")
def _click_checkboxes(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    listed = _match(r"Select (.*) and click Submit\.", world.utterance).group(1)
    wanted = set() if listed == "nothing" else set(listed.split(", "))
    for box in world.snapshot.find_all("checkbox"):
        if box.checked != (box.name in wanted):
            return format_action("check" if box.name in wanted else "uncheck", box.id)
    return _submit(world)


@oracle("choose-list")
def _choose_list(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = _match(r"Select (.*) from the list and click Submit\.", world.utterance).group(1)
    box = world.snapshot.find("combobox")
    return format_action("select", box.id, wanted) if box.value != wanted else _submit(world)


@oracle("enter-text", "enter-text-2", "enter-text-dynamic", "enter-password", "login-user")
def _enter_text(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    quoted = _quoted(world.utterance)
    if task.name == "enter-text-2":
        quoted = [_transform(quoted[0], world.utterance)]
    boxes = [n for n in world.snapshot.nodes if n.role == "textbox"]
    wanted = quoted * len(boxes) if len(quoted) == 1 else quoted
    for box, text in zip(boxes, wanted, strict=True):
        if box.value not in (text, "•" * len(text)):  # a password field shows bullets
            return format_action("fill", box.id, text)
    return _click(world.snapshot.find("button"))


def _transform(text: str, utterance: str) -> str:
    return text.lower() if "lower" in utterance else text.upper()


@oracle("focus-text", "focus-text-2")
def _focus_text(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    boxes = world.snapshot.find_all("textbox")
    order = re.search(r"(\d)(st|nd|rd|th)", world.utterance)
    return _click(boxes[int(order.group(1)) - 1] if order else boxes[0])


@oracle("use-autocomplete", "use-autocomplete-nodelay")
def _use_autocomplete(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    parts = _quoted(world.utterance)
    start, end = parts[0], parts[1] if len(parts) > 1 else ""
    item = world.evaluate(
        "([s, e]) => ui_utils.COUNTRIES.find((c) => c.startsWith(s) && c.endsWith(e))",
        [start, end],
    )
    box = world.snapshot.find("textbox")
    if box.value != item:
        return format_action("fill", box.id, item)
    # The suggestion list opens a moment after typing (300 ms in use-autocomplete), appended
    # to the body outside the task's area, and covers the button: close it first. (A click
    # the list got in the way of fails as an invalid action; the next turn closes it.)
    if world.evaluate("() => $('.ui-autocomplete:visible').length > 0", None):
        return format_action("press", "Escape")
    return _submit(world)


@oracle("enter-date")
def _enter_date(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    month, day, year = _search(r"(\d\d)/(\d\d)/(\d{4})", world.utterance).groups()
    box = world.snapshot.find("textbox")
    wanted = f"{year}-{month}-{day}"
    return format_action("fill", box.id, wanted) if box.value != wanted else _submit(world)


@oracle("click-collapsible", "click-collapsible-nodelay")
def _click_collapsible(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    header = world.snapshot.find(contains="Section #")
    if world.evaluate("() => $('.ui-accordion-content:visible').length") == 0:
        return _click(header)
    return _submit(world)


@oracle("click-widget")
def _click_widget(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    kind = _quoted(world.utterance)[0]
    return format_action("click", _agid(world, f'#area [data-type="{kind}"]'))


@oracle("simple-arithmetic")
def _simple_arithmetic(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    a, op, b = _search(r"(-?\d+) ([-+x]) (-?\d+) =", world.snapshot.text).groups()
    answer = {"+": int(a) + int(b), "-": int(a) - int(b), "x": int(a) * int(b)}[op]
    box = world.snapshot.find("textbox")
    return (
        format_action("fill", box.id, str(answer)) if box.value != str(answer) else (_submit(world))
    )


@oracle("click-dialog-2")
def _click_dialog_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    label = _quoted(world.utterance)[0]
    return _click(world.snapshot.find("button", "Close" if label == "x" else label))


@oracle("enter-time")
def _enter_time(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    hour, minute, half = _search(r"(\d+):(\d\d) ([AP]M)", world.utterance).groups()
    wanted = f"{int(hour) % 12 + (12 if half == 'PM' else 0):02d}:{minute}"
    box = world.snapshot.find("textbox")
    return format_action("fill", box.id, wanted) if box.value != wanted else _submit(world)


@oracle("scroll-text")
def _scroll_text(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    area, answer = world.snapshot.find_all("textbox")[:2]
    last = re.sub(r"[^a-zA-Z0-9]", "", (area.value or "").split()[-1])
    return format_action("fill", answer.id, last) if answer.value != last else _submit(world)


@oracle("use-spinner")
def _use_spinner(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = int(_search(r"Select (-?\d+)", world.utterance).group(1))
    spinner = world.snapshot.find("spinbutton")
    value = int(spinner.value or 0)
    if value == wanted:
        return _submit(world)
    if not spinner.focused:
        return _click(spinner)
    return format_action("press", "ArrowUp" if value < wanted else "ArrowDown")


@oracle("use-slider")
def _use_slider(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = int(_search(r"Select (-?\d+)", world.utterance).group(1))
    return _slide(world, "#slider", wanted) or _submit(world)


@oracle("guess-number")
def _guess_number(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    # No memory needed: step from 5 in the direction the page's feedback points.
    feedback = world.evaluate("() => $('#feedback div:not(.hide)').text()")
    said = re.search(r"The number is (higher|lower) than (\d+)", feedback)
    guess = 5 if said is None else int(said.group(2)) + (1 if said.group(1) == "higher" else -1)
    box = world.snapshot.find("spinbutton")
    if box.value != str(guess):
        return format_action("fill", box.id, str(guess))
    return _submit(world)


@oracle("search-engine")
def _search_engine(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    name = _quoted(world.utterance)[0]
    index = int(_search(r"(\d+)(st|nd|rd|th) search result", world.utterance).group(1)) - 1
    box = world.snapshot.find("textbox")
    if box.value != name:
        return format_action("fill", box.id, name)
    shown = world.evaluate(
        "() => $('#page-content a').map((i, a) => a.getAttribute('data-result')).get()"
    )
    if not shown or shown[0] == "-1":  # nothing searched yet, or searched before typing
        return _click(world.snapshot.find("button", "Search"))
    found = _agid(world, f'#page-content a[data-result="{index}"]')
    if found is not None:
        return format_action("click", found)
    return _click(world.snapshot.find("link", str(index // 3 + 1)))


@oracle("choose-date", "choose-date-easy", "choose-date-medium", "choose-date-nodelay")
def _choose_date(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    month, day, year = (int(x) for x in _search(r"(\d\d)/(\d\d)/(\d{4})", world.utterance).groups())
    return _pick_date(world, world.snapshot.find("textbox"), month, day, year) or _submit(world)


def _pick_date(world: MiniWoBWorld, box: Node, month: int, day: int, year: int) -> str | None:
    """The next step of choosing a date in a jQuery UI date picker opened by ``box`` (None
    once the box shows it): open the calendar, page to the month, click the day."""
    if box.value == f"{month:02d}/{day:02d}/{year}":
        return None
    shown = world.evaluate(
        "() => { const d = $('.ui-datepicker-calendar:visible').length"
        " && $('#datepicker').datepicker('widget').find('.ui-datepicker-title').text();"
        " return d || null; }"
    )
    if shown is None:
        return _click(box)
    name, shown_year = shown.split()[0], int(shown.split()[-1])
    shown_month = MONTHS.index(name) + 1
    if (year, month) != (shown_year, shown_month):
        later = (year, month) > (shown_year, shown_month)
        return _click(world.snapshot.find(name="Next" if later else "Prev"))
    return _click(world.snapshot.find("link", str(day)))


MONTHS = (
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
)


@oracle("navigate-tree")
def _navigate_tree(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    name = _quoted(world.utterance)[0]
    # The target's outermost collapsed folder is opened first; then the target is clicked.
    target = world.evaluate(
        """(name) => {
          const spans = [...document.querySelectorAll('#tree span')];
          const span = spans.find((s) => s.textContent === name);
          const closed = [];
          let li = span.parentElement.parentElement.closest('li');
          for (; li; li = li.parentElement.closest('li'))
            if (li.classList.contains('expandable')) closed.push(li);
          const top = closed[closed.length - 1];
          const next = top ? top.querySelector(':scope > span') : span;
          return next.getAttribute('data-agid');
        }""",
        name,
    )
    return format_action("click", target)


def _fill_then_submit(world: MiniWoBWorld, box: Node, text: str) -> str:
    return format_action("fill", box.id, text) if box.value != text else _submit(world)


@oracle("copy-paste", "copy-paste-2")
def _copy_paste(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    order = re.search(r"(\d)(st|nd|rd)", world.utterance)
    text = world.evaluate(
        "(i) => document.querySelectorAll('#area textarea')[i].value",
        int(order.group(1)) - 1 if order else 0,
    )
    return _fill_then_submit(world, _node(world, "#area input"), text)


@oracle("find-word")
def _find_word(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    index = int(_search(r"(\d+)(st|nd|rd|th) word", world.utterance).group(1)) - 1
    paragraph = world.evaluate("() => document.querySelector('#area p').textContent")
    word = re.sub(r"[^a-zA-Z]", "", paragraph.split()[index])
    return _fill_then_submit(world, world.snapshot.find("textbox"), word)


@oracle("read-table")
def _read_table(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    label = _search(r"value of (.*) into the text field", world.utterance).group(1)
    cells = world.snapshot.find_all("cell")
    value = next(cells[i + 1].name for i, c in enumerate(cells[:-1]) if c.name == label)
    return _fill_then_submit(world, world.snapshot.find("textbox"), value)


@oracle("simple-algebra")
def _simple_algebra(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    equation = world.evaluate("() => document.getElementById('math-problem').textContent")
    left, right = (side.strip() for side in equation.split("="))
    # x + a = b, x - a = b or a - x = b: x is found by trying the only values that fit.
    x = next(v for v in range(-200, 201) if eval_side(left.replace("x", f"({v})")) == int(right))
    return _fill_then_submit(world, world.snapshot.find("textbox"), str(x))


def eval_side(expression: str) -> int:
    """The value of ``a + b`` or ``a - b`` (integers, maybe in parentheses), without eval."""
    a, op, b = _fullmatch(r"\s*(\(?-?\d+\)?)\s*([-+])\s*(\(?-?\d+\)?)\s*", expression).groups()
    a_value, b_value = int(a.strip("()")), int(b.strip("()"))
    return a_value + b_value if op == "+" else a_value - b_value


@oracle("click-tab-2", "click-tab-2-easy", "click-tab-2-medium", "click-tab-2-hard")
def _click_tab_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    word = _quoted(world.utterance)[0]
    visible = [n for n in world.snapshot.find_all(name=word) if n.role != "text"]
    if visible:
        return _click(visible[0])
    panel = world.evaluate(
        "(w) => [...document.querySelectorAll('.alink')].find((a) => a.textContent === w)"
        ".closest('[role=tabpanel]').getAttribute('aria-labelledby')",
        word,
    )
    return format_action("click", _agid(world, f"#{panel}"))


@oracle("click-checkboxes-soft")
def _click_checkboxes_soft(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    listed = _match(r"Select words similar to (.*) and click Submit\.", world.utterance)
    groups = world.evaluate("() => SYNONYMS")
    wanted = {w for g in groups if set(g) & set(listed.group(1).split(", ")) for w in g}
    for box in world.snapshot.find_all("checkbox"):
        if box.checked != (box.name in wanted):
            return format_action("check" if box.name in wanted else "uncheck", box.id)
    return _submit(world)


def _point_on(world: MiniWoBWorld, selector: str) -> str:
    """``mouse_click`` at the middle of the element a CSS selector names: for the pixel
    tasks, whose shapes (SVG, coloured boxes) have no line in the text observation."""
    x, y = world.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)]; }",
        selector,
    )
    return format_action("mouse_click", x, y)


@oracle("grid-coordinate")
def _grid_coordinate(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    point = _search(r"\(-?\d,-?\d\)", world.utterance).group(0)
    return _point_on(world, f'circle[id="{point}"]')


@oracle("click-color")
def _click_color(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    color = _search(r"Click on the (\w+) colored box", world.utterance).group(1)
    return _point_on(world, f'#area .color[data-color="{color}"]')


def _click_css(world: MiniWoBWorld, selector: str) -> str:
    """Click the first element a CSS selector names: by its id where the agent sees it, else
    at its middle (an element without a line in the text, such as an SVG shape), scrolled
    into view first."""
    found = _agid(world, selector)
    if found is not None:
        return format_action("click", found)
    return _reach(world, "(s) => document.querySelector(s)", selector)


def _fill_all(world: MiniWoBWorld, wanted: list[tuple[str, str]]) -> str | None:
    """Fill each ``(CSS selector, text)`` box that does not hold its text yet (a password box
    shows bullets), one per step; None once all do."""
    for selector, text in wanted:
        box = _agid(world, selector)
        node = None if box is None else world.snapshot.get(box)
        if node is not None and node.value not in (text, "•" * len(text)):
            return format_action("fill", node.id, text)
    return None


@oracle("click-tab-2-medium")
def _click_tab_2_medium(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    # The page empties the second tab: when the link is in neither, that tab is the answer.
    word = _quoted(world.utterance)[0]
    if world.evaluate(
        "(w) => [...document.querySelectorAll('.alink')].some((a) => a.textContent === w)", word
    ):
        return _click_tab_2(task, world)
    return _click_css(world, "#area .ui-tab:nth-child(2) a")


@oracle("click-collapsible-2", "click-collapsible-2-nodelay")
def _click_collapsible_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    word = _quoted(world.utterance)[0]
    link = world.evaluate(
        """(w) => {
          const a = [...document.querySelectorAll('.alink')].find((e) => e.textContent === w);
          const section = a.closest('.ui-accordion-content');
          if (getComputedStyle(section).display !== 'none') return a.getAttribute('data-agid');
          return section.previousElementSibling.getAttribute('data-agid');
        }""",
        word,
    )
    return format_action("click", link)


@oracle("login-user-popup")
def _login_user_popup(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    # Focusing a field may open a pop-up that disables the form; Cancel closes it for good.
    if world.evaluate("() => document.getElementById('popup') !== null"):
        return _click_css(world, "#popup-cancel")
    user, password = _quoted(world.utterance)[:2]
    filled = _fill_all(world, [("#username", user), ("#password", password)])
    return filled or _click_css(world, "#subbtn")


_MOVIE_FIELDS = {"Genre": 0, "Director": 1, "Year": 2, "Date": 2}


@oracle("multi-layouts", "multi-orderings")
def _multi_layouts(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    # The page draws one of several forms (rows shuffled); each box is read by its row's label.
    genre, name, year = _search(
        r"Search for (.*) movies directed by (.*) from year (\d+)\.", world.utterance
    ).groups()
    labels = world.evaluate(
        """() => [...document.querySelectorAll('#area input[type=text]')].map((b) =>
          [b.getAttribute('data-agid'), b.closest('p, .row, tr, .field, .ui-entry').textContent])"""
    )
    wanted = []
    for box, label in labels:
        field = next(i for word, i in _MOVIE_FIELDS.items() if word in label)
        wanted.append((f'[data-agid="{box}"]', (genre, name, year)[field]))
    return _fill_all(world, wanted) or _click_css(
        world, "#area button, #area .final, #area .ui-submit"
    )


@oracle("identify-shape")
def _identify_shape(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    kind = world.evaluate(
        """() => {
          const s = document.querySelector('#area_svg > *');
          if (s.tagName === 'text') return /[0-9]/.test(s.textContent) ? 'digit' : 'letter';
          return {rect: 'rectangle', circle: 'circle', polygon: 'triangle'}[s.tagName];
        }"""
    )
    return _click_css(world, f'#area-buttons button[data-type="{kind}"]')


@oracle("find-greatest")
def _find_greatest(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    best, shown = world.evaluate(
        """() => {
          const cards = [...document.querySelectorAll('#cardholder .card')];
          const value = (c) => Number(c.querySelector('.card-value').textContent);
          const best = cards.reduce((a, b) => (value(b) > value(a) ? b : a));
          return [best.getAttribute('data-index'), !best.classList.contains('hidden')];
        }"""
    )
    if not shown:
        return _click_css(world, f'#cardholder .card[data-index="{best}"]')
    return _click_css(world, "#submit")


@oracle("generate-number")
def _generate_number(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    shown = world.evaluate("() => $('#display-number').text()")
    if shown.lstrip("-").isdigit():
        number = int(shown)
        bound = re.search(r"(less|greater) than (\d+)", world.utterance)
        if bound is not None:
            fits = (
                number < int(bound.group(2))
                if bound.group(1) == "less"
                else number > int(bound.group(2))
            )
        else:
            fits = (number % 2 == 1) == ("odd" in world.utterance)
        if fits:
            return _click_css(world, "#submit")
    return _click_css(world, "#generate")


@oracle("odd-or-even")
def _odd_or_even(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    unmarked = world.evaluate(
        """() => {
          for (const row of document.querySelectorAll('#numbers .row')) {
            const n = parseInt(row.querySelector('.display-number').textContent, 10);
            const want = row.querySelector(Math.abs(n % 2) === 1 ? '.odd' : '.even');
            if (!want.classList.contains('selected')) return want.getAttribute('data-agid');
          }
          return null;
        }"""
    )
    return format_action("click", unmarked) if unmarked else _click_css(world, "#submit")


def _scroll_box(world: MiniWoBWorld, selector: str, down: bool) -> str | None:
    """The next step of scrolling a box to its end (``down``) or start: hover it, then turn
    the wheel; None once it is there."""
    at_end = world.evaluate(
        """([s, down]) => { const e = document.querySelector(s); return down
          ? e.scrollTop + e.clientHeight >= e.scrollHeight - 2 : e.scrollTop === 0; }""",
        [selector, down],
    )
    if at_end:
        return None
    if not world.evaluate("(s) => document.querySelector(s).matches(':hover')", selector):
        return format_action("hover", _agid(world, selector))
    return format_action("scroll", "down" if down else "up", 5000)


@oracle("scroll-text-2")
def _scroll_text_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    down = "bottom" in world.utterance
    return _scroll_box(world, "#text-area", down) or _click_css(world, "#subbtn")


@oracle("sign-agreement")
def _sign_agreement(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    if world.utterance.startswith("Click the cancel button"):
        return _click_css(world, "#cancel")
    scrolled = _scroll_box(world, "#text-area", True)
    if scrolled is not None:
        return scrolled
    name = _quoted(world.utterance)[0]
    button = "#agree" if world.utterance.rstrip('"').endswith("Agree") else "#cancel"
    return _fill_all(world, [("#name", name)]) or _click_css(world, button)


@oracle("text-transform")
def _text_transform(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    text = world.evaluate("() => document.getElementById('captcha').textContent")
    return _fill_all(world, [("#tt", text)]) or _click_css(world, "#subbtn")


@oracle("read-table-2")
def _read_table_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    values = world.evaluate(
        """() => ['#ll1', '#ll2'].map((l) => {
          const key = document.querySelector(l).getAttribute('data-key');
          const row = [...document.querySelectorAll('#tab tr')]
            .find((r) => r.cells[0].textContent === key);
          return row.cells[1].textContent;
        })"""
    )
    wanted = [("#tt1", values[0]), ("#tt2", values[1])]
    return _fill_all(world, wanted) or _click_css(world, "#subbtn")


@oracle("visual-addition")
def _visual_addition(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    total = world.evaluate(
        "() => document.querySelectorAll('#math-problem .addition-block').length"
    )
    return _fill_all(world, [("#math-answer", str(total))]) or _click_css(world, "#subbtn")


@oracle("click-menu-2")
def _click_menu_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    quoted = _quoted(world.utterance)
    if len(quoted) > 1:
        label = quoted[1]
    else:  # "the item with the <icon> icon": the icon's class names the item
        icon = world.evaluate("() => document.querySelector('#query .ui-icon').className")
        label = next(k for k, v in world.evaluate("() => PROBLEM_SET").items() if v in icon)
    if not world.evaluate("() => $('#menu').is(':visible')"):
        return _click_css(world, "#open-menu")
    # With the mouse, as a person would: it rests on Playback until the page shows the
    # submenu (jQuery UI opens it on a 300 ms timer), then clicks the item, which lies inside
    # Playback's own list, so the move does not close the submenu. (The keyboard path of
    # click-menu raced the timers that the mouse, left over the menu that opens under it,
    # starts.)
    shown = world.snapshot.find_all("menuitem", label)
    if label in _PLAYBACK and not shown:
        return format_action("hover", world.snapshot.find("menuitem", "Playback").id)
    return _click(shown[0] if shown else world.snapshot.find("menuitem", label))


_PLAYBACK = ("Prev", "Stop", "Play", "Next")


def _menu_step(world: MiniWoBWorld, path: list[str]) -> tuple[str, str]:
    """The next step down a jQuery UI menu by its keyboard (the mouse opens a submenu on a
    300 ms timer, so what the next look shows would depend on how fast the agent acts):
    ``("key", action)`` while the path's last item is not the active one, then
    ``("last", its id)``."""
    step = world.evaluate(
        """(path) => {
          const menu = $('#menu');
          if (!menu[0].contains(document.activeElement)) return ['key', 'Tab'];
          let items = menu.children('li');
          const lis = [];
          for (const name of path) {
            const li = items.filter((_, e) => $(e).children('div').text().trim() === name);
            lis.push(li[0]);
            items = li.first().children('ul').children('li');
          }
          const active = menu.menu('instance').active;
          const a = active && active[0];
          if (!a) return ['key', 'ArrowDown'];
          const i = lis.indexOf(a);
          if (i === lis.length - 1) return ['last', $(a).children('div').attr('data-agid')];
          if (i >= 0) return ['key', 'ArrowRight'];
          const d = lis.findIndex((li) => li.parentElement === a.parentElement);
          if (d < 0) return ['key', 'ArrowLeft'];
          const kids = [...a.parentElement.children].filter(
            (e) => !e.classList.contains('ui-state-disabled'));
          return ['key', kids.indexOf(lis[d]) > kids.indexOf(a) ? 'ArrowDown' : 'ArrowUp'];
        }""",
        path,
    )
    kind, value = step
    return kind, (format_action("press", value) if kind == "key" else value)


@oracle("click-menu")
def _click_menu(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    path = _match(r"Select (.*)", world.utterance).group(1).split(">")
    kind, action = _menu_step(world, path)
    return format_action("press", "Enter") if kind == "last" else action


@oracle("use-slider-2")
def _use_slider_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = [int(v) for v in _search(r"\[([-\d, ]+)\]", world.utterance).group(1).split(",")]
    for index, value in enumerate(wanted, start=1):
        step = _slide(world, f"#slider-{index}", value)
        if step is not None:
            return step
    return _click_css(world, "#subbtn")


def _slide(world: MiniWoBWorld, slider: str, wanted: int) -> str | None:
    """The next step of setting the jQuery UI slider ``slider`` (a CSS selector) to
    ``wanted`` with the keyboard; None once it is there."""
    value, low, high = world.evaluate(
        "(s) => [$(s).slider('value'), $(s).slider('option', 'min'), $(s).slider('option', 'max')]",
        slider,
    )
    if value == wanted:
        return None
    handle = f"{slider} .ui-slider-handle"
    if not world.evaluate(f"() => document.activeElement === $('{handle}')[0]"):
        return _click_css(world, handle)
    return format_action("press", _slider_key(value, wanted, low, high))


def _slider_key(value: int, wanted: int, low: int, high: int) -> str:
    """The key that moves a focused jQuery UI slider handle from ``value`` toward ``wanted``."""
    if wanted in (low, high):
        return "Home" if wanted == low else "End"
    if abs(wanted - value) >= (high - low) / 5:  # what PageUp/PageDown move it by
        return "PageUp" if wanted > value else "PageDown"
    return "ArrowUp" if wanted > value else "ArrowDown"


def _point_of(world: MiniWoBWorld, find_js: str, argument: Any = None) -> str:
    """``mouse_click`` at the middle of the element that ``find_js`` (a JS function of
    ``argument``) returns."""
    x, y = world.evaluate(
        f"""(a) => {{ const e = ({find_js})(a); const r = e.getBoundingClientRect();
          return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)]; }}""",
        argument,
    )
    return format_action("mouse_click", x, y)


@oracle("ascending-numbers")
def _ascending_numbers(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    # Clicking 1 hides the numbers under boxes; the boxes are then clicked in the order of
    # their numbers, which is their order in the page.
    if world.evaluate("() => document.querySelectorAll('svg text').length > 0"):
        return _point_of(
            world,
            "() => [...document.querySelectorAll('svg text')].find((t) => t.textContent === '1')",
        )
    return _point_on(world, "svg rect")


@oracle("number-checkboxes")
def _number_checkboxes(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    number = int(_quoted(world.utterance)[0])
    wrong = world.evaluate(
        """(n) => {
          const boxes = document.querySelectorAll('#area input[type=checkbox]');
          const want = PATTERNS[n].flat();
          const i = want.findIndex((w, i) => boxes[i].checked !== (w === 1));
          return i < 0 ? null : [boxes[i].getAttribute('data-agid'), want[i] === 1];
        }""",
        number,
    )
    if wrong is None:
        return _click_css(world, "#subbtn")
    return format_action("check" if wrong[1] else "uncheck", wrong[0])


@oracle("click-shades")
def _click_shades(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    color = _search(r"\b(red|green|blue)\b", world.utterance).group(1)
    wrong = world.evaluate(
        """(c) => [...document.querySelectorAll('#area span')].findIndex(
          (s) => (s.getAttribute('data-color') === c) !== s.classList.contains('selected'))""",
        color,
    )
    if wrong < 0:
        return _click_css(world, "#submit")
    return _click_css(world, f"#area span:nth-of-type({wrong + 1})")


_SHAPES_JS = """(words) => {
  // MiniWoB's shapes.js draws each shape as one SVG element: a letter or digit as text, a
  // shape as rect, circle or polygon, 20 px large or 10 px small. A description is
  // "[size] [color] what", what being the text, the kind or "item".
  const [size, color, what] = words;
  const described = (e) => {
    const tag = e.tagName;
    const text = tag === 'text' ? e.textContent
      : {rect: 'rectangle', circle: 'circle', polygon: 'triangle'}[tag];
    const kind = tag !== 'text' ? 'shape' : /[0-9]/.test(text) ? 'digit' : 'letter';
    const box = e.getBBox();
    const px = tag === 'text' ? parseFloat(e.getAttribute('font-size')) : box.width;
    return {text, kind, color: e.getAttribute('fill'), size: px > 15 ? 'large' : 'small'};
  };
  return [...document.querySelectorAll('#area_svg > *')].map((e, i) => [i, described(e)])
    .filter(([, d]) => (!size || d.size === size) && (!color || d.color === color)
      && (what === 'item' || d.text === what || d.kind === what))
    .map(([i]) => i);
}"""

_SHAPE_COLORS = ("red", "green", "blue", "aqua", "black", "magenta", "yellow")


def _shapes_matching(world: MiniWoBWorld, description: str) -> list[int]:
    """The indexes (among the SVG's shapes) of those a shapes.js description fits."""
    words = description.split()
    size = words.pop(0) if words[0] in ("large", "small") and len(words) > 1 else ""
    color = words.pop(0) if words[0] in _SHAPE_COLORS and len(words) > 1 else ""
    return [int(i) for i in world.evaluate(_SHAPES_JS, [size, color, words[0]])]


@oracle("click-shape")
def _click_shape(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    description = _match(r"Click on a (.*)", world.utterance).group(1)
    first = _shapes_matching(world, description)[0]
    return _point_on(world, f"#area_svg > :nth-child({first + 1})")


@oracle("count-shape")
def _count_shape(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    description = _match(r"How many (.*)s are there\?", world.utterance).group(1)
    count = len(_shapes_matching(world, description))
    return _click(world.snapshot.find("button", str(count)))


_POLYGON_CORNERS_JS = """() => {
  // The page draws a regular polygon around the canvas's middle, turned at random. Walking
  // in from outside along each degree, the first inked pixel is farthest out at a corner:
  // the corners are the peaks of that distance.
  const c = document.getElementById('c');
  const ink = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const inked = (x, y) => ink[(Math.round(y) * c.width + Math.round(x)) * 4 + 3] > 100;
  const reach = [];
  for (let a = 0; a < 360; a++) {
    const t = (a * Math.PI) / 180;
    let r = 48;
    while (r > 0 && !inked(75 + r * Math.cos(t), 50 + r * Math.sin(t))) r -= 0.25;
    reach.push(r);
  }
  const at = (a) => reach[(a + 360) % 360];
  const peaks = [];
  for (let a = 0; a < 360; a++) {
    let top = true, low = Infinity;
    for (let k = -20; k <= 20; k++) {
      top = top && at(a) >= at(a + k);
      low = Math.min(low, at(a + k));
    }
    if (top && at(a) - low > 1.5) peaks.push(a);
  }
  // a flat top gives neighbouring peaks: count runs of them once
  return peaks.filter((a, i) => {
    const before = i > 0 ? peaks[i - 1] : peaks[peaks.length - 1] - 360;
    return a - before > 20;
  }).length;
}"""


@oracle("count-sides")
def _count_sides(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    sides = world.evaluate(_POLYGON_CORNERS_JS)
    return _click(world.snapshot.find("button", str(sides)))


def _email_task(world: MiniWoBWorld) -> dict[str, str]:
    """What an email-inbox page asks: ``task`` (reply, forward, delete or star), ``by`` and
    ``message`` or ``to``; from the page's fields where it words the task in natural
    language, else from its template."""
    fields = world.evaluate(
        "() => { const u = core.getUtterance(); return typeof u === 'string' ? null : u.fields; }"
    )
    if fields is not None:
        return {"task": "forward", **fields}
    text = world.utterance
    by = _search(r"Find the email by (.+?) and", text).group(1)
    if "reply to them" in text:
        return {"task": "reply", "by": by, "message": _quoted(text)[0]}
    if "forward that email" in text:
        return {"task": "forward", "by": by, "to": _search(r"email to (.+)\.$", text).group(1)}
    return {"task": "delete" if "trash" in text else "star", "by": by}


@oracle(
    "email-inbox",
    "email-inbox-delete",
    "email-inbox-forward",
    "email-inbox-forward-nl",
    "email-inbox-forward-nl-turk",
    "email-inbox-important",
    "email-inbox-nl-turk",
    "email-inbox-noscroll",
    "email-inbox-reply",
    "email-inbox-star-reply",
)
def _email_inbox(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = _email_task(world)
    view = world.evaluate(
        """() => ['#reply', '#forward', '#email'].find((s) => $(s).is(':visible')) || '#main'"""
    )
    if view == "#main":
        thread = world.evaluate(
            """(by) => [...document.querySelectorAll('#main .email-thread')]
              .find((t) => t.querySelector('.email-sender').textContent === by)
              .getAttribute('data-agid')""",
            wanted["by"],
        )
        if world.snapshot.get(thread) is None:  # below the fold: the inbox scrolls
            return format_action("scroll", "down", 100)
        return format_action("click", thread)
    if view == "#email":
        action = {"reply": ".email-reply", "forward": ".email-forward"}.get(wanted["task"])
        if action is not None:
            return _click_css(world, f"#email {action}")
        icon = "trash" if wanted["task"] == "delete" else "star"
        return _point_on(world, f"#email .email-actions .{icon}")
    if view == "#reply":
        return _fill_all(world, [("#reply-text", wanted["message"])]) or _point_on(
            world, "#send-reply"
        )
    return _fill_all(world, [("#forward .forward-sender", wanted["to"])]) or _point_on(
        world, "#send-forward"
    )


@oracle("form-sequence")
def _form_sequence(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    number, nth = _search(
        r"Select (-?\d+) with the slider, click the (\d)", world.utterance
    ).groups()
    step = _slide(world, "#slider", int(number))
    if step is not None:
        return step
    wrong = world.evaluate(
        """(n) => { const boxes = [...document.querySelectorAll('#area input[type=checkbox]')];
          const i = boxes.findIndex((b, i) => b.checked !== (i === n - 1));
          return i < 0 ? null : [boxes[i].getAttribute('data-agid'), i === n - 1]; }""",
        int(nth),
    )
    if wrong is not None:
        return format_action("check" if wrong[1] else "uncheck", wrong[0])
    return _click_css(world, "#subbtn")


@oracle("form-sequence-2")
def _form_sequence_2(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    radio, number, box = _search(
        r"Check the (\d)\w\w radio button and enter the number \"(-?\d+)\" into the (\d)",
        world.utterance,
    ).groups()
    button = _node(world, f'#area input[type=radio][value="{radio}"]')
    if not button.checked:
        return format_action("check", button.id)
    return _fill_all(world, [(f"#input-{box}", number)]) or _click_css(world, "#subbtn")


@oracle("form-sequence-3")
def _form_sequence_3(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    choice = _search(r"Choose (.+) from the dropdown", world.utterance).group(1)
    button = _quoted(world.utterance)[0]
    if world.evaluate("() => $('#dropdown').val()") == choice:
        return _click(world.snapshot.find("button", button))
    # The list is drawn by jQuery's selectric over a hidden select: open it, pick the item.
    if not world.evaluate("() => $('.selectric-wrapper').hasClass('selectric-open')"):
        return _click_css(world, ".selectric")
    return _click(world.snapshot.find("listitem", choice))


def _reach(world: MiniWoBWorld, find_js: str, argument: Any = None) -> str:
    """``mouse_click`` on the element ``find_js`` (a JS function of ``argument``) returns,
    once it is in view; until then, turn the wheel toward it (for icons, which have no line
    in the text and so no id to click, in a list longer than the viewport)."""
    x, y, top, bottom, height = world.evaluate(
        f"""(a) => {{ const r = ({find_js})(a).getBoundingClientRect();
          return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2),
                  r.top, r.bottom, window.innerHeight]; }}""",
        argument,
    )
    if top < 0 or bottom > height:
        if not world.evaluate("() => document.getElementById('area').matches(':hover')"):
            # the wheel turns what is under the mouse: put it over the task's area first
            inside = world.evaluate(
                "() => [...document.querySelectorAll('#area [data-agid]')].map((e) =>"
                " e.getAttribute('data-agid'))"
            )
            return format_action("hover", next(i for i in inside if world.snapshot.get(i)))
        distance = max(40, int(abs(y - height / 2)))
        return format_action("scroll", "down" if y > height / 2 else "up", distance)
    return format_action("mouse_click", x, y)


def _social_media_posts(world: MiniWoBWorld, action: str, wanted: int | None) -> str:
    """The next step of setting ``action`` active on the first ``wanted`` posts of the
    utterance's user (all of them where ``wanted`` is None) and on nothing else, then
    Submit."""
    user = _search(r" by (@\S+?)\.? and then", world.utterance).group(1)
    found = world.evaluate(
        """([user, action, wanted]) => {
          let mine = 0;
          const posts = [...document.querySelectorAll('#area .media')];
          for (const [p, post] of posts.entries()) {
            const by = post.querySelector('.username').textContent === user;
            const take = by && (wanted === null || mine < wanted);
            if (by) mine++;
            for (const kind of ['reply', 'retweet', 'like', 'share']) {
              const icon = post.querySelector('.' + kind);
              if (icon && icon.classList.contains('active') !== (take && kind === action))
                return [p, kind];
            }
          }
          return null;
        }""",
        [user, action, wanted],
    )
    if found is None:
        return _click(world.snapshot.find("button", "Submit"))
    return _reach(
        world,
        "([p, k]) => document.querySelectorAll('#area .media')[p].querySelector('.' + k)",
        found,
    )


def _social_media_action(world: MiniWoBWorld) -> str:
    label = _search(r'[Cc]lick(?: on)? the "(.+?)" button', world.utterance).group(1)
    return str(next(k for k, v in world.evaluate("() => ACTIONS").items() if v == label))


@oracle("social-media")
def _social_media(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    user = _search(r"For the user (@\S+),", world.utterance).group(1)
    action = _social_media_action(world)
    post = (
        "(u) => [...document.querySelectorAll('#area .media')]"
        ".find((m) => m.querySelector('.username').textContent === u)"
    )
    if action in ("reply", "retweet", "like"):
        return _reach(world, f"(u) => ({post})(u).querySelector('.{action}')", user)
    if world.evaluate(f"(u) => ({post})(u).querySelector('ul').classList.contains('hide')", user):
        return _reach(world, f"(u) => ({post})(u).querySelector('.more')", user)
    return _reach(world, f"(u) => ({post})(u).querySelector('li.{action}')", user)


@oracle("social-media-all")
def _social_media_all(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    return _social_media_posts(world, _social_media_action(world), None)


@oracle("social-media-some")
def _social_media_some(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = int(_search(r"button on (\d+) post", world.utterance).group(1))
    return _social_media_posts(world, _social_media_action(world), wanted)


@oracle("terminal")
def _terminal(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    extension = re.search(r"extension \.(\S+)", world.utterance)
    files = world.evaluate("() => currentFiles")
    if extension is None:  # "a file that has no file extension"
        target = next(f for f in files if "." not in f)
    else:
        target = next(f for f in files if f.endswith("." + extension.group(1)))
    command = f"rm {target}"
    if not world.evaluate("() => document.activeElement.id === 'terminal-target'"):
        return _click_css(world, "#terminal")
    typed = world.evaluate("() => $('#active-input').text()")
    if typed == command:
        return format_action("press", "Enter")
    if command.startswith(typed):
        return format_action("type", command[len(typed) :])
    return format_action("press", "Backspace")


@oracle("buy-ticket")
def _buy_ticket(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = _search(r"ticket with the (.+)\.", world.utterance).group(1)
    field = "data-price" if "cost" in wanted else "data-duration"
    best = max if wanted.split()[0] in ("longest", "most") else min
    flights = world.evaluate(
        """(field) => [...document.querySelectorAll('#area .flight')].map((f) =>
          [Number(f.querySelector('[' + field + ']').getAttribute(field)),
           f.querySelector('.buy-ticket').getAttribute('data-agid')])""",
        field,
    )
    return format_action("click", best(flights)[1])


@oracle("phone-book")
def _phone_book(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    name, field = _search(
        r"Find (.+) in the contact book and click on their (\w+)", world.utterance
    ).groups()
    # One contact a page: page on with ">" until it is theirs.
    if world.evaluate("() => $('#contact .name').text()") != name:
        return _click(world.snapshot.find("link", ">"))
    return _click_css(world, f"#contact a.{field}")


@oracle("use-colorwheel", "use-colorwheel-2")
def _use_colorwheel(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    # The picker's field takes the colour as hex text too.
    wanted = world.evaluate(
        """() => { const shown = document.querySelector('#query .cc');
          if (!shown) return ui_utils.colorNameToHex(
            document.getElementById('query').textContent.match(/Select (\\S+) with/)[1]);
          const [r, g, b] = getComputedStyle(shown).backgroundColor.match(/\\d+/g).map(Number);
          return '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join(''); }"""
    )
    box = _node(world, "#col")
    if (box.value or "").lower() != wanted.lstrip("#").lower():
        return format_action("fill", box.id, wanted.lstrip("#").upper())
    if world.evaluate("() => document.activeElement.id === 'col'"):
        return format_action("press", "Tab")  # leaving the field closes the picker
    return _click_css(world, "#subbtn")


@oracle("order-food")
def _order_food(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    menu = world.evaluate("() => MENU")
    named = re.search(r"Order one of each item: (.+)", world.utterance)
    if named is not None:
        names = set(named.group(1).split(", "))
        wanted = {m["id"]: 1 for m in menu if m["name"].strip() in names}
    else:
        count, kind = _search(r"Order (\d+) items that are (\S+)", world.utterance).groups()
        wanted = {next(m["id"] for m in menu if kind in m["types"]): int(count)}
    have = world.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.food-item')].map((f) =>
          [f.getAttribute('data-id'), Number(f.getAttribute('data-quantity'))]))"""
    )
    for item, quantity in have.items():
        if quantity != wanted.get(int(item), 0):
            button = ".add" if quantity < wanted.get(int(item), 0) else ".remove"
            return _click_css(world, f'.food-item[data-id="{item}"] {button}')
    return _click_css(world, "#submit-order button")


@oracle("book-flight", "book-flight-nodelay")
def _book_flight(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted, origin, destination, date = _search(
        r"Book the (\w+) one-way flight from: (.+) to: (.+) on (\d\d/\d\d/\d{4})", world.utterance
    ).groups()
    if world.evaluate("() => !$('#results').hasClass('hide')"):
        field = "data-price" if wanted == "cheapest" else "data-duration"
        flights = world.evaluate(
            """(field) => [...document.querySelectorAll('#results .flight')].map((f) =>
              [Number(f.querySelector('[' + field + ']').getAttribute(field)),
               f.querySelector('.flight-price').getAttribute('data-agid')])""",
            field,
        )
        return format_action("click", min(flights)[1])
    # The airports are typed as the list names them ("Austin, TX (AUS)").
    airports = world.evaluate(
        "(places) => places.map((p) => DOMESTIC_FLIGHTS.find((f) => f.includes(p)))",
        [origin, destination],
    )
    filled = _fill_all(world, [("#flight-from", airports[0]), ("#flight-to", airports[1])])
    if filled is not None:
        return filled
    if world.evaluate("() => $('.ui-autocomplete:visible').length > 0"):
        return format_action("press", "Escape")  # the suggestions would cover the form
    month, day, year = (int(x) for x in date.split("/"))
    box = _node(world, "#datepicker")
    return _pick_date(world, box, month, day, year) or _click_css(world, "#search")


@oracle("click-scroll-list")
def _click_scroll_list(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    wanted = _match(r"Select (.+) from the scroll list", world.utterance).group(1).split(", ")
    names = [n.name for n in world.snapshot.find_all("option")]
    chosen = world.evaluate(
        "() => [...document.getElementById('options').selectedOptions].map((o) => o.textContent)"
    )
    if sorted(chosen) == sorted(wanted):
        return _submit(world)
    box = world.snapshot.find("listbox")
    if len(wanted) == 1:
        return format_action("select", box.id, wanted[0])
    # Two: click the first (it alone is selected, and the list has the focus), move the
    # list's focus down to the second without selecting (Ctrl+Down, counted in the
    # history since that click), and add it with Ctrl+Space.
    first, second = sorted(wanted, key=names.index)
    if chosen != [first]:
        return _click(world.snapshot.find("option", first))
    down = format_action("press", "Control+ArrowDown")
    moved = len(list(itertools.takewhile(lambda a: a == down, reversed(world.history))))
    if moved < names.index(second) - names.index(first):
        return down
    return format_action("press", "Control+Space")


_QUILL_STYLES = {
    "bold": ("bold", "b"),
    "italics": ("italic", "i"),
    "underlined": ("underline", "u"),
}


@oracle("text-editor")
def _text_editor(task: MiniWoBTask, world: MiniWoBWorld) -> str | None:
    kind, value = _search(r"the (style|color) (\w+)", world.utterance).groups()
    text = world.evaluate("() => editor.getText()").rstrip("\n")
    if "everything" in world.utterance:
        start, end = 0, len(text)
    else:
        word = _search(r"give the text (.+?) the (?:style|color)", world.utterance).group(1)
        start = next(m.start() for m in re.finditer(r"\S+", text) if m.group() == word)
        end = start + len(word)
    shades = world.evaluate("(c) => COLOR_MAP[c] || []", value)
    done = world.evaluate(
        """([s, n, key, shades]) => { const f = editor.getFormat(s, n);
          return shades.length ? shades.includes(f.color) : f[key] === true; }""",
        [start, end - start, _QUILL_STYLES.get(value, ("color", ""))[0], shades],
    )
    if done:
        return _click_css(world, "#subbtn")
    if world.evaluate("() => $('.ql-color').hasClass('ql-expanded')"):
        # opened on the selection (the editor keeps it while its toolbar has the focus)
        return _click_css(world, f'.ql-color .ql-picker-item[data-value="{shades[0]}"]')
    selected = world.evaluate("() => editor.getSelection()")
    if selected is None:
        return _click_css(world, ".ql-editor")
    at, length = selected["index"], selected["length"]
    if (at, at + length) == (start, end) or (start == 0 and end == len(text) and length >= end):
        if kind == "style":
            return format_action("press", f"Control+{_QUILL_STYLES[value][1]}")
        return _click_css(world, ".ql-color .ql-picker-label")
    return format_action("press", _caret_key(text, at, length, start, end))


def _caret_key(text: str, at: int, length: int, start: int, end: int) -> str:
    """The key that brings a text selection ``[at, at + length)`` toward ``[start, end)``:
    the caret to ``start`` by words, then by characters, then the selection out to ``end``."""
    if start == 0 and end == len(text):
        return "Control+a"
    if length and at != start:
        return "ArrowLeft"  # collapse to the selection's start
    if length == 0 and at < start:
        return "Control+ArrowRight" if " " in text[at : start - 1] else "ArrowRight"
    if length == 0 and at > start:
        return "Control+ArrowLeft" if " " in text[start + 1 : at] else "ArrowLeft"
    reach = at + length
    if reach > end:
        return "Shift+ArrowLeft"
    return (
        "Control+Shift+ArrowRight" if re.fullmatch(r"\w+", text[reach:end]) else "Shift+ArrowRight"
    )
