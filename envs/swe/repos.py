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

from dataclasses import dataclass, field

from agentgym.errors import UsageError

__all__ = ["CATALOGUE", "TEST_REQUIREMENTS", "RepoSpec", "repo_spec"]

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


CATALOGUE: tuple[RepoSpec, ...] = (
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
)


def repo_spec(name: str) -> RepoSpec:
    """The catalogue's spec of ``name`` (``name`` or ``name-version``)."""
    for spec in CATALOGUE:
        if name in (spec.name, spec.key):
            return spec
    known = ", ".join(spec.name for spec in CATALOGUE)
    raise UsageError(f"no repository {name!r} in the SWE catalogue; known: {known}")
