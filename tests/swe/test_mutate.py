"""Bug injection for the SWE family: each operator's edits, valid mutants of real modules,
combinations, determinism and positions in non-ASCII source."""

import ast
import bisect
import difflib
import fractions
import heapq
import inspect
import random
import statistics
import textwrap

import pytest
from hash_seeds import outputs_under_two_hash_seeds

from agentgym.envs.swe import mutate
from agentgym.envs.swe.mutate import OPERATORS, apply, combine, find_mutations


def mutants(source, operator):
    """What ``operator`` makes of ``source``: one mutated source per mutation, in order."""
    return [apply(source, [m]) for m in find_mutations(source, operators=[operator])]


def last(lines, count):
    """The last ``count`` lines (none for 0)."""
    return lines[len(lines) - count :]


def changed_lines(source, mutated):
    """The lines of ``source`` that ``mutated`` replaces, and what replaces them."""
    return [
        line
        for line in difflib.unified_diff(source.splitlines(), mutated.splitlines(), lineterm="")
        if line[:1] in "-+" and line[:3] not in ("---", "+++")
    ]


# --- invert_condition -------------------------------------------------------------------------

CLAMP = """\
def clamp(value, low, high, strict):
    if value < low:  # below the range
        return low
    elif not value <= high:
        return high
    while strict and value in SEEN:
        value += 1
    assert strict, "strict only"
    return value if value is not None else low
"""


def test_invert_condition_flips_a_single_comparison_and_keeps_the_comment():
    assert mutants(CLAMP, "invert_condition")[0] == CLAMP.replace(
        "    if value < low:  # below the range", "    if value >= low:  # below the range"
    )


def test_invert_condition_drops_an_existing_not():
    assert changed_lines(CLAMP, mutants(CLAMP, "invert_condition")[1]) == [
        "-    elif not value <= high:",
        "+    elif value <= high:",
    ]


def test_invert_condition_negates_other_tests_with_not():
    assert changed_lines(CLAMP, mutants(CLAMP, "invert_condition")[2]) == [
        "-    while strict and value in SEEN:",
        "+    while not (strict and value in SEEN):",
    ]
    assert changed_lines(CLAMP, mutants(CLAMP, "invert_condition")[3]) == [
        '-    assert strict, "strict only"',
        '+    assert not strict, "strict only"',
    ]


def test_invert_condition_changes_each_if_elif_while_assert_and_ternary_once():
    descriptions = [m.description for m in find_mutations(CLAMP, operators=["invert_condition"])]
    assert descriptions == [
        "`<` -> `>=` in an if condition",
        "`not` dropped from an elif condition",
        "`strict and value in SEEN` -> `not (strict and value in SEEN)` in a while condition",
        "`strict` -> `not strict` in an assert",
        "`is not` -> `is` in a conditional expression",
    ]


@pytest.mark.parametrize(
    ("test", "negated"),
    [
        ("a == b", "a != b"),
        ("a != b", "a == b"),
        ("a < b", "a >= b"),
        ("a >= b", "a < b"),
        ("a > b", "a <= b"),
        ("a <= b", "a > b"),
        ("a in b", "a not in b"),
        ("a not in b", "a in b"),
        ("a is b", "a is not b"),
        ("a is not b", "a is b"),
        ("a < b < c", "not (a < b < c)"),
    ],
)
def test_invert_condition_negates_each_comparison(test, negated):
    source = f"def f(a, b, c):\n    if {test}:\n        return 1\n    return 2\n"
    [mutant] = mutants(source, "invert_condition")
    assert mutant == source.replace(test, negated)


# --- off_by_one -------------------------------------------------------------------------------

WINDOWS = """\
def windows(items, n):
    for i in range(len(items) - 1):
        yield items[i + 1 : i + n], items[0]
"""


def test_off_by_one_shifts_bounds_and_drops_a_term_that_becomes_zero():
    assert [changed_lines(WINDOWS, mutant)[1] for mutant in mutants(WINDOWS, "off_by_one")] == [
        "+    for i in range(len(items)):",
        "+    for i in range(len(items) - 2):",
        "+        yield items[i : i + n], items[0]",
        "+        yield items[i + 2 : i + n], items[0]",
        "+        yield items[i + 1 : i + n], items[1]",
        "+        yield items[i + 1 : i + n], items[-1]",
    ]


