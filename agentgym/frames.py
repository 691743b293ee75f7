"""Frames: the images in observations (a GUI env's screenshots), kept apart from the text.

A **frame** is an image as Gymnasium's image spaces hold one: a ``uint8`` array of shape
``(H, W, 3)`` (RGB) or ``(H, W, 4)`` (RGBA), the observation itself or a value of a dict
observation (``{"screenshot": frame, "text": tree}``). Text helps no one read one: as JSON a
800 x 600 screenshot is 1.4 million numbers. So:

* the **ledger** writes each frame once, as a PNG file under the run directory, and the
  record holds a **frame reference** ``{"sha256", "path", "shape"}`` in its place
  (:class:`FrameStore`). The file is named by the sha256 of the frame's pixels
  (``frames/ab/ab12….png``): a frame seen again (a screen an action did not change, the
  same page in two episodes) is stored once, a replay of the same screen names the same
  file, and the name is the same whatever PNG encoder wrote it;
* the **agents**: a vision endpoint gets the frame as a PNG data URL (:func:`png_data_url`),
  a text model the text beside it (:func:`split_frames` takes the frames out).

PNG files are written here with :mod:`zlib` (no imaging library in the core): 8-bit RGB or
RGBA, rows unfiltered. On screenshots (flat areas, anti-aliased text) that is smaller than
PNG's "Up" filter or Pillow's adaptive choice, and faster: a 1024 x 768 shop page is 74 kB,
written in about 15 ms.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import threading
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "FRAME_DIR",
    "FrameStore",
    "encode_png",
    "frame_ref",
    "has_frames",
    "is_frame",
    "is_frame_ref",
    "png_data_url",
    "replace_frames",
    "split_frames",
    "text_beside",
]

FRAME_DIR = "frames"
"""Where a run directory keeps its frames: ``frames/<first 2 hex digits>/<sha256>.png``."""

_REF_KEYS = frozenset({"sha256", "path", "shape"})


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a frame: a ``uint8`` array of shape ``(H, W, 3)`` or ``(H, W, 4)``."""
    return (
        isinstance(value, np.ndarray)
        and value.dtype == np.uint8
        and value.ndim == 3
        and value.shape[2] in (3, 4)
        and value.shape[0] > 0
        and value.shape[1] > 0
    )


def is_frame_ref(value: Any) -> bool:
    """Whether ``value`` is a frame reference as a record holds one (read back from JSON)."""
    return (
        isinstance(value, Mapping)
        and set(value) == _REF_KEYS
        and isinstance(value["sha256"], str)
        and isinstance(value["path"], str)
    )


def frame_ref(frame: np.ndarray) -> dict[str, Any]:
    """The reference a record holds in place of ``frame`` (computed, nothing written): the
    sha256 of its shape and pixels, the path of its PNG under the run directory, its shape."""
    pixels = np.ascontiguousarray(frame)
    digest = hashlib.sha256("x".join(map(str, pixels.shape)).encode() + b"\n")
    digest.update(pixels.data)
    sha256 = digest.hexdigest()
    return {
        "sha256": sha256,
        "path": f"{FRAME_DIR}/{sha256[:2]}/{sha256}.png",
        "shape": list(pixels.shape),
    }


def encode_png(frame: np.ndarray) -> bytes:
    """``frame`` as PNG bytes (8-bit RGB or RGBA, unfiltered rows, zlib level 6)."""
    if not is_frame(frame):
        raise ValueError(f"not a frame (uint8, H x W x 3 or 4): {_describe(frame)}")
    height, width, channels = frame.shape
    rows = np.ascontiguousarray(frame).reshape(height, width * channels)
    filtered = np.zeros((height, width * channels + 1), np.uint8)  # filter byte 0: "None"
    filtered[:, 1:] = rows
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if channels == 3 else 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(filtered.tobytes(), 6))
        + _chunk(b"IEND", b"")
    )


