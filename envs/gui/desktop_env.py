"""The first desktop task: type a sentence into mousepad and save it under a name.

The first desktop task, end to end through the single-agent contract: a real desktop
(:class:`~agentgym.envs.gui.desktop.Desktop`), observed as a screenshot ``Box(H, W, 3,
uint8)``, acted on with the pixel action language (:mod:`agentgym.envs.gui.pixel_actions`:
``click(x, y)``, ``type("...")``, ``key("Control+s")``...) through XTEST, and judged from the
file mousepad saved in the desktop's home, never from the screen.

**Waiting.** An application handles input on its own time: after each action the step waits
until the screen has not changed for :data:`QUIET` seconds (at most :data:`SETTLE_LIMIT`), so
the frame the agent gets shows what its action did (a dialog that opened) and the next action
meets the screen that frame showed.

**Oracle.** The task's plan is four actions an agent has too: type the sentence, ``Control+s``
(GTK's Save As dialog, in the home), type the file name, ``Enter``. It is played while the
episode's actions are its prefix; after any other action the oracle has no plan (None).

**Not registered yet.** :class:`DesktopNotesEnv` passes ``agentgym check`` (registered for
the run as ``gui/MousepadNotes-v0``: 9 checks, snapshot skipped, oracle 1.00, random and
task-blind 0.00), but the check took 168 s, mostly the :data:`QUIET` of every step, and the
suite checks every registered id: the id waits for the OSWorld-format tasks and a cheaper
settle.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.gui.desktop import Desktop
from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS
from agentgym.envs.web import actions as web_actions
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = ["DesktopNotesEnv", "NotesTask"]

QUIET = 0.75
"""Seconds without a change on the screen after which an action's effect counts as shown.
Mousepad writes a file 0.52-0.57 s after its Save As dialog gets Enter (measured, with the
screen still all that time), so a shorter quiet ends some steps before their effect."""

RESET_QUIET = 0.3
"""The quiet that ends a reset: mousepad's new window draws once and stays still."""

SETTLE_LIMIT = 3.0
"""The longest a step waits for the screen to settle (a blinking caret never would: the
desktop's GTK settings turn blinking off)."""

WHEEL_NOTCH = 100
"""Pixels of ``scroll``'s ``dx``/``dy`` per wheel notch (X11 scrolls by notches)."""

GTK_SETTINGS = "[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\n"
"""A still screen: no blinking caret, no animations (a frame depends on the actions alone)."""

WORDS = [
    "apple",
    "river",
    "stone",
    "cloud",
    "paper",
    "green",
    "quiet",
    "seven",
    "window",
    "garden",
    "orange",
    "little",
    "market",
    "winter",
    "summer",
    "bright",
    "silver",
    "yellow",
    "candle",
    "forest",
    "music",
    "letter",
    "morning",
    "purple",
    "rabbit",
]
NAMES = ("notes.txt", "todo.txt", "draft.txt", "memo.txt", "list.txt", "ideas.txt")


@dataclass
class NotesWorld:
    """One episode: the desktop, what to write where, and the actions taken."""

    desktop: Desktop
    sentence: str
    filename: str
    history: list[str] = field(default_factory=list)


class NotesTask(Task[NotesWorld]):
    """Write ``sentence`` into mousepad and save it as ``filename`` in the home."""

    def __init__(self, id: str, split: str, difficulty: str, seed: int) -> None:
        super().__init__(id, split, difficulty, seed)
        rng = np.random.default_rng(seed)
        words = [str(w) for w in rng.choice(WORDS, size=int(rng.integers(4, 8)), replace=False)]
        self.sentence = " ".join(words).capitalize() + "."
        self.filename = str(rng.choice(NAMES))
        self.desktop: Desktop | None = None  # the env's, lent by DesktopNotesEnv.start

    def setup(self, rng: np.random.Generator) -> tuple[NotesWorld, str]:
        if self.desktop is None:
            raise RuntimeError("NotesTask.setup needs the env's desktop (DesktopNotesEnv.start)")
        self.desktop.reset(["mousepad"])
        self.desktop.screen.move(self.desktop.width - 1, self.desktop.height - 1)
        _settle(self.desktop.screen.screenshot, RESET_QUIET)  # focused is not yet fully drawn
        goal = (
            f"In the text editor on the screen, type exactly this sentence: {self.sentence}\n"
            f"Then save the document in the home folder as {self.filename}."
        )
        return NotesWorld(self.desktop, self.sentence, self.filename), goal

    def validate(self, world: NotesWorld) -> Verdict:
        path = world.desktop.home / world.filename
        try:
            saved = path.read_text(errors="replace")
        except OSError:
            return Verdict(0.0, False, details=f"{world.filename} is not saved in the home")
        right = saved.rstrip("\n") == world.sentence
        details = "saved with the sentence" if right else f"{world.filename} holds {saved!r:.80}"
        return Verdict(float(right), right, details=details)

    def plan(self) -> list[str]:
        """The oracle's actions, in the pixel action language."""
        return [
            web_actions.format_action("type", self.sentence, table=PIXEL_ACTIONS),
            web_actions.format_action("key", "Control+s", table=PIXEL_ACTIONS),
            web_actions.format_action("type", self.filename, table=PIXEL_ACTIONS),
            web_actions.format_action("key", "Enter", table=PIXEL_ACTIONS),
        ]

    def solve(self, world: NotesWorld) -> Any:
        plan = self.plan()
        taken = len(world.history)
        if taken >= len(plan) or world.history != plan[:taken]:
            return None
        return plan[taken]


