"""Where the package's modules live in the checkout: the folders ``pyproject.toml``'s
``package-dir`` maps into the ``agentgym`` namespace, walked (for the layer and wheel tests)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


def package_folders() -> dict[str, Path]:
    """Package prefix -> its folder, from pyproject.toml's package-dir mapping."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {prefix: ROOT / folder for prefix, folder in mapping.items()}


def package_modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    found: dict[str, Path] = {}
    for prefix, folder in sorted(package_folders().items(), key=lambda item: len(item[0])):
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((prefix, *parts))] = path
    return found
