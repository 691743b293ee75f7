"""Desktop tasks in OSWorld's JSON shape: templates, config steps, getters, the evaluator.

A **template** (``@template("mousepad", level="easy")``, in a module of
:mod:`agentgym.envs.gui.tasks`) turns a seeded generator into one task dict of OSWorld's shape
(``instruction``, ``config``, ``evaluator``) plus an ``agentgym`` part: the task's ``files``
(``local://KEY`` urls: OSWorld's downloads, offline) and its ``oracle``, a fixed list of pixel
actions (:mod:`agentgym.envs.gui.pixel_actions`). :func:`generate` fills ``id`` and checks the
dict (:func:`check_task`): an unknown config step, getter or metric is a :class:`UsageError`
naming it, and so is an oracle action outside the pixel language (no back door).

At reset the env restores the home and runs the task's ``config`` (:func:`run_config`); after
every step it runs the ``evaluator`` (:func:`evaluate`): getters read the applications' real
output (a host copy of a saved file, a command's output), never the screen, and metrics
(:mod:`agentgym.envs.gui.osworld_metrics`) score it. ``~`` and OSWorld's ``/home/user`` are the
desktop's home; gold files never enter it. The contract: ``docs/envs/gui.md``, "Desktop tasks".

``python -m agentgym.envs.gui.osworld --export DIR --app mousepad --seed 0`` writes the
generated tasks as OSWorld JSON files, each task's files beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentgym.envs.gui.osworld_metrics import find_metric
from agentgym.errors import UsageError

if TYPE_CHECKING:
    from agentgym.envs.gui.desktop import Desktop

__all__ = [
    "APP_IDS",
    "CONFIG_STEPS",
    "GETTERS",
    "LEVELS",
    "TEMPLATES",
    "Template",
    "check_task",
    "desktop_id",
    "evaluate",
    "generate",
    "register_desktop_ids",
    "run_config",
    "template",
    "templates",
]

LEVELS = ("easy", "medium", "hard")
"""A template's level: the task set's difficulty."""

APP_IDS = {
    "mousepad": "Mousepad",
    "gnumeric": "Spreadsheet",
    "pcmanfm": "FileManager",
    "xterm": "Terminal",
}
"""A template's app (the :data:`~agentgym.envs.gui.desktop.APPS` name of its main application)
and the name of the env id its templates make: ``gui/Mousepad-v0``."""

HOME_PREFIXES = ("~", "/home/user")
"""How a task names the desktop's home (OSWorld's tasks use both)."""

SLEEP_LIMIT = 10.0
"""The longest a ``sleep`` config step may wait."""

FILE_LIMIT = 16 << 20
"""Bytes of a home file the ``vm_file`` getter copies; a bigger file reads as missing."""


# ---------------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    """A task generator: ``make(rng)`` returns one task dict (the module docstring)."""

    app: str
    level: str
    name: str
    make: Callable[[np.random.Generator], dict[str, Any]]
    summary: str

    @property
    def key(self) -> str:
        return f"{self.app}.{self.name}"


TEMPLATES: dict[str, Template] = {}
"""Every template by ``app.name`` (the modules of :mod:`agentgym.envs.gui.tasks` add theirs)."""

TaskMaker = Callable[[np.random.Generator], dict[str, Any]]


def template(app: str, level: str) -> Callable[[TaskMaker], TaskMaker]:
    """Register a task template of ``app`` (a key of :data:`APP_IDS`) at ``level``."""
    if app not in APP_IDS:
        raise UsageError(f"unknown desktop app {app!r}: templates are of {', '.join(APP_IDS)}")
    if level not in LEVELS:
        raise UsageError(f"unknown level {level!r}: a template's level is one of {LEVELS}")

    def register(make: TaskMaker) -> TaskMaker:
        summary = (make.__doc__ or "").strip().splitlines()
        found = Template(app, level, make.__name__, make, summary[0] if summary else "")
        if TEMPLATES.get(found.key, found).make is not make:
            raise UsageError(f"template {found.key!r} is registered twice")
        TEMPLATES[found.key] = found
        return make

    return register


def templates(app: str | None = None, level: str | None = None) -> list[Template]:
    """The templates (of ``app``, at ``level``), in a fixed order: by level, then name."""
    from agentgym.envs.gui.tasks import load_templates

    load_templates()
    found = [
        t
        for t in TEMPLATES.values()
        if (app is None or t.app == app) and (level is None or t.level == level)
    ]
    return sorted(found, key=lambda t: (LEVELS.index(t.level), t.name))


def generate(found: Template, seed: int) -> dict[str, Any]:
    """The task ``found`` makes from ``seed``, with its ``id``, checked."""
    task = found.make(np.random.default_rng(seed))
    task["id"] = f"{found.key}-{seed}"
    check_task(task)
    return task


# ---------------------------------------------------------------------- checking


def check_task(task: Mapping[str, Any]) -> None:
    """Raise a :class:`UsageError` naming the first thing in ``task`` the engine cannot run."""
    name = task.get("id", "a desktop task")
    if not isinstance(task.get("instruction"), str) or not task["instruction"].strip():
        raise UsageError(f"{name}: 'instruction' must be a sentence")
    extra = task.get("agentgym", {})
    files, oracle = extra.get("files", {}), extra.get("oracle", [])
    for step in task.get("config", []):
        if not isinstance(step, Mapping) or not isinstance(step.get("parameters", {}), Mapping):
            raise UsageError(f"{name}: a config step is {{type, parameters}}, got {step!r:.80}")
        if step.get("type") not in CONFIG_STEPS:
            raise UsageError(
                f"{name}: unknown config step {step.get('type')!r}; the engine runs "
                f"{', '.join(CONFIG_STEPS)}"
            )
    for spec in _getter_specs(task.get("evaluator", {}), name):
        if spec.get("type") not in GETTERS:
            raise UsageError(
                f"{name}: unknown getter {spec.get('type')!r}; the engine has {', '.join(GETTERS)}"
            )
    for key in _local_keys(task):
        if key not in files:
            raise UsageError(f"{name}: local://{key} names no file of agentgym.files")
    _check_oracle(name, oracle)


def _evaluator_parts(evaluator: Mapping[str, Any], name: str) -> list[tuple[str, Any, Any, Any]]:
    """``(metric, result, expected, options)`` for each metric of the evaluator (one, or
    OSWorld's parallel lists joined by ``conj``)."""
    funcs = evaluator.get("func")
    if isinstance(funcs, str):
        return [
            (funcs, evaluator.get("result"), evaluator.get("expected"), evaluator.get("options"))
        ]
    if not isinstance(funcs, list) or not funcs:
        raise UsageError(f"{name}: evaluator 'func' must be a metric name or a list of them")

    def column(key: str) -> list[Any]:
        values = evaluator.get(key)
        values = [None] * len(funcs) if values is None else values
        if not isinstance(values, list) or len(values) != len(funcs):
            raise UsageError(f"{name}: evaluator {key!r} must be a list as long as 'func'")
        return values

    return list(zip(funcs, column("result"), column("expected"), column("options"), strict=True))


def _getter_specs(evaluator: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    """The evaluator's getter specs; checks its metric names and ``conj`` on the way."""
    if evaluator.get("conj", "and") not in ("and", "or"):
        raise UsageError(f"{name}: evaluator 'conj' is 'and' or 'or', got {evaluator['conj']!r}")
    specs = []
    for func, result, expected, _ in _evaluator_parts(evaluator, name):
        find_metric(func)
        if not isinstance(result, Mapping):
            raise UsageError(f"{name}: metric {func!r} has no 'result' getter")
        specs += [s for s in (result, expected) if s is not None]
    return specs


def _local_keys(value: Any) -> list[str]:
    """Every ``local://KEY`` anywhere in ``value``."""
    if isinstance(value, str):
        return [value.removeprefix("local://")] if value.startswith("local://") else []
    if isinstance(value, Mapping):
        return [k for v in value.values() for k in _local_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _local_keys(v)]
    return []


def _check_oracle(name: str, oracle: Any) -> None:
    from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS
    from agentgym.envs.web import actions as web_actions
    from agentgym.task_env import InvalidAction

    if not isinstance(oracle, list) or not oracle:
        raise UsageError(f"{name}: agentgym.oracle must be a list of pixel actions")
    for action in oracle:
        try:
            web_actions.parse(action, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)
        except InvalidAction as mistake:
            raise UsageError(f"{name}: oracle action {action!r}: {mistake}") from None


# ---------------------------------------------------------------------- paths


def home_path(desktop: Desktop, path: str) -> Path:
    """The host path of a task's ``~/...`` (or ``/home/user/...``) path; outside the home is a
    task's bug."""
    for prefix in HOME_PREFIXES:
        if path == prefix or path.startswith(prefix + "/"):
            return desktop.home / path[len(prefix) :].lstrip("/")
    raise UsageError(f"desktop task path {path!r} is not in the home (~/... or /home/user/...)")


def expand(desktop: Desktop, argument: str) -> str:
    """A command's argument with a leading ``~`` as the applications see their home
    (:data:`~agentgym.envs.gui.desktop.HOME_INSIDE`, OSWorld's ``/home/user``)."""
    from agentgym.envs.gui.desktop import HOME_INSIDE

    if argument == "~" or argument.startswith("~/"):
        return str(HOME_INSIDE) + argument[1:]
    return argument


# ---------------------------------------------------------------------- config steps


@dataclass
class Run:
    """What a config step or a getter works with: the desktop, the task's files, and a scratch
    folder (the host's, outside the home) for copies and gold files."""

    desktop: Desktop
    files: Mapping[str, str | bytes]
    scratch: Path

    def file(self, url: str) -> str | bytes:
        return self.files[url.removeprefix("local://")]


def _download(run: Run, files: Sequence[Mapping[str, str]]) -> None:
    from agentgym.envs.gui.desktop import write_files

    home = run.desktop.home
    written = {
        str(home_path(run.desktop, f["path"]).relative_to(home)): run.file(f["url"]) for f in files
    }
    write_files(home, written, run.desktop.uid)


def _launch(run: Run, command: Sequence[str]) -> None:
    run.desktop.launch(command[0], *(expand(run.desktop, a) for a in command[1:]))


OPENERS = {
    ".txt": "mousepad",
    ".md": "mousepad",
    ".csv": "gnumeric",
    ".gnumeric": "gnumeric",
    ".xlsx": "gnumeric",
    ".ods": "gnumeric",
}
"""The application ``open`` starts for a file, by suffix (a folder: ``pcmanfm``)."""


def _open(run: Run, path: str) -> None:
    target = home_path(run.desktop, path)
    app = "pcmanfm" if target.is_dir() else OPENERS.get(target.suffix.lower())
    if app is None:
        raise UsageError(f"open: no application for {path!r}; known: {', '.join(OPENERS)}")
    run.desktop.launch(app, expand(run.desktop, path))


def _execute(run: Run, command: Sequence[str]) -> None:
    status, _ = run.desktop.run([expand(run.desktop, a) for a in command])
    if status != 0:
        raise UsageError(f"execute: {list(command)} failed (status {status}) in the task's setup")


def _sleep(run: Run, seconds: float) -> None:
    time.sleep(min(float(seconds), SLEEP_LIMIT))


def _activate_window(run: Run, window_name: str) -> None:
    run.desktop.activate(window_name)


CONFIG_STEPS: dict[str, Callable[..., None]] = {
    "download": _download,
    "launch": _launch,
    "open": _open,
    "execute": _execute,
    "sleep": _sleep,
    "activate_window": _activate_window,
}
"""OSWorld's config steps the engine runs, by ``type``; each takes the step's parameters."""


def run_config(desktop: Desktop, task: Mapping[str, Any], scratch: Path) -> None:
    """Run the task's ``config`` steps in order on a desktop whose home was just restored."""
    run = Run(desktop, task.get("agentgym", {}).get("files", {}), scratch)
    for step in task.get("config", []):
        try:
            CONFIG_STEPS[step["type"]](run, **step.get("parameters", {}))
        except TypeError as mistake:
            raise UsageError(f"{task.get('id')}: config step {step['type']!r}: {mistake}") from None


# ---------------------------------------------------------------------- getters


def get_vm_file(run: Run, path: str, dest: str, **_: Any) -> str | None:
    """A host copy of a regular file in the home (None if missing, not a regular file inside
    the home, or bigger than :data:`FILE_LIMIT`: an agent's link or pipe reads as missing)."""
    source = home_path(run.desktop, path)
    try:
        real = source.resolve(strict=True)
        if not real.is_relative_to(run.desktop.home.resolve()):
            return None
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > FILE_LIMIT:
            return None
        content = handle.read(FILE_LIMIT + 1)
    copy = run.scratch / "result" / Path(dest).name
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(content)
    return str(copy)


def get_cloud_file(run: Run, path: str, dest: str, **_: Any) -> str:
    """A host path of the task's file ``local://KEY`` (a gold file: never in the home)."""
    content = run.file(path)
    gold = run.scratch / "expected" / Path(dest).name
    gold.parent.mkdir(parents=True, exist_ok=True)
    gold.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(gold)


def get_rule(run: Run, rules: Any, **_: Any) -> Any:
    """The rules themselves (OSWorld's ``rule``)."""
    return rules


def get_vm_command_line(run: Run, command: Sequence[str] | str, **_: Any) -> str | None:
    """The stdout of a command run as the desktop's uid (None if it ran past its time)."""
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
    status, output = run.desktop.run([expand(run.desktop, a) for a in argv])
    return None if status is None else output.decode("utf-8", errors="replace")


def get_list_directory(run: Run, path: str, **_: Any) -> list[str] | None:
    """The sorted names in a folder of the home (None if it is missing)."""
    folder = home_path(run.desktop, path)
    try:
        real = folder.resolve(strict=True)
        if not real.is_relative_to(run.desktop.home.resolve()):
            return None
        return sorted(os.listdir(real))
    except OSError:
        return None


GETTERS: dict[str, Callable[..., Any]] = {
    "vm_file": get_vm_file,
    "cloud_file": get_cloud_file,
    "rule": get_rule,
    "vm_command_line": get_vm_command_line,
    "list_directory": get_list_directory,
}
"""OSWorld's getters the engine has, by ``type``; each takes the spec's other keys."""


# ---------------------------------------------------------------------- evaluating


def _get(run: Run, spec: Mapping[str, Any] | None) -> Any:
    if spec is None:
        return None
    parameters = {k: v for k, v in spec.items() if k != "type"}
    return GETTERS[spec["type"]](run, **parameters)


def evaluate(desktop: Desktop, task: Mapping[str, Any], scratch: Path) -> tuple[float, str]:
    """The task's score (OSWorld's: with ``conj`` "and" any 0 is 0, else the mean; with "or"
    the best) and a sentence saying how each metric scored."""
    run = Run(desktop, task.get("agentgym", {}).get("files", {}), scratch)
    evaluator = task["evaluator"]
    conj = evaluator.get("conj", "and")
    scores, notes = [], []
    for func, result, expected, options in _evaluator_parts(evaluator, task.get("id", "")):
        got = _get(run, result)
        arguments = (got,) if expected is None else (got, _get(run, expected))
        score = float(find_metric(func)(*arguments, **(options or {})))
        scores.append(score)
        notes.append(f"{func} {score:.2f}")
        if conj == "and" and score == 0.0:
            break
    if conj == "or":
        return max(scores), "; ".join(notes)
    return (0.0 if 0.0 in scores else sum(scores) / len(scores)), "; ".join(notes)


# ---------------------------------------------------------------------- env ids

EPISODE_STEPS = {"mousepad": 16, "gnumeric": 24, "pcmanfm": 20, "xterm": 16}
"""Steps of an episode, per app: room for its longest oracle (11, 17, 16 and 9 actions over 60
seeds) and a few more (a test keeps every oracle within them), and no more, since the check's
random agent plays every step of its episodes (0.13-0.4 s each)."""

MAX_EPISODE_STEPS = max(EPISODE_STEPS.values())
"""The longest episode of any app."""


def desktop_id(app: str) -> str:
    """The env id of ``app``'s tasks: ``gui/Mousepad-v0``."""
    return f"gui/{APP_IDS[app]}-v0"


def register_desktop_ids() -> None:
    """Register one env id per app with templates (:class:`~agentgym.envs.gui.desktop_env.
    DesktopTaskEnv`); imports the template modules, not the desktop."""
    from agentgym.registry import register

    for app in sorted({t.app for t in templates()}):
        register(
            desktop_id(app),
            entry_point="agentgym.envs.gui.desktop_env:DesktopTaskEnv",
            kwargs={"app": app},
            max_episode_steps=EPISODE_STEPS[app],
            extra="gui",
            episode_cpus=1.0,  # a desktop (X server and apps) per episode
            description=f"{APP_IDS[app]} tasks on a real desktop, in OSWorld's shape: "
            f"screenshots in, mouse and keyboard out",
            nondeterministic=True,  # a frame depends on when the app redraws; verdicts replay
        )


# ---------------------------------------------------------------------- export


def export(folder: Path, app: str, seed: int) -> list[Path]:
    """Write every template of ``app`` made from ``seed`` as OSWorld JSON in ``folder``, each
    task's files in ``folder/<id>/``; return the JSON paths."""
    found = templates(app)
    if not found:
        apps = sorted({t.app for t in templates()})
        raise UsageError(f"no templates of app {app!r}; apps with templates: {apps}")
    written = []
    for each in found:
        task = generate(each, seed)
        extra = dict(task.pop("agentgym"))
        files = extra.pop("files", {})
        task["agentgym"] = extra
        for key, content in files.items():
            target = folder / task["id"] / key
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        path = folder / f"{task['id']}.json"
        path.write_text(json.dumps(task, indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m agentgym.envs.gui.osworld",
        description="Write the desktop tasks of one app as OSWorld JSON files.",
    )
    parser.add_argument("--export", type=Path, required=True, metavar="DIR")
    parser.add_argument("--app", required=True, choices=sorted(APP_IDS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    # The registry is the importable module's, not __main__'s copy (python -m runs this file).
    from agentgym.envs.gui import osworld

    for path in osworld.export(args.export, args.app, args.seed):
        print(path)


if __name__ == "__main__":
    main()
