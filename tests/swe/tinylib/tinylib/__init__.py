"""A small library with a real test suite: the SWE family's tests prepare it in seconds."""

from tinylib.numbers import clamp, mean, running_total
from tinylib.sequences import chunk, dedupe, window

__all__ = ["chunk", "clamp", "dedupe", "mean", "running_total", "window"]
