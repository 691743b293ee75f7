"""TextWorld ids: real games from TextWorld's generators, cached, played through Jericho."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.utils.seeding import np_random

import agentgym

pytest.importorskip("textworld")

from agentgym.envs.games.textworld import (
    TextWorldCookingEnv,
    clean,
    ensure_game,
    game_path,
    normalize,
)
from agentgym.task_env import InvalidAction

IDS = ["TreasureHunter", "CoinCollector", "Cooking", "Custom"]
DIFFICULTIES = ["easy", "medium", "hard"]


@pytest.fixture(scope="module", autouse=True)
def games_ready():
    """The games the module plays, made up front in the shared cache, two at a time (one per
    core): each is generated once per machine (2-6 s, under its lock: parallel test workers
    wait for it rather than make it twice) and then loaded by every test and run using it."""
    used = [(name, level, 0) for name in IDS for level in DIFFICULTIES]
    used += [("CoinCollector", "easy", 1), ("Cooking", "easy", 1)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda game: ensure_game(*game_of(*game)), used))


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """A private, empty ``AGENTGYM_CACHE``: for the tests of generating and caching a game."""
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path))
    return tmp_path


def game_of(name: str, difficulty: str, seed: int) -> tuple[str, dict, int]:
    """The game ``reset(seed=seed, options={"difficulty": difficulty})`` plays."""
    env = make(name).unwrapped
    task = env.tasks.sample(np_random(seed)[0], env.split, difficulty)
    return task.challenge, task.settings, task.game_seed


def make(name: str):
    return agentgym.make(f"games/TextWorld{name}-v0")


def frotz_copies() -> int:
    """Copies of Jericho's interpreter library mapped into this process (one per live game)."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    return len({line.split(maxsplit=5)[-1] for line in maps if "libfrotz" in line})


def children() -> int:
    me, count = str(os.getpid()), 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            count += stat.rsplit(")", 1)[1].split()[1] == me
    return count


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("name", IDS)
def test_oracle_wins_with_score_one(name, difficulty):
    env = make(name)
    _, info = env.reset(seed=0, options={"difficulty": difficulty})
    total, steps = 0.0, 0
    while True:
        action = env.unwrapped.oracle_action()
        assert action is not None, f"no oracle action after {steps} steps"
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps += 1
        assert not info["invalid_action"], action
        if terminated or truncated:
            break
    verdict = info["verdict"]
    assert verdict.passed and verdict.score == 1.0 and not truncated
    assert verdict.components["game_score"] == verdict.components["max_score"] > 0
    assert total == pytest.approx(1.0)
    env.close()


@pytest.mark.slow
def test_gymnasium_checker_passes_with_warnings_as_errors():
    # One id, easy games (it generates 8): every TextWorld id shares this code path.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(agentgym.make("games/TextWorldCoinCollector-v0", difficulty="easy").unwrapped)


def transcript(name: str, seed: int, actions: list[str]) -> list[tuple]:
    env = make(name)
    steps: list[tuple] = [env.reset(seed=seed, options={"difficulty": "easy"})]
    for action in actions:
        steps.append(env.step(action))
    env.close()
    return steps


def test_same_seed_and_actions_give_an_identical_episode():
    actions = ["look", "xyzzy", "inventory", "go north", "go south", "examine cookbook", "eat"]
    first = transcript("Cooking", 0, actions)
    assert data_equivalence(first, transcript("Cooking", 0, actions), exact=True)


