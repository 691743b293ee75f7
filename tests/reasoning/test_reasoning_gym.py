"""reasoning-gym's datasets as agentgym envs: the ids, tasks, scoring and the scorer guard.

``tests/test_conformance.py`` runs the checker over every registered id; these tests pin what
is particular to the adapter.
"""

import builtins
import importlib.metadata
import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from hash_seeds import outputs_under_two_hash_seeds

pytest.importorskip("reasoning_gym")

import agentgym
from agentgym.envs.reasoning import reasoning_gym as adapter
from agentgym.envs.reasoning import reasoning_gym_ids as ids
from agentgym.envs.reasoning.reasoning_gym import (
    CANARY,
    CURRICULUM_LEVELS,
    SPLIT_SEEDS,
    ReasoningGymEnv,
    ReasoningGymTask,
    audit,
    build,
    code_in_answer,
    generate,
)
from agentgym.errors import InfrastructureError, UsageError
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark

# Datasets of every kind: plain gold answers, reference solutions instead of a gold (graph
# colouring, Rubik's cube), scorers that eval() or sympy-parse the answer,
# a default-only dataset, one with smaller splits.
SAMPLE = (
    "basic_arithmetic",
    "word_sorting",
    "family_relationships",
    "graph_color",
    "rubiks_cube",
    "n_queens",
    "simple_integration",
    "gsm_symbolic",
    "acre",
)

# Datasets that draw from sets of strings or sympy objects, or load word lists.
HASH_SAMPLE = [
    ("word_ladder", "medium"),
    ("group_anagrams", "easy"),
    ("letter_jumble", "easy"),
    ("simple_integration", "medium"),
    ("family_relationships", "hard"),
    ("graph_color", "easy"),
]


@pytest.fixture(scope="module", autouse=True)
def _registered():
    ids.register_all()
    ids.register_all()  # a second call (the family module's, then ours) changes nothing


def make(dataset, **kwargs):
    return agentgym.make(ids.env_id(dataset), **kwargs)


def first_task(env, split="test"):
    return env.unwrapped.tasks.ids(split)[0]


# ----------------------------------------------------------------------------- ids


def test_the_ids_cover_exactly_the_installed_datasets():
    from reasoning_gym.factory import CURRICULA
    from reasoning_gym.factory import DATASETS as installed

    assert importlib.metadata.version("reasoning_gym") == ids.REASONING_GYM_VERSION
    assert set(ids.DATASETS) | set(ids.EXCLUDED) == set(installed)
    assert not set(ids.DATASETS) & set(ids.EXCLUDED)
    assert list(ids.DATASETS) == sorted(ids.DATASETS)
    assert all(reason.strip() for reason in ids.EXCLUDED.values())
    assert set(ids.LEVELS) == set(ids.DATASETS)
    for name, levels in ids.LEVELS.items():
        assert levels and set(levels) <= set(CURRICULUM_LEVELS)
        assert levels == ("default",) or name in CURRICULA
        assert set(levels).isdisjoint(ids.EXCLUDED_LEVELS.get(name, {}))
    assert set(ids.EXECUTES_ANSWER) <= set(installed)
    assert set(ids.EXECUTES_ANSWER.values()) <= {"python", "sympy"}


def test_every_exclusion_is_documented_with_its_reason():
    page = (Path(__file__).parents[2] / "docs" / "reasoning-gym.md").read_text()
    for name in ids.EXCLUDED:
        assert f"``{name}``" in (ids.__doc__ or ""), name
    for name in [*ids.EXCLUDED, *ids.EXCLUDED_LEVELS]:
        assert f"`{name}`" in page, name


def test_every_dataset_is_registered_as_a_single_turn_env():
    specs = {spec.id: spec for spec in agentgym.list_envs(family=ids.FAMILY)}
    assert sorted(specs) == sorted(ids.env_id(name) for name in ids.DATASETS)
    for name in ids.DATASETS:
        spec = specs[ids.env_id(name)]
        assert spec.kwargs == {"dataset": name}
        assert spec.max_episode_steps == 1
        assert spec.extra == "reasoning"


