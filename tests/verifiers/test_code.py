"""The code verifier: correct programs pass, and no trick a program can play scores what it
did not earn. Every attack here runs for real, in a real sandbox."""

import os
import signal
import threading
import time

import pytest

from agentgym.errors import UsageError, VerifierError
from agentgym.sandbox import SandboxPool, SandboxSpec, create
from agentgym.sandbox.process import descendants
from agentgym.verifiers.code import (
    HARNESS_MARGIN,
    CodeTests,
    code_sandbox_spec,
    run_code_tests,
    verify_code,
)

ADD = "def add(a, b):\n    return a + b\n"
ADD_TESTS = CodeTests(
    cases=[("add(2, 3)", 5), ("add(-1, 1)", 0), ("add(10, 20)", 30), ("add(7, 7)", 14)],
    entry_point="add",
)
SECRET = "zq-hidden-9531"  # an expected value a cheating program would have to find


def verify(program, tests=ADD_TESTS, **options):
    return verify_code(program, tests, **options)


_BEFORE: set[int] = set()


@pytest.fixture(autouse=True)
def _children_before_the_test():
    """What already runs under this process (other tests' servers, a private dockerd)."""
    _BEFORE.clear()
    _BEFORE.update(descendants(os.getpid()))


def no_children_left():
    """Nothing a verification started outlives it on the host."""

    def new() -> set[int]:
        return set(descendants(os.getpid())) - _BEFORE

    deadline = time.monotonic() + 5
    while new() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not new()


def round_trip():
    """Seconds a verification of a correct program takes now: a fresh sandbox, the judge, the
    tests, the teardown. What a run costs beyond its time limits, on this machine, under its
    current load (timing bounds scale with it instead of assuming an idle machine)."""
    started = time.monotonic()
    assert verify(ADD).passed
    return time.monotonic() - started


# --------------------------------------------------------------------------- honest programs


def test_a_correct_program_passes_every_kind_of_test():
    tests = CodeTests(
        cases=[("add(2, 3)", 5), ("add(0.1, 0.2)", 0.3), ("add([1], [2])", [1, 2])],
        asserts=["assert candidate(1, 1) == 2", "x = add('a', 'b')\nassert x == 'ab'"],
        test_source=(
            "import unittest\n"
            "def test_function():\n"
            "    assert add(2, 2) == TWO + TWO\n"
            "class AddTest(unittest.TestCase):\n"
            "    def test_method(self):\n"
            "        self.assertEqual(add((1,), (2,)), (1, 2))\n"
        ),
        setup="TWO = 2",
        entry_point="add",
    )
    verdict = verify(ADD, tests)
    assert verdict.score == 1.0 and verdict.passed
    assert verdict.components == {"passed_tests": 7.0, "total_tests": 7.0}
    assert verdict.details == "all 7 hidden tests passed"


def test_plain_data_keeps_its_types_and_floats_get_a_tolerance():
    program = (
        "def f(kind):\n"
        "    return {'tuple': (1, 2), 'list': [1, 2], 'set': {1, 2}, 'dict': {(1, 2): None},\n"
        "            'bytes': b'\\x00ok', 'big': 3 ** 9000, 'float': 1 / 3, 'nan': float('nan'),\n"
        "            'complex': 1 + 2j}[kind]\n"
    )
    tests = CodeTests(
        cases=[
            ("f('tuple')", (1, 2)),
            ("f('list')", [1, 2]),
            ("f('set')", {2, 1}),
            ("f('dict')", {(1, 2): None}),
            ("f('bytes')", b"\x00ok"),
            ("f('big')", 3**9000),
            ("f('float')", 0.3333333),
            ("f('nan')", float("nan")),
            ("f('complex')", 1 + 2j),
            ("f('tuple')", [1, 2]),  # a tuple is not a list, as in Python
        ]
    )
    verdict = verify(program, tests)
    assert verdict.components["passed_tests"] == 9.0
    assert "f('tuple') returned (1, 2), expected [1, 2]" in verdict.details


