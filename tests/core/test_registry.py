"""make(), ids, wrappers, suggestions and the missing-extra error."""

import gymnasium
import pytest
from broken_envs import QuizEnv
from gymnasium.envs.registration import EnvSpec

import agentgym
from agentgym import registry
from agentgym.errors import (
    DuplicateEnvError,
    MissingExtraError,
    RegistryError,
    UnknownEnvError,
    UsageError,
)


def test_make_applies_the_standard_wrappers_visibly():
    env = agentgym.make("games/TowerOfHanoi-v0")
    assert repr(env) == (
        "<TimeLimit<OrderEnforcing<PassiveEnvChecker<TowerOfHanoiEnv<games/TowerOfHanoi-v0>>>>>"
    )
    assert env.spec.max_episode_steps == 300


def test_the_step_limit_does_not_truncate_the_step_that_terminates():
    # A one-reply quiz: an answer terminates it, a reply without one is cut by the limit.
    spec = EnvSpec(id="test/QuizEnv-v0", entry_point=QuizEnv, max_episode_steps=1)
    env = registry.make_limited(spec)
    assert isinstance(env, registry.TimeLimit) and env.spec.max_episode_steps == 1
    assert repr(env).startswith("<TimeLimit<OrderEnforcing<PassiveEnvChecker<QuizEnv")
    env.reset(seed=0)
    assert env.step(env.unwrapped.oracle_action())[2:4] == (True, False)
    env.reset(seed=0)
    assert env.step("answer 0")[2:4] == (True, False)  # wrong, but answered
    env.reset(seed=0)
    assert env.step("I do not know.")[2:4] == (False, True)
    # Gymnasium's own TimeLimit says both on that step.
    plain = gymnasium.make(spec)
    plain.reset(seed=0)
    assert plain.step(plain.unwrapped.oracle_action())[2:4] == (True, True)
    # A limit given to make replaces the registered one, as with gymnasium.make; -1: none.
    assert agentgym.make("games/TowerOfHanoi-v0", max_episode_steps=3).spec.max_episode_steps == 3
    assert not isinstance(registry.make_limited(spec, max_episode_steps=-1), registry.TimeLimit)


def test_gymnasium_make_works_on_our_ids():
    env = gymnasium.make("games/TowerOfHanoi-v0", difficulty="easy")
    _, info = env.reset(seed=0)
    assert info["difficulty"] == "easy"


def test_unknown_ids_suggest_the_closest():
    with pytest.raises(UnknownEnvError) as raised:
        agentgym.make("games/TowerOfHanio-v0")
    assert str(raised.value).startswith(
        "no env is registered as 'games/TowerOfHanio-v0'. Did you mean 'games/TowerOfHanoi-v0'"
    )


def test_a_wrong_version_suggests_the_existing_one():
    with pytest.raises(UnknownEnvError, match="Did you mean 'games/TowerOfHanoi-v0'"):
        agentgym.make("games/TowerOfHanoi-v9")


def test_a_bare_name_suggests_the_namespaced_id():
    with pytest.raises(UnknownEnvError, match="Did you mean 'games/TowerOfHanoi-v0'"):
        agentgym.make("towerofhanoi")


