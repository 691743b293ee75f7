"""Packages and their data files are discovered here, not listed by hand.

Everything else about the build is in ``pyproject.toml``, including ``package-dir``, which maps
the top-level folders into the ``agentgym`` namespace (``envs/`` is ``agentgym.envs``). This
file walks those folders: every folder with an ``__init__.py`` is a package, and every file
that is not Python source is data of the nearest package above it (the sites' templates and
static files, the benchmark suites' YAML, the games' word lists, the browser's scripts). A
package or file forgotten in a hand-written list imported fine in a development install and
was missing from the wheel; ``tests/test_wheel.py`` builds the wheel and checks its contents.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).parent
SKIPPED = {"__pycache__"}
SOURCE_SUFFIXES = {".py", ".pyc", ".pyo"}


def package_dir() -> dict[str, str]:
    config = tomllib.loads((HERE / "pyproject.toml").read_text())
    return dict(config["tool"]["setuptools"]["package-dir"])


def discover(mapping: dict[str, str]) -> tuple[list[str], dict[str, list[str]]]:
    """Every package under the mapped folders, and each package's data files."""
    packages: list[str] = []
    data: dict[str, list[str]] = {}
    for prefix, folder in mapping.items():
        root = HERE / folder
        for init in sorted(root.rglob("__init__.py")):
            package_folder = init.parent
            if any(part in SKIPPED for part in package_folder.parts):
                continue
            parts = package_folder.relative_to(root).parts
            name = ".".join((prefix, *parts))
            packages.append(name)
            files = _data_files(package_folder)
            if files:
                data[name] = files
    return packages, data


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


PACKAGES, PACKAGE_DATA = discover(package_dir())

setup(packages=PACKAGES, package_data=PACKAGE_DATA)
