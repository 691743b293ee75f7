"""Task-blind policies earn nothing: the same messages on every task (list every answer
then transfer, say yes and done, end at once, one fixed guess, every phone fix at once or one
per message), and the
authentication chain that never asks the user who they are, score 0 on every test task of
the customer-service domains; on Diagnosis, fixed answers score no more than a guess's
chance. Sampled in the suite, every test task under ``make check`` (tests/sampling.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from math import comb

import pytest
from sampling import sample

import agentgym
from agentgym.envs.usersim.diagnosis import knowledge_base
from agentgym.envs.usersim.env import DOMAINS

Policy = Callable[[str, int], str]
"""``policy(observation, step) -> action``: what a task-blind agent writes."""

MAX_STEPS = 14
PER_DOMAIN = 5
"""Test tasks per domain and policy in the suite (all 120 under ``make check``)."""

TRANSFER = json.dumps({"name": "transfer_to_human_agents", "arguments": {"summary": "help"}})
EVERY_ANSWER = (
    "Your order is pending, processed, delivered, cancelled, return requested or exchange "
    "requested; your flight is available, delayed, cancelled, landed or on time; your plan is "
    "Basic 5GB, Essential 15GB, Plus 30GB or Max 60GB. It cannot be cancelled, cannot be "
    "returned, is not available, can be modified once, and is not eligible (basic economy)."
)
ONE_GUESS = (
    "I checked: your order is delivered, your flight is delayed, and your line is on the "
    "Max 60GB plan."
)
EVERY_FIX = (
    "Please turn airplane mode off, turn mobile data on, reset your APN settings, take the "
    "SIM card out and put it back in, set the network mode to 5G, turn data saver off, turn "
    "data roaming on, and restart your phone. I will also enable roaming, pay your bill, "
    "resume your line and add data. Please confirm (yes) that I should proceed."
)

ONE_FIX_EACH = (
    "Please turn airplane mode off.",
    "Please turn mobile data on.",
    "Please reset your APN settings.",
    "Please take the SIM card out and put it back in.",
    "Please set the network mode to 5G.",
    "Please turn data saver off.",
    "Please restart your phone.",
)


def fixed(*actions: str) -> Policy:
    """The same actions every task; the last one repeated."""
    return lambda observation, step: actions[min(step, len(actions) - 1)]


class AuthChain:
    """Ask for an order or reservation id, read the record, its owner, and authenticate
    with what the records say (never with what the user said), then cancel: the chain
    that scored 1.0 before authentication meant the user's own facts. Telecom has no such
    chain (no tool reads a record by anything the user holds but the authentication tool)."""

    def __init__(self) -> None:
        self.found: dict[str, str] = {}

    def __call__(self, observation: str, step: int) -> str:
        for key, pattern in (
            ("order", r"#W\d{7}"),
            ("reservation", r"\b[A-Z0-9]{6}\b(?=[.\"])"),
            ("user", r'"user_id": "([a-z]+_[a-z]+_\d+)"'),
            ("email", r'"email": "([^"]+)"'),
        ):
            match = re.search(pattern, observation)
            if match and key not in self.found:
                self.found[key] = match.group(match.lastindex or 0)
        return self.next_action(step)

    def next_action(self, step: int) -> str:
        found = self.found
        plan: list[tuple[str, dict[str, str]] | str] = [
            "Hello! What is your order id, or your reservation id?"
        ]
        if "order" in found:
            order = found["order"]
            plan.append(("get_order_details", {"order_id": order}))
            if "user" in found:
                plan.append(("get_user_details", {"user_id": found["user"]}))
            if "email" in found:
                plan += [
                    ("find_user_id_by_email", {"email": found["email"]}),
                    f'I will cancel order {order} with the reason "no longer needed". '
                    "Please confirm (yes) that I should proceed.",
                    ("cancel_pending_order", {"order_id": order, "reason": "no longer needed"}),
                ]
        elif "reservation" in found:
            reservation = found["reservation"]
            plan.append(("get_reservation_details", {"reservation_id": reservation}))
            if "user" in found:
                plan += [
                    ("get_user_details", {"user_id": found["user"]}),
                    f"I will cancel reservation {reservation}. Please confirm (yes) that I "
                    "should proceed.",
                    ("cancel_reservation", {"reservation_id": reservation}),
                ]
        plan.append("Done: it is cancelled, and the refund is on its way.")
        action = plan[min(step, len(plan) - 1)]
        if isinstance(action, str):
            return action
        return json.dumps({"name": action[0], "arguments": action[1]})


POLICIES: dict[str, Callable[[], Policy]] = {
    "every answer, then transfer": lambda: fixed(EVERY_ANSWER, TRANSFER),
    "yes and done": lambda: fixed("Yes.", "Done.", "Yes, it's done. Anything else?"),
    "end at once": lambda: fixed(TRANSFER),
    "one fixed guess": lambda: fixed(ONE_GUESS, "Is there anything else?"),
    "every fix at once, then yes": lambda: fixed(EVERY_FIX, "Yes, done.", ONE_GUESS),
    "every fix, one per message": lambda: fixed(*ONE_FIX_EACH, "Yes.", ONE_GUESS),
    "authenticate from the records, then cancel": AuthChain,
}
ENV_IDS = [f"usersim/{name.capitalize()}-v2" for name in DOMAINS]
_ENVS: dict[str, agentgym.Env] = {}


def env_for(env_id: str):
    if env_id not in _ENVS:
        _ENVS[env_id] = agentgym.make(env_id, max_episode_steps=MAX_STEPS)
    return _ENVS[env_id]


def play(env, task_id: str, policy: Policy) -> float:
    observation, _ = env.reset(seed=0, options={"task_id": task_id})
    for step in range(MAX_STEPS):
        observation, _, terminated, truncated, info = env.step(policy(observation, step))
        if terminated or truncated:
            return float(info["verdict"].score)
    raise AssertionError(f"{task_id}: the episode did not end in {MAX_STEPS} steps")


@pytest.mark.sampled
@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("name", POLICIES)
def test_a_task_blind_policy_scores_zero_on_every_test_task(env_id, name):
    env = env_for(env_id)
    task_ids = sample(env.unwrapped.tasks.ids("test"), PER_DOMAIN, seed=len(name))
    rewarded = [t for t in task_ids if play(env, t, POLICIES[name]()) > 0]
    assert rewarded == [], f"{name!r} earned reward on {rewarded}"


# ------------------------------------------------------------------ Diagnosis

CANDIDATES = {"easy": 6, "medium": 8, "hard": 10}
"""How many candidates a task of each difficulty lists (the docs' table)."""
PER_DIFFICULTY = 20
ALPHA = 0.001


def chance(difficulty: str) -> float:
    """A guess's chance: the agent must name one of ``k`` candidates, listed alphabetically,
    the truth among them. Without a question, nothing tells them apart, so a guess is right
    with probability 1/k (6, 8, 10 candidates: 1/6, 1/8, 1/10); a policy that ignores the
    task can do no better on average."""
    return 1 / CANDIDATES[difficulty]


def above_chance(successes: int, n: int, p: float) -> bool:
    """Whether ``successes`` of ``n`` is above chance ``p`` at level :data:`ALPHA`: the
    binomial tail P(X >= successes) is below it (one-sided exact test)."""
    tail = sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(successes, n + 1))
    return tail < ALPHA


