"""Diagnosis: find a simulated patient's hidden condition by asking the right questions.

An information-seeking dialogue in the style of Doctor-R1 and preference elicitation: what
is measured is the *questioning strategy* — which question to ask next, and when enough is
known to answer. **This is a benchmark of questioning, not medical advice**: the knowledge
base is a deliberately simplified, hand-written table of textbook presentations of common,
non-alarming primary-care conditions, and nothing here should inform anyone's health.

**The knowledge base** (``agentgym/envs/usersim/data/diagnosis.json``, written for agentgym,
nothing downloaded) holds 59 *findings* and 29 *conditions*. A finding is something a patient
can report — a symptom, a bit of history, a simple fact about themselves — with the keywords
a patient recognises in a question (``fever``: "fever", "feverish", "temperature", ...), a
canonical question, a natural answer for when it is present and one for when it is absent
("Yes, I've been running a fever, about 38.5 last night." / "No, no fever, my temperature
has been normal."), and, for the 21 vague ones a visit can start with, an opening complaint
("I keep getting headaches."). A condition lists the findings it ``always`` has (every
patient with it reports them) and those it ``often`` has (most do); it never has any other,
except the 8 *incidental* findings (stress, a recent change in coffee, someone at home
ill, ...), which any patient may have unless the condition rules them out (its ``never``).
So a finding present rules out the candidates that never have it, and a finding absent
those that always have it.

**Tasks** (:class:`~agentgym.core.GeneratedTaskSet`, ids ``split/difficulty/index``; 10,000
per difficulty in ``train``, 100 in ``dev`` and in ``test``, so 300 test tasks). A task is a
patient: a true condition; the findings they have (every ``always`` finding, each ``often``
one with probability 0.7, and 0 to 2 incidental findings as noise); a persona
(name, age, manner); an opening complaint (one vague finding they have, such as a headache);
and the candidate conditions the agent must choose from, which include the true one and are
listed alphabetically. The difficulty is how crowded the opening complaint is:

==========  ==========  =================================================================
level       candidates  besides the true one, how many list the opening complaint too
==========  ==========  =================================================================
easy        6           1, at random
medium      8           3, at random
hard        10          6, the most similar to the true condition (overlap of their
                        ``always``/``often`` findings)
==========  ==========  =================================================================

The other candidates are drawn at random from the conditions that do not list the complaint.
The complaint is one that enough conditions share for the level (hard: headache, fatigue,
fever, sore throat or nausea). Every candidate list is checked when the task is
made: the oracle's worst case, over every answer a patient could give, is at most
:data:`FREE_QUESTIONS` questions (a draw that needs more would be redrawn; none of the
current knowledge base's do). The worst cases are 1 to 5 questions on easy tasks (mostly 1),
2 or 3 on medium and 4 or 5 on hard.

**The patient** is scripted and deterministic. Each action that is not a diagnosis is a
question; the patient answers about *every* finding it recognises in it (its keywords, as
whole words, plurals included; where one keyword lies inside a longer one of another
finding, the longer wins: "back of your throat" is about the tonsils, not the back), with
the finding's present or absent answer, in the order the question mentions them. A question
it recognises nothing in gets "I'm not sure what you mean" as an invalid action (it costs no
question; ``info`` counts it). Answers are facts of the patient and never name a condition;
asking about the same finding again gets the same answer; about the opening complaint, "yes".

**Actions.** Plain text: a question (anything but a diagnosis), or ``diagnosis: <condition>``
(on a line of its own, the last such line counts; names and common aliases, in any case:
``diagnosis: flu`` is influenza), which ends the episode. A name that is not among the
candidates, an empty diagnosis and an empty action are invalid actions too (feedback naming
the candidates or saying what would work; the episode goes on).

**Scoring.** Each finding a question asks about counts as one question (a question about
fever and cough counts two; repeats and the opening complaint are free), so listing every
symptom in one message buys nothing. With ``q`` questions asked, a correct diagnosis scores
``max(0.3, 1 - 0.1 * max(0, q - 6))``: 1.0 within :data:`FREE_QUESTIONS` (6) questions,
0.1 less for each question beyond them, never below :data:`SCORE_FLOOR` (0.3). A wrong
diagnosis scores 0, and so does giving none (the episode is cut at 20 steps). The verdict's
components are ``correct`` (1/0), ``questions`` (``q``) and ``penalty`` (what was taken off
a correct answer).

**What the agent sees.** The instructions name the candidates, the patient and their
opening complaint, the action syntax and the scoring. Each step shows the patient's answer
and how many questions have been asked. ``state_key`` is the findings asked so far with
their answers, sorted, and the diagnosis once given (no history).

**Oracle.** Plays fair and greedy: it keeps the candidates consistent with everything known
(a finding present rules out candidates that ``never`` have it; absent, those that
``always`` do), asks the canonical question of the finding whose worse answer leaves the
fewest candidates (ties: the fewer left over both answers, then the finding's name), and
answers once one candidate is left. It uses no privileged knowledge; the check at task
creation proves it within the free budget.

**A model as the patient.** ``make("usersim/Diagnosis-v0", user=MODEL)`` (or the
evaluator's ``--user SPEC``) has any :class:`~agentgym.UserModel` answer the questions
instead: its instructions say who the patient is, what they have and do not have (each
finding's answer), and never to name a condition. What a question counts for (which findings
it asks about) and the scoring stay the scripted ones, so scores stay comparable; the
opening complaint is the scripted one.

**Version history.** v0: first release.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, UserModel, Verdict
from agentgym.envs.usersim.users import ModelUserEnv, model_user
from agentgym.task_env import InvalidAction, TaskEnv

__all__ = [
    "FREE_QUESTIONS",
    "LEVELS",
    "SCORE_FLOOR",
    "Condition",
    "Consultation",
    "DiagnosisEnv",
    "DiagnosisTask",
    "Finding",
    "Patient",
    "best_question",
    "consistent",
    "knowledge_base",
    "make_patient",
    "normalise",
    "patient_instructions",
    "recognise",
    "score_for",
    "worst_case",
]

FREE_QUESTIONS = 6
"""Questions a correct diagnosis may take at full score."""
PENALTY_PER_QUESTION = 0.1
"""What each question beyond :data:`FREE_QUESTIONS` takes off a correct diagnosis."""
SCORE_FLOOR = 0.3
"""The least a correct diagnosis scores, however many questions it took."""
OFTEN_PRESENT = 0.7
"""The chance that a patient has each of their condition's ``often`` findings."""
LEVELS = {"easy": (6, 1), "medium": (8, 3), "hard": (10, 6)}
"""Per difficulty: candidates in all, and how many besides the truth share the complaint."""
SIZES = {"train": 10_000, "dev": 100, "test": 100}
NAMES = (
    "Mia Garcia", "Tom Okafor", "Priya Shah", "Lukas Weber", "Aisha Bello", "Sam Taylor",
    "Elena Rossi", "Kenji Mori", "Grace Kim", "Omar Haddad", "Nora Lindqvist", "Ben Carter",
)  # fmt: skip
MANNERS = {
    "brief": ("Hi.", "I'm not sure what you mean."),
    "chatty": (
        "Hello doctor, thanks for fitting me in today.",
        "Sorry, I'm not sure what you mean. Could you ask me another way?",
    ),
    "anxious": (
        "Hi doctor, I'm a bit worried.",
        "I'm not sure what you mean... is that something serious?",
    ),
}
"""Per manner: how the patient greets, and what they say to a question they do not follow."""
_DIAGNOSIS = re.compile(r"^\W*(?:final\s+)?diagnosis\s*:(.*)$", re.IGNORECASE)
_MARKUP = str.maketrans("", "", "*_`#>")


