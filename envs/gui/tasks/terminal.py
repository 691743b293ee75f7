"""Terminal tasks: shell work in xterm (``sh``), judged from its effects on the home.

A task is never judged from what was typed or shown: only from what the commands left behind,
read after the episode: a file's content (``compare_text_file``), a folder's listing
(``literal_match``), a mode (``stat -c %a``), a link (``test -L`` and ``cat``), the tree under a
folder (``find | sort``), an archive's members (``compare_archive``), a script's output when
run. Every oracle types its commands (``type("...\\n")``) and ends with ``wait()``. Names,
contents and numbers come from the seed, so another seed's commands name files this home does
not hold, and no task's home starts out right.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentgym.envs.gui.osworld import template
from agentgym.envs.gui.osworld_files import command_output, listing, text_file
from agentgym.envs.gui.tasks.files import file_names, note
from agentgym.envs.gui.tasks.mousepad import WAIT, WORDS, both, key, sentence, typed

MODES = ("600", "640", "660", "700", "711", "750", "755", "770", "444", "400", "604", "705")
"""Modes a file may be asked to take (never 644, the mode it starts with)."""

JUNK = ("tmp", "bak", "old", "swp")
"""Extensions of files a clean-up deletes."""

WHOLE = tuple(w for w in WORDS if not any(w in other for other in WORDS if other != w))
"""Words no other word contains (``grep`` counts a word inside another as a match)."""


# ---------------------------------------------------------------------- building blocks


def shell_task(
    instruction: str,
    files: Mapping[str, str | bytes],
    evaluator: dict[str, Any],
    commands: Sequence[str],
    gold: Mapping[str, str | bytes] | None = None,
) -> dict[str, Any]:
    """A task on a home holding ``files`` (paths in it), with a terminal open in the home; the
    oracle types ``commands``."""
    config: list[dict[str, Any]] = []
    if files:
        downloads = [{"url": f"local://{path}", "path": f"~/{path}"} for path in files]
        config.append({"type": "download", "parameters": {"files": downloads}})
    config.append({"type": "launch", "parameters": {"command": ["xterm"]}})
    return {
        "instruction": instruction,
        "related_apps": ["xterm"],
        "config": config,
        "evaluator": evaluator,
        "agentgym": {
            "files": {**files, **(gold or {})},
            "oracle": [*(typed(f"{command}\n") for command in commands), WAIT],
        },
    }


def folder_name(rng: np.random.Generator) -> str:
    """A folder name ``word-NN``."""
    return f"{rng.choice(WORDS)}-{int(rng.integers(10, 100))}"


def tar_gz(files: dict[str, str]) -> bytes:
    """A gzip'd tar of ``files`` (paths inside it), the same bytes every time."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for path, content in files.items():
            data = content.encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


# ---------------------------------------------------------------------- easy


@template("xterm", level="easy")
def make_folders(rng: np.random.Generator) -> dict[str, Any]:
    """Create a folder three levels deep, its parents with it."""
    path = "/".join([folder_name(rng), str(rng.choice(WORDS)), folder_name(rng)])
    return shell_task(
        f"In the terminal, create the folder {path} inside your home folder (with the folders "
        f"above it).",
        {},
        command_output(f"stat -c %F ~/{path}", "directory\n"),
        [f"mkdir -p {path}"],
    )


@template("xterm", level="easy")
def write_line(rng: np.random.Generator) -> dict[str, Any]:
    """Write a given sentence into a new file."""
    (name,) = file_names(rng, 1, "txt")
    text = sentence(rng)
    return shell_task(
        f"In the terminal, create the file {name} in your home folder holding exactly this "
        f"line: {text}",
        {},
        text_file(name, "gold.txt"),
        [f"echo '{text}' > {name}"],
        gold={"gold.txt": text},
    )


