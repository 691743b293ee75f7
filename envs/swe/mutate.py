r"""Candidate bugs for the SWE family: single-site mutations of a module, as minimal text edits.

The task factory (SWE-smith style) injects a bug into one function of a real package, runs the
package's tests and keeps the candidate only if some of them break. The reverse of the injection
is the fix, and it is the task's oracle. So a mutation is never written back by unparsing the
module, which would reformat all of it and make the reverse patch as large as the file: it is a
few :class:`Edit`\ s, character ranges of the *original* source replaced by new text, computed
from the AST positions. Comments, blank lines and formatting outside those ranges stay byte for
byte, the diff touches only the lines ``lineno..end_lineno`` of the :class:`Mutation`, and the
fix reads like a one-line human patch.

>>> source = "def last(items):\n    return items[len(items) - 1]\n"
>>> [m.description for m in find_mutations(source, operators=["off_by_one"])]
['`len(items) - 1` -> `len(items)`', '`1` -> `2` in `len(items) - 1`']
>>> print(apply(source, find_mutations(source, operators=["off_by_one"])[:1]), end="")
def last(items):
    return items[len(items)]

**Operators** (:data:`OPERATORS`). Each one writes only valid code that behaves differently from
the original: no ``x + 0``, no swap of identical operands, no name replaced by itself.

=====================  =========================================================================
``invert_condition``   the test of an ``if``/``elif``/``while``/ternary/``assert`` is negated: a
                       single comparison flips (``==``/``!=``, ``<``/``>=``, ``in``/``not in``,
                       ``is``/``is not``), a ``not x`` loses its ``not``, else ``not (...)``
``off_by_one``         an int used as a bound (``range`` argument, slice bound, subscript, operand
                       of ``+``/``-``) gets ±1 (``n - 1`` -> ``n``); ``<``/``<=``, ``>``/``>=``
``swap_operands``      operands of ``- / // % ** << >>`` or of an ordering comparison swap places,
                       or two neighbouring positional arguments of a call (not ``min``/``max``)
``change_operator``    ``+``/``-``, ``*``/``//`` (also in ``+=`` and the like), ``and``/``or``,
                       ``min``/``max``
``drop_statement``     an expression statement, assignment, ``break`` or ``continue`` is removed
                       (whole lines) from a block of at least two statements
``drop_early_return``  a ``return`` or ``raise`` directly in an ``if`` or ``else`` block after
                       which the function goes on is removed (``pass`` if it was alone)
``change_constant``    an int ``k`` -> ``k + 1`` (``1`` -> ``0``), a float ``x`` -> ``x + 1.0``,
                       ``True``/``False``; in a body or a parameter default
``wrong_variable``     a local variable read is replaced by the local bound most recently before
                       that line (parameters and assignments, not ``self``/``cls``)
``remove_handler``     an ``except`` clause is removed; a ``try`` with a single handler (and no
                       ``else``/``finally``) becomes its body, dedented
=====================  =========================================================================

**What is mutated.** The bodies (and parameter defaults) of every function and method of the
module: module-level code, class bodies, decorators, annotations, docstrings and the inside of
f-strings are left alone. A mutation is attributed to its outermost enclosing ``def``
(``Class.method``; a nested function or lambda counts as part of the function around it).

**Decisions.** ``wrong_variable`` proposes one replacement per read (the nearest earlier binding,
the variable a human would most likely confuse it with), not every local, so that it does not
outnumber the other operators. Ints in bound positions belong to ``off_by_one`` only, never to
``change_constant``. Operands that move and are not atoms get parentheses (``c - (a * b)``).
"""

from __future__ import annotations

import ast
import bisect
import random
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

__all__ = ["OPERATORS", "Edit", "Mutation", "apply", "combine", "find_mutations"]

OPERATORS: tuple[str, ...] = (
    "invert_condition",
    "off_by_one",
    "swap_operands",
    "change_operator",
    "drop_statement",
    "drop_early_return",
    "change_constant",
    "wrong_variable",
    "remove_handler",
)


