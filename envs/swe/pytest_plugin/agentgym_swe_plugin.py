"""A pytest plugin loaded (``-p agentgym_swe_plugin``) into every test run of the SWE family.

It runs inside the sandbox, in the repository's own test environment, so it imports nothing
from agentgym. Two jobs:

* every test case's JUnit XML record carries the test's pytest node id as a property
  (``<property name="nodeid" .../>``), so results are matched to ids exactly; the XML's
  ``classname``/``name`` pair cannot always be turned back into the id pytest accepts;
* with ``--agentgym-callmap=FILE``, which functions of the repository each test calls:
  a ``sys.settrace`` hook that records the code object of every call made from a file under
  ``--agentgym-root`` and traces no lines (so a test runs a few times slower, not a hundred),
  written as JSON ``{nodeid: [[path, qualified name], ...]}``. The task factory runs only the
  tests that call the function it broke.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Generator, Iterable
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import pluggy

Entry = tuple[str, str]
"""A repository function: its file (relative to the root) and qualified name."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentgym")
    group.addoption("--agentgym-callmap", default=None, help="write the call map JSON here")
    group.addoption("--agentgym-root", default=None, help="the repository's root directory")


def pytest_itemcollected(item: pytest.Item) -> None:
    item.user_properties.append(("nodeid", item.nodeid))


class CallMap:
    """Which repository functions each test calls; see the module docstring."""

    def __init__(self, root: str, exclude: Iterable[str]) -> None:
        self.root = os.path.join(os.path.realpath(root), "")
        self.exclude = tuple(os.path.join(os.path.realpath(p), "") for p in exclude)
        self.calls: dict[str, list[Entry]] = {}
        self.current: set[Entry] | None = None
        self.known: dict[CodeType, Entry | None] = {}  # None: not the repository's

    def _trace(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        try:  # one look-up per call once known: this runs at every call of a traced test
            entry = self.known[code]
        except KeyError:
            entry = self.known[code] = self._entry(code)
        if entry is not None and self.current is not None:
            self.current.add(entry)
        return None

    def _entry(self, code: CodeType) -> Entry | None:
        if code.co_filename.startswith("<"):  # <frozen ...>, <string>: not a file of ours
            return None
        path = os.path.realpath(code.co_filename)
        if not path.startswith(self.root) or path.startswith(self.exclude):
            return None
        name = getattr(code, "co_qualname", code.co_name).split(".<locals>", 1)[0]
        return (os.path.relpath(path, self.root), name)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, pluggy.Result[object], None]:
        self.current = set()
        sys.settrace(self._trace)
        threading.settrace(self._trace)
        try:
            yield
        finally:
            sys.settrace(None)
            threading.settrace(None)
            self.calls[item.nodeid] = sorted(self.current)
            self.current = None


_CALLMAP = pytest.StashKey[tuple[CallMap, str]]()
"""The run's call map and where it is written."""


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--agentgym-callmap")
    if path:
        root = config.getoption("--agentgym-root") or str(config.rootpath)
        tests = [str(config.rootpath / arg.split("::")[0]) for arg in config.args]
        plugin = CallMap(root, [t for t in tests if os.path.isdir(t)])
        config.stash[_CALLMAP] = (plugin, path)
        config.pluginmanager.register(plugin, "agentgym-callmap")


def pytest_unconfigure(config: pytest.Config) -> None:
    found = config.stash.get(_CALLMAP, None)
    if found:
        plugin, path = found
        with open(path, "w") as out:
            json.dump(plugin.calls, out)