def test_the_binomial_test_flags_only_what_is_above_chance():
    assert not above_chance(2, 20, 1 / 6) and not above_chance(0, 20, 1 / 6)
    assert above_chance(12, 20, 1 / 6) and above_chance(20, 20, 1 / 2)


def _candidates(observation: str) -> list[str]:
    listed = re.search(r"It is one of these \d+: ([^\n]+?)\.\n", observation)
    assert listed, observation[:200]
    return listed.group(1).split(", ")


DIAGNOSIS_POLICIES: dict[str, Callable[[str], list[str]]] = {
    "the first candidate": lambda obs: [f"diagnosis: {_candidates(obs)[0]}"],
    "the last candidate": lambda obs: [f"diagnosis: {_candidates(obs)[-1]}"],
    "one fixed question, then the first candidate": lambda obs: [
        "Have you had a fever?",
        f"diagnosis: {_candidates(obs)[0]}",
    ],
    "every question at once, then the middle candidate": lambda obs: [
        "Have you had a fever, a cough, a headache, nausea, a rash or back pain?",
        f"diagnosis: {_candidates(obs)[len(_candidates(obs)) // 2]}",
    ],
}


@pytest.fixture(scope="module")
def diagnosis():
    env = agentgym.make("usersim/Diagnosis-v0")
    yield env
    env.close()


def _diagnose(env, task_id: str, actions: Callable[[str], list[str]] | list[str]) -> float:
    observation, _ = env.reset(seed=0, options={"task_id": task_id})
    for action in actions(observation) if callable(actions) else actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return float(info["verdict"].score)
    return 0.0  # a name that is no candidate is invalid, as every repeat of it would be


@pytest.mark.sampled
@pytest.mark.parametrize("difficulty", CANDIDATES)
@pytest.mark.parametrize("name", DIAGNOSIS_POLICIES)
def test_a_task_blind_diagnosis_scores_no_more_than_chance(diagnosis, difficulty, name):
    task_ids = sample(diagnosis.unwrapped.tasks.ids("test", difficulty), PER_DIFFICULTY)
    scores = [_diagnose(diagnosis, t, DIAGNOSIS_POLICIES[name]) for t in task_ids]
    right = sum(score > 0 for score in scores)
    assert not above_chance(right, len(scores), chance(difficulty)), (name, right, len(scores))


@pytest.mark.sampled
@pytest.mark.parametrize("difficulty", CANDIDATES)
def test_one_fixed_name_on_every_task_scores_no_more_than_chance(diagnosis, difficulty):
    """Each condition's name, said on every task (invalid where it is no candidate)."""
    names = [condition.name for condition in knowledge_base().conditions.values()]
    task_ids = sample(diagnosis.unwrapped.tasks.ids("test", difficulty), PER_DIFFICULTY)
    for name in sample(names, 6):
        right = sum(_diagnose(diagnosis, t, [f"diagnosis: {name}"]) > 0 for t in task_ids)
        assert not above_chance(right, len(task_ids), chance(difficulty)), (name, right)
