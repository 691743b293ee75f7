"""The spreadsheet tasks (envs/gui/tasks/spreadsheet.py) and their metrics
(envs/gui/osworld_sheets.py, envs/gui/workbooks.py).

Without a desktop: workbooks written and read back through ssconvert, compare_table's rules,
compare_csv's options, and every template's checked tasks (seeded oracles, an initial workbook
that fails). With one: a sample of templates is played through ``DesktopTaskEnv`` (every
template under ``make check``): the start, another seed's oracle and clearing every cell
fail, the oracle passes.
"""

import io
import shutil
import subprocess
import zipfile

import pytest
from gui.test_tasks_files import check_played, check_templates
from sampling import sample

from agentgym.envs.gui import osworld
from agentgym.envs.gui.osworld_sheets import compare_csv, compare_table, match_value
from agentgym.envs.gui.workbooks import (
    cell_position,
    column_name,
    parse_xlsx,
    read_workbook,
    unprivileged,
    write_xlsx,
)
from agentgym.errors import UsageError

needs_ssconvert = pytest.mark.skipif(
    shutil.which("ssconvert") is None, reason="reading workbooks needs gnumeric's ssconvert"
)

SALES = [["item", "qty", "price", "total"], ["fig", 3, 1.5, "=B2*C2"], ["kiwi", 5, 2.25, "=B3*C3"]]


@pytest.fixture
def book(tmp_path):
    """Write ``sheets`` as an xlsx file in tmp_path and return its path (as a str)."""

    def write(sheets, name="book.xlsx"):
        path = tmp_path / name
        path.write_bytes(write_xlsx(sheets))
        return str(path)

    return write


def test_cell_references_and_column_names():
    assert [column_name(i) for i in (0, 25, 26, 27, 701, 702)] == [
        "A", "Z", "AA", "AB", "ZZ", "AAA",
    ]  # fmt: skip
    assert cell_position("B3") == (2, 1) and cell_position("$AA$10") == (9, 26)
    with pytest.raises(ValueError, match="not a cell reference"):
        cell_position("3B")


@needs_ssconvert
def test_a_written_workbook_reads_back_with_its_formulas_computed(book):
    sheets = {"Sales": SALES, 'Notes "2"': [[True, "=1/0", '="12"', None, "007"]]}
    read = read_workbook(book(sheets))
    assert read.sheet_names == ["Sales", 'Notes "2"']
    assert read.sheets[0].rows() == [
        ["item", "qty", "price", "total"], ["fig", 3.0, 1.5, 4.5], ["kiwi", 5.0, 2.25, 11.25],
    ]  # fmt: skip
    # A boolean, an error's text, a formula's string, a gap, a string that looks like a number.
    assert read.sheets[1].rows() == [[True, "#DIV/0!", "12", None, "007"]]
    assert read.sheet("Sales").cell("D3").value == 11.25 and read.sheet("Nope") is None


@needs_ssconvert
def test_an_unchanged_workbook_is_read_once_and_a_changed_one_again(book):
    path = book({"S": [[1]]})
    first = read_workbook(path)
    assert read_workbook(path) is first
    book({"S": [[2]]})
    assert read_workbook(path).sheets[0].rows() == [[2.0]]


def test_number_formats_come_from_the_styles_custom_or_built_in():
    parts = zipfile.ZipFile(io.BytesIO(write_xlsx({"S": [[1.5, 0.25, 7]]})))
    files = {name: parts.read(name) for name in parts.namelist()}
    main = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    files["xl/styles.xml"] = (
        b'<styleSheet xmlns="' + main + b'"><numFmts><numFmt numFmtId="100" '
        b'formatCode="$#,##0.00"/></numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="100"/>'
        b'<xf numFmtId="9"/></cellXfs></styleSheet>'
    )
    sheet = files["xl/worksheets/sheet1.xml"].replace(b'r="A1"', b'r="A1" s="1"')
    files["xl/worksheets/sheet1.xml"] = sheet.replace(b'r="B1"', b'r="B1" s="2"')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    read = parse_xlsx(buffer.getvalue()).sheets[0]
    assert [read.cell(ref).number_format for ref in ("A1", "B1", "C1", "D9")] == [
        "$#,##0.00", "0%", "General", "General",
    ]  # fmt: skip