def test_a_cached_game_loads_fast_and_is_the_same_game(empty_cache):
    env = make("CoinCollector")
    started = time.perf_counter()
    first, info = env.reset(seed=123, options={"difficulty": "medium"})
    generated = time.perf_counter() - started
    task = env.unwrapped.task
    path = game_path(task.challenge, task.settings, task.game_seed)
    assert path.is_file() and path.with_suffix(".json").is_file()
    assert path.is_relative_to(empty_cache / "textworld" / "tw-coin_collector")
    stamp = path.stat().st_mtime_ns
    env.close()
    again = make("CoinCollector")
    started = time.perf_counter()
    second, info_again = again.reset(seed=123, options={"difficulty": "medium"})
    loaded = time.perf_counter() - started
    again.close()
    assert (second, info_again["state_key"]) == (first, info["state_key"])
    assert path.stat().st_mtime_ns == stamp  # read from the cache, not generated again
    assert loaded < 1.0 and loaded < generated / 2, (loaded, generated)
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no scratch left


def test_envs_in_concurrent_threads_reset_and_play():
    # TextWorld's game parser is one module-level object that is not thread-safe; the
    # evaluator resets envs from worker threads (this failed with TatSu errors before the lock).
    def play(seed: int) -> float:
        env = make("CoinCollector")
        env.reset(seed=seed % 2, options={"difficulty": "easy"})
        total = 0.0
        while (action := env.unwrapped.oracle_action()) is not None:
            total += env.step(action)[1]
        env.close()
        return total

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(play, range(16))) == [1.0] * 16


@pytest.mark.slow
def test_concurrent_processes_generate_one_complete_game(empty_cache):
    settings = TextWorldCookingEnv.settings_for("test", "easy")
    code = (
        "import sys; from agentgym.envs.games.textworld import ensure_game; "
        f"print(ensure_game('tw-cooking', {settings!r}, 4242))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=300)[0].strip() for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    path = game_path("tw-cooking", settings, 4242)
    assert outputs == [str(path)] * 2
    assert ensure_game("tw-cooking", settings, 4242) == path
    names = sorted(p.name for p in path.parent.iterdir() if p.name.startswith("4242"))
    assert names == ["4242.json", "4242.lock", "4242.z8"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "xyzzy",
        "take the unicorn",
        "😀",
        "save",
        "restart",
        "undo",
        "quit",
        "tw-trace-actions",
        "go north. go south",
        "look; inventory",
        "x" * 300,
        "\x00\x01",
        "\\help",
        "take (apple)",
    ],
)
def test_bad_commands_are_invalid_feedback_and_change_nothing(text):
    env = make("Cooking")
    _, info = env.reset(seed=0, options={"difficulty": "easy"})
    key = info["state_key"]
    obs, reward, terminated, truncated, info = env.step(text)
    assert info["invalid_action"] and obs.startswith("Invalid action:")
    assert info["state_key"] == key and reward == 0.0 and not (terminated or truncated)
    # the game is still in a normal state: the oracle still wins from here
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    assert info["verdict"].passed
    env.close()


def test_commands_are_read_from_wrapped_text_in_any_case():
    assert normalize("`GO NORTH.`") == "go north"
    assert normalize("I will walk.\nCommand: Take Red Apple From Counter") == (
        "take red apple from counter"
    )
    with pytest.raises(InvalidAction, match="several commands"):
        normalize("go north then go south")
    with pytest.raises(InvalidAction, match="interpreter command"):
        normalize("restore")


def test_the_game_parser_accepts_phrasings_beyond_the_admissible_list():
    env = make("Cooking")
    env.reset(seed=0, options={"difficulty": "easy"})
    obs, *_, info = env.step("x cookbook")  # not admissible verbatim, understood by the game
    assert "examine cookbook" in info["admissible_actions"]
    assert "x cookbook" not in info["admissible_actions"]
    assert not info["invalid_action"] and "Ingredients" in obs
    env.close()


def test_observation_is_clean_text():
    env = make("TreasureHunter")
    obs, info = env.reset(seed=0, options={"difficulty": "easy"})
    assert obs.startswith(info["goal"])
    assert "$$" not in obs and "\\$" not in obs  # no ASCII-art banner
    assert "-= " in obs and "carrying" in obs  # the room and the inventory
    obs, *_ = env.step("look")
    assert not obs.rstrip().endswith(">") and "=-0/" not in obs  # no prompt nor status line
    env.close()


