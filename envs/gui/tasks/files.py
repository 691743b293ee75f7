"""File manager tasks: rename, create, delete, copy and move files and folders in PCManFM.

Each task's files lie in one folder of the home, which PCManFM opens at reset; a task is judged
from that folder afterwards (``literal_match`` over its listing: nothing else appeared or went)
and from the contents of the files it names (``compare_text_file``), never from the screen.

Every oracle is keyboard only. PCManFM selects an item by its typed name (type-ahead: a name
that matches no item selects nothing, so another seed's names do nothing here); ``Escape`` closes
the type-ahead box, keeping the selection. ``F2`` renames (its dialog preselects the stem:
``Control+a`` takes the whole name), ``Control+Shift+n`` makes a folder, ``Control+x``/``c``/``v``
cut, copy and paste, ``Delete`` asks to move to the trash (``Enter`` says yes), ``Enter`` opens
a folder (``Alt+Up`` goes back) or a text file in mousepad. Names and contents come from the
seed, so the initial state never passes and another seed's oracle types names this folder does
not hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agentgym.envs.gui.osworld import template
from agentgym.envs.gui.osworld_files import command_output, listing, text_file
from agentgym.envs.gui.tasks.mousepad import WAIT, WORDS, both, key, sentence, typed

FOLDERS = ("Documents", "projects", "inbox", "shared", "reports", "work", "drafts", "notes")
"""The folder of the home a task's files lie in (PCManFM opens it)."""

SUBFOLDERS = (
    "letters", "photos", "invoices", "recipes", "travel", "music", "school", "taxes",
    "garden", "backup", "old", "misc", "scans", "slides",
)  # fmt: skip
EXTENSIONS = ("txt", "md", "csv", "log")
OTHER = ("md", "log")
"""The extensions ``sort_by_type`` leaves where they are."""

SETTINGS = "[ui]\nshow_statusbar=0\n"
"""PCManFM's settings: no status bar, whose free space of the disk changes between two
episodes of the same task (a frame must follow from the task and the actions)."""

SETTINGS_KEY, SETTINGS_PATH = "pcmanfm.conf", "~/.config/pcmanfm/default/pcmanfm.conf"

UP = key("alt+Up")
"""Back to the folder above."""


# ---------------------------------------------------------------------- building blocks


def file_names(
    rng: np.random.Generator, count: int, ext: str | None = None, taken: Sequence[str] = ()
) -> list[str]:
    """``count`` file names ``word-NN.ext``, each different from ``taken`` and none the start of
    another (type-ahead selects by prefix)."""
    names: list[str] = []
    while len(names) < count:
        suffix = ext or str(rng.choice(EXTENSIONS))
        name = f"{rng.choice(WORDS)}-{int(rng.integers(10, 100))}.{suffix}"
        if not any(n.startswith(name) or name.startswith(n) for n in [*names, *taken]):
            names.append(name)
    return names


def folder_names(rng: np.random.Generator, count: int, taken: Sequence[str] = ()) -> list[str]:
    """``count`` folder names ``word-NN``, none the start of another or of ``taken``."""
    names: list[str] = []
    while len(names) < count:
        name = f"{rng.choice(SUBFOLDERS)}-{int(rng.integers(10, 100))}"
        if not any(n.startswith(name) or name.startswith(n) for n in [*names, *taken]):
            names.append(name)
    return names


def contents(rng: np.random.Generator, names: Sequence[str]) -> dict[str, str]:
    """A different sentence or two for each file."""
    return {name: note(rng) for name in names}


def note(rng: np.random.Generator) -> str:
    """One or two lines of text."""
    return "\n".join(sentence(rng) for _ in range(int(rng.integers(1, 3))))


def select(name: str) -> list[str]:
    """Select the item ``name`` of the open folder by type-ahead, closing its box."""
    return [typed(name), key("Escape")]


def make_folder(name: str) -> list[str]:
    """Make the folder ``name`` in the open folder (its dialog preselects "New")."""
    return [key("Control+Shift+n"), key("Control+a"), typed(name), key("Enter")]