def test_off_by_one_shifts_range_arguments_slice_bounds_and_negative_indexes():
    source = "def tail(items, n):\n    return items[-1:n], list(range(2, 5))\n"
    assert [changed_lines(source, mutant)[1] for mutant in mutants(source, "off_by_one")] == [
        "+    return items[0:n], list(range(2, 5))",
        "+    return items[-2:n], list(range(2, 5))",
        "+    return items[-1:n], list(range(3, 5))",
        "+    return items[-1:n], list(range(1, 5))",
        "+    return items[-1:n], list(range(2, 6))",
        "+    return items[-1:n], list(range(2, 4))",
    ]


def test_off_by_one_moves_the_bound_of_an_ordering_comparison():
    source = "def inside(x, lo, hi):\n    return lo <= x < hi or x == lo\n"
    assert [changed_lines(source, mutant)[1] for mutant in mutants(source, "off_by_one")] == [
        "+    return lo < x < hi or x == lo",
        "+    return lo <= x <= hi or x == lo",
    ]


# --- swap_operands ----------------------------------------------------------------------------

SPAN = """\
def span(a, b, c):
    width = b - a * c
    if a < b == c:
        return divmod(width, c)
    return width ** 2, max(a, b), pow(a, a)
"""


def test_swap_operands_swaps_non_commutative_operands_comparisons_and_arguments():
    assert [changed_lines(SPAN, mutant)[1] for mutant in mutants(SPAN, "swap_operands")] == [
        "+    width = (a * c) - b",
        "+    if b < a == c:",
        "+        return divmod(c, width)",
        "+    return 2 ** width, max(a, b), pow(a, a)",
    ]


def test_swap_operands_keeps_the_meaning_of_chained_operators_with_parentheses():
    source = "def f(a, b, c):\n    return a - b - c, a ** -b, (a + b) % c\n"
    assert [changed_lines(source, mutant)[1] for mutant in mutants(source, "swap_operands")] == [
        "+    return c - (a - b), a ** -b, (a + b) % c",
        "+    return b - a - c, a ** -b, (a + b) % c",
        "+    return a - b - c, (-b) ** a, (a + b) % c",
        "+    return a - b - c, a ** -b, c % (a + b)",
    ]


# --- change_operator --------------------------------------------------------------------------

TOTAL = """\
def total(prices, count, fallback):
    subtotal = sum(prices) + count * 2
    subtotal -= count // 3
    cheapest = min(prices) if prices and count else fallback
    return subtotal + 0, cheapest
"""


def test_change_operator_swaps_arithmetic_boolean_operators_and_min_max():
    assert [changed_lines(TOTAL, mutant)[1] for mutant in mutants(TOTAL, "change_operator")] == [
        "+    subtotal = sum(prices) - count * 2",
        "+    subtotal = sum(prices) + count // 2",
        "+    subtotal += count // 3",
        "+    subtotal -= count * 3",
        "+    cheapest = max(prices) if prices and count else fallback",
        "+    cheapest = min(prices) if prices or count else fallback",
    ]


def test_change_operator_leaves_no_op_changes_alone():
    source = "def f(x, flag):\n    return x + 0, x - 0, flag and flag\n"
    assert find_mutations(source, operators=["change_operator"]) == []


# --- drop_statement ---------------------------------------------------------------------------

DRAIN = """\
def drain(queue, log):
    \"\"\"Empty the queue.\"\"\"
    items = []
    while queue:
        item = queue.pop()  # newest first
        if item is None:
            continue
        items.append(item)
    log.info("drained"); log.flush()
    return items
"""


def test_drop_statement_removes_whole_lines_with_their_comment():
    assert mutants(DRAIN, "drop_statement")[1] == DRAIN.replace(
        "        item = queue.pop()  # newest first\n", ""
    )


