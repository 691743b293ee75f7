"""Spreadsheet files for the desktop's spreadsheet tasks: written as xlsx, read with Gnumeric.

**Writing.** :func:`write_xlsx` makes a small xlsx workbook (strings, numbers, booleans and
formulas, one or more named sheets): the files a task opens in Gnumeric and the gold files its
metrics compare with. Formulas carry no cached value; Gnumeric computes them on opening (and
so does :func:`read_workbook`).

**Reading.** :func:`read_workbook` reads any workbook Gnumeric reads (xlsx, ods, gnumeric, csv)
with its own converter, ``ssconvert``, run on a copy as an unprivileged uid leased from the
sandboxes' pool, with no network (the agent made the file it parses): it converts the file to xlsx
(recalculated, every formula with its value) and this module parses that. The result is what
Gnumeric itself would show: each sheet's name, each cell's value (a number, a string, a
boolean, an error's text such as ``#DIV/0!``) and number format (``$#,##0.00``).

A file that ``ssconvert`` cannot read (or that takes it longer than :data:`CONVERT_TIMEOUT`)
is an :class:`UnreadableWorkbook`: a result the agent made that way scores 0.
"""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree
from xml.sax.saxutils import escape, quoteattr

from agentgym.errors import SandboxUnavailableError
from agentgym.sandbox.process import run_process
from agentgym.sandbox.uids import lease_uid

__all__ = [
    "Cell",
    "CellValue",
    "Sheet",
    "UnreadableWorkbook",
    "Workbook",
    "cell_position",
    "column_name",
    "read_workbook",
    "write_xlsx",
]

CellValue = float | str | bool | None
"""A cell's value: numbers are floats; an empty cell is None."""

CONVERT_TIMEOUT = 30.0
"""Seconds ``ssconvert`` may take to read one workbook."""

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
RELATIONSHIPS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"

BUILTIN_FORMATS = {
    0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%",
    11: "0.00E+00", 12: "# ?/?", 13: "# ??/??", 14: "m/d/yyyy", 15: "d-mmm-yy", 16: "d-mmm",
    17: "mmm-yy", 18: "h:mm AM/PM", 19: "h:mm:ss AM/PM", 20: "h:mm", 21: "h:mm:ss",
    22: "m/d/yyyy h:mm", 49: "@",
}  # fmt: skip
"""The number formats xlsx names by id alone (ECMA-376, 18.8.30)."""


class UnreadableWorkbook(ValueError):
    """A file Gnumeric cannot read as a workbook."""


# ---------------------------------------------------------------------- cells


def column_name(index: int) -> str:
    """The letters of column ``index`` (0 is ``A``, 26 is ``AA``)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def cell_position(ref: str) -> tuple[int, int]:
    """``(row, column)`` from 0 of a cell reference such as ``B3`` (``$B$3`` too)."""
    match = re.fullmatch(r"\$?([A-Za-z]{1,3})\$?([1-9][0-9]{0,6})", ref.strip())
    if match is None:
        raise ValueError(f"{ref!r} is not a cell reference like B3")
    column = 0
    for letter in match.group(1).upper():
        column = column * 26 + ord(letter) - ord("A") + 1
    return int(match.group(2)) - 1, column - 1


@dataclass(frozen=True)
class Cell:
    """One cell as Gnumeric shows it: its value and its number format."""

    value: CellValue = None
    number_format: str = "General"


@dataclass(frozen=True)
class Sheet:
    """A named sheet: its cells by ``(row, column)`` from 0 (absent cells are empty)."""

    name: str
    cells: Mapping[tuple[int, int], Cell] = field(default_factory=dict)

    def cell(self, ref: str) -> Cell:
        """The cell at ``ref`` (``B3``); an empty :class:`Cell` where nothing is."""
        return self.cells.get(cell_position(ref), Cell())

    def rows(self) -> list[list[CellValue]]:
        """The values from ``A1`` to the last row and column holding a value."""
        filled = [position for position, cell in self.cells.items() if cell.value is not None]
        if not filled:
            return []
        height = max(row for row, _ in filled) + 1
        width = max(column for _, column in filled) + 1
        grid: list[list[CellValue]] = [[None] * width for _ in range(height)]
        for row, column in filled:
            grid[row][column] = self.cells[row, column].value
        return grid


@dataclass(frozen=True)
class Workbook:
    """A workbook's sheets, in their order."""

    sheets: tuple[Sheet, ...]

    @property
    def sheet_names(self) -> list[str]:
        return [sheet.name for sheet in self.sheets]

    def sheet(self, name: str) -> Sheet | None:
        """The sheet called ``name``, or None."""
        return next((sheet for sheet in self.sheets if sheet.name == name), None)


