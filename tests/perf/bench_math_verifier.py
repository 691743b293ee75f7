"""Benchmark: the math verifier against math-verify, on math-verify's own test cases, and the
cost of running math-verify in a worker process under a deadline.

Agreement: for each of the 270 cases in ``tests/verifiers/data/math_verify_cases.json`` (from
huggingface/Math-Verify's tests, see the README there), whether a verdict equals the case's
expected result, for

* math-verify called directly, ``verify(parse(gold), parse(pred))`` with its defaults;
* math-verify as its tests call it, with each case's options (a check of the data: 270/270);
* ours, ``verify_math(pred, gold)``.

Overhead: the same non-numeric comparison (``x + 1`` against ``1 + x``) run in this process by
math-verify and through :func:`~agentgym.verifiers.math.math_equal` (a round trip to the warm
worker), alternating, medians over ``--calls`` calls.

    python tests/perf/bench_math_verifier.py [--calls N]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from pathlib import Path

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from agentgym.errors import VerifierError
from agentgym.verifiers.math import math_equal, verify_math

CASES = Path(__file__).parents[1] / "verifiers" / "data" / "math_verify_cases.json"


def direct(case: dict) -> bool:
    return bool(verify(parse(case["gold"]), parse(case["pred"])))


def as_tested(case: dict) -> bool:
    if case["match_types"] == ["default"]:
        return direct(case)
    targets = [
        LatexExtractionConfig(boxed_match_priority=0) if kind == "latex" else ExprExtractionConfig()
        for kind in case["match_types"]
    ]
    return bool(
        verify(
            parse(case["gold"], targets),
            parse(case["pred"], targets),
            float_rounding=case["precision"],
            strict=case["strict"],
            allow_set_relation_comp=case["allow_set_relation_comp"],
        )
    )


def ours(case: dict) -> bool | None:
    try:
        return verify_math(case["pred"], case["gold"]).passed
    except VerifierError:
        return None  # cannot judge: counted as a disagreement


def agreement() -> None:
    cases = json.loads(CASES.read_text())["cases"]
    print(f"| verifier | agrees with expected (of {len(cases)}) |\n|---|---|")
    for name, judge in [
        ("math-verify `parse`+`verify`, defaults", direct),
        ("math-verify with each test's own options", as_tested),
        ("agentgym `verify_math`", ours),
    ]:
        right = sum(judge(case) == bool(case["expected"]) for case in cases)
        print(f"| {name} | {right} ({right / len(cases):.1%}) |")


def overhead(calls: int) -> None:
    gold, answer = "1 + x", "x + 1"
    math_equal(answer, gold)  # start the worker
    local, worker = [], []
    for _ in range(calls):
        started = time.perf_counter()
        verify(parse(f"${gold}$"), parse(f"${answer}$"))
        local.append(time.perf_counter() - started)
        started = time.perf_counter()
        math_equal(answer, gold)
        worker.append(time.perf_counter() - started)
    in_process, through = statistics.median(local), statistics.median(worker)
    print(
        f"\nper call (median of {calls}): math-verify in process {in_process * 1e3:.2f} ms, "
        f"through the worker {through * 1e3:.2f} ms, overhead {(through - in_process) * 1e3:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    agreement()
    overhead(args.calls)


if __name__ == "__main__":
    main()
