"""Desktop tasks as envs: ``gui/Mousepad-v0`` and one id per application with templates.

:class:`DesktopTaskEnv` plays the tasks of one application's templates
(:mod:`agentgym.envs.gui.osworld`, :mod:`agentgym.envs.gui.tasks`) on a real desktop
(:class:`~agentgym.envs.gui.desktop.Desktop`, started once and reused by every episode),
observed as a screenshot ``Box(H, W, 3, uint8)``, acted on with the pixel action language
(:mod:`agentgym.envs.gui.pixel_actions`: ``click(x, y)``, ``type("...")``,
``key("Control+s")``...) through XTEST, and judged after every step by the task's evaluator
from the applications' real output, never from the screen.

**Tasks.** A task id ``split/level/index`` maps to a seed (:class:`GeneratedTaskSet`); the seed
picks one of the level's templates and the template's parameters.

**Waiting.** An application handles input on its own time: after each action the step waits
until the screen has not changed for :data:`QUIET` seconds and the uid's processes used no CPU
meanwhile (at most :data:`SETTLE_LIMIT`), so the frame the agent gets shows what its action
did (a dialog that opened) and the next action meets the screen that frame showed. An
application that writes its file on a timer with the screen and CPU still (mousepad's Save As
writes about half a second after Enter) is what ``wait()`` is for: it waits until both have
been still for :data:`WAIT_QUIET` seconds, and an oracle ends with it.

**Oracle.** The template's oracle, a fixed list of pixel actions, played while the episode's
actions are its prefix; after any other action the oracle has no plan (None).

**Views.** ``view="screen"`` (the default) observes the screenshot alone. ``view="a11y"``
observes ``{"screenshot": ..., "text": ...}``, the text being the desktop's accessibility tree
with element ids (:mod:`agentgym.envs.gui.a11y`), and takes element actions
(``click_element("e4")``, ``type_into("e11", "hi")``) beside the pixel ones: a text-only
model reads the text and acts by id, and each element action is carried out as the pixel
actions at the element's centre, so the episode's actions, the oracle and the verdict are
the same in both views.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.gui import a11y, osworld
from agentgym.envs.gui.desktop import Desktop
from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS
from agentgym.envs.web import actions as web_actions
from agentgym.errors import UsageError
from agentgym.spaces import Text, ToolCall
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = ["DesktopTask", "DesktopTaskEnv", "DesktopWorld"]

QUIET = 0.12
"""Seconds without a change on the screen, and without CPU time used by the uid's processes,
after which an action's effect counts as shown. The CPU clause is what lets the quiet be short:
an application still working on a key (GTK laying out a dialog) is busy even where its window
has not changed yet."""

TYPE_QUIET = 0.3
"""The stillness after typing. Toolkits act on typed text from a timer, with the screen and
CPU still until it fires: GTK's Save As name entry ignores an Enter that comes within about
0.15 s of the typing (measured: an Enter 0.11-0.13 s after the name was lost 12 times in 12,
0.15 s after 3 times in 6, 0.17 s and later 0 in 12). The 0.12 s quiet plus a step's own work
left the Enter just past that most of the time, but not always: one save in about a hundred
test runs here, and one in each of two CI runs, ended with the dialog open and no file."""

WAIT_QUIET = 0.8
"""The stillness ``wait()`` waits for: longer than mousepad's timer between a Save As dialog's
Enter and the write (0.52-0.57 s measured, screen and CPU still all that time)."""

SETTLE_LIMIT = 3.0
"""The longest a step waits for the screen to settle (a blinking caret never would: the
desktop's GTK settings turn blinking off)."""

RESET_QUIET = 0.4
"""The stillness that ends a reset. An episode's first frame must be the same on every reset
of a task (Gymnasium's determinism check compares them); a window takes the focus before it
is fully drawn, and an application may draw its document from a timer after a still
moment, which the step's short quiet would not wait for."""

WAIT_LIMIT = 5.0
"""The longest ``wait()`` waits."""

VIEWS = ("screen", "a11y")
"""What a desktop env observes: the screenshot, or it with the accessibility tree's text."""

VIEW_ACTIONS = {**a11y.A11Y_ACTIONS, **PIXEL_ACTIONS}
"""The a11y view's actions: on elements by id, and every pixel action (the oracle's)."""

WHEEL_NOTCH = 100
"""Pixels of ``scroll``'s ``dx``/``dy`` per wheel notch (X11 scrolls by notches)."""

GTK_SETTINGS = "[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\n"
"""A still screen: no blinking caret, no animations (a frame depends on the actions alone)."""

TASKS_PER_LEVEL = {"train": 10_000, "dev": 100, "test": 100}
"""Tasks per level in each split (seeds: any template of the level, any parameters)."""


@dataclass
class DesktopWorld:
    """One episode: the desktop, the task's dict, a scratch folder for the evaluator's copies,
    and the actions taken."""

    desktop: Desktop
    spec: dict[str, Any]
    scratch: Path
    history: list[str] = field(default_factory=list)


class DesktopTask(Task[DesktopWorld]):
    """One generated task: the template the seed picks among ``app``'s at the level."""

    def __init__(self, id: str, split: str, difficulty: str, seed: int, *, app: str) -> None:
        super().__init__(id, split, difficulty, seed)
        choices = osworld.templates(app, difficulty)
        self.template = choices[seed % len(choices)]
        self.spec = osworld.generate(self.template, seed)
        self.desktop: Desktop | None = None  # the env's, lent by DesktopTaskEnv.start

    def setup(self, rng: np.random.Generator) -> tuple[DesktopWorld, str]:
        if self.desktop is None:
            raise RuntimeError("DesktopTask.setup needs the env's desktop (DesktopTaskEnv.start)")
        desktop = self.desktop
        desktop.reset([])
        scratch = desktop.root / "scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(mode=0o700)
        osworld.run_config(desktop, self.spec, scratch)
        desktop.screen.move(desktop.width - 1, desktop.height - 1)
        settle(desktop, RESET_QUIET)  # the first frame of every reset alike: RESET_QUIET
        return DesktopWorld(desktop, self.spec, scratch), self.spec["instruction"]

    def validate(self, world: DesktopWorld) -> Verdict:
        score, details = osworld.evaluate(world.desktop, world.spec, world.scratch)
        return Verdict(score, score >= 1.0, details=details)

    def plan(self) -> list[str]:
        """The oracle's actions, in the pixel action language."""
        return list(self.spec["agentgym"]["oracle"])

    def solve(self, world: DesktopWorld) -> Any:
        plan = self.plan()
        taken = len(world.history)
        if taken >= len(plan) or world.history != plan[:taken]:
            return None
        return plan[taken]


class DesktopTaskEnv(TaskEnv[DesktopWorld]):
    """The desktop tasks of one application (see the module docstring)."""

    metadata: dict[str, Any] = {
        **TaskEnv.metadata,
        "supports_state_snapshot": False,  # a desktop's processes cannot be copied
        "multimodal": True,
        "needs_sandbox": True,  # a desktop per env: uids, namespaces, processes
        "needs_desktop": True,  # Xvfb and applications: the suite checks one such id a run
        "replay": "verdict",
        "task_kwargs": ("app",),  # the app only chooses the templates: one behaviour class
    }
    tools = web_actions.tools_of(PIXEL_ACTIONS)

    def __init__(
        self,
        app: str = "mousepad",
        width: int = 800,
        height: int = 600,
        view: str = "screen",
        **kwargs: Any,
    ) -> None:
        if view not in VIEWS:
            raise UsageError(f"view={view!r}: a desktop env's views are {', '.join(VIEWS)}")
        levels = [level for level in osworld.LEVELS if osworld.templates(app, level)]
        if not levels:
            apps = sorted({t.app for t in osworld.templates()})
            raise UsageError(f"no desktop task templates of app {app!r}; apps with some: {apps}")
        self.app = app
        self.tasks = GeneratedTaskSet(
            f"gui-desktop-{app}", partial(DesktopTask, app=app), levels, sizes=TASKS_PER_LEVEL
        )
        super().__init__(**kwargs)
        self.width, self.height, self.view = width, height, view
        screen = spaces.Box(0, 255, (height, width, 3), np.uint8)
        if view == "a11y":
            self.tools = web_actions.tools_of(VIEW_ACTIONS)
            self.action_space = ToolCall(self.tools)
            observed: spaces.Space[Any] = spaces.Dict(
                {"screenshot": screen, "text": Text(self.max_observation_length)}
            )
        else:
            observed = screen
        self.observation_space = observed  # an image, where TaskEnv's is text
        self._desktop: Desktop | None = None
        self._tree: a11y.A11yTree | None = None  # the view the agent saw last (a11y)
        self._feedback = ""

    # ------------------------------------------------------------------ episodes

    def start(self, task: Task[DesktopWorld]) -> tuple[DesktopWorld, str]:
        if self._desktop is None:
            self._desktop = Desktop(
                self.width,
                self.height,
                files={".config/gtk-3.0/settings.ini": GTK_SETTINGS},
                accessible=self.view == "a11y",
            )
        assert isinstance(task, DesktopTask)
        task.desktop = self._desktop
        try:
            return task.setup(self.np_random)
        finally:
            task.desktop = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        _, info = super().reset(seed=seed, options=options)
        self._feedback = info["goal"]
        info["feedback"] = self._feedback
        return self._observed(), info

    def step(self, action: Any) -> Any:
        _, reward, terminated, truncated, info = super().step(action)
        info["feedback"] = self._feedback
        return self._observed(), reward, terminated, truncated, info

    def close(self) -> None:
        super().close()
        if self._desktop is not None:
            desktop, self._desktop = self._desktop, None
            desktop.close()

    def _observed(self) -> Any:
        """The screenshot; in the a11y view with the tree's text, snapshot kept for the
        element ids of the next action."""
        assert self._desktop is not None
        frame = self._desktop.screen.screenshot()
        if self.view != "a11y":
            return frame
        self._tree = a11y.snapshot(self._desktop)
        return {"screenshot": frame, "text": self._clip(self._tree.text())}

    # ------------------------------------------------------------------ acting

    def act(self, world: DesktopWorld, action: str) -> str:
        self._feedback = ""
        try:
            steps = self._pixel_steps(action)
            for index, (name, args) in enumerate(steps):
                if index:  # type_into's typing after its click has placed the caret
                    settle(world.desktop)
                self._do(world, name, args)
        except InvalidAction as mistake:
            self._feedback = f"Invalid action: {mistake}"
            raise
        for name, args in steps:
            world.history.append(
                web_actions.format_action(name, *args.values(), table=PIXEL_ACTIONS)
            )
        world.desktop.check()
        if name == "wait":
            settle(world.desktop, WAIT_QUIET, WAIT_LIMIT)
        else:
            settle(world.desktop, TYPE_QUIET if name == "type" else QUIET)
        self._feedback = f"{name}: done."
        return self._feedback

    def _pixel_steps(self, action: str) -> list[tuple[str, dict[str, Any]]]:
        """The pixel actions ``action`` stands for: itself in the screen view; in the a11y
        view an element action becomes the clicks and typing at its element's centre in
        the view the agent saw."""
        if self.view != "a11y":
            return [web_actions.parse(action, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)]
        assert self._tree is not None  # taken by every reset and step
        pixels = a11y.translate(self._tree, action, allowed=tuple(VIEW_ACTIONS))
        return [web_actions.parse(p, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS) for p in pixels]

    def _do(self, world: DesktopWorld, name: str, args: dict[str, Any]) -> None:
        """Carry one pixel action out through XTEST; a bad value is an InvalidAction."""
        screen = world.desktop.screen
        try:
            if name in ("click", "double_click", "right_click", "move"):
                x, y = int(args["x"]), int(args["y"])
                if name == "move":
                    screen.move(x, y)
                else:
                    button = "right" if name == "right_click" else "left"
                    screen.click(x, y, button, count=2 if name == "double_click" else 1)
            elif name == "drag":
                screen.drag(*(int(args[k]) for k in ("x1", "y1", "x2", "y2")))
            elif name == "scroll":
                _scroll(screen.scroll, int(args["x"]), int(args["y"]), args["dx"], args["dy"])
            elif name == "type":
                screen.type_text(args["text"])
            elif name == "key":
                screen.key(args["combo"])
        except ValueError as mistake:
            raise InvalidAction(f"{name}: {mistake}") from None

    def observe(self, world: DesktopWorld) -> str:
        return self._feedback

    def state_key(self, world: DesktopWorld) -> str:
        _, details = osworld.evaluate(world.desktop, world.spec, world.scratch)
        return json.dumps({"history": world.history, "judged": details})

    def action_syntax(self) -> str:
        if self.view == "a11y":
            return a11y.action_syntax() + (
                "\nPixel actions work too (the screen is "
                f"{self.width} x {self.height}): click(x, y), drag, scroll, move."
            )
        return (
            f"The screen is {self.width} x {self.height} pixels; (0, 0) is its top left "
            f"corner. Act with one call per turn:\n"
            + web_actions.describe_actions(tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)
            + '\nExample: click(120, 45), type("hello"), key("Control+s").'
        )


def _scroll(scroll: Callable[..., None], x: int, y: int, dx: float, dy: float) -> None:
    """Pixels of wheel as notches (at least one where a pixel count is given)."""
    for amount, negative, positive in ((dy, "up", "down"), (dx, "left", "right")):
        if amount:
            notches = max(1, round(abs(amount) / WHEEL_NOTCH))
            scroll(x, y, positive if amount > 0 else negative, notches)


def activity(pids: Sequence[int]) -> tuple[int, bool]:
    """The CPU time (user and system clock ticks) the threads of ``pids`` have used, and
    whether one of them is running or waiting for a CPU (state R: on a loaded machine a
    starved thread uses no CPU time, yet it is not done). A gone thread counts nothing."""
    ticks, running = 0, False
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            running = running or fields[0] == b"R"
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of proc(5))
    return ticks, running


def settle(desktop: Desktop, quiet: float = QUIET, limit: float = SETTLE_LIMIT) -> None:
    """Wait until, over ``quiet`` seconds, the screen did not change and the applications
    neither used CPU nor wanted it (or ``limit`` seconds pass)."""
    deadline = time.monotonic() + limit
    grab = desktop.screen.screenshot
    last, (used, _) = grab(), activity(desktop.client_pids())
    while time.monotonic() < deadline:
        time.sleep(quiet)
        frame, (now, running) = grab(), activity(desktop.client_pids())
        if now == used and not running and np.array_equal(frame, last):
            return
        last, used = frame, now
