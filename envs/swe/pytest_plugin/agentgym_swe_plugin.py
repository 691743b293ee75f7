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

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("agentgym")
    group.addoption("--agentgym-callmap", default=None, help="write the call map JSON here")
    group.addoption("--agentgym-root", default=None, help="the repository's root directory")


def pytest_itemcollected(item):
    item.user_properties.append(("nodeid", item.nodeid))


class CallMap:
    """Which repository functions each test calls; see the module docstring."""

    def __init__(self, root, exclude):
        self.root = os.path.join(os.path.realpath(root), "")
        self.exclude = tuple(os.path.join(os.path.realpath(p), "") for p in exclude)
        self.calls = {}
        self.current = None
        self.known = {}  # code object -> [path, name] or None (not the repository's)

    def _trace(self, frame, event, arg):
        code = frame.f_code
        entry = self.known.get(code, False)
        if entry is False:
            entry = self._entry(code)
            self.known[code] = entry
        if entry is not None and self.current is not None:
            self.current.add(entry)
        return None

    def _entry(self, code):
        if code.co_filename.startswith("<"):  # <frozen ...>, <string>: not a file of ours
            return None
        path = os.path.realpath(code.co_filename)
        if not path.startswith(self.root) or path.startswith(self.exclude):
            return None
        name = getattr(code, "co_qualname", code.co_name).split(".<locals>", 1)[0]
        return (os.path.relpath(path, self.root), name)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
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


def pytest_configure(config):
    path = config.getoption("--agentgym-callmap")
    if path:
        root = config.getoption("--agentgym-root") or str(config.rootpath)
        tests = [str(config.rootpath / arg.split("::")[0]) for arg in config.args]
        plugin = CallMap(root, [t for t in tests if os.path.isdir(t)])
        config._agentgym_callmap = (plugin, path)
        config.pluginmanager.register(plugin, "agentgym-callmap")


def pytest_unconfigure(config):
    found = getattr(config, "_agentgym_callmap", None)
    if found:
        plugin, path = found
        with open(path, "w") as out:
            json.dump(plugin.calls, out)