def test_match_value_has_osworlds_methods():
    assert match_value(4.5, {"method": "eq", "ref": 4.5})
    assert match_value(4.5004, {"method": "approx:0.001", "ref": 4.5})
    assert not match_value("4.5", {"method": "approx:0.001", "ref": 4.5})  # text is no number
    assert not match_value(None, {"method": "gt", "ref": 1})  # an empty cell orders nowhere
    assert match_value("$#,##0.00", {"method": "re", "ref": r"^\$"})
    assert match_value("ABC", {"method": "re.I", "ref": "abc"})
    with pytest.raises(UsageError, match="unknown match method"):
        match_value(1, {"method": "close", "ref": 1})
    with pytest.raises(UsageError, match="needs a number"):
        match_value(1.0, {"method": "approx:0.1", "ref": "1"})


@needs_ssconvert
def test_compare_table_sheet_data_and_names_against_a_gold_workbook(book):
    gold = book({"Sales": [row[:3] for row in SALES], "Notes": [["x"]]}, "gold.xlsx")
    same = book({"Sales": [row[:3] for row in SALES], "Notes": [["x"]]})
    data = [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]
    names = [{"type": "sheet_name"}]
    assert compare_table(same, gold, rules=data + names) == 1.0
    changed = book({"Sales": [*[row[:3] for row in SALES[:2]], ["kiwi", 5, 2.24]]}, "c.xlsx")
    assert compare_table(changed, gold, rules=data) == 0.0
    assert compare_table(changed, gold, rules=[{**data[0], "precision": 1}]) == 1.0
    renamed = book({"Stock": [row[:3] for row in SALES], "Notes": [["x"]]}, "r.xlsx")
    assert compare_table(renamed, gold, rules=data) == 1.0
    assert compare_table(renamed, gold, rules=names) == 0.0
    by_name = [{"type": "sheet_data", "sheet_idx0": "RNStock", "sheet_idx1": "ENSales"}]
    assert compare_table(renamed, gold, rules=by_name) == 1.0
    assert compare_table(same, gold, rules=[{**by_name[0], "sheet_idx0": "RNMissing"}]) == 0.0


@needs_ssconvert
def test_compare_table_check_cell_reads_computed_values(book):
    path = book({"Sales": SALES})
    total = {"type": "check_cell", "sheet_idx": 0, "coordinate": "D3"}
    assert compare_table(
        path, rules=[{**total, "props": {"value": {"method": "eq", "ref": 11.25}}}]
    )
    wrong = {**total, "props": {"value": {"method": "approx:0.01", "ref": 11.3}}}
    assert compare_table(path, rules=[wrong]) == 0.0
    general = {**total, "props": {"number_format": {"method": "eq", "ref": "General"}}}
    assert compare_table(path, rules=[general]) == 1.0


@needs_ssconvert
def test_compare_table_scores_a_missing_or_broken_result_zero_and_bad_rules_as_bugs(book, tmp_path):
    rules = [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]
    gold = book({"S": [[1]]}, "gold.xlsx")
    assert compare_table(None, gold, rules=rules) == 0.0
    assert compare_table(str(tmp_path / "absent.xlsx"), gold, rules=rules) == 0.0
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04 not a zip at all")
    assert compare_table(str(broken), gold, rules=rules) == 0.0
    result = book({"S": [[1]]})
    assert compare_table(result, gold, rules=rules) == 1.0
    for bad, says in [
        ({}, "needs options"),
        ({"rules": [{"type": "chart"}]}, "its type is one of"),
        ({"rules": [{"type": "sheet_data", "sheet_idx0": "XX0", "sheet_idx1": 0}]}, "sheet index"),
        ({"rules": [{"type": "sheet_data", "sheet_idx0": 0}]}, "lacks"),
    ]:
        with pytest.raises(UsageError, match=says):
            compare_table(result, gold, **bad)
    with pytest.raises(UsageError, match="expected workbook"):
        compare_table(result, str(tmp_path / "no-gold.xlsx"), rules=rules)


