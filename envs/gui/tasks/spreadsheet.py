"""Spreadsheet tasks in Gnumeric: cells, formulas, formats, rows, sheets, CSV export.

Each task opens a workbook (an xlsx file of :func:`~agentgym.envs.gui.workbooks.write_xlsx`)
in Gnumeric and is judged from the file Gnumeric saved, read with Gnumeric's own converter
(:mod:`agentgym.envs.gui.osworld_sheets`): ``compare_table`` for the workbook saved in place
(Control+s keeps the xlsx format), ``compare_csv`` for an exported CSV file.

The oracles use the keyboard only, within a desktop episode's 20 steps: Control+g (Gnumeric's
Go To dialog, which stays open until Escape) to reach a cell, one ``type`` with Tab and
Return in it to fill a row or a column, Shift+Down to select, the menus by their arrow keys
(Edit > Sheet > Rename, Data > Export Data > Export as CSV File), and Gnumeric's format keys
(Control+Shift+4 currency, Control+Shift+5 percent). What an oracle types (cells, values,
names) comes from the seed, so another seed's oracle fails; every task's initial workbook
fails its evaluator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agentgym.envs.gui.osworld import template
from agentgym.envs.gui.pixel_actions import format_pixel
from agentgym.envs.gui.workbooks import CellValue, column_name, write_xlsx

__all__: list[str] = []

ITEMS = (
    "apple", "pear", "plum", "fig", "kiwi", "lemon", "mango", "peach", "cherry", "grape",
    "melon", "lime", "papaya", "guava", "apricot", "banana", "orange", "date", "olive", "quince",
    "carrot", "onion", "potato", "leek", "celery", "radish", "turnip", "garlic", "pepper", "bean",
)  # fmt: skip
BOOKS = ("report", "sales", "stock", "orders", "budget", "inventory", "ledger", "prices", "shop")
SHEETS = ("Sales", "Stock", "Orders", "Budget", "Inventory", "Prices", "Shop", "Market")
NEW_SHEET_NAMES = ("Archive", "Summary", "Totals", "Old data", "Draft", "Final", "Review", "Plan")
REGIONS = ("North", "South", "East", "West", "Coast", "Hills", "Lakes", "Plains")
HEADERS = (
    ("item", "product", "name", "article", "goods", "produce"),
    ("qty", "quantity", "units", "count", "number", "pieces"),
    ("price", "cost", "rate", "unit price", "each", "tariff"),
)
FORMATS = {
    "currency": ("Control+Shift+4", r"^\$.*0\.00", "currency (a dollar sign, two decimals)"),
    "percent": ("Control+Shift+5", "%", "percentages"),
}
"""A number format by name: Gnumeric's key for it (Control+Shift+4 gives ``$#,##0.00``,
Control+Shift+5 ``0%``), a pattern any such format matches, and how the task says it."""


def _average(values: Sequence[float]) -> float:
    return sum(values) / len(values)


AGGREGATES: dict[str, Callable[[Sequence[float]], float]] = {
    "SUM": sum,
    "AVERAGE": _average,
    "MAX": max,
    "MIN": min,
}
"""The functions a formula may ask for, and what each computes."""


# ---------------------------------------------------------------------- pieces


def _key(combo: str) -> str:
    return format_pixel("key", combo)


def _type(text: str) -> str:
    return format_pixel("type", text)


STARTUP = 1.0
"""Seconds a task's setup waits after Gnumeric's window is up: its toolbar's buttons change
state once more after the window is drawn and still, and a reset's frame must not depend on
when it is taken (measured: the frames of 6 resets to one task differed 4 times without this
wait, never in 9 with it)."""

BLOCK = 8
"""The most rows an oracle selects one Shift+Down at a time: a desktop episode has 20 steps."""

WAIT = format_pixel("wait")
SAVE = [_key("Control+s"), WAIT]
"""Save in place (an xlsx stays xlsx, no dialog) and let the write land."""


def _goto(ref: str) -> list[str]:
    """Move the cursor to ``ref`` through the Go To dialog (Escape closes it).

    Control+Home first: the dialog selects as many rows and columns as the selection it opens
    on has, and a selection left by Shift+arrows would stay that size. Enter presses the
    dialog's default button, and GTK shows a button pressed from the keyboard for a quarter
    of a second before it acts, with the screen and the CPU still: ``wait()`` lets it act
    before Escape closes the dialog."""
    dialog = [_key("Control+g"), _type(f"{ref}\n"), WAIT, _key("Escape")]
    return [_key("Control+Home"), *dialog]


def _export_csv(name: str) -> list[str]:
    """Data > Export Data > Export as CSV File, saved as ``name`` in the home."""
    menu = [_key("Alt+d"), _key("Up"), _key("Right"), _key("Down"), _key("Enter")]
    return [*menu, _key("Control+a"), _type(f"{name}\n"), WAIT]


Row = tuple[str, float, float]
"""A data row: item, quantity, price."""


def _data(rng: np.random.Generator, rows: int, quarters: bool = False) -> list[Row]:
    """``rows`` data rows; prices in quarters where a task's CSV must print them exactly
    (quantities are whole, so every product and sum of them is exact in binary too)."""
    names = rng.choice(ITEMS, size=rows, replace=False)
    found = []
    for name in names:
        quantity = float(rng.integers(1, 60))
        cents = int(rng.integers(2, 200)) * 25 if quarters else int(rng.integers(50, 5000))
        found.append((str(name), quantity, cents / 100))
    return found


def _rows(data: Sequence[Row]) -> list[list[CellValue]]:
    return [list(row) for row in data]


def _header(rng: np.random.Generator) -> list[CellValue]:
    return [str(rng.choice(names)) for names in HEADERS]


def _shown(value: CellValue) -> str:
    """A value as Gnumeric's CSV export prints it: integers and quarters exactly, a text with
    a space, comma, tab or quote in quotes (measured: ``"unit price"``)."""
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    text = "" if value is None else str(value)
    if any(char in text for char in ' ,\t"'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv(rows: Sequence[Sequence[CellValue]]) -> str:
    return "".join(",".join(_shown(v) for v in row) + "\n" for row in rows)


def _name(rng: np.random.Generator, choices: Sequence[str]) -> str:
    return str(rng.choice(choices))


def _task(
    instruction: str,
    book: str,
    sheets: dict[str, list[list[CellValue]]],
    evaluator: dict[str, Any],
    oracle: list[str],
    gold: dict[str, str | bytes] | None = None,
) -> dict[str, Any]:
    """A task opening ``book`` (the workbook of ``sheets``) in Gnumeric."""
    return {
        "instruction": instruction,
        "related_apps": ["gnumeric"],
        "config": [
            {
                "type": "download",
                "parameters": {"files": [{"url": f"local://{book}", "path": f"~/{book}"}]},
            },
            {"type": "launch", "parameters": {"command": ["gnumeric", f"~/{book}"]}},
            # Gnumeric updates its toolbars some time after its window is up and drawn.
            {"type": "sleep", "parameters": {"seconds": STARTUP}},
        ],
        "evaluator": evaluator,
        "agentgym": {"files": {book: write_xlsx(sheets), **(gold or {})}, "oracle": oracle},
    }


def _saved(book: str) -> dict[str, str]:
    return {"type": "vm_file", "path": f"~/{book}", "dest": book}


def _table_evaluator(book: str, rules: list[dict[str, Any]], gold: bool = False) -> dict[str, Any]:
    """``compare_table`` of the saved ``book`` (with ``gold.xlsx`` as the expected one)."""
    expected = {"type": "cloud_file", "path": "local://gold.xlsx", "dest": "gold.xlsx"}
    return {
        "func": "compare_table",
        "result": _saved(book),
        **({"expected": expected} if gold else {}),
        "options": {"rules": rules},
    }


SAME_DATA = {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}
"""The result's first sheet holds the gold's first sheet's values."""