@dataclass(frozen=True, order=True)
class Edit:
    """Replace ``source[start:end]`` of the original source by ``text``."""

    start: int
    """Character offset (not byte) of the first replaced character."""
    end: int
    """Character offset just after the last replaced character."""
    text: str
    """What goes in their place."""


@dataclass(frozen=True)
class Mutation:
    """One injected bug: which operator made it, where, and the text edits that make it."""

    operator: str
    """One of :data:`OPERATORS`."""
    function: str
    """The enclosing top-level function or method: ``"chunked"``, ``"SeekableIterator.peek"``."""
    lineno: int
    """First line (1-based, in the original source) of the mutated node; the edits lie within."""
    end_lineno: int
    """Last line of the mutated node."""
    description: str
    """What was changed, for logs (never shown to the agent): "`<` -> `<=`"."""
    edits: tuple[Edit, ...]
    """Non-overlapping edits of the original source, in order."""


def find_mutations(source: str, *, operators: Collection[str] | None = None) -> list[Mutation]:
    """Every single-site mutation of every function in ``source``, by position then operator.

    ``operators`` restricts the search to some of :data:`OPERATORS` (all by default).
    """
    selected = OPERATORS if operators is None else _checked_operators(operators)
    text = _Text(source)
    found: list[Mutation] = []
    for qualname, definition in _functions(ast.parse(source), prefix=""):
        function = _Function(text, qualname, definition)
        for node in function.nodes:
            for operator in selected:
                found.extend(_OPERATOR_FUNCTIONS[operator](function, node))
    found.sort(key=lambda m: (m.edits[0].start, OPERATORS.index(m.operator)))  # stable
    return found


def apply(source: str, mutations: Sequence[Mutation]) -> str:
    """``source`` with the edits of ``mutations`` applied.

    Raises ValueError when edits of two mutations overlap, or when several mutations together
    do not parse (each single mutation from :func:`find_mutations` does).
    """
    placed = sorted(
        ((edit, mutation) for mutation in mutations for edit in mutation.edits),
        key=lambda placed_edit: (placed_edit[0].start, placed_edit[0].end),
    )
    for (edit, mutation), (following, other) in pairwise(placed):
        if following.start < edit.end:
            raise ValueError(f"{_name(mutation)} and {_name(other)} have overlapping edits")
    pieces: list[str] = []
    position = 0
    for edit, _ in placed:
        pieces += [source[position : edit.start], edit.text]
        position = edit.end
    mutated = "".join([*pieces, source[position:]])
    if len(mutations) > 1:
        try:
            ast.parse(mutated)
        except SyntaxError as error:
            names = ", ".join(_name(mutation) for mutation in mutations)
            raise ValueError(
                f"{names} do not combine into valid Python: {error.msg} (line {error.lineno})"
            ) from None
    return mutated


def combine(
    candidates: Sequence[Mutation], count: int, rng: random.Random
) -> list[Mutation] | None:
    """``count`` mutations of ``candidates`` on disjoint lines, in different functions if possible.

    The choice is random (drawn from ``rng``, so deterministic for a seed and a candidate order)
    and returned in source order; ``None`` when no ``count`` candidates lie on disjoint lines.
    """
    if count < 2:
        raise ValueError(f"a combination has at least 2 mutations, got count={count}")
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    # The last try takes the candidates by their last line: the interval-scheduling greedy,
    # which finds `count` line-disjoint mutations whenever they exist.
    chosen = (
        _pick(shuffled, count, distinct_functions=True)
        or _pick(shuffled, count, distinct_functions=False)
        or _pick(sorted(shuffled, key=lambda m: m.end_lineno), count, distinct_functions=False)
    )
    return sorted(chosen, key=lambda m: m.edits) if chosen else None


def _pick(order: list[Mutation], count: int, *, distinct_functions: bool) -> list[Mutation] | None:
    chosen: list[Mutation] = []
    for mutation in order:
        if all(_compatible(mutation, other, distinct_functions) for other in chosen):
            chosen.append(mutation)
            if len(chosen) == count:
                return chosen
    return None


