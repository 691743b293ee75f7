"""The desktop core: an isolated Xvfb + openbox + applications, XTEST input, pixels, reset,
and close leaving nothing behind. Results are read from files the applications saved, never
from the screen."""

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("Xlib", reason="the desktop needs python-xlib (the gui extra)")

from agentgym.checker import check_leaks
from agentgym.envs.gui.desktop import Desktop, desktop_problem
from agentgym.envs.gui.x11 import DesktopCrashedError, X11Screen
from agentgym.errors import UsageError
from agentgym.sandbox.uids import left_behind

pytestmark = pytest.mark.skipif(
    desktop_problem() is not None, reason=f"no desktop here: {desktop_problem()}"
)

DEADLINE = 10.0


def wait_for(condition, what, timeout=DEADLINE):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def leftovers(desktop):
    """What of ``desktop`` is still on the host after close: processes of its uid, its lock
    file and socket, its temporary directory."""
    found = [f"process {pid}" for pid in left_behind(desktop.uid)]
    for path in (Path(f"/tmp/.X{desktop.number}-lock"), Path(f"/tmp/.X11-unix/X{desktop.number}")):
        if path.exists():
            found.append(str(path))
    if desktop.root.exists():
        found.append(str(desktop.root))
    found += [f"shared-memory segment {shmid}" for shmid in segments_of(desktop.uid)]
    return found


