"""swe/Repair-v1: the tools, the oracle, submission and what an agent can get wrong."""

import re

import pytest

from agentgym.envs.swe.patches import split_patch
from agentgym.envs.swe.workspace import MAX_FILE_BYTES, read_working_copy


def _reset(env, tasks, index=0):
    task = tasks[1][index]
    obs, info = env.reset(seed=0, options={"task_id": task.instance_id})
    return task, obs, info


def _do(env, name, **arguments):
    """A tool call's output (without the env's closing hint), reward, terminated, info."""
    obs, reward, terminated, _truncated, info = env.step({"name": name, "arguments": arguments})
    return obs.rsplit("\n\nCall a tool", 1)[0], reward, terminated, info


def test_the_oracle_resolves_the_task_and_doing_nothing_does_not(tiny_env, tiny_tasks):
    task, obs, info = _reset(tiny_env, tiny_tasks)
    assert task.fail_to_pass[0] in obs and "/testbed" in info["instructions"]
    rewards = []
    while (action := tiny_env.unwrapped.oracle_action()) is not None:
        obs, reward, terminated, _, info = tiny_env.step(action)
        rewards.append(reward)
        if terminated:
            break
    assert info["verdict"].passed and sum(rewards) == 1.0
    _reset(tiny_env, tiny_tasks)
    obs, reward, terminated, info = _do(tiny_env, "submit")
    assert terminated and reward == 0.0 and "not resolved" in obs


def test_the_shell_persists_and_starts_in_the_repository(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "bash", command="pwd && export X=7 && cd tinylib")
    assert obs.startswith("/testbed")
    obs, *_ = _do(tiny_env, "bash", command="echo $X; pwd; git status --short")
    assert obs.splitlines()[:2] == ["7", "/testbed/tinylib"]
    obs, *_ = _do(tiny_env, "bash", command="exit 3")
    assert "[exit code 3]" in obs and "new one was started in /testbed" in obs
    obs, *_ = _do(tiny_env, "bash", command="pwd")
    assert obs.startswith("/testbed")


def test_git_shows_the_agent_its_own_changes_and_nothing_older(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "bash", command="git log --oneline | wc -l; git diff --stat")
    assert obs.splitlines()[0] == "1"  # one commit: the starting state, bug included
    _do(tiny_env, "bash", command="echo '# note' >> tinylib/numbers.py")
    obs, *_ = _do(tiny_env, "bash", command="git diff --stat")
    assert "tinylib/numbers.py" in obs


def test_view_shows_numbered_lines_and_directories(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "view", path="tinylib/numbers.py", start_line=4, end_line=5)
    assert obs.splitlines()[:2] == [
        "     4\tdef clamp(value, low, high):",
        '     5\t    """``value`` limited to ``[low, high]``."""',
    ]
    obs, *_ = _do(tiny_env, "view", path=".")
    assert "/testbed/tinylib/numbers.py" in obs.splitlines() and ".git" not in obs


def test_edits_change_the_working_copy_and_become_the_patch(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    world = tiny_env.unwrapped._world
    _do(
        tiny_env,
        "str_replace",
        path="tinylib/numbers.py",
        old_str='"""Numbers."""',
        new_str='"""Numbers, edited."""',
    )
    _do(tiny_env, "insert", path="tinylib/sequences.py", insert_line=0, text="# top")
    _do(tiny_env, "create", path="tinylib/extra.py", file_text="X = 1\n")
    _do(tiny_env, "bash", command="mkdir -p tinylib/__pycache__ && touch tinylib/__pycache__/x.pyc")
    patch = read_working_copy(world.box, world.prepared, world.start).patch
    assert [p.path for p in split_patch(patch)] == [
        "tinylib/extra.py",
        "tinylib/numbers.py",
        "tinylib/sequences.py",
    ]
    assert '+"""Numbers, edited."""' in patch and "+# top" in patch


def test_search_finds_matches_with_their_lines(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "search", pattern="def (chunk|window)", path="tinylib")
    assert obs.splitlines() == [
        "tinylib/sequences.py:4:def chunk(items, size):",
        "tinylib/sequences.py:11:def window(items, width):",
    ]
    obs, *_ = _do(tiny_env, "search", pattern="no_such_thing_here")
    assert obs.startswith("No matches")


def test_run_tests_reports_each_tests_outcome(tiny_env, tiny_tasks):
    task, _, _ = _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "run_tests")
    assert all(
        f"FAILED {nodeid}" in obs or f"ERROR {nodeid}" in obs for nodeid in task.fail_to_pass
    )
    obs, *_ = _do(tiny_env, "run_tests", tests=["tests/test_sequences.py::test_dedupe_of_nothing"])
    assert obs.splitlines()[-1] == "1 passed"


