"""The editable install (``pip install -e .``, what ``make install`` does) imports the checkout
whatever else is on ``sys.path``: a clone in a folder named ``agentgym``, with a script run
from its parent, put that folder first on the path, and Python's path finder took the clone's
root for a namespace package before setuptools' finder for the mapped folders was asked
(``module 'agentgym' has no attribute 'make'``). setup.py's ``EditableWheel`` puts that
finder first; this test installs a copy of the checkout, in a folder named ``agentgym``, that
way into a clean virtual environment and runs a script from the folder above it.

The build prints no warning either: setuptools warned 14 times of our own metadata (the
license as a TOML table, every templates/static folder "absent from the packages
configuration"), which read like a broken install.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from package_layout import ROOT, package_folders

pytestmark = pytest.mark.slow

SCRIPT = """
import pathlib, sys
import agentgym
where = pathlib.Path(agentgym.__file__).resolve()
assert where.is_relative_to(sys.argv[1]), f"imported {where}"
print("make:", agentgym.make("games/Maze-v0").reset(seed=0)[1]["task_id"])
"""


def _copy_of_the_checkout(parent: Path) -> Path:
    """The files an editable build reads, in ``parent/agentgym``."""
    clone = parent / "agentgym"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in {path.relative_to(ROOT).parts[0] for path in package_folders().values()}:
        shutil.copytree(ROOT / folder, clone / folder, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, clone / name)
    return clone


def _editable_venv(clone: Path, where: Path) -> tuple[Path, str]:
    """A virtual environment with ``clone`` installed editable (the development
    environment's third-party packages on a path entry, so nothing is downloaded), and what
    the build printed."""
    build = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
         "print(b.build_editable(sys.argv[1]))", str(where)],
        cwd=clone, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = where / build.stdout.strip().splitlines()[-1]
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", purelib,
         str(wheel)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (Path(purelib) / "zz_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python, build.stdout + build.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path, str]:
    """The copy of the checkout, the python it is installed into, and the build's output."""
    where = tmp_path_factory.mktemp("editable")
    clone = _copy_of_the_checkout(where / "work")
    python, output = _editable_venv(clone, where)
    return clone, python, output


def test_the_build_prints_no_warning_of_ours(installed):
    _, _, output = installed
    # setuptools' notices are warnings of their own classes (InformationOnly, whose name says
    # nothing of warning), each framed by "!!" lines; pip prints them as BuildBackendWarning.
    warnings = [
        line
        for line in output.splitlines()
        if "warn" in line.lower() or "InformationOnly" in line or line.strip() == "!!"
    ]
    assert not warnings, "\n".join(warnings)


def test_a_folder_named_agentgym_on_the_path_does_not_shadow_the_editable_install(installed):
    clone, python, _ = installed
    parent = clone.parent
    (parent / "script.py").write_text(SCRIPT)
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(python), "script.py", str(clone.resolve())],
        cwd=parent, env=environ, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "make: " in done.stdout, done.stdout
