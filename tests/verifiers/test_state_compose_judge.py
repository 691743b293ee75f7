"""State checks, composition, and the LLM judge (its models here are scripted test doubles:
these tests measure the judge's prompting, parsing and agreement statistics, not a model)."""

import pytest

from agentgym.agents import Agent, AgentReply, judge_model
from agentgym.core import Verdict
from agentgym.errors import ModelError, UsageError, VerifierError
from agentgym.verifiers import (
    Judge,
    JudgeCall,
    LabelledExample,
    StateCheck,
    cohens_kappa,
    gate,
    judge_agreement,
    product,
    verify_state,
    weighted_sum,
    with_process,
)

ORDER = {"orders": [{"id": 7, "paid": True, "items": ["mug"]}], "cart": []}


def test_state_checks_score_weighted_and_name_what_failed():
    checks = [
        StateCheck("paid", lambda s: s["orders"][0]["paid"], weight=2),
        StateCheck("cart_empty", lambda s: not s["cart"]),
        StateCheck("two_items", lambda s: len(s["orders"][0]["items"]) == 2, description="2 items"),
    ]
    verdict = verify_state(ORDER, checks)
    assert verdict.score == pytest.approx(3 / 4) and not verdict.passed
    assert verdict.components == {"paid": 1.0, "cart_empty": 1.0, "two_items": 0.0}
    assert "2 items" in verdict.details


def test_a_check_that_cannot_be_evaluated_is_a_verifier_error_not_a_fail():
    with pytest.raises(VerifierError, match=r"'refund'.*KeyError"):
        verify_state(ORDER, [StateCheck("refund", lambda s: s["refunds"][0])])
    with pytest.raises(UsageError):
        verify_state(ORDER, [StateCheck("a", bool), StateCheck("a", bool)])


HALF = Verdict(0.5, False, {"f1": 0.5}, "half")
FULL = Verdict(10.0, True, {}, "all", max_score=10.0)
NONE = Verdict(0.0, False, {}, "bad format")


def test_weighted_sum_scales_parts_and_keeps_their_components():
    verdict = weighted_sum({"answer": (HALF, 3.0), "style": (FULL, 1.0)})
    assert verdict.score == pytest.approx((0.5 * 3 + 1.0) / 4)
    assert not verdict.passed
    assert verdict.components["answer.f1"] == 0.5 and verdict.components["style"] == 1.0


def test_gate_zeroes_the_score_when_the_condition_fails():
    assert gate(NONE, FULL, name="format").score == 0.0
    assert "format failed" in gate(NONE, FULL, name="format").details
    assert gate(FULL, HALF).score == 0.5


def test_product_and_process_rewards():
    assert product({"a": HALF, "b": FULL}).score == 0.5
    assert product({"a": HALF, "b": NONE}).score == 0.0
    outcome_only = with_process(FULL, [1.0, 0.0, 0.5])
    assert outcome_only.score == 1.0 and outcome_only.components["process.mean"] == 0.5
    assert outcome_only.components["process.step_1"] == 0.0
    mixed = with_process(FULL, [1.0, 0.0, 0.5], process_weight=0.5)
    assert mixed.score == pytest.approx(0.75)
    with pytest.raises(UsageError):
        with_process(FULL, [2.0])


def scripted(reply):
    """A judge model double: the text for a call's prompt."""
    return lambda call: reply(call.prompt) if callable(reply) else reply


def test_the_judge_reads_the_last_score_on_its_scale():
    seen = []

    def grader(prompt):
        seen.append(prompt)
        return "Score: 2 at first, but on reflection\nScore: 9"

    judge = Judge(scripted(grader), "Correct and concise.", scale=(1, 10), pass_score=8)
    verdict = judge.judge("What is 2+2?", "4", reference="4")
    assert verdict.passed and verdict.score == pytest.approx(8 / 9)
    assert verdict.components == {"grade": 9.0}
    assert "Reference answer:\n4" in seen[0] and "Response to grade:\n4" in seen[0]


def test_an_agent_judges_through_judge_model():
    """An agent spec or object becomes a judge's model one level up, in the agents: the
    agent sees the rubric as its instructions, the judge's sampling, and the prompt."""
    contexts, prompts = [], []

    class Grader(Agent):
        name = "grader"

        def reset(self, context):
            contexts.append(context)

        def act_sync(self, observation, info):
            prompts.append(observation)
            return AgentReply("ignored", text="Fine.\nScore: 7")

    judge = Judge(judge_model(Grader), "Concise.", sampling={"temperature": 0.0})
    verdict = judge.judge("q", "r")
    assert verdict.components == {"grade": 7.0} and "judge grader:" in verdict.details
    assert "Concise." in contexts[0].instructions and contexts[0].sampling == {"temperature": 0.0}
    assert prompts == [judge.prompt("q", "r")]
    plain = Judge(judge_model(lambda observation, info: "Score: 10"), "Right.")
    assert plain.judge("q", "r").passed and plain.name == "<lambda>"


async def an_async_model(call: JudgeCall) -> str:
    return f"Score: {call.seed}"


def test_an_async_model_and_the_seed_it_gets():
    assert Judge(an_async_model, "Right.", scale=(0, 10)).judge("q", "r").score == 0.0
    assert Judge(an_async_model, "Right.").name == "an_async_model"


@pytest.mark.parametrize("reply", ["It is good.", "Score: 11", "Score: -1", ""])
def test_a_judgement_that_cannot_be_read_raises_not_zero(reply):
    judge = Judge(scripted(reply), "Correct.", scale=(0, 10))
    with pytest.raises(VerifierError, match="no score"):
        judge.judge("q", "r")


def down(*args):
    raise ModelError("http://127.0.0.1:9/v1 failed 6 time(s)")


@pytest.mark.parametrize("model", [down, judge_model(down)], ids=["model", "agent"])
def test_a_failing_judge_model_is_a_verifier_error(model):
    with pytest.raises(VerifierError, match=r"judge.*failed"):
        Judge(model, "Correct.").judge("q", "r")


def test_an_agent_spec_given_as_the_model_names_judge_model():
    with pytest.raises(UsageError, match=r"judge_model\('smollm2'\)"):
        Judge("smollm2", "Correct.")


def test_cohens_kappa():
    assert cohens_kappa([1, 1, 0, 0], [1, 1, 0, 0]) == 1.0
    assert cohens_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == -1.0
    # By hand: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no; p_o = 0.7, p_e = 0.5 -> 0.4
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohens_kappa(a, b) == pytest.approx(0.4)
    assert cohens_kappa(["x", "x"], ["x", "x"]) == 1.0
    with pytest.raises(UsageError):
        cohens_kappa([1], [1, 0])


def test_agreement_of_a_judge_with_labels():
    # The double passes responses that contain "4": right on three of four labels.
    judge = Judge(scripted(lambda o: "Score: 10" if "grade:\n4" in o else "Score: 1"), "Right.")
    examples = [
        LabelledExample("2+2?", "4", True),
        LabelledExample("2+2?", "5", False),
        LabelledExample("2+2?", "four", True),
        LabelledExample("3+1?", "4", True),
    ]
    agreement = judge_agreement(judge, examples)
    assert agreement.n == 4 and agreement.accuracy == 0.75
    assert agreement.confusion["judge_fail/human_pass"] == 1
    assert agreement.kappa == pytest.approx(cohens_kappa([1, 0, 0, 1], [1, 0, 1, 1]))