def _compatible(first: Mutation, second: Mutation, distinct_functions: bool) -> bool:
    disjoint = first.end_lineno < second.lineno or second.end_lineno < first.lineno
    return disjoint and not (distinct_functions and first.function == second.function)


def _name(mutation: Mutation) -> str:
    return f"{mutation.operator} in {mutation.function} (line {mutation.lineno})"


def _checked_operators(operators: Collection[str]) -> tuple[str, ...]:
    unknown = set(operators) - set(OPERATORS)
    if unknown:
        raise ValueError(f"unknown operators {sorted(unknown)}; known: {', '.join(OPERATORS)}")
    return tuple(operator for operator in OPERATORS if operator in operators)


# --- Positions ------------------------------------------------------------------------------

_NEWLINE = re.compile(r"\r\n|\r|\n")  # what the tokenizer counts as a line break (not \f)

_Located = ast.expr | ast.stmt | ast.excepthandler


def _last_line(node: _Located) -> int:
    return node.lineno if node.end_lineno is None else node.end_lineno


class _Text:
    """The source, with AST positions (UTF-8 byte columns) turned into character offsets."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._line_starts = [0, *(match.end() for match in _NEWLINE.finditer(source))]

    def line_start(self, lineno: int) -> int:
        if lineno > len(self._line_starts):
            return len(self.source)
        return self._line_starts[lineno - 1]

    def lines(self, first: int, last: int) -> list[str]:
        """Lines ``first..last`` with their line breaks."""
        return [
            self.source[self.line_start(n) : self.line_start(n + 1)] for n in range(first, last + 1)
        ]

    def offset(self, lineno: int, col: int) -> int:
        start = self.line_start(lineno)
        if self.source[start : start + col].isascii():
            return start + col
        line = self.source[start : self.line_start(lineno + 1)]
        return start + len(line.encode()[:col].decode())

    def start(self, node: _Located) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: _Located) -> int:
        end_col = node.col_offset if node.end_col_offset is None else node.end_col_offset
        return self.offset(_last_line(node), end_col)

    def segment(self, node: _Located) -> str:
        return self.source[self.start(node) : self.end(node)]

    def indentation(self, node: _Located) -> str | None:
        """The whitespace before ``node`` on its line, None if something else is there."""
        before = self.source[self.line_start(node.lineno) : self.start(node)]
        return None if before.strip() else before

    def line_removal(self, node: _Located) -> Edit | None:
        """An edit removing the whole lines of ``node``, None if it shares them with code."""
        after = self.source[self.end(node) : self.line_start(_last_line(node) + 1)].strip()
        if self.indentation(node) is None or (after and not after.startswith("#")):
            return None
        return Edit(self.line_start(node.lineno), self.line_start(_last_line(node) + 1), "")

    def gap(self, left: ast.expr, right: ast.expr) -> _Gap:
        return _Gap.between(self.source, self.end(left), self.start(right))

    def gaps(self, operands: Sequence[ast.expr]) -> list[_Gap]:
        return [self.gap(left, right) for left, right in pairwise(operands)]


@dataclass(frozen=True)
class _Gap:
    """The text between two operands: the left one's closing brackets, the operator token(s)
    (``-``, ``not in``, ``and``, ``+=``), the right one's opening brackets, and whitespace,
    comments and line continuations anywhere. AST spans leave an operand's brackets out."""

    left_end: int
    """Just after the left operand's last closing bracket."""
    operator_start: int
    operator_end: int
    right_start: int
    """At the right operand's first opening bracket."""

    @classmethod
    def between(cls, source: str, start: int, end: int) -> _Gap:
        left_end, right_start, significant = start, end, []
        position = start
        while position < end:
            char = source[position]
            if char == "#":
                while position < end and source[position] not in "\r\n":
                    position += 1
                continue
            if char == ")":
                left_end = position + 1
            elif char == "(":
                right_start = min(right_start, position)
            elif not char.isspace() and char != "\\":
                significant.append(position)
            position += 1
        if not significant:  # brackets only: the gap after a `not`
            return cls(left_end, start, start, right_start)
        return cls(left_end, significant[0], significant[-1] + 1, right_start)

    def operator(self, source: str) -> str:
        return source[self.operator_start : self.operator_end]


