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


def new_name(rng: np.random.Generator) -> str:
    """A name to save under that another seed's oracle almost never types (1 in 9,000)."""
    return f"{rng.choice(STEMS)}_{rng.integers(100, 1000)}.txt"


def down(count: int) -> list[str]:
    return [key("Down")] * count


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


@template("mousepad", level="easy")
def fix_typo(rng: np.random.Generator) -> dict[str, Any]:
    """Correct the one misspelled word of an open file and save it."""
    name = file_name(rng)
    right = str(rng.choice(sorted(TYPOS)))
    first, second = words(rng, 2), words(rng, 3)
    after = f"{' '.join(first).capitalize()} {right} {' '.join(second)}."
    before = after.replace(right, TYPOS[right])
    return edit_task(
        f"One word of {name}, open in the text editor, is misspelled: '{TYPOS[right]}'. "
        f"Correct it to '{right}' and save the file.",
        name,
        before,
        after,
        [key("Control+a"), typed(after)],
    )


# ---------------------------------------------------------------------- medium


@template("mousepad", level="medium")
def replace_word(rng: np.random.Generator) -> dict[str, Any]:
    """Replace every occurrence of a word in an open file and save it."""
    name = file_name(rng)
    old, new = words(rng, 2)
    lines = []
    for _ in range(int(rng.integers(3, 5))):
        line = words(rng, 3, exclude=(old, new))
        line.insert(int(rng.integers(0, 4)), old)
        lines.append(" ".join(line))
    before = "\n".join(lines)
    after = before.replace(old, new)
    return edit_task(
        f"In {name}, open in the text editor, replace every '{old}' with '{new}' and save "
        f"the file.",
        name,
        before,
        after,
        [key("Control+a"), typed(after)],
    )


@template("mousepad", level="medium")
def replace_line(rng: np.random.Generator) -> dict[str, Any]:
    """Replace one line of an open file, named by its number, with new text and save it."""
    name, lines = file_name(rng), lines_of(rng, int(rng.integers(3, 6)))
    index, line = int(rng.integers(0, len(lines))), sentence(rng, 2, 5)
    before = "\n".join(lines)
    after = "\n".join([*lines[:index], line, *lines[index + 1 :]])
    return edit_task(
        f"In {name}, open in the text editor, replace line {index + 1} (it says "
        f"'{lines[index]}') with this text, and save the file: {line}",
        name,
        before,
        after,
        [key("Control+Home"), *down(index), key("Shift+End"), typed(line)],
    )


@template("mousepad", level="medium")
def insert_line(rng: np.random.Generator) -> dict[str, Any]:
    """Insert a new line at a given line number of an open file and save it."""
    name, lines = file_name(rng), lines_of(rng, int(rng.integers(2, 5)))
    index, line = int(rng.integers(1, len(lines))), sentence(rng, 2, 5)
    before = "\n".join(lines)
    after = "\n".join([*lines[:index], line, *lines[index:]])
    return edit_task(
        f"In {name}, open in the text editor, insert this line so that it becomes line "
        f"{index + 1}, between '{lines[index - 1]}' and '{lines[index]}', and save the "
        f"file: {line}",
        name,
        before,
        after,
        [key("Control+Home"), *down(index), typed(f"{line}\n")],
    )


@template("mousepad", level="medium")
def sort_lines(rng: np.random.Generator) -> dict[str, Any]:
    """Sort the lines of an open file alphabetically and save it."""
    name = file_name(rng)
    items = words(rng, int(rng.integers(4, 7)))
    while items == sorted(items):
        rng.shuffle(items)
    after = "\n".join(sorted(items))
    return edit_task(
        f"{name}, open in the text editor, lists one word a line. Sort the lines "
        f"alphabetically (a to z) and save the file.",
        name,
        "\n".join(items),
        after,
        [key("Control+a"), typed(after)],
    )


