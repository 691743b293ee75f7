"""The env-server images' recipes without building them: when an image counts as current, the
names the command accepts, and the build context's wheels.

The context test runs ``pip wheel`` and ``pip download`` for real (a few seconds with pip's
cache warm); nothing else here needs docker.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from agentgym.cli import main
from agentgym.errors import UsageError
from agentgym.sandbox import server_images
from agentgym.sandbox.server_images import SERVER_IMAGES, server_image

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> Path:
    """A copy of what the digest reads (build files, one mapped folder), as the checkout."""
    copy = tmp_path / "checkout"
    for name in (*server_images.BUILD_FILES, "constraints.txt", "containers/server.Dockerfile"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, copy / name)
    shutil.copytree(REPO / "benchmarks", copy / "benchmarks")
    monkeypatch.setattr(server_images, "CHECKOUT", copy)
    monkeypatch.setattr(server_images, "_mapped_folders", lambda: ["benchmarks"])
    return copy


def digest(name: str = "server") -> str:
    return server_images._digest(server_image(name), server_images.server_dockerfile())


def test_an_image_is_current_until_what_it_is_built_from_changes(checkout):
    """The digest in the image's label: the same checkout gives the same one; a changed
    source file, constraint, Dockerfile or image argument a new one; bytecode changes none."""
    first = digest()
    assert digest() == first and digest("web") != first
    cache = checkout / "benchmarks" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "x.cpython-311.pyc").write_bytes(b"\0")
    assert digest() == first
    seen = {first}
    for name in ("benchmarks/__init__.py", "constraints.txt", "containers/server.Dockerfile"):
        with open(checkout / name, "a") as file:
            file.write("\n# changed\n")
        seen.add(digest())
    assert len(seen) == 4


def test_unknown_images_and_mixed_options_are_refused_in_one_line(capsys):
    with pytest.raises(UsageError, match=r"no env-server image named 'nope': the images are"):
        server_image("nope")
    assert main(["containers", "build", "--rootfs-only", "--image", "server"]) != 0
    assert main(["containers", "build", "--tag", "me/x:1", "--image", "web"]) != 0
    err = capsys.readouterr().err
    assert "--rootfs-only builds no image" in err and "--tag names the sandbox image" in err


@pytest.mark.slow
def test_the_context_holds_this_checkouts_wheel_and_its_dependencies(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path))
    context = server_images._fill_context(SERVER_IMAGES["web"], tmp_path, log=lambda line: None)
    (ours,) = (context / "agentgym").iterdir()
    names = set(zipfile.ZipFile(ours).namelist())
    assert "agentgym/remote/server.py" in names and "agentgym/envs/web/browser.py" in names
    wheels = {path.name.split("-")[0].lower() for path in (context / "wheels").iterdir()}
    assert {"starlette", "uvicorn", "websockets", "gymnasium", "playwright", "miniwob"} <= wheels
    # miniwob without its declared selenium (as the Makefile installs it); no agentgym twice.
    assert "selenium" not in wheels and "agentgym" not in wheels
    assert all(path.suffix == ".whl" for path in (context / "wheels").iterdir())


def test_the_command_builds_what_it_is_asked_for(monkeypatch, capsys):
    """No option: the sandbox image (as before); --image: those; --all: every image, once."""
    from agentgym.sandbox import dockerd, images

    built: list[str] = []
    monkeypatch.setattr(dockerd, "docker_problem", lambda: None)
    monkeypatch.setattr(images, "build_image", lambda tag, force: built.append(tag) or tag)
    monkeypatch.setattr(
        server_images, "build_server_image", lambda name, force: built.append(name) or name
    )
    runs = {
        (): ["agentgym/sandbox:latest"],
        ("--image", "web", "--image", "gui", "--image", "web"): ["web", "gui"],
        ("--all",): ["agentgym/sandbox:latest", *SERVER_IMAGES],
    }
    for options, expected in runs.items():
        built.clear()
        assert main(["containers", "build", *options]) == 0
        assert built == expected, options
    assert "done in" in capsys.readouterr().out
