"""usersim/Diagnosis-v0: the knowledge base, the scripted patient, the reward and the oracle."""

from __future__ import annotations

import itertools

import pytest

import agentgym
from agentgym.envs.usersim.diagnosis import (
    FREE_QUESTIONS,
    LEVELS,
    SCORE_FLOOR,
    DiagnosisTask,
    knowledge_base,
    normalise,
    recognise,
    score_for,
    worst_case,
)

ENV_ID = "usersim/Diagnosis-v0"


@pytest.fixture
def env():
    made = agentgym.make(ENV_ID)
    yield made
    made.close()


def patient_of(env, task_id):
    return env.unwrapped.tasks.get(task_id).patient


def play(env, task_id, actions, seed=0):
    """Reset on the task, take the actions; return the last step (or the reset)."""
    observation, info = env.reset(seed=seed, options={"task_id": task_id})
    step = (observation, 0.0, False, False, info)
    for action in actions:
        step = env.step(action)
    return step


def play_oracle(env, task_id, seed=0):
    env.reset(seed=seed, options={"task_id": task_id})
    steps, total = 0, 0.0
    while True:
        action = env.unwrapped.oracle_action()
        assert action is not None, f"{task_id}: the oracle stopped without a diagnosis"
        _, reward, terminated, truncated, info = env.step(action)
        steps, total = steps + 1, total + reward
        if terminated or truncated:
            return info["verdict"], steps, total


def condition_name(condition_id):
    return knowledge_base().conditions[condition_id].name


def a_wrong_candidate(patient):
    return next(c for c in patient.candidates if c != patient.condition)


def question_about(finding):
    return knowledge_base().findings[finding].question


# --------------------------------------------------------------------------- knowledge base


def test_knowledge_base_has_the_promised_size():
    kb = knowledge_base()
    assert 20 <= len(kb.conditions) <= 30
    assert 40 <= len(kb.findings) <= 60
    assert all(len(f.keywords) >= 3 for f in kb.findings.values())


def test_each_canonical_question_is_about_its_finding_alone():
    for finding in knowledge_base().findings.values():
        assert recognise(finding.question) == [finding.id], finding.question


def test_every_pair_of_conditions_can_be_told_apart():
    conditions = list(knowledge_base().conditions.values())
    for a, b in itertools.combinations(conditions, 2):
        assert (a.always & b.never) or (b.always & a.never), (a.id, b.id)


def test_no_answer_or_complaint_names_a_condition():
    kb = knowledge_base()
    names = set(kb.names)
    for finding in kb.findings.values():
        for text in (finding.yes, finding.no, finding.complaint or ""):
            words = f" {normalise(text)} "
            assert not [n for n in names if f" {n} " in words], text


# --------------------------------------------------------------------------- the patient


@pytest.mark.parametrize(
    ("question", "findings"),
    [
        ("Are you feeling feverish?", ["fever"]),
        ("Have you been running a temperature?", ["fever"]),
        ("Have you been throwing up?", ["vomiting"]),
        ("Do you get HEADACHES often?", ["headache"]),
        ("Is there pus at the back of your throat?", ["tonsil_spots"]),
        (
            "Does it burn when you pee, and do you pee more?",
            ["burning_urination", "frequent_urination"],
        ),
        ("Any cough? Bringing up phlegm?", ["cough", "productive_cough"]),
        ("How is the weather?", []),
    ],
)
def test_the_patient_recognises_synonyms(question, findings):
    assert recognise(question) == findings


def test_answers_are_the_patients_facts_and_repeat_the_same(env):
    task_id = "test/medium/0"
    patient = patient_of(env, task_id)
    kb = knowledge_base()
    absent = next(f for f in sorted(kb.findings) if f not in patient.present)
    present = next(f for f in sorted(patient.present) if f != patient.opening)
    play(env, task_id, [])
    first, *_ = env.step(question_about(present))
    assert kb.findings[present].yes in first
    again, _, _, _, info = env.step(f"Sorry, again: {question_about(present)}")
    assert kb.findings[present].yes in again
    no, _, _, _, info = env.step(question_about(absent))
    assert kb.findings[absent].no in no
    assert info["verdict"].components["questions"] == 2  # the repeat was free


