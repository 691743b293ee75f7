"""The metrics of desktop tasks, by OSWorld's names: ``@metric("compare_text_file")``.

A metric judges what a task's getters read from the applications' real output (a saved file's
host copy, a command's output, a rule): ``metric(result, expected, **options) -> float``, 1.0
a pass, or ``metric(result, **options)`` where the evaluator has no ``expected``. Names and
meanings follow OSWorld's ``desktop_env/evaluators/metrics`` where it has one; the code is ours.

* A result the agent failed to produce (no file: the getter's ``None``) scores 0.0, never an
  error: that is the agent's failure.
* A broken gold file or wrong options is the task author's bug: a :class:`UsageError`.

An application's own metrics live in a module of their own with the same decorator, listed in
:data:`METRIC_MODULES` (imported on the first look-up, so importing this module stays cheap).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym.errors import UsageError

__all__ = ["METRICS", "METRIC_MODULES", "Metric", "find_metric", "metric"]

Metric = Callable[..., float]
"""``metric(result, expected, **options) -> float`` (or ``metric(result, **options)``)."""

METRICS: dict[str, Metric] = {}
"""Every metric by name (the modules of :data:`METRIC_MODULES` add theirs when imported)."""

METRIC_MODULES: tuple[str, ...] = (
    "agentgym.envs.gui.osworld_files",
    "agentgym.envs.gui.osworld_sheets",
)
"""Modules of applications' metrics (``"agentgym.envs.gui.osworld_sheets"``): one line each."""


def metric(name: str) -> Callable[[Metric], Metric]:
    """Register a metric under ``name`` (OSWorld's name where OSWorld has one)."""

    def register(function: Metric) -> Metric:
        if name in METRICS and METRICS[name] is not function:
            raise UsageError(f"metric {name!r} is registered twice")
        METRICS[name] = function
        return function

    return register


def find_metric(name: str) -> Metric:
    """The metric called ``name``; an unknown name is a :class:`UsageError` naming it."""
    for module in METRIC_MODULES:
        importlib.import_module(module)
    if name not in METRICS:
        raise UsageError(f"unknown metric {name!r}: the desktop tasks know {', '.join(METRICS)}")
    return METRICS[name]


# ---------------------------------------------------------------------- reading


def read_text(path: str | None, what: str = "result") -> str | None:
    """A getter's file as text (``None`` for a missing result); a gold file that cannot be read
    is the task's bug."""
    if path is None:
        if what == "result":
            return None
        raise UsageError(f"the task's {what} file is missing")
    try:
        return Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError as failure:
        if what == "result":
            return None
        raise UsageError(f"cannot read the task's {what} file {path}: {failure}") from failure


def _rules(rules: Any, *keys: str) -> Mapping[str, Any]:
    """``rules`` as a mapping holding ``keys`` (a task's bug otherwise)."""
    if not isinstance(rules, Mapping) or any(key not in rules for key in keys):
        raise UsageError(f"the metric's rules must be a mapping with {list(keys)}, got {rules!r}")
    return rules


def _normalize(text: str, ignore_blanks: bool, ignore_case: bool) -> str:
    if ignore_blanks:
        text = re.sub(r"\s+", " ", text).strip()
    return text.lower() if ignore_case else text


# ---------------------------------------------------------------------- text metrics


@metric("compare_text_file")
def compare_text_file(result: str | None, expected: str | None, **options: Any) -> float:
    """The two files hold the same text (OSWorld's: ``ignore_blanks`` collapses runs of
    whitespace, ``ignore_case`` folds case). A trailing newline never matters: editors differ
    in whether they add one."""
    actual = read_text(result)
    if actual is None:
        return 0.0
    gold = read_text(expected, "expected")
    assert gold is not None
    blanks, case = bool(options.get("ignore_blanks")), bool(options.get("ignore_case"))
    same = _normalize(actual.rstrip("\n"), blanks, case) == _normalize(
        gold.rstrip("\n"), blanks, case
    )
    return float(same)


@metric("diff_text_file")
def diff_text_file(result: str | None, expected: str | None, **options: Any) -> float:
    """How alike the two files' lines are, 0..1 (difflib's ratio; OSWorld's)."""
    import difflib

    actual = read_text(result)
    if actual is None:
        return 0.0
    gold = read_text(expected, "expected")
    assert gold is not None
    return difflib.SequenceMatcher(a=actual.splitlines(), b=gold.splitlines()).ratio()


@metric("exact_match")
def exact_match(result: Any, rules: Any, **options: Any) -> float:
    """The result equals ``rules["expected"]``."""
    return float(result is not None and result == _rules(rules, "expected")["expected"])


@metric("is_in_list")
def is_in_list(result: Any, rules: Any, **options: Any) -> float:
    """``rules["expected"]`` is one of the result's items (a list, or a command's text)."""
    if result is None:
        return 0.0
    return float(_rules(rules, "expected")["expected"] in result)


@metric("match_in_list")
def match_in_list(result: Any, rules: Any, **options: Any) -> float:
    """The result is one of ``rules["expected"]``."""
    return float(result is not None and result in _rules(rules, "expected")["expected"])


@metric("check_include_exclude")
def check_include_exclude(result: str | None, rules: Any, **options: Any) -> float:
    """The text holds every string of ``rules["include"]`` and none of ``rules["exclude"]``."""
    if result is None:
        return 0.0
    include: Sequence[str] = _rules(rules).get("include", [])
    exclude: Sequence[str] = _rules(rules).get("exclude", [])
    return float(all(s in result for s in include) and not any(s in result for s in exclude))


@metric("check_list")
def check_list(result: str | None, rules: Any, **options: Any) -> float:
    """Every regex of ``rules["expect"]`` matches some line of the file and no regex of
    ``rules["unexpect"]`` matches any line."""
    text = read_text(result)
    if text is None:
        return 0.0
    try:
        expect = [re.compile(p) for p in _rules(rules).get("expect", [])]
        unexpect = [re.compile(p) for p in _rules(rules).get("unexpect", [])]
    except re.error as failure:
        raise UsageError(f"check_list: a bad pattern in {rules!r}: {failure}") from failure
    lines = text.splitlines()
    found = all(any(p.search(line) for line in lines) for p in expect)
    return float(found and not any(p.search(line) for p in unexpect for line in lines))


@metric("literal_match")
def literal_match(result: Any, expected: Any, **options: Any) -> float:
    """The result equals ``expected`` as text (``type: "str"``, ``ignore_case``) or as a list of
    texts (``type: "list"``)."""
    if result is None:
        return 0.0
    fold = (lambda s: str(s).lower()) if options.get("ignore_case") else str
    kind = options.get("type", "str")
    if kind == "str":
        return float(fold(result) == fold(expected))
    if kind == "list":
        if not isinstance(result, (list, tuple)) or not isinstance(expected, (list, tuple)):
            return 0.0
        return float([fold(s) for s in result] == [fold(s) for s in expected])
    raise UsageError(f"literal_match: type {kind!r} is not 'str' or 'list'")
