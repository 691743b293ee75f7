"""HumanEval- and MBPP-style JSONL files as code problems.

One JSON object per line, in the published formats (``datasets``' ``to_json`` writes them):

``humaneval`` (HumanEval, HumanEval+ without its extra fields, MultiPL-E's Python rows)::

    {"task_id": "HumanEval/0", "entry_point": "f",
     "prompt": "def f(x):\\n    \\"\\"\\"Add one.\\n    >>> f(1)\\n    2\\n    \\"\\"\\"\\n",
     "canonical_solution": "    return x + 1\\n",
     "test": "def check(candidate):\\n    assert candidate(1) == 2\\n"}

The reference solution is ``prompt + canonical_solution``. The hidden tests are the
statements of ``check``: each top-level statement that contains an ``assert`` ends one test
(statements before it, such as ``x = ...``, belong to it); the module-level code of ``test``
(imports, ``METADATA``) is the tests' setup. ``assert <expr> == <literal>`` becomes a call case,
compared on the host. The visible examples are the prompt's doctest lines whose output is a
literal. A reply that does not define ``entry_point`` is appended to the prompt (completion
style).

``mbpp`` (MBPP, full or sanitized)::

    {"task_id": 2, "text": "Write a function to ...", "code": "def f(a, b): ...",
     "test_list": ["assert f(1, 2) == 3", ...], "test_setup_code": "",
     "challenge_test_list": []}

(sanitized MBPP says ``prompt`` for ``text`` and may add ``test_imports``). The function's name
is the one the first test calls. The hidden tests are ``test_list`` and
``challenge_test_list``, one test per assert; the first test is shown to the agent as the
visible example, as in MBPP's own prompt. The setup is ``test_setup_code``, ``test_imports``
and the import statements of ``code`` (tests such as ``math.isclose(...)`` need them).

``auto`` tells the two apart by their fields.
"""

from __future__ import annotations

import ast
import builtins
import doctest
from pathlib import Path
from typing import Any

from agentgym.envs.reasoning.code_tasks.base import CodeProblem
from agentgym.envs.reasoning.jsonl import read_rows
from agentgym.errors import UsageError
from agentgym.verifiers.code import CodeTests, is_plain

__all__ = ["FORMATS", "load_problems"]

FORMATS = ("auto", "humaneval", "mbpp")
CASE_TIMEOUT = 3.0


def load_problems(path: str | Path, dataset: str = "auto") -> list[tuple[str, CodeProblem]]:
    """``(task_id, problem)`` for every row of a HumanEval or MBPP JSONL file, in file order."""
    if dataset not in FORMATS:
        raise UsageError(f"unknown code dataset format {dataset!r}; use one of {list(FORMATS)}")
    seen: set[str] = set()

    def parse(row: dict[str, Any]) -> tuple[str, CodeProblem]:
        kind = _format_of(row) if dataset == "auto" else dataset
        problem = _humaneval(row) if kind == "humaneval" else _mbpp(row)
        task_id = str(row["task_id"])
        if task_id in seen:
            raise ValueError(f"task_id {task_id!r} appears twice")
        seen.add(task_id)
        return task_id, problem

    problems = list(read_rows(path, dataset, parse))
    if not problems:
        raise UsageError(f"code dataset file {str(Path(path).expanduser())!r} holds no rows")
    return problems


def _format_of(row: dict[str, Any]) -> str:
    if "canonical_solution" in row and "entry_point" in row:
        return "humaneval"
    if "test_list" in row:
        return "mbpp"
    raise KeyError(
        "the row has neither HumanEval's canonical_solution/entry_point nor MBPP's test_list"
    )


# --------------------------------------------------------------------------- HumanEval


def _humaneval(row: dict[str, Any]) -> CodeProblem:
    prompt, entry = _text(row, "prompt"), _text(row, "entry_point")
    reference = prompt + _text(row, "canonical_solution")
    module = ast.parse(_text(row, "test"))
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks or len(checks[0].args.args) != 1:
        raise ValueError("the test code has no check(candidate) function")
    check = checks[0]
    caller = check.args.args[0].arg
    setup = [n for n in module.body if n is not check]
    blocks = _assert_blocks(check.body)
    if caller != "candidate":  # the judge binds `candidate`; rename the parameter to it
        blocks = [[_renamed(node, caller, "candidate") for node in block] for block in blocks]
    hidden = _tests(blocks, setup, entry, names={"candidate", entry})
    return CodeProblem(
        prompt=f"Complete the Python function `{entry}`:\n\n```python\n{prompt.strip()}\n```",
        entry_point=entry,
        reference=reference,
        hidden=hidden,
        examples=_doctest_examples(prompt, entry),
        prefix=prompt,
    )