# ---------------------------------------------------------------------- writing


def write_xlsx(sheets: Mapping[str, Sequence[Sequence[CellValue | int]]]) -> bytes:
    """An xlsx workbook of ``sheets`` (name -> rows of values, in order). A string starting
    with ``=`` is a formula; None or ``""`` leaves the cell empty."""
    if not sheets:
        raise ValueError("a workbook needs at least one sheet")
    count = len(sheets)
    parts = {
        "[Content_Types].xml": _content_types(count),
        "_rels/.rels": _relationships(
            [("officeDocument", "xl/workbook.xml")], "officeDocument/2006/relationships"
        ),
        "xl/workbook.xml": _workbook_xml(list(sheets)),
        "xl/_rels/workbook.xml.rels": _relationships(
            [("worksheet", f"worksheets/sheet{i + 1}.xml") for i in range(count)]
            + [("styles", "styles.xml")],
            "officeDocument/2006/relationships",
        ),
        "xl/styles.xml": _STYLES,
    }
    for index, rows in enumerate(sheets.values()):
        parts[f"xl/worksheets/sheet{index + 1}.xml"] = _sheet_xml(rows)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(zipfile.ZipInfo(name, (2000, 1, 1, 0, 0, 0)), text)  # reproducible
    return buffer.getvalue()


_XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_OOXML = "http://schemas.openxmlformats.org"

_STYLES = (
    f'{_XML}<styleSheet xmlns="{_OOXML}/spreadsheetml/2006/main">'
    '<fonts count="1"><font><sz val="10"/><name val="Sans"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border/></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0">'
    '<alignment vertical="bottom"/></xf></cellXfs></styleSheet>'
)
"""One cell style, Gnumeric's own default (Sans 10, bottom): without it Gnumeric gives the
cells another (12 points, top), and its toolbar shows the change some time after the window
is up, so two resets' first frames could differ."""


def _content_types(count: int) -> str:
    kind = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    sheets = "".join(
        f'<Override PartName="/xl/worksheets/sheet{i + 1}.xml" ContentType="{kind}.worksheet+xml"/>'
        for i in range(count)
    )
    return (
        f'{_XML}<Types xmlns="{_OOXML}/package/2006/content-types">'
        '<Default Extension="rels" '
        'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{kind}.sheet.main+xml"/>'
        f'<Override PartName="/xl/styles.xml" ContentType="{kind}.styles+xml"/>'
        f"{sheets}</Types>"
    )


def _relationships(targets: Sequence[tuple[str, str]], kind: str) -> str:
    links = "".join(
        f'<Relationship Id="rId{i + 1}" Type="{_OOXML}/{kind}/{type_}" Target="{target}"/>'
        for i, (type_, target) in enumerate(targets)
    )
    return (
        f'{_XML}<Relationships xmlns="{_OOXML}/package/2006/relationships">{links}</Relationships>'
    )


def _workbook_xml(names: Sequence[str]) -> str:
    sheets = "".join(
        f'<sheet name={quoteattr(name)} sheetId="{i + 1}" r:id="rId{i + 1}"/>'
        for i, name in enumerate(names)
    )
    return (
        f'{_XML}<workbook xmlns="{_OOXML}/spreadsheetml/2006/main" '
        f'xmlns:r="{_OOXML}/officeDocument/2006/relationships"><sheets>{sheets}</sheets></workbook>'
    )