def test_clean_removes_banner_prompt_and_end_menu():
    raw = "\n\n   ____  \n  | $$ \\ \n\nDo it.\n\n-= Attic =-\nDusty.\n\n>          -= Attic =-0/1"
    assert clean(raw, "Do it.") == "-= Attic =-\nDusty."
    end = "You win.\n\n                 *** The End ***\n\nWould you like to RESTART, RESTORE..."
    assert clean(end) == "You win.\n\n*** The End ***"


def test_state_key_follows_the_world_not_the_history():
    env = make("CoinCollector")
    _, info = env.reset(seed=0, options={"difficulty": "easy"})
    start = info["state_key"]
    _, *_, info = env.step("look")
    assert info["state_key"] == start
    move = next(c for c in info["admissible_actions"] if c.startswith("go "))
    back = {"north": "south", "south": "north", "east": "west", "west": "east"}[move.split()[1]]
    _, *_, info = env.step(move)
    assert info["state_key"] != start
    _, *_, info = env.step(f"go {back}")
    assert info["state_key"] == start
    env.close()


def test_losing_ends_the_episode_with_partial_score():
    env = make("Cooking")
    env.reset(seed=0, options={"difficulty": "easy"})
    while not (take := env.unwrapped.oracle_action()).startswith("take "):
        env.step(take)
    _, reward, *_ = env.step(take)  # an ingredient of the recipe: a point
    assert reward > 0
    food = take.removeprefix("take ").split(" from ")[0]
    obs, _, terminated, truncated, info = env.step(f"eat {food}")
    assert terminated and not truncated and "You lost" in obs
    verdict = info["verdict"]
    assert not verdict.passed and 0.0 < verdict.score < 1.0
    assert env.unwrapped.oracle_action() is None
    env.close()


def test_admissible_actions_are_a_new_list_each_step():
    env = make("Custom")
    _, first = env.reset(seed=0, options={"difficulty": "easy"})
    _, *_, second = env.step("look")
    assert first["admissible_actions"] == second["admissible_actions"]
    assert first["admissible_actions"] is not second["admissible_actions"]
    env.close()


def test_cooking_splits_use_textworld_food_splits():
    assert TextWorldCookingEnv.settings_for("train", "hard")["split"] == "train"
    assert TextWorldCookingEnv.settings_for("dev", "hard")["split"] == "valid"
    assert TextWorldCookingEnv.settings_for("test", "hard")["split"] == "test"


def test_teardown_closes_the_game():
    gc.collect()
    base = frotz_copies()
    env = make("CoinCollector")
    env.reset(seed=0, options={"difficulty": "easy"})
    world = env.unwrapped._world
    assert frotz_copies() == base + 1 and world.env is not None
    env.reset(seed=1, options={"difficulty": "easy"})  # the previous game is torn down
    assert world.env is None and frotz_copies() == base + 1
    env.close()
    assert frotz_copies() == base
    env.close()  # idempotent


def test_an_env_dropped_without_close_frees_its_game_at_once():
    gc.collect()
    base = frotz_copies()
    env = make("CoinCollector")
    env.reset(seed=0, options={"difficulty": "easy"})
    assert frotz_copies() == base + 1
    del env  # no reference cycle holds the game: it is released without a GC pass
    assert frotz_copies() == base


@pytest.mark.slow
def test_no_leak_over_two_hundred_reset_close_cycles():
    gc.collect()
    base = frotz_copies()
    for seed in range(2):  # generate the games and warm lazy imports first
        env = make("Cooking")
        env.reset(seed=seed, options={"difficulty": "easy"})
        env.close()
    before = (threading.active_count(), len(os.listdir("/proc/self/fd")), children())
    for index in range(200):
        env = make("Cooking")
        env.reset(seed=index % 2, options={"difficulty": "easy"})
        env.step("look")
        env.close()
    after = (threading.active_count(), len(os.listdir("/proc/self/fd")), children())
    assert after == before and frotz_copies() == base
