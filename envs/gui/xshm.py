"""Screenshots through the X server's shared memory (MIT-SHM), in-process.

A plain ``GetImage`` sends the whole screen through the X socket (3 MB at 1024x768, 32 bits
a pixel) and python-xlib parses it in Python. With MIT-SHM the server copies the pixels into
a System V shared-memory segment that this process has mapped, and the reply is 32 bytes.
python-xlib has no MIT-SHM module, so the three requests used (``QueryVersion``, ``Attach``,
``GetImage``; ``Detach`` on close) are declared here with its request framework, and the
segment is made with the C library's ``shmget``/``shmat`` through :mod:`ctypes`.

**Who may read the frames.** The X server runs as the desktop's leased uid and attaches the
segment itself, so the segment is handed to that uid (``IPC_SET``) with mode 0600: the server
and root can map it, the other desktops' uids cannot. It is marked for removal
(``IPC_RMID``) as soon as both sides have attached, so the kernel frees it when the last
one detaches, even if this process is killed: no segment outlives its desktop.

:func:`attach` returns None where the server lacks the extension or the kernel refuses the
segment; :class:`~agentgym.envs.gui.x11.X11Screen` then keeps the plain ``GetImage``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

import numpy as np
from Xlib import X, error
from Xlib.display import Display
from Xlib.protocol import rq

__all__ = ["SharedImage", "attach"]

EXTENSION = "MIT-SHM"
IPC_PRIVATE = 0
IPC_CREAT = 0o1000
IPC_RMID = 0
IPC_SET = 1
IPC_STAT = 2


class _QueryVersion(rq.ReplyRequest):  # type: ignore[misc]  # python-xlib is untyped
    _request = rq.Struct(rq.Card8("opcode"), rq.Opcode(0), rq.RequestLength())
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Bool("shared_pixmaps"),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.Card16("major_version"),
        rq.Card16("minor_version"),
        rq.Card16("uid"),
        rq.Card16("gid"),
        rq.Card8("pixmap_format"),
        rq.Pad(15),
    )


class _Attach(rq.Request):  # type: ignore[misc]  # python-xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(1),
        rq.RequestLength(),
        rq.Card32("shmseg"),
        rq.Card32("shmid"),
        rq.Bool("read_only"),
        rq.Pad(3),
    )


class _Detach(rq.Request):  # type: ignore[misc]  # python-xlib is untyped
    _request = rq.Struct(rq.Card8("opcode"), rq.Opcode(2), rq.RequestLength(), rq.Card32("shmseg"))


class _GetImage(rq.ReplyRequest):  # type: ignore[misc]  # python-xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(4),
        rq.RequestLength(),
        rq.Drawable("drawable"),
        rq.Int16("x"),
        rq.Int16("y"),
        rq.Card16("width"),
        rq.Card16("height"),
        rq.Card32("plane_mask"),
        rq.Card8("format"),
        rq.Pad(3),
        rq.Card32("shmseg"),
        rq.Card32("offset"),
    )
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Card8("depth"),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.Card32("visual"),
        rq.Card32("size"),
        rq.Pad(16),
    )


def _libc() -> Any:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.shmget.argtypes = (ctypes.c_int, ctypes.c_size_t, ctypes.c_int)
    libc.shmget.restype = ctypes.c_int
    libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmdt.argtypes = (ctypes.c_void_p,)
    libc.shmdt.restype = ctypes.c_int
    libc.shmctl.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
    libc.shmctl.restype = ctypes.c_int
    return libc


class _IpcPerm(ctypes.Structure):
    """``struct ipc_perm`` of glibc on 64-bit Linux (the fields ``IPC_SET`` reads first)."""

    _fields_ = [
        ("key", ctypes.c_int),
        ("uid", ctypes.c_uint),
        ("gid", ctypes.c_uint),
        ("cuid", ctypes.c_uint),
        ("cgid", ctypes.c_uint),
        ("mode", ctypes.c_ushort),
        ("pad1", ctypes.c_ushort),
        ("seq", ctypes.c_ushort),
        ("pad2", ctypes.c_ushort),
        ("unused1", ctypes.c_ulong),
        ("unused2", ctypes.c_ulong),
    ]


class _ShmidDs(ctypes.Structure):
    """``struct shmid_ds`` of glibc on 64-bit Linux, padded: only ``shm_perm`` is changed
    (read with ``IPC_STAT`` first, so the rest goes back as it was)."""

    _fields_ = [("shm_perm", _IpcPerm), ("rest", ctypes.c_byte * 128)]


class SharedImage:
    """A segment the size of the screen, attached by this process and by the X server."""

    def __init__(
        self,
        display: Display,
        opcode: int,
        root: Any,
        size: tuple[int, int],
        shmid: int,
        address: int,
    ) -> None:
        self._display, self._opcode, self._root = display, opcode, root
        self.width, self.height = size
        self._address = address
        self._wire = display.display  # python-xlib's protocol connection, which requests take
        self._seg = self._wire.allocate_resource_id()
        self._pixels = np.ctypeslib.as_array(
            ctypes.cast(address, ctypes.POINTER(ctypes.c_uint8)), shape=(self.height, self.width, 4)
        )
        refused = error.CatchError()
        _Attach(
            display=self._wire,
            opcode=self._opcode,
            onerror=refused,
            shmseg=self._seg,
            shmid=shmid,
            read_only=0,
        )
        display.sync()  # the server has attached: the segment may now be marked for removal
        self._closed = False
        self.attached = refused.get_error() is None
        """Whether the server attached the segment (it may refuse: another uid's, say)."""

    def grab(self) -> np.ndarray:
        """The whole screen as a new ``(height, width, 3)`` RGB array."""
        pixels = self.fetch()
        frame = np.empty((self.height, self.width, 3), dtype=np.uint8)
        for channel in range(3):  # channel by channel: faster than a reversed slice's copy
            frame[:, :, channel] = pixels[:, :, 2 - channel]
        return frame

    def fetch(self) -> np.ndarray:
        """Have the server write the screen into the segment; the segment as ``(height, width,
        4)`` BGRX (a view, overwritten by the next fetch)."""
        _GetImage(
            display=self._wire,
            opcode=self._opcode,
            drawable=self._root,
            x=0,
            y=0,
            width=self.width,
            height=self.height,
            plane_mask=0xFFFFFFFF,
            format=X.ZPixmap,
            shmseg=self._seg,
            offset=0,
        )
        return self._pixels

    def close(self, *, server_alive: bool = True) -> None:
        """Detach both sides (idempotent); the kernel then frees the segment."""
        if self._closed:
            return
        self._closed = True
        if server_alive:
            try:
                _Detach(display=self._wire, opcode=self._opcode, shmseg=self._seg)
                self._display.sync()
            except Exception:  # a server going away frees its side itself
                pass
        _libc().shmdt(ctypes.c_void_p(self._address))


def attach(display: Display, root: Any, width: int, height: int, owner: int) -> SharedImage | None:
    """A :class:`SharedImage` for ``display`` whose server runs as uid ``owner``, or None
    where MIT-SHM cannot be used (no extension, or the kernel refuses the segment)."""
    present = display.query_extension(EXTENSION)  # python-xlib has no module to load for it
    if present is None:
        return None
    reply = _QueryVersion(display=display.display, opcode=present.major_opcode)
    if (reply.major_version, reply.minor_version) < (1, 1):
        return None
    libc = _libc()
    shmid = libc.shmget(IPC_PRIVATE, width * height * 4, IPC_CREAT | 0o600)
    if shmid < 0:
        return None
    try:
        info = _ShmidDs()
        if libc.shmctl(shmid, IPC_STAT, ctypes.byref(info)) != 0:
            return None
        info.shm_perm.uid, info.shm_perm.gid, info.shm_perm.mode = owner, owner, 0o600
        if libc.shmctl(shmid, IPC_SET, ctypes.byref(info)) != 0:
            return None
        address = libc.shmat(shmid, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            return None
        image = SharedImage(display, present.major_opcode, root, (width, height), shmid, address)
        if not image.attached:
            image.close(server_alive=False)
            return None
        return image
    finally:
        libc.shmctl(shmid, IPC_RMID, None)  # freed once both sides have detached