def trash(name: str) -> list[str]:
    """Move the item ``name`` of the open folder to the trash (``Enter`` confirms)."""
    return [*select(name), key("Delete"), key("Enter")]


def paste_into(name: str, folder: str, cut: bool = True) -> list[str]:
    """Cut (or copy) the item ``name`` of the open folder, open its subfolder ``folder``, paste
    it there."""
    clip = key("Control+x" if cut else "Control+c")
    return [*select(name), clip, *select(folder), key("Enter"), key("Control+v")]


def folder_task(
    instruction: str,
    folder: str,
    files: dict[str, str],
    evaluator: dict[str, Any],
    oracle: list[str],
    gold: dict[str, str] | None = None,
    empty: Sequence[str] = (),
) -> dict[str, Any]:
    """A task on ``~/folder`` holding ``files`` (paths inside it) and the empty folders
    ``empty``, opened in PCManFM; ``gold`` files stay out of the home."""
    downloads = [{"url": f"local://{path}", "path": f"~/{folder}/{path}"} for path in files]
    downloads.append({"url": f"local://{SETTINGS_KEY}", "path": SETTINGS_PATH})
    config: list[dict[str, Any]] = [{"type": "download", "parameters": {"files": downloads}}]
    if empty:
        command = ["mkdir", "-p", *(f"~/{folder}/{path}" for path in empty)]
        config.append({"type": "execute", "parameters": {"command": command}})
    config.append({"type": "launch", "parameters": {"command": ["pcmanfm", f"~/{folder}"]}})
    return {
        "instruction": instruction,
        "related_apps": ["pcmanfm"],
        "config": config,
        "evaluator": evaluator,
        "agentgym": {
            "files": {**files, **(gold or {}), SETTINGS_KEY: SETTINGS},
            "oracle": oracle,
        },
    }


def kept(folder: str, path: str, gold: str) -> dict[str, Any]:
    """The evaluator part: ``~/folder/path`` still holds the text of the task's file ``gold``."""
    return text_file(f"{folder}/{path}", gold)


def is_folder(path: str) -> dict[str, Any]:
    """The evaluator part: ``~/path`` is a folder."""
    return command_output(f"stat -c %F ~/{path}", "directory\n")


def scene(rng: np.random.Generator, count: int) -> tuple[str, dict[str, str]]:
    """A task's folder and ``count`` files in it with their contents."""
    return str(rng.choice(FOLDERS)), contents(rng, file_names(rng, count))


# ---------------------------------------------------------------------- easy


@template("pcmanfm", level="easy")
def rename_file(rng: np.random.Generator) -> dict[str, Any]:
    """Rename one file of a folder in the file manager."""
    folder, files = scene(rng, int(rng.integers(3, 6)))
    old = str(rng.choice(list(files)))
    (new,) = file_names(rng, 1, old.rsplit(".", 1)[1], taken=list(files))
    after = [new if name == old else name for name in files]
    return folder_task(
        f"In the file manager, rename the file {old} in the folder {folder} to {new}.",
        folder,
        files,
        both(listing(folder, after), kept(folder, new, "gold.txt")),
        [*select(old), key("F2"), key("Control+a"), typed(new), key("Enter"), WAIT],
        gold={"gold.txt": files[old]},
    )


@template("pcmanfm", level="easy")
def create_folder(rng: np.random.Generator) -> dict[str, Any]:
    """Make a new folder, with a given name, inside the open folder."""
    folder, files = scene(rng, int(rng.integers(2, 5)))
    (new,) = folder_names(rng, 1, taken=list(files))
    return folder_task(
        f"In the file manager, create a new folder named {new} inside the folder {folder}.",
        folder,
        files,
        both(listing(folder, [*files, new]), is_folder(f"{folder}/{new}")),
        [*make_folder(new), WAIT],
    )


