"""A trainer's rollouts on env servers (``agentgym train ALGO --env-server URL``): the same
episodes as with local envs, the sessions on the servers."""

from __future__ import annotations

import json

import pytest
from remote.servers import running
from slow_oracle import without_timing

from agentgym.baselines.cli import parse_args
from agentgym.errors import UsageError

pytest.importorskip("websockets")


def ledger(run_dir):
    """The run's records without timing, logprobs rounded: a batch's float sums depend on
    which episodes share it, which depends on timing (the sampled tokens do not)."""
    lines = (run_dir / "episodes.jsonl").read_text().splitlines()
    records = [without_timing(json.loads(line)) for line in lines]
    for step in (step for record in records for step in record["steps"]):
        step["tokens"]["logprobs"] = [round(p, 3) for p in step["tokens"]["logprobs"]]
    return records


def test_rollouts_on_two_env_servers_are_the_local_ones(tmp_path):
    from agentgym.baselines import grpo

    small = ["--model", "tiny", "--iterations", "1", "--groups", "2", "--group-size", "2",
             "--max-tokens", "4", "--tasks", "1", "--checkpoint-every", "1000"]  # fmt: skip
    grpo.train(parse_args("grpo", [*small, "--out", str(tmp_path / "local")]))
    with running() as one, running() as two:
        servers = ["--env-server", one.url, "--env-server", two.url]
        args = parse_args("grpo", [*small, "--out", str(tmp_path / "remote"), *servers])
        assert args.env_server == (one.url, two.url)
        grpo.train(args)
        opened = [one.table.metrics.opened, two.table.metrics.opened]
    assert ledger(tmp_path / "remote") == ledger(tmp_path / "local")
    assert sum(opened) == 4 and all(opened), opened
    # A resume may name other servers (or none): they are where the envs run, not what.
    grpo.train(parse_args("grpo", [*small, "--out", str(tmp_path / "remote"), "--resume",
                                   "--iterations", "2"]))  # fmt: skip


def test_selfplay_refuses_env_servers(tmp_path):
    from agentgym.baselines import selfplay

    args = parse_args(
        "selfplay", ["--model", "tiny", "--out", str(tmp_path), "--env-server", "http://a:1"]
    )
    with pytest.raises(UsageError, match="--env-server"):
        selfplay.train(args)