def test_programs_that_read_stdin_and_print():
    tests = CodeTests(io_cases=[("2 3\n", "5\n"), ("10 -4\n", "6"), ("0 0\n", "0\n")])
    assert verify("a, b = map(int, input().split())\nprint(a + b)\n", tests).score == 1.0
    wrong = verify("a, b = map(int, input().split())\nprint(a * b)\n", tests)
    assert wrong.components["passed_tests"] == 1.0  # 0 * 0 == 0 + 0
    assert "printed '6', expected '5" in wrong.details
    crash = verify("import sys\nprint(5)\nsys.exit(1)\n", tests)
    assert crash.score == 0.0 and "exit code 1" in crash.details


def test_a_wrong_program_scores_the_fraction_it_passes():
    verdict = verify("def add(a, b):\n    return a + b if a < 5 else 0\n")
    assert verdict.score == 0.5 and not verdict.passed
    assert verdict.components == {"passed_tests": 2.0, "total_tests": 4.0}
    assert verdict.details == (
        "2 of 4 hidden tests passed; first failure: add(10, 20) returned 0, expected 30"
    )


def test_syntax_errors_and_crashes_at_load_are_scores_with_a_reason():
    syntax = verify("def add(a, b)\n    return a + b\n")
    assert syntax.score == 0.0 and "syntax error (line 1" in syntax.details
    crash = verify("import nothing_of_the_sort\n")
    assert crash.score == 0.0
    assert "ModuleNotFoundError" in crash.details and "while loading" in crash.details
    report = run_code_tests("def add(a, b):\n    return 1 / 0\n", ADD_TESTS)
    assert report.outcomes[0].problem == "ZeroDivisionError: division by zero (line 2)"


def test_exceptions_the_tests_expect_reach_them_as_the_same_type():
    tests = CodeTests(
        asserts=[
            "try:\n    root(-1)\nexcept ValueError:\n    pass\nelse:\n    raise AssertionError",
            "assert root(9) == 3",
        ]
    )
    program = (
        "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n"
    )
    assert verify(program, tests).score == 1.0


# --------------------------------------------------------------------------- cheating programs


def test_printing_passed_and_fake_markers_scores_zero():
    program = (
        "import sys, json\n"
        "for stream in (sys.stdout, sys.stderr):\n"
        "    print('PASSED', '=== 4 passed in 0.01s ===', 'OK', file=stream)\n"
        "    print('0' * 32 + ' result ' + json.dumps({'results': [{'status': 'passed'}] * 4}),\n"
        "          file=stream)\n"
        "def add(a, b):\n"
        "    print('PASSED')\n"
        "    return None\n"
    )
    verdict = verify(program)
    assert verdict.score == 0.0 and "returned None, expected 5" in verdict.details


@pytest.mark.parametrize(
    "exit_call", ["import sys\nsys.exit(0)", "import os\nos._exit(0)", "raise SystemExit"]
)
def test_exiting_early_scores_zero(exit_call):
    verdict = verify(f"{exit_call}\n{ADD}")
    assert verdict.score == 0.0
    assert "while loading" in verdict.details or "while being loaded" in verdict.details


def test_exiting_inside_a_call_fails_that_test_only():
    program = "import os\ndef add(a, b):\n    if a == 7:\n        os._exit(0)\n    return a + b\n"
    verdict = verify(program)
    assert verdict.score == 0.75
    assert "add(7, 7): the program exited with code 0 while being tested" in verdict.details


