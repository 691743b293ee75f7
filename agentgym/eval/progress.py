"""Progress of a run on stderr: a live bar on a terminal, a plain line every few seconds
elsewhere (a log file, CI, ``make demo | tee``), so a redirected run is never silent.

Both count the same things: episodes done of the plan, success so far (the share of scored
episodes that passed, every episode weighing the same: a running count, not the headline),
errored episodes, and the first errored episode of each kind with its reason.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from agentgym.eval.stats import episode_passed, episode_tokens
from agentgym.ledger import EpisodeRecord

__all__ = ["PLAIN_EVERY_SECONDS", "LiveProgress", "PlainProgress", "Progress", "start_progress"]

PLAIN_EVERY_SECONDS = 10.0
"""How often a run whose stderr is not a terminal prints its progress line (and once more
at the end)."""


class Progress:
    """What both displays count; :meth:`show` and :meth:`finish` draw it."""

    def __init__(self, total: int, done: int, clock: Callable[[], float]) -> None:
        self.total, self.done = total, done
        self.scored = self.passed = self.errored = self.tokens = self.finished = 0
        self.error_kinds: set[str] = set()  # each shown once, with its first message
        self.clock = clock
        self.started = clock()

    def update(self, record: EpisodeRecord) -> None:
        """Count a finished episode."""
        self.done += 1
        self.finished += 1
        if record.status == "errored":
            self.errored += 1
            reason = self._new_error(record)
            if reason:
                self.say(reason)
        else:
            self.scored += 1
            self.passed += episode_passed(record)
        self.tokens += sum(episode_tokens(record))
        self.show()

    def _new_error(self, record: EpisodeRecord) -> str | None:
        """An errored episode's reason, the first of each kind only (``the agent raised
        ValueError``): the errored count says how many followed."""
        reason = str(record.error or "unknown error").split("; last: ", 1)[-1]
        kind = reason.split(":", 1)[0]
        if kind in self.error_kinds:
            return None
        self.error_kinds.add(kind)
        where = f"{record.spec.env_id} {record.spec.task_id}"
        return (
            f"errored: {where}: {reason[:500]} (further episodes errored this way are "
            f"counted, not shown)"
        )

    @property
    def success(self) -> float:
        return self.passed / max(self.scored, 1)

    async def keep_alive(self) -> None:
        """Show the progress while no episode ends (long episodes, a model loading): run
        as a task beside the episodes, cancelled when they are done. The live bar redraws
        itself; this is for displays that draw only when told."""

    def say(self, line: str) -> None:
        raise NotImplementedError

    def show(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        raise NotImplementedError


class PlainProgress(Progress):
    """One plain line every :data:`PLAIN_EVERY_SECONDS` (and at the end), for a stream that
    is not a terminal: ``episodes 12/98, success so far 8.3%, errored 0, 3.1 ep/min, eta
    4m10s``, also while no episode ends (:meth:`keep_alive`). The clock and the sleep are
    injectable, so a test needs no waiting."""

    def __init__(
        self,
        total: int,
        done: int,
        *,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        every: float | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(total, done, clock)
        self.stream, self.sleep = stream, sleep
        self.every = PLAIN_EVERY_SECONDS if every is None else every
        self.last_shown = self.started

    async def keep_alive(self) -> None:
        while True:
            await self.sleep(max(self.every - (self.clock() - self.last_shown), 0.1))
            self.show()

    def say(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def show(self) -> None:
        if self.clock() - self.last_shown >= self.every:
            self.say(self.line())

    def finish(self) -> None:
        self.say(self.line())

    def line(self) -> str:
        """The progress as one line; the rate counts only this session's episodes (not
        those a resume found done)."""
        self.last_shown = now = self.clock()
        minutes = max(now - self.started, 1e-9) / 60
        rate = self.finished / minutes
        line = (
            f"episodes {self.done}/{self.total}, success so far {100 * self.success:.1f}%, "
            f"errored {self.errored}, {rate:.1f} ep/min"
        )
        if self.finished and self.done < self.total:
            line += f", eta {_duration(60 * (self.total - self.done) / rate)}"
        return line


def _duration(seconds: float) -> str:
    """``4m10s``, ``1h02m``, ``9s``."""
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class LiveProgress(Progress):
    """A live progress bar on a terminal (rich): episodes, success so far, errored, tokens/s."""

    def __init__(self, total: int, done: int, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar

        super().__init__(total, done, time.monotonic)
        self.bar = Bar(
            TextColumn("episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(file=stream),
        )
        self.task = self.bar.add_task("run", total=total, completed=done, stats="")
        self.bar.start()

    def say(self, line: str) -> None:
        self.bar.console.print(line, markup=False, highlight=False)

    def show(self) -> None:
        stats = f"success {self.success:.0%}  errored {self.errored}"
        if self.tokens:
            rate = self.tokens / max(self.clock() - self.started, 1e-9)
            stats += f"  {rate:,.0f} tok/s"
        self.bar.update(self.task, completed=self.done, stats=stats)

    def finish(self) -> None:
        """Draw the last state and give the terminal back."""
        self.bar.stop()


def start_progress(total: int, done: int, stream: Any = None) -> Progress:
    """The display for a run of ``total`` episodes, ``done`` of them found already recorded:
    the live bar when ``stream`` (default stderr) is a terminal, plain lines otherwise."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return LiveProgress(total, done, stream)
    return PlainProgress(total, done, stream=stream)
