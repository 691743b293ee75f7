"""Reward hacking the math verifier: answers that must not pass, and answers that must not hang
or crash it. Each test holds a hole closed that was open before (issue 15)."""

import sys
import threading
import time

import pytest

from agentgym.errors import MissingExtraError, VerifierError
from agentgym.verifiers import math as math_verifier
from agentgym.verifiers.math import math_equal, verify_math


@pytest.mark.parametrize(
    ("answer", "gold"),
    [("(0,9)", "9"), ("9", "(0,9)"), ("[0, 9]", "9"), ("\\{1, 9\\}", "19"), ("1,2", "12")],
)
def test_tuples_intervals_and_sets_are_not_their_digits(answer, gold):
    assert not math_equal(answer, gold)


def test_tuples_and_intervals_compare_as_structures():
    assert math_equal("(0, 9)", "(0,9)")
    assert not math_equal("(9, 0)", "(0,9)")
    assert not math_equal("[0, 9)", "(0,9)")


def test_integers_have_no_tolerance():
    assert not math_equal("1234568", "1234567")
    assert not math_equal("1234567.5", "1234567")
    assert math_equal("1234567.0", "1,234,567")
    assert math_equal("0.3333333", "1/3")  # non-integers keep the relative tolerance


@pytest.mark.parametrize(
    "reply",
    [
        "so it is \\frac{1}{3}",  # was read as "3"
        "we had 3 apples, then 7 pears",
        "It is 10, or maybe 3.",
    ],
)
def test_a_reply_without_a_clear_final_answer_is_wrong_not_guessed(reply):
    for gold in ("3", "7", "10", "1/3"):
        verdict = verify_math(reply, gold)
        assert not verdict.passed and verdict.components["extracted"] == 0.0


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("1=1", "1"),
        ("7 = 5", "5"),
        ("5 = 5", "5"),
        ("5 \\lor 6", "6"),
        ("5 \\vee 6", "5"),
        ("x = 5 \\land x = 6", "6"),
        ("3 < 5", "5"),
    ],
)
def test_a_statement_is_not_judged_by_its_last_operand(answer, gold):
    assert not verify_math(f"\\boxed{{{answer}}}", gold).passed


def test_an_assignment_is_its_value():
    assert verify_math("\\boxed{x = 5}", "5").passed
    assert verify_math("\\boxed{(x, y) = (1, 2)}", "(1, 2)").passed


@pytest.mark.parametrize(
    "reply",
    [
        "\\boxed{3} \\boxed{4}",  # every candidate boxed
        "\\boxed{3, 4}",
        "\\boxed{3 \\text{ or } 4}",
        "The answer is 3 or 4.",
    ],
)
def test_hedging_between_candidates_fails(reply):
    assert not verify_math(reply, "4").passed


@pytest.mark.parametrize(
    "answer",
    [
        "9^{9^{9}}",
        "{9^9}^{9^9}",
        "2^{-10^{10}}",
        "(10^{10})!",
        "\\binom{10^{9}}{10^{8}}",
        "(x+1)^{10^{6}}",
        "\\frac{9^{9^{9}}}{9^{9^{9}}}",
        "2^{2^{2^{2^{2}}}}",
        "\\sum_{i=1}^{10^{7}} i^{i}",
        "\\prod_{i=1}^{10^{6}} i",
    ],
)
def test_an_answer_too_large_to_evaluate_scores_zero_at_once_with_its_reason(answer):
    """Issue 27: the deadline was the only bound, so under ``agentgym eval`` the episodes
    queued behind a power tower ran past their step timeout and were recorded errored."""
    started = time.monotonic()
    verdict = verify_math(f"\\boxed{{{answer}}}", "1")
    assert time.monotonic() - started < 5  # not the deadline's 10 s: refused before SymPy
    assert verdict.score == 0.0 and "not evaluated" in verdict.details, verdict.details


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("2^{100}", "1267650600228229401496703205376"),
        ("4^{2^{15}}", "2^{2^{16}}"),  # as large as the gold is allowed, however large
        ("\\sqrt[10^{9}]{2}^{10^{9}}", "2"),
        ("1000!/999!", "1000"),
        ("\\sum_{i=1}^{100} i", "5050"),
        ("\\sum_{i=1}^{\\infty} 2^{-i}", "1"),
    ],
)
def test_large_answers_within_bounds_are_still_compared(answer, gold):
    assert math_equal(answer, gold)


def test_a_power_tower_under_eval_is_a_failed_episode_never_an_errored_one(tmp_path):
    from agentgym.eval import evaluate
    from agentgym.eval.engine import EngineLimits
    from agentgym.eval.plan import Benchmark, BenchmarkEnv

    suite = Benchmark("towers", (BenchmarkEnv("reasoning/Math-v1", difficulty="easy", tasks=4),))
    result = evaluate(
        suite,
        lambda observation, info: "\\boxed{9^{9^{9}}}",
        tmp_path / "run",
        num_envs=4,
        limits=EngineLimits(step_timeout=8.0, retries=0),
    )
    overall = result.summary["overall"]
    assert (overall["episodes"], overall["errored"], overall["success"]) == (4, 0, 0.0)