def test_editing_or_deleting_test_files_changes_nothing():
    program = (
        "import os, shutil\n"
        "for top in ('/work', '/tmp', os.getcwd()):\n"
        "    for root, dirs, files in os.walk(top):\n"
        "        for name in files:\n"
        "            path = os.path.join(root, name)\n"
        "            try:\n"
        "                if name.endswith('.py'):\n"
        "                    open(path, 'w').write('def test_ok():\\n    pass\\n')\n"
        "                else:\n"
        "                    os.remove(path)\n"
        "            except OSError:\n"
        "                pass\n"
        "def add(a, b):\n"
        "    return -1\n"
    )
    assert verify(program).score == 0.0
    honest_but_destructive = program.replace("return -1", "return a + b")
    assert verify(honest_but_destructive).score == 1.0  # the tests never were files


def test_monkeypatching_the_runner_scores_zero():
    program = (
        "import builtins, json, sys, unittest\n"
        "builtins.AssertionError = type('Nope', (Exception,), {})\n"
        "unittest.TestCase.assertEqual = lambda *a, **k: None\n"
        'json.dumps = lambda *a, **k: \'{"id": 0, "value": 5}\'\n'
        "main = sys.modules['__main__']\n"
        "for name in list(vars(main)):\n"
        "    if callable(getattr(main, name)) and name not in ('exit',):\n"
        "        setattr(main, name, lambda *a, **k: {'status': 'passed'})\n"
        "sys.settrace(lambda *a: None)\n"
        "def add(a, b):\n"
        "    return -1\n"
    )
    tests = CodeTests(
        cases=[("add(2, 3)", 5)],
        asserts=["assert add(1, 1) == 2"],
        test_source=(
            "import unittest\nclass T(unittest.TestCase):\n"
            "    def test_it(self):\n        self.assertEqual(add(2, 2), 4)\n"
        ),
    )
    assert verify(program, tests).score == 0.0


def test_an_object_that_equals_everything_is_not_accepted():
    program = (
        "class Anything:\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "    __hash__ = object.__hash__\n"
        "class Int(int):\n"
        "    def __eq__(self, other):\n        return True\n"
        "def add(a, b):\n"
        "    return Anything() if a > 0 else Int(0)\n"
    )
    tests = CodeTests(cases=[("add(2, 3)", 5)], asserts=["assert add(-2, 3) == 1"])
    verdict = verify(program, tests)
    assert verdict.score == 0.0
    assert "cannot receive" in run_code_tests(program, tests).outcomes[0].problem


def test_hard_coding_the_visible_examples_scores_only_what_it_passes():
    from agentgym.envs.reasoning.code_tasks import generate

    problem = generate("easy", 11)
    assert problem.examples is not None
    table = {call: value for call, value in problem.examples.cases}
    lines = [f"def {problem.entry_point}(*args):", "    table = {"]
    for call, value in table.items():
        args = call[len(problem.entry_point) :]
        lines.append(f"        repr(tuple([{args[1:-1]}])): {value!r},")
    lines += ["    }", "    return table.get(repr(args))"]
    program = "\n".join(lines) + "\n"
    assert verify(program, problem.examples).score == 1.0  # it does pass the examples
    hidden = verify(program, problem.hidden)
    assert hidden.score < 0.5, hidden.details


