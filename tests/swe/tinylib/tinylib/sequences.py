"""Sequences."""


def chunk(items, size):
    """``items`` in lists of ``size`` (the last may be shorter)."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def window(items, width):
    """Every run of ``width`` consecutive items, as tuples."""
    if width < 1:
        raise ValueError("width must be at least 1")
    return [tuple(items[i : i + width]) for i in range(len(items) - width + 1)]


def dedupe(items):
    """``items`` without repeats, first occurrences kept in order."""
    seen = set()
    kept = []
    for item in items:
        if item in seen:
            continue
        seen.add(item)
        kept.append(item)
    return kept