@template("pcmanfm", level="easy")
def delete_file(rng: np.random.Generator) -> dict[str, Any]:
    """Move one file of the open folder to the trash."""
    folder, files = scene(rng, int(rng.integers(3, 6)))
    doomed = str(rng.choice(list(files)))
    return folder_task(
        f"In the file manager, delete the file {doomed} from the folder {folder} (moving it "
        f"to the trash is fine). Leave the other files alone.",
        folder,
        files,
        listing(folder, [name for name in files if name != doomed]),
        [*trash(doomed), WAIT],
    )


@template("pcmanfm", level="easy")
def rename_folder(rng: np.random.Generator) -> dict[str, Any]:
    """Rename a folder; the files inside it go along."""
    folder, files = scene(rng, int(rng.integers(1, 3)))
    old, new = folder_names(rng, 2, taken=list(files))
    (inner,) = file_names(rng, 1)
    inside = {f"{old}/{inner}": sentence(rng)}
    return folder_task(
        f"In the file manager, rename the folder {old} (inside {folder}) to {new}.",
        folder,
        {**files, **inside},
        both(listing(folder, [*files, new]), kept(folder, f"{new}/{inner}", "gold.txt")),
        [*select(old), key("F2"), key("Control+a"), typed(new), key("Enter"), WAIT],
        gold={"gold.txt": inside[f"{old}/{inner}"]},
    )


# ---------------------------------------------------------------------- medium


def _transfer(rng: np.random.Generator, cut: bool) -> dict[str, Any]:
    """Move (``cut``) or copy one file into a subfolder with the clipboard."""
    folder, files = scene(rng, int(rng.integers(2, 5)))
    (sub,) = folder_names(rng, 1, taken=list(files))
    (already,) = file_names(rng, 1, taken=list(files))
    inside = {f"{sub}/{already}": sentence(rng)}
    chosen = str(rng.choice(list(files)))
    stays = [name for name in files if name != chosen or not cut]
    verb = "Move" if cut else "Copy"
    return folder_task(
        f"In the file manager, {verb.lower()} the file {chosen} from the folder {folder} into "
        f"its subfolder {sub}" + ("." if cut else ", keeping the original where it is."),
        folder,
        {**files, **inside},
        both(
            listing(folder, [*stays, sub]),
            listing(f"{folder}/{sub}", [already, chosen]),
            kept(folder, f"{sub}/{chosen}", "gold.txt"),
        ),
        [*paste_into(chosen, sub, cut), WAIT],
        gold={"gold.txt": files[chosen]},
    )


@template("pcmanfm", level="medium")
def move_into_folder(rng: np.random.Generator) -> dict[str, Any]:
    """Move a file into a subfolder (cut, open the folder, paste)."""
    return _transfer(rng, cut=True)


@template("pcmanfm", level="medium")
def copy_into_folder(rng: np.random.Generator) -> dict[str, Any]:
    """Copy a file into a subfolder, keeping the original."""
    return _transfer(rng, cut=False)


@template("pcmanfm", level="medium")
def keep_only_one(rng: np.random.Generator) -> dict[str, Any]:
    """Delete every file of a folder but one.

    The oracle deletes them one by one: PCManFM's ``Control+i`` (invert the selection) shows
    the right files selected but, now and then, deletes others (its count in the confirmation
    is wrong too)."""
    folder, files = scene(rng, int(rng.integers(3, 5)))
    keep = str(rng.choice(list(files)))
    return folder_task(
        f"In the file manager, delete every file in the folder {folder} except {keep} "
        f"(moving them to the trash is fine).",
        folder,
        files,
        both(listing(folder, [keep]), kept(folder, keep, "gold.txt")),
        [step for name in files if name != keep for step in trash(name)] + [WAIT],
        gold={"gold.txt": files[keep]},
    )


