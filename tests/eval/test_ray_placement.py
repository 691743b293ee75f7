"""How a ``--ray`` run spreads over actors (no Ray needed): by the share of a core each env
id declares, checked before a run directory appears."""

from __future__ import annotations

import pytest

from agentgym.errors import UsageError
from agentgym.eval import evaluate
from agentgym.eval.ray_pool import Placement, placement


def test_an_actor_plays_a_cores_worth_of_the_heaviest_envs_episodes():
    assert placement(["games/Maze-v0"], 8) == Placement(actors=1, slots=8, cpus=1.0)
    assert placement(["games/Maze-v0"], 20) == Placement(actors=3, slots=8, cpus=1.0)
    assert placement(["games/Maze-v0"], 6, 2) == Placement(actors=3, slots=2, cpus=0.25)
    # A browser per episode: one episode an actor, a CPU each.
    assert placement(["games/Maze-v0", "web/Shop-v1"], 4) == Placement(4, 1, 1.0)
    # Ray takes whole CPUs above one.
    assert placement(["web/Shop-v1"], 4, 2) == Placement(2, 2, 2)
    assert placement(["games/Maze-v0"], 12, 12).cpus == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"episodes_per_actor": 2}, "goes with --ray"),
        ({"ray": "auto", "episodes_per_actor": 0}, "positive int"),
        ({"ray": " "}, "cluster's address"),
    ],
)
def test_bad_ray_options_are_refused_before_the_run_starts(tmp_path, options, message):
    with pytest.raises(UsageError, match=message):
        evaluate(env="games/Maze-v0", agent="oracle", tasks=2, out=tmp_path / "run", **options)
    assert not (tmp_path / "run").exists()