def test_drop_statement_spares_docstrings_returns_only_statements_and_shared_lines():
    dropped = [m.description for m in find_mutations(DRAIN, operators=["drop_statement"])]
    assert dropped == [
        "removed `items = []`",
        "removed `item = queue.pop()`",
        "removed `items.append(item)`",
    ]


# --- drop_early_return ------------------------------------------------------------------------

PARSE_PORT = """\
def parse_port(text):
    if not text:
        return None
    if not text.isdigit():
        warn(text)
        raise ValueError(text)
    for part in text.split(","):
        if part == "0":
            return 0
    if len(text) > 5:
        return -1
    else:
        return int(text)
"""


def test_drop_early_return_replaces_a_lone_return_by_pass():
    assert changed_lines(PARSE_PORT, mutants(PARSE_PORT, "drop_early_return")[0]) == [
        "-        return None",
        "+        pass",
    ]


def test_drop_early_return_removes_a_raise_among_other_statements():
    assert mutants(PARSE_PORT, "drop_early_return")[1] == PARSE_PORT.replace(
        "        raise ValueError(text)\n", ""
    )


def test_drop_early_return_only_where_the_function_goes_on():
    lines = [m.lineno for m in find_mutations(PARSE_PORT, operators=["drop_early_return"])]
    assert lines == [3, 6, 9]  # the returns of the final if/else are not early


# --- change_constant --------------------------------------------------------------------------

RETRY = """\
def retry(action, attempts=3, delay=0.5, verbose=False):
    count = 0
    while count < attempts:
        if action(timeout=-1, items=ITEMS[1:]):
            return True
        count += 1
"""


def test_change_constant_changes_ints_floats_bools_and_defaults():
    assert [m.description for m in find_mutations(RETRY, operators=["change_constant"])] == [
        "`3` -> `4`",
        "`0.5` -> `1.5`",
        "`False` -> `True`",
        "`0` -> `1`",
        "`-1` -> `0`",
        "`True` -> `False`",
        "`1` -> `0`",
    ]
    assert changed_lines(RETRY, mutants(RETRY, "change_constant")[0]) == [
        "-def retry(action, attempts=3, delay=0.5, verbose=False):",
        "+def retry(action, attempts=4, delay=0.5, verbose=False):",
    ]


def test_change_constant_leaves_bounds_to_off_by_one():
    source = "def first(items):\n    return items[0], items[1:], range(5)\n"
    assert find_mutations(source, operators=["change_constant"]) == []


# --- wrong_variable ---------------------------------------------------------------------------

MOVE = """\
class Point:
    def move(self, dx, dy):
        x = self.x + dx
        y = self.y + dy
        return x, y
"""


def test_wrong_variable_uses_the_variable_bound_most_recently_before_the_line():
    mutations = find_mutations(MOVE, operators=["wrong_variable"])
    assert [(m.function, m.lineno, m.description) for m in mutations] == [
        ("Point.move", 3, "`dx` -> `dy`"),
        ("Point.move", 4, "`dy` -> `x`"),
        ("Point.move", 5, "`x` -> `y`"),
        ("Point.move", 5, "`y` -> `x`"),
    ]
    assert apply(MOVE, mutations[1:2]) == MOVE.replace("self.y + dy", "self.y + x")


def test_wrong_variable_never_uses_self_callables_globals_builtins_or_later_bindings():
    source = "def score(self, items, key):\n    total = len(items)\n    return key(total) + LIMIT\n"
    assert [m.description for m in find_mutations(source, operators=["wrong_variable"])] == [
        "`total` -> `items`"
    ]


def test_wrong_variable_leaves_names_of_comprehensions_and_except_clauses_alone():
    source = """\
def f(values, limit):
    try:
        kept = [v for v in values if v < limit]
    except TypeError as error:
        return error
    return kept
"""
    assert [m.description for m in find_mutations(source, operators=["wrong_variable"])] == [
        "`values` -> `limit`",
        "`limit` -> `values`",
        "`kept` -> `limit`",
    ]


# --- remove_handler ---------------------------------------------------------------------------

LOAD = """\
def load(path):
    try:
        with open(path) as f:  # may not exist
            return f.read()
    except FileNotFoundError:
        return ""
"""