def _snippet(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# --- Functions and their nodes ----------------------------------------------------------------

_Definition = ast.FunctionDef | ast.AsyncFunctionDef
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
# Annotations, decorators and match patterns are not mutated; operators and contexts are not nodes
# in the source.
_SKIPPED_FIELDS = frozenset(
    {"decorator_list", "returns", "annotation", "pattern", "ctx", "op", "ops"}
)


def _functions(node: ast.AST, prefix: str) -> Iterator[tuple[str, _Definition]]:
    """Top-level functions and methods (also under module-level ``if``/``try``), by qualname."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _Definition):
            yield prefix + child.name, child
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
            yield from _functions(child, prefix)


def _has_docstring(node: ast.AST) -> bool:
    if not isinstance(node, _Definition | ast.ClassDef) or not node.body:
        return False
    first = node.body[0]
    return isinstance(first, ast.Expr) and _is_string(first.value)


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)


def _children(node: ast.AST) -> Iterator[ast.AST]:
    """The child nodes that may be mutated (an f-string has none: its positions are unreliable)."""
    if isinstance(node, ast.JoinedStr):
        return
    for name, value in ast.iter_fields(node):
        if name in _SKIPPED_FIELDS:
            continue
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            items = value[1:] if name == "body" and _has_docstring(node) else value
            yield from (item for item in items if isinstance(item, ast.AST))


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """The statement lists ``node`` owns directly (``if`` body and ``else``, loop bodies...)."""
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list) and value:
            yield value


class _Function:
    """One top-level function or method: its mutable nodes, their parents, its local variables."""

    def __init__(self, text: _Text, qualname: str, definition: _Definition) -> None:
        self.text, self.qualname, self.definition = text, qualname, definition
        self.nodes: list[ast.AST] = []
        self.parent: dict[ast.AST, ast.AST] = {}
        self.block_of: dict[ast.stmt, tuple[ast.AST, list[ast.stmt]]] = {}
        self.variable_reads: set[ast.Name] = set()
        self._callees: set[ast.Name] = set()
        self._bindings: list[tuple[int, int, str]] = []  # (line, column, name) in its own scope
        self._not_variables = {"self", "cls"}  # nested-scope, global, imported, except-as names
        self._visit(definition, None, nested=False, in_body=False)
        variables = {read.id for read in self.variable_reads} - self._not_variables
        self._bindings = sorted(binding for binding in self._bindings if binding[2] in variables)
        self.variables = {name for _, _, name in self._bindings}

    def _visit(self, node: ast.AST, parent: ast.AST | None, *, nested: bool, in_body: bool) -> None:
        self.nodes.append(node)
        if parent is not None:
            self.parent[node] = parent
        self._record_names(node, nested=nested, in_body=in_body)
        for block in _blocks(node):
            for statement in block:
                self.block_of[statement] = (node, block)
        is_root = node is self.definition
        for child in _children(node):
            self._visit(
                child,
                node,
                nested=nested or (not is_root and isinstance(node, _SCOPES)),
                in_body=in_body or (is_root and child is not self.definition.args),
            )

    def _record_names(self, node: ast.AST, *, nested: bool, in_body: bool) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            self._callees.add(node.func)
        elif isinstance(node, ast.arg):
            self._bind(node.arg, node.lineno, node.col_offset, nested=nested)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                self._bind(node.id, node.lineno, node.col_offset, nested=nested)
            elif isinstance(node.ctx, ast.Del):
                self._not_variables.add(node.id)
            elif in_body and node not in self._callees:
                self.variable_reads.add(node)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            self._not_variables.update(node.names)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            self._not_variables.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._not_variables.add(node.name)  # unbound again after the handler
        elif isinstance(node, _Definition | ast.ClassDef) and node is not self.definition:
            self._not_variables.add(node.name)

    def _bind(self, name: str, lineno: int, col: int, *, nested: bool) -> None:
        if nested:
            self._not_variables.add(name)
        else:
            self._bindings.append((lineno, col, name))

    def nearest_variable(self, read: ast.Name) -> str | None:
        """The other variable bound most recently before the line of ``read``."""
        if read not in self.variable_reads or read.id not in self.variables:
            return None
        index = bisect.bisect_left(self._bindings, (read.lineno,))
        for _, _, name in reversed(self._bindings[:index]):
            if name != read.id:
                return name
        return None

    def code_runs_after(self, statement: ast.stmt) -> bool:
        """Whether the function goes on after ``statement``: a later statement, or a loop."""
        while True:
            owner, block = self.block_of[statement]
            if block[-1] is not statement:
                return True
            if isinstance(owner, ast.For | ast.AsyncFor | ast.While) and block is owner.body:
                return True
            if isinstance(owner, _Definition | ast.ClassDef):
                return False
            parent = owner if isinstance(owner, ast.stmt) else self.parent[owner]
            assert isinstance(parent, ast.stmt)  # an except handler's or a match case's statement
            statement = parent

    def mutation(self, operator: str, node: _Located, description: str, *edits: Edit) -> Mutation:
        lines = (node.lineno, _last_line(node))
        return Mutation(operator, self.qualname, *lines, description, tuple(sorted(edits)))

    def replace(self, operator: str, node: _Located, new: str, context: str = "") -> Mutation:
        """Replace the text of ``node`` by ``new``."""
        old = self.text.segment(node)
        description = f"`{_snippet(old)}` -> `{_snippet(new)}`{context}"
        return self.mutation(
            operator, node, description, Edit(self.text.start(node), self.text.end(node), new)
        )

    def replace_operator(
        self, operator: str, node: _Located, gap: _Gap, new: str, context: str = ""
    ) -> Mutation:
        """Replace the operator token(s) in ``gap`` by ``new``."""
        description = f"`{gap.operator(self.text.source)}` -> `{new}`{context}"
        return self.mutation(
            operator, node, description, Edit(gap.operator_start, gap.operator_end, new)
        )


_OperatorFunction = Callable[[_Function, ast.AST], Iterator[Mutation]]

# Nodes that may move or take a prefix without parentheses changing how they parse.
_ATOMS = (
    ast.Name,
    ast.Constant,
    ast.Attribute,
    ast.Subscript,
    ast.Call,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
)


def _parenthesised(text: str, node: ast.expr) -> str:
    return text if isinstance(node, _ATOMS) else f"({text})"


# --- invert_condition -------------------------------------------------------------------------

_NEGATED_COMPARISON: dict[type[ast.cmpop], str] = {
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Lt: ">=",
    ast.GtE: "<",
    ast.Gt: "<=",
    ast.LtE: ">",
    ast.In: "not in",
    ast.NotIn: "in",
    ast.Is: "is not",
    ast.IsNot: "is",
}


_CONDITION_PLACES = {
    ast.If: "an if condition",
    ast.While: "a while condition",
    ast.IfExp: "a conditional expression",
    ast.Assert: "an assert",
}


def _invert_condition(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    if not isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
        return
    test, text = node.test, function.text
    place = _CONDITION_PLACES[type(node)]
    if text.source.startswith("elif", text.start(node)):
        place = "an elif condition"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        gap = text.gap(test.left, test.comparators[0])
        flipped = _NEGATED_COMPARISON[type(test.ops[0])]
        yield function.replace_operator("invert_condition", test, gap, flipped, f" in {place}")
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        start = text.start(test)
        operand_start = _Gap.between(
            text.source, start + len("not"), text.start(test.operand)
        ).right_start
        description = f"`not` dropped from {place}"
        yield function.mutation(
            "invert_condition", test, description, Edit(start, operand_start, "")
        )
    else:
        negated = "not " + _parenthesised(text.segment(test), test)
        yield function.replace("invert_condition", test, negated, f" in {place}")


# --- off_by_one and change_constant -----------------------------------------------------------

_SHIFTED_BOUND: dict[type[ast.cmpop], str] = {
    ast.Lt: "<=",
    ast.LtE: "<",
    ast.Gt: ">=",
    ast.GtE: ">",
}


def _number(node: ast.AST) -> bool | int | float | None:
    """The value of a bool, int or float literal, negative ones (``-1``) included."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None or isinstance(inner, bool) else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float):
        return node.value
    return None


def _int(node: ast.AST) -> int | None:
    value = _number(node)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _is_bound(function: _Function, node: ast.AST) -> bool:
    """Whether the int literal ``node`` is a bound: of a range, a slice, an index, a sum."""
    parent = function.parent.get(node)
    if isinstance(parent, ast.Call):
        return (
            isinstance(parent.func, ast.Name) and parent.func.id == "range" and node in parent.args
        )
    if isinstance(parent, ast.Slice):
        return node is parent.lower or node is parent.upper
    if isinstance(parent, ast.Subscript):
        return node is parent.slice
    return isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add | ast.Sub)


