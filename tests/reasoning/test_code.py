"""The code envs: the built-in problems, HumanEval/MBPP files, one reply or a sandbox session."""

import json
import os
import time

import numpy as np
import pytest

import agentgym
from agentgym.envs.reasoning.code import extract_program
from agentgym.envs.reasoning.code_tasks import LEVELS, PROBLEMS, generate
from agentgym.errors import UsageError
from agentgym.sandbox import SandboxPool
from agentgym.sandbox.process import descendants
from agentgym.verifiers.code import code_sandbox_spec, verify_code

HUMANEVAL = [
    {
        "task_id": "HumanEval/2",
        "prompt": (
            "\n\ndef truncate_number(number: float) -> float:\n"
            '    """ Given a positive floating point number, it can be decomposed into\n'
            "    and integer part (largest integer smaller than given number) and decimals\n"
            "    (leftover part always smaller than 1).\n\n"
            "    Return the decimal part of the number.\n"
            "    >>> truncate_number(3.5)\n    0.5\n"
            '    """\n'
        ),
        "entry_point": "truncate_number",
        "canonical_solution": "    return number % 1.0\n",
        "test": (
            "\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\n"
            "def check(candidate):\n"
            "    assert candidate(3.5) == 0.5\n"
            "    assert abs(candidate(1.33) - 0.33) < 1e-6\n"
            "    assert abs(candidate(123.456) - 0.456) < 1e-6\n"
        ),
    },
    {
        "task_id": "HumanEval/38",
        "prompt": (
            "\n\ndef encode_cyclic(s: str):\n"
            '    """\n    returns encoded string by cycling groups of three characters.\n    """\n'
            "    # split string to groups. Each of length 3.\n"
            "    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]\n"
            "    # cycle elements in each group. Unless group has fewer elements than 3.\n"
            "    groups = [(group[1:] + group[0]) if len(group) == 3 else group "
            "for group in groups]\n"
            '    return "".join(groups)\n\n\n'
            "def decode_cyclic(s: str):\n"
            '    """\n    takes as input string encoded with encode_cyclic function. Returns '
            'decoded string.\n    """\n'
        ),
        "canonical_solution": "    return encode_cyclic(encode_cyclic(s))\n",
        "test": (
            "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
            "    from random import randint, choice\n    import string\n\n"
            "    letters = string.ascii_lowercase\n"
            "    for _ in range(100):\n"
            "        str = ''.join(choice(letters) for i in range(randint(10, 20)))\n"
            "        encoded_str = encode_cyclic(str)\n"
            "        assert candidate(encoded_str) == str\n\n"
        ),
        "entry_point": "decode_cyclic",
    },
]
MBPP = [
    {
        "task_id": 11,
        "text": (
            "Write a python function to remove first and last occurrence of a given character "
            "from the string."
        ),
        "code": (
            "def remove_Occ(s,ch): \r\n    for i in range(len(s)): \r\n        if (s[i] == ch): "
            "\r\n            s = s[0 : i] + s[i + 1:] \r\n            break\r\n    for i in "
            "range(len(s) - 1,-1,-1):  \r\n        if (s[i] == ch): \r\n            s = s[0 : i] "
            "+ s[i + 1:] \r\n            break\r\n    return s "
        ),
        "test_list": [
            'assert remove_Occ("hello","l") == "heo"',
            'assert remove_Occ("abcda","a") == "bcd"',
            'assert remove_Occ("PHP","P") == "H"',
        ],
        "test_setup_code": "",
        "challenge_test_list": [
            'assert remove_Occ("hellolloll","l") == "helollol"',
            'assert remove_Occ("","l") == ""',
        ],
    },
    {  # sanitized MBPP: "prompt" and "test_imports"
        "source_file": "Benchmark Questions Verification V2.ipynb",
        "task_id": 139,
        "prompt": "Write a function to find the circumference of a circle.",
        "code": "import math\ndef circle_circumference(r):\n  return 2 * math.pi * r",
        "test_imports": ["import math"],
        "test_list": [
            "assert math.isclose(circle_circumference(10), 62.830000000000005, rel_tol=0.001)",
            "assert math.isclose(circle_circumference(5), 31.415000000000003, rel_tol=0.001)",
        ],
    },
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def fenced(code):
    return f"Here it is.\n```python\n{code}\n```\n"


# --------------------------------------------------------------------------- the built-in set


def test_there_are_many_problems_in_three_levels():
    assert sum(len(templates) for templates in PROBLEMS.values()) >= 30
    assert all(len(PROBLEMS[level]) >= 10 for level in LEVELS)
    names = [p.name for templates in PROBLEMS.values() for p in templates]
    assert len(names) == len(set(names))


def test_every_template_is_solved_by_its_reference():
    # one task of each template, verified for real (a pool keeps sandboxes ready)
    with SandboxPool(code_sandbox_spec(), size=2) as pool:
        for level, templates in PROBLEMS.items():
            for seed, template in enumerate(templates):
                problem = template.instance(np.random.default_rng(seed))
                verdict = verify_code(problem.reference, problem.hidden, sandbox=pool)
                assert verdict.passed, (level, template.name, verdict.details)


def test_tasks_come_from_their_seed_and_the_hidden_tests_are_not_the_examples():
    assert generate("medium", 42) == generate("medium", 42)
    tasks = [generate("easy", seed) for seed in range(60)]
    assert len({task.prompt for task in tasks}) > 30  # parameters vary the statements...
    assert len({task.prompt + repr(task.hidden.cases) for task in tasks}) == 60  # ...and inputs
    for seed in range(30):
        problem = generate("hard", seed)
        shown = {call for call, _ in problem.examples.cases}
        hidden = [call for call, _ in problem.hidden.cases]
        assert len(hidden) >= 10 and len(set(hidden) - shown) >= 8
        assert problem.entry_point in problem.prompt and "```python" in problem.prompt


def test_extracting_the_program_from_a_reply():
    assert extract_program("x\n```python\na = 1\n```\ny\n```py\nb = 2\n```") == "b = 2\n"
    assert extract_program("```\nc = 3\n```") == "c = 3\n"
    assert extract_program("```bash\nls\n```\n```python\nd = 4\n```") == "d = 4\n"
    assert extract_program("```python\ne = 5\n") == "e = 5\n"  # cut by the token limit
    assert extract_program("f = 6") == "f = 6"
    assert extract_program("```bash\nls\n```") == "```bash\nls\n```"


# --------------------------------------------------------------------------- single turn


def test_single_turn_scores_the_fraction_of_hidden_tests():
    env = agentgym.make("reasoning/Code-v0")
    observation, info = env.reset(options={"task_id": "test/easy/3"})
    problem = env.unwrapped.task.problem
    assert problem.prompt in observation and "hidden unit tests" in info["instructions"]
    _, reward, terminated, _, info = env.step(fenced(problem.reference))
    assert reward == 1.0 and terminated and info["verdict"].passed
    assert info["verdict"].components["total_tests"] == len(problem.hidden)

    env.reset(options={"task_id": "test/easy/3"})
    stub = f"def {problem.entry_point}(*args):\n    return None\n"
    observation, reward, terminated, _, info = env.step(fenced(stub))
    assert terminated and reward < 1.0 and "hidden tests passed" in observation
    env.close()


def test_a_reply_that_is_not_a_program_is_an_invalid_action():
    env = agentgym.make("reasoning/Code-v0")
    env.reset(options={"task_id": "dev/medium/1"})
    observation, reward, _, truncated, info = env.step("I think we should sort it first.")
    assert info["invalid_action"] and reward == 0.0 and truncated  # one turn only
    assert "does not parse (line 1" in observation and "```python" in observation
    env.reset(options={"task_id": "dev/medium/1"})
    observation, *_, info = env.step("```python\n\n```")
    assert info["invalid_action"] and "holds no program" in observation
    env.close()


def test_state_keys_name_the_situation():
    env = agentgym.make("reasoning/Code-v0")
    _, first = env.reset(options={"task_id": "train/easy/5"})
    _, again = env.reset(options={"task_id": "train/easy/5"})
    _, other = env.reset(options={"task_id": "train/easy/6"})
    assert first["state_key"] == again["state_key"] != other["state_key"]
    env.close()


# --------------------------------------------------------------------------- interactive


def test_interactive_runs_code_tests_examples_then_submits():
    env = agentgym.make("reasoning/CodeInteractive-v0", run_timeout=1.0)
    _, info = env.reset(options={"task_id": "test/hard/4"})
    problem = env.unwrapped.task.problem
    assert "'run'" in info["instructions"] and "'submit'" in info["instructions"]

    observation, reward, terminated, _, info = env.step(
        "I will test it later.\nLet me run it first, then test it:\n"
        "```python\nimport sys\nopen('notes.txt', 'w').write('hi')\n"
        "print('out', 6 * 7)\nprint('err', file=sys.stderr)\nsys.exit(3)\n```"
    )
    assert not terminated and reward == 0.0 and not info["invalid_action"]
    assert "exit code 3" in observation and "out 42" in observation and "err" in observation
    key = info["state_key"]
    observation, *_, info = env.step(
        "run\n```python\nprint(open('notes.txt').read())\nprint('x' * 5000)\n```"
    )
    assert "hi" in observation and "[... cut ...]" in observation  # files persist; output cut
    assert info["state_key"] != key

    observation, reward, terminated, *_ = env.step("run\n```python\nwhile True:\n    pass\n```")
    assert "timed out after 1 s" in observation and not terminated

    wrong = f"def {problem.entry_point}(*args):\n    return None\n"
    observation, *_ = env.step(f"test\n```python\n{wrong}```")
    assert f"Visible examples: 0 of {len(problem.examples)} passed." in observation
    assert "returned None, expected" in observation
    observation, *_ = env.step(f"test\n```python\n{problem.reference}```")
    assert f"{len(problem.examples)} of {len(problem.examples)} passed" in observation

    observation, reward, terminated, _, info = env.step(
        f"I am confident; submit:\n```python\n{problem.reference}```"
    )
    assert terminated and reward == 1.0 and info["verdict"].passed
    env.close()


def test_interactive_actions_need_a_word_and_a_block():
    env = agentgym.make("reasoning/CodeInteractive-v0")
    env.reset(options={"task_id": "test/easy/0"})
    observation, *_, info = env.step("print(1)")
    assert info["invalid_action"] and "no ```python block" in observation
    observation, *_, info = env.step("```python\nprint(1)\n```")
    assert info["invalid_action"] and "write run, test or submit" in observation
    observation, *_, info = env.step("Let me run this.\nIt prints one.\n```python\nprint(1)\n```")
    assert info["invalid_action"] and "on the line just before" in observation
    observation, _, terminated, _, info = env.step("submit\n```python\ndef (:\n```")
    assert info["invalid_action"] and not terminated and "does not parse" in observation
    env.close()


def test_the_interactive_sandbox_is_closed_with_the_episode():
    before = set(descendants(os.getpid()))
    for _ in range(3):
        env = agentgym.make("reasoning/CodeInteractive-v0")
        env.reset(seed=1)
        env.step("run\n```python\nimport subprocess\nsubprocess.Popen(['sleep', '60'])\n```")
        env.reset(seed=2)  # a new episode releases the old sandbox
        env.step("run\n```python\nprint('again')\n```")
        env.close()
        env.close()
    deadline = time.monotonic() + 5
    while set(descendants(os.getpid())) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(descendants(os.getpid())) - before


# --------------------------------------------------------------------------- dataset files


def test_humaneval_files_in_their_published_format(tmp_path):
    path = write_jsonl(tmp_path / "HumanEval.jsonl", HUMANEVAL)
    env = agentgym.make("reasoning/CodeInteractive-v0", path=path)
    assert list(env.unwrapped.tasks.ids("test")) == ["test/HumanEval/2", "test/HumanEval/38"]
    observation, _ = env.reset(options={"task_id": "test/HumanEval/2"})
    problem = env.unwrapped.task.problem
    assert "def truncate_number" in observation
    assert problem.examples.cases == (("truncate_number(3.5)", 0.5),)
    assert problem.hidden.cases == (("candidate(3.5)", 0.5),)  # compared on the host
    assert len(problem.hidden.asserts) == 2 and "METADATA" in problem.hidden.setup
    # completion style: a reply with only the body is appended to the prompt
    observation, *_ = env.step("test\n```python\n    return number - int(number)\n```")
    assert "1 of 1 passed" in observation
    _, reward, terminated, *_ = env.step("submit\n```python\n    return number - int(number)\n```")
    assert terminated and reward == 1.0

    env.reset(options={"task_id": "test/HumanEval/38"})  # the test calls a prompt helper
    assert env.unwrapped.task.problem.examples is None
    observation, *_, info = env.step("test\n```python\n    return s\n```")
    assert info["invalid_action"] and "no examples" in observation
    _, reward, *_ = env.step("submit\n```python\n    return s\n```")
    assert reward == 0.0
    # a reply that writes the whole function again still has the prompt's helper
    env.reset(options={"task_id": "test/HumanEval/38"})
    whole = "def decode_cyclic(s: str):\n    return encode_cyclic(encode_cyclic(s))\n"
    _, reward, *_ = env.step(f"submit\n```python\n{whole}```")
    assert reward == 1.0
    env.close()


def test_mbpp_files_in_their_published_formats(tmp_path):
    path = write_jsonl(tmp_path / "mbpp.jsonl", MBPP)
    env = agentgym.make("reasoning/Code-v0", path=path, dataset="mbpp")
    observation, _ = env.reset(options={"task_id": "test/11"})
    problem = env.unwrapped.task.problem
    assert "remove first and last occurrence" in observation and "`remove_Occ`" in observation
    assert 'remove_Occ("hello","l") == "heo"' in observation  # the first test is shown
    assert len(problem.hidden) == 5 and problem.hidden.cases[0] == (
        "remove_Occ('hello', 'l')",
        "heo",
    )
    _, reward, *_ = env.step(fenced("def remove_Occ(s, ch):\n    return s.replace(ch, '')\n"))
    assert 0.0 < reward < 1.0  # right for "hello" and "PHP", wrong for "abcda"...
    env.reset(options={"task_id": "test/139"})
    problem = env.unwrapped.task.problem
    assert problem.hidden.asserts and "import math" in problem.hidden.setup
    _, reward, *_ = env.step(fenced(problem.reference))
    assert reward == 1.0
    env.close()


def test_bad_dataset_files_are_named_with_their_line(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        agentgym.make("reasoning/Code-v0", path=str(tmp_path / "missing.jsonl"))
    bad = write_jsonl(tmp_path / "bad.jsonl", [MBPP[0], {"task_id": 3, "text": "no tests"}])
    with pytest.raises(UsageError, match=r"bad.jsonl:2: not a auto row .*test_list"):
        agentgym.make("reasoning/Code-v0", path=bad)
    twice = write_jsonl(tmp_path / "twice.jsonl", [MBPP[0], MBPP[0]])
    with pytest.raises(UsageError, match="appears twice"):
        agentgym.make("reasoning/Code-v0", path=twice)
    with pytest.raises(UsageError, match="unknown code dataset format"):
        agentgym.make("reasoning/Code-v0", path=twice, dataset="apps")
    with pytest.raises(UsageError, match="give the file with path="):
        agentgym.make("reasoning/Code-v0", dataset="mbpp")
    with pytest.raises(UsageError, match="timeout must be a positive number"):
        agentgym.make("reasoning/CodeInteractive-v0", timeout=0)


# --------------------------------------------------------------------------- the evaluator


def test_oracles_through_the_evaluator(tmp_path):
    from agentgym.eval import evaluate
    from agentgym.eval.plan import Benchmark

    humaneval = write_jsonl(tmp_path / "HumanEval.jsonl", HUMANEVAL)
    mbpp = write_jsonl(tmp_path / "mbpp.jsonl", MBPP)
    benchmark = Benchmark.from_dict(
        {
            "name": "code",
            "seed": 0,
            "envs": [
                {"id": "reasoning/Code-v0", "split": "test", "tasks": 6},
                {"id": "reasoning/CodeInteractive-v0", "split": "test", "tasks": 3},
                {"id": "reasoning/Code-v0", "split": "test", "tasks": 2, "kwargs": {"path": mbpp}},
                {
                    "id": "reasoning/CodeInteractive-v0",
                    "split": "test",
                    "tasks": 2,
                    "kwargs": {"path": humaneval},
                },
            ],
        }
    )
    result = evaluate(benchmark, "oracle", tmp_path / "run", num_envs=4)
    assert result.summary["overall"]["success"] == 1.0
    assert result.summary["overall"]["errored"] == 0