def test_registering_imports_nothing_from_reasoning_gym():
    code = (
        "import sys, agentgym\n"
        "from agentgym.envs.reasoning.reasoning_gym_ids import register_all\n"
        "agentgym.list_envs(); register_all()\n"
        "assert agentgym.spec('reasoning-gym/basic_arithmetic-v1')\n"
        "assert 'reasoning_gym' not in sys.modules, 'reasoning_gym was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unknown_or_excluded_dataset_is_a_usage_error_that_says_why():
    with pytest.raises(UsageError, match="basic_arithmetic"):
        ReasoningGymEnv(dataset="basic_arithmetik")
    name, reason = next(iter(ids.EXCLUDED.items()))
    with pytest.raises(UsageError) as raised:
        ReasoningGymEnv(dataset=name)
    assert reason in str(raised.value)


# ----------------------------------------------------------------------------- tasks


def test_splits_draw_from_disjoint_seed_ranges():
    for name in ids.DATASETS:
        tasks = ReasoningGymEnv(dataset=name).tasks
        ranges = sorted(
            (
                tasks.seed_of(f"{split}/{tasks.difficulties[0]}/0"),
                tasks.count(split, tasks.difficulties[0]),
            )
            for split in tasks.splits
        )
        for (start, size), (next_start, _) in itertools.pairwise(ranges):
            assert start + size <= next_start, name
    assert sorted(SPLIT_SEEDS.values()) == list(SPLIT_SEEDS.values())


def test_splits_hold_different_questions():
    questions = {
        split: {generate("word_sorting", "medium", split, index)["question"] for index in range(20)}
        for split in SPLIT_SEEDS
    }
    assert not questions["train"] & questions["dev"]
    assert not questions["train"] & questions["test"]
    assert not questions["dev"] & questions["test"]


def forget_generated():
    """Empty the process's caches of datasets and items, so the next question is made anew."""
    adapter._entry.cache_clear()
    with adapter._LOCK:
        adapter._DATASETS.clear()


def test_a_task_id_always_names_the_same_question():
    # generate() deep-copies one cached entry: both sides of a comparison must be built anew
    # (fresh dataset objects, caches emptied in between), or a nondeterministic draw would pass.
    first, second = make("family_relationships"), make("family_relationships")
    task_id = "test/hard/7"
    forget_generated()
    observation, info = first.reset(seed=1, options={"task_id": task_id})
    forget_generated()
    again, info_again = second.reset(seed=99, options={"task_id": task_id})
    assert observation == again and info["state_key"] == info_again["state_key"]
    other, _ = second.reset(seed=1, options={"task_id": "test/hard/8"})
    assert other != observation
    fresh = [dict(build("family_relationships", "hard", "test")[7]) for _ in range(2)]
    assert fresh[0] == fresh[1] == generate("family_relationships", "hard", "test", 7)


def test_a_task_id_names_the_same_question_in_another_process():
    # Python salts str hashes per process; generators that iterate over sets change with it.
    code = (
        "import hashlib, io, contextlib\n"
        "from agentgym.envs.reasoning.reasoning_gym import generate\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    items = [generate(n, d, 'test', i)['question'] for n, d in {HASH_SAMPLE!r}"
        " for i in range(3)]\n"
        "print(hashlib.sha256(repr(items).encode()).hexdigest())\n"
    )
    digests = outputs_under_two_hash_seeds(code)
    assert len(digests) == 1


def test_the_observation_is_the_question_and_the_instructions_say_how_to_answer():
    env = make("basic_arithmetic")
    observation, info = env.reset(seed=0, options={"task_id": "dev/easy/3"})
    question = generate("basic_arithmetic", "easy", "dev", 3)["question"]
    assert observation.startswith(question)
    assert "<answer>" in info["instructions"] and "basic_arithmetic" in info["instructions"]


# ----------------------------------------------------------------------------- scoring


@pytest.mark.parametrize("dataset", SAMPLE)
def test_the_oracle_scores_the_maximum_and_a_wrong_answer_less(dataset):
    assert dataset in ids.DATASETS
    env = make(dataset)
    for difficulty in env.unwrapped.tasks.difficulties:
        task_id = f"test/{difficulty}/5"
        env.reset(seed=0, options={"task_id": task_id})
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        verdict = info["verdict"]
        # An answered task is terminated, not truncated too (the step limit of one reply).
        assert (reward, terminated, truncated, verdict.passed) == (1.0, True, False, True)
        assert verdict.components == {"score_answer": 1.0}
        env.reset(seed=0, options={"task_id": task_id})
        _, reward, terminated, truncated, info = env.step("<answer>not the answer</answer>")
        assert reward < 1.0 and not info["verdict"].passed and terminated != truncated


def _another_items_answer(dataset, task_id, other_id):
    """The reward and verdict of ``task_id`` answered with ``other_id``'s gold answer: a
    reply that never read the task."""
    env = make(dataset)
    env.reset(seed=0, options={"task_id": other_id})
    reply = env.unwrapped.oracle_action()
    env.reset(seed=0, options={"task_id": task_id})
    _, reward, _, _, info = env.step(reply)
    return reward, info


@pytest.mark.parametrize(
    ("dataset", "task_id", "other_id", "raw"),
    [  # what the checker's task_blind check found: reasoning-gym's partial credit, blind
        ("game_of_life", "train/easy/85062", "train/medium/63696", 0.98),
        ("mini_sudoku", "train/easy/85062", "train/medium/63696", 0.675),
        ("advanced_geometry", "train/easy/85062", "train/medium/63696", 0.01),
    ],
)
def test_partial_credit_for_another_items_answer_is_not_reward(dataset, task_id, other_id, raw):
    reward, info = _another_items_answer(dataset, task_id, other_id)
    verdict = info["verdict"]
    assert verdict.components == {"score_answer": pytest.approx(raw, abs=0.01)}
    assert (reward, verdict.score, verdict.passed) == (0.0, 0.0, False)


@pytest.mark.parametrize("dataset", ["propositional_logic", "puzzle24"])
def test_datasets_whose_full_score_a_blind_answer_earns_are_not_served(dataset):
    # propositional_logic takes any valid conclusion (another item's passed 150 of 197);
    # puzzle24's medium level holds 3 puzzles, and its scorer does not check the numbers.
    assert dataset in ids.EXCLUDED and dataset not in ids.DATASETS
    assert "task_blind" in ids.EXCLUDED[dataset]


def test_a_reply_without_answer_tags_is_an_invalid_action():
    env = make("basic_arithmetic")
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    observation, reward, terminated, truncated, info = env.step("The answer is 4.")
    assert info["invalid_action"] and reward == 0.0
    assert (terminated, truncated) == (False, True)  # one reply: the step limit ends it
    assert "<answer>" in observation


def test_reasoning_before_the_tags_is_ignored_and_the_last_answer_counts():
    env = make("basic_arithmetic")
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    gold = env.unwrapped.oracle_action().removeprefix("<answer>").removesuffix("</answer>")
    reply = f"Let me think. <answer>wrong</answer> On second thought:\n<ANSWER> {gold} </ANSWER>"
    _, reward, _, _, info = env.step(reply)
    assert reward == 1.0 and not info["invalid_action"]


def test_an_answer_the_scorer_cannot_read_is_feedback_not_a_crash():
    env = make("prime_factorization")  # its scorer raises ValueError on non-numbers
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    observation, reward, _, _, info = env.step("<answer>twelve</answer>")
    assert info["invalid_action"] and reward == 0.0
    assert "could not read" in observation


def test_a_generation_failure_is_an_infrastructure_error():
    # reasoning-gym's caesar_cipher curriculum asks for rotations over 25 at level 2, which
    # its own config then rejects: a real failure, which the env does not serve.
    assert "hard" not in ids.LEVELS["caesar_cipher"]
    with pytest.raises(InfrastructureError, match="caesar_cipher"):
        generate("caesar_cipher", "hard", "test", 0)
    task = ReasoningGymTask("test/hard/0", "test", "hard", 0, dataset="caesar_cipher", index=0)
    with pytest.raises(InfrastructureError, match="rotation"):
        task.setup(None)


# ----------------------------------------------------------------------------- the guard


@pytest.mark.parametrize(
    ("kind", "answer"),
    [
        ("python", CANARY),
        ("python", f"[{CANARY}]"),
        ("python", f"  {CANARY}"),
        ("python", "[x for x in ().__class__.__base__.__subclasses__()]"),
        ("python", "open('/tmp/x', 'w')"),
        ("python", "[0] * 10**10"),
        ("sympy", CANARY),
        ("sympy", "open('/tmp/x', 'w')"),
        ("sympy", "exec(chr(95))"),
        ("sympy", "x.__class__"),
        ("sympy", "9**9**9"),
        ("sympy", "2**(99)**(99)"),
        ("sympy", "2**99999999"),
        ("sympy", "lambda: 1"),
        ("sympy", "N(pi, 10**9)"),
        ("sympy", "_x"),
    ],
)
def test_answers_that_would_run_code_are_refused(kind, answer):
    assert code_in_answer(kind, answer)


@pytest.mark.parametrize(
    ("kind", "answer"),
    [
        ("python", "['a', 'b', 'c']"),
        ("python", "[[1, 0], [0, -1]]"),
        ("python", "1 2 3\n4 5 6"),
        ("python", "_ Q _ _\nQ _ _ _"),
        ("sympy", "-5*X**9 - 2*X**6/3 + 4*X**3 + C"),
        ("sympy", "-4*(-2*x - 8)**(3/2)/3 + C"),
        ("sympy", "-exp(x)*sin(x) + exp(x)*cos(x) + C"),
        ("sympy", "10*(8 - 5) - 6"),
        ("sympy", "no idea"),
    ],
)
def test_plain_answers_pass_the_guard(kind, answer):
    assert code_in_answer(kind, answer) is None


@pytest.mark.parametrize("dataset", sorted(set(ids.EXECUTES_ANSWER) & set(ids.DATASETS)))
def test_no_scorer_runs_an_answer_as_code(dataset):
    env = make(dataset)
    for reply in (CANARY, f"[{CANARY}]"):
        env.reset(seed=0, options={"task_id": first_task(env)})
        observation, _, _, _, info = env.step(f"<answer>{reply}</answer>")
        assert info["invalid_action"] and "would run this answer as code" in observation
        assert not hasattr(builtins, "AGENTGYM_CANARY")


def test_the_audit_passes_on_a_served_dataset_and_finds_an_unfit_one():
    assert audit("gcd", "easy", tasks_per_split=2).ok
    broken = audit("game_of_life_halting", "easy", tasks_per_split=2)
    assert broken.problems == ["item 0 (train): wrong answers score 1.0"]


# ----------------------------------------------------------------------------- evaluation


def test_the_oracle_agent_passes_every_episode_of_a_short_run(tmp_path):
    suite = Benchmark.from_dict(
        {
            "name": "reasoning-gym-smoke",
            "envs": [
                {"id": "reasoning-gym/basic_arithmetic-v1", "split": "test", "tasks": 3},
                {"id": "reasoning-gym/graph_color-v1", "split": "test", "tasks": 3},
            ],
        }
    )
    result = evaluate(suite, "oracle", tmp_path / "run", num_envs=4)
    assert result.summary["overall"]["success"] == 1.0
    assert result.summary["overall"]["errored"] == 0
    assert len(result.records) == 6
