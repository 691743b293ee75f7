"""Mousepad tasks: write, edit and save text files in Xfce's text editor.

Every task is judged from the files mousepad saved in the home (``compare_text_file`` against
a gold file; a trailing newline never matters). Every oracle is keyboard only: mousepad's own
shortcuts (``Control+s`` saves, ``Control+Shift+s`` is Save As, ``Control+End`` goes to the end,
``Control+Page_Up`` the previous tab) and typing, then ``wait()`` for the save to land.
Contents, names and positions come from the seed, so another seed's oracle types something
else, and no task's file starts out right.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agentgym.envs.gui.osworld import template
from agentgym.envs.gui.pixel_actions import format_pixel

WORDS = (
    "apple", "river", "stone", "cloud", "paper", "green", "quiet", "seven", "window", "garden",
    "orange", "little", "market", "winter", "summer", "bright", "silver", "yellow", "candle",
    "forest", "music", "letter", "morning", "purple", "rabbit", "harbor", "pencil", "meadow",
    "thunder", "copper", "violet", "lantern", "pebble", "saddle", "tunnel", "velvet", "walnut",
)  # fmt: skip
STEMS = ("notes", "todo", "draft", "memo", "list", "ideas", "plan", "diary", "log", "recipe")
TYPOS = {
    "receive": "recieve", "separate": "seperate", "definitely": "definately",
    "tomorrow": "tommorow", "necessary": "neccessary", "occasion": "ocasion",
    "beginning": "begining", "believe": "beleive", "calendar": "calender",
    "friend": "freind", "weird": "wierd", "library": "libary",
}  # fmt: skip


# ---------------------------------------------------------------------- building blocks


def words(rng: np.random.Generator, count: int, exclude: Sequence[str] = ()) -> list[str]:
    pool = [w for w in WORDS if w not in exclude]
    return [str(w) for w in rng.choice(pool, size=count, replace=False)]


def sentence(rng: np.random.Generator, low: int = 4, high: int = 8) -> str:
    return " ".join(words(rng, int(rng.integers(low, high)))).capitalize() + "."


def lines_of(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` different short lines."""
    return [sentence(rng, 2, 5) for _ in range(count)]


def file_name(rng: np.random.Generator, exclude: Sequence[str] = ()) -> str:
    return str(rng.choice([f"{s}.txt" for s in STEMS if f"{s}.txt" not in exclude]))


def typed(text: str) -> str:
    return format_pixel("type", text)


def key(combo: str) -> str:
    return format_pixel("key", combo)


WAIT = format_pixel("wait")


def compare(path: str, gold: str) -> dict[str, Any]:
    """The evaluator part: the home's ``path`` holds the text of the task's file ``gold``."""
    return {
        "func": "compare_text_file",
        "result": {"type": "vm_file", "path": f"~/{path}", "dest": path},
        "expected": {"type": "cloud_file", "path": f"local://{gold}", "dest": gold},
        "options": {},
    }


def both(*parts: dict[str, Any]) -> dict[str, Any]:
    """Several metrics that must all pass (OSWorld's lists with ``conj: "and"``)."""
    return {key: [p[key] for p in parts] for key in ("func", "result", "expected", "options")} | {
        "conj": "and"
    }


def task(
    instruction: str,
    opened: Sequence[str],
    files: dict[str, str],
    evaluator: dict[str, Any],
    oracle: list[str],
) -> dict[str, Any]:
    """A mousepad task: ``files`` not named ``gold*`` go to the home, mousepad opens
    ``opened`` (none: an empty document)."""
    home = [name for name in files if not name.startswith("gold")]
    config: list[dict[str, Any]] = []
    if home:
        downloads = [{"url": f"local://{n}", "path": f"~/{n}"} for n in home]
        config.append({"type": "download", "parameters": {"files": downloads}})
    command = ["mousepad", *(f"~/{n}" for n in opened)]
    config.append({"type": "launch", "parameters": {"command": command}})
    return {
        "instruction": instruction,
        "related_apps": ["mousepad"],
        "config": config,
        "evaluator": evaluator,
        "agentgym": {"files": files, "oracle": oracle},
    }


def edit_task(
    instruction: str, name: str, before: str, after: str, keys: list[str]
) -> dict[str, Any]:
    """Edit the open file ``name`` from ``before`` to ``after`` with ``keys``, then save."""
    return task(
        instruction,
        [name],
        {name: before, "gold.txt": after},
        compare(name, "gold.txt"),
        [*keys, key("Control+s"), WAIT],
    )


# ---------------------------------------------------------------------- easy


@template("mousepad", level="easy")
def write_sentence(rng: np.random.Generator) -> dict[str, Any]:
    """Type a sentence into a new document and save it under a given name."""
    text, name = sentence(rng), file_name(rng)
    return task(
        f"In the text editor on the screen, type exactly this sentence: {text}\n"
        f"Then save the document in the home folder as {name}.",
        [],
        {"gold.txt": text},
        compare(name, "gold.txt"),
        [typed(text), key("Control+s"), typed(name), key("Enter"), WAIT],
    )


@template("mousepad", level="easy")
def append_line(rng: np.random.Generator) -> dict[str, Any]:
    """Add a line at the end of an open file and save it."""
    name, lines, extra = file_name(rng), lines_of(rng, int(rng.integers(2, 5))), sentence(rng)
    before = "\n".join(lines)
    return edit_task(
        f"Add this line at the end of {name}, which is open in the text editor, and save "
        f"the file: {extra}",
        name,
        before,
        f"{before}\n{extra}",
        [key("Control+End"), typed(f"\n{extra}")],
    )


@template("mousepad", level="easy")
def prepend_title(rng: np.random.Generator) -> dict[str, Any]:
    """Put a title line above the first line of an open file and save it."""
    name, lines = file_name(rng), lines_of(rng, int(rng.integers(2, 5)))
    title = " ".join(words(rng, 2)).title()
    before = "\n".join(lines)
    return edit_task(
        f"The file {name} is open in the text editor. Insert the title '{title}' as a new "
        f"first line, above everything else, and save the file.",
        name,
        before,
        f"{title}\n{before}",
        [key("Control+Home"), typed(f"{title}\n")],
    )
