"""The wheel is the product: built from a copy of the checkout, it holds every module and data
file, and installed into a clean virtual environment every registered id makes and every
env class resets (every id of a small class, a fixed sample of a large one in the suite:
``RESET_PER_CLASS``; every id under ``make check``).

The clean environment gets the development environment's third-party packages through a
path entry (so nothing is downloaded), but not its editable agentgym: what it imports is the
wheel's, and the test checks that it is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from package_layout import ROOT, package_folders, package_modules
from sampling import sample

pytestmark = pytest.mark.slow

SKIP_COPY = shutil.ignore_patterns(
    ".venv", ".git", "runs", "build", "dist", "*.egg-info", "__pycache__"
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source") / "agentgym"
    shutil.copytree(ROOT, source, ignore=SKIP_COPY)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(source)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    (built,) = out.glob("agentgym-*.whl")
    return built


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return listed


def test_the_wheel_holds_every_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = package_modules()
    missing = [
        f"{module} ({path.relative_to(ROOT)})"
        for module, path in modules.items()
        if _wheel_path(module, path) not in names
    ]
    assert not missing, f"modules missing from the wheel: {missing}"
    # Every data file the checkout tracks in a package's folder, in the package it belongs
    # to: the nearest folder above it that is a package.
    packages = {
        path.parent: module for module, path in modules.items() if path.name == "__init__.py"
    }
    roots = tuple(package_folders().values())
    absent, data = [], 0
    for name in tracked_files():
        path = ROOT / name
        if path.suffix == ".py" or not any(root in path.parents for root in roots):
            continue
        owner = next(folder for folder in path.parents if folder in packages)
        data += 1
        inside = packages[owner].replace(".", "/") + "/" + path.relative_to(owner).as_posix()
        if inside not in names:
            absent.append(name)
    assert data > 30 and not absent, f"data files missing from the wheel: {absent}"
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[agentgym.envs]" in text and "[agentgym.commands]" in text


def _wheel_path(module: str, path: Path) -> str:
    parts = module.split(".")
    if path.name == "__init__.py":
        return "/".join(parts) + "/__init__.py"
    return "/".join(parts) + ".py"


RESET_PER_CLASS = 12
"""Ids of one env class that reset in the suite: all of a small class, a fixed sample of
MiniWoB++'s 101 pages, the pixel web's 78 and reasoning-gym's 93 (all under ``make check``).
The rest differ only in their data files, which the test above finds in the wheel, and
resetting them all was 30 of the test's 52 s."""

PROGRAM = """
import json, sys, pathlib
import agentgym
where = pathlib.Path(agentgym.__file__).resolve()
assert str(where).startswith(sys.argv[1]), f"imported {where}, not the wheel's agentgym"
to_reset = set(json.loads(sys.argv[2]))
made = reset = 0
for spec in agentgym.list_envs():
    make = agentgym.make if spec.kind == "env" else agentgym.make_multi
    env = make(spec.id)
    if spec.id in to_reset:
        env.reset(seed=0)
        reset += 1
    env.close()
    made += 1
print(f"\\nmade {made} ids and reset {reset}")
"""


def ids_to_reset() -> list[str]:
    """Every env class's ids, sampled (:func:`sampling.sample`) to :data:`RESET_PER_CLASS`."""
    import agentgym

    classes: dict[object, list[str]] = {}
    for spec in agentgym.list_envs():
        classes.setdefault(spec.entry_point, []).append(spec.id)
    return [i for ids in classes.values() for i in sample(ids, RESET_PER_CLASS)]


@pytest.mark.sampled
def test_every_id_makes_and_resets_from_the_installed_wheel(wheel, tmp_path):
    import site
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    target = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    # Third-party packages from the development environment, after the wheel's own files.
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (target / "zz_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    to_reset = ids_to_reset()
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(python), "-c", PROGRAM, str(target.resolve()), json.dumps(to_reset)],
        cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    import agentgym

    made = re.search(r"made (\d+) ids and reset (\d+)", done.stdout)
    assert made and int(made.group(1)) == len(agentgym.list_envs()), done.stdout[-2000:]
    assert int(made.group(2)) == len(to_reset), done.stdout[-2000:]
    classes = {spec.entry_point for spec in agentgym.list_envs()}
    assert len(to_reset) > len(classes), to_reset