def test_a_run_of_nothing_says_why_without_its_timing(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "run_tests", tests=["tests/no_such_file.py"])
    assert "no_such_file" in obs and obs.splitlines()[-1] == "no test ran"
    assert not re.search(r" in [0-9.]+s", obs)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            {
                "name": "str_replace",
                "arguments": {"path": "tinylib/numbers.py", "old_str": "zzz", "new_str": "y"},
            },
            "does not occur",
        ),
        (
            {
                "name": "str_replace",
                "arguments": {"path": "tinylib/numbers.py", "old_str": "return", "new_str": "y"},
            },
            "occurs",
        ),
        ({"name": "view", "arguments": {"path": "no/such/file.py"}}, "does not exist"),
        (
            {
                "name": "insert",
                "arguments": {"path": "tinylib/numbers.py", "insert_line": 999, "text": "x"},
            },
            "insert_line",
        ),
        ({"name": "bash", "arguments": {"command": "ls", "sudo": True}}, "argument 'sudo'"),
        ({"name": "fly", "arguments": {}}, "fly"),
        ("nothing I can parse", "Invalid action"),
    ],
)
def test_tools_used_wrongly_are_invalid_actions_with_a_reason(tiny_env, tiny_tasks, call, message):
    _reset(tiny_env, tiny_tasks)
    obs, _reward, terminated, _truncated, info = tiny_env.step(call)
    assert info["invalid_action"] and message in obs and not terminated