def test_the_hidden_expectations_are_nowhere_the_program_can_read():
    program = (
        "import glob, os\n"
        "def look():\n"
        "    found = []\n"
        "    paths = glob.glob('/proc/*/cmdline') + glob.glob('/proc/*/environ')\n"
        "    paths += glob.glob('/proc/*/mem') + glob.glob('/proc/*/fd/*')\n"
        "    mine = (f'/proc/{os.getpid()}/', '/proc/self/', '/proc/thread-self/')\n"
        "    paths = [p for p in paths if not p.startswith(mine)]  # its own pipes would block\n"
        "    for top in ('/work', '/tmp'):\n"
        "        for root, _, files in os.walk(top):\n"
        "            paths += [os.path.join(root, f) for f in files]\n"
        "    for path in paths:\n"
        "        try:\n"
        "            with open(path, 'rb') as f:\n"
        "                data = f.read(1 << 20)\n"
        "        except OSError:\n"
        "            continue\n"
        "        if b'zq-' + b'hidden-' in data:  # (not in its own source)\n"
        "            found.append(path)\n"
        "    return found\n"
        "def answer():\n"
        "    found = look()\n"
        "    return 'found in ' + ', '.join(found) if found else 'nothing found'\n"
    )
    tests = CodeTests(cases=[("answer()", SECRET)], asserts=[f"assert answer() == {SECRET!r}"])
    report = run_code_tests(program, tests)
    assert [o.passed for o in report.outcomes] == [False, False]
    assert report.outcomes[0].problem == f"returned 'nothing found', expected {SECRET!r}"


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_signalling_the_judge_scores_zero_it_does_not_error(sig):
    program = (
        f"import os, signal, time\n{ADD}"
        f"def slow(a, b):\n    os.kill(os.getppid(), signal.{sig})\n    time.sleep(1)\n"
    )
    tests = CodeTests(cases=[("add(1, 2)", 3), ("slow(1, 2)", None), ("add(2, 2)", 4)])
    verdict = verify(program, tests)
    assert verdict.score == 0.0 and "killed" in verdict.details


def test_stopping_the_judge_scores_zero_after_the_time_limit():
    program = f"import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n{ADD}"
    reference = round_trip()
    started = time.monotonic()
    verdict = verify(program, timeout=1.0)
    elapsed = time.monotonic() - started
    assert verdict.score == 0.0 and "did not finish within 1 s" in verdict.details
    # A stopped judge never reports, so the run must end when its wall limit (the 1 s timeout
    # plus the judge's margin) cuts it, not hang on it. Idle it ends within 2 s of that limit
    # (sandbox setup and teardown, up to 1 s collecting the killed judge's output), with round
    # trips of 0.2-0.6 s. 3 round trips plus 6 s: never tighter than the old fixed 10 s, more
    # on a loaded machine, and still failing a run that waits on the stopped judge.
    assert elapsed < 1.0 + HARNESS_MARGIN + 3 * reference + 6, (elapsed, reference)


def test_writing_into_the_test_channel_fails_the_test():
    # Anything but an answer in the channel fails the call; a forged answer is no better
    # than a returned value (it is compared the same way, on the host).
    program = (
        "import os\n"
        "def add(a, b):\n"
        "    for fd in range(20):\n"
        "        try:\n"
        "            os.write(fd, b'PASSED\\n')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return a + b\n"
    )
    verdict = verify(program)
    assert verdict.score == 0.0 and "wrote into the test channel" in verdict.details


def test_an_infinite_loop_times_out_and_only_its_tests_fail():
    program = "def add(a, b):\n    while a == 7:\n        pass\n    return a + b\n"
    reference = round_trip()
    started = time.monotonic()
    tests = CodeTests(cases=ADD_TESTS.cases, entry_point="add", case_timeout=0.5)
    verdict = verify(program, tests, timeout=20.0)
    elapsed = time.monotonic() - started
    assert verdict.score == 0.75 and "add(7, 7): timed out after 0.5 s" in verdict.details
    # The looping test is cut after its 0.5 s: the run costs a round trip plus 0.5 s. Were the
    # per-test timeout not enforced, the loop would run on until the whole run's 20 s limit
    # (far above this bound however loaded the machine, unless a round trip takes 7 s).
    assert elapsed < 0.5 + 3 * reference + 5, (elapsed, reference)
    forever = verify("while True:\n    pass\n", tests, timeout=1.0)
    assert forever.score == 0.0 and "did not finish loading" in forever.details


def test_a_fork_bomb_is_contained_and_leaves_nothing_behind():
    program = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    verdict = verify(program, timeout=1.5)
    assert verdict.score == 0.0
    assert no_children_left()
    assert verify(ADD).score == 1.0  # and the next verification is unharmed


