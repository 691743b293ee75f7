"""The math verifier on math-verify's own test cases (tests/verifiers/data/README.md).

Every case where ``verify_math`` disagrees with the expected result is listed here with its
reason; any other disagreement fails. ``tests/perf/bench_math_verifier.py`` prints the table in
docs/verifiers.md (ours against math-verify called directly).

``BEYOND_MATH_VERIFY`` holds cases of our own where we decide differently from math-verify on
purpose, each with its reason, and checks that math-verify still decides them the other way
(else the entry is no departure); ``PERCENTAGES`` holds the percent rule, which is
math-verify's own.
"""

import json
from pathlib import Path

import pytest

from agentgym.verifiers.math import verify_math

CASES = json.loads((Path(__file__).parent / "data" / "math_verify_cases.json").read_text())

NEEDS_AN_OPTION = "expected only with a non-default option of math-verify (precision, strict)"
KNOWN_DISAGREEMENTS = {
    7: NEEDS_AN_OPTION,
    13: NEEDS_AN_OPTION,
    148: NEEDS_AN_OPTION,
    181: NEEDS_AN_OPTION,
    255: NEEDS_AN_OPTION,
    # math-verify's tests pin that it does not read a formula split over lines; we do.
    21: "multi-line $ 9 $ read",
    22: "multi-line \\( 9 \\) read",
    # Two numbers and no marked answer: no clear final answer, so no guess (math-verify takes
    # the last number).
    133: "no clear final answer",
    134: "no clear final answer",
    135: "no clear final answer",
    136: "no clear final answer",
    # math-verify reads both "W(x)=1orW(x)=-1" and the unclosed gold as their last operand, -1.
    219: "a statement is not judged by its last operand",
}


def test_disagreements_with_math_verify_cases_are_only_the_known_ones():
    cases = CASES["cases"]
    disagreements = {
        index
        for index, case in enumerate(cases)
        if verify_math(case["pred"], case["gold"]).passed != bool(case["expected"])
    }
    assert disagreements == set(KNOWN_DISAGREEMENTS)
    assert len(cases) - len(disagreements) == 258


SCIENTIFIC = "scientific notation is a number (math-verify reads the e of 3.2e4 as Euler's e)"
BEYOND_MATH_VERIFY = [
    # (prediction, gold, expected, reason)
    ("$3.2 \\times 10^{4}$", "$3.2e4$", True, SCIENTIFIC),
    ("$3.2\\cdot10^4$", "$3.2e4$", True, SCIENTIFIC),
    ("$3.2e4$", "$3.2 \\times 10^{4}$", True, SCIENTIFIC),
    ("$3.2e4$", "$32000$", True, SCIENTIFIC),
    ("$1.5e-3$", "$\\frac{3}{2000}$", True, SCIENTIFIC),
    ("$\\frac{64000}{2}$", "$3.2e4$", True, SCIENTIFIC),
]


def math_verify_alone(pred: str, gold: str) -> bool:
    from math_verify import parse, verify

    return bool(verify(parse(gold), parse(pred)))


@pytest.mark.parametrize(("pred", "gold", "expected", "reason"), BEYOND_MATH_VERIFY)
def test_cases_beyond_math_verify_are_decided_as_their_reason_says(pred, gold, expected, reason):
    assert verify_math(pred, gold).passed is expected
    assert math_verify_alone(pred, gold) is not expected, f"math-verify agrees now: {reason}"


# Percentages are no departure: math-verify reads 25\% as both 25 and 0.25, and so do we
# (before issue 27 ours dropped the % and took 25\% for 25 alone).
PERCENTAGES = [
    ("$25\\%$", "$0.25$", True),
    ("$25\\%$", "$25$", True),
    ("$0.25$", "$25\\%$", True),
    ("$25$", "$25\\%$", True),
    ("$12.5\\%$", "$\\frac{1}{8}$", True),
    ("$25\\%$", "$2.5$", False),
    ("$25\\%$", "$0.025$", False),
    ("$0.25$", "$2.5\\%$", False),
]


@pytest.mark.parametrize(("pred", "gold", "expected"), PERCENTAGES)
def test_percentages_are_decided_as_math_verify_decides_them(pred, gold, expected):
    assert verify_math(pred, gold).passed is expected
    assert math_verify_alone(pred, gold) is expected
