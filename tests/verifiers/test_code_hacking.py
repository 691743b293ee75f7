"""Reward hacking the code verifier through its host side: whatever a program's values do to
the comparison, the message or the judge, the program loses that test and the verification
never errors (an errored episode is left out of the success rate, so an agent that could
error its failures would raise its score: a weak agent went from 0.417 to 1.000 that way).

Each program here runs for real in a sandbox; each test failed before its fix.
"""

import pytest

from agentgym.verifiers.code import CodeTests, run_code_tests, same_value, verify_code

HUGE = "10**5000"  # an int str() and repr() refuse (over 4,300 digits)
FLOAT_TESTS = CodeTests(cases=[("f(1)", 1.5), ("f(2)", 2.5)], entry_point="f")
INT_TESTS = CodeTests(cases=[("f(1)", 1), ("f(2)", 2)], entry_point="f")


def returning(expression: str) -> str:
    return f"def f(x):\n    return {expression}\n"


@pytest.mark.parametrize(
    ("value", "tests"),
    [
        (HUGE, INT_TESTS),  # repr() of the value raised ValueError
        (HUGE, FLOAT_TESTS),  # math.isclose(10**5000, 1.5) raised OverflowError
        ("10**400", FLOAT_TESTS),  # past any float, under the digit limit
        (f"[[[[{HUGE}]]]]", INT_TESTS),  # the huge int deep inside the value
        (f"{{{HUGE}: 1}}", INT_TESTS),  # as a dict key
        (f"({HUGE}, -{HUGE})", FLOAT_TESTS),
        (f"{{{HUGE}}}", INT_TESTS),  # in a set
        (f"complex({HUGE} % 7, 1)", FLOAT_TESTS),
        ("float('nan')", FLOAT_TESTS),
        ("float('inf')", FLOAT_TESTS),
        ("-float('inf')", INT_TESTS),
    ],
)
def test_values_the_host_cannot_compare_or_show_fail_the_test(value, tests):
    verdict = verify_code(returning(value), tests)
    assert verdict.score == 0.0 and not verdict.passed
    assert verdict.details.startswith("0 of 2 hidden tests passed")


def test_a_huge_int_is_shown_by_its_size():
    verdict = verify_code(returning(HUGE), FLOAT_TESTS)
    assert "f(1) returned <an int of about 5001 digits>, expected 1.5" in verdict.details


def test_ints_beyond_a_float_agree_with_no_float():
    assert not same_value(10**5000, 1.5)
    assert not same_value(1.5, 10**400)
    assert not same_value(10**400, float("inf"))
    assert same_value(10**5000, 10**5000)  # ints are compared exactly


def test_values_nested_as_deep_as_the_judge_allows_fail_the_test():
    program = (
        "def f(x):\n"
        "    v = 1\n"
        "    for i in range(199):\n"
        "        v = {'k': v} if i % 2 else (v,)\n"
        "    return v\n"
    )
    verdict = verify_code(program, INT_TESTS)
    assert verdict.score == 0.0 and "returned" in verdict.details


def test_a_huge_int_in_an_assertion_message_fails_the_test_it_does_not_crash_the_judge():
    """``assert f(x) == y, f(x)``: the judge's str() of the AssertionError raised ValueError,
    the judge crashed, and the verifier raised VerifierError (the episode errored)."""
    tests = CodeTests(
        asserts=["assert f(1) == 1, f(1)", "raise KeyError(f(2))", "assert f(3) == 3"],
        entry_point="f",
    )
    report = run_code_tests(returning(HUGE), tests)
    assert [outcome.passed for outcome in report.outcomes] == [False, False, False]
    assert report.outcomes[0].problem.startswith("failed (AssertionError")


@pytest.mark.parametrize(
    "body",
    [
        "raise ValueError('bad \\ud800 and \\x00')",  # a lone surrogate and a NUL, escaped
        "raise ValueError(chr(0xDFFF) * 10)",
        "import sys\n    sys.stderr.write('\\ud800')\n    raise SystemExit(3)",
    ],
)
def test_what_the_program_raises_or_writes_reaches_the_agent_as_clean_text(body):
    """A message quoting the program went into the observation and the ledger as is: a lone
    surrogate there made the agent's next request and the ledger's write raise."""
    verdict = verify_code(f"def f(x):\n    {body}\n", INT_TESTS)
    assert verdict.score == 0.0
    verdict.details.encode("utf-8")  # no lone surrogate, no NUL left
    assert "\x00" not in verdict.details


def test_a_returned_string_with_a_lone_surrogate_is_shown_escaped():
    verdict = verify_code(returning("'\\ud800'"), INT_TESTS)
    assert "returned '\\ud800', expected 1" in verdict.details
    verdict.details.encode("utf-8")


def test_io_output_that_is_not_text_is_compared_as_text():
    tests = CodeTests(io_cases=[("", "ok\n")])
    program = "import sys\nsys.stdout.buffer.write(b'ok\\xff\\xfe\\x00\\n')\n"
    verdict = verify_code(program, tests)
    assert verdict.score == 0.0
    verdict.details.encode("utf-8")