def _doctest_examples(prompt: str, entry: str) -> CodeTests | None:
    cases = []
    for example in doctest.DocTestParser().get_examples(prompt):
        source = example.source.strip()
        want = example.want.strip().splitlines()
        while want and want[-1].strip() in ('"""', "'''"):  # the docstring's end, not output
            want.pop()
        try:
            ast.parse(source, mode="eval")
            expected = ast.literal_eval("\n".join(want))
        except (SyntaxError, ValueError):
            continue
        cases.append((source, expected))
    return CodeTests(cases=cases, entry_point=entry, case_timeout=CASE_TIMEOUT) if cases else None


# --------------------------------------------------------------------------- MBPP


def _mbpp(row: dict[str, Any]) -> CodeProblem:
    text = row.get("text", row.get("prompt"))
    if not isinstance(text, str):
        raise KeyError("text")
    code = _text(row, "code")
    asserts = [*row["test_list"], *(row.get("challenge_test_list") or [])]
    if not asserts or not all(isinstance(a, str) for a in asserts):
        raise ValueError("test_list must be a non-empty list of assert statements")
    defined = {n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)}
    entry = _called(ast.parse(asserts[0]), defined)
    setup_code = [row.get("test_setup_code") or "", *(row.get("test_imports") or [])]
    imports = [n for n in ast.parse(code).body if isinstance(n, ast.Import | ast.ImportFrom)]
    setup = [*ast.parse("\n".join(setup_code)).body, *imports]
    blocks = [ast.parse(a).body for a in asserts]
    hidden = _tests(blocks, setup, entry, names=defined)
    shown = _tests(blocks[:1], setup, entry, names=defined)
    return CodeProblem(
        prompt=(
            f"{text.strip()}\n\nWrite it as a Python function named `{entry}`. It should "
            f"pass this test:\n\n```python\n{asserts[0].strip()}\n```"
        ),
        entry_point=entry,
        reference=code,
        hidden=hidden,
        examples=shown,
    )


def _called(test: ast.Module, defined: set[str]) -> str:
    """The function of ``defined`` the test calls first."""
    for node in ast.walk(test):
        called = node.func if isinstance(node, ast.Call) else None
        if isinstance(called, ast.Name) and called.id in defined:
            return called.id
    raise ValueError(f"the first test calls none of the functions the code defines {defined}")


# --------------------------------------------------------------------------- shared


def _assert_blocks(body: list[ast.stmt]) -> list[list[ast.stmt]]:
    """Statements grouped into tests: each group ends with a statement holding an assert."""
    blocks: list[list[ast.stmt]] = [[]]
    for node in body:
        blocks[-1].append(node)
        if any(isinstance(inner, ast.Assert) for inner in ast.walk(node)):
            blocks.append([])
    if not blocks[-1]:
        blocks.pop()
    elif len(blocks) > 1:  # trailing statements without an assert join the last test
        blocks[-2].extend(blocks.pop())
    return blocks


def _tests(
    blocks: list[list[ast.stmt]], setup: list[ast.stmt], entry: str, names: set[str]
) -> CodeTests:
    """Call cases where a block is ``assert <call> == <literal>``, assert blocks otherwise."""
    cases, asserts = [], []
    known = names | set(dir(builtins))
    for block in blocks:
        case = _as_case(block, known)
        if case is not None:
            cases.append(case)
        else:
            asserts.append("\n".join(ast.unparse(node) for node in block))
    return CodeTests(
        cases=cases,
        asserts=asserts,
        setup="\n".join(ast.unparse(node) for node in setup),
        entry_point=entry,
        case_timeout=CASE_TIMEOUT,
    )


def _as_case(block: list[ast.stmt], known: set[str]) -> tuple[str, Any] | None:
    """``(expression, expected)`` for a lone ``assert EXPR == LITERAL`` whose expression
    needs nothing but the program's functions and builtins (so it may run in any order)."""
    if len(block) != 1 or not isinstance(block[0], ast.Assert) or block[0].msg is not None:
        return None
    test = block[0].test
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
    ):
        return None
    try:
        expected = ast.literal_eval(test.comparators[0])
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    used = {n.id for n in ast.walk(test.left) if isinstance(n, ast.Name)}
    if not used <= known or not is_plain(expected):
        return None
    return ast.unparse(test.left), expected


def _renamed(node: ast.stmt, old: str, new: str) -> ast.stmt:
    class Rename(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.Name:
            return ast.copy_location(ast.Name(new, name.ctx), name) if name.id == old else name

    renamed: ast.stmt = Rename().visit(node)  # NodeTransformer.visit is typed to return Any
    return renamed


def _text(row: dict[str, Any], key: str) -> str:
    value = row[key]
    if not isinstance(value, str):
        raise TypeError(f"{key!r} must be a string, got {type(value).__name__}")
    return value
