"""TextWorld's game generators: a child kept for the next game, and what that must not change."""

from __future__ import annotations

import filecmp
import shutil
import time

import pytest

pytest.importorskip("textworld")

from agentgym.envs.games import textworld_games
from agentgym.envs.games.textworld import (
    TextWorldCoinCollectorEnv,
    TextWorldCookingEnv,
    TextWorldCustomEnv,
)
from agentgym.envs.games.textworld_games import _GeneratorPool, ensure_game, game_path
from agentgym.errors import InfrastructureError

COINS = ("tw-coin_collector", TextWorldCoinCollectorEnv.settings_for("train", "easy"))
COOKING = ("tw-cooking", TextWorldCookingEnv.settings_for("test", "easy"))
CUSTOM = ("custom", TextWorldCustomEnv.settings_for("train", "easy"))


@pytest.fixture
def pool(monkeypatch):
    """A private, empty pool of generator children, whose children are stopped afterwards."""
    fresh = _GeneratorPool()
    monkeypatch.setattr(textworld_games, "_POOL", fresh)
    yield fresh
    for child in fresh._idle:
        child.close()


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """A private ``AGENTGYM_CACHE`` with no games (and this machine's parsed grammars)."""
    return cache_at(tmp_path, monkeypatch)


def cache_at(folder, monkeypatch):
    """Make ``folder`` the cache, with the grammars TextWorld's first game on a machine parses
    and keeps (about 1.3 s a fresh cache spends again otherwise)."""
    grammars = textworld_games._grammar_cache()
    monkeypatch.setenv("AGENTGYM_CACHE", str(folder))
    if grammars.is_file():
        textworld_games.cache_dir().mkdir(parents=True, exist_ok=True)
        shutil.copy(grammars, textworld_games._grammar_cache())
    return folder


def test_a_game_is_the_same_from_a_fresh_child_and_from_a_busy_one(tmp_path, monkeypatch, pool):
    cache_at(tmp_path / "fresh", monkeypatch)
    fresh = ensure_game(*COOKING, 7)
    (child,) = pool._idle
    child.close()
    pool._idle.clear()
    cache_at(tmp_path / "busy", monkeypatch)
    ensure_game(*COINS, 3)
    ensure_game(*CUSTOM, 5)
    busy = ensure_game(*COOKING, 7)
    (kept,) = pool._idle  # one child made all three games
    assert kept.alive()
    for suffix in (".z8", ".json"):
        assert filecmp.cmp(fresh.with_suffix(suffix), busy.with_suffix(suffix), shallow=False)


def test_a_child_exits_when_idle_and_a_dead_child_is_replaced(empty_cache, monkeypatch, pool):
    monkeypatch.setattr(textworld_games, "IDLE_EXIT", 1.0)
    ensure_game(*COINS, 1)
    (child,) = pool._idle
    deadline = time.monotonic() + 30
    while child.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not child.alive()
    assert ensure_game(*COINS, 2).is_file()
    (second,) = pool._idle  # the exited child was reaped, a new one made the game
    assert second is not child and second.alive()
    assert child.process.stdin.closed and child.process.stdout.closed
    second.process.kill()
    second.process.wait()
    # A test double for a race: the child exits between the pool's check and the request
    # (the pool is told the dead child is alive); the request goes to a fresh child.
    monkeypatch.setattr(second, "alive", lambda: True)
    assert ensure_game(*COINS, 3).is_file()
    (third,) = pool._idle
    assert third is not second and second.process.stdin.closed


def test_a_game_that_cannot_be_made_is_an_error_that_names_it(empty_cache, pool):
    with pytest.raises(InfrastructureError, match=r"tw-nonesuch \{'level': 1\} seed 4") as raised:
        ensure_game("tw-nonesuch", {"level": 1}, 4)
    assert "KeyError: 'tw-nonesuch'" in str(raised.value)  # the child's traceback
    assert not pool._idle
    assert not game_path("tw-nonesuch", {"level": 1}, 4).exists()


def test_a_child_over_its_time_is_killed_and_leaves_nothing(empty_cache, monkeypatch, pool):
    monkeypatch.setattr(textworld_games, "GENERATION_TIMEOUT", 0.2)
    with pytest.raises(InfrastructureError, match=r"took over 0.2 s to generate tw-coin"):
        ensure_game(*COINS, 9)
    assert not pool._idle
    folder = game_path(*COINS, 9).parent
    assert sorted(path.name for path in folder.iterdir()) == ["9.lock"]  # no game, no scratch