def _csv_evaluator(name: str) -> dict[str, Any]:
    return {
        "func": "compare_csv",
        "result": {"type": "vm_file", "path": f"~/{name}", "dest": name},
        "expected": {"type": "cloud_file", "path": "local://gold.csv", "dest": "gold.csv"},
        "options": {},
    }


def _book(rng: np.random.Generator) -> str:
    return f"{_name(rng, BOOKS)}.xlsx"


# ---------------------------------------------------------------------- easy


@template("gnumeric", level="easy")
def set_cell_value(rng: np.random.Generator) -> dict[str, Any]:
    """Change one price in a table to a given value and save."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    data = _data(rng, int(rng.integers(4, 10)))
    table = [_header(rng), *_rows(data)]
    row = int(rng.integers(1, len(table)))
    item, value = data[row - 1][0], int(rng.integers(100, 1000)) / 100
    if value == data[row - 1][2]:
        value += 0.01  # a change, or the initial file would pass
    ref = f"C{row + 1}"
    changed = [list(r) for r in table]
    changed[row][2] = value
    return _task(
        f"In the spreadsheet {book} open in Gnumeric, the price of {item} (cell {ref}) is "
        f"wrong: change it to {value:g}, then save the file.",
        book,
        {sheet: table},
        _table_evaluator(book, [SAME_DATA], gold=True),
        [*_goto(ref), _type(f"{value:g}\n"), *SAVE],
        {"gold.xlsx": write_xlsx({sheet: changed})},
    )


@template("gnumeric", level="easy")
def aggregate_formula(rng: np.random.Generator) -> dict[str, Any]:
    """Put the SUM, AVERAGE, MAX or MIN of a column into a given cell, as a formula."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    header, data = _header(rng), _data(rng, int(rng.integers(4, 12)))
    function = _name(rng, tuple(AGGREGATES))
    column = int(rng.integers(1, 3))
    letter, last = column_name(column), len(data) + 1
    target = f"{column_name(int(rng.integers(4, 8)))}{int(rng.integers(2, 21))}"
    values = [quantity if column == 1 else price for _, quantity, price in data]
    answer = float(AGGREGATES[function](values))
    rule = {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": target,
        "props": {"value": {"method": "approx:0.001", "ref": answer}},
    }
    return _task(
        f"In {book} (open in Gnumeric), enter a formula in cell {target} that computes the "
        f"{function} of the {header[column]} column ({letter}2:{letter}{last}), then save.",
        book,
        {sheet: [header, *_rows(data)]},
        _table_evaluator(book, [rule]),
        [*_goto(target), _type(f"={function}({letter}2:{letter}{last})\n"), *SAVE],
    )