SLOW_WORKER = """\
import json, sys, time
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    if json.loads(line)["op"] == "equal":
        time.sleep(60)  # an answer that runs away past every bound
    print(json.dumps({"ok": True}), flush=True)
"""


def test_a_runaway_answer_scores_zero_at_its_deadline_without_holding_the_evaluator(
    fresh_worker, tmp_path
):
    real_script = fresh_worker.script
    fresh_worker.script = tmp_path / "worker.py"
    fresh_worker.script.write_text(SLOW_WORKER)
    verdicts = []
    worker = threading.Thread(
        target=lambda: verdicts.append(verify_math("\\boxed{x+1}", "1+y", time_limit=2))
    )
    started = time.monotonic()
    worker.start()
    ticks = 0
    while worker.is_alive() and time.monotonic() - started < 60:
        time.sleep(0.01)
        ticks += 1  # this thread runs: the GIL is free while the worker process computes
    worker.join(timeout=0)
    assert not worker.is_alive() and verdicts and verdicts[0].score == 0.0
    assert "deadline of 2 s" in verdicts[0].details, verdicts[0].details
    assert ticks > 50
    fresh_worker.script = real_script
    assert verify_math("\\boxed{(x+1)^2}", "x^2+2x+1").passed  # a fresh worker took over


@pytest.mark.parametrize(
    "reply",
    [
        "\\boxed{10^{10^{10}}}",
        "\\boxed{" + "(" * 300 + "1" + ")" * 300 + "}",
        "\\boxed{" + "{" * 150 + "1" + "}" * 150 + "}",
        "\\boxed{1e999999999}",
        "\\boxed{\\frac{1}{0}}",
        "\\boxed{0^{-1}}",
        "\\boxed{\\begin{pmatrix}}",
        "\\boxed{\\sqrt{-1}}",
        "\\boxed{nan}",
        "\\boxed{\\infty}",
        "\\boxed{\x00}",
        "$$$$$$",
        "\\boxed{" * 5000,
        "\\(" * 20000 + "1",
        ("The answer is $" + "x" * 999) * 50,
    ],
)
def test_anything_an_answer_causes_is_a_score_never_an_exception(reply):
    verdict = verify_math(reply, "1", time_limit=3)
    assert verdict.score == 0.0 and not verdict.passed


@pytest.fixture
def fresh_worker(monkeypatch):
    """A worker of the test's own, and no gold answers remembered from other tests."""
    worker = math_verifier._Worker()
    monkeypatch.setattr(math_verifier, "_WORKER", worker)
    math_verifier._check_gold.cache_clear()
    yield worker
    worker.stop()
    math_verifier._check_gold.cache_clear()


def test_a_worker_that_cannot_start_is_a_verifier_error(fresh_worker, monkeypatch):
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with pytest.raises(VerifierError, match="did not start"):
        verify_math("\\boxed{x+1}", "1+x")


def test_a_worker_without_math_verify_names_the_extra(fresh_worker, tmp_path):
    script = tmp_path / "worker.py"
    script.write_text('print(\'{"ready": false, "missing": "No module named math_verify"}\')\n')
    fresh_worker.script = script
    with pytest.raises(MissingExtraError, match="agentgym\\[reasoning\\]"):
        verify_math("\\boxed{x+1}", "1+x")


def test_an_answer_that_kills_the_worker_scores_zero_saying_so(fresh_worker, tmp_path):
    fresh_worker.script = tmp_path / "worker.py"
    fresh_worker.script.write_text(SLOW_WORKER.replace("time.sleep(60)", "sys.exit(9)"))
    verdict = verify_math("\\boxed{x+1}", "1+y")
    assert verdict.score == 0.0 and "worker process died on it" in verdict.details, verdict


def test_a_worker_that_dies_on_the_gold_is_a_verifier_error(fresh_worker, tmp_path):
    fresh_worker.script = tmp_path / "worker.py"
    fresh_worker.script.write_text(
        SLOW_WORKER.replace('if json.loads(line)["op"] == "equal"', "if True").replace(
            "time.sleep(60)", "sys.exit(9)"
        )
    )
    with pytest.raises(VerifierError, match="gold answer '1\\+y' did not parse: the worker"):
        verify_math("\\boxed{x+1}", "1+y")


def test_a_worker_that_dies_is_restarted(fresh_worker):
    assert verify_math("\\boxed{x+1}", "1+x").passed
    fresh_worker._process.kill()
    assert verify_math("\\boxed{x+1}", "1+x").passed


def test_a_gold_that_does_not_parse_is_a_verifier_error_not_a_score():
    with pytest.raises(VerifierError, match="gold"):
        verify_math("\\boxed{x}", "\\frac{")
