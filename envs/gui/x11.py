"""One X11 connection of a desktop: its screen as pixels, its mouse and keyboard through XTEST.

**Why in-process.** A screenshot by ``import -window root`` costs a subprocess (69 ms measured,
ENVIRONMENT.md) and ``xdotool`` one per action. Here one python-xlib connection, opened once
per desktop, reads the root window with ``GetImage`` and sends XTEST's fake input events; the
figures are in ``docs/envs/gui.md`` ("Desktop"). python-xlib has no MIT-SHM binding, so the
frame crosses the X socket once (a local Unix socket: a memory copy in the kernel).

**Why a cookie.** Every desktop's X server takes only clients that show its own
MIT-MAGIC-COOKIE-1 (:func:`write_xauthority`), so an application of one desktop cannot open
another desktop's display, read its screen or type into it.

**Faults.** A connection the server closed (Xvfb killed or crashed) raises
:class:`DesktopCrashedError`, an infrastructure error: the episode is errored, never scored.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import numpy as np
from Xlib import XK, X, display, error
from Xlib.ext import xtest

from agentgym.envs.gui import xshm
from agentgym.errors import EnvCrashedError

__all__ = [
    "DesktopCrashedError",
    "Window",
    "X11Screen",
    "keysym_of",
    "new_cookie",
    "write_xauthority",
]

FAMILY_LOCAL = 256
FAMILY_WILD = 65535
COOKIE = b"MIT-MAGIC-COOKIE-1"

KEY_ALIASES = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "shift": "Shift_L",
    "alt": "Alt_L",
    "super": "Super_L",
    "meta": "Super_L",
    "win": "Super_L",
    "enter": "Return",
    "return": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "backspace": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "space": "space",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "home": "Home",
    "end": "End",
    "pageup": "Prior",
    "pagedown": "Next",
    "insert": "Insert",
}
"""Lower-case names an agent may use for keys, beside X keysym names (``F5``, ``a``, ``Tab``)."""

CHAR_KEYS = {"\n": "Return", "\t": "Tab"}

REMAP_PAUSE = 0.05
"""Seconds to wait before a spare keycode is remapped again (see ``X11Screen._keycode``)."""

BUTTONS = {"left": 1, "middle": 2, "right": 3}
SCROLL_BUTTONS = {"up": 4, "down": 5, "left": 6, "right": 7}
"""X11 sends a wheel notch as a click of buttons 4 to 7."""

_CONNECT_LOCK = threading.Lock()
"""python-xlib reads the cookie file named by ``$XAUTHORITY`` while it connects: connections
are opened one at a time, each with the variable naming its own desktop's file."""


class Window(NamedTuple):
    """A top-level window: its X id, the pid its client gave (``_NET_WM_PID``, as the client
    sees it) and its WM_CLASS class (``Mousepad``)."""

    id: int
    pid: int
    wm_class: str


class DesktopCrashedError(EnvCrashedError):
    """The X server or an application of a desktop died under an episode (not by the agent's
    action); that episode is errored, and the evaluator goes on."""


def new_cookie() -> bytes:
    """A fresh 16-byte MIT-MAGIC-COOKIE-1."""
    return os.urandom(16)


def _field(value: bytes) -> bytes:
    return struct.pack(">H", len(value)) + value


def write_xauthority(path: Path, cookie: bytes, number: int | None = None) -> None:
    """Write an Xauthority file holding ``cookie``.

    With ``number`` (the display, once the server chose it) it has an entry for this host's
    name, the one python-xlib looks up, and a wildcard one, the one Xlib clients fall back to;
    without, one wildcard entry, enough for the server's ``-auth``.
    """
    entries = [(FAMILY_WILD, b"")]
    if number is not None:
        entries.insert(0, (FAMILY_LOCAL, socket.gethostname().encode()))
    digits = b"" if number is None else str(number).encode()
    data = b"".join(
        struct.pack(">H", family)
        + _field(address)
        + _field(digits)
        + _field(COOKIE)
        + _field(cookie)
        for family, address in entries
    )
    path.write_bytes(data)