def segments_of(uid):
    """The System V shared-memory segments this process made for ``uid``: {shmid: (mode,
    attachments)} (the kernel prints modes in octal). Another test worker's desktop may
    hold the uid now: its segments have another creator."""
    rows = [line.split() for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
    return {
        int(r[1]): (int(r[2], 8) & 0o777, int(r[6]))
        for r in rows
        if int(r[7]) == uid and int(r[4]) == os.getpid()
    }


def save_as(screen, name):
    """Mousepad's ctrl+s on a new document opens GTK's Save As dialog: type a name, Enter."""
    screen.key("ctrl+s")
    wait_for(lambda: len(screen.windows()) == 2, "the Save As dialog")
    screen.type_text(name)
    time.sleep(0.3)  # the name entry's completion settles; an Enter during it is swallowed
    screen.key("Return")


@pytest.fixture
def desktop():
    with Desktop() as desktop:
        yield desktop


def test_start_close_cycles_leave_no_process_display_or_directory():
    closed = []

    def touch(desktop, index):
        frame = desktop.screen.screenshot()
        assert frame.shape == (768, 1024, 3)
        closed.append(desktop)

    check_leaks(Desktop, "desktop", cycles=20, seed=0, touch=touch)
    assert len(closed) > 20
    assert [leftovers(d) for d in closed if leftovers(d)] == []
    assert len({d.number for d in closed}) <= 2, "display numbers are reused, not accumulated"


def test_typing_into_mousepad_and_saving_writes_the_file(desktop):
    desktop.reset(["mousepad"])
    text = "Hello, World! 1+1=2 ~ é €\nsecond line"
    desktop.screen.type_text(text)
    save_as(desktop.screen, "notes.txt")
    saved = desktop.home / "notes.txt"
    wait_for(lambda: saved.exists() and saved.read_text() == text, "notes.txt")
    assert saved.stat().st_uid == desktop.uid


def test_screenshot_has_the_display_shape_and_shows_an_opened_app(desktop):
    empty = desktop.screen.screenshot()
    assert empty.shape == (768, 1024, 3) and empty.dtype == np.uint8
    assert len(np.unique(empty.reshape(-1, 3), axis=0)) == 1  # Xvfb -br: a black root
    desktop.reset(["xterm"])
    frame = desktop.screen.screenshot()
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 1


def test_screenshots_come_through_shared_memory_only_the_server_may_map(desktop):
    desktop.reset(["xterm"])
    assert desktop.screen.shared_memory
    plain = X11Screen(desktop.number, desktop.runtime / "Xauthority")  # GetImage
    try:
        assert not plain.shared_memory
        assert np.array_equal(desktop.screen.screenshot(), plain.screenshot())
    finally:
        plain.close()
    # Handed to the server's uid, mode 0600, attached by the server and by us: no other
    # desktop's uid can read the frames.
    assert list(segments_of(desktop.uid).values()) == [(0o600, 2)]


def test_apps_run_as_the_desktop_uid_without_network(desktop):
    pid = desktop.launch("mousepad")
    assert os.stat(f"/proc/{pid}").st_uid == desktop.uid != 0
    assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    assert Path(f"/proc/{pid}/net/dev").read_text().count(":") == 1  # loopback alone
    assert (desktop.home.stat().st_uid, desktop.home.stat().st_mode & 0o777) == (desktop.uid, 0o700)


def test_two_desktops_at_once_do_not_see_each_other():
    with Desktop() as one, Desktop() as two:
        assert one.number != two.number and one.uid != two.uid and one.home != two.home
        one.reset(["mousepad"])
        assert [w.wm_class for w in one.screen.windows()] == ["Mousepad"]
        assert two.screen.windows() == []
        assert len(np.unique(two.screen.screenshot().reshape(-1, 3), axis=0)) == 1
        with pytest.raises(DesktopCrashedError, match="cannot connect"):
            X11Screen(two.number, one.runtime / "Xauthority")  # one's cookie is not two's


def test_reset_restores_the_home_and_relaunches_the_apps():
    with Desktop(files={"docs/todo.txt": "buy milk\n"}) as desktop:
        first = desktop.launch("mousepad")
        (desktop.home / "docs/todo.txt").write_text("changed")
        (desktop.home / "stray.txt").write_text("left by the last episode")
        desktop.reset(["mousepad"])
        assert (desktop.home / "docs/todo.txt").read_text() == "buy milk\n"
        assert not (desktop.home / "stray.txt").exists()
        assert not Path(f"/proc/{first}").exists()
        assert [w.wm_class for w in desktop.screen.windows()] == ["Mousepad"]


def test_a_killed_x_server_is_a_typed_error_and_close_still_cleans_up():
    with Desktop() as desktop:  # closed even when an assertion fails
        os.kill(desktop._xvfb_pid, signal.SIGKILL)
        with pytest.raises(DesktopCrashedError, match="went away"):
            for _ in range(50):  # the kill lands between two requests
                desktop.screen.screenshot()
                time.sleep(0.02)
        deadline = time.monotonic() + DEADLINE
        with pytest.raises(DesktopCrashedError, match=r"Xvfb .*killed by signal 9"):
            while time.monotonic() < deadline:  # as soon as the server's exit is seen
                desktop.check()
                time.sleep(0.05)
        desktop.close()
        assert leftovers(desktop) == []


def test_a_crashed_app_is_a_typed_error_but_quitting_it_is_not(desktop):
    pid = desktop.launch("mousepad")
    desktop.screen.key("ctrl+q")  # the agent quits: exit status 0, its own doing
    wait_for(lambda: desktop.screen.windows() == [], "mousepad to quit")
    desktop.check()
    pid = desktop.launch("mousepad")
    # From outside its PID namespace (it is PID 1 there) only SIGKILL reaches it; a fault of
    # its own (SIGSEGV) would kill it the same way.
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + DEADLINE
    with pytest.raises(DesktopCrashedError, match=r"mousepad of display :\d+ (was killed|exited)"):
        while time.monotonic() < deadline:  # its exit is seen once the kernel reaped it
            desktop.check()
            time.sleep(0.02)


def test_pointer_actions_reach_the_server(desktop):
    screen = desktop.screen
    screen.move(100, 200)
    pointer = screen._root.query_pointer()
    assert (pointer.root_x, pointer.root_y) == (100, 200)
    desktop.reset(["mousepad"])
    before = screen.screenshot()
    screen.click(500, 400, button="right")  # mousepad's context menu opens
    wait_for(lambda: not np.array_equal(screen.screenshot(), before), "the context menu")
    screen.key("Escape")
    screen.drag(300, 300, 600, 320)
    screen.scroll(500, 400, "down", clicks=3)
    screen.click(500, 400, count=2)
    desktop.check()


def test_bad_input_is_one_clear_error(desktop):
    with pytest.raises(ValueError, match="x=5000 is off the screen"):
        desktop.screen.click(5000, 10)
    with pytest.raises(ValueError, match="unknown key 'hyperdrive'"):
        desktop.screen.key("hyperdrive")
    with pytest.raises(ValueError, match="mouse button 'thumb'"):
        desktop.screen.click(10, 10, button="thumb")
    with pytest.raises(UsageError, match="unknown application 'gimp'"):
        desktop.launch("gimp")