def _off_by_one(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    if isinstance(node, ast.Compare):
        for op, gap in zip(
            node.ops, function.text.gaps([node.left, *node.comparators]), strict=True
        ):
            if type(op) in _SHIFTED_BOUND:
                yield function.replace_operator("off_by_one", node, gap, _SHIFTED_BOUND[type(op)])
        return
    value = _int(node)
    if value is None or not isinstance(node, ast.expr) or not _is_bound(function, node):
        return
    parent = function.parent[node]
    context = function.parent[parent] if isinstance(parent, ast.Slice) else parent
    assert isinstance(context, ast.expr)  # a range() call, a subscript or a sum
    for shifted in (value + 1, value - 1):
        if isinstance(parent, ast.BinOp) and shifted == 0 and _may_drop(parent, node):
            yield _drop_zero_term(function, parent, node)
        else:
            where = f" in `{_snippet(function.text.segment(context))}`"
            yield function.replace("off_by_one", node, str(shifted), where)


def _may_drop(sum_: ast.BinOp, term: ast.expr) -> bool:
    """Whether ``sum_`` without ``term`` is what it would be with a zero there."""
    return isinstance(sum_.op, ast.Add) or term is sum_.right


def _drop_zero_term(function: _Function, sum_: ast.BinOp, zero: ast.expr) -> Mutation:
    """``n - 1`` -> ``n`` rather than ``n - 0``."""
    text = function.text
    gap = text.gap(sum_.left, sum_.right)
    if zero is sum_.right:
        edit = Edit(gap.left_end, text.end(sum_), "")
    else:
        edit = Edit(text.start(sum_), gap.right_start, "")
    kept = text.source[text.start(sum_) : edit.start] + text.source[edit.end : text.end(sum_)]
    description = f"`{_snippet(text.segment(sum_))}` -> `{_snippet(kept)}`"
    return function.mutation("off_by_one", sum_, description, edit)


def _change_constant(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    value = _number(node)
    parent = function.parent.get(node)
    negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub)
    if value is None or negated or not isinstance(node, ast.expr):
        return
    if _int(node) is not None and _is_bound(function, node):
        return  # off_by_one's
    if isinstance(value, bool):
        changed: bool | int | float = not value
    elif isinstance(value, int):
        changed = 0 if value == 1 else value + 1
    else:
        changed = value + 1.0
    if changed != value:  # a huge float absorbs the 1.0
        yield function.replace("change_constant", node, repr(changed))


# --- swap_operands and change_operator --------------------------------------------------------

_NON_COMMUTATIVE = ast.Sub | ast.Div | ast.FloorDiv | ast.Mod | ast.Pow | ast.LShift | ast.RShift
_ORDERING = ast.Lt | ast.LtE | ast.Gt | ast.GtE | ast.In | ast.NotIn
_SWAPPED_OPERATOR: dict[type[ast.operator], str] = {
    ast.Add: "-",
    ast.Sub: "+",
    ast.Mult: "//",
    ast.FloorDiv: "*",
}


def _swap(
    function: _Function,
    node: ast.expr,
    spans: list[tuple[int, int]],
    moved: list[ast.expr],
    what: str,
) -> Iterator[Mutation]:
    """Swap the texts at two spans; ``moved`` are the nodes whose text goes in parentheses."""
    text = function.text
    first, second = (text.source[start:end] for start, end in spans)
    if first == second:
        return
    # An operand without brackets of its own gets some, unless it is an atom.
    for operand in moved:
        if (text.start(operand), text.end(operand)) == spans[0]:
            first = _parenthesised(first, operand)
        elif (text.start(operand), text.end(operand)) == spans[1]:
            second = _parenthesised(second, operand)
    edits = (Edit(*spans[0], second), Edit(*spans[1], first))
    yield function.mutation("swap_operands", node, f"swapped the {what}", *edits)


def _operand_spans(
    function: _Function, node: ast.expr, operands: list[ast.expr]
) -> list[tuple[int, int]]:
    """Where each operand lies with its brackets."""
    gaps = function.text.gaps(operands)
    starts = [function.text.start(node), *(gap.right_start for gap in gaps)]
    ends = [*(gap.left_end for gap in gaps), function.text.end(node)]
    return list(zip(starts, ends, strict=True))


def _swap_operands(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, _NON_COMMUTATIVE):
        operands = [node.left, node.right]
        gap = function.text.gap(node.left, node.right)
        what = f"operands of `{gap.operator(function.text.source)}`"
        yield from _swap(function, node, _operand_spans(function, node, operands), operands, what)
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        spans = _operand_spans(function, node, operands)
        gaps = function.text.gaps(operands)
        for index, op in enumerate(node.ops):
            if isinstance(op, _ORDERING):
                what = f"operands of `{gaps[index].operator(function.text.source)}`"
                yield from _swap(function, node, spans[index : index + 2], [], what)
    elif isinstance(node, ast.Call) and not _calls(node, "min", "max"):
        callee = _snippet(function.text.segment(node.func))
        for index, pair in enumerate(pairwise(node.args), start=1):
            if not any(isinstance(argument, ast.Starred) for argument in pair):
                spans = [(function.text.start(a), function.text.end(a)) for a in pair]
                what = f"arguments {index} and {index + 1} of `{callee}()`"
                yield from _swap(function, node, spans, [], what)


def _calls(node: ast.Call, *names: str) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id in names


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == 0


def _change_operator(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    text = function.text
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _SWAPPED_OPERATOR:
        left, right = (
            (node.left, node.right) if isinstance(node, ast.BinOp) else (node.target, node.value)
        )
        if isinstance(node.op, ast.Add | ast.Sub) and _is_zero(right):
            return
        suffix = "=" if isinstance(node, ast.AugAssign) else ""
        new = _SWAPPED_OPERATOR[type(node.op)] + suffix
        yield function.replace_operator("change_operator", node, text.gap(left, right), new)
    elif isinstance(node, ast.BoolOp):
        new = "or" if isinstance(node.op, ast.And) else "and"
        for left, right in pairwise(node.values):
            if text.segment(left) != text.segment(right):
                yield function.replace_operator("change_operator", node, text.gap(left, right), new)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        swapped = {"min": "max", "max": "min"}.get(node.func.id)
        if swapped is not None:
            yield function.replace("change_operator", node.func, swapped)


# --- drop_statement and drop_early_return -----------------------------------------------------

_DROPPABLE = ast.Expr | ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Break | ast.Continue


def _changes_something(statement: ast.stmt) -> bool:
    """Whether removing ``statement`` changes behaviour (a bare string or ``x = x`` does not)."""
    if isinstance(statement, ast.Expr):
        return not isinstance(statement.value, ast.Constant)
    if isinstance(statement, ast.AnnAssign):
        return statement.value is not None
    if isinstance(statement, ast.Assign):
        target, value = statement.targets[0], statement.value
        same = (
            isinstance(target, ast.Name) and isinstance(value, ast.Name) and target.id == value.id
        )
        return not (len(statement.targets) == 1 and same)
    return True


def _drop_statement(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    for block in _blocks(node):
        if len(block) < 2:
            continue
        for statement in block:
            if isinstance(statement, _DROPPABLE) and _changes_something(statement):
                removal = function.text.line_removal(statement)
                if removal is not None:
                    description = f"removed `{_snippet(function.text.segment(statement))}`"
                    yield function.mutation("drop_statement", statement, description, removal)


def _drop_early_return(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    if not isinstance(node, ast.If) or not function.code_runs_after(node):
        return
    text = function.text
    for block in (node.body, node.orelse):
        for statement in block:
            if isinstance(statement, ast.Return | ast.Raise):
                removal = text.line_removal(statement) if len(block) > 1 else None
                edit = removal or Edit(text.start(statement), text.end(statement), "pass")
                description = f"removed `{_snippet(text.segment(statement))}` from an if block"
                yield function.mutation("drop_early_return", statement, description, edit)


# --- wrong_variable ---------------------------------------------------------------------------


def _wrong_variable(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    if isinstance(node, ast.Name):
        replacement = function.nearest_variable(node)
        if replacement is not None:
            yield function.replace("wrong_variable", node, replacement)


# --- remove_handler ---------------------------------------------------------------------------


def _reraises_only(handler: ast.ExceptHandler) -> bool:
    return (
        len(handler.body) == 1
        and isinstance(handler.body[0], ast.Raise)
        and handler.body[0].exc is None
    )


def _handler_name(function: _Function, handler: ast.ExceptHandler) -> str:
    caught = "" if handler.type is None else " " + _snippet(function.text.segment(handler.type))
    return f"`except{caught}`"


def _remove_handler(function: _Function, node: ast.AST) -> Iterator[Mutation]:
    if not isinstance(node, ast.Try):
        return
    handlers = [handler for handler in node.handlers if not _reraises_only(handler)]
    # try/else needs an except clause; try/finally does not.
    if len(node.handlers) > 1 or (node.finalbody and not node.orelse):
        for handler in handlers:
            removal = function.text.line_removal(handler)
            if removal is not None:
                description = f"removed the {_handler_name(function, handler)} handler"
                yield function.mutation("remove_handler", handler, description, removal)
    elif handlers and not node.orelse and not node.finalbody:
        unwrapped = _unwrap(function.text, node)
        if unwrapped is not None:
            description = f"unwrapped the try body from its {_handler_name(function, handlers[0])}"
            yield function.mutation("remove_handler", node, description, unwrapped)


def _unwrap(text: _Text, node: ast.Try) -> Edit | None:
    """Replace the try statement by its body, dedented one level (strings' insides kept)."""
    first_line = node.body[0].lineno
    try_indent, body_indent = text.indentation(node), text.indentation(node.body[0])
    if first_line == node.lineno or try_indent is None or body_indent is None:
        return None
    if len(body_indent) <= len(try_indent) or not body_indent.startswith(try_indent):
        return None
    inside_strings = _string_inner_lines(node.body)
    body = text.lines(node.lineno + 1, node.handlers[0].lineno - 1)
    dedented = [
        try_indent + line[len(body_indent) :]
        if line.startswith(body_indent) and lineno not in inside_strings
        else line
        for lineno, line in enumerate(body, start=node.lineno + 1)
    ]
    return Edit(
        text.line_start(node.lineno), text.line_start(_last_line(node) + 1), "".join(dedented)
    )


def _string_inner_lines(statements: list[ast.stmt]) -> set[int]:
    """Lines that continue a multi-line string: their indentation is part of the string."""
    lines: set[int] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant | ast.JoinedStr):  # only strings span lines
                lines.update(range(node.lineno + 1, _last_line(node) + 1))
    return lines


_OPERATOR_FUNCTIONS: dict[str, _OperatorFunction] = {
    "invert_condition": _invert_condition,
    "off_by_one": _off_by_one,
    "swap_operands": _swap_operands,
    "change_operator": _change_operator,
    "drop_statement": _drop_statement,
    "drop_early_return": _drop_early_return,
    "change_constant": _change_constant,
    "wrong_variable": _wrong_variable,
    "remove_handler": _remove_handler,
}
