"""The oracle, slowed down: long enough episodes that a server or a node can die with some
in flight (``tests/eval/test_env_servers.py``, ``tests/eval/ray_eval.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

from agentgym.agents.builtin import OracleAgent

TIMING = ("started_at", "seconds", "env_seconds", "agent_seconds")
"""The fields of a record (and its steps) that differ between two runs of the same plan."""


class SlowOracle(OracleAgent):
    """The oracle, 50 ms a move."""

    name = "slow-oracle"

    async def act(self, observation: Any, info: dict[str, Any]) -> Any:
        await asyncio.sleep(0.05)
        return await super().act(observation, info)


def without_timing(value: Any) -> Any:
    """A record as JSON (``json.loads(record.to_line())``) without its timing fields."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value