def test_a_missing_dependency_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "needs_missing_dep.py").write_text(
        "import surely_not_installed_package_xyz\nclass Env: pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.register("testonly/NeedsExtra-v0", "needs_missing_dep:Env", extra="fancy")
    try:
        with pytest.raises(MissingExtraError) as raised:
            agentgym.make("testonly/NeedsExtra-v0")
        assert str(raised.value) == (
            "testonly/NeedsExtra-v0 needs the Python package 'surely_not_installed_package_xyz', "
            "which is not installed. Install the family's extra: pip install 'agentgym[fancy]'"
        )
        assert isinstance(raised.value, ImportError)
    finally:
        _unregister("testonly/NeedsExtra-v0")


def test_ids_must_be_family_name_version():
    with pytest.raises(RegistryError, match="is not of the form 'family/Name-vN'"):
        registry.register("Sokoban", "x:Y")


def test_registering_another_entry_point_under_a_taken_id_fails():
    with pytest.raises(DuplicateEnvError, match="bump the version"):
        registry.register("games/TowerOfHanoi-v0", "elsewhere:Hanoi")


def test_make_multi_and_make_refuse_the_other_kind():
    with pytest.raises(UsageError, match="is a single-agent env; build it with make"):
        agentgym.make_multi("games/TowerOfHanoi-v0")


def test_non_string_ids_are_usage_errors():
    with pytest.raises(UsageError, match="env ids are strings"):
        agentgym.make(42)


def test_listing_filters_by_family():
    games = agentgym.list_envs(family="games")
    assert games and all(s.family == "games" for s in games)
    assert "games" in agentgym.families()


def _unregister(env_id):
    registry._registry.pop(env_id, None)
    gymnasium.registry.pop(env_id, None)


def test_the_first_makes_from_many_threads_at_once_all_find_the_env():
    # The evaluator's first make calls come from several worker threads of a fresh process;
    # each must wait for the families to load instead of reading a half-filled registry.
    import subprocess
    import sys

    script = (
        "import threading, agentgym\n"
        "errors = []\n"
        "barrier = threading.Barrier(6)\n"
        "def make():\n"
        "    barrier.wait()\n"
        "    try:\n"
        "        agentgym.make('games/FrozenLake-v0').close()\n"
        "    except Exception as error:\n"
        "        errors.append(repr(error))\n"
        "threads = [threading.Thread(target=make) for _ in range(6)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(errors)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_gymnasium_knows_every_id_right_after_import_agentgym():
    """In a fresh interpreter, before any other agentgym call: every single-agent id is in
    Gymnasium's registry, and gymnasium.make and make_vec build each of them."""
    import subprocess
    import sys

    program = """
import gymnasium
import agentgym
known = set(gymnasium.registry)
ids = [s.id for s in agentgym.list_envs(kind="env")]
missing = [i for i in ids if i not in known]
assert not missing, missing
for env_id in ids:
    gymnasium.make(env_id).close()
    gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="sync").close()
print(len(ids))
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # ids other tests registered in this worker (evaltest/*, from their own modules) aside
    ours = [s for s in agentgym.list_envs(kind="env") if str(s.entry_point).startswith("agentgym.")]
    assert int(done.stdout.split()[-1]) == len(ours) > 200


def test_every_family_folder_registers_through_the_entry_point_group():
    import importlib.metadata
    from pathlib import Path

    import agentgym.envs

    folders = {
        f"{registry.BUILTIN_PREFIX}{path.name}"
        for path in Path(agentgym.envs.__file__).parent.iterdir()
        if (path / "__init__.py").is_file()
    }
    entries = importlib.metadata.entry_points(group=registry.ENTRY_POINT_GROUP)
    assert {e.value for e in entries if e.value.startswith(registry.BUILTIN_PREFIX)} == folders


PLUGIN = """
import agentgym

agentgym.register(
    "plugtest/Maze-v0",
    entry_point="agentgym.envs.games.puzzles.maze:MazeEnv",
    description="a family loaded from a module that is not installed",
)
"""


def test_a_family_loads_from_a_module_that_is_not_installed(tmp_path):
    """AGENTGYM_PLUGINS and ``agentgym --import`` load a module from the current directory;
    a module that cannot be imported is a one-line error for --import, a warning for the
    variable (the other families still load)."""
    import os
    import subprocess
    import sys

    (tmp_path / "my_family.py").write_text(PLUGIN)
    base = {k: v for k, v in os.environ.items() if k != "AGENTGYM_PLUGINS"}

    def run(*argv, **env):
        return subprocess.run(
            [sys.executable, *argv],
            cwd=tmp_path,
            env={**base, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )

    made = (
        "import agentgym, gymnasium; "
        "print(gymnasium.make('plugtest/Maze-v0').reset(seed=0)[1]['task_id'])"
    )
    done = run("-I", "-c", made, AGENTGYM_PLUGINS="my_family")  # -I: cwd not on sys.path
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    cli = ["-I", "-m", "agentgym.cli"]
    done = run(*cli, "--import", "my_family", "list", "--grep", "plugtest", "--no-counts")
    assert done.returncode == 0 and "plugtest/Maze-v0" in done.stdout, done.stderr
    done = run(*cli, "--import=no_such_family", "list")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("agentgym: cannot import the env family module")
    done = run(
        "-I",
        "-c",
        "import agentgym; print(len(agentgym.list_envs()))",
        AGENTGYM_PLUGINS="no_such_family",
    )
    assert done.returncode == 0 and int(done.stdout) > 100
    assert "AGENTGYM_PLUGINS" in done.stderr and "no_such_family" in done.stderr


def test_a_nondeterministic_id_says_so_to_gymnasium():
    """Gymnasium's checker skips comparing observations of ids flagged nondeterministic (a
    real desktop's frames); the flag reaches its registry and the made env's spec."""
    env_id = "test/Nondeterministic-v0"
    agentgym.register(env_id, "broken_envs:QuizEnv", max_episode_steps=1, nondeterministic=True)
    try:
        assert agentgym.spec(env_id).nondeterministic
        assert gymnasium.spec(env_id).nondeterministic
        env = agentgym.make(env_id)
        assert env.unwrapped.spec.nondeterministic
        env.close()
        assert not gymnasium.spec("games/Maze-v0").nondeterministic
    finally:
        registry._registry.pop(env_id, None)
        gymnasium.registry.pop(env_id, None)