def test_compare_csv_options(tmp_path):
    gold, result = tmp_path / "gold.csv", tmp_path / "out.csv"
    gold.write_text("item,qty\nfig,3\n")
    result.write_text("item,qty\r\nfig,3")  # line ends and the last newline do not matter
    assert compare_csv(str(result), str(gold)) == 1.0
    result.write_text("Item,qty \nfig,3\n")
    assert compare_csv(str(result), str(gold)) == 0.0
    assert compare_csv(str(result), str(gold), strict=False, ignore_case=True) == 1.0
    other = tmp_path / "other.csv"
    other.write_text("Item,qty \nfig,3\n")
    assert compare_csv(str(result), [str(gold), str(other)]) == 1.0
    assert compare_csv(None, str(gold)) == 0.0


def test_spreadsheet_templates_make_checked_tasks_with_seeded_oracles():
    check_templates("gnumeric", minimum=10)


@needs_ssconvert
@pytest.mark.parametrize("key", [t.key for t in osworld.templates("gnumeric")])
def test_the_initial_workbook_fails_every_spreadsheet_task(key, tmp_path):
    """The file the task opens, judged as if saved untouched (a no-op), scores 0."""
    found = osworld.TEMPLATES[key]
    for seed in range(3):
        task = osworld.generate(found, seed)
        files, evaluator = task["agentgym"]["files"], task["evaluator"]
        opened = task["config"][0]["parameters"]["files"][0]["url"].removeprefix("local://")
        (tmp_path / opened).write_bytes(files[opened])
        result = tmp_path / evaluator["result"]["path"].removeprefix("~/")
        expected = evaluator.get("expected")
        if expected is not None:
            key_of_gold = expected["path"].removeprefix("local://")
            gold = files[key_of_gold]
            (tmp_path / key_of_gold).write_bytes(gold.encode() if isinstance(gold, str) else gold)
        metric = compare_table if evaluator["func"] == "compare_table" else compare_csv
        arguments = [str(result) if result.exists() else None]
        if expected is not None:
            arguments.append(str(tmp_path / expected["path"].removeprefix("local://")))
        assert metric(*arguments, **evaluator["options"]) == 0.0, task["id"]


CLEAR_ALL = ['key("Control+a")', 'key("Delete")', 'key("Control+s")']
"""Select every cell, clear it, save."""


@pytest.mark.sampled
@pytest.mark.parametrize("key", sample([t.key for t in osworld.templates("gnumeric")], 1))
def test_spreadsheet_oracle_passes_and_blind_replay_fails(key):
    check_played("gnumeric", key, attacks=[CLEAR_ALL])


@needs_ssconvert
def test_export_csv_gold_is_what_gnumeric_exports(tmp_path):
    """The gold CSV equals Gnumeric's own CSV export of the task's workbook (its quoting of a
    header with a space, its numbers), over seeds whose headers differ."""
    found = osworld.TEMPLATES["gnumeric.export_csv"]
    for seed in range(12):
        task = osworld.generate(found, seed)
        files = task["agentgym"]["files"]
        book = next(key for key in files if key.endswith(".xlsx"))
        (tmp_path / book).write_bytes(files[book])
        exported = tmp_path / f"{seed}.csv"
        subprocess.run(
            ["ssconvert", str(tmp_path / book), str(exported)], check=True, capture_output=True
        )
        assert exported.read_text() == files["gold.csv"], task["id"]


def test_the_converter_runs_unprivileged_with_no_network():
    """ssconvert parses files the agent made: it runs as a leased uid, with only a loopback."""
    from agentgym.sandbox.process import run_process
    from agentgym.sandbox.uids import lease_uid

    lease = lease_uid()
    try:
        probe = "id -u; id -G; cat /proc/net/dev | tail -n +3 | cut -d: -f1"
        done = run_process(
            [*unprivileged(lease.uid), "sh", "-c", probe], stdin=b"", timeout=10, output_cap=4096
        )
    finally:
        lease.release()
    assert done.exit_code == 0, done.stderr
    assert done.stdout.split() == [str(lease.uid), str(lease.uid), "lo"]