@template("xterm", level="easy")
def set_mode(rng: np.random.Generator) -> dict[str, Any]:
    """Give a file a numeric mode (chmod)."""
    (name,) = file_names(rng, 1)
    mode, content = str(rng.choice(MODES)), note(rng)
    return shell_task(
        f"In the terminal, set the permissions of the file {name} in your home folder to {mode} "
        f"(octal).",
        {name: content},
        both(command_output(f"stat -c %a {name}", f"{mode}\n"), text_file(name, "gold.txt")),
        [f"chmod {mode} {name}"],
        gold={"gold.txt": content},
    )


@template("xterm", level="easy")
def copy_into(rng: np.random.Generator) -> dict[str, Any]:
    """Copy a file into a folder, keeping the original."""
    folder = folder_name(rng)
    name, already = file_names(rng, 2)
    content = note(rng)
    return shell_task(
        f"In the terminal, copy the file {name} into the folder {folder} (both in your home "
        f"folder), keeping the original.",
        {name: content, f"{folder}/{already}": note(rng)},
        both(
            listing(folder, [already, name]),
            text_file(f"{folder}/{name}", "gold.txt"),
            text_file(name, "gold.txt"),
        ),
        [f"cp {name} {folder}/"],
        gold={"gold.txt": content},
    )


# ---------------------------------------------------------------------- medium


@template("xterm", level="medium")
def count_matches(rng: np.random.Generator) -> dict[str, Any]:
    """Count the lines of a log that hold a word and write the number to a file."""
    (log,) = file_names(rng, 1, "log")
    (out,) = file_names(rng, 1, "txt")
    word = str(rng.choice(WHOLE))
    others = [w for w in WHOLE if w != word]
    lines = [" ".join(str(w) for w in rng.choice(others, size=4, replace=False)) for _ in range(24)]
    hits = sorted(
        int(i) for i in rng.choice(len(lines), size=int(rng.integers(3, 12)), replace=False)
    )
    for index in hits:
        words = lines[index].split()
        words.insert(int(rng.integers(0, 5)), word)
        lines[index] = " ".join(words)
    return shell_task(
        f"In the terminal, count the lines of {log} (in your home folder) that contain the word "
        f"{word}, and write just that number into a new file {out}.",
        {log: "\n".join(lines) + "\n"},
        text_file(out, "gold.txt", ignore_blanks=True),
        [f"grep -c {word} {log} > {out}"],
        gold={"gold.txt": str(len(hits))},
    )


@template("xterm", level="medium")
def sort_unique(rng: np.random.Generator) -> dict[str, Any]:
    """Write a file's lines sorted, without repeats, into another file."""
    source, out = file_names(rng, 2, "txt")
    names = [str(w) for w in rng.choice(WORDS, size=int(rng.integers(5, 9)), replace=False)]
    lines = [*names, *(str(w) for w in rng.choice(names, size=4))]
    rng.shuffle(lines)
    return shell_task(
        f"In the terminal, write the lines of {source} sorted alphabetically, each only once, "
        f"into a new file {out} (both in your home folder).",
        {source: "\n".join(lines) + "\n"},
        text_file(out, "gold.txt"),
        [f"sort -u {source} > {out}"],
        gold={"gold.txt": "\n".join(sorted(set(lines)))},
    )


@template("xterm", level="medium")
def make_archive(rng: np.random.Generator) -> dict[str, Any]:
    """Pack a folder into a .tar.gz archive."""
    folder = folder_name(rng)
    (archive,) = file_names(rng, 1, "tar.gz")
    files = {f"{folder}/{name}": note(rng) for name in file_names(rng, int(rng.integers(2, 4)))}
    return shell_task(
        f"In the terminal, pack the folder {folder} (in your home folder, the folder itself with "
        f"everything in it) into a gzip-compressed tar archive named {archive} in your home "
        f"folder.",
        files,
        {
            "func": "compare_archive",
            "result": {"type": "vm_file", "path": f"~/{archive}", "dest": archive},
            "expected": {
                "type": "cloud_file",
                "path": "local://gold.tar.gz",
                "dest": "gold.tar.gz",
            },
            "options": {},
        },
        [f"tar czf {archive} {folder}"],
        gold={"gold.tar.gz": tar_gz(files)},
    )


