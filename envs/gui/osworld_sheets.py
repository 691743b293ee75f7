"""The spreadsheet metrics of desktop tasks, by OSWorld's names: ``compare_table``, ``compare_csv``.

Both read the applications' real output: ``compare_table`` reads workbooks with Gnumeric's own
converter (:func:`agentgym.envs.gui.workbooks.read_workbook`: xlsx, ods, gnumeric or csv, every
formula recalculated), ``compare_csv`` reads text lines. Names, options and meanings follow
OSWorld's ``desktop_env/evaluators/metrics/table.py``; the code is ours, and
``compare_table`` has the subset of OSWorld's rules that the spreadsheet tasks use:

* ``sheet_name``: the two workbooks' sheet names are the same, in the same order;
* ``sheet_data``: two sheets hold the same values (``sheet_idx0``, ``sheet_idx1``; numbers
  rounded to ``precision`` decimals, 4 by default);
* ``check_cell``: a cell (``sheet_idx``, ``coordinate``) meets ``props``: ``value`` and/or
  ``number_format``, each ``{"method": ..., "ref": ...}`` with OSWorld's methods ``eq``,
  ``ne``, ``lt``, ``le``, ``gt``, ``ge``, ``approx:TOLERANCE`` and ``re`` (``re.I``...).

A sheet index is OSWorld's: an int (the result's sheet by position), ``RI0``/``EI0`` (the
result's or the expected workbook's sheet by position), ``RNname``/``ENname`` (by name). A
result that is missing or that Gnumeric cannot read, or a sheet it lacks, scores 0; a rule
this module does not know, a broken gold file or a bad option is a :class:`UsageError`.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym.envs.gui.osworld_metrics import metric, read_text
from agentgym.envs.gui.workbooks import (
    CellValue,
    Sheet,
    UnreadableWorkbook,
    Workbook,
    read_workbook,
)
from agentgym.errors import UsageError

__all__ = ["RULES", "compare_csv", "compare_table", "match_value"]

COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


def match_value(value: Any, rule: Mapping[str, Any]) -> bool:
    """Whether ``value`` meets ``{"method": ..., "ref": ...}`` (OSWorld's
    ``_match_value_to_rule``, for the methods the module docstring names)."""
    method, ref = str(rule.get("method", "")), rule.get("ref")
    if method in COMPARISONS:
        try:
            return bool(COMPARISONS[method](value, ref))
        except TypeError:  # an order between a number and a string, an empty cell
            return False
    if method.startswith("approx:"):
        tolerance = float(method.split(":", 1)[1])
        if not isinstance(ref, int | float):
            raise UsageError(f"match method {method!r} needs a number as its ref, got {ref!r}")
        return isinstance(value, float) and abs(value - ref) <= tolerance
    if method == "re" or method.startswith("re."):
        flags = functools.reduce(
            operator.or_, (getattr(re, name) for name in method.split(".")[1:]), re.RegexFlag(0)
        )
        return re.search(str(ref), "" if value is None else str(value), flags) is not None
    raise UsageError(
        f"unknown match method {method!r}: use one of {', '.join(COMPARISONS)}, "
        f"approx:TOLERANCE or re"
    )


# ---------------------------------------------------------------------- compare_table


class _Books:
    """The result and expected workbooks of one ``compare_table``, and their sheets by
    OSWorld's sheet index."""

    def __init__(self, result: Workbook, expected: Workbook | None) -> None:
        self.result, self.expected = result, expected

    def sheet(self, index: int | str) -> Sheet | None:
        """The sheet ``index`` names (the module docstring); None if it has no such sheet."""
        if isinstance(index, int):
            index = f"RI{index}"
        if not isinstance(index, str) or index[:2] not in ("RI", "RN", "EI", "EN"):
            raise UsageError(f"sheet index {index!r}: use an int, RI0, RNname, EI0 or ENname")
        book = self.result if index[0] == "R" else self.expected
        if book is None:
            raise UsageError(f"sheet index {index!r} names the expected workbook, which is None")
        if index[1] == "N":
            return book.sheet(index[2:])
        try:
            return book.sheets[int(index[2:])]
        except (ValueError, IndexError):
            return None