def png_data_url(frame: np.ndarray) -> str:
    """``frame`` as a ``data:image/png;base64,...`` URL (an image part of a chat request)."""
    return "data:image/png;base64," + base64.b64encode(encode_png(frame)).decode("ascii")


def _chunk(kind: bytes, data: bytes) -> bytes:
    checksum = zlib.crc32(data, zlib.crc32(kind))
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", checksum)


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype} shaped {value.shape}"
    return type(value).__name__


def split_frames(observation: Any, test: Callable[[Any], bool] = is_frame) -> tuple[Any, list[Any]]:
    """``(rest, frames)``: the frames of an observation (itself, or its dict's values, in
    order) and what is left of it (``None`` when it was a frame; the dict without them).
    ``test`` tells a frame (:func:`is_frame_ref` for a record read back)."""
    if test(observation):
        return None, [observation]
    if isinstance(observation, Mapping):
        frames = [value for value in observation.values() if test(value)]
        if frames:
            rest = {key: value for key, value in observation.items() if not test(value)}
            return rest, frames
    return observation, []


def text_beside(rest: Any) -> str | None:
    """The text of what :func:`split_frames` left of an observation when it is text: ``""``
    for nothing, the strings of a dict of strings (a page's accessibility tree) joined;
    ``None`` when it is something else (the caller writes it as JSON)."""
    if rest is None:
        return ""
    if isinstance(rest, str):
        return rest
    if isinstance(rest, Mapping) and all(isinstance(value, str) for value in rest.values()):
        return "\n\n".join(value for value in rest.values() if value)
    return None


def has_frames(value: Any) -> bool:
    """Whether ``value`` holds a frame anywhere (in nested dicts, lists and tuples)."""
    if is_frame(value):
        return True
    if isinstance(value, Mapping):
        return any(has_frames(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_frames(item) for item in value)
    return False


def replace_frames(value: Any, replace: Callable[[np.ndarray], Any]) -> Any:
    """``value`` with every frame in it (nested dicts, lists, tuples) replaced by
    ``replace(frame)``; ``value`` itself when it holds none."""
    if not has_frames(value):
        return value
    if is_frame(value):
        return replace(value)
    if isinstance(value, Mapping):
        return {key: replace_frames(item, replace) for key, item in value.items()}
    return [replace_frames(item, replace) for item in value]


class FrameStore:
    """The frames of one run directory, ``root``: each written once, as its reference names.

    A file appears whole or not at all (written aside, fsynced, then renamed), so a run
    killed mid-write leaves no torn PNG under a frame's name, and a record is written only
    after its frames are durable. Safe to share between threads (the engine's env workers).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._stored: set[str] = set()
        self._lock = threading.Lock()

    def keep(self, frame: np.ndarray) -> dict[str, Any]:
        """Store ``frame`` (unless a file of that sha256 is there) and return its reference."""
        ref = frame_ref(frame)
        sha256 = ref["sha256"]
        with self._lock:
            known = sha256 in self._stored
        if not known:
            target = self.root / ref["path"]
            if not target.exists():
                _write_atomically(target, encode_png(frame))
            with self._lock:
                self._stored.add(sha256)
        return ref

    def keep_encoded(self, ref: Mapping[str, Any], png: bytes) -> None:
        """Store a frame another process encoded under its reference (``png``, the bytes
        :func:`encode_png` gave there): a Ray actor's episode sends its frames back to the
        run's one writer (:mod:`agentgym.eval.ray_pool`)."""
        target = self.path(ref)
        if not target.exists():
            _write_atomically(target, png)
        with self._lock:
            self._stored.add(str(ref["sha256"]))

    def externalize(self, value: Any) -> Any:
        """``value`` with its frames stored and replaced by their references."""
        return replace_frames(value, self.keep)

    def path(self, ref: Mapping[str, Any]) -> Path:
        """Where the frame of ``ref`` is (or would be) on disk."""
        return self.root / str(ref["path"])


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        with open(scratch, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)