@template("xterm", level="medium")
def extract_archive(rng: np.random.Generator) -> dict[str, Any]:
    """Unpack a .tar.gz archive into a new folder."""
    top, target = folder_name(rng), folder_name(rng)
    (archive,) = file_names(rng, 1, "tar.gz")
    names = file_names(rng, int(rng.integers(2, 4)))
    packed = {f"{top}/{name}": note(rng) for name in names}
    return shell_task(
        f"In the terminal, unpack the archive {archive} (in your home folder) into a new folder "
        f"{target} in your home folder.",
        {archive: tar_gz(packed)},
        both(
            listing(target, [top]),
            listing(f"{target}/{top}", names),
            text_file(f"{target}/{top}/{names[0]}", "gold.txt"),
        ),
        [f"mkdir {target} && tar xzf {archive} -C {target}"],
        gold={"gold.txt": packed[f"{top}/{names[0]}"]},
    )


@template("xterm", level="medium")
def delete_by_extension(rng: np.random.Generator) -> dict[str, Any]:
    """Delete every file of one extension anywhere under a folder, nothing else."""
    folder, sub = folder_name(rng), str(rng.choice(WORDS))
    junk = str(rng.choice(JUNK))
    keep = file_names(rng, int(rng.integers(2, 4)))
    doomed = file_names(rng, int(rng.integers(2, 4)), junk, taken=keep)
    places = [
        f"{folder}/{name}" if i % 2 else f"{folder}/{sub}/{name}"
        for i, name in enumerate(keep + doomed)
    ]
    files = {path: note(rng) for path in places}
    left = [p for p in places if not p.endswith(f".{junk}")]
    tree = sorted(["."] + [f"./{sub}"] + [f"./{p.removeprefix(folder + '/')}" for p in left])
    return shell_task(
        f"In the terminal, delete every .{junk} file anywhere under the folder {folder} (in your "
        f"home folder, its subfolders included), and nothing else.",
        files,
        command_output(f"cd ~/{folder} && find . | sort", "".join(f"{p}\n" for p in tree)),
        [f"find {folder} -name '*.{junk}' -delete"],
    )


@template("xterm", level="medium")
def make_link(rng: np.random.Generator) -> dict[str, Any]:
    """Make a symbolic link to a file in a folder."""
    folder = folder_name(rng)
    name, link = file_names(rng, 2, "txt")
    content = note(rng)
    check = f"test -L {link} && test -f {folder}/{name} && ! test -L {folder}/{name} && cat {link}"
    return shell_task(
        f"In the terminal, make a symbolic link named {link} in your home folder that points "
        f"to the file {folder}/{name}.",
        {f"{folder}/{name}": content},
        command_output(check, content),
        [f"ln -s {folder}/{name} {link}"],
    )


@template("xterm", level="medium")
def column_total(rng: np.random.Generator) -> dict[str, Any]:
    """Add up a column of a CSV file and write the total to a file."""
    (table,) = file_names(rng, 1, "csv")
    (out,) = file_names(rng, 1, "txt")
    items = [str(w) for w in rng.choice(WORDS, size=int(rng.integers(4, 9)), replace=False)]
    amounts = [int(a) for a in rng.integers(1, 500, size=len(items))]
    rows = "".join(f"{item},{amount}\n" for item, amount in zip(items, amounts, strict=True))
    return shell_task(
        f"In the terminal, add up the amount column of {table} (in your home folder; its first "
        f"line is a header) and write just the total into a new file {out}.",
        {table: f"item,amount\n{rows}"},
        text_file(out, "gold.txt", ignore_blanks=True),
        [f"awk -F, 'NR > 1 {{ s += $2 }} END {{ print s }}' {table} > {out}"],
        gold={"gold.txt": str(sum(amounts))},
    )


# ---------------------------------------------------------------------- hard