@template("mousepad", level="medium")
def save_copy(rng: np.random.Generator) -> dict[str, Any]:
    """Save the open file under a new name too, leaving the original as it is."""
    name, copy = file_name(rng), new_name(rng)
    text = "\n".join(lines_of(rng, int(rng.integers(2, 5))))
    return task(
        f"Save the document open in the text editor ({name}) under a new name too: "
        f"{copy}, in the home folder. {name} must stay as it is.",
        [name],
        {name: text, "gold.txt": text},
        both(compare(copy, "gold.txt"), compare(name, "gold.txt")),
        [key("Control+Shift+s"), key("Control+a"), typed(copy), key("Enter"), WAIT],
    )


# ---------------------------------------------------------------------- hard


@template("mousepad", level="hard")
def edit_save_as(rng: np.random.Generator) -> dict[str, Any]:
    """Change a word in an open file and save the result under a new name only."""
    name, copy = file_name(rng), new_name(rng)
    old, new = words(rng, 2)
    lines = [" ".join([*words(rng, 2, exclude=(old, new)), old]) for _ in range(2)]
    before = "\n".join(lines)
    after = before.replace(old, new)
    return task(
        f"In the document open in the text editor ({name}), replace every '{old}' with "
        f"'{new}', then save the result as {copy} in the home folder. {name} itself must "
        f"keep its old text.",
        [name],
        {name: before, "gold.txt": after, "gold_original.txt": before},
        both(compare(copy, "gold.txt"), compare(name, "gold_original.txt")),
        [
            key("Control+a"),
            typed(after),
            key("Control+Shift+s"),
            key("Control+a"),
            typed(copy),
            key("Enter"),
            WAIT,
        ],
    )


@template("mousepad", level="hard")
def join_files(rng: np.random.Generator) -> dict[str, Any]:
    """Join two open files (the first, then the second) into a file of a new name."""
    first = file_name(rng)
    second = file_name(rng, exclude=(first,))
    joined = new_name(rng)
    top = "\n".join(lines_of(rng, int(rng.integers(2, 4))))
    bottom = "\n".join(lines_of(rng, int(rng.integers(2, 4))))
    return task(
        f"The text editor has two files open in tabs: {first} and {second}. Make a file "
        f"{joined} in the home folder that holds the lines of {first} followed by the lines "
        f"of {second}. Leave {first} and {second} as they are.",
        [first, second],
        {first: top, second: bottom, "gold.txt": f"{top}\n{bottom}", "gold_first.txt": top},
        both(compare(joined, "gold.txt"), compare(first, "gold_first.txt")),
        [
            key("Control+a"),  # the second file's tab is the open one
            key("Control+c"),
            key("Control+Page_Up"),
            key("Control+End"),
            typed("\n"),
            key("Control+v"),
            key("Control+Shift+s"),
            key("Control+a"),
            typed(joined),
            key("Enter"),
            WAIT,
        ],
    )


@template("mousepad", level="hard")
def collect_lines(rng: np.random.Generator) -> dict[str, Any]:
    """Copy the lines of an open file that hold a word into a new file of a given name."""
    name, target = file_name(rng), new_name(rng)
    marker = words(rng, 1)[0]
    lines: list[str] = []
    for _ in range(int(rng.integers(4, 7))):
        line = words(rng, 3, exclude=(marker,))
        if rng.random() < 0.5 or not any(marker in x for x in lines):
            line.insert(int(rng.integers(0, 4)), marker)
        lines.append(" ".join(line))
    picked = "\n".join(line for line in lines if marker in line.split())
    return task(
        f"{name} is open in the text editor. Write the lines of {name} that contain the "
        f"word '{marker}', in their order, into a new file {target} in the home folder "
        f"(nothing else in it). Leave {name} as it is.",
        [name],
        {name: "\n".join(lines), "gold.txt": picked, "gold_original.txt": "\n".join(lines)},
        both(compare(target, "gold.txt"), compare(name, "gold_original.txt")),
        [key("Control+n"), typed(picked), key("Control+s"), typed(target), key("Enter"), WAIT],
    )