# --------------------------------------------------------------------------- knowledge base


@dataclass(frozen=True)
class Finding:
    """Something a patient can report, and how they talk about it."""

    id: str
    keywords: tuple[str, ...]
    question: str
    yes: str
    no: str
    complaint: str | None = None


@dataclass(frozen=True)
class Condition:
    """A condition and its findings by status: every finding is in exactly one of
    ``always``, ``often``, ``may`` (incidental: as noise) and ``never``."""

    id: str
    name: str
    aliases: tuple[str, ...]
    always: frozenset[str]
    often: frozenset[str]
    may: frozenset[str]
    never: frozenset[str]

    def lists(self, finding: str) -> bool:
        """Whether the finding is typical of the condition (``always`` or ``often``)."""
        return finding in self.always or finding in self.often


@dataclass(frozen=True)
class KnowledgeBase:
    findings: dict[str, Finding]
    conditions: dict[str, Condition]
    patterns: tuple[tuple[str, re.Pattern[str]], ...]  # (finding, keyword), longest first
    names: dict[str, str]  # a normalised name or alias -> condition id


def normalise(text: str) -> str:
    """Lowercase words separated by single spaces: how questions and names are compared."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


@functools.cache
def knowledge_base() -> KnowledgeBase:
    """The findings and conditions of ``data/diagnosis.json``, checked and indexed."""
    path = importlib.resources.files("agentgym.envs.usersim") / "data" / "diagnosis.json"
    raw = json.loads(path.read_text("utf-8"))
    findings = {
        key: Finding(
            key, tuple(f["keywords"]), f["question"], f["yes"], f["no"], f.get("complaint")
        )
        for key, f in raw["findings"].items()
    }
    incidental = frozenset(raw["incidental"])
    conditions = {}
    for key, c in raw["conditions"].items():
        always, often, ruled_out = (frozenset(c[s]) for s in ("always", "often", "never"))
        unknown = (always | often | ruled_out | incidental) - set(findings)
        if unknown or always & often or ruled_out - incidental:
            raise ValueError(f"diagnosis.json: {key}'s findings are wrong: {c}")
        may = incidental - always - often - ruled_out
        never = frozenset(findings) - always - often - may
        conditions[key] = Condition(key, c["name"], tuple(c["aliases"]), always, often, may, never)
    keywords = sorted(
        ((normalise(k), key) for key, f in findings.items() for k in f.keywords),
        key=lambda pair: (-len(pair[0]), pair),
    )
    patterns = tuple(
        (key, re.compile(rf"(?<!\w){re.escape(word)}(?:s|es)?(?!\w)")) for word, key in keywords
    )
    names = {normalise(name): c.id for c in conditions.values() for name in (c.name, *c.aliases)}
    return KnowledgeBase(findings, conditions, patterns, names)


def recognise(question: str) -> list[str]:
    """The findings a question asks about, in the order it mentions them.

    A keyword inside a longer keyword's match counts only for the longer one's finding.

    >>> recognise("Any fever? And is there pus at the back of your throat?")
    ['fever', 'tonsil_spots']
    """
    text = normalise(question)
    taken: list[tuple[int, int, str]] = []
    for finding, pattern in knowledge_base().patterns:  # longest keywords first
        for match in pattern.finditer(text):
            start, end = match.span()
            if not any(s <= start and end <= e for s, e, _ in taken):
                taken.append((start, end, finding))
    firsts: dict[str, int] = {}
    for start, _, finding in taken:
        firsts[finding] = min(start, firsts.get(finding, start))
    return sorted(firsts, key=lambda f: (firsts[f], f))


def score_for(questions: int) -> float:
    """The score of a correct diagnosis after ``questions`` questions.

    >>> score_for(6), score_for(8), score_for(30)
    (1.0, 0.8, 0.3)
    """
    excess = max(0, questions - FREE_QUESTIONS)
    return round(max(SCORE_FLOOR, 1.0 - PENALTY_PER_QUESTION * excess), 6)


# --------------------------------------------------------------------------- patients


@dataclass(frozen=True)
class Patient:
    """A task's patient: their condition, what they have, who they are, what they must pick."""

    condition: str
    present: frozenset[str]
    opening: str
    candidates: tuple[str, ...]  # condition ids, by name
    name: str
    age: int
    manner: str