@template("gnumeric", level="easy")
def number_format(rng: np.random.Generator) -> dict[str, Any]:
    """Give a range of cells a number format (currency or percent), and no other cell."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    data = _data(rng, int(rng.integers(5, 21)))
    first = int(rng.integers(2, len(data)))
    last = int(rng.integers(first + 1, min(first + BLOCK, len(data) + 1) + 1))
    letter = column_name(int(rng.integers(1, 3)))
    kind = _name(rng, tuple(FORMATS))
    combo, pattern, words = FORMATS[kind]

    def rule(row: int, method: str, ref: str) -> dict[str, Any]:
        return {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": f"{letter}{row}",
            "props": {"number_format": {"method": method, "ref": ref}},
        }

    outside = [row for row in (first - 1, last + 1) if row >= 2]
    rules = [rule(r, "re", pattern) for r in range(first, last + 1)]
    rules += [rule(r, "eq", "General") for r in outside]
    selection = [_key("Shift+Down")] * (last - first)
    return _task(
        f"In {book} (open in Gnumeric), format the cells {letter}{first}:{letter}{last} as "
        f"{words}, and no other cell, then save.",
        book,
        {sheet: [_header(rng), *_rows(data)]},
        _table_evaluator(book, rules),
        [*_goto(f"{letter}{first}"), *selection, _key(combo), *SAVE],
    )


# ---------------------------------------------------------------------- medium


@template("gnumeric", level="medium")
def fill_column(rng: np.random.Generator) -> dict[str, Any]:
    """Fill a new column with a formula over two others, row by row."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    data = _data(rng, int(rng.integers(4, 16)))
    percent = int(rng.integers(5, 60))
    factor = (100 - percent) / 100
    title = _name(rng, ("total", "result", "amount", "value", "net", "discounted"))
    header = [*_header(rng), title]
    last = len(data) + 1
    # Every value has at most four decimals, which sheet_data's rounding keeps exactly.
    filled: list[list[CellValue]] = [[*row, row[1] * row[2] * factor] for row in data]
    return _task(
        f"In {book} (open in Gnumeric), fill column D under its header '{title}' (D2:D{last}) "
        f"with formulas giving each row's quantity times price less {percent}% (B times C "
        f"times {factor:g}), then save.",
        book,
        {sheet: [header, *_rows(data)]},
        _table_evaluator(book, [SAME_DATA], gold=True),
        [
            *_goto("D2"),
            _type("".join(f"=B{row}*C{row}*{factor:g}\n" for row in range(2, last + 1))),
            *SAVE,
        ],
        {"gold.xlsx": write_xlsx({sheet: [header, *filled]})},
    )


