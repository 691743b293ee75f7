"""One way to derive a seed from the things that name a random choice.

Benchmarks (an episode's reset seed), trainers (a group's start and each member's sampling)
and agents (each model call of an episode) all derive their seeds with :func:`derive`, from
the parts that name what is being seeded:

>>> derive(0, "games/Maze-v0", "test/easy/3", 1, bits=31)
928152051
>>> derive(7, "train/easy/0", 12, 3) == derive(7, "train/easy/0", 123, 0)
False

**Distinct parts, distinct seeds, by construction.** The parts are joined into one message
that no other tuple of parts gives (an int counts as its decimal string: ``7`` and ``"7"``
are one part): each part is written out whole (a string with ``|`` and ``\\`` escaped) and
the parts are separated by ``|``. So two choices
that differ anywhere differ in what is hashed. (The trainer once packed its iteration and
group number into one integer, ``iteration * 1000 + number``: group 1000 of iteration 0 and
group 0 of iteration 1 got the same seed.) The message is hashed with BLAKE2b, stable across
runs, machines and Python versions (unlike Python's salted ``hash``), into ``bits`` bits: at
the default 63, two of 10⁵ seeds coincide with a probability below 10⁻⁹, and a test draws
10⁵ trainer groups and finds them all distinct.

**Widths.** 63 bits by default (a non-negative int64: every reset, NumPy generator and JSON
reader takes it). A benchmark's episode seeds are 31 bits, as they always were, so the seeds
of published suites did not change; a model call's seed is 32 bits, what inference servers
accept.
"""

from __future__ import annotations

import hashlib

from agentgym.errors import UsageError

__all__ = ["derive"]


def derive(*parts: int | str, bits: int = 63) -> int:
    """A seed in ``[0, 2**bits)`` from ``parts`` (ints and strings): see the module docstring."""
    if not parts:
        raise UsageError("derive() needs at least one part to derive a seed from")
    if not isinstance(bits, int) or not 1 <= bits <= 64:
        raise UsageError(f"bits must be an int from 1 to 64, got {bits!r}")
    written = []
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, (int, str)):
            raise UsageError(
                f"seed parts are ints and strings, got {part!r} ({type(part).__name__}): "
                f"write other values as a string first"
            )
        text = str(part)
        written.append(text.replace("\\", "\\\\").replace("|", "\\|"))
    digest = hashlib.blake2b("|".join(written).encode(), digest_size=(bits + 7) // 8).digest()
    return int.from_bytes(digest, "little") & ((1 << bits) - 1)