def keysym_of(name: str) -> int:
    """The X keysym of a key name (``ctrl``, ``Return``, ``F5``, ``a``, ``é``); ValueError if
    there is none."""
    keysym = int(XK.string_to_keysym(KEY_ALIASES.get(name.lower(), name)))
    if keysym == X.NoSymbol and len(name) == 1:
        keysym = _char_keysym(name)
    if keysym == X.NoSymbol:
        known = ", ".join(sorted(KEY_ALIASES))
        raise ValueError(
            f"unknown key {name!r}: use an X keysym name (F5, Return, a) or one of {known}"
        )
    return keysym


def _char_keysym(char: str) -> int:
    if char in CHAR_KEYS:
        return int(XK.string_to_keysym(CHAR_KEYS[char]))
    code = ord(char)
    # Latin-1 keysyms equal their code points; the rest of Unicode is 0x01000000 + code point.
    return code if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF else 0x01000000 + code


class X11Screen:
    """A connection to one display: ``screenshot()`` and XTEST input. Not thread-safe: one
    episode drives it."""

    def __init__(self, number: int, xauthority: Path, server_uid: int | None = None) -> None:
        """Connect to display ``number`` with the cookie in ``xauthority``; given the uid the
        X server runs as, screenshots go through shared memory (:mod:`~agentgym.envs.gui.
        xshm`) where the server offers it, else through a plain ``GetImage``."""
        with _CONNECT_LOCK:
            saved = os.environ.get("XAUTHORITY")
            os.environ["XAUTHORITY"] = str(xauthority)
            try:
                self._display = display.Display(f":{number}")
            except (error.DisplayError, OSError) as failure:
                raise DesktopCrashedError(
                    f"cannot connect to X display :{number}: {failure}"
                ) from failure
            finally:
                if saved is None:
                    del os.environ["XAUTHORITY"]
                else:
                    os.environ["XAUTHORITY"] = saved
        self.number = number
        self._root = self._display.screen().root
        self.width = int(self._display.screen().width_in_pixels)
        self.height = int(self._display.screen().height_in_pixels)
        self._spares = self._spare_keycodes()
        self._next_spare = 0
        self._borrowed: dict[int, int] = {}  # keysym -> the spare keycode it is on
        self._closed = False
        self.broken = False
        """Whether the server dropped the connection (as opposed to :meth:`close`)."""
        self._shared: xshm.SharedImage | None = None
        if server_uid is not None:
            with self._guard("attaching shared memory"):
                self._shared = xshm.attach(
                    self._display, self._root, self.width, self.height, server_uid
                )

    @property
    def shared_memory(self) -> bool:
        """Whether screenshots come through MIT-SHM."""
        return self._shared is not None

    # ------------------------------------------------------------------ the connection

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """Turn a lost connection into :class:`DesktopCrashedError`."""
        if self._closed:
            raise DesktopCrashedError(f"display :{self.number} is closed ({doing})")
        try:
            yield
        except (error.ConnectionClosedError, OSError) as failure:
            self._closed = self.broken = True
            raise DesktopCrashedError(
                f"the X server of display :{self.number} went away while {doing}: {failure}"
            ) from failure

    def close(self) -> None:
        """Close the connection (idempotent; a dead server is fine)."""
        if self._shared is not None:  # also after a lost connection: our mapping stays
            shared, self._shared = self._shared, None
            shared.close(server_alive=not self._closed)
        if not self._closed:
            self._closed = True
            with contextlib.suppress(error.ConnectionClosedError, OSError):
                self._display.close()

    def sync(self) -> None:
        """Wait until the server has processed every request sent so far."""
        with self._guard("syncing"):
            self._display.sync()

    # ------------------------------------------------------------------ pixels

    def screenshot(self) -> np.ndarray:
        """The whole screen as a ``(height, width, 3)`` uint8 RGB array."""
        if self._shared is not None:
            with self._guard("taking a screenshot"):
                return self._shared.grab()
        with self._guard("taking a screenshot"):
            image = self._root.get_image(0, 0, self.width, self.height, X.ZPixmap, 0xFFFFFFFF)
        # A 24-bit TrueColor ZPixmap is 32 bits per pixel, little-endian BGRX. Copying channel
        # by channel into a new array takes 0.8 ms at 1024x768 (measured), a reversed slice
        # made contiguous 3.1 ms.
        pixels = np.frombuffer(image.data, dtype=np.uint8).reshape(self.height, self.width, 4)
        frame = np.empty((self.height, self.width, 3), dtype=np.uint8)
        for channel in range(3):
            frame[:, :, channel] = pixels[:, :, 2 - channel]
        return frame

    def windows(self) -> list[Window]:
        """The managed top-level windows, from the window manager's ``_NET_CLIENT_LIST``
        (EWMH), oldest first."""
        names = [self._display.intern_atom(n) for n in ("_NET_CLIENT_LIST", "_NET_WM_PID")]
        found = []
        with self._guard("listing windows"):
            clients = self._root.get_full_property(names[0], X.AnyPropertyType)
            for wid in clients.value if clients else ():
                window = self._display.create_resource_object("window", wid)
                try:
                    pid = window.get_full_property(names[1], X.AnyPropertyType)
                    wm_class = window.get_wm_class() or ("", "")
                except error.BadWindow:  # closed since the list was read
                    continue
                found.append(Window(int(wid), int(pid.value[0]) if pid else 0, wm_class[1]))
        return found

    def active_window(self) -> int:
        """The X id of the focused top-level window (``_NET_ACTIVE_WINDOW``), 0 if none."""
        atom = self._display.intern_atom("_NET_ACTIVE_WINDOW")
        with self._guard("reading the active window"):
            active = self._root.get_full_property(atom, X.AnyPropertyType)
        return int(active.value[0]) if active and len(active.value) else 0

    def title(self, window_id: int) -> str:
        """A top-level window's title (``_NET_WM_NAME``, else ``WM_NAME``), "" if it has none."""
        atoms = [self._display.intern_atom(n) for n in ("_NET_WM_NAME", "UTF8_STRING")]
        window = self._display.create_resource_object("window", window_id)
        with self._guard("reading a window's title"):
            try:
                name = window.get_full_property(atoms[0], atoms[1])
                value = name.value if name else window.get_wm_name()
            except error.BadWindow:
                return ""
        return value.decode(errors="replace") if isinstance(value, bytes) else str(value or "")

    def activate(self, window_id: int) -> None:
        """Ask the window manager to raise and focus a top-level window (EWMH's
        ``_NET_ACTIVE_WINDOW`` message, as a pager sends it)."""
        from Xlib.protocol import event

        atom = self._display.intern_atom("_NET_ACTIVE_WINDOW")
        message = event.ClientMessage(
            window=self._display.create_resource_object("window", window_id),
            client_type=atom,
            data=(32, [2, X.CurrentTime, 0, 0, 0]),
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        with self._guard("activating a window"):
            self._root.send_event(message, event_mask=mask)
            self._display.sync()

    def has_window_manager(self) -> bool:
        """Whether an EWMH window manager runs (it sets ``_NET_SUPPORTING_WM_CHECK``)."""
        atom = self._display.intern_atom("_NET_SUPPORTING_WM_CHECK")
        with self._guard("looking for the window manager"):
            return self._root.get_full_property(atom, X.AnyPropertyType) is not None

    # ------------------------------------------------------------------ input

    def move(self, x: int, y: int) -> None:
        with self._guard("moving the pointer"):
            xtest.fake_input(self._display, X.MotionNotify, x=self._x(x), y=self._y(y))
            self._display.sync()

    def click(self, x: int, y: int, button: str = "left", count: int = 1) -> None:
        """Move to ``(x, y)`` and click ``count`` times (2: a double click)."""
        code = BUTTONS.get(button)
        if code is None:
            raise ValueError(f"mouse button {button!r}: use one of {', '.join(BUTTONS)}")
        self._click(x, y, code, count, "clicking")

    def _click(self, x: int, y: int, code: int, count: int, doing: str) -> None:
        with self._guard(doing):
            xtest.fake_input(self._display, X.MotionNotify, x=self._x(x), y=self._y(y))
            for _ in range(count):
                xtest.fake_input(self._display, X.ButtonPress, code)
                xtest.fake_input(self._display, X.ButtonRelease, code)
            self._display.sync()

    def drag(self, x1: int, y1: int, x2: int, y2: int, steps: int = 8) -> None:
        """Press the left button at ``(x1, y1)``, move in ``steps`` to ``(x2, y2)``, release:
        toolkits start a drag only after the pointer moved a few pixels with the button down."""
        with self._guard("dragging"):
            xtest.fake_input(self._display, X.MotionNotify, x=self._x(x1), y=self._y(y1))
            xtest.fake_input(self._display, X.ButtonPress, 1)
            self._display.sync()
            for step in range(1, steps + 1):
                x = x1 + (x2 - x1) * step // steps
                y = y1 + (y2 - y1) * step // steps
                xtest.fake_input(self._display, X.MotionNotify, x=self._x(x), y=self._y(y))
                self._display.sync()
                time.sleep(0.005)
            xtest.fake_input(self._display, X.ButtonRelease, 1)
            self._display.sync()

    def scroll(self, x: int, y: int, direction: str = "down", clicks: int = 1) -> None:
        """Turn the wheel ``clicks`` notches at ``(x, y)``."""
        code = SCROLL_BUTTONS.get(direction)
        if code is None:
            raise ValueError(
                f"scroll direction {direction!r}: use one of {', '.join(SCROLL_BUTTONS)}"
            )
        self._click(x, y, code, clicks, "scrolling")

    def key(self, combo: str) -> None:
        """Press a combination such as ``ctrl+s``, ``ctrl+shift+Tab`` or ``Return``: each key
        down in order, then up in reverse."""
        names = [part for part in combo.replace(" ", "").split("+") if part]
        if not names:
            raise ValueError(
                f"empty key combination {combo!r}: write keys joined by +, like ctrl+s"
            )
        keysyms = [keysym_of(name) for name in names]
        with self._guard("pressing keys"):
            codes = [self._keycode(keysym)[0] for keysym in keysyms]
            for code in codes:
                xtest.fake_input(self._display, X.KeyPress, code)
            for code in reversed(codes):
                xtest.fake_input(self._display, X.KeyRelease, code)
            self._display.sync()

    def type_text(self, text: str) -> None:
        """Type ``text`` a character at a time, with Shift where the keyboard map needs it and
        a spare keycode remapped for characters the map lacks."""
        shift = self._keycode(int(XK.string_to_keysym("Shift_L")))[0]
        with self._guard("typing"):
            for char in text:
                code, shifted = self._keycode(_char_keysym(char))
                if shifted:
                    xtest.fake_input(self._display, X.KeyPress, shift)
                xtest.fake_input(self._display, X.KeyPress, code)
                xtest.fake_input(self._display, X.KeyRelease, code)
                if shifted:
                    xtest.fake_input(self._display, X.KeyRelease, shift)
                self._display.sync()

    # ------------------------------------------------------------------ helpers

    def _x(self, x: int) -> int:
        return self._inside(x, self.width, "x")

    def _y(self, y: int) -> int:
        return self._inside(y, self.height, "y")

    @staticmethod
    def _inside(value: int, size: int, axis: str) -> int:
        if not 0 <= int(value) < size:
            raise ValueError(f"{axis}={value} is off the screen: it must be in 0..{size - 1}")
        return int(value)

    def _keycode(self, keysym: int) -> tuple[int, bool]:
        """The keycode typing ``keysym`` and whether it needs Shift; a keysym the keyboard map
        lacks is put on a spare keycode (as xdotool does)."""
        for code, index in self._display.keysym_to_keycodes(keysym):
            if index in (0, 1):
                return code, index == 1
        if keysym in self._borrowed:
            return self._borrowed[keysym], False
        # Spare keycodes are lent round-robin: a client reads the map when it handles a key
        # event, so a keycode remapped while its last press is still queued would type the
        # new character twice. Before one is reused, the clients get a moment to catch up.
        code = self._spares[self._next_spare % len(self._spares)]
        self._next_spare += 1
        if self._next_spare > len(self._spares):
            time.sleep(REMAP_PAUSE)
        self._borrowed = {k: c for k, c in self._borrowed.items() if c != code}
        self._borrowed[keysym] = code
        self._display.change_keyboard_mapping(code, [(keysym, keysym)])
        self._display.sync()
        return code, False

    def _spare_keycodes(self) -> list[int]:
        """The keycodes with no keysym: the ones characters the map lacks borrow."""
        first = self._display.display.info.min_keycode
        last = self._display.display.info.max_keycode
        mapping = self._display.get_keyboard_mapping(first, last - first + 1)
        spares = [first + offset for offset, syms in enumerate(mapping) if not any(syms)]
        return spares or [last]

    def __repr__(self) -> str:
        return f"X11Screen(:{self.number}, {self.width}x{self.height})"