@dataclass
class Consultation:
    """One episode's world: the patient, what has been asked, and the diagnosis once given."""

    patient: Patient
    answers: dict[str, bool] = field(default_factory=dict)  # finding -> present
    diagnosis: str | None = None

    @property
    def questions(self) -> int:
        return len(self.answers)

    def known(self) -> dict[str, bool]:
        """Every finding known so far: the answers and the opening complaint."""
        return {**self.answers, self.patient.opening: True}


def consistent(candidates: tuple[str, ...], known: dict[str, bool]) -> list[str]:
    """The candidates that no known finding rules out."""
    conditions = knowledge_base().conditions
    return [
        c
        for c in candidates
        if not any(
            f in (conditions[c].never if present else conditions[c].always)
            for f, present in known.items()
        )
    ]


def best_question(candidates: list[str], asked: set[str]) -> str | None:
    """The unasked finding whose worse answer leaves the fewest candidates (``None``: no
    finding tells any of them apart). Ties: the fewer left over both answers, then the id."""
    kb = knowledge_base()
    conditions = [kb.conditions[c] for c in candidates]
    best: tuple[int, int, str] | None = None
    for finding in kb.findings:
        if finding in asked:
            continue
        yes = sum(finding not in c.never for c in conditions)
        no = sum(finding not in c.always for c in conditions)
        rank = (max(yes, no), yes + no, finding)
        if rank[0] < len(conditions) and (best is None or rank < best):
            best = rank
    return best[2] if best else None


