"""Where the suite's time goes: the slowest tests and the time per folder and per env family.

A pytest plugin (``-p timings`` in ``pyproject.toml``'s ``addopts``). At the end of a run it
prints the 25 slowest tests and a table of test time per top-level test folder and per env
family, and writes the same figures as JSON (``--timings-json``, default
``.test-timings.json``; ``docs/testing.md`` takes its figures from such a file). ``make test``
runs the suite in two phases (the tests that must run alone, then the rest on every core);
``--timings-merge`` counts the first phase's figures into the second's report, so the last
table covers the whole suite.

A test's time is setup + call + teardown, as pytest reports them. Under pytest-xdist the
reports reach the controller, so the figures cover every worker, and the wall-clock time of
the run is reported beside the summed test time (their ratio is the parallel speed-up).
The JSON file also keeps each test's worker and its start and stop (seconds into the run,
under ``spans``: what ran beside a test that was slow), and the parts that tests timed
themselves (``parts``, see :data:`PARTS_PROPERTY`).

A test belongs to the family its folder names (``tests/web`` → ``web``); a conformance case
belongs to the family whose folder holds the class of the env id it checks
(``test_env_conforms[miniwob/click_test-v0]`` → ``web``), so a family's figure is everything
the suite spends on it.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

SLOWEST = 25
DEFAULT_JSON = ".test-timings.json"
PARTS_PROPERTY = "seconds_by_part"
"""A test that times its own parts says so with ``record_property(PARTS_PROPERTY, {part:
seconds})`` (the conformance test: seconds per check); the JSON file keeps them under
``parts``."""

_ENV_ID = re.compile(r"\[(([a-z][a-z0-9_-]*)/[A-Za-z0-9_.-]+-v\d+)")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--timings-json",
        default=DEFAULT_JSON,
        help=f"where the timing report's JSON goes (default {DEFAULT_JSON}; '' for none)",
    )
    parser.addoption(
        "--timings-merge",
        default="",
        metavar="JSON",
        help="a report of an earlier phase of the same suite (the tests that run alone): its "
        "tests and wall time are counted into this run's report",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) reports
        config.pluginmanager.register(TimingReport(config), "agentgym-timings")


def folder_of(nodeid: str) -> str:
    """The top-level test folder (``tests/web``), or the module for a top-level file."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "tests":
        return "/".join(parts[:2])
    return path


FOLDER_FAMILIES = {
    "tests/games": "games",
    "tests/household": "household",
    "tests/multiagent": "multiagent",
    "tests/reasoning": "reasoning",
    "tests/roguelike": "roguelike",
    "tests/swe": "swe",
    "tests/usersim": "usersim",
    "tests/web": "web",
}
"""Test folders that belong to one env family."""


def family_of(nodeid: str) -> str | None:
    """The env family a test spends its time on, or None for the core's tests."""
    match = _ENV_ID.search(nodeid)
    if match and "conform" in nodeid:
        return _family_of_env(match.group(1), namespace=match.group(2))
    family = FOLDER_FAMILIES.get(folder_of(nodeid))
    if family is None and nodeid.startswith("envs/"):  # doctests of a family's modules
        family = nodeid.split("/")[1]
    return family


def _family_of_env(env_id: str, namespace: str) -> str:
    """The folder under ``envs/`` an id's class lives in (``miniwob/...`` is the web family's,
    ``reasoning-gym/...`` the reasoning family's), else the id's namespace."""
    try:
        from agentgym.registry import spec

        module = spec(env_id).entry_point.split(":")[0].split(".")
    except Exception:  # an id registered only by a test, or none
        return namespace
    return module[2] if module[:2] == ["agentgym", "envs"] and len(module) > 2 else namespace


class TimingReport:
    """Collects every test's duration on the controller and reports them at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.durations: dict[str, float] = defaultdict(float)
        self.parts: dict[str, dict[str, float]] = {}
        self.spans: dict[str, list[Any]] = {}
        self.started = time.time()
        self.earlier_wall = 0.0
        merge = config.getoption("timings_merge")
        if merge and Path(merge).is_file():
            earlier = json.loads(Path(merge).read_text())
            self.durations.update(earlier["durations"])
            self.parts.update(earlier.get("parts", {}))
            self.spans.update(earlier.get("spans", {}))
            self.earlier_wall = earlier["wall_seconds"]

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.durations[report.nodeid] += report.duration
        for name, value in report.user_properties:
            if name == PARTS_PROPERTY:
                self.parts[report.nodeid] = {k: round(v, 2) for k, v in value.items()}
        if report.when == "call":
            gateway = getattr(getattr(report, "node", None), "gateway", None)
            self.spans[report.nodeid] = [
                getattr(gateway, "id", "main"),
                round(report.start - self.started, 1),
                round(report.stop - self.started, 1),
            ]

    def figures(self) -> dict[str, Any]:
        """The report as plain data (what the JSON file holds)."""
        folders: dict[str, dict[str, float]] = defaultdict(lambda: {"tests": 0, "seconds": 0.0})
        families: dict[str, dict[str, float]] = defaultdict(lambda: {"tests": 0, "seconds": 0.0})
        for nodeid, seconds in self.durations.items():
            for table, key in ((folders, folder_of(nodeid)), (families, family_of(nodeid))):
                if key is not None:
                    table[key]["tests"] += 1
                    table[key]["seconds"] += seconds
        slowest = sorted(self.durations.items(), key=lambda item: -item[1])[:SLOWEST]
        test_seconds = sum(self.durations.values())
        wall = time.time() - self.started + self.earlier_wall
        workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT") or getattr(
            self.config.option, "numprocesses", None
        )
        return {
            "wall_seconds": round(wall, 1),
            "test_seconds": round(test_seconds, 1),
            "workers": int(workers) if str(workers or "").isdigit() else 1,
            "tests": len(self.durations),
            "markexpr": self.config.option.markexpr or "",
            "folders": _rounded(folders),
            "families": _rounded(families),
            "slowest": [{"test": nodeid, "seconds": round(s, 2)} for nodeid, s in slowest],
            "durations": {nodeid: round(s, 3) for nodeid, s in sorted(self.durations.items())},
            "parts": dict(sorted(self.parts.items())),
            "spans": dict(sorted(self.spans.items())),
        }

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        figures = self.figures()
        path = self.config.getoption("timings_json")
        if path:  # even when empty: a later phase must not merge a stale file
            Path(path).write_text(json.dumps(figures, indent=1) + "\n")
        if not self.durations:
            return
        write = terminalreporter.write_line
        terminalreporter.section(f"the {SLOWEST} slowest tests (setup + call + teardown)")
        for row in figures["slowest"]:
            write(f"{row['seconds']:8.2f}s  {row['test']}")
        for title, table in (("test folder", "folders"), ("env family", "families")):
            terminalreporter.section(f"time per {title}")
            write(f"{title:<28} {'tests':>6} {'seconds':>9} {'share':>6}")
            total = figures["test_seconds"] or 1.0
            for name, row in figures[table].items():
                share = 100 * row["seconds"] / total
                write(f"{name:<28} {row['tests']:>6} {row['seconds']:>9.1f} {share:>5.1f}%")
        write(
            f"{figures['tests']} tests, {figures['test_seconds']:.0f} s of test time in "
            f"{figures['wall_seconds']:.0f} s of wall time on {figures['workers']} worker(s)"
        )
        if path:
            write(f"timings written to {path}")


def _rounded(table: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    ordered = sorted(table.items(), key=lambda item: -item[1]["seconds"])
    return {k: {"tests": int(v["tests"]), "seconds": round(v["seconds"], 1)} for k, v in ordered}
