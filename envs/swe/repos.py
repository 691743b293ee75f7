"""The repositories the SWE family makes tasks from: real packages, pinned by version and hash.

Each is a pure-Python package whose source distribution on PyPI ships its own pytest suite.
``agentgym swe prepare`` downloads the sdist (by name, version and sha256), unpacks it as the
repository, builds its test environment and records which tests pass
(:mod:`agentgym.envs.swe.prepare`). A :class:`RepoSpec` says what that needs beyond pytest:
where the tests are, where the package imports from, the extra test requirements (pinned),
the pytest options the repository's own configuration would have added (its ``addopts`` are
replaced, see ``docs/envs/swe.md``), and tests to leave out because they depend on this
machine rather than on the code (network, time zones).

Splits are disjoint by repository: a model trained on the ``train`` repositories is tested
on code it has not seen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from agentgym.errors import UsageError

__all__ = ["CATALOGUE", "TEST_REQUIREMENTS", "PreparedRepo", "RepoSpec", "repo_spec"]

TEST_REQUIREMENTS = ("pytest==8.4.2",)
"""Installed in every repository's test environment (then each spec's own)."""


@dataclass(frozen=True)
class RepoSpec:
    """One repository: a PyPI source distribution and how to run its tests.

    Attributes:
        name: the distribution's name on PyPI, also the repository's name here.
        version: the pinned version.
        sha256: the sdist's sha256 (pip refuses any other file).
        url: the upstream repository (``owner/name`` on GitHub), for SWE-bench's ``repo``.
        split: ``train``, ``dev`` or ``test``: every task of the repository is in it.
        tests: the test paths pytest is given, relative to the repository.
        import_roots: the directories the package imports from (``src`` for a src layout).
        requirements: pinned test requirements on top of :data:`TEST_REQUIREMENTS`.
        pytest_args: options the repository's configuration needs (its ``addopts`` are not
            used: they often name plugins such as coverage that the tests do not need).
        deselect: test ids (or id prefixes) left out: they depend on the machine.
    """

    name: str
    version: str
    sha256: str
    url: str
    split: str
    tests: tuple[str, ...] = ("tests",)
    import_roots: tuple[str, ...] = (".",)
    requirements: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()
    deselect: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        """``name-version``: the repository's directory in the cache."""
        return f"{self.name}-{self.version}"

    def requirement_line(self) -> str:
        """The sdist as a hash-pinned requirement, for ``pip download --require-hashes``."""
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


HYPOTHESIS = ("hypothesis==6.170.17", "sortedcontainers==2.4.0")