def _sheet_xml(rows: Sequence[Sequence[CellValue | int]]) -> str:
    body = []
    for r, row in enumerate(rows):
        cells = "".join(
            _cell_xml(f"{column_name(c)}{r + 1}", value)
            for c, value in enumerate(row)
            if value is not None and value != ""
        )
        body.append(f'<row r="{r + 1}">{cells}</row>')
    return (
        f'{_XML}<worksheet xmlns="{_OOXML}/spreadsheetml/2006/main">'
        f"<sheetData>{''.join(body)}</sheetData></worksheet>"
    )


def _cell_xml(ref: str, value: CellValue | int) -> str:
    if isinstance(value, bool):
        return f'<c r="{ref}" t="b"><v>{int(value)}</v></c>'
    if isinstance(value, int | float):
        return f'<c r="{ref}"><v>{value!r}</v></c>'
    assert isinstance(value, str)
    if value.startswith("="):
        return f'<c r="{ref}"><f>{escape(value[1:])}</f></c>'
    return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{escape(value)}</t></is></c>'


# ---------------------------------------------------------------------- reading


def read_workbook(path: str | os.PathLike[str]) -> Workbook:
    """The workbook at ``path`` as Gnumeric reads it (the module docstring).

    An evaluator reads its files after every step, mostly unchanged: the last
    :data:`CACHED` workbooks read (of at most :data:`CACHED_BYTES`) are kept by name and
    content, and read again for free."""
    source = Path(path)
    name, content = source.name.strip(".") or "book", source.read_bytes()
    if len(content) > CACHED_BYTES:
        return _convert.__wrapped__(name, content)
    return _convert(name, content)


CACHED = 16
"""Workbooks :func:`read_workbook` keeps (a task's result and gold, a few tasks' worth)."""

CACHED_BYTES = 1 << 20
"""The largest file whose workbook is kept (the tasks' files are a few KiB)."""


@functools.lru_cache(maxsize=CACHED)
def _convert(name: str, content: bytes) -> Workbook:
    """``ssconvert`` the workbook ``content`` (a file called ``name``) to xlsx and parse it."""
    converter = shutil.which("ssconvert")
    if converter is None:
        raise SandboxUnavailableError(
            "reading a spreadsheet needs ssconvert: install Debian's gnumeric (make install does)"
        )
    lease = lease_uid()
    try:
        with tempfile.TemporaryDirectory(prefix="agentgym-sheet-") as scratch:
            copy = Path(scratch) / "in" / name  # ssconvert goes by the suffix
            copy.parent.mkdir()
            copy.write_bytes(content)
            for path in (Path(scratch), copy.parent, copy):
                os.chown(path, lease.uid, lease.uid)
            converted = Path(scratch) / "out.xlsx"
            done = run_process(
                [
                    *unprivileged(lease.uid),
                    converter,
                    "--recalc",
                    "--export-type=Gnumeric_Excel:xlsx2",
                    str(copy),
                    str(converted),
                ],
                stdin=b"",
                timeout=CONVERT_TIMEOUT,
                output_cap=1 << 16,
                env={
                    "PATH": "/usr/bin:/bin",
                    "HOME": scratch,
                    "LANG": "C.UTF-8",
                    "GSETTINGS_BACKEND": "memory",
                },
                cwd=scratch,
            )
            if done.timed_out:
                raise UnreadableWorkbook(
                    f"ssconvert took over {CONVERT_TIMEOUT:.0f} s to read {name}"
                )
            if done.exit_code != 0 or not converted.is_file():
                said = done.stderr.strip().splitlines()
                raise UnreadableWorkbook(
                    f"ssconvert cannot read {name}: {said[-1] if said else 'no reason given'}"
                )
            return parse_xlsx(converted.read_bytes())
    finally:
        lease.release()