def test_flooding_the_judge_with_values_scores_zero_it_does_not_error():
    """Values (or outputs) too big for what the sandbox keeps fail the tests; before, the
    judge's result line was cut and the verifier raised."""
    big = "def add(a, b):\n    return 'x' * 900_000\n"
    tests = CodeTests(cases=[(f"add({i}, 0)", i) for i in range(4)])
    verdict = verify(big, tests, sandbox=SandboxSpec())  # keeps 1 MiB of stdout
    assert verdict.score == 0.0
    printer = "import sys\nsys.stdout.write(chr(1) * 1_000_000)\n"
    flood = CodeTests(io_cases=[("", "x")] * 12)
    assert verify(printer, flood, timeout=20.0).score == 0.0


def test_a_memory_bomb_fails():
    program = "hog = bytearray(8 << 30)\n" + ADD
    verdict = verify(program)
    assert verdict.score == 0.0 and "MemoryError" in verdict.details


def test_a_daemon_left_running_does_not_outlive_the_verification():
    program = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(60)\n"
        "    os._exit(0)\n" + ADD
    )
    assert verify(program).score == 1.0
    assert no_children_left()


def test_a_pool_hands_each_verification_a_fresh_sandbox():
    plant = (
        "import os, subprocess\n"
        "open('/tmp/planted', 'w').write('x')\n"
        "subprocess.Popen(['sleep', '60'], start_new_session=True)\n" + ADD
    )
    look = "import os\ndef add(a, b):\n    return a + b + os.path.exists('/tmp/planted')\n"
    with SandboxPool(code_sandbox_spec(), size=2) as pool:
        assert verify(plant, sandbox=pool).score == 1.0
        assert verify(look, sandbox=pool).score == 1.0
    assert no_children_left()


# --------------------------------------------------------------------------- verifier failures


def test_no_sandbox_is_a_verifier_error():
    with pytest.raises(VerifierError, match="could not get a sandbox"):
        verify(ADD, sandbox=SandboxSpec(rootfs="/nonexistent/rootfs"))


def test_a_sandbox_that_dies_during_the_run_is_a_verifier_error():
    program = "import time\ndef add(a, b):\n    time.sleep(3)\n    return a + b\n"
    outcome = {}

    def run():
        try:
            outcome["verdict"] = verify(program, timeout=8.0)
        except VerifierError as error:
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 5
    killed = False
    while not killed and time.monotonic() < deadline:
        for pid in set(descendants(os.getpid())) - _BEFORE:
            try:
                with open(f"/proc/{pid}/comm") as comm:
                    if comm.read().strip() == "bwrap":
                        time.sleep(0.5)  # let the judge start
                        os.kill(pid, signal.SIGKILL)
                        killed = True
                        break
            except OSError:
                continue
        time.sleep(0.02)
    thread.join()
    assert killed and "error" in outcome, outcome
    assert "sandbox" in str(outcome["error"])


def test_broken_tests_are_a_verifier_error_not_a_zero():
    tests = CodeTests(cases=[("add(1, 2)", 3)], setup="import no_such_test_helper")
    with pytest.raises(VerifierError, match="the tests are broken"):
        verify(ADD, tests)


def test_caller_mistakes_raise_usage_errors_that_name_the_value():
    with pytest.raises(UsageError, match="has no tests"):
        CodeTests()
    with pytest.raises(UsageError, match=r"cases\[0\]\[0\] is not a valid expression"):
        CodeTests(cases=[("add(1,", 3)])
    with pytest.raises(UsageError, match="not plain data"):
        CodeTests(cases=[("add(1, 2)", object())])
    with pytest.raises(UsageError, match="defines no tests"):
        CodeTests(test_source="x = 1\n")
    with pytest.raises(UsageError, match="fixtures"):
        CodeTests(test_source="def test_a(tmp_path):\n    pass\n")
    with pytest.raises(UsageError, match="must be a str"):
        verify(b"print(1)")
    with create() as box, pytest.raises(UsageError, match="not a live Sandbox"):
        verify(ADD, sandbox=box)
