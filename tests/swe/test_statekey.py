"""The working copy's state key: equal keys if and only if the same files, read on the host
from the overlay's upper layer (bwrap) without a command in the sandbox."""

import pytest

from agentgym.envs.swe.statekey import WorkingCopyKey

EDITS = {
    "append": "echo '# x' >> tinylib/numbers.py",
    "append other": "echo '# y' >> tinylib/numbers.py",
    "delete": "rm tinylib/sequences.py",
    "delete a folder": "rm -rf tests",
    "executable": "chmod +x tinylib/numbers.py",
    "new file": "printf a > notes.txt",
    "new file, other bytes": "printf b > notes.txt",
    "new file, executable": "printf a > notes.txt && chmod +x notes.txt",
    "link": "ln -s numbers.py tinylib/alias.py",
    "link elsewhere": "ln -s sequences.py tinylib/alias.py",
    "folder for a file": "rm tinylib/numbers.py && mkdir tinylib/numbers.py",
    "committed": "echo '# z' >> tinylib/numbers.py && git commit -qam wip",
}
SAME_AS = {
    # Directories do not count, and neither does git's view of the files.
    "rm -rf tests && mkdir tests": "delete a folder",
    "find tests -type f -delete": "delete a folder",
    "echo '# z' >> tinylib/numbers.py": "committed",
    "rm tinylib/numbers.py": "folder for a file",
}
UNDONE = [
    "touch tinylib/numbers.py",  # copied up, unchanged
    "mkdir -p empty/folder",
    "cp tinylib/numbers.py /tmp/n && rm tinylib/numbers.py && cp /tmp/n tinylib/numbers.py",
    "mv tinylib /tmp/t && mv /tmp/t tinylib",
    "rm -rf tinylib && git checkout -q -- tinylib",
]


@pytest.fixture(scope="module")
def env(mean_task, tmp_path_factory):
    import agentgym
    from agentgym.envs.swe.instances import save_instances

    path = tmp_path_factory.mktemp("statekey") / "tasks.jsonl"
    save_instances([mean_task], path)
    env = agentgym.make("swe/Repair-v1", tasks=str(path))
    yield env
    env.close()


def _episode(env, mean_task):
    env.reset(seed=0, options={"task_id": mean_task.instance_id})
    world = env.unwrapped._world
    assert isinstance(world.tree_key, WorkingCopyKey)  # bwrap: read from the upper layer
    start = world.tree_key()
    commit = world.shell.run("git rev-parse HEAD").stdout.strip()

    def key_after(command):
        done = world.shell.run(command)
        assert done.exit_code == 0, done.stderr
        key = world.tree_key()
        world.shell.run(f"git reset -q --hard {commit} && git clean -qfd && rm -rf empty")
        assert world.tree_key() == start, f"not back to the start after {command!r}"
        return key

    return world, start, key_after


def test_equal_keys_exactly_for_equal_working_copies(env, mean_task):
    world, start, key_after = _episode(env, mean_task)
    keys = {name: key_after(command) for name, command in EDITS.items()}
    assert len(set(keys.values())) == len(EDITS) and start not in keys.values(), keys
    for command, name in SAME_AS.items():
        assert key_after(command) == keys[name], command
    for command in UNDONE:
        assert key_after(command) == start, command
    assert world.probe is None  # no command ran in the sandbox for a key

    _world, again, key_after = _episode(env, mean_task)  # a fresh sandbox, the same edits
    assert again == start
    assert {name: key_after(command) for name, command in EDITS.items()} == keys


def test_the_step_state_key_follows_the_working_copy(env, mean_task):
    world, _start, _key_after = _episode(env, mean_task)
    step = {"name": "bash", "arguments": {"command": "true"}}  # the same last output
    env.step(step)
    before = env.unwrapped.state_key(world)
    env.step({"name": "bash", "arguments": {"command": "printf a > notes.txt && true"}})
    env.step(step)
    edited = env.unwrapped.state_key(world)
    env.step({"name": "bash", "arguments": {"command": "rm notes.txt"}})
    env.step(step)
    assert edited != before and env.unwrapped.state_key(world) == before


def test_a_rewrite_of_the_same_size_right_after_a_read_is_seen(env, mean_task):
    world, _start, _key_after = _episode(env, mean_task)
    keys = []
    for text in "abcd":  # in place, same size, well within a clock tick of the last read
        world.shell.run(f"printf {text} > same.txt")
        keys.append(world.tree_key())
    assert len(set(keys)) == 4