def test_one_question_about_several_findings_answers_and_counts_each(env):
    task_id = "test/easy/0"
    patient = patient_of(env, task_id)
    kb = knowledge_base()
    play(env, task_id, [])
    observation, _, _, _, info = env.step("Any fever, cough or rash?")
    for finding in ("fever", "cough", "itchy_rash"):
        answer = kb.findings[finding]
        expected = answer.yes if finding in patient.present else answer.no
        assert expected in observation
    asked = 3 - (patient.opening in ("fever", "cough"))
    assert info["verdict"].components["questions"] == asked


def test_asking_about_the_opening_complaint_is_free_and_yes(env):
    task_id = "test/hard/0"
    patient = patient_of(env, task_id)
    play(env, task_id, [])
    observation, _, _, _, info = env.step(question_about(patient.opening))
    assert knowledge_base().findings[patient.opening].yes in observation
    assert info["verdict"].components["questions"] == 0
    assert not info["invalid_action"]


def test_the_patient_never_names_the_condition(env):
    kb = knowledge_base()
    every_question = " ".join(f.question for f in kb.findings.values())
    for index in range(30):
        task_id = f"test/{list(LEVELS)[index % 3]}/{index}"
        patient = patient_of(env, task_id)
        names = {n for n, c in kb.names.items() if c == patient.condition}
        asked_by_name = f"Do you think it's {condition_name(patient.condition)}?"
        for action in (every_question, asked_by_name):
            observation, *_ = play(env, task_id, [action])
            reply = normalise(observation.split("Questions asked")[0])
            assert not [n for n in names if f" {n} " in f" {reply} "], (task_id, reply)


# --------------------------------------------------------------------------- invalid actions


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("What's the capital of France?", "not sure what you mean"),
        ("diagnosis:", "write the condition"),
        ("Diagnosis: covid-19", "not one of the candidates"),
        ("((((]]]]", "not sure what you mean"),
    ],
)
def test_bad_actions_are_feedback(env, action, says):
    observation, reward, terminated, truncated, info = play(env, "test/easy/1", [action])
    assert info["invalid_action"] and says in observation
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["state_key"] == "asked[] diagnosis=-"


def test_a_known_condition_that_is_not_a_candidate_is_invalid(env):
    task_id = "test/easy/2"
    patient = patient_of(env, task_id)
    outsider = next(c for c in sorted(knowledge_base().conditions) if c not in patient.candidates)
    observation, _, terminated, _, info = play(
        env, task_id, [f"diagnosis: {condition_name(outsider)}"]
    )
    assert info["invalid_action"] and not terminated
    assert "not one of the candidates" in observation


# --------------------------------------------------------------------------- reward


def test_penalty_arithmetic():
    assert [score_for(q) for q in range(FREE_QUESTIONS + 1)] == [1.0] * (FREE_QUESTIONS + 1)
    assert score_for(FREE_QUESTIONS + 1) == 0.9
    assert score_for(FREE_QUESTIONS + 3) == 0.7
    assert score_for(FREE_QUESTIONS + 7) == SCORE_FLOOR
    assert score_for(100) == SCORE_FLOOR


def test_a_right_answer_after_extra_questions_is_docked(env):
    task_id = "test/medium/3"
    patient = patient_of(env, task_id)
    questions = [question_about(f) for f in sorted(knowledge_base().findings)]
    questions = [q for q in questions if recognise(q) != [patient.opening]][:8]
    answer = f"diagnosis: {condition_name(patient.condition)}"
    _, reward, terminated, _, info = play(env, task_id, [*questions, answer])
    verdict = info["verdict"]
    assert terminated and verdict.passed
    assert verdict.score == pytest.approx(0.8) and reward == pytest.approx(0.8)
    assert dict(verdict.components) == pytest.approx(
        {"correct": 1.0, "questions": 8.0, "penalty": 0.2}
    )


def test_one_question_about_everything_is_docked_to_the_floor(env):
    task_id = "test/hard/5"
    patient = patient_of(env, task_id)
    everything = " ".join(f.question for f in knowledge_base().findings.values())
    _, _, _, _, info = play(
        env, task_id, [everything, f"diagnosis: {condition_name(patient.condition)}"]
    )
    assert info["verdict"].score == SCORE_FLOOR
    assert info["verdict"].components["questions"] == len(knowledge_base().findings) - 1