@template("gnumeric", level="medium")
def delete_rows(rng: np.random.Generator) -> dict[str, Any]:
    """Delete a block of whole rows, so the rows below move up."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    data = _data(rng, int(rng.integers(20, 31)))
    table = [_header(rng), *_rows(data)]
    first = int(rng.integers(2, len(table)))
    last = int(rng.integers(first + 1, min(first + BLOCK, len(table)) + 1))
    items = f"{data[first - 2][0]} to {data[last - 2][0]}"
    return _task(
        f"In {book} (open in Gnumeric), delete the whole rows {first} to {last} (the items "
        f"{items}) so that the rows below them move up, then save.",
        book,
        {sheet: table},
        _table_evaluator(book, [SAME_DATA], gold=True),
        [
            *_goto(f"A{first}"),
            *[_key("Shift+Down")] * (last - first),
            _key("Shift+space"),
            _key("Control+minus"),
            *SAVE,
        ],
        {"gold.xlsx": write_xlsx({sheet: table[: first - 1] + table[last:]})},
    )


@template("gnumeric", level="medium")
def insert_header(rng: np.random.Generator) -> dict[str, Any]:
    """Insert a header row above a table that has none and write its three titles."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    data = _rows(_data(rng, int(rng.integers(4, 12))))
    header = _header(rng)
    return _task(
        f"In {book} (open in Gnumeric), the table has no header row: insert a new first row "
        f"and write the headers {', '.join(map(str, header))} in A1, B1 and C1, then save.",
        book,
        {sheet: data},
        _table_evaluator(book, [SAME_DATA], gold=True),
        [
            _key("Control+Home"),
            _key("Shift+space"),
            _key("Control+Shift+equal"),  # Control+plus: insert rows above the selection
            _type("\t".join(map(str, header)) + "\n"),
            *SAVE,
        ],
        {"gold.xlsx": write_xlsx({sheet: [header, *data]})},
    )


@template("gnumeric", level="medium")
def rename_sheet(rng: np.random.Generator) -> dict[str, Any]:
    """Rename the workbook's first sheet."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    new = f"{_name(rng, NEW_SHEET_NAMES)} {int(rng.integers(2000, 2030))}"
    table = [_header(rng), *_rows(_data(rng, int(rng.integers(3, 8))))]
    notes: list[list[CellValue]] = [["notes"], [f"checked by {_name(rng, ITEMS)}"]]
    rules = [{"type": "sheet_name"}, SAME_DATA]
    menu = [_key("Alt+e"), *[_key("Up")] * 4, _key("Right"), _key("Up"), _key("Up")]
    return _task(
        f"In {book} (open in Gnumeric), rename the sheet '{sheet}' to '{new}', then save.",
        book,
        {sheet: table, "Notes": notes},
        _table_evaluator(book, rules, gold=True),
        [*menu, _key("Enter"), _key("Control+a"), _type(f"{new}\n"), WAIT, *SAVE],
        {"gold.xlsx": write_xlsx({new: table, "Notes": notes})},
    )


@template("gnumeric", level="medium")
def export_csv(rng: np.random.Generator) -> dict[str, Any]:
    """Export the sheet as a CSV file under a given name."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    table = [_header(rng), *_rows(_data(rng, int(rng.integers(3, 10)), quarters=True))]
    name = f"{_name(rng, BOOKS)}-{int(rng.integers(1, 100))}.csv"
    return _task(
        f"Export the sheet of {book} (open in Gnumeric) as a CSV file named {name} in the "
        f"home folder.",
        book,
        {sheet: table},
        _csv_evaluator(name),
        _export_csv(name),
        {"gold.csv": _csv(table)},
    )