def test_remove_handler_unwraps_a_single_handler_into_the_dedented_body():
    [mutant] = mutants(LOAD, "remove_handler")
    assert (
        mutant
        == "def load(path):\n    with open(path) as f:  # may not exist\n        return f.read()\n"
    )


def test_remove_handler_keeps_the_inside_of_multiline_strings():
    source = '''\
def usage():
    try:
        text = """a
        b"""
    except NameError:
        text = ""
    return text
'''
    [mutant] = mutants(source, "remove_handler")
    assert mutant == 'def usage():\n    text = """a\n        b"""\n    return text\n'


def test_remove_handler_removes_one_handler_of_several_but_never_a_bare_reraise():
    source = """\
def read(path):
    try:
        return open(path).read()
    except FileNotFoundError:
        return ""
    except PermissionError:
        raise
    except OSError as error:
        return str(error)
"""
    mutations = find_mutations(source, operators=["remove_handler"])
    assert [m.description for m in mutations] == [
        "removed the `except FileNotFoundError` handler",
        "removed the `except OSError` handler",
    ]
    assert apply(source, mutations[:1]) == source.replace(
        '    except FileNotFoundError:\n        return ""\n', ""
    )


def test_remove_handler_keeps_try_finally_valid_and_skips_try_else():
    with_finally = """\
def f(x):
    try:
        x.run()
    except OSError:
        pass
    finally:
        x.close()
"""
    with_else = with_finally.replace("finally:", "else:")
    assert mutants(with_finally, "remove_handler") == [
        with_finally.replace("    except OSError:\n        pass\n", "")
    ]
    assert mutants(with_else, "remove_handler") == []


# --- what is mutated --------------------------------------------------------------------------


def test_module_code_class_bodies_decorators_annotations_docstrings_and_fstrings_are_left_alone():
    source = """\
LIMIT = 1 + 2
class Config:
    size: int = 3 - 1

    @cache(4 - 1)
    def area(self, w: int = 2) -> list[int]:
        "Area 1."
        return f"{w - 1}"
"""
    assert [m.description for m in find_mutations(source)] == ["`2` -> `3`"]


def test_nested_functions_and_lambdas_count_as_their_enclosing_function():
    source = """\
class A:
    def outer(self, n):
        def inner(k):
            return k - 1
        return lambda: inner(n) + 1
"""
    assert {m.function for m in find_mutations(source)} == {"A.outer"}


def test_positions_are_characters_after_non_ascii_text():
    source = (
        'def greet(name):\n    note = "héllo, ñ"; rest = name[1:]\n    return note + "→" - rest\n'
    )
    assert [changed_lines(source, mutant)[1] for mutant in mutants(source, "off_by_one")] == [
        '+    note = "héllo, ñ"; rest = name[2:]',
        '+    note = "héllo, ñ"; rest = name[0:]',
    ]
    assert [changed_lines(source, mutant)[1] for mutant in mutants(source, "swap_operands")] == [
        '+    return rest - (note + "→")'
    ]


def test_unknown_operators_are_refused():
    with pytest.raises(ValueError, match="unknown operators \\['off_by_two'\\]"):
        find_mutations("def f(): pass\n", operators=["off_by_two"])


def test_every_operator_is_documented_in_the_module_docstring():
    assert all(f"\n``{operator}``" in mutate.__doc__ for operator in OPERATORS)
    assert sorted(mutate.__all__) == [
        "Edit",
        "Mutation",
        "OPERATORS",
        "apply",
        "combine",
        "find_mutations",
    ]


# --- real modules -----------------------------------------------------------------------------

REAL_MODULES = [bisect, heapq, textwrap, fractions, statistics, difflib]


@pytest.fixture(scope="module", params=REAL_MODULES, ids=lambda module: module.__name__)
def real_module(request):
    source = inspect.getsource(request.param)
    return source, find_mutations(source)


def test_every_operator_finds_mutations_in_real_modules():
    found = {
        m.operator for module in REAL_MODULES for m in find_mutations(inspect.getsource(module))
    }
    assert found == set(OPERATORS)


