"""Run mypy over the whole product, through the layout Python imports it by.

``pyproject.toml``'s ``package-dir`` maps the top-level folders into the ``agentgym``
namespace (``envs/`` is ``agentgym.envs``); the editable install resolves that with an import
hook that mypy cannot follow, so an ``agentgym.envs`` import was ``Any`` to mypy and the
families went unchecked. This script builds the namespace as mypy sees it — a folder of
symbolic links, ``build/typecheck/agentgym/``, one link per core entry and per mapped folder —
runs ``mypy -p agentgym`` there with the project's configuration, and writes mypy's report
with the links' paths turned back into the checkout's (``envs/swe/env.py:12: error: ...``).

Usage: ``python tests/typecheck.py [MYPY ARGS...]`` (``make lint`` runs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"
PACKAGE = "agentgym"


def package_dir() -> dict[str, str]:
    """Package prefix -> folder, from pyproject.toml (the one place the mapping is written)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return dict(config["tool"]["setuptools"]["package-dir"])


def build_tree(mapping: dict[str, str]) -> dict[str, str]:
    """The link tree, brought up to date in place (several runs at once may share it).

    Returns link path prefix (relative to ROOT) -> the checkout's folder prefix.
    """
    package = TREE / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    mapped = {
        prefix.split(".", 1)[1]: folder for prefix, folder in mapping.items() if "." in prefix
    }
    core = ROOT / mapping[PACKAGE]
    wanted = {
        entry.name: entry
        for entry in core.iterdir()
        if entry.name != "__pycache__" and entry.name not in mapped
    }
    wanted |= {name: ROOT / folder for name, folder in mapped.items()}
    for link in package.iterdir():
        if link.name not in wanted or not link.is_symlink():
            link.unlink() if link.is_symlink() or link.is_file() else shutil.rmtree(link)
    for name, target in wanted.items():
        link, relative = package / name, os.path.relpath(target, package)
        if link.is_symlink() and os.readlink(link) == relative:
            continue
        if link.is_symlink():
            link.unlink()
        link.symlink_to(relative)
    base = f"{TREE.relative_to(ROOT)}/{PACKAGE}/"
    shown = {f"{base}{name}/": f"{folder}/" for name, folder in mapped.items()}
    shown[base] = f"{mapping[PACKAGE]}/"
    return shown


def checkout_path(line: str, shown: dict[str, str]) -> str:
    """``build/typecheck/agentgym/envs/x.py:3: ...`` -> ``envs/x.py:3: ...``."""
    for link, real in sorted(shown.items(), key=lambda item: len(item[0]), reverse=True):
        if line.startswith(link):
            return real + line[len(link) :]
    return line


def main(argv: list[str]) -> int:
    mapping = package_dir()
    shown = build_tree(mapping)
    print(
        f"mypy -p {PACKAGE}: " + ", ".join(f"{folder}/" for folder in mapping.values()), flush=True
    )
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "-p",
        PACKAGE,
        *argv,
    ]
    env = {**os.environ, "MYPYPATH": str(TREE)}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        print(checkout_path(line, shown))
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