CATALOGUE: tuple[RepoSpec, ...] = (
    # test: the held-out repositories (the six quickest suites).
    RepoSpec(
        name="more-itertools",
        version="11.2.1",
        sha256="cbf08fd0af284dc69718b9b76a8e6203df624d70209ea511e4219d350c856f63",
        url="more-itertools/more-itertools",
        split="test",
    ),
    RepoSpec(
        name="toolz",
        version="1.2.0",
        sha256="9667a038e9d6ecba37995e26cb2f59ec6420b6ad8dd9677de59db9b956b08490",
        url="pytoolz/toolz",
        split="test",
        tests=("toolz/tests",),
    ),
    RepoSpec(
        name="boltons",
        version="26.2.0",
        sha256="d39cfd15c1a1c3bd4d705c82252fa9edb8e4f5e8cc039f8e39afac7b1b47e92c",
        url="mahmoud/boltons",
        split="test",
    ),
    RepoSpec(
        name="tabulate",
        version="0.10.0",
        sha256="e2cfde8f79420f6deeffdeda9aaec3b6bc5abce947655d17ac662b126e48a60d",
        url="astanin/python-tabulate",
        split="test",
        tests=("test",),
        requirements=("wcwidth==0.9.4",),
    ),
    RepoSpec(
        name="cachetools",
        version="8.0.2",
        sha256="30ac523adfc118b51d2b2e7bad8a0ddb31370dfe2700c7f10ca224f36ccf81e0",
        url="tkem/cachetools",
        split="test",
        import_roots=("src",),
    ),
    RepoSpec(
        name="parse",
        version="1.22.4",
        sha256="706d458feed5a81b02768d3156e8070baf6cee7d150a3a3c0cd43101a875c3b5",
        url="r1chardj0n3s/parse",
        split="test",
        tests=("tests", "README.rst"),  # its addopts ran README.rst's doctests too
    ),
    # train
    RepoSpec(
        name="attrs",
        version="26.1.0",
        sha256="d03ceb89cb322a8fd706d4fb91940737b6642aa36998fe130a9bc96c985eff32",
        url="python-attrs/attrs",
        split="train",
        import_roots=("src",),
        requirements=(*HYPOTHESIS, "cloudpickle==3.1.3", "pympler==1.1"),
        deselect=(
            # They read the installed distribution's metadata: the package is not installed.
            "tests/test_packaging.py::TestLegacyMetadataHack::test_version",
            # Reads a wrapped converter's return annotation through inspect.signature,
            # which finds it only from Python 3.13 on.
            "tests/test_converters.py::TestPipe::test_wrapped_annotation",
        ),
    ),
    RepoSpec(
        name="python-dateutil",
        version="4.0.0",
        sha256="d7295ff14fdc0f92f662100bfb6c551d160ca090f2939f1ec5b9794265c03f06",
        url="dateutil/dateutil",
        split="train",
        import_roots=("src",),
        requirements=(*HYPOTHESIS, "attrs==26.1.0", "freezegun==1.5.5", "tzdata==2026.6"),
        # Its conftest marks tests ``no_cover``, a marker only pytest-cov registers, and its
        # warnings are errors.
        pytest_args=("-W", "ignore::pytest.PytestUnknownMarkWarning"),
        deselect=(
            # The installed distribution's metadata (not installed) and this machine's
            # /usr/share/zoneinfo, which differs from the tzdata package's.
            "tests/test_imports.py::test_version_matches_distribution_metadata",
            "tests/test_tz.py::test_gettz_link[tzpath-Europe/Monaco-Europe/Paris]",
            "tests/test_tzfile.py::test_gettz_local_abbreviation_without_time_zone_data",
            "tests/test_tzpath_data.py::test_dst_matches_tzdata_zi[tzpath]",
        ),
    ),
    RepoSpec(
        name="click",
        version="8.5.1",
        sha256="9bbfada76703fd1d784b83eea012e3e8c6a001a876543ef104fa56aaaeb072b4",
        url="pallets/click",
        split="train",
        import_roots=("src",),
        # Stress tests are left out by its own addopts; test_deprecations.py reads the
        # installed distribution's metadata when imported (the package is not installed).
        pytest_args=("-m", "not stress", "--ignore=tests/test_deprecations.py"),
    ),
    # dev
    RepoSpec(
        name="marshmallow",
        version="4.4.0",
        sha256="9e6ffa8511012ca89732324c1c253efd7b4d35632dcbdf80aa793fe01804af3e",
        url="marshmallow-code/marshmallow",
        split="dev",
        import_roots=("src",),
        requirements=("simplejson==4.3.0",),
    ),
)


def repo_spec(name: str) -> RepoSpec:
    """The catalogue's spec of ``name`` (``name`` or ``name-version``)."""
    for spec in CATALOGUE:
        if name in (spec.name, spec.key):
            return spec
    known = ", ".join(spec.name for spec in CATALOGUE)
    raise UsageError(f"no repository {name!r} in the SWE catalogue; known: {known}")


@dataclass(frozen=True)
class PreparedRepo:
    """A prepared repository in the cache (:mod:`~agentgym.envs.swe.prepare` makes it and
    describes its files). Here, below the workspace and the preparation that both use it."""

    spec: RepoSpec
    root: Path

    @property
    def tree(self) -> Path:
        return self.root / "tree"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def git_dir(self) -> Path:
        return self.root / "git"

    @cached_property
    def manifest(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / "manifest.json").read_text())
        return data

    @cached_property
    def baseline(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / "baseline.json").read_text())
        return data

    @property
    def base_commit(self) -> str:
        return str(self.manifest["base_commit"])

    @cached_property
    def passing(self) -> frozenset[str]:
        """The tests that passed in both baseline runs."""
        return frozenset(self.baseline["passing"])

    @cached_property
    def callers(self) -> dict[tuple[str, str], list[str]]:
        """(path, function) -> the passing tests that call it, in suite order."""
        found: dict[tuple[str, str], list[str]] = {}
        for nodeid, calls in self.baseline["calls"].items():
            if nodeid in self.passing:
                for path, name in calls:
                    found.setdefault((path, name), []).append(nodeid)
        return found

    def durations(self) -> Mapping[str, float]:
        durations: dict[str, float] = self.baseline["durations"]
        return durations

    def read(self, path: str) -> str:
        """A file of the pristine tree, as text (its line ends as they are: ``\r\n`` stays)."""
        return (self.tree / path).read_bytes().decode("utf-8")