def worst_case(candidates: tuple[str, ...], known: dict[str, bool]) -> int | None:
    """Questions the oracle needs from here at worst, over every answer a patient could give;
    ``None`` if it can get stuck with two or more candidates left."""
    left = consistent(candidates, known)
    if len(left) <= 1:
        return 0
    finding = best_question(left, set(known))
    if finding is None:
        return None
    depths = [worst_case(tuple(left), {**known, finding: answer}) for answer in (True, False)]
    if None in depths:
        return None
    return 1 + max(d for d in depths if d is not None)


def _similarity(a: Condition, b: Condition) -> float:
    mine, theirs = a.always | a.often, b.always | b.often
    return len(mine & theirs) / len(mine | theirs)


@functools.cache
def _sharers(opening: str, truth: str) -> tuple[str, ...]:
    """The other conditions that list the complaint as typical."""
    conditions = knowledge_base().conditions
    return tuple(sorted(c for c in conditions if c != truth and conditions[c].lists(opening)))


def _openings(condition: Condition, difficulty: str) -> list[str]:
    """The complaints of the condition that enough others share for the level."""
    kb = knowledge_base()
    typical = sorted(f for f in condition.always | condition.often if kb.findings[f].complaint)
    return [f for f in typical if len(_sharers(f, condition.id)) >= LEVELS[difficulty][1]]


def make_patient(seed: int, difficulty: str) -> Patient:
    """The patient of a task: everything drawn from ``seed`` (see the module docstring)."""
    kb = knowledge_base()
    rng = np.random.default_rng(seed)
    total, sharing = LEVELS[difficulty]
    eligible = [c for c in sorted(kb.conditions) if _openings(kb.conditions[c], difficulty)]
    for _ in range(1000):
        truth = kb.conditions[eligible[int(rng.integers(len(eligible)))]]
        present = set(truth.always)
        present |= {f for f in sorted(truth.often) if rng.random() < OFTEN_PRESENT}
        openings = [f for f in _openings(truth, difficulty) if f in present]
        if not openings:
            continue
        opening = openings[int(rng.integers(len(openings)))]
        noise = rng.choice(sorted(truth.may), size=int(rng.integers(3)), replace=False)
        present |= {str(f) for f in noise}
        sharers = list(_sharers(opening, truth.id))
        sharers = [sharers[i] for i in rng.permutation(len(sharers))]
        if difficulty == "hard":  # the most similar first; ties stay in their random order
            sharers.sort(key=lambda c: -_similarity(truth, kb.conditions[c]))
        chosen = sharers[:sharing]
        others = sorted(c for c in kb.conditions if c != truth.id and c not in sharers)
        fill = rng.choice(others, size=total - 1 - len(chosen), replace=False)
        names = [truth.id, *chosen, *(str(c) for c in fill)]
        candidates = tuple(sorted(names, key=lambda c: kb.conditions[c].name))
        depth = worst_case(candidates, {opening: True})
        if depth is None or depth > FREE_QUESTIONS:
            continue
        manner = sorted(MANNERS)[int(rng.integers(len(MANNERS)))]
        return Patient(
            condition=truth.id,
            present=frozenset(present),
            opening=opening,
            candidates=candidates,
            name=NAMES[int(rng.integers(len(NAMES)))],
            age=int(rng.integers(18, 71)),
            manner=manner,
        )
    raise RuntimeError(f"no solvable {difficulty} patient drawn from seed {seed}")