def test_a_bash_block_in_text_runs_in_the_shell(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    obs, _, _, _, info = tiny_env.step("Let me look.\n```bash\necho hello from text\n```")
    assert obs.startswith("hello from text") and not info["invalid_action"]
    obs, _, _, _, info = tiny_env.step('{"name": "bash", "arguments": {"command": "echo json"}}')
    assert obs.startswith("json")


def test_a_command_that_hangs_is_killed_and_the_episode_goes_on(tiny_tasks):
    import agentgym

    env = agentgym.make("swe/Repair-v1", tasks=str(tiny_tasks[0]), command_timeout=1)
    try:
        env.reset(seed=0, options={"task_id": tiny_tasks[1][0].instance_id})
        obs, *_ = _do(env, "bash", command="sleep 30")
        assert "timed out after 1 s" in obs
        obs, *_ = _do(env, "bash", command="echo alive")
        assert obs.startswith("alive")
    finally:
        env.close()


def test_each_reset_starts_from_the_tasks_own_tree(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    _do(tiny_env, "bash", command="rm -rf tinylib tests")
    _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "bash", command="ls")
    assert "tinylib" in obs and "tests" in obs


STRAY_FILES = """
printf 'x' > 'notes with space.txt'
printf 'x' > "$(printf 'new\\nline.txt')"
printf 'x' > "$(printf 'bad\\377name.txt')"
printf 'x' > 'a "quoted" name.txt'
printf 'x' > 'back\\slash.txt'
printf 'X = 1\\n' > 'tinylib/helper module.py'
printf 'Y = 2\\n' > "$(printf 'tinylib/new\\nline.py')"
head -c 5000 /dev/urandom > binary.dat
truncate -s 100M big.log
mkfifo pipe
ln -s /etc/passwd link
mkdir -p build && touch build/a build/b
printf 'secret' > locked.txt && chmod 000 locked.txt
"""
"""Stray files an agent may leave: names git quotes, a name that is not UTF-8, binary and
huge files, a FIFO, a link, an unreadable file."""


def test_stray_files_of_any_name_size_or_kind_never_void_a_correct_fix(tiny_env, tiny_tasks):
    _reset(tiny_env, tiny_tasks)
    obs, *_ = _do(tiny_env, "bash", command=STRAY_FILES)
    assert "[exit code 0]" in obs, obs
    terminated = False
    while not terminated and (action := tiny_env.unwrapped.oracle_action()) is not None:
        obs, reward, terminated, _, info = tiny_env.step(action)
    assert terminated and reward == 1.0, info["verdict"]
    details = info["verdict"].details
    assert "resolved" in details and "left out of the patch" in details, details
    for name in ("big.log", "bad\\xffname.txt", "binary.dat", "pipe", "link", "locked.txt"):
        assert repr(name)[1:-1] in details, (name, details)
    patch = tiny_env.unwrapped._world.patch
    assert '"b/new\\nline.txt"' in patch and "b/notes with space.txt\t" in patch
    assert "changes not counted" in details and "notes with space.txt" in details


@pytest.mark.parametrize(
    "command, reason",
    [
        # Twenty files each just within the per-file limit: 80 MiB of new files.
        (f"for i in $(seq 20); do truncate -s {MAX_FILE_BYTES} data$i.bin; done", "bytes, over"),
        # More names than a listing may hold.
        (
            "mkdir -p many && cd many && seq -f 'file-with-a-long-name-%08g' 40000 | xargs touch",
            "too many files",
        ),
    ],
)
def test_a_working_copy_over_its_limits_ends_the_episode_with_a_0_and_the_reason(
    tiny_env, tiny_tasks, command, reason
):
    _reset(tiny_env, tiny_tasks)
    while (action := tiny_env.unwrapped.oracle_action())["name"] != "submit":
        tiny_env.step(action)  # the fix is in place: the files alone make it a 0
    obs, *_ = _do(tiny_env, "bash", command=command)
    assert "[exit code 0]" in obs, obs
    obs, reward, terminated, info = _do(tiny_env, "submit")
    assert terminated and reward == 0.0 and reason in obs, obs
    assert reason in info["verdict"].details


def test_a_fixed_file_dated_back_to_its_pristine_time_is_still_read(tiny_env, mean_task, tinylib):
    """Unchanged files are told by size and time, but the files the task wrote are always
    read: here the fix restores the pristine file, size and time included."""
    tiny_env.reset(seed=0, options={"task_id": mean_task.instance_id})
    while (action := tiny_env.unwrapped.oracle_action())["name"] != "submit":
        tiny_env.step(action)
    mtime = (tinylib.tree / "tinylib/numbers.py").stat().st_mtime_ns // 1_000_000_000
    _do(tiny_env, "bash", command=f"touch -d @{mtime} tinylib/numbers.py")
    obs, reward, terminated, _info = _do(tiny_env, "submit")
    assert terminated and reward == 1.0, obs


def test_a_sandbox_without_find_or_tar_is_an_infrastructure_error_not_a_0(tinylib):
    """The agent's files end an episode with a 0; a sandbox that cannot run the tools that
    read them is ours to fix, so it errors the episode."""
    from agentgym.errors import SandboxError
    from agentgym.sandbox import ExecResult

    class WithoutTools:
        def exec(self, argv, **options):
            return ExecResult(b"", f"{argv[0]}: not found".encode(), 127, False, 0.0, False)

    with pytest.raises(SandboxError, match="not found"):
        read_working_copy(WithoutTools(), tinylib, {})