# ---------------------------------------------------------------------- hard


@template("gnumeric", level="hard")
def totals_to_csv(rng: np.random.Generator) -> dict[str, Any]:
    """Add a per-row total column and a grand-total row, then export the sheet as CSV."""
    book, sheet = _book(rng), _name(rng, SHEETS)
    header, data = _header(rng), _data(rng, int(rng.integers(3, 9)), quarters=True)
    title, label = _name(rng, ("total", "amount", "value")), _name(rng, ("TOTAL", "Sum", "All"))
    name = f"{_name(rng, BOOKS)}-totals-{int(rng.integers(1, 100))}.csv"
    last = len(data) + 1
    rows: list[list[CellValue]] = [[*row, row[1] * row[2]] for row in data]
    grand: list[CellValue] = [label, None, None, sum(row[1] * row[2] for row in data)]
    formulas = "".join(f"=B{row}*C{row}\n" for row in range(2, last + 1))
    oracle = [
        _key("Control+End"),  # the table's last cell, C{last}
        _key("Down"),
        _key("Home"),
        _type(f"{label}\t\t\t=SUM(D2:D{last})\n"),
        _key("Control+Home"),
        *[_key("Right")] * 3,
        _type(f"{title}\n{formulas}"),
        *_export_csv(name),
    ]
    return _task(
        f"In {book} (open in Gnumeric), add a column D titled '{title}' holding each row's "
        f"quantity times price (B times C), then a row under the table with '{label}' in "
        f"column A and the sum of column D in column D; export the sheet as a CSV file named "
        f"{name} in the home folder.",
        book,
        {sheet: [header, *_rows(data)]},
        _csv_evaluator(name),
        oracle,
        {"gold.csv": _csv([[*header, title], *rows, grand])},
    )


@template("gnumeric", level="hard")
def summary_sheet(rng: np.random.Generator) -> dict[str, Any]:
    """Fill a summary sheet with each data sheet's total and the grand total, by formulas."""
    book = _book(rng)
    count = int(rng.integers(2, 4))
    regions = [str(r) for r in rng.choice(REGIONS, size=count, replace=False)]
    sheets: dict[str, list[list[CellValue]]] = {}
    totals = []
    for region in regions:
        amounts = [
            (item, float(rng.integers(10, 500)))
            for item, _, _ in _data(rng, int(rng.integers(3, 9)))
        ]
        rows: list[list[CellValue]] = [[item, amount] for item, amount in amounts]
        sheets[region] = [["item", "amount"], *rows]
        totals.append(sum(amount for _, amount in amounts))
    labels: list[list[CellValue]] = [[region] for region in regions]
    sheets["Summary"] = [["sheet", "total"], *labels, ["all"]]
    oracle = [_key("Control+Page_Down")] * count + _goto("B2")
    for region in regions:
        last = len(sheets[region])
        oracle += [_type(f"=SUM({region}!B2:B{last})\n")]
    oracle += [_type(f"=SUM(B2:B{count + 1})\n"), *SAVE]
    rules = [
        {
            "type": "check_cell",
            "sheet_idx": "RNSummary",
            "coordinate": f"B{row}",
            "props": {"value": {"method": "approx:0.001", "ref": value}},
        }
        for row, value in enumerate([*totals, sum(totals)], start=2)
    ]
    return _task(
        f"In {book} (open in Gnumeric), go to the sheet Summary and fill column B: next to "
        f"each sheet name, a formula giving the sum of that sheet's amount column (B), and next "
        f"to 'all' the sum of those totals; then save.",
        book,
        sheets,
        _table_evaluator(book, rules),
        oracle,
    )