# --------------------------------------------------------------------------- task and env


class DiagnosisTask(Task[Consultation]):
    """One patient (drawn from the task's seed); see the module docstring."""

    @functools.cached_property
    def patient(self) -> Patient:
        return make_patient(self.seed, self.difficulty)

    def setup(self, rng: np.random.Generator) -> tuple[Consultation, str]:
        patient = self.patient
        kb = knowledge_base()
        greeting, _ = MANNERS[patient.manner]
        complaint = kb.findings[patient.opening].complaint
        names = ", ".join(kb.conditions[c].name for c in patient.candidates)
        goal = (
            f"You are a doctor in a primary-care clinic. A patient, {patient.name} "
            f"({patient.age}), has come to see you. Find out which condition they have by "
            f"asking them questions, then give your diagnosis. It is one of these "
            f"{len(patient.candidates)}: {names}.\n\n"
            f'{patient.name.split()[0]} says: "{greeting} {complaint}"'
        )
        return Consultation(patient), goal

    def validate(self, world: Consultation) -> Verdict:
        q = world.questions
        counts = {"questions": float(q)}
        if world.diagnosis is None:
            details = f"no diagnosis yet; {q} question{'s' if q != 1 else ''} asked"
            return Verdict(0.0, False, {"correct": 0.0, **counts, "penalty": 0.0}, details)
        conditions = knowledge_base().conditions
        given, truth = conditions[world.diagnosis].name, conditions[world.patient.condition].name
        if world.diagnosis != world.patient.condition:
            details = f"wrong diagnosis: {given}; the patient has {truth} ({q} questions)"
            return Verdict(0.0, False, {"correct": 0.0, **counts, "penalty": 0.0}, details)
        score = score_for(q)
        penalty = round(1.0 - score, 6)
        details = f"correct diagnosis ({truth}) after {q} questions"
        if penalty:
            details += f"; {penalty:.1f} off for the questions beyond {FREE_QUESTIONS}"
        return Verdict(score, True, {"correct": 1.0, **counts, "penalty": penalty}, details)

    def solve(self, world: Consultation) -> str | None:
        if world.diagnosis is not None:
            return None
        left = consistent(world.patient.candidates, world.known())
        finding = best_question(left, set(world.known())) if len(left) > 1 else None
        if finding is None:  # one left (or, after the agent's questions, none to tell apart)
            return f"diagnosis: {knowledge_base().conditions[left[0]].name}"
        return knowledge_base().findings[finding].question


def patient_instructions(patient: Patient) -> str:
    """The system prompt of a model playing ``patient``: who they are, every finding's
    answer in the first person, and the rules of the part."""
    kb = knowledge_base()
    answers = {
        f: (kb.findings[f].yes if f in patient.present else kb.findings[f].no) for f in kb.findings
    }
    facts = [f"- {kb.findings[f].question} {answers[f]}" for f in sorted(kb.findings)]
    return "\n".join(
        [
            f"You are {patient.name}, {patient.age}, a patient seeing a doctor; you are "
            f"{patient.manner}. You came because: {kb.findings[patient.opening].complaint}",
            "You are the patient, not the doctor: answer only what the doctor asks, in one or "
            "two sentences, in your own words. Never name or guess a condition. If a question "
            "is unclear, say so. The truth about you (a question you may be asked, and your "
            "answer):",
            *facts,
        ]
    )