def outermost_functions(node):
    """The functions and methods of a module that no other function encloses."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
        else:
            yield from outermost_functions(child)


def parsed_function(lines, function, added_lines=0):
    """The AST of ``function``'s lines (and those a mutation added), parsed on their own."""
    text = "".join(lines[function.lineno - 1 : function.end_lineno + added_lines])
    return ast.dump(ast.parse("if True:\n" + text if text[0].isspace() else text))


def test_every_mutant_of_a_real_module_parses_differs_and_changes_only_its_lines(real_module):
    source, mutations = real_module
    original = source.splitlines(keepends=True)
    functions = list(outermost_functions(ast.parse(source)))
    original_functions = {}
    for mutation in mutations:
        mutated = apply(source, [mutation]).splitlines(keepends=True)
        after = len(original) - mutation.end_lineno
        assert mutated[: mutation.lineno - 1] == original[: mutation.lineno - 1]
        assert last(mutated, after) == last(original, after)
        # Parsing the function around the mutation, not the whole module, keeps this fast.
        function = next(f for f in functions if f.lineno <= mutation.lineno <= f.end_lineno)
        if function not in original_functions:
            original_functions[function] = parsed_function(original, function)
        mutant = parsed_function(mutated, function, len(mutated) - len(original))
        assert mutant != original_functions[function], mutation


def test_mutations_of_a_real_module_are_distinct_and_ordered_by_position(real_module):
    _, mutations = real_module
    assert len({m.edits for m in mutations}) == len(mutations)
    order = [(m.edits[0].start, OPERATORS.index(m.operator)) for m in mutations]
    assert order == sorted(order)


def test_the_same_source_gives_the_same_mutations_in_any_process():
    script = (
        "import difflib, inspect, hashlib\n"
        "from agentgym.envs.swe.mutate import find_mutations\n"
        "print(hashlib.sha256(repr(find_mutations(inspect.getsource(difflib))).encode()).hexdigest())\n"
    )
    digests = outputs_under_two_hash_seeds(script)
    assert len(digests) == 1


# --- combine and apply ------------------------------------------------------------------------


def test_combine_picks_mutations_of_different_functions_that_apply_together(real_module):
    source, mutations = real_module
    for seed in range(20):
        chosen = combine(mutations, 3, random.Random(seed))
        assert len({m.function for m in chosen}) == 3
        ast.parse(apply(source, chosen))


def test_combine_is_deterministic_for_a_seed():
    mutations = find_mutations(inspect.getsource(difflib))
    assert combine(mutations, 3, random.Random(7)) == combine(mutations, 3, random.Random(7))
    assert combine(mutations, 3, random.Random(7)) != combine(mutations, 3, random.Random(8))


def test_combine_takes_one_function_twice_when_it_must_but_never_the_same_lines():
    mutations = find_mutations(MOVE)
    for seed in range(20):
        first, second = combine(mutations, 2, random.Random(seed))
        assert first.end_lineno < second.lineno


def test_combine_gives_none_when_impossible():
    one_line = find_mutations("def f(a, b):\n    return a - b\n")
    assert combine(one_line, 2, random.Random(0)) is None
    assert combine(find_mutations(MOVE), 3, random.Random(0)) is not None
    assert combine(find_mutations(MOVE), 4, random.Random(0)) is None


def test_apply_refuses_overlapping_edits_and_names_both_mutations():
    source = "def f(a, b):\n    if a < b:\n        return a\n    return b\n"
    flip, shift = find_mutations(source, operators=["invert_condition", "off_by_one"])
    message = "invert_condition in f \\(line 2\\) and off_by_one in f \\(line 2\\) have overlapping"
    with pytest.raises(ValueError, match=message):
        apply(source, [flip, shift])


def test_apply_refuses_a_combination_that_does_not_parse():
    source = "def f(a):\n    a.open()\n    a.close()\n"
    both = find_mutations(source, operators=["drop_statement"])
    assert len(both) == 2
    with pytest.raises(ValueError, match="do not combine into valid Python"):
        apply(source, both)


def test_apply_with_no_mutations_is_the_source():
    assert apply(CLAMP, []) == CLAMP