@template("xterm", level="hard")
def collect_lines(rng: np.random.Generator) -> dict[str, Any]:
    """Gather the lines holding a word from every log of a folder, sorted, into one file."""
    folder = folder_name(rng)
    (out,) = file_names(rng, 1, "txt")
    word = str(rng.choice(WHOLE))
    others = [w for w in WHOLE if w != word]
    files, found = {}, []
    for name in file_names(rng, 3, "log"):
        lines = [
            " ".join(str(w) for w in rng.choice(others, size=3, replace=False)) for _ in range(6)
        ]
        for index in rng.choice(len(lines), size=int(rng.integers(1, 3)), replace=False):
            lines[int(index)] = f"{lines[int(index)]} {word}"
            found.append(lines[int(index)])
        files[f"{folder}/{name}"] = "\n".join(lines) + "\n"
    return shell_task(
        f"In the terminal, put every line containing the word {word} from all the .log files "
        f"in the folder {folder} (in your home folder) into a new file {out}, sorted "
        f"alphabetically.",
        files,
        text_file(out, "gold.txt"),
        [f"cat {folder}/*.log | grep {word} | sort > {out}"],
        gold={"gold.txt": "\n".join(sorted(found))},
    )


@template("xterm", level="hard")
def script_from_editor(rng: np.random.Generator) -> dict[str, Any]:
    """Write a shell script in the text editor, then make it executable and run it."""
    (script,) = file_names(rng, 1, "sh")
    (out,) = file_names(rng, 1, "txt")
    text = sentence(rng)
    task = shell_task(
        f"Use the text editor to write a shell script that prints this line: {text}\n"
        f"Save it as {script} in your home folder. Then, in the terminal, make it executable and "
        f"run it, sending its output into a new file {out}.",
        {},
        # The output file first: the evaluator runs the script only once that is right (a
        # script that writes the file itself does not pass for having been run), for 5 s at
        # most (the agent's script, as the desktop's uid, in its namespaces).
        both(
            text_file(out, "gold.txt"),
            command_output(f"test -x {script} && timeout 5 ./{script}", f"{text}\n"),
        ),
        [f"chmod +x {script} && ./{script} > {out}"],
        gold={"gold.txt": text},
    )
    task["config"].append({"type": "launch", "parameters": {"command": ["mousepad"]}})
    task["related_apps"] = ["xterm", "mousepad"]
    write = [typed(f"#!/bin/sh\necho '{text}'\n"), key("Control+s"), typed(script), key("Enter")]
    # openbox's window switcher stays up until a key ends it: Enter picks the terminal (and
    # is a harmless empty command line if the terminal gets it).
    switch = [key("alt+Tab"), key("Enter")]
    task["agentgym"]["oracle"] = [*write, WAIT, *switch, *task["agentgym"]["oracle"]]
    return task


@template("xterm", level="hard")
def titled_listing(rng: np.random.Generator) -> dict[str, Any]:
    """List a folder's text files into a file, then give it a title line in the text editor."""
    folder = folder_name(rng)
    texts = file_names(rng, int(rng.integers(2, 5)), "txt")
    others = file_names(rng, int(rng.integers(1, 3)), "csv", taken=texts)
    (out,) = file_names(rng, 1, "md", taken=[*texts, *others])
    title = " ".join(str(w) for w in rng.choice(WORDS, size=2, replace=False)).title()
    task = shell_task(
        f"In the terminal, write the names of the .txt files in the folder {folder} (in your "
        f"home folder), one per line, sorted, into a new file {out} in your home folder. Then "
        f"open {out} in the text editor, add the line '{title}' above the names, and save it.",
        {f"{folder}/{name}": note(rng) for name in [*texts, *others]},
        text_file(out, "gold.txt"),
        [f"ls {folder} | grep 'txt$' | sort > {out} && mousepad {out} &"],
        gold={"gold.txt": "\n".join([title, *sorted(texts)])},
    )
    task["related_apps"] = ["xterm", "mousepad"]
    # A second wait after the command's: mousepad starts and opens the file.
    edit = [WAIT, key("Control+Home"), typed(f"{title}\n"), key("Control+s"), WAIT]
    task["agentgym"]["oracle"] = [*task["agentgym"]["oracle"], *edit]
    return task