class DiagnosisEnv(ModelUserEnv, TaskEnv[Consultation]):
    __doc__ = __doc__

    def __init__(self, *, user: str | UserModel = "scripted", **kwargs: Any) -> None:
        self.user = model_user(user)
        self.tasks = GeneratedTaskSet("usersim-diagnosis", DiagnosisTask, tuple(LEVELS), SIZES)
        super().__init__(**kwargs)

    def start(self, task: Task[Consultation]) -> tuple[Consultation, str]:
        world, goal = task.setup(self.np_random)
        if self.user is not None:
            seed = int(self.np_random.integers(2**63))
            self.user.start(patient_instructions(world.patient), seed=seed)
        return world, goal

    def act(self, world: Consultation, action: str) -> str:
        if not action.strip():
            raise InvalidAction(
                "the action is empty: ask the patient a question, or answer with "
                "'diagnosis: <condition>'"
            )
        lines = [_DIAGNOSIS.match(line.translate(_MARKUP)) for line in action.splitlines()]
        answers = [m.group(1) for m in lines if m]
        if answers:
            world.diagnosis = self._condition(world, answers[-1])
            return f"Diagnosis recorded: {knowledge_base().conditions[world.diagnosis].name}."
        reply = self._reply(world, action)
        if self.user is not None:
            reply = self.user.reply(action.strip())
        return f'{world.patient.name.split()[0]}: "{reply}"'

    @staticmethod
    def _reply(world: Consultation, question: str) -> str:
        kb = knowledge_base()
        findings = recognise(question)
        if not findings:
            raise InvalidAction(
                f'{world.patient.name.split()[0]}: "{MANNERS[world.patient.manner][1]}" (the '
                f"patient recognised no symptom or fact in that; ask about one, e.g. 'Have you "
                f"had a fever?', or answer with 'diagnosis: <condition>')"
            )
        replies = []
        for finding in findings:
            present = finding in world.patient.present
            if finding != world.patient.opening:
                world.answers[finding] = present
            replies.append(kb.findings[finding].yes if present else kb.findings[finding].no)
        return " ".join(replies)

    @staticmethod
    def _condition(world: Consultation, written: str) -> str:
        kb = knowledge_base()
        options = ", ".join(kb.conditions[c].name for c in world.patient.candidates)
        name = normalise(written)
        if not name:
            raise InvalidAction(
                f"write the condition after 'diagnosis:', e.g. 'diagnosis: "
                f"{kb.conditions[world.patient.candidates[0]].name}'; the candidates: {options}"
            )
        condition = kb.names.get(name)
        if condition not in world.patient.candidates:
            raise InvalidAction(
                f"{written.strip()[:60]!r} is not one of the candidates; answer with one of: "
                f"{options}"
            )
        return condition

    def observe(self, world: Consultation) -> str:
        if world.diagnosis is not None:
            return "The consultation is over."
        q = world.questions
        return (
            f"Questions asked: {q} ({FREE_QUESTIONS} free). Ask another question, or answer "
            f"with 'diagnosis: <condition>'."
        )

    def state_key(self, world: Consultation) -> str:
        asked = ",".join(f"{f}={'yes' if p else 'no'}" for f, p in sorted(world.answers.items()))
        return f"asked[{asked}] diagnosis={world.diagnosis or '-'}"

    def is_over(self, world: Consultation) -> bool:
        return world.diagnosis is not None

    def action_syntax(self) -> str:
        return (
            "Each turn, write one of:\n"
            "- a question for the patient, in plain English (e.g. 'Have you had a fever?'). "
            "The patient answers about each symptom or fact the question mentions; every one "
            "of them counts as a question.\n"
            "- 'diagnosis: <condition>', naming one of the candidates, on a line of its own. "
            "This ends the consultation.\n"
            f"Scoring: the right diagnosis scores 1.0 if you asked at most {FREE_QUESTIONS} "
            f"questions, {PENALTY_PER_QUESTION} less for each question beyond that (never below "
            f"{SCORE_FLOOR}); a wrong diagnosis, or none, scores 0."
        )