def _rounded(rows: list[list[CellValue]], precision: int) -> list[list[CellValue]]:
    return [[round(v, precision) if isinstance(v, float) else v for v in row] for row in rows]


def _sheet_name(books: _Books, rule: Mapping[str, Any]) -> bool:
    if books.expected is None:
        raise UsageError("compare_table's sheet_name rule needs an expected workbook")
    return books.result.sheet_names == books.expected.sheet_names


def _sheet_data(books: _Books, rule: Mapping[str, Any]) -> bool:
    first, second = books.sheet(rule["sheet_idx0"]), books.sheet(rule["sheet_idx1"])
    if first is None or second is None:
        return False
    precision = int(rule.get("precision", 4))
    return _rounded(first.rows(), precision) == _rounded(second.rows(), precision)


def _check_cell(books: _Books, rule: Mapping[str, Any]) -> bool:
    sheet = books.sheet(rule["sheet_idx"])
    if sheet is None:
        return False
    try:
        cell = sheet.cell(str(rule["coordinate"]))
    except ValueError as mistake:
        raise UsageError(f"compare_table's check_cell: {mistake}") from None
    properties = {"value": cell.value, "number_format": cell.number_format}
    for name, condition in dict(rule["props"]).items():
        if name not in properties:
            raise UsageError(
                f"check_cell property {name!r}: this module reads value, number_format"
            )
        if not match_value(properties[name], condition):
            return False
    return True


RULES: dict[str, Callable[[_Books, Mapping[str, Any]], bool]] = {
    "sheet_name": _sheet_name,
    "sheet_data": _sheet_data,
    "check_cell": _check_cell,
}
"""The rules of OSWorld's ``compare_table`` this module has, by ``type``."""


def _workbook(path: str | None, what: str) -> Workbook | None:
    """The workbook at ``path``; None for a result that is missing or unreadable (the agent's
    doing), a :class:`UsageError` for a gold file that is."""
    if path is None or not Path(path).is_file():
        if what == "result":
            return None
        raise UsageError(f"the task's {what} workbook {path!r} is missing")
    try:
        return read_workbook(path)
    except UnreadableWorkbook as failure:
        if what == "result":
            return None
        raise UsageError(f"the task's {what} workbook is broken: {failure}") from None


@metric("compare_table")
def compare_table(result: str | None, expected: str | None = None, **options: Any) -> float:
    """1.0 when the result workbook passes every rule of ``options["rules"]``, in order (the
    module docstring lists them), else 0.0."""
    rules = options.get("rules")
    if not isinstance(rules, list) or not rules:
        raise UsageError(f"compare_table needs options['rules'], a list of rules; got {rules!r}")
    for rule in rules:
        if not isinstance(rule, Mapping) or rule.get("type") not in RULES:
            raise UsageError(f"compare_table rule {rule!r}: its type is one of {', '.join(RULES)}")
    book = _workbook(result, "result")
    if book is None:
        return 0.0
    books = _Books(book, None if expected is None else _workbook(expected, "expected"))
    for rule in rules:
        try:
            passed = RULES[rule["type"]](books, rule)
        except KeyError as missing:
            raise UsageError(f"compare_table rule {rule!r} lacks {missing}") from None
        if not passed:
            return 0.0
    return 1.0


# ---------------------------------------------------------------------- compare_csv


def _lines(text: str, strict: bool, ignore_case: bool) -> list[str]:
    lines = text.removeprefix("\ufeff").splitlines()
    if not strict:
        lines = [line.strip() for line in lines]
    return [line.lower() for line in lines] if ignore_case else lines


@metric("compare_csv")
def compare_csv(result: str | None, expected: str | Sequence[str], **options: Any) -> float:
    """1.0 when the result file's lines equal those of the expected file (or of one of a list
    of them): OSWorld's, with ``strict`` (True: lines as they are; False: stripped) and
    ``ignore_case``."""
    actual = read_text(result)
    if actual is None:
        return 0.0
    strict, ignore_case = bool(options.get("strict", True)), bool(options.get("ignore_case"))
    golds = [expected] if isinstance(expected, str) else list(expected)
    for gold in golds:
        text = read_text(gold, "expected")
        assert text is not None
        if _lines(actual, strict, ignore_case) == _lines(text, strict, ignore_case):
            return 1.0
    return 0.0
