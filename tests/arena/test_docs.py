"""docs/arena.md's worked example runs and prints exactly the numbers the page shows."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "arena.md"

pytest.importorskip("openskill")


def test_the_worked_example_prints_what_the_page_shows(capsys):
    text = DOC.read_text()
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL):
        exec(compile(block, str(DOC), "exec"), namespace)
    (shown,) = re.findall(r"```text\n(.*?)```", text, flags=re.DOTALL)
    assert capsys.readouterr().out == shown