@template("pcmanfm", level="medium")
def new_folder_for_file(rng: np.random.Generator) -> dict[str, Any]:
    """Make a folder and move a file of the open folder into it."""
    folder, files = scene(rng, int(rng.integers(2, 5)))
    (new,) = folder_names(rng, 1, taken=list(files))
    chosen = str(rng.choice(list(files)))
    return folder_task(
        f"In the file manager, create a folder named {new} inside {folder}, then move the "
        f"file {chosen} into it.",
        folder,
        files,
        both(
            listing(folder, [*(n for n in files if n != chosen), new]),
            listing(f"{folder}/{new}", [chosen]),
            kept(folder, f"{new}/{chosen}", "gold.txt"),
        ),
        [*make_folder(new), *paste_into(chosen, new), WAIT],
        gold={"gold.txt": files[chosen]},
    )


# ---------------------------------------------------------------------- hard


@template("pcmanfm", level="hard")
def sort_by_type(rng: np.random.Generator) -> dict[str, Any]:
    """Move the text file into one subfolder and the CSV file into another; others stay."""
    folder = str(rng.choice(FOLDERS))
    text, table = file_names(rng, 1, "txt") + file_names(rng, 1, "csv")
    others = [n for n in file_names(rng, 3, taken=[text, table]) if n.rsplit(".")[1] in OTHER]
    files = contents(rng, [text, table, *others])
    text_dir, table_dir = folder_names(rng, 2, taken=list(files))
    return folder_task(
        f"In the file manager, tidy the folder {folder}: move every .txt file into its "
        f"subfolder {text_dir} and every .csv file into its subfolder {table_dir}. Leave "
        f"the other files where they are.",
        folder,
        files,
        both(
            listing(folder, [text_dir, table_dir, *others]),
            listing(f"{folder}/{text_dir}", [text]),
            listing(f"{folder}/{table_dir}", [table]),
            kept(folder, f"{table_dir}/{table}", "gold.txt"),
        ),
        [*paste_into(text, text_dir), UP, *paste_into(table, table_dir), WAIT],
        gold={"gold.txt": files[table]},
        empty=[text_dir, table_dir],
    )


@template("pcmanfm", level="hard")
def edit_from_file_manager(rng: np.random.Generator) -> dict[str, Any]:
    """Open a text file from the file manager in the text editor, add a line, save it."""
    folder = str(rng.choice(FOLDERS))
    files = contents(rng, file_names(rng, int(rng.integers(2, 5)), "txt"))
    chosen, extra = str(rng.choice(list(files))), sentence(rng)
    task = folder_task(
        f"In the file manager, open the file {chosen} of the folder {folder} in the text "
        f"editor, add this line at its end and save it: {extra}",
        folder,
        files,
        both(listing(folder, list(files)), kept(folder, chosen, "gold.txt")),
        [
            *select(chosen),
            key("Enter"),
            WAIT,
            WAIT,  # mousepad starts and opens the file
            key("Control+End"),
            typed(f"\n{extra}"),
            key("Control+s"),
            WAIT,
        ],
        gold={"gold.txt": f"{files[chosen]}\n{extra}"},
    )
    task["related_apps"] = ["pcmanfm", "mousepad"]
    return task


@template("pcmanfm", level="hard")
def rename_by_content(rng: np.random.Generator) -> dict[str, Any]:
    """Find the note that mentions a word (open them to read) and rename it."""
    folder = str(rng.choice(FOLDERS))
    names = file_names(rng, int(rng.integers(3, 6)), "txt")
    files = contents(rng, names)
    chosen = str(rng.choice(names))
    code = f"{rng.choice(WORDS).upper()}-{int(rng.integers(100, 1000))}"
    files[chosen] = f"{files[chosen]}\nReference: {code}"
    (new,) = file_names(rng, 1, "txt", taken=names)
    after = [new if name == chosen else name for name in names]
    task = folder_task(
        f"One of the text files in the folder {folder} mentions the reference {code}. Find it "
        f"(open the files in the text editor to read them) and, in the file manager, rename "
        f"it to {new}.",
        folder,
        files,
        both(listing(folder, after), kept(folder, new, "gold.txt")),
        [*select(chosen), key("F2"), key("Control+a"), typed(new), key("Enter"), WAIT],
        gold={"gold.txt": files[chosen]},
    )
    task["related_apps"] = ["pcmanfm", "mousepad"]
    return task