def test_a_wrong_answer_scores_zero(env):
    task_id = "test/hard/1"
    patient = patient_of(env, task_id)
    wrong = condition_name(a_wrong_candidate(patient))
    _, reward, terminated, _, info = play(env, task_id, [f"**Diagnosis:** {wrong.upper()}."])
    assert terminated and reward == 0.0
    assert not info["verdict"].passed and info["verdict"].components["correct"] == 0.0


def test_answers_accept_aliases_and_markup(env):
    kb = knowledge_base()
    for index in range(40):
        task_id = f"train/easy/{index}"
        patient = patient_of(env, task_id)
        condition = kb.conditions[patient.condition]
        for written in (*condition.aliases, condition.name.title()):
            reply = f"I think I know.\n- Final diagnosis: {written}"
            _, reward, terminated, _, _ = play(env, task_id, [reply])
            assert terminated and reward == 1.0, (task_id, written)


# --------------------------------------------------------------------------- oracle


def oracle_tasks():
    ids = [f"test/{level}/{i}" for level in LEVELS for i in range(100)]
    ids += [
        f"{split}/{level}/{i}" for split in ("train", "dev") for level in LEVELS for i in (7, 42)
    ]
    return ids


def test_the_oracle_scores_full_marks_within_the_free_budget(env):
    for task_id in oracle_tasks():
        verdict, steps, total = play_oracle(env, task_id)
        assert verdict.score == 1.0 and verdict.passed, (task_id, verdict)
        assert total == pytest.approx(1.0)
        assert verdict.components["questions"] == steps - 1 <= FREE_QUESTIONS, task_id


def test_every_task_is_proven_solvable_within_the_budget(env):
    for task_id in oracle_tasks():
        patient = patient_of(env, task_id)
        assert worst_case(patient.candidates, {patient.opening: True}) <= FREE_QUESTIONS


def test_the_oracle_recovers_after_the_agents_questions(env):
    task_id = "test/hard/9"
    play(env, task_id, ["Do you have a rash?", "Any dizziness?"])
    while (action := env.unwrapped.oracle_action()) is not None:
        _, _, terminated, _, info = env.step(action)
        if terminated:
            break
    assert info["verdict"].passed


# --------------------------------------------------------------------------- tasks


def test_task_counts_and_levels(env):
    tasks = env.unwrapped.tasks
    assert tasks.count("test") >= 100
    assert tasks.difficulties == ("easy", "medium", "hard")
    kb = knowledge_base()
    for level, (total, sharing) in LEVELS.items():
        for index in range(20):
            patient = patient_of(env, f"dev/{level}/{index}")
            assert len(patient.candidates) == total and patient.condition in patient.candidates
            names = [condition_name(c) for c in patient.candidates]
            assert names == sorted(names)
            listing = [c for c in patient.candidates if kb.conditions[c].lists(patient.opening)]
            assert len(listing) == sharing + 1
            assert kb.conditions[patient.condition].always <= patient.present


def test_instructions_list_the_candidates_and_the_complaint(env):
    task_id = "test/medium/7"
    patient = patient_of(env, task_id)
    _, info = env.reset(seed=0, options={"task_id": task_id})
    instructions = info["instructions"]
    assert ", ".join(condition_name(c) for c in patient.candidates) in instructions
    assert knowledge_base().findings[patient.opening].complaint in instructions
    assert "diagnosis: <condition>" in instructions


def test_state_key_is_canonical(env):
    task_id = "test/easy/4"
    first = play(env, task_id, ["Any fever?", "Any cough?"])[4]["state_key"]
    second = play(env, task_id, ["Any cough?", "Any fever?", "Any fever?"])[4]["state_key"]
    both = play(env, task_id, ["Any cough or fever?"])[4]["state_key"]
    assert first == second == both


def test_same_seed_and_task_give_the_same_episode():
    def episode():
        env = agentgym.make(ENV_ID)
        try:
            record = [env.reset(seed=3, options={"task_id": "test/hard/11"})]
            for action in ("Do you have a headache?", "nonsense", "Any fever?"):
                record.append(env.step(action))
            return [(step[0], step[-1]["state_key"]) for step in record]
        finally:
            env.close()

    assert episode() == episode()
    tasks = {DiagnosisTask(f"test/easy/{i}", "test", "easy", i).patient for i in range(20)}
    assert len(tasks) > 15  # different seeds, different patients
