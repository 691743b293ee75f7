"""A ledger line with its timing fields left out: what two runs of the same seeds and a
deterministic agent must write byte for byte."""

from __future__ import annotations

import json

TIMING = ("started_at", "seconds", "env_seconds", "agent_seconds")


def without_timing(line: str) -> str:
    def scrub(value):
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k not in TIMING}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return json.dumps(scrub(json.loads(line)), sort_keys=False)