class DesktopNotesEnv(TaskEnv[NotesWorld]):
    """Type a sentence into mousepad and save it (see the module docstring)."""

    metadata: dict[str, Any] = {
        **TaskEnv.metadata,
        "supports_state_snapshot": False,  # a desktop's processes cannot be copied
        "multimodal": True,
        "needs_sandbox": True,  # a desktop per env: uids, namespaces, processes
        "replay": "verdict",
    }
    tools = web_actions.tools_of(PIXEL_ACTIONS)

    def __init__(self, width: int = 800, height: int = 600, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet(
            "gui-desktop-notes",
            NotesTask,
            ("default",),
            sizes={"train": 10_000, "dev": 100, "test": 100},
        )
        super().__init__(**kwargs)
        self.width, self.height = width, height
        # An image, not TaskEnv's text: the base class declares Env[str, str].
        self.observation_space = spaces.Box(0, 255, (height, width, 3), np.uint8)  # type: ignore[assignment]
        self._desktop: Desktop | None = None
        self._feedback = ""

    # ------------------------------------------------------------------ episodes

    def start(self, task: Task[NotesWorld]) -> tuple[NotesWorld, str]:
        if self._desktop is None:
            self._desktop = Desktop(
                self.width, self.height, files={".config/gtk-3.0/settings.ini": GTK_SETTINGS}
            )
        assert isinstance(task, NotesTask)
        task.desktop = self._desktop
        try:
            return task.setup(self.np_random)
        finally:
            task.desktop = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        _, info = super().reset(seed=seed, options=options)
        self._feedback = info["goal"]
        info["feedback"] = self._feedback
        return self._frame(), info

    def step(self, action: Any) -> Any:
        _, reward, terminated, truncated, info = super().step(action)
        info["feedback"] = self._feedback
        return self._frame(), reward, terminated, truncated, info

    def close(self) -> None:
        super().close()
        if self._desktop is not None:
            desktop, self._desktop = self._desktop, None
            desktop.close()

    def _frame(self) -> np.ndarray:
        assert self._desktop is not None
        return self._desktop.screen.screenshot()

    # ------------------------------------------------------------------ acting

    def act(self, world: NotesWorld, action: str) -> str:
        self._feedback = ""
        try:
            name, args = web_actions.parse(action, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)
            self._do(world, name, args)
        except InvalidAction as mistake:
            self._feedback = f"Invalid action: {mistake}"
            raise
        world.history.append(web_actions.format_action(name, *args.values(), table=PIXEL_ACTIONS))
        world.desktop.check()
        _settle(world.desktop.screen.screenshot)
        self._feedback = f"{name}: done."
        return self._feedback

    def _do(self, world: NotesWorld, name: str, args: dict[str, Any]) -> None:
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

    def observe(self, world: NotesWorld) -> str:
        return self._feedback

    def state_key(self, world: NotesWorld) -> str:
        path = world.desktop.home / world.filename
        saved = path.read_text(errors="replace") if path.is_file() else None
        return json.dumps({"history": world.history, "saved": saved})

    def action_syntax(self) -> str:
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


def _settle(grab: Callable[[], np.ndarray], quiet: float = QUIET) -> None:
    """Wait until two frames ``quiet`` seconds apart are the same (or the limit)."""
    deadline = time.monotonic() + SETTLE_LIMIT
    last = grab()
    while time.monotonic() < deadline:
        time.sleep(quiet)
        frame = grab()
        if np.array_equal(frame, last):
            return
        last = frame
