"""Text and math verifiers, with the near misses that must fail."""

import threading

import pytest

from agentgym.errors import UsageError, VerifierError
from agentgym.verifiers import (
    exact_match,
    extract_answer,
    f1_score,
    length_within,
    math_equal,
    multiple_choice,
    normalize_answer,
    regex_match,
    token_f1,
    verify_math,
)


def test_squad_normalisation_and_exact_match():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert exact_match("the eiffel tower.", ["Eiffel Tower", "Tour Eiffel"]).passed
    assert not exact_match("Eiffel", "Eiffel Tower").passed
    assert exact_match("An apple", "apple").score == 1.0
    with pytest.raises(UsageError):
        exact_match("x", [])


def test_f1_gives_partial_credit_and_passes_only_exact_answers():
    assert f1_score("Eiffel", "Eiffel Tower") == pytest.approx(2 / 3)
    assert f1_score("", "") == 1.0 and f1_score("x", "") == 0.0
    verdict = token_f1("tower eiffel", "the Eiffel Tower")
    assert verdict.score == 1.0 and not verdict.passed  # same tokens, not the same answer
    assert token_f1("Paris", ["London", "paris"]).passed


@pytest.mark.parametrize(
    ("reply", "right"),
    [
        ("The answer is (B).", True),
        ("B", True),
        ("(b)", True),
        ("I considered (A) but the answer is B", True),
        ("answer: C", False),
        ("Blue", True),  # the option's text
        ("I do not know", False),
    ],
)
def test_multiple_choice_reads_the_letter_or_the_option(reply, right):
    verdict = multiple_choice(reply, "B", ["Red", "Blue", "Green"])
    assert verdict.passed is right


def test_format_and_length():
    assert regex_match("Answer: 42", r"Answer: \d+").passed
    assert not regex_match("Answer: 42 and more", r"Answer: \d+", full=True).passed
    assert length_within("one two three", max_words=3).passed
    assert not length_within("one two three", max_words=2, min_chars=100).passed
    with pytest.raises(UsageError):
        length_within("x")


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("so it is \\boxed{\\frac{1}{2}} in the end", "\\frac{1}{2}"),
        ("\\boxed{\\text{a}\\{b\\}}", "\\text{a}\\{b\\}"),
        ("work...\n#### 1,000", "1,000"),
        ("The final answer is 17.", "17"),
        ("no numbers here", None),
        # No clear final answer is no answer: never the last number of the prose.
        ("3 apples then 7 pears", None),
        ("so it is \\frac{1}{3}", None),
        ("\\boxed{12", None),  # cut by the token limit inside its box
        ("x = \\boxed{2}.\nSo \\boxed{12", None),
        # The whole reply is the answer.
        ("$\\frac13 $", "$\\frac13 $"),
        ("1 000", "1 000"),
        ("12 dollars", "12 dollars"),
        # The closing formula, or the one number of the closing sentence.
        ("Solving, we get that the pair is $(7, 6)$.", "(7, 6)"),
        ("Thus $x = 2$ and so $y$ is $5$.", "5"),
        ("The total is 12. I hope it is correct.", "12"),
        ("It is 12 then 13 apples.", None),
        # Boxed answers in one sentence are one answer; a later marked answer wins.
        ("\\[ \\boxed{-2} \\quad \\text{and} \\quad \\boxed{1}. \\]", "-2, 1"),
        ("First \\boxed{3}.\nThen \\boxed{4}", "4"),
        ("$= \\boxed{255}$. Final Answer: The final answer is $10,455$.", "10,455"),
        ("Final Answer: The largest $n$ is 34.", "34"),
        ("The answer is \\boxed{5}.<|im_end|><|im_start|>user The answer is 6", "5"),
    ],
)
def test_extraction(reply, answer):
    assert extract_answer(reply) == answer


EQUAL = [
    ("1/2", "0.5"),
    ("\\frac{1}{2}", "0.5"),
    ("0.5", "\\frac12"),
    ("1,000", "1000"),
    ("12 dollars", "12"),
    ("x^2+2x+1", "(x+1)^2"),
    ("\\sqrt{2}/2", "\\frac{1}{\\sqrt{2}}"),
    ("[1, 2)", "[1,2)"),
    ("-3", "-3.0"),
    ("3.2E4", "32000"),
    ("-2.5 \\times 10^{-3}", "-0.0025"),
]
NEAR_MISSES = [
    ("0.51", "1/2"),
    ("1/3", "0.33"),
    ("(1,2]", "[1,2)"),
    ("2x", "2"),
    ("-3", "3"),
    ("x^2+2x", "(x+1)^2"),
    ("3.2 \\times 10^{3}", "3.2E4"),
    ("3.2e4", "3.2 \\cdot 10^{5}"),
]


# A percentage is its number and its value, as math-verify reads it: 25% is 25 and 0.25.
PERCENTAGES = [
    ("\\boxed{25\\%}", "0.25", True),
    ("\\boxed{25\\%}", "25", True),
    ("\\boxed{25 percent}", "1/4", True),
    ("\\boxed{0.25}", "25\\%", True),
    ("\\boxed{12.5\\%}", "\\frac{1}{8}", True),
    ("\\boxed{25\\%}", "0.025", False),
    ("\\boxed{25\\%}", "2.5", False),
    ("\\boxed{0.25}", "2.5\\%", False),
]


@pytest.mark.parametrize(("reply", "gold", "equal"), PERCENTAGES)
def test_a_percentage_is_its_number_and_its_value(reply, gold, equal):
    assert verify_math(reply, gold).passed is equal


@pytest.mark.parametrize(("prediction", "gold"), EQUAL)
def test_equivalent_forms_are_accepted(prediction, gold):
    assert math_equal(prediction, gold)


@pytest.mark.parametrize(("prediction", "gold"), NEAR_MISSES)
def test_near_misses_are_rejected(prediction, gold):
    assert not math_equal(prediction, gold)


def test_math_verifier_works_off_the_main_thread():
    """The evaluator steps envs on worker threads, where math-verify's SIGALRM cannot work."""
    results = []
    thread = threading.Thread(
        target=lambda: results.extend(
            [math_equal("x^2+2x+1", "(x+1)^2"), math_equal("0.51", "1/2")]
        )
    )
    thread.start()
    thread.join()
    assert results == [True, False]


def test_verify_math_verdicts():
    assert verify_math("Thus \\boxed{0.5}", "1/2").passed
    missing = verify_math("I am not sure", "1/2")
    assert not missing.passed and missing.components["extracted"] == 0.0
    assert not verify_math("\\boxed{" + "9" * 500 + "}", "9").passed  # too long to be an answer
    with pytest.raises(VerifierError, match="gold"):
        verify_math("\\boxed{x}", "\\frac{")
