"""Packages and their data files are discovered here, not listed by hand.

Everything else about the build is in ``pyproject.toml``, including ``package-dir``, which maps
the top-level folders into the ``agentgym`` namespace (``envs/`` is ``agentgym.envs``). This
file walks those folders: every folder with an ``__init__.py`` is a package, and every file
that is not Python source is data (the sites' templates and static files, the benchmark
suites' YAML, the games' word lists, the browser's scripts). A package or file forgotten in a
hand-written list imported fine in a development install and was missing from the wheel;
``tests/test_wheel.py`` builds the wheel and checks its contents.

A data folder whose name is an identifier (``templates``, ``static``, ``data``) is importable
to Python, as a namespace package, so setuptools wants it listed among the packages (it warns
once per folder otherwise): such a folder is listed as a package of data, holding its files;
data in a folder that cannot be imported (``my-data``) belongs to the package above it.
"""

from __future__ import annotations

import itertools
import re
import tomllib
import warnings
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.editable_wheel import editable_wheel
from setuptools.warnings import InformationOnly

HERE = Path(__file__).parent
SKIPPED = {"__pycache__"}
SOURCE_SUFFIXES = {".py", ".pyc", ".pyo"}


def package_dir() -> dict[str, str]:
    config = tomllib.loads((HERE / "pyproject.toml").read_text())
    return dict(config["tool"]["setuptools"]["package-dir"])


def discover(mapping: dict[str, str]) -> tuple[list[str], dict[str, list[str]]]:
    """Every package under the mapped folders (data folders included), and their data files."""
    packages: set[str] = set()
    data: dict[str, list[str]] = {}
    for prefix, folder in mapping.items():
        root = HERE / folder
        for init in sorted(root.rglob("__init__.py")):
            package_folder = init.parent
            if any(part in SKIPPED for part in package_folder.parts):
                continue
            name = ".".join((prefix, *package_folder.relative_to(root).parts))
            packages.add(name)
            for file in _data_files(package_folder):
                owner, inside = _owner(name, file)
                packages.add(owner)
                data.setdefault(owner, []).append(inside)
    return sorted(packages), data


def _owner(package: str, file: str) -> tuple[str, str]:
    """The package a data file of ``package`` belongs to (its deepest importable folder, as
    setuptools reckons it) and the file's path inside that package."""
    *folders, name = Path(file).parts
    importable = list(itertools.takewhile(str.isidentifier, folders))
    inside = Path(*folders[len(importable) :], name).as_posix()
    return ".".join((package, *importable)), inside


def _data_files(package_folder: Path) -> list[str]:
    """Non-source files of a package, in subfolders that are not packages themselves."""
    found = []
    pending = [package_folder]
    while pending:
        folder = pending.pop()
        for path in sorted(folder.iterdir()):
            if path.name in SKIPPED or path.name.startswith("."):
                continue
            if path.is_dir():
                if not (path / "__init__.py").exists():
                    pending.append(path)
            elif path.suffix not in SOURCE_SUFFIXES:
                found.append(str(path.relative_to(package_folder)))
    return sorted(found)


class EditableWheel(editable_wheel):
    """``pip install -e``, with setuptools' import hook for the mapped folders put first.

    The folders are mapped into ``agentgym`` by a finder that setuptools appends to
    ``sys.meta_path``, after Python's own path finder. A folder named ``agentgym`` on
    ``sys.path`` (a clone in a folder of that name, and a script run from its parent) is then
    found first, as a namespace package of the checkout's root, and ``agentgym.make`` is
    missing. The finder answers only for ``agentgym`` and its submodules, so putting it first
    changes nothing else; ``tests/test_editable.py`` installs a copy this way and checks."""

    def _select_strategy(self, *args: Any, **kwargs: Any) -> Any:
        return _FinderFirst(super()._select_strategy(*args, **kwargs))


class _FinderFirst:
    """An editable strategy whose ``.pth`` line moves the finder it installs to the front."""

    def __init__(self, strategy: Any) -> None:
        self.strategy = strategy

    def __enter__(self) -> Any:
        self.strategy.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        # setuptools then advises against folders named like the package in the working
        # directory (pip prints it as a BuildBackendWarning): the finder put first is what
        # makes such a folder harmless, so the advice would only alarm.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InformationOnly)
            return self.strategy.__exit__(*exc)

    def __call__(self, wheel: Any, files: list[str], mapping: Any) -> Any:
        return self.strategy(_PthRewriter(wheel), files, mapping)


class _PthRewriter:
    """The wheel being written, with the finder's ``.pth`` line extended as it is written."""

    def __init__(self, wheel: Any) -> None:
        self.wheel = wheel

    def writestr(self, name: str, content: bytes | str, *args: Any, **kwargs: Any) -> Any:
        text = content.decode() if isinstance(content, bytes) else content
        hook = re.match(r"import (__editable__\w*finder);", text)
        if name.endswith(".pth") and hook:
            finder = f"{hook[1]}._EditableFinder"
            first = f"sys.meta_path.remove({finder}); sys.meta_path.insert(0, {finder})"
            content = f"{text.rstrip()}; import sys; {first}\n".encode()
        return self.wheel.writestr(name, content, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wheel, name)


PACKAGES, PACKAGE_DATA = discover(package_dir())

setup(
    packages=PACKAGES,
    package_data=PACKAGE_DATA,
    cmdclass={"editable_wheel": EditableWheel},
)