def unprivileged(uid: int) -> tuple[str, ...]:
    """The command line that runs what follows it as ``uid`` (no groups, no new
    privileges) in a network namespace of its own: the agent made the file a converter
    parses, so the parser runs with nothing to reach."""
    return (
        "unshare", "--net", "--", "setpriv", f"--reuid={uid}", f"--regid={uid}",
        "--clear-groups", "--no-new-privs", "--",
    )  # fmt: skip


def parse_xlsx(data: bytes) -> Workbook:
    """The sheets, values and number formats of an xlsx file that carries every formula's
    value (as ``ssconvert`` writes them)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            parts = {name: archive.read(name) for name in archive.namelist()}
    except (zipfile.BadZipFile, OSError) as failure:
        raise UnreadableWorkbook(f"not an xlsx file: {failure}") from None
    try:
        strings = _shared_strings(parts.get("xl/sharedStrings.xml"))
        formats = _cell_formats(parts.get("xl/styles.xml"))
        sheets = tuple(
            Sheet(name, _sheet_cells(parts[target], strings, formats))
            for name, target in _sheet_targets(parts)
        )
    except (KeyError, ElementTree.ParseError, ValueError, IndexError) as failure:
        raise UnreadableWorkbook(f"a broken xlsx file: {failure}") from None
    return Workbook(sheets)


def _sheet_targets(parts: Mapping[str, bytes]) -> list[tuple[str, str]]:
    """``(sheet name, part name)`` of each sheet, in the workbook's order."""
    links = ElementTree.fromstring(parts["xl/_rels/workbook.xml.rels"])
    target_of = {link.get("Id"): link.get("Target", "") for link in links}
    workbook = ElementTree.fromstring(parts["xl/workbook.xml"])
    found = []
    for sheet in workbook.iter(f"{MAIN}sheet"):
        target = target_of[sheet.get(f"{RELATIONSHIPS}id")]
        # Relative to xl/, or absolute in the package (``/xl/worksheets/sheet1.xml``).
        part = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        found.append((sheet.get("name", ""), part))
    return found


def _shared_strings(data: bytes | None) -> list[str]:
    if data is None:
        return []
    root = ElementTree.fromstring(data)
    return ["".join(t.text or "" for t in item.iter(f"{MAIN}t")) for item in root]


def _cell_formats(data: bytes | None) -> list[str]:
    """The number format of each cell style (``s="N"``), by style index."""
    if data is None:
        return []
    root = ElementTree.fromstring(data)
    custom = {
        int(fmt.get("numFmtId", "0")): fmt.get("formatCode", "General")
        for fmt in root.iter(f"{MAIN}numFmt")
    }
    styles = root.find(f"{MAIN}cellXfs")
    formats = []
    for style in styles if styles is not None else ():
        number = int(style.get("numFmtId", "0"))
        formats.append(custom.get(number, BUILTIN_FORMATS.get(number, "General")))
    return formats


def _sheet_cells(
    data: bytes, strings: Sequence[str], formats: Sequence[str]
) -> dict[tuple[int, int], Cell]:
    cells = {}
    for element in ElementTree.fromstring(data).iter(f"{MAIN}c"):
        style = int(element.get("s", "0"))
        number_format = formats[style] if style < len(formats) else "General"
        cells[cell_position(element.get("r", ""))] = Cell(_value(element, strings), number_format)
    return cells


def _value(element: ElementTree.Element, strings: Sequence[str]) -> CellValue:
    kind = element.get("t", "n")
    if kind == "inlineStr":
        return "".join(t.text or "" for t in element.iter(f"{MAIN}t"))
    raw = element.findtext(f"{MAIN}v")
    if raw is None:
        return None
    if kind == "s":
        return strings[int(raw)]
    if kind == "b":
        return raw.strip() in ("1", "true")
    if kind in ("str", "e"):
        return raw
    return float(raw)
